"""cuDF / cuGraph integration: run with ``pytest -m gpu`` on a GPU machine with RAPIDS."""

import numpy as np
import pandas as pd
import pytest

from onyx_rapids import Graph, datasets, device, label_propagation, pagerank

pytestmark = pytest.mark.gpu


def _edges(scale=10, seed=2):
    return datasets.rmat(scale, edge_factor=8, seed=seed)


def test_cudf_parquet_reader_matches_pyarrow(tmp_path):
    import cudf  # noqa: F401  (the cuDF reader is the one under test)

    edges = _edges()
    path = tmp_path / "edges.parquet"
    datasets.write_parquet(edges, path)
    via_cudf = Graph.from_parquet(str(path), "src", "dst", directed=True)
    via_pandas = Graph.from_edgelist(pd.read_parquet(path), "src", "dst", directed=True)
    for name in ("vertices", "out_offsets", "out_indices", "in_offsets", "in_indices",
                 "in_edge_ids"):
        assert np.array_equal(device.to_host(getattr(via_cudf, name)),
                              device.to_host(getattr(via_pandas, name))), name


def test_results_are_cudf_frames_with_the_same_values():
    import cudf

    edges = _edges()
    g = Graph.from_edgelist(cudf.from_pandas(edges), "src", "dst", directed=True)
    ranks = pagerank(g)
    assert isinstance(ranks, cudf.DataFrame)
    assert list(ranks.columns) == ["vertex", "pagerank"]
    host = ranks.to_pandas()
    assert np.array_equal(host["vertex"].to_numpy(), np.unique(edges[["src", "dst"]].to_numpy()))
    assert abs(host["pagerank"].sum() - 1) < 1e-4
    seeds = cudf.DataFrame({"vertex": host["vertex"].to_numpy()[:4], "label": [0, 1, 0, 1]})
    lp = label_propagation(g, seeds, k=2)
    assert isinstance(lp, cudf.DataFrame)
    assert list(lp.columns) == ["vertex", "lp_0", "lp_1", "label"]


def test_cudf_result_keeps_nan_and_nulls_apart():
    """A NaN value stays NaN (as in the pandas frame); only masked columns hold nulls."""
    import cudf

    from onyx_rapids import io

    g = Graph.from_edgelist(pd.DataFrame({"src": [5, 9], "dst": [9, 7]}), "src", "dst",
                            directed=True)
    values = device.asarray(np.array([0.5, np.nan, 2.0], dtype=np.float32))
    masked = (device.asarray(np.array([1, 2, 3])), device.asarray(np.array([True, False, True])))
    df = io.to_frame(g, {"x": values, "p": masked})
    assert isinstance(df, cudf.DataFrame)
    assert df["x"].null_count == 0 and df["p"].null_count == 1
    host = df.to_pandas()
    assert np.isnan(host["x"].to_numpy()[1]) and host["x"].to_numpy()[2] == 2.0
    assert host["p"].isna().tolist() == [False, True, False]


@pytest.mark.parametrize("change_driven", [False, True])
def test_pagerank_matches_cugraph(change_driven):
    import cudf
    import cugraph

    import oracles

    edges = _edges(scale=12)
    edges = edges[edges.src != edges.dst].drop_duplicates()
    frame = cudf.from_pandas(edges)
    G = cugraph.Graph(directed=True)
    G.from_cudf_edgelist(frame, source="src", destination="dst")
    theirs = cugraph.pagerank(G, alpha=0.85, tol=1e-9, max_iter=500).to_pandas()
    g = Graph.from_cugraph(G)  # after a cuGraph algorithm changed G's storage: same graph
    ours = pagerank(g, tol=1e-7, max_iter=500, change_driven=change_driven).to_pandas()
    same = pagerank(Graph.from_edgelist(edges, "src", "dst", directed=True), tol=1e-7,
                    max_iter=500, change_driven=change_driven).to_pandas()
    src = g.to_internal(edges["src"].to_numpy())
    dst = g.to_internal(edges["dst"].to_numpy())
    expected = oracles.pagerank(g.n, device.to_host(src), device.to_host(dst))
    merged = ours.merge(theirs, on="vertex", suffixes=("", "_cugraph"))
    assert len(merged) == g.n == len(theirs) == len(same)
    l1 = {
        "from_edgelist": np.abs(ours["pagerank"].to_numpy() - same["pagerank"].to_numpy()).sum(),
        "oracle": np.abs(ours["pagerank"].to_numpy() - expected).sum(),
        "cugraph": np.abs(merged["pagerank"] - merged["pagerank_cugraph"]).sum(),
    }
    assert max(l1.values()) <= 1e-4, l1
