"""The traversal oracles of ``oracles_traversal`` (bfs, sssp, predecessor checker, weakly connected
components, core number, k-core) checked against networkx and scipy on many graph shapes: long
paths, stars in both directions, disconnected pieces, self-loops, multi-edges with different
weights, zero-weight edges, a single vertex, isolated vertices only, and seeded random digraphs."""

import numpy as np
import networkx as nx
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra

import oracles_traversal as ot

UNREACHED = 2**31 - 1
SEEDS = [0, 1, 2, 3, 4]


# ----------------------------------------------------------------------------- graph shapes


def _arr(x):
    return np.asarray(x, dtype=np.int64)


def _path(n=200):
    s = np.arange(n - 1)
    return n, _arr(s), _arr(s + 1)


def _path_reversed(n=200):
    s = np.arange(n - 1)
    return n, _arr(s + 1), _arr(s)


def _star_out(leaves=100):
    return leaves + 1, _arr(np.zeros(leaves)), _arr(np.arange(1, leaves + 1))


def _star_in(leaves=100):
    return leaves + 1, _arr(np.arange(1, leaves + 1)), _arr(np.zeros(leaves))


def _star_both(leaves=100):
    n, s, d = _star_out(leaves)
    return n, np.concatenate([s, d]), np.concatenate([d, s])


def _pieces():
    """A directed 4-cycle, a path 4->5->6, isolated 7, a 2-cycle 8<->9, a self-loop at 10,
    isolated 11, and a triangle with a tail 12-13-14 (+ 15)."""
    e = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (8, 9), (9, 8), (10, 10),
         (12, 13), (13, 14), (14, 12), (14, 15)]
    s, d = zip(*e)
    return 16, _arr(s), _arr(d)


def _loops_and_multi():
    """Self-loops (one repeated), parallel edges in both directions, a dangling vertex."""
    e = [(0, 0), (0, 0), (0, 1), (0, 1), (0, 1), (1, 2), (2, 1), (1, 2), (2, 2), (2, 3),
         (3, 4), (3, 4), (4, 4), (4, 0), (5, 5)]
    s, d = zip(*e)
    return 7, _arr(s), _arr(d)


def _single():
    return 1, _arr([]), _arr([])


def _single_loop():
    return 1, _arr([0, 0]), _arr([0, 0])


def _isolated_only():
    return 9, _arr([]), _arr([])


def _clique_with_tail(k=8):
    e = [(i, j) for i in range(k) for j in range(k) if i < j] + [(k - 1, k), (k, k + 1)]
    s, d = zip(*e)
    return k + 3, _arr(s), _arr(d)  # vertex k + 2 isolated


def _random(seed, n=40, m=120, dangling=3):
    """Random directed edges with self-loops, parallel edges and dangling/isolated vertices."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n - dangling, m)
    d = rng.integers(0, n - 1, m)  # vertex n - 1 is isolated
    s[:3], d[:3] = 2, 2  # a self-loop, thrice
    s[3:5], d[3:5] = 5, 7  # a parallel edge
    return n, _arr(s), _arr(d)


def _random_dense(seed, n=25, m=260):
    rng = np.random.default_rng(100 + seed)
    return n, _arr(rng.integers(0, n, m)), _arr(rng.integers(0, n, m))


SHAPES = {
    "path": _path,
    "path_reversed": _path_reversed,
    "star_out": _star_out,
    "star_in": _star_in,
    "star_both": _star_both,
    "pieces": _pieces,
    "loops_and_multi": _loops_and_multi,
    "single": _single,
    "single_loop": _single_loop,
    "isolated_only": _isolated_only,
    "clique_with_tail": _clique_with_tail,
    **{f"random{s}": (lambda s=s: _random(s)) for s in SEEDS},
    **{f"dense{s}": (lambda s=s: _random_dense(s)) for s in SEEDS[:3]},
}
shape_names = pytest.mark.parametrize("shape", list(SHAPES))


def _sources_for(n, seed=0):
    rng = np.random.default_rng(seed)
    cand = [0, n - 1, n // 2] + rng.integers(0, n, 2).tolist()
    return sorted(set(int(c) for c in cand))


def _weights_for(m, seed):
    """Weights with ties, zeros and non-representable decimals."""
    rng = np.random.default_rng(1000 + seed)
    w = rng.integers(0, 5, m) * 0.5
    frac = rng.random(m) < 0.3
    w[frac] = rng.random(int(frac.sum())) * 3
    w[rng.random(m) < 0.15] = 0.0
    w[rng.random(m) < 0.15] = 0.1
    return w


def _digraph(n, s, d):
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    return G


def _multidigraph(n, s, d, w):
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(n))
    for u, v, x in zip(s.tolist(), d.tolist(), w.tolist()):
        G.add_edge(u, v, weight=x)
    return G


def _simple_undirected(n, s, d):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((u, v) for u, v in zip(s.tolist(), d.tolist()) if u != v)
    return G


def _nx_bfs(G, n, source):
    ref = np.full(n, UNREACHED, dtype=np.int64)
    for v, h in nx.single_source_shortest_path_length(G, source).items():
        ref[v] = h
    return ref


def _nx_sssp(G, n, source):
    ref = np.full(n, np.inf)
    for v, x in nx.single_source_dijkstra_path_length(G, source, weight="weight").items():
        ref[v] = x
    return ref


# ----------------------------------------------------------------------------- bfs


@shape_names
def test_bfs_matches_networkx(shape):
    n, s, d = SHAPES[shape]()
    G = _digraph(n, s, d)
    for source in _sources_for(n):
        got = ot.bfs(n, s, d, source)
        assert got.dtype == np.int64 and got.shape == (n,)
        np.testing.assert_array_equal(got, _nx_bfs(G, n, source))


def test_bfs_known_values():
    n, s, d = _path()
    np.testing.assert_array_equal(ot.bfs(n, s, d, 0), np.arange(n))
    mid = ot.bfs(n, s, d, 100)
    assert np.all(mid[:100] == UNREACHED) and np.array_equal(mid[100:], np.arange(100))
    n, s, d = _star_out()
    assert ot.bfs(n, s, d, 0).tolist() == [0] + [1] * 100
    assert ot.bfs(n, s, d, 7).tolist() == [UNREACHED] * 7 + [0] + [UNREACHED] * 93
    n, s, d = _star_in()
    leaf = ot.bfs(n, s, d, 3)
    assert leaf[0] == 1 and leaf[3] == 0 and np.sum(leaf == UNREACHED) == 99
    n, s, d = _star_both()
    assert ot.bfs(n, s, d, 5).tolist() == [1] + [2] * 4 + [0] + [2] * 95
    assert ot.bfs(*_single(), 0).tolist() == [0]
    assert ot.bfs(*_single_loop(), 0).tolist() == [0]
    assert ot.bfs(*_isolated_only(), 4).tolist() == [UNREACHED] * 4 + [0] + [UNREACHED] * 4


def test_bfs_unreachable_sentinel_follows_n():
    assert ot.unreachable_hops(10) == 2**31 - 1 == np.iinfo(np.int32).max
    assert ot.unreachable_hops(2**31 - 1) == 2**31 - 1
    assert ot.unreachable_hops(2**31) == 2**63 - 1 == np.iinfo(np.int64).max


@shape_names
def test_multi_bfs_is_stacked_bfs(shape):
    n, s, d = SHAPES[shape]()
    sources = _sources_for(n, seed=1) + [0]  # a repeated source too
    got = ot.multi_bfs(n, s, d, sources)
    assert got.shape == (n, len(sources)) and got.dtype == np.int64
    ref = np.stack([ot.bfs(n, s, d, x) for x in sources], axis=1)
    np.testing.assert_array_equal(got, ref)
    assert ot.multi_bfs(n, s, d, []).shape == (n, 0)


def test_bfs_input_errors():
    n, s, d = _path(5)
    with pytest.raises(ValueError):
        ot.bfs(n, s, d, 5)
    with pytest.raises(ValueError):
        ot.bfs(n, s, d, -1)
    with pytest.raises(ValueError):
        ot.bfs(3, s, d, 0)  # endpoints outside 0..n-1
    with pytest.raises(ValueError):
        ot.multi_bfs(n, s, d, [0, 9])


# ----------------------------------------------------------------------------- sssp


@shape_names
def test_sssp_matches_networkx(shape):
    n, s, d = SHAPES[shape]()
    w = _weights_for(len(s), seed=len(shape))
    G = _multidigraph(n, s, d, w)  # networkx uses the minimum over parallel edges
    for source in _sources_for(n, seed=2):
        got = ot.sssp(n, s, d, w, source)
        assert got.dtype == np.float64 and got.shape == (n,)
        ref = _nx_sssp(G, n, source)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(ref))
        np.testing.assert_allclose(got[np.isfinite(ref)], ref[np.isfinite(ref)], rtol=1e-12, atol=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_sssp_matches_scipy_dijkstra(seed):
    """scipy sums duplicate COO entries, so the reference matrix is built from the per-pair minimum;
    weights are positive here (scipy's handling of stored zeros is not relied upon)."""
    n, s, d = _random(seed)
    rng = np.random.default_rng(seed)
    w = rng.random(len(s)) * 10 + 0.01
    best = {}
    for u, v, x in zip(s.tolist(), d.tolist(), w.tolist()):
        if u != v:
            best[(u, v)] = min(x, best.get((u, v), np.inf))
    keys = list(best)
    A = sp.csr_matrix(([best[k] for k in keys], ([k[0] for k in keys], [k[1] for k in keys])),
                      shape=(n, n))
    sources = _sources_for(n, seed)
    ref = dijkstra(A, directed=True, indices=sources)  # k x n
    got = ot.multi_sssp(n, s, d, w, sources)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(ref.T))
    fin = np.isfinite(ref.T)
    np.testing.assert_allclose(got[fin], ref.T[fin], rtol=1e-12, atol=0)


def test_sssp_parallel_edges_keep_the_minimum():
    s, d = _arr([0, 0, 0, 1, 1]), _arr([1, 1, 1, 2, 2])
    w = np.array([5.0, 2.0, 7.0, 3.0, 0.5])
    assert ot.sssp(3, s, d, w, 0).tolist() == [0.0, 2.0, 2.5]  # not 14 / 9.5 (summed)


def test_sssp_zero_weight_edges_are_exact():
    # 0 -0-> 1 -0-> 2 -1-> 3, 2 -0-> 4 -0-> 2 (a zero cycle), 5 unreachable, 3 -0-> 3 (zero loop)
    s, d = _arr([0, 1, 2, 2, 4, 3]), _arr([1, 2, 3, 4, 2, 3])
    w = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    got = ot.sssp(6, s, d, w, 0)
    assert got.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, np.inf]
    # a zero edge that is the only way in, next to a longer positive edge
    got = ot.sssp(3, _arr([0, 0, 1]), _arr([2, 1, 2]), np.array([4.0, 1.5, 0.0]), 0)
    assert got.tolist() == [0.0, 1.5, 1.5]


def test_sssp_self_loops_are_ignored():
    s, d = _arr([0, 0, 1, 1]), _arr([0, 1, 1, 2])
    w = np.array([0.0, 2.0, 0.0, 3.0])
    assert ot.sssp(3, s, d, w, 0).tolist() == [0.0, 2.0, 5.0]
    assert ot.sssp(*_single_loop(), np.array([0.0, 3.0]), 0).tolist() == [0.0]


def test_sssp_known_values():
    n, s, d = _path()
    w = np.full(len(s), 0.5)
    np.testing.assert_array_equal(ot.sssp(n, s, d, w, 0), 0.5 * np.arange(n))
    got = ot.sssp(n, s, d, w, 150)
    assert np.all(np.isinf(got[:150])) and np.array_equal(got[150:], 0.5 * np.arange(50))
    n, s, d = _star_both()
    w = np.arange(1, len(s) + 1, dtype=np.float64)  # out-edge to leaf i: i; in-edge: 100 + i
    got = ot.sssp(n, s, d, w, 3)
    assert got[0] == 103.0 and got[3] == 0.0 and got[1] == 104.0 and got[100] == 203.0
    got = ot.sssp(*_isolated_only(), np.zeros(0), 2)
    assert got.tolist() == [np.inf] * 2 + [0.0] + [np.inf] * 6
    assert ot.sssp(*_single(), np.zeros(0), 0).tolist() == [0.0]


@pytest.mark.parametrize("bad", [-1.0, -0.0001, np.nan, np.inf, -np.inf])
def test_sssp_rejects_invalid_weights(bad):
    n, s, d = _path(5)
    w = np.ones(len(s))
    w[2] = bad
    with pytest.raises(ValueError):
        ot.sssp(n, s, d, w, 0)
    with pytest.raises(ValueError):
        ot.multi_sssp(n, s, d, w, [0, 1])


def test_sssp_negative_zero_is_a_valid_weight():
    n, s, d = _path(3)
    assert ot.sssp(n, s, d, np.array([-0.0, 1.0]), 0).tolist() == [0.0, 0.0, 1.0]


def test_sssp_weight_length_must_match():
    n, s, d = _path(5)
    with pytest.raises(ValueError):
        ot.sssp(n, s, d, np.ones(3), 0)


@shape_names
def test_multi_sssp_is_stacked_sssp(shape):
    n, s, d = SHAPES[shape]()
    w = _weights_for(len(s), seed=3)
    sources = _sources_for(n, seed=3) + [n - 1]
    got = ot.multi_sssp(n, s, d, w, sources)
    assert got.shape == (n, len(sources)) and got.dtype == np.float64
    ref = np.stack([ot.sssp(n, s, d, w, x) for x in sources], axis=1)
    np.testing.assert_array_equal(got, ref)
    assert ot.multi_sssp(n, s, d, w, []).shape == (n, 0)


def test_unweighted_sssp_equals_bfs():
    for name in ["path", "star_both", "pieces", "random0", "random1", "dense0"]:
        n, s, d = SHAPES[name]()
        for source in _sources_for(n):
            hops = ot.bfs(n, s, d, source)
            dist = ot.sssp(n, s, d, np.ones(len(s)), source)
            np.testing.assert_array_equal(np.where(hops == UNREACHED, np.inf, hops), dist)


# ----------------------------------------------------------------------------- predecessors


def _nx_bfs_tree(G, n, source):
    pred = np.full(n, -1, dtype=np.int64)
    for v, p in nx.bfs_predecessors(G, source):
        pred[v] = p
    return pred


@shape_names
def test_predecessor_check_accepts_networkx_bfs_tree(shape):
    n, s, d = SHAPES[shape]()
    G = _digraph(n, s, d)
    for source in _sources_for(n):
        dist = ot.bfs(n, s, d, source)
        pred = _nx_bfs_tree(G, n, source)
        ot.check_predecessors(n, s, d, dist, pred, source)
        # the kernel's int32 outputs (2**31 - 1 = int32 max when unreachable) pass as well
        ot.check_predecessors(n, s, d, dist.astype(np.int32), pred.astype(np.int32), source)


@pytest.mark.parametrize("seed", SEEDS)
def test_predecessor_check_accepts_any_bfs_parent(seed):
    n, s, d = _random_dense(seed)
    rng = np.random.default_rng(seed)
    source = int(rng.integers(0, n))
    dist = ot.bfs(n, s, d, source)
    pred = np.full(n, -1, dtype=np.int64)
    for v in range(n):
        if v != source and dist[v] != UNREACHED:
            cands = sorted({u for u, x in zip(s.tolist(), d.tolist())
                            if x == v and dist[u] == dist[v] - 1})
            pred[v] = cands[rng.integers(0, len(cands))]
    ot.check_predecessors(n, s, d, dist, pred, source)


def _best_source(n, s, d):
    """The vertex from which bfs reaches the most vertices (so that the checks have work)."""
    return int(np.argmax([(ot.bfs(n, s, d, x) != UNREACHED).sum() for x in range(n)]))


def _is_valid_single_change(n, dist, pred, v, u, source, edge_w, weighted, rtol=1e-5):
    """Brute-force expectation for the tree ``pred`` with pred[v] replaced by u."""
    if u == -1 or u == v or (u, v) not in edge_w:
        return False
    if weighted:
        if abs(dist[u] + edge_w[(u, v)] - dist[v]) > rtol * abs(dist[v]):
            return False
    elif dist[u] + 1 != dist[v]:
        return False
    x = u  # does u's chain in the (valid) tree pass through v? then the change closes a cycle
    while x != source:
        if x == v:
            return False
        x = pred[x]
    return True


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_predecessor_check_agrees_with_brute_force_bfs(seed):
    """Every single-vertex change of a valid BFS tree is accepted iff it is still valid."""
    n, s, d = _random(seed, n=25, m=70)
    G = _digraph(n, s, d)
    source = _best_source(n, s, d)
    dist = ot.bfs(n, s, d, source)
    tree = _nx_bfs_tree(G, n, source)
    edge_w = {(u, v): 1.0 for u, v in zip(s.tolist(), d.tolist()) if u != v}
    reach = [v for v in range(n) if v != source and dist[v] != UNREACHED]
    assert len(reach) > 5
    for v in reach:
        for u in range(-1, n):
            pred = tree.copy()
            pred[v] = u
            expect = _is_valid_single_change(n, dist, tree, v, u, source, edge_w, weighted=False)
            try:
                ot.check_predecessors(n, s, d, dist, pred, source)
                ok = True
            except AssertionError:
                ok = False
            assert ok == expect, (v, u)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_predecessor_check_agrees_with_brute_force_sssp(seed):
    """Same for sssp, with zero-weight edges (where a tight change can close a cycle)."""
    n, s, d = _random(seed, n=25, m=110)
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 2, len(s)) * 1.5  # half zeros, many ties
    source = _best_source(n, s, d)
    dist = ot.sssp(n, s, d, w, source)
    nxpred, _ = nx.dijkstra_predecessor_and_distance(_multidigraph(n, s, d, w), source)
    tree = np.full(n, -1, dtype=np.int64)
    for v, ps in nxpred.items():
        if ps:
            tree[v] = ps[0]  # the first is the one set when v's distance became final: acyclic
    tree[source] = -1  # networkx lists zero-weight edges back into the source as its predecessors
    ot.check_predecessors(n, s, d, dist, tree, source, weights=w)
    edge_w = {}
    for u, v, x in zip(s.tolist(), d.tolist(), w.tolist()):
        if u != v:
            edge_w[(u, v)] = min(x, edge_w.get((u, v), np.inf))
    reach = [v for v in range(n) if v != source and np.isfinite(dist[v])]
    assert len(reach) > 5
    accepted = tight_cyclic = 0
    for v in reach:
        for u in range(-1, n):
            pred = tree.copy()
            pred[v] = u
            expect = _is_valid_single_change(n, dist, tree, v, u, source, edge_w, weighted=True)
            try:
                ot.check_predecessors(n, s, d, dist, pred, source, weights=w)
                ok = True
            except AssertionError:
                ok = False
            assert ok == expect, (v, u)
            accepted += ok
            tight = u not in (-1, v) and (u, v) in edge_w and dist[u] + edge_w[(u, v)] == dist[v]
            tight_cyclic += tight and not ok
    assert accepted > len(reach)  # alternative tight parents were seen and accepted
    assert tight_cyclic > 0  # and tight changes that close a zero-weight cycle were rejected


def _small_bfs_case():
    # 0->1, 0->2, 1->3, 2->3, 3->4, 1->2 (same level), 4->1 (back edge), 2->5; 6 isolated
    s = _arr([0, 0, 1, 2, 3, 1, 4, 2])
    d = _arr([1, 2, 3, 3, 4, 2, 1, 5])
    n = 7
    dist = ot.bfs(n, s, d, 0)
    assert dist.tolist() == [0, 1, 1, 2, 3, 2, UNREACHED]
    return n, s, d, dist, _arr([-1, 0, 0, 1, 3, 2, -1])


def test_predecessor_check_accepts_alternative_bfs_parent():
    n, s, d, dist, pred = _small_bfs_case()
    ot.check_predecessors(n, s, d, dist, pred, 0)
    pred[3] = 2  # the other parent at distance 1
    ot.check_predecessors(n, s, d, dist, pred, 0)


@pytest.mark.parametrize("v, u, match", [
    (2, 1, "distance"),        # wrong parent: edge 1 -> 2 exists but at the same level
    (1, 4, "distance"),        # wrong parent: a back edge 4 -> 1
    (4, 5, "no edge"),         # non-edge parent at the right distance
    (4, 2, "no edge"),         # non-edge parent at a wrong distance
    (0, 4, "source"),          # source with a parent
    (0, 1, "source"),
    (6, 0, "unreachable"),     # unreachable vertex with a parent
    (3, -1, "predecessor -1"),  # reachable vertex without a parent
    (3, 7, "outside"),         # out of range
    (3, -5, "outside"),
    (3, 3, "own predecessor"),
])
def test_predecessor_check_rejects_corrupted_bfs_tree(v, u, match):
    n, s, d, dist, pred = _small_bfs_case()
    pred[v] = u
    with pytest.raises(AssertionError, match=match):
        ot.check_predecessors(n, s, d, dist, pred, 0)


@pytest.mark.parametrize("seed", SEEDS)
def test_predecessor_check_rejects_corrupted_networkx_tree(seed):
    n, s, d = _random(seed)
    G = _digraph(n, s, d)
    src0 = _best_source(n, s, d)
    dist = ot.bfs(n, s, d, src0)
    tree = _nx_bfs_tree(G, n, src0)
    edges = set(zip(s.tolist(), d.tolist()))
    reach = [v for v in range(n) if v != src0 and dist[v] != UNREACHED]
    rng = np.random.default_rng(seed)
    v = reach[rng.integers(0, len(reach))]
    non_edge = [u for u in range(n) if (u, v) not in edges]
    wrong = [u for u in range(n) if (u, v) in edges and dist[u] + 1 != dist[v] and u != v]
    for u, match in [(non_edge[0], "no edge"), (rng.choice(non_edge), "no edge|distance")] + \
            ([(wrong[0], "distance|unreachable")] if wrong else []):
        pred = tree.copy()
        pred[v] = u
        with pytest.raises(AssertionError, match=match):
            ot.check_predecessors(n, s, d, dist, pred, src0)
    pred = tree.copy()
    pred[src0] = reach[0]
    with pytest.raises(AssertionError, match="source"):
        ot.check_predecessors(n, s, d, dist, pred, src0)


def test_predecessor_check_rejects_wrong_distances():
    n, s, d, dist, pred = _small_bfs_case()
    bad = dist.copy()
    bad[0] = 1
    with pytest.raises(AssertionError, match="source"):
        ot.check_predecessors(n, s, d, bad, pred, 0)
    bad = dist.copy()
    bad[4] = 4
    with pytest.raises(AssertionError, match="distance"):
        ot.check_predecessors(n, s, d, bad, pred, 0)
    with pytest.raises(AssertionError, match="integer"):
        ot.check_predecessors(n, s, d, dist.astype(float), pred, 0)


def test_predecessor_check_sssp_parallel_edges_and_tolerance():
    s, d = _arr([0, 0, 1, 1, 0]), _arr([1, 1, 2, 2, 2])
    w = np.array([5.0, 2.0, 0.1, 3.0, 2.1000001])
    dist = ot.sssp(3, s, d, w, 0)
    assert dist[1] == 2.0
    pred = _arr([-1, 0, 1])
    ot.check_predecessors(3, s, d, dist, pred, 0, weights=w)
    # 0 -> 2 (2.1000001) is tight within rtol 1e-5 of 2.1: passes; not within 1e-9
    ot.check_predecessors(3, s, d, dist, _arr([-1, 0, 0]), 0, weights=w)
    with pytest.raises(AssertionError, match="not tight"):
        ot.check_predecessors(3, s, d, dist, _arr([-1, 0, 0]), 0, weights=w, rtol=1e-9)
    # float32 distances as the kernel returns them pass
    ot.check_predecessors(3, s, d, dist.astype(np.float32), pred, 0, weights=w)
    # a distance that only the larger parallel weight would explain is rejected (min weight is used)
    with pytest.raises(AssertionError, match="not tight"):
        ot.check_predecessors(3, s, d, np.array([0.0, 5.0, 5.1]), pred, 0, weights=w)
    # a distance 1e-3 off is rejected
    with pytest.raises(AssertionError, match="not tight"):
        ot.check_predecessors(3, s, d, dist * np.array([1, 1, 1.001]), pred, 0, weights=w)
    # unreachable is inf, and then -1
    dist2 = ot.sssp(4, s, d, w, 0)
    assert dist2[3] == np.inf
    ot.check_predecessors(4, s, d, dist2, _arr([-1, 0, 1, -1]), 0, weights=w)
    with pytest.raises(AssertionError, match="unreachable"):
        ot.check_predecessors(4, s, d, dist2, _arr([-1, 0, 1, 2]), 0, weights=w)
    with pytest.raises(AssertionError, match="NaN"):
        ot.check_predecessors(4, s, d, np.array([0, 2, 2.1, np.nan]), _arr([-1, 0, 1, -1]), 0,
                              weights=w)


def test_predecessor_check_sssp_zero_weight_cycle_and_loop():
    # 0 -1-> 1, 1 -0-> 2, 2 -0-> 1, 2 -0-> 2 (zero self-loop)
    s, d = _arr([0, 1, 2, 2]), _arr([1, 2, 1, 2])
    w = np.array([1.0, 0.0, 0.0, 0.0])
    dist = ot.sssp(3, s, d, w, 0)
    assert dist.tolist() == [0.0, 1.0, 1.0]
    ot.check_predecessors(3, s, d, dist, _arr([-1, 0, 1]), 0, weights=w)
    with pytest.raises(AssertionError, match="cycle"):
        ot.check_predecessors(3, s, d, dist, _arr([-1, 2, 1]), 0, weights=w)
    with pytest.raises(AssertionError, match="own predecessor"):
        ot.check_predecessors(3, s, d, dist, _arr([-1, 0, 2]), 0, weights=w)
    with pytest.raises(AssertionError, match="not tight"):
        ot.check_predecessors(3, s, d, np.array([0.0, 1.0, 1.5]), _arr([-1, 0, 1]), 0, weights=w)


def test_predecessor_check_alternative_sssp_parents():
    # diamond 0->1->3, 0->2->3 with equal lengths: either parent of 3 passes
    s, d = _arr([0, 0, 1, 2]), _arr([1, 2, 3, 3])
    w = np.array([1.0, 2.0, 2.0, 1.0])
    dist = ot.sssp(4, s, d, w, 0)
    ot.check_predecessors(4, s, d, dist, _arr([-1, 0, 0, 1]), 0, weights=w)
    ot.check_predecessors(4, s, d, dist, _arr([-1, 0, 0, 2]), 0, weights=w)


def test_predecessor_check_multi_source():
    n, s, d = _pieces()
    sources = [0, 4, 12, 7]
    dist = ot.multi_bfs(n, s, d, sources)
    G = _digraph(n, s, d)
    pred = np.stack([_nx_bfs_tree(G, n, x) for x in sources], axis=1)
    ot.check_predecessors(n, s, d, dist, pred, sources)
    bad = pred.copy()
    bad[6, 1] = 4  # vertex 6 is at distance 2 from source 4; 4 -> 6 is no edge
    with pytest.raises(AssertionError, match="column 1"):
        ot.check_predecessors(n, s, d, dist, bad, sources)
    with pytest.raises(AssertionError, match="shape"):
        ot.check_predecessors(n, s, d, dist[:, :2], pred[:, :2], sources)
    # one source given as a list takes 1-D arrays too
    ot.check_predecessors(n, s, d, dist[:, 2], pred[:, 2], [12])
    w = np.ones(len(s))
    ot.check_predecessors(n, s, d, ot.multi_sssp(n, s, d, w, sources), pred, sources, weights=w)


# ----------------------------------------------------------------------------- wcc


def _nx_wcc_labels(n, s, d, ids):
    ref = np.empty(n, dtype=ids.dtype)
    for comp in nx.weakly_connected_components(_digraph(n, s, d)):
        comp = list(comp)
        ref[comp] = ids[comp].min()
    return ref


@shape_names
def test_wcc_matches_networkx_with_min_original_id(shape):
    n, s, d = SHAPES[shape]()
    ids = 10 * (n - 1 - np.arange(n, dtype=np.int64)) + 7  # non-contiguous, reversed
    got = ot.weakly_connected_components(n, s, d, ids)
    assert got.dtype == ids.dtype and got.shape == (n,)
    np.testing.assert_array_equal(got, _nx_wcc_labels(n, s, d, ids))


@pytest.mark.parametrize("seed", SEEDS)
def test_wcc_with_shuffled_large_ids(seed):
    n, s, d = _random(seed, n=60, m=45)  # sparse: many components
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(-(10**12), 10**12, 10**9))[:n]
    got = ot.weakly_connected_components(n, s, d, ids)
    np.testing.assert_array_equal(got, _nx_wcc_labels(n, s, d, ids))
    # same label iff weakly connected; every label is an id of its own component
    where = {x: i for i, x in enumerate(ids.tolist())}
    assert all(got[where[lab]] == lab for lab in got.tolist())


def test_wcc_known_values():
    n, s, d = _pieces()
    ids = 10 * (n - 1 - np.arange(n)) + 7
    got = ot.weakly_connected_components(n, s, d, ids)
    # components {0..3}, {4,5,6}, {7}, {8,9}, {10}, {11}, {12..15}: min id = id of the largest index
    expect = {0: 3, 4: 6, 7: 7, 8: 9, 10: 10, 11: 11, 12: 15}
    for first, last in expect.items():
        assert got[first] == ids[last]
    n, s, d = _path_reversed()
    ids = np.arange(n) * 3 + 1
    assert np.all(ot.weakly_connected_components(n, s, d, ids) == 1)
    n, s, d = _isolated_only()
    ids = np.arange(n)[::-1] * 10 + 7
    np.testing.assert_array_equal(ot.weakly_connected_components(n, s, d, ids), ids)
    assert ot.weakly_connected_components(*_single(), np.array([42])).tolist() == [42]
    with pytest.raises(ValueError):
        ot.weakly_connected_components(3, _arr([0]), _arr([1]), np.arange(2))


# ----------------------------------------------------------------------------- core number / k-core


@shape_names
def test_core_number_matches_networkx(shape):
    n, s, d = SHAPES[shape]()
    got = ot.core_number(n, s, d)
    assert got.dtype == np.int64 and got.shape == (n,)
    ref = nx.core_number(_simple_undirected(n, s, d))
    np.testing.assert_array_equal(got, [ref[v] for v in range(n)])


def test_core_number_known_values():
    n, s, d = _clique_with_tail(8)
    assert ot.core_number(n, s, d).tolist() == [7] * 8 + [1, 1, 0]
    n, s, d = _star_both()  # both directions merge: still a star
    assert ot.core_number(n, s, d).tolist() == [1] * n
    n, s, d = _path()
    assert ot.core_number(n, s, d).tolist() == [1] * n
    assert ot.core_number(*_single_loop()).tolist() == [0]  # the self-loop is removed
    assert ot.core_number(*_isolated_only()).tolist() == [0] * 9
    n, s, d = _loops_and_multi()  # simple view: triangle-free path 0-1-2-3-4-0 cycle; 5, 6 isolated
    assert ot.core_number(n, s, d).tolist() == [2, 2, 2, 2, 2, 0, 0]


@shape_names
def test_k_core_matches_networkx(shape):
    n, s, d = SHAPES[shape]()
    H = _simple_undirected(n, s, d)
    core = ot.core_number(n, s, d)
    for k in range(0, int(core.max(initial=0)) + 3):
        got = ot.k_core(n, s, d, k)
        assert got.dtype == bool and got.shape == (n,)
        ref = np.zeros(n, dtype=bool)
        ref[list(nx.k_core(H, k).nodes)] = True
        np.testing.assert_array_equal(got, ref, err_msg=f"k = {k}")
        np.testing.assert_array_equal(got, core >= k, err_msg=f"k = {k}")
