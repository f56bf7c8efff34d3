"""Graffix's shared-memory iteration of well-connected subgraphs (issue 37, knob
``shared_clustering``, :mod:`onyx_rapids.algorithms._shared`): the clustering coefficients and
blocks against NumPy, PageRank against the float64 oracle, the rounds saving outer iterations
on a clustered graph, results in original ids, refusals."""

import itertools

import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import assert_refused, csr_edges, pandas
import onyx_rapids as onyx
from onyx_rapids import Approximation, device
from onyx_rapids.algorithms import _shared
from onyx_rapids.construction import device as device_build

ALPHA, TOL = 0.85, 1e-6


def knob(t, rounds=None):
    return Approximation(shared_clustering=t, shared_rounds=rounds)



def reference_clustering(g):
    """LCC of every vertex of g's simple undirected view, by counting neighbour pairs."""
    src, dst = csr_edges(g)
    near = [set() for _ in range(g.n)]
    for u, v in zip(src, dst):
        if u != v:
            near[u].add(v)
            near[v].add(u)
    return np.array([sum(b in near[a] for a, b in itertools.combinations(sorted(s), 2))
                     / (len(s) * (len(s) - 1) / 2) if len(s) > 1 else 0.0 for s in near])


@pytest.fixture(scope="module")
def clustered():
    """8 cliques of 6 in a ring (each edge stored both ways, weighted) and a one-way tail of 2
    whose end is dangling; string ids."""
    rng = np.random.default_rng(37)
    pairs = [(6 * q + i, 6 * q + j) for q in range(8)
             for i, j in itertools.combinations(range(6), 2)]
    pairs += [(6 * q, 6 * ((q + 1) % 8) + 3) for q in range(8)]
    src, dst = zip(*(pairs + [(b, a) for a, b in pairs] + [(0, 48), (48, 49)]))
    ids = [f"v{x:02d}" for x in range(50)]
    frame = pd.DataFrame({"src": [ids[x] for x in src], "dst": [ids[x] for x in dst],
                          "w": rng.uniform(0.5, 2.0, len(src))})
    return onyx.Graph.from_edgelist(frame, weight="w", directed=True, vertices=ids)


def oracle(g):
    src, dst = csr_edges(g)
    weights = None if g.edge_weights is None else device.to_host(g.edge_weights[:, 0])
    return oracles.pagerank(g.n, src, dst, weights=weights, alpha=ALPHA)


def test_clustering_is_the_reference_on_triangles_and_a_clique():
    # a triangle (one edge both ways), a bridge, K5 with a self-loop, a leaf
    edges = [(0, 1), (1, 0), (1, 2), (2, 0), (2, 3), (3, 4), (5, 5), (8, 9)]
    edges += list(itertools.combinations(range(4, 9), 2))
    g = onyx.Graph.from_edgelist(pd.DataFrame(edges, columns=["src", "dst"]), directed=True)
    lcc = device.to_host(_shared.clustering(g.simple_undirected()))
    expected = reference_clustering(g)
    np.testing.assert_allclose(lcc, expected)
    assert expected[[0, 1, 5, 3, 9]].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]  # both kinds met


def test_blocks_follow_the_rule(clustered):
    g, t, size = clustered, 0.5, 8
    s, ms = _shared.blocks(g, t, g.weights_for(None, name="t"), "w", size=size)
    lcc = reference_clustering(g)
    order = device.to_host(device_build.bfs_order(g.simple_undirected()))
    members = [v for v in order if lcc[v] >= t]
    assert 8 < len(members) < g.n and ms > 0
    assert device.to_host(s.members).tolist() == members
    assert device.to_host(s.starts).tolist() == list(range(0, len(members), size)) + [len(members)]
    chunk = {v: i // size for i, v in enumerate(members)}
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights[:, 0])
    outw = np.bincount(src, weights=w, minlength=g.n)
    offsets = device.to_host(s.offsets)
    local, share = device.to_host(s.local), device.to_host(s.share)
    for i, u in enumerate(members):
        block = members[chunk[u] * size:(chunk[u] + 1) * size]
        want = sorted((block.index(v), w[e] / outw[v]) for e, (v, x) in enumerate(zip(src, dst))
                      if x == u and chunk.get(v) == chunk[u])
        got = sorted(zip(local[offsets[i]:offsets[i + 1]].tolist(),
                         share[offsets[i]:offsets[i + 1]].tolist()))
        assert [a for a, _ in got] == [a for a, _ in want]
        np.testing.assert_allclose([b for _, b in got], [b for _, b in want], rtol=1e-6)
    assert int(offsets[-1]) == sum(chunk.get(v, -1) == chunk.get(x, -2)
                                   for v, x in zip(src, dst))


def test_pagerank_reaches_the_oracle_and_rounds_save_pulls(clustered):
    g = clustered
    runs = {r: onyx.pagerank(g, alpha=ALPHA, tol=TOL, approximation=knob(0.5, r),
                             return_info=True) for r in (1, 4)}
    x = oracle(g)
    for df, info in runs.values():
        df = pandas(df)
        assert df["vertex"].tolist() == [f"v{i:02d}" for i in range(50)]
        np.testing.assert_allclose(df["pagerank"].to_numpy(), x, atol=2e-5)
        assert info.converged and info.estimate["l1_change"] < TOL
    info = runs[4][1]
    assert info.approximation == {"shared_clustering": 0.5, "shared_rounds": 4}
    assert info.estimate["shared_blocks"] == 1 and info.estimate["shared_edges"] > 100
    assert info.estimate["shared_build_ms"] == 0.0  # the first run built it, this one reused it
    assert info.estimate["outer_iterations"] == info.iterations
    assert info.iterations < runs[1][1].iterations


def test_no_qualifying_vertex_is_the_plain_jacobi_loop():
    n = 24  # every vertex's neighbours i +- 1, i +- 2: LCC 1/2
    pairs = [(i, (i + d) % n) for i in range(n) for d in (1, 2)]
    g = onyx.Graph.from_edgelist(pd.DataFrame(pairs, columns=["src", "dst"]))
    df, info = onyx.pagerank(g, alpha=ALPHA, tol=TOL, approximation=knob(0.6),
                             return_info=True)
    assert (info.estimate["shared_blocks"], info.estimate["shared_vertices"]) == (0, 0)
    np.testing.assert_allclose(pandas(df)["pagerank"].to_numpy(), oracle(g), atol=1e-5)
    assert _shared.blocks(g, 0.5)[0].members.shape[0] == n


@pytest.mark.parametrize("call, needle", [
    (lambda g: knob(-0.1), "shared_clustering must be a number in [0, 1], got -0.1"),
    (lambda g: knob(1.5), "shared_clustering must be a number in [0, 1], got 1.5"),
    (lambda g: Approximation(shared_rounds=2), "shared_rounds refines shared_clustering"),
    (lambda g: knob(0.5, 0), "shared_rounds must be a positive integer, got 0"),
    (lambda g: onyx.personalized_pagerank(g, [0], approximation=knob(0.5)),
     "personalized_pagerank does not support approximation shared_clustering=0.5"),
    (lambda g: onyx.pagerank(g, personalization={0: 1.0, 2: 1.0}, approximation=knob(0.5)),
     "shared_clustering=0.5 runs with the uniform teleport only"),
    (lambda g: onyx.pagerank(g, change_driven=True, approximation=knob(0.5)),
     "shared_clustering runs bulk pulls"),
    (lambda g: onyx.pagerank(g, approximation=Approximation(shared_clustering=0.5,
                                                            stop_top_k=2)),
     "shared_clustering runs its own loop, without stop_top_k"),
])
def test_refusals_name_the_knob(call, needle):
    assert_refused(call, [needle])
