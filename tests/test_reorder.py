"""Graph.reorder: a permuted internal numbering holds the same graph, and every algorithm gives
the same result per original id."""

import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from graphs import build, random_directed
from onyx_rapids import Graph, device


def _edges(g):
    """Sorted (src id, dst id, weights...) rows of the stored edges, in original ids."""
    ids = device.to_host(g.vertices)
    src = ids[device.to_host(g.edge_sources).astype(np.int64)]
    dst = ids[device.to_host(g.out_indices).astype(np.int64)]
    cols = [src, dst]
    if g.edge_weights is not None:
        cols += list(device.to_host(g.edge_weights).T)
    rows = np.stack(cols, axis=1)
    return rows[np.lexsort(rows.T[::-1])]


def _csc_matches_csr(g):
    in_off = device.to_host(g.in_offsets).astype(np.int64)
    heads = np.repeat(np.arange(g.n), np.diff(in_off))
    eid = device.to_host(g.in_edge_ids).astype(np.int64)
    src = device.to_host(g.edge_sources).astype(np.int64)
    dst = device.to_host(g.out_indices).astype(np.int64)
    np.testing.assert_array_equal(dst[eid], heads)
    np.testing.assert_array_equal(src[eid], device.to_host(g.in_indices).astype(np.int64))


GRAPHS = {
    "directed weighted": lambda: build("directed", seed=4, weights=2),
    "undirected simple": lambda: Graph.from_edgelist(
        pd.DataFrame({"src": [5, 5, 5, 9, 7, 7], "dst": [9, 7, 2, 2, 2, 7]}), directed=False),
    "undirected multigraph": lambda: build("undirected", seed=3),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_degree_order_is_the_same_graph_hubs_first(name):
    g = GRAPHS[name]()
    h = g.reorder("degree")
    assert (h.vertex_order, h.n, h.m, h.directed, h.multigraph) == \
        ("degree", g.n, g.m, g.directed, g.multigraph)
    assert h.summary()["vertex_order"] == "degree"
    total = device.to_host(h.out_degree).astype(int) + device.to_host(h.in_degree).astype(int)
    assert (np.diff(total) <= 0).all() and total[0] > total[-1]
    np.testing.assert_array_equal(_edges(h), _edges(g))
    _csc_matches_csr(h)
    ids = device.to_host(g.vertices)
    np.testing.assert_array_equal(device.to_host(h.vertices)[device.to_host(h.to_internal(ids))],
                                  ids)
    if not g.directed:  # each edge's reverse is its reverse
        rev = device.to_host(h.reverse_edge).astype(np.int64)
        src, dst = device.to_host(h.edge_sources), device.to_host(h.out_indices)
        np.testing.assert_array_equal(src[rev], dst)
        np.testing.assert_array_equal(dst[rev], src)
    back = h.reorder("id")
    assert back.vertex_order == "id"
    for a in ("vertices", "out_offsets", "out_indices", "in_offsets", "in_indices"):
        np.testing.assert_array_equal(device.to_host(getattr(back, a)),
                                      device.to_host(getattr(g, a)))
    assert g.reorder("id") is g and h.reorder("degree") is h


def _by_vertex(frame, column):
    df = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    return df.set_index("vertex")[column].sort_index()


def test_algorithms_agree_by_id_on_the_reordered_graph():
    g = Graph.from_edgelist(random_directed(n=20, m=70, seed=9, weights=1), "src", "dst",
                            weight="w0", directed=True)
    h = g.reorder()
    ids = device.to_host(g.vertices)
    source = int(ids[3])
    for call, column, exact in [
            (lambda x: onyx.pagerank(x, alpha=0.6), "pagerank", False),  # alpha: CI time
            (lambda x: onyx.personalized_pagerank(x, [source], alpha=0.6), "ppr_0", False),
            (lambda x: onyx.bfs(x, source=source), "distance", True),
            (lambda x: onyx.bfs(x, source=source), "predecessor", "valid"),
            (lambda x: onyx.sssp(x, source=source), "distance", False),
            (lambda x: onyx.weakly_connected_components(x), "labels", "partition")]:
        a, b = _by_vertex(call(g), column), _by_vertex(call(h), column)
        assert list(a.index) == list(b.index) == sorted(ids.tolist())
        if exact == "partition":  # the same groups, whatever the labels
            pairs = set(zip(a.tolist(), b.tolist()))
            assert len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))
        elif exact == "valid":  # one BFS parent per vertex, each a level closer
            dist = _by_vertex(call(h), "distance")
            for v, p in b.dropna().items():
                assert dist[int(p)] == dist[v] - 1
            assert a.isna().tolist() == b.isna().tolist()
        elif exact:
            np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
        else:
            np.testing.assert_allclose(a.to_numpy(np.float64), b.to_numpy(np.float64),
                                       rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("method", ["hook", "propagate"])
def test_component_labels_stay_the_smallest_id(method):
    # the hub 30 comes first in degree order; the label is still the component's smallest id
    g = Graph.from_edgelist(pd.DataFrame({"src": [10, 20, 30, 30, 7], "dst": [30, 30, 40, 50, 8]}),
                            directed=False)
    h = g.reorder()
    assert device.to_host(h.vertices)[0] == 30
    for graph in (g, h):
        labels = _by_vertex(onyx.weakly_connected_components(graph, method=method), "labels")
        assert labels.to_dict() == {7: 7, 8: 7, 10: 10, 20: 10, 30: 10, 40: 10, 50: 10}


def test_als_defaults_are_the_same_per_id():
    # bipartite in structure (no from_bipartite: those graphs keep their sides' order); the
    # default init and the side colouring follow ids, not internal positions
    g = Graph.from_edgelist(pd.DataFrame({"u": [1, 1, 2, 3, 3, 3], "i": [10, 11, 10, 10, 11, 12],
                                          "r": [4.0, 2.0, 5.0, 3.0, 1.0, 4.0]}),
                            "u", "i", weight="r", directed=False)
    h = g.reorder()
    assert device.to_host(h.vertices).tolist()[:2] == [3, 10]
    a, b = onyx.als(g, k=2, iterations=3), onyx.als(h, k=2, iterations=3)
    for col in ("lf_0", "lf_1"):
        np.testing.assert_allclose(_by_vertex(a, col).to_numpy(), _by_vertex(b, col).to_numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_host_placed_reordered_views_find_ids():
    g = Graph.from_edgelist(pd.DataFrame({"src": [10, 20, 30, 30, 30, 40],
                                          "dst": [30, 30, 10, 20, 40, 50]}), directed=False)
    view = g.reorder().to("host").simple_undirected()
    assert view.vertex_order == "degree" and view.summary()["vertex_order"] == "degree"
    assert device.to_host(view.vertices)[view.to_internal(10)] == 10


def test_features_keyed_by_id_land_on_the_same_vertices():
    g = build("undirected", seed=5)
    h = g.reorder()
    ids = device.to_host(g.vertices)
    feats = pd.DataFrame({"vertex": ids[::-1], "f0": np.arange(g.n, dtype=np.float32)[::-1],
                          "f1": np.linspace(0, 1, g.n, dtype=np.float32)[::-1]})
    a = onyx.feature_propagation(g, feats, iterations=3)
    b = onyx.feature_propagation(h, feats, iterations=3)
    for col in ("h_0", "h_1"):
        np.testing.assert_allclose(_by_vertex(a, col).to_numpy(), _by_vertex(b, col).to_numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_bad_reorders_are_named():
    g = build("directed")
    with pytest.raises(ValueError, match="order='random'"):
        g.reorder("random")
    bip = Graph.from_bipartite(pd.DataFrame({"u": [1, 2], "i": [1, 1], "r": [1.0, 2.0]}),
                               "u", "i", weight="r")
    with pytest.raises(ValueError, match="bipartite"):
        bip.reorder()
    with pytest.raises(ValueError, match="host memory"):
        g.to("host").reorder()


def test_bfs_order_numbers_levels_from_the_hub():
    """A shuffled 6 x 6 grid plus two isolated vertices: the bfs order is breadth-first from
    the largest degree, levels contiguous, each level by its earliest parent; the same graph;
    bfs and sssp agree by id."""
    rng = np.random.default_rng(2)
    label = rng.permutation(36) * 3 + 100  # ids that carry no locality
    cells = np.arange(36).reshape(6, 6)
    pairs = np.r_[np.c_[cells[:, :-1].ravel(), cells[:, 1:].ravel()],
                  np.c_[cells[:-1].ravel(), cells[1:].ravel()]]
    g = Graph.from_edgelist(pd.DataFrame({"src": label[pairs[:, 0]], "dst": label[pairs[:, 1]]}),
                            directed=False, vertices=[1, 2])
    h = g.reorder("bfs")
    assert h.vertex_order == "bfs" and h.summary()["vertex_order"] == "bfs"
    np.testing.assert_array_equal(_edges(h), _edges(g))
    _csc_matches_csr(h)
    ids = device.to_host(h.vertices)
    degree = device.to_host(h.out_degree)
    src, dst = device.to_host(h.edge_sources), device.to_host(h.out_indices)
    level = np.full(h.n, -1)
    level[0] = 0
    for step in range(12):  # levels by a plain BFS in h's numbering
        reach = dst[np.isin(src, np.flatnonzero(level == step))]
        level[reach[level[reach] < 0]] = step + 1
    assert degree[0] == degree.max() and set(ids[-2:]) == {1, 2}  # unreached last
    assert (np.diff(level[:36]) >= 0).all()  # levels contiguous, in order
    parent = [min(src[(dst == v) & (level[src] == level[v] - 1)]) for v in range(1, 36)]
    assert (np.diff(parent) >= 0).all()  # each level by its earliest parent
    a = _by_vertex(onyx.bfs(g, source=int(ids[5])), "distance")
    b = _by_vertex(onyx.bfs(h, source=int(ids[5])), "distance")
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
