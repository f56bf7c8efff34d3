import numpy as np
import pandas as pd
import pytest

import oracles_traversal as oracle
from graphs import build, csr_edges, predecessor_ids
from onyx_rapids import Graph, bfs, device, io

UNREACHED = 2**31 - 1


def _shapes():
    path = pd.DataFrame({"src": np.arange(24), "dst": np.arange(1, 25)})
    star = pd.DataFrame({"src": np.r_[np.zeros(12, int), np.arange(1, 6)],
                         "dst": np.r_[np.arange(1, 13), np.zeros(5, int)]})
    pieces = pd.DataFrame({"src": [0, 1, 2, 10, 11, 11], "dst": [1, 2, 0, 11, 12, 11]})
    return {"path": Graph.from_edgelist(path, "src", "dst", directed=True),
            "star": Graph.from_edgelist(star, "src", "dst", directed=True),
            "pieces": Graph.from_edgelist(pieces, "src", "dst", vertices=[99], directed=True),
            "random": build("directed", seed=3),
            "undirected": build("undirected", seed=4)}


SHAPES = _shapes()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("direction, filter, fused", [
    ("auto", "jit", False), ("push", "online", False), ("pull", "ballot", False),
    ("auto", "jit", True), ("push", "ballot", True), ("pull", "online", True)])
def test_single_source_matches_oracle_with_valid_predecessors(shape, direction, filter, fused):
    g = SHAPES[shape]
    src, dst = csr_edges(g)
    ids = device.to_host(g.vertices)
    source = int(ids[len(ids) // 3])
    df, info = bfs(g, source=source, direction=direction, filter=filter, fused=fused,
                   threshold=2, return_info=True)
    assert info["fused"] is fused and info["filter"] == filter
    assert len(info["directions"]) == info["iterations"]
    if direction != "auto":  # forced: every level went that way
        assert info[f"{direction}_iterations"] == info["iterations"]
        assert info["directions"] == [direction] * info["iterations"]
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    assert df["distance"].dtype == np.int32
    expected = oracle.bfs(g.n, src, dst, int(device.to_host(g.to_internal(source))))
    np.testing.assert_array_equal(df["distance"].to_numpy(), expected)
    oracle.check_predecessors(g.n, src, dst, df["distance"].to_numpy().astype(np.int64),
                              predecessor_ids(g, df["predecessor"]),
                              [int(device.to_host(g.to_internal(source)))])


@pytest.mark.parametrize("fa, direction", [(True, "auto"), (False, "pull"), (True, "push")])
def test_multi_source_is_k_traversals_at_once(fa, direction):
    g = SHAPES["random"]
    src, dst = csr_edges(g)
    ids = device.to_host(g.vertices)
    chosen = ids[[0, 5, 5, len(ids) - 1]]  # a repeated source gives two equal columns
    df, info = bfs(g, sources=chosen, feature_aware=fa, direction=direction, return_info=True)
    assert len(info.directions) == info.iterations > 1
    if direction != "auto":
        assert set(info.directions) == {direction}
    assert list(df.columns) == ["vertex"] + [f"distance_{f}" for f in range(4)]
    expected = oracle.multi_bfs(g.n, src, dst, device.to_host(g.to_internal(chosen)))
    got = np.stack([df[f"distance_{f}"].to_numpy() for f in range(4)], axis=1)
    np.testing.assert_array_equal(got, expected)


def test_single_vertex_and_info():
    g = Graph.from_edgelist(pd.DataFrame({"src": [5], "dst": [5]}), "src", "dst", directed=True)
    df, info = bfs(g, source=5, return_info=True)
    assert df["distance"].to_numpy().tolist() == [0] and df["predecessor"].isna().all()
    assert info["converged"] and info["iterations"] == 1


@pytest.mark.parametrize("fused", [True, False])
def test_no_predecessor_is_null_even_where_minus_one_is_a_vertex(fused):
    # -1 is a vertex (the source's child) and 7 is unreachable: a -1 sentinel would be ambiguous
    g = Graph.from_edgelist(pd.DataFrame({"src": [3, -1, 3], "dst": [-1, 4, 5]}), "src", "dst",
                            vertices=[7], directed=True)
    df = io.to_pandas(bfs(g, start=3, fused=fused))  # cuGraph's name for source
    got = dict(zip(df["vertex"].tolist(), df["predecessor"].tolist()))
    assert str(df["predecessor"].dtype) == "Int64"
    assert got[-1] == 3 and got[4] == -1 and got[5] == 3
    assert df.loc[df["vertex"].isin([3, 7]), "predecessor"].isna().all()
    assert df["predecessor"].isna().sum() == 2
    with pytest.raises(ValueError, match="source or its cuGraph name start, not both"):
        bfs(g, source=3, start=3)


def test_bad_inputs_raise_clear_errors():
    g = SHAPES["path"]
    with pytest.raises(ValueError, match="source: .*1000"):
        bfs(g, source=1000)
    with pytest.raises(ValueError, match="exactly one of source"):
        bfs(g)
    with pytest.raises(ValueError, match="exactly one of source"):
        bfs(g, source=0, sources=[1])
    with pytest.raises(ValueError, match="at least one vertex"):
        bfs(g, sources=[])
    with pytest.raises(ValueError, match="direction"):
        bfs(g, source=0, direction="sideways")
    with pytest.raises(ValueError, match="pull_fraction"):
        bfs(g, source=0, pull_fraction=1.5)
    with pytest.raises(ValueError, match="filter"):
        bfs(g, source=0, filter="bins")
    with pytest.raises(ValueError, match="threshold"):
        bfs(g, source=0, threshold=0)
    with pytest.raises(ValueError, match="bfs does not support change_driven=True"):
        bfs(g, source=0, change_driven=True)
