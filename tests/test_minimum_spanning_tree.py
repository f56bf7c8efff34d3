"""minimum_spanning_tree (docs/algorithms.md): the forest equals the Kruskal oracle's (ties by
CSR position) in every registry variant, its weight scipy's; ties, forests, isolated vertices,
self-loops, parallel edges, labels, reordered, bipartite and host-placed graphs; refusals."""

import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst

import oracles_traversal as oracle
from graphs import csr_edges
from onyx_rapids import Graph, datasets, device, io, minimum_spanning_tree, registry

NAME = "minimum_spanning_tree"
COLUMNS = ["src", "dst", "weight"]


# ------------------------------------------------------------------------------ helpers


def _canonical(g, weight=None):
    """(src, dst, w) of g's undirected edges, each once as its canonical copy (internal
    src < dst) in CSR order; w float64 of the stored float32 (1.0 unweighted)."""
    src, dst = csr_edges(g)
    if g.edge_weights is None or weight is False:
        w = np.ones(len(src))
    else:
        j = g.weight_names.index(weight) if isinstance(weight, str) else 0
        w = device.to_host(g.edge_weights[:, j]).astype(np.float64)
    keep = src < dst
    return src[keep], dst[keep], w[keep]


def _expected(g, weight=None):
    """The oracle's forest as the result frame should hold it (rows in CSR order of the
    canonical copies: sorted by (src, dst) in id order)."""
    src, dst, w = _canonical(g, weight)
    kept = oracle.minimum_spanning_forest(g.n, src, dst, w)
    ids = g.id_map.original()
    return pd.DataFrame({"src": ids[src[kept]], "dst": ids[dst[kept]], "weight": w[kept]})


def _assert_frame(df, expected):
    df = io.to_pandas(df)
    assert list(df.columns) == COLUMNS
    assert df["weight"].dtype == np.float32
    assert df["src"].tolist() == expected["src"].tolist()
    assert df["dst"].tolist() == expected["dst"].tolist()
    np.testing.assert_array_equal(df["weight"].to_numpy(np.float64), expected["weight"])


def _scipy(n, src, dst, w):
    """scipy's forest of a simple graph with positive weights: ({(u, v) u < v}, weight)."""
    t = scipy_mst(sp.csr_matrix((w, (src, dst)), shape=(n, n))).tocoo()
    return {(min(a, b), max(a, b)) for a, b in zip(t.row.tolist(), t.col.tolist())}, \
        float(t.data.sum())


def _pairs(df, g):
    """{(u, v) u < v} in internal ids of a result frame."""
    df = io.to_pandas(df)
    u, v = device.to_host(g.to_internal(df["src"])), device.to_host(g.to_internal(df["dst"]))
    return {(min(a, b), max(a, b)) for a, b in zip(u.tolist(), v.tolist())}


def _random_simple(n, m, seed, distinct=True):
    """n vertices with scattered ids (negative and large), m distinct pairs, weights distinct
    (or drawn from three values), positive."""
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(np.arange(-40, 10**12, 104729), size=n, replace=False))
    pairs = np.array([(a, b) for a in range(n) for b in range(a + 1, n)])
    pick = pairs[rng.choice(len(pairs), size=m, replace=False)]
    w = (rng.permutation(m) + 1) * 0.25 if distinct else rng.choice([0.5, 1.0, 2.0], m)
    flip = rng.random(m) < 0.5  # either orientation
    src, dst = np.where(flip, pick[:, 1], pick[:, 0]), np.where(flip, pick[:, 0], pick[:, 1])
    return pd.DataFrame({"src": ids[src], "dst": ids[dst], "w": w.astype(np.float32)})


def _shapes():
    forest = pd.DataFrame({"src": [1, 2, 3, 10, 11, 12, 20, 21, 22, 5],
                           "dst": [2, 3, 1, 11, 12, 10, 21, 22, 20, 5],
                           "w": [3.0, 1.0, 2.0, 0.0, 0.0, 0.0, 7.5, -0.0, 0.25, 0.1]})  # 5-5: loop
    parallel = pd.DataFrame({"src": [0, 0, 1, 0, 2, 2, 3], "dst": [1, 1, 2, 2, 2, 3, 0],
                             "w": [5.0, 1.0, 4.0, 4.0, 0.5, 4.0, 4.0]})
    grid = datasets.grid_2d(5, 6)
    return {
        "distinct": Graph.from_edgelist(_random_simple(24, 60, seed=1), weight="w"),
        "ties": Graph.from_edgelist(_random_simple(20, 45, seed=2, distinct=False), weight="w"),
        "forest": Graph.from_edgelist(forest, weight="w", vertices=[30, 0, 40]),
        "multigraph": Graph.from_edgelist(parallel, weight="w", multigraph=True),
        "unweighted_grid": Graph.from_edgelist(grid),
    }


SHAPES = _shapes()
VARIANTS = [dict(v, block_size=b) for v in registry.get(NAME).variants() for b in (None, 32)]


# ------------------------------------------------------------------------------ the oracle


@pytest.mark.parametrize("seed", range(4))
def test_oracle_matches_scipy(seed):
    for distinct in (True, False):
        df = _random_simple(16, 30, seed, distinct)
        src, dst, w = (df[c].to_numpy() for c in ("src", "dst", "w"))
        ids = np.unique(np.r_[src, dst])
        u, v = np.searchsorted(ids, src), np.searchsorted(ids, dst)
        kept = oracle.minimum_spanning_forest(len(ids), u, v, w)
        edges, total = _scipy(len(ids), u, v, w.astype(np.float64))
        assert math.isclose(w[kept].astype(np.float64).sum(), total, rel_tol=1e-12)
        assert len(kept) == len(edges)
        if distinct:  # the forest is unique
            assert {(min(a, b), max(a, b)) for a, b in zip(u[kept], v[kept])} == edges


def test_oracle_breaks_ties_by_position_and_skips_loops():
    # a triangle of equal weights: the first two edges; a self-loop never joins
    assert oracle.minimum_spanning_forest(3, [2, 0, 1, 1], [2, 1, 2, 0], [0, 1, 1, 1]).tolist() \
        == [1, 2]


# ------------------------------------------------------------------------------ the forest


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("variant", VARIANTS, ids=registry.variant_name)
def test_forest_matches_oracle(shape, variant):
    g = SHAPES[shape]
    df, info = minimum_spanning_tree(g, return_info=True, **variant)
    expected = _expected(g)
    _assert_frame(df, expected)
    assert info["total_weight"] == pytest.approx(expected["weight"].sum(), rel=1e-12)
    assert info["components"] == g.n - len(expected) and info["converged"]
    assert 1 <= info["iterations"] <= max(1, math.ceil(math.log2(g.n)))


def test_distinct_weights_match_scipy():
    g = SHAPES["distinct"]
    df, info = minimum_spanning_tree(g, return_info=True)
    edges, total = _scipy(g.n, *_canonical(g))
    assert _pairs(df, g) == edges
    assert info["total_weight"] == pytest.approx(total, rel=1e-12)


def test_forest_spans_each_component_and_is_deterministic():
    g = SHAPES["ties"]
    first = io.to_pandas(minimum_spanning_tree(g))
    again = io.to_pandas(minimum_spanning_tree(g, block_size=64))
    pd.testing.assert_frame_equal(first, again)
    G = nx.Graph(list(zip(*_canonical(g)[:2])))
    G.add_nodes_from(range(g.n))
    F = nx.Graph(list(_pairs(first, g)))
    F.add_nodes_from(range(g.n))
    assert nx.is_forest(F)
    assert nx.number_connected_components(F) == nx.number_connected_components(G)
    _, total = _scipy(g.n, *_canonical(g))
    assert first["weight"].astype(np.float64).sum() == pytest.approx(total, rel=1e-12)


def test_forest_of_pieces_self_loops_and_parallel_edges():
    df = io.to_pandas(minimum_spanning_tree(SHAPES["forest"]))
    # triangle 1-2-3 keeps 2-3 (1) and 1-3 (2); the zero triangle keeps its first two edges
    # by position; -0.0 weighs 0 (21-22 and 20-22 beat 20-21); the self-loop 5-5 and the
    # isolated 0, 30, 40 add nothing
    assert df.values.tolist() == [[1, 3, 2.0], [2, 3, 1.0], [10, 11, 0.0], [10, 12, 0.0],
                                  [20, 22, 0.25], [21, 22, 0.0]]
    df = io.to_pandas(minimum_spanning_tree(SHAPES["multigraph"]))
    assert df.values.tolist() == [[0, 1, 1.0], [0, 2, 4.0], [0, 3, 4.0]]


def test_unweighted_graph_weighs_one_per_edge():
    g = SHAPES["unweighted_grid"]
    df, info = minimum_spanning_tree(g, return_info=True)
    assert len(df) == g.n - 1 and info["total_weight"] == g.n - 1
    assert (io.to_pandas(df)["weight"] == 1.0).all()
    h = SHAPES["distinct"]
    ones = minimum_spanning_tree(h, weight=False)
    _assert_frame(ones, _expected(h, weight=False))


def test_weight_column_is_chosen_by_name():
    edges = pd.DataFrame({"src": [0, 1, 0], "dst": [1, 2, 2], "a": [1.0, 1.0, 3.0],
                          "b": [3.0, 1.0, 1.0]})
    g = Graph.from_edgelist(edges, weight=["a", "b"])
    assert io.to_pandas(minimum_spanning_tree(g, weight="b")).values.tolist() == \
        [[0, 2, 1.0], [1, 2, 1.0]]
    with pytest.raises(ValueError, match="2 weight columns"):
        minimum_spanning_tree(g)


def test_string_labels():
    edges = pd.DataFrame({"src": ["dan", "ann", "cat", "dan"], "dst": ["ann", "bob", "bob", "cat"],
                          "w": [1.0, 2.0, 0.5, 3.0]})
    g = Graph.from_edgelist(edges, weight="w", vertices=["eve"])
    df = io.to_pandas(minimum_spanning_tree(g))
    assert df.values.tolist() == [["ann", "bob", 2.0], ["ann", "dan", 1.0],
                                  ["bob", "cat", 0.5]]


def test_reordered_graph_gives_the_same_frame():
    g = SHAPES["ties"]
    a = io.to_pandas(minimum_spanning_tree(g))
    b = io.to_pandas(minimum_spanning_tree(g.reorder("degree")))
    assert (b["src"] < b["dst"]).all()
    assert b["weight"].sum() == a["weight"].sum() and len(a) == len(b)
    h = SHAPES["distinct"]  # one forest: the same rows
    pd.testing.assert_frame_equal(io.to_pandas(minimum_spanning_tree(h.reorder("degree"))),
                                  io.to_pandas(minimum_spanning_tree(h)))


def test_bipartite_graph_lists_the_left_side_first():
    # user 1 and item 1 are two vertices; the cycle u1-i2-u2-i1 drops its heaviest edge
    ratings = pd.DataFrame({"user": [1, 1, 2, 2, 2], "item": [2, 1, 1, 3, 2],
                            "stars": [1.0, 2.0, 0.5, 4.0, 3.0]})
    g = Graph.from_bipartite(ratings, "user", "item", weight="stars")
    df = io.to_pandas(minimum_spanning_tree(g))
    assert df.values.tolist() == [[1, 1, 2.0], [1, 2, 1.0], [2, 1, 0.5], [2, 3, 4.0]]


def test_host_placed_graph_gives_the_same_frame():
    g = SHAPES["distinct"]
    pd.testing.assert_frame_equal(io.to_pandas(minimum_spanning_tree(g.to("host"))),
                                  io.to_pandas(minimum_spanning_tree(g)))


@pytest.mark.parametrize("vertices", [[], [7]])
def test_graph_without_edges(vertices):
    g = Graph.from_edgelist(pd.DataFrame({"src": [3], "dst": [3]}), vertices=vertices)
    df, info = minimum_spanning_tree(g, return_info=True)
    assert list(df.columns) == COLUMNS and len(df) == 0
    assert info["total_weight"] == 0.0 and info["components"] == g.n
    assert info["iterations"] == 0


# ------------------------------------------------------------------------------ refusals


@pytest.mark.parametrize("edit, error, match", [
    (dict(directed=True), ValueError, "g: minimum_spanning_tree needs an undirected graph, "
                                      "and g is directed; build it with directed=False"),
    (dict(w=-1.0), ValueError, "minimum_spanning_tree: weight column 'w' has 1 edge with a "
                               "negative or non-finite weight"),
    (dict(w=float("nan")), ValueError, "weight='w': 1 row.s. hold NaN or infinite values"),
    (dict(w=float("inf")), ValueError, "weight='w': 1 row.s. hold NaN or infinite values"),
    (dict(weight="x"), ValueError, r"weight='x' is not a weight column of the graph"),
    (dict(fused=True), ValueError, "minimum_spanning_tree does not support fused=True: its "
                                   "execution options are block_size"),
    (dict(block_size=48), ValueError, "block_size must be None or a multiple of 32"),
    (dict(k=2), TypeError, "minimum_spanning_tree does not support k=2"),
])
def test_refusals_name_the_argument(edit, error, match):
    edges = pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0], "w": [1.0, 2.0, 3.0]})
    if "w" in edit:
        edges.loc[1, "w"] = edit.pop("w")
    with pytest.raises(error, match=match):  # NaN and inf: the graph refuses them when built
        g = Graph.from_edgelist(edges, weight="w", directed=edit.pop("directed", False))
        minimum_spanning_tree(g, **edit)


# ------------------------------------------------------------------------------ on a GPU


def _check_large(g):
    df, info = minimum_spanning_tree(g, return_info=True)
    src, dst, w = _canonical(g)
    edges, total = _scipy(g.n, src, dst, w)
    assert info["total_weight"] == pytest.approx(total, rel=1e-9)
    assert len(df) == len(edges)
    _assert_frame(df, _expected(g))  # ties by position: the one forest
    assert info["iterations"] <= math.ceil(math.log2(g.n))


@pytest.mark.gpu
def test_rmat_16_weighted_matches_scipy_and_oracle():
    edges = datasets.rmat(16, weighted=True, seed=3)
    _check_large(Graph.from_edgelist(edges, weight="weight", duplicates="min"))


@pytest.mark.gpu
def test_weighted_grid_matches_scipy_and_oracle():
    _check_large(Graph.from_edgelist(datasets.grid_2d(512, 512, weighted=True, seed=5),
                                     weight="weight"))
