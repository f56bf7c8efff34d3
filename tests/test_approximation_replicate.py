"""Graffix's vertex replication (issue 37, knob ``replicate_threshold``,
:mod:`onyx_rapids.algorithms._replicated`): the layout against the rule in NumPy, PageRank
against the float64 oracle at ``replicate_sync=1`` and stale but close above, results in
original ids, refusals."""

import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import assert_refused, csr_edges, pandas
import onyx_rapids as onyx
from onyx_rapids import Approximation, device
from onyx_rapids.algorithms import _replicated
from onyx_rapids.construction import device as device_build

ALPHA, TOL = 0.85, 1e-6
N = 80  # three chunks of 32 (the last one of 16)


def knob(t, sync=None):
    return Approximation(replicate_threshold=t, replicate_sync=sync)



@pytest.fixture(scope="module")
def graph():
    """80 vertices, directed, weighted, 4 random out-edges each; string ids."""
    rng = np.random.default_rng(5)
    src, dst = np.repeat(np.arange(N), 4), rng.integers(0, N, 4 * N)
    keep = src != dst
    frame = pd.DataFrame({"src": [f"v{x:02d}" for x in src[keep]],
                          "dst": [f"v{x:02d}" for x in dst[keep]],
                          "w": rng.uniform(0.5, 2.0, keep.sum())})
    return onyx.Graph.from_edgelist(frame, weight="w", directed=True, duplicates="first",
                                    vertices=[f"v{x:02d}" for x in range(N)])


def host(t):
    return {k: device.to_host(getattr(t, k)).astype(np.int64)
            for k in ("offsets", "sources", "target", "slot", "replica", "master")}


@pytest.mark.parametrize("threshold", [0.3, 0.6, 1.0])
def test_layout_follows_the_rule(graph, threshold):
    g = graph
    t, _ = _replicated.layout(g, threshold)
    a = host(t)
    src, dst = csr_edges(g)
    order = device.to_host(device_build.bfs_order(g.simple_undirected()))
    chunk = np.empty(g.n, np.int64)
    chunk[order] = np.arange(g.n) // 32
    degree = np.bincount(src, minlength=g.n)
    pairs, counts = np.unique(np.c_[src, chunk[dst]][chunk[src] != chunk[dst]], axis=0,
                              return_counts=True)
    rule = {(v, c) for (v, c), e in zip(pairs, counts) if e >= 2 and e / degree[v] >= threshold}
    # every vertex one master slot, each chunk's members consecutive in BFS order; its
    # replicas (the slots up to the next chunk's members) are the rule's pairs
    assert sorted(np.r_[a["slot"], a["replica"]]) == list(range(t.slots))
    slot = a["slot"]
    assert (np.diff(slot[order]) >= 1).all()
    assert all((np.diff(slot[order[c * 32:c * 32 + 32]]) == 1).all() for c in range(t.chunks))
    vertex_at = dict(zip(slot, range(g.n)))
    members = np.sort(slot)
    chunk_of = chunk[[vertex_at[s] for s in members[np.searchsorted(members, a["replica"]) - 1]]]
    made = {(vertex_at[m], c) for m, c in zip(a["master"], chunk_of)}
    assert made == rule and len(made) == t.replica.shape[0]
    assert 0 < len(rule) < len(pairs)
    # each edge v -> u reads v's replica in u's chunk exactly where the rule made one
    where = {(vertex_at[m], c): r for m, c, r in zip(a["master"], chunk_of, a["replica"])}
    reads = [where.get((v, chunk[u]), slot[v]) for v, u in zip(src, dst)]
    row = np.repeat(a["target"], np.diff(a["offsets"]))
    assert sorted(zip(row, a["sources"])) == sorted(zip(slot[dst], reads))
    assert t.replicated_edges == int((np.array(reads) != slot[src]).sum())


def test_sync_1_is_the_oracle(graph):
    g = graph
    df, info = onyx.pagerank(g, alpha=ALPHA, tol=TOL, approximation=knob(0.3),
                             return_info=True)
    src, dst = csr_edges(g)
    x = oracles.pagerank(g.n, src, dst, weights=device.to_host(g.edge_weights[:, 0]),
                         alpha=ALPHA)
    df = pandas(df)
    assert df["vertex"].tolist() == [f"v{i:02d}" for i in range(N)]  # a row per id
    np.testing.assert_allclose(df["pagerank"].to_numpy(), x, atol=1e-5)
    e = info.estimate
    assert info.approximation == {"replicate_threshold": 0.3} and info.converged
    assert e["replicas"] > 0 and e["replicated_edges"] >= 2 * e["replicas"]
    assert e["chunks"] == 3 and e["reconciles"] == info.iterations
    # the same kernels on the BFS-ordered graph, nothing replicated (the benchmark's baseline)
    rank, plain = _replicated.run(g, None, alpha=ALPHA, tol=TOL,
                                  weights=g.weights_for(None, name="t"))
    assert plain.estimate["replicas"] == plain.estimate["replicated_edges"] == 0
    np.testing.assert_allclose(device.to_host(rank), x, atol=1e-5)


def test_stale_replicas_stay_close(graph):
    (exact, _), (stale, info) = (onyx.pagerank(graph, alpha=ALPHA, tol=1e-4, return_info=True,
                                               approximation=knob(0.3, sync)) for sync in (1, 3))
    exact, stale = (pandas(df)["pagerank"].to_numpy() for df in (exact, stale))
    assert info.estimate["reconciles"] == info.iterations // 3
    assert abs(stale.sum() - 1.0) < 10 * 1e-4  # stale reads do not conserve the mass
    assert not np.array_equal(exact, stale) and np.abs(exact - stale).max() < 1e-3


@pytest.mark.parametrize("call, needle", [
    (lambda g: knob(0), "replicate_threshold must be a number in (0, 1], got 0"),
    (lambda g: knob(1.5), "replicate_threshold must be a number in (0, 1], got 1.5"),
    (lambda g: knob(0.5, 0), "replicate_sync must be a positive integer, got 0"),
    (lambda g: Approximation(replicate_sync=2), "replicate_sync refines replicate_threshold"),
    (lambda g: onyx.personalized_pagerank(g, sources=[0], approximation=knob(0.5)),
     "personalized_pagerank does not support approximation replicate_threshold=0.5"),
    (lambda g: onyx.pagerank(g, personalization={0: 1.0, 1: 1.0}, approximation=knob(0.5)),
     "replicate_threshold runs the uniform teleport only"),
    (lambda g: onyx.pagerank(g, change_driven=True, approximation=knob(0.5)),
     "replicate_threshold runs its own bulk pull iterations"),
])
def test_refusals_name_the_knob(call, needle):
    assert_refused(call, [needle])


def test_a_graph_of_one_chunk_has_nothing_to_replicate():
    g = onyx.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2, 3], "dst": [1, 2, 3, 0]}))
    df, info = onyx.pagerank(g, approximation=Approximation(replicate_threshold=0.1),
                             return_info=True)
    assert info.estimate["replicas"] == 0 and info.estimate["chunks"] == 1
    assert np.allclose(pandas(df)["pagerank"].to_numpy(), 0.25, atol=1e-6)
