"""strongly_connected_components against the Tarjan oracle (itself checked against SciPy's
``connected_components(connection="strong")``): small shapes in every registry variant, string
ids, a reordered and a host-placed graph, the coloring with and without pointer jumping, the
refusal of undirected graphs, the command line; on a GPU, R-MAT and a road-like grid against
SciPy."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import oracles_traversal as oracle
from graphs import build, csr_edges
from onyx_rapids import Graph, cli, datasets, device, io, registry, strongly_connected_components
from onyx_rapids.algorithms import strongly_connected_components as scc_module

VARIANTS = registry.get("strongly_connected_components").variants()


def _frame(df):
    return io.to_pandas(df)


def _scipy_partition(n, src, dst):
    """Component numbers by SciPy (an independent reference; arbitrary numbering)."""
    a = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    return connected_components(a, directed=True, connection="strong")[1]


def _same_partition(a, b):
    """Whether two labellings of the same vertices group them alike."""
    a, b = np.asarray(a), np.asarray(b)
    pairs = pd.DataFrame({"a": a, "b": b}).drop_duplicates()
    return len(pairs) == len(set(a)) == len(set(b))


def _expected(g):
    """The oracle's labels in the frame's vertex order (the graph's internal order), as the
    frame writes them (a labelled graph's labels)."""
    src, dst = csr_edges(g)
    labels = oracle.strongly_connected_components(g.n, src, dst, device.to_host(g.vertices))
    if g.id_map.labels is not None:
        return g.id_map.labels.values[labels.astype(np.int64)]
    return labels


def _shapes_graph():
    """A DAG (diamond), a 4-cycle, two cycles joined by one edge, self-loops, a 2-cycle of
    parallel edges, a cycle with chains in and out, isolated vertices; ids not in order."""
    edges = [(5, 1), (5, 2), (1, 3), (2, 3),                      # DAG
             (13, 10), (10, 11), (11, 12), (12, 13),              # 4-cycle
             (22, 20), (20, 21), (21, 22), (24, 23), (23, 24), (22, 23),  # joined cycles
             (30, 30), (31, 31), (31, 32),                        # self-loops
             (40, 41), (40, 41), (41, 40),                        # parallel edges
             (59, 60), (60, 61), (61, 62), (62, 60), (62, 63), (63, 64)]  # chains around a cycle
    df = pd.DataFrame(edges, columns=["src", "dst"])
    return Graph.from_edgelist(df, vertices=[50, 7], multigraph=True, directed=True)


SHAPES = _shapes_graph()


def test_oracle_matches_scipy():
    rng = np.random.default_rng(3)
    for n, m in ((1, 0), (5, 0), (12, 30), (40, 60), (60, 200)):
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        ids = np.sort(rng.choice(10**6, n, replace=False))[::-1].copy()
        labels = oracle.strongly_connected_components(n, src, dst, ids)
        assert _same_partition(labels, _scipy_partition(n, src, dst))
        for label in np.unique(labels):  # each label is the smallest id of its members
            assert label == ids[labels == label].min()


def test_known_components():
    df = _frame(strongly_connected_components(SHAPES)).set_index("vertex")["labels"]
    expected = {5: 5, 1: 1, 2: 2, 3: 3, 10: 10, 11: 10, 12: 10, 13: 10, 20: 20, 21: 20, 22: 20,
                23: 23, 24: 23, 30: 30, 31: 31, 32: 32, 40: 40, 41: 40, 59: 59, 60: 60,
                61: 60, 62: 60, 63: 63, 64: 64, 50: 50, 7: 7}
    assert df.to_dict() == expected


@pytest.mark.parametrize("variant", VARIANTS, ids=registry.variant_name)
def test_shapes_in_every_variant(variant):
    df, info = strongly_connected_components(SHAPES, return_info=True, **variant)
    assert list(df.columns) == ["vertex", "labels"]
    np.testing.assert_array_equal(_frame(df)["labels"].to_numpy(), _expected(SHAPES))
    assert info.fused is variant["fused"] and info.direction == variant["direction"]
    assert info.converged and info.phases >= 2 and info.trimmed > 0
    assert info.pivot_component >= 2 and info.coloring_rounds >= 1  # every step ran
    assert set(info.directions) == {variant["direction"]}


def test_random_graph_with_every_step():
    g = build("directed", seed=5)  # multi-edges, self-loops, dangling vertices
    df, info = strongly_connected_components(g, return_info=True)
    np.testing.assert_array_equal(_frame(df)["labels"].to_numpy(), _expected(g))
    src, dst = csr_edges(g)
    assert _same_partition(_frame(df)["labels"], _scipy_partition(g.n, src, dst))
    assert info.iterations > 0 and info.direction == "auto" and info.fused is True


def test_reordered_and_host_placed_graphs():
    for g in (SHAPES.reorder("degree"), SHAPES.to("host")):
        np.testing.assert_array_equal(
            _frame(strongly_connected_components(g))["labels"].to_numpy(), _expected(g))


def test_string_ids():
    df = pd.DataFrame({"src": ["cy", "ann", "bob", "bob", "dan"],
                       "dst": ["ann", "bob", "cy", "dan", "dan"]})
    g = Graph.from_edgelist(df, directed=True)
    got = _frame(strongly_connected_components(g)).set_index("vertex")["labels"].to_dict()
    assert got == {"ann": "ann", "bob": "ann", "cy": "ann", "dan": "dan"}
    np.testing.assert_array_equal(
        _frame(strongly_connected_components(g))["labels"].to_numpy(), _expected(g))


@pytest.mark.parametrize("jump_every", [None, 1])
def test_coloring_settles_what_trimming_leaves(monkeypatch, jump_every):
    """One trimming round only; the pivot takes the cycle {0, 1} (parallel edges make its
    degrees the largest); the coloring needs three rounds: the largest reacher 9 settles its
    cycle {8, 9}, then the singletons 5 and 7 are roots, then the cycle {3, 4}.  With
    ``jump_every=1`` every forward run stops after one iteration (pointer jumping between),
    with the same labels."""
    monkeypatch.setattr(scc_module, "TRIM_ENOUGH", 1.0)
    edges = [(0, 1)] * 3 + [(1, 0)] * 3 + [(8, 9), (9, 8), (9, 5), (5, 7), (7, 3), (3, 4),
                                           (4, 3), (4, 6)]
    g = Graph.from_edgelist(pd.DataFrame(edges, columns=["src", "dst"]), multigraph=True,
                            directed=True)
    df, info = strongly_connected_components(g, jump_every=jump_every, return_info=True)
    np.testing.assert_array_equal(_frame(df)["labels"].to_numpy(), _expected(g))
    assert info.trim_rounds == 1 and info.pivot_component == 2 and info.coloring_rounds == 3
    runs = 2 + 2 * info.coloring_rounds  # forward and backward for the pivot and each round
    assert (info.phases > runs) == (jump_every is not None) and info.phases >= runs


def test_pointer_jumping_follows_colors_to_their_end():
    run = scc_module._Run(SHAPES, scc_module.AccOptions(), jump_every=4)
    color = device.asarray(np.array([1, 2, 3, 3, -1, 4], dtype=np.int64))
    assert run.jump(color) is True
    assert device.to_host(color).tolist() == [3, 3, 3, 3, -1, -1]
    assert run.facts["jumps"] == 2 and run.jump(color) is False


def test_undirected_graph_is_refused_with_the_fix():
    g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
    with pytest.raises(ValueError, match=r"strongly_connected_components: the graph is "
                                         r"undirected.*weakly_connected_components\(g\)"):
        strongly_connected_components(g)


def test_options_and_parameters_are_checked():
    with pytest.raises(ValueError, match="jump_every must be a positive integer or None"):
        strongly_connected_components(SHAPES, jump_every=0)
    with pytest.raises(ValueError, match="strongly_connected_components does not support "
                                         "change_driven=True"):
        strongly_connected_components(SHAPES, change_driven=True)
    with pytest.raises(TypeError, match="does not support weight='w'"):
        strongly_connected_components(SHAPES, weight="w")


def test_graphs_without_edges():
    for n in (1, 3):
        g = Graph.from_csr(np.zeros(n + 1, np.int64), np.zeros(0, np.int64))
        df, info = strongly_connected_components(g, return_info=True)
        assert _frame(df)["labels"].tolist() == list(range(n)) and info.trimmed == n


def test_cli_runs_on_an_embedded_graph(capsys, tmp_path):
    """The embedded graphs are undirected: the command line takes each edge both ways, so the
    components are the connected ones (florentine_families: one of 14 families, and the
    isolated Pucci)."""
    out = tmp_path / "scc.parquet"
    code = cli.main(["run", "strongly_connected_components", "--dataset",
                     "florentine_families", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    df = pd.read_parquet(out)
    edges = datasets.load_edges("florentine_families")
    names = sorted(set(edges["src"]) | set(edges["dst"]))
    assert list(df.columns) == ["vertex", "labels"] and sorted(df["vertex"]) == names
    assert df["labels"].nunique() == 1  # the marriage network is connected
    code = cli.main(["run", "strongly_connected_components", "--undirected", "--quiet"])
    assert code == 2 and "runs on a directed graph" in capsys.readouterr().err


# ----------------------------------------------------------------------------------- GPU


def _check_against_scipy(g, **variant):
    """The partition is SciPy's and each label the smallest id of its component; returns the
    RunInfo and the largest component's size."""
    df, info = strongly_connected_components(g, return_info=True, **variant)
    src, dst = csr_edges(g)
    got = _frame(df)["labels"].to_numpy()
    expected = _scipy_partition(g.n, src, dst)
    assert _same_partition(got, expected)
    ids = device.to_host(g.vertices)
    smallest = pd.Series(ids).groupby(got).min()
    np.testing.assert_array_equal(smallest.index.to_numpy(), smallest.to_numpy())
    return info, np.bincount(expected).max()


def _road(side, drop, seed):
    """The side x side grid with a fraction ``drop`` of its edges deleted, each kept edge
    given a random direction, or both (a third of them): many small components and long
    detours."""
    rng = np.random.default_rng(seed)
    df = datasets.grid_2d(side, side)
    df = df[rng.random(len(df)) >= drop]
    way = rng.integers(0, 3, len(df))
    src = np.r_[df["src"][way != 1], df["dst"][way != 0]]
    dst = np.r_[df["dst"][way != 1], df["src"][way != 0]]
    return Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}),
                               vertices=np.arange(side * side), directed=True)


@pytest.mark.gpu
@pytest.mark.parametrize("variant", VARIANTS + [dict(jump_every=16)], ids=registry.variant_name)
def test_gpu_rmat_against_scipy(variant):
    g = Graph.from_edgelist(datasets.rmat(16, seed=2), directed=True)
    info, giant = _check_against_scipy(g, **variant)
    assert info.pivot_component == giant  # R-MAT's giant component went in one step


@pytest.mark.gpu
@pytest.mark.parametrize("side, drop", [(512, 0.1), (1024, 0.0)])
def test_gpu_road_grid_against_scipy(side, drop):
    info, _ = _check_against_scipy(_road(side, drop, seed=side))
    assert info.coloring_rounds >= 1


@pytest.mark.gpu
def test_gpu_both_way_grid_is_one_component():
    """A grid with every edge both ways: one component, found by the pivot's
    forward-backward (thousands of hops in one fused run each way)."""
    df = datasets.grid_2d(1024, 1024)
    both = Graph.from_edgelist(pd.DataFrame({"src": np.r_[df["src"], df["dst"]],
                                             "dst": np.r_[df["dst"], df["src"]]}),
                               directed=True)
    out, info = strongly_connected_components(both, return_info=True)
    assert (_frame(out)["labels"] == 0).all() and info.pivot_component == both.n
    assert info.coloring_rounds == 0 and info.phases == 2
