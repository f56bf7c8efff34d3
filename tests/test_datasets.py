"""Tests for onyx_rapids.datasets: shipped graphs (re-derived from networkx, proving their
provenance), deterministic generators, and the atomic Parquet writer."""

import os

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onyx_rapids import datasets

# --------------------------------------------------------------------------------------------
# Shipped graphs


def networkx_tables(name):
    """(edges, vertex table) of an embedded graph, derived from networkx exactly as the shipped
    Parquet files were made: undirected edges once with src < dst, sorted; named vertices
    numbered in sorted-name order; karate club 0 = 'Mr. Hi', 1 = 'Officer'."""
    if name == "karate":
        G = nx.karate_club_graph()
        ids = {v: v for v in G.nodes}
        club = [0 if G.nodes[v]["club"] == "Mr. Hi" else 1 for v in sorted(G.nodes)]
        vertices = pd.DataFrame(
            {"vertex": np.arange(len(club), dtype=np.int64), "club": np.array(club, dtype=np.int64)}
        )
    else:
        make = {
            "les_miserables": nx.les_miserables_graph,
            "florentine_families": nx.florentine_families_graph,
        }
        G = make[name]()
        names = sorted(G.nodes)
        ids = {v: i for i, v in enumerate(names)}
        vertices = pd.DataFrame({"vertex": np.arange(len(names), dtype=np.int64), "name": names})
    rows = sorted(
        (min(ids[u], ids[v]), max(ids[u], ids[v]), w.get("weight"))
        for u, v, w in G.edges(data=True)
    )
    src, dst, weight = zip(*rows)
    edges = pd.DataFrame(
        {"src": np.array(src, dtype=np.int64), "dst": np.array(dst, dtype=np.int64)}
    )
    if weight[0] is not None:
        edges["weight"] = np.array(weight, dtype=np.float32)
    return edges, vertices


NAMES = [d["name"] for d in datasets.list_datasets()]


def test_list_datasets_describes_every_shipped_file():
    assert NAMES == ["karate", "les_miserables", "florentine_families"]
    assert datasets.DEFAULT_GRAPH == "karate"
    for d in datasets.list_datasets():
        assert {"name", "n", "m", "directed", "weighted", "description"} <= set(d)
        edges = datasets.load_edges(d["name"])
        assert len(edges) == d["m"]
        assert ("weight" in edges.columns) == d["weighted"]
        assert len(datasets.load_labels(d["name"])) == d["n"]
        assert datasets.dataset_path(d["name"]).is_file()


def test_karate_matches_networkx():
    edges = datasets.load_edges("karate")
    assert (len(edges), edges["src"].dtype, edges["dst"].dtype, edges["weight"].dtype) == (
        78, np.int64, np.int64, np.float32,
    )
    G = nx.karate_club_graph()
    shipped = {(int(u), int(v)): float(w) for u, v, w in edges.itertuples(index=False)}
    assert shipped == {(min(u, v), max(u, v)): float(w["weight"]) for u, v, w in G.edges(data=True)}
    assert set(np.unique(edges[["src", "dst"]].to_numpy())) == set(range(34))


def test_karate_labels_match_networkx_club():
    labels = datasets.load_labels("karate")
    assert list(labels.columns) == ["vertex", "club"]
    G = nx.karate_club_graph()
    names = {0: "Mr. Hi", 1: "Officer"}
    assert [names[c] for c in labels["club"]] == [G.nodes[v]["club"] for v in labels["vertex"]]
    assert list(labels["vertex"]) == list(range(34))


@pytest.mark.parametrize("name", NAMES)
def test_shipped_files_rederive_from_networkx(name):
    edges, vertices = networkx_tables(name)
    pd.testing.assert_frame_equal(datasets.load_edges(name), edges)
    pd.testing.assert_frame_equal(datasets.load_labels(name), vertices)
    assert (edges["src"] < edges["dst"]).all()


@pytest.mark.parametrize("call", [datasets.load_edges, datasets.load_labels, datasets.dataset_path])
def test_unknown_dataset_names_the_available_ones(call):
    available = "karate, les_miserables, florentine_families"
    with pytest.raises(ValueError, match=f"karate_club_typo.*{available}"):
        call("karate_club_typo")


# --------------------------------------------------------------------------------------------
# R-MAT


def test_rmat_sizes_dtypes_and_range():
    df = datasets.rmat(9, edge_factor=8, seed=5)
    assert list(df.columns) == ["src", "dst"]
    assert len(df) == 8 * 512
    assert df["src"].dtype == np.int64 and df["dst"].dtype == np.int64
    ids = df[["src", "dst"]].to_numpy()
    assert ids.min() >= 0 and ids.max() < 512


def test_rmat_is_deterministic_per_seed():
    one = datasets.rmat(10, seed=7, weighted=True)
    pd.testing.assert_frame_equal(one, datasets.rmat(10, seed=7, weighted=True))
    assert not one.equals(datasets.rmat(10, seed=8, weighted=True))
    # topology does not depend on whether weights are drawn
    pd.testing.assert_frame_equal(one[["src", "dst"]], datasets.rmat(10, seed=7))


def test_rmat_weights():
    w = datasets.rmat(8, seed=1, weighted=True)["weight"]
    assert w.dtype == np.float32
    assert w.min() >= 0.1 and w.max() < 1.0


def test_rmat_permute_only_relabels_vertices():
    plain = datasets.rmat(8, seed=3, permute=False)
    permuted = datasets.rmat(8, seed=3, permute=True)
    before = np.concatenate([plain["src"], plain["dst"]])
    after = np.concatenate([permuted["src"], permuted["dst"]])
    mapping = np.full(256, -1)
    mapping[before] = after
    assert (mapping[before] == after).all()  # a function ...
    used = mapping[mapping >= 0]
    assert len(np.unique(used)) == len(used)  # ... and injective
    assert not (before == after).all()


def test_rmat_degree_is_skewed():
    df = datasets.rmat(12, seed=0)
    degree = np.bincount(np.concatenate([df["src"], df["dst"]]), minlength=1 << 12)
    assert degree.max() > 20 * degree.mean()


@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_rmat_top_level_quadrants_follow_abcd(noise):
    a, b, c = 0.57, 0.19, 0.19
    scale = 10
    df = datasets.rmat(scale, seed=11, permute=False, noise=noise)
    row = (df["src"].to_numpy() >> (scale - 1)) & 1
    col = (df["dst"].to_numpy() >> (scale - 1)) & 1
    observed = np.bincount(2 * row + col, minlength=4) / len(df)
    # binomial standard error ~0.004 at 16k edges; the noise can shift a level by up to 0.05
    tolerance = 0.02 + 2 * noise
    np.testing.assert_allclose(observed, [a, b, c, 1 - a - b - c], atol=tolerance)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"scale": 0}, "scale"),
        ({"scale": 2.5}, "scale"),
        ({"scale": True}, "scale"),
        ({"scale": 4, "edge_factor": 0}, "edge_factor"),
        ({"scale": 4, "a": -0.1}, "a"),
        ({"scale": 4, "b": 1.5}, "b"),
        ({"scale": 4, "c": float("nan")}, "c"),
        ({"scale": 4, "a": 0.6, "b": 0.2, "c": 0.2}, "a \\+ b \\+ c"),
        ({"scale": 4, "noise": 0.2}, "noise"),
        ({"scale": 4, "noise": -0.01}, "noise"),
        ({"scale": 4, "seed": -1}, "seed"),
    ],
)
def test_rmat_rejects_bad_arguments(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        datasets.rmat(**kwargs)


# --------------------------------------------------------------------------------------------
# Erdos-Renyi


@pytest.mark.parametrize("directed", [True, False])
def test_erdos_renyi_gnm(directed):
    df = datasets.erdos_renyi(50, m=2000, seed=4, directed=directed, weighted=True)
    assert len(df) == 2000
    assert [df[c].dtype for c in df.columns] == [np.int64, np.int64, np.float32]
    assert (df["src"] != df["dst"]).all()
    assert df["src"].min() >= 0 and df["dst"].max() < 50
    if not directed:
        assert (df["src"] < df["dst"]).all()
    again = datasets.erdos_renyi(50, m=2000, seed=4, directed=directed, weighted=True)
    pd.testing.assert_frame_equal(df, again)
    assert not df.equals(datasets.erdos_renyi(50, m=2000, seed=5, directed=directed, weighted=True))
    # every vertex is hit as a source about m/n times: no vertex is favoured
    counts = np.bincount(np.concatenate([df["src"], df["dst"]]), minlength=50)
    assert counts.min() > 0.5 * counts.mean()


@pytest.mark.parametrize("directed", [True, False])
def test_erdos_renyi_gnp_complete_and_empty(directed):
    n = 9
    complete = datasets.erdos_renyi(n, p=1.0, directed=directed)
    expected = nx.complete_graph(n, create_using=nx.DiGraph if directed else nx.Graph)
    pairs = sorted((u, v) if directed else (min(u, v), max(u, v)) for u, v in expected.edges)
    assert list(zip(complete["src"], complete["dst"])) == pairs  # also sorted by (src, dst)
    assert len(datasets.erdos_renyi(n, p=0.0, directed=directed)) == 0
    assert len(datasets.erdos_renyi(n, p=1e-300, directed=directed)) == 0  # huge first gap
    assert len(datasets.erdos_renyi(1, p=1.0, directed=directed)) == 0


@pytest.mark.parametrize("directed", [True, False])
def test_erdos_renyi_gnp_is_simple_with_binomial_size(directed):
    n, p = 300, 0.02
    df = datasets.erdos_renyi(n, p=p, seed=9, directed=directed)
    pairs = n * (n - 1) // (1 if directed else 2)
    assert abs(len(df) - p * pairs) < 5 * np.sqrt(pairs * p * (1 - p))
    assert (df["src"] != df["dst"]).all()
    assert not df.duplicated().any()
    if not directed:
        assert (df["src"] < df["dst"]).all()
    assert df["src"].max() < n and df["dst"].max() < n


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        ({"n": -1, "m": 3}, "n"),
        ({"n": 5}, "exactly one of m"),
        ({"n": 5, "m": 3, "p": 0.1}, "exactly one of m"),
        ({"n": 5, "m": -3}, "m"),
        ({"n": 1, "m": 3}, "n must be >= 2"),
        ({"n": 5, "p": 1.1}, "p"),
        ({"n": 5, "p": -0.1}, "p"),
    ],
)
def test_erdos_renyi_rejects_bad_arguments(kwargs, argument):
    with pytest.raises(ValueError, match=argument):
        datasets.erdos_renyi(**kwargs)


# --------------------------------------------------------------------------------------------
# Grid


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 12), cols=st.integers(1, 12))
def test_grid_matches_networkx(rows, cols):
    df = datasets.grid_2d(rows, cols)
    assert len(df) == 2 * rows * cols - rows - cols
    assert (df["src"] < df["dst"]).all()
    G = nx.relabel_nodes(nx.grid_2d_graph(rows, cols), lambda rc: rc[0] * cols + rc[1])
    expected = sorted((min(u, v), max(u, v)) for u, v in G.edges)
    assert list(zip(df["src"], df["dst"])) == expected


def test_grid_weights_are_seeded():
    df = datasets.grid_2d(5, 7, weighted=True, seed=3)
    assert df["weight"].dtype == np.float32
    assert df["weight"].between(0.1, 1.0, inclusive="left").all()
    pd.testing.assert_frame_equal(df, datasets.grid_2d(5, 7, weighted=True, seed=3))
    assert not df["weight"].equals(datasets.grid_2d(5, 7, weighted=True, seed=4)["weight"])
    with pytest.raises(ValueError, match="cols"):
        datasets.grid_2d(3, 0)


# --------------------------------------------------------------------------------------------
# generate()


def test_generate_dispatches_by_kind():
    for kind in ("kronecker", "rmat"):
        pd.testing.assert_frame_equal(datasets.generate(kind, 6, seed=2), datasets.rmat(6, seed=2))
    er = datasets.generate("erdos_renyi", 6, seed=2, weighted=True)
    assert len(er) == 16 * 64 and "weight" in er.columns
    grid = datasets.generate("grid", 7)  # 8 x 16
    assert len(grid) == 2 * 128 - 8 - 16 and grid["dst"].max() == 127


def test_generate_rejects_bad_kind_and_scale():
    with pytest.raises(ValueError, match="kind='delaunay'.*rmat, kronecker, erdos_renyi, grid"):
        datasets.generate("delaunay", 4)
    for scale in (0, -3, 2.0, "4"):
        with pytest.raises(ValueError, match="scale"):
            datasets.generate("rmat", scale)


def test_sizes_beyond_host_memory_are_refused_before_allocating(monkeypatch):
    with pytest.raises(ValueError, match=r"generate\('rmat', scale=40\) would need about "
                                         r"[0-9.]+ TiB of host memory \(17,592,186,044,416 edges "
                                         r"x 16 bytes x 3 copies.*but only .* are available; "
                                         r"choose scale <= \d+"):
        datasets.generate("rmat", 40)
    with pytest.raises(ValueError, match=r"rmat\(scale=40, edge_factor=16\) would need .* x 20 "
                                         r"bytes"):
        datasets.rmat(40, weighted=True)
    for call in (lambda: datasets.generate("erdos_renyi", 40),
                 lambda: datasets.generate("grid", 40),
                 lambda: datasets.erdos_renyi(2**40, m=2**44),
                 lambda: datasets.grid_2d(2**20, 2**20)):
        with pytest.raises(ValueError, match="of host memory"):
            call()
    # With 10 MiB available the suggested scale is one that fits, and runs.
    monkeypatch.setattr(datasets, "_available_memory", lambda: 10 * 2**20)
    with pytest.raises(ValueError, match=r"only 10.0 MiB are available; choose scale <= (\d+)") \
            as refused:
        datasets.rmat(16)
    fits = int(str(refused.value).split("choose scale <= ")[1].split(" ")[0])
    assert fits == 13 and len(datasets.rmat(fits, edge_factor=1)) == 2**13
    # Unknown available memory: no check.
    monkeypatch.setattr(datasets, "_available_memory", lambda: None)
    assert len(datasets.rmat(16, edge_factor=1)) == 2**16


def test_available_memory_is_a_positive_byte_count():
    available = datasets._available_memory()
    assert available is None or available > 0


# --------------------------------------------------------------------------------------------
# write_parquet


def test_write_parquet_round_trip_creates_parents_and_leaves_no_temp(tmp_path):
    df = datasets.rmat(6, seed=1, weighted=True)
    path = tmp_path / "a" / "b" / "g.parquet"
    assert datasets.write_parquet(df, path) == path
    pd.testing.assert_frame_equal(pd.read_parquet(path), df)
    assert os.listdir(path.parent) == ["g.parquet"]


def test_write_parquet_refuses_to_overwrite_unless_asked(tmp_path):
    path = tmp_path / "g.parquet"
    first, second = datasets.grid_2d(2, 2), datasets.grid_2d(3, 3)
    datasets.write_parquet(first, path)
    with pytest.raises(FileExistsError, match="g.parquet"):
        datasets.write_parquet(second, path)
    pd.testing.assert_frame_equal(pd.read_parquet(path), first)
    datasets.write_parquet(second, str(path), overwrite=True)
    pd.testing.assert_frame_equal(pd.read_parquet(path), second)
    assert os.listdir(tmp_path) == ["g.parquet"]


def test_write_parquet_failure_leaves_nothing(tmp_path):
    bad = pd.DataFrame({"x": [object(), object()]})  # pyarrow cannot convert it
    with pytest.raises(Exception):
        datasets.write_parquet(bad, tmp_path / "bad.parquet")
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="df"):
        datasets.write_parquet({"src": [0]}, tmp_path / "x.parquet")


# --------------------------------------------------------------------------------------------
# Scale (excluded from the default run: `pytest -m slow tests/test_datasets.py`)


@pytest.mark.slow
def test_rmat_scale_22_under_a_minute():
    import time

    start = time.perf_counter()
    df = datasets.rmat(22, seed=0)
    elapsed = time.perf_counter() - start
    assert len(df) == 16 << 22
    assert elapsed < 60, elapsed
