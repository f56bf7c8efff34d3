"""The fused PageRank kernel (onyx_rapids.kernels.pagerank): every bin width, heavy vertices cut
into chunks, dangling and isolated vertices, weights (zero weights make a vertex dangling), a
personalization distribution, the stop rule, and its option checks."""

import warnings

import numpy as np
import pandas as pd
import pytest

import oracles
import oracles_learning
from graphs import build, csr_edges
from onyx_rapids import Graph, device, pagerank, personalized_pagerank
from onyx_rapids.kernels import pagerank as kernel


def _ranks(df):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df["pagerank"].to_numpy(dtype=np.float64)


def _skewed(seed=3, n=40, weighted=False):
    """In-degrees 30 and 20 (heavy below), 11, 6, 3, 2, 1 and random small ones: every bin;
    35..39 are isolated and 20..39 dangling; 7 has a doubled self-loop.  ``weighted``: weights
    in [0.1, 3), and 0 on vertex 5's out-edges (dangling by weight)."""
    rng = np.random.default_rng(seed)
    dst = np.r_[np.repeat([3, 0, 1, 2, 4, 5, 6], [30, 20, 11, 6, 3, 2, 1]),
                rng.integers(8, 30, 90), 7, 7]
    src = np.r_[rng.integers(0, 20, dst.size - 2), 7, 7]
    frame = pd.DataFrame({"src": src, "dst": dst})
    if not weighted:
        return Graph.from_edgelist(frame, "src", "dst", vertices=np.arange(n), directed=True)
    frame["w"] = np.where(src == 5, 0.0, rng.uniform(0.1, 3.0, src.size))
    return Graph.from_edgelist(frame, "src", "dst", weight="w", vertices=np.arange(n),
                               directed=True)


@pytest.fixture
def small_work(monkeypatch):
    """One in-edge per lane, a vertex of 12+ in-edges is heavy, chunks of 5 edges."""
    monkeypatch.setattr(kernel, "PER_LANE", 1)
    monkeypatch.setattr(kernel, "HEAVY", 12)
    monkeypatch.setattr(kernel, "CHUNK", 5)


def test_work_lists_cover_every_vertex_and_edge(small_work):
    g = _skewed()
    work = kernel.pull_work(g)
    degree = np.diff(device.to_host(g.in_offsets))
    order = device.to_host(work["order"])
    heavy = device.to_host(work["slot_vertex"])[:work["heavy"]]
    assert sorted(np.r_[order, heavy].tolist()) == list(range(g.n))
    assert (degree[heavy] >= 12).all() and (degree[order] < 12).all()
    bounds = device.to_host(work["bin_start"])
    units = device.to_host(work["bin_units"])
    for b in range(units.size):  # each light vertex's lanes: one edge each, up to 32
        members = order[bounds[b]:bounds[b + 1]]
        assert (np.minimum(degree[members], 32) <= units[b]).all()
        assert b == 0 or (degree[members] > units[b - 1]).all()
    assert len({int(units[b]) for b in range(units.size) if bounds[b + 1] > bounds[b]}) >= 4
    starts = device.to_host(work["chunk_start"])[:work["chunks"]]
    slots = device.to_host(work["chunk_slot"])[:work["chunks"]]
    offsets = device.to_host(g.in_offsets)
    for h, v in enumerate(heavy):  # a heavy vertex's chunks tile its in-edges
        mine = starts[slots == h]
        assert mine.tolist() == list(range(offsets[v], offsets[v + 1], 5))
        assert device.to_host(work["slot_chunks"])[h] == mine.size


@pytest.mark.parametrize("max_iter", [3, 100])
def test_fused_matches_float64_oracle_and_unfused(small_work, max_iter):
    g = _skewed()
    src, dst = csr_edges(g)
    tol = 1e-6 if max_iter == 100 else 1e-12
    alpha = 0.6 if max_iter == 100 else 0.85  # to convergence: a third of the iterations (CI)
    expected = oracles.pagerank(g.n, src, dst, alpha=alpha, tol=0 if max_iter == 3 else 1e-12,
                                max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fused, info = pagerank(g, alpha=alpha, tol=tol, max_iter=max_iter, return_info=True)
        unfused, plain = pagerank(g, alpha=alpha, tol=tol, max_iter=max_iter, fused=False,
                                  return_info=True)
    assert info["fused"] and not plain["fused"]
    assert info["iterations"] == plain["iterations"]
    assert info["converged"] == plain["converged"] == (max_iter == 100)
    assert np.abs(_ranks(fused) - expected).sum() <= (1e-5 if max_iter == 3 else 1e-4)
    assert np.abs(_ranks(fused) - _ranks(unfused)).sum() <= 1e-5


@pytest.mark.parametrize("max_iter", [3, 100])
def test_weighted_fused_matches_float64_oracle_and_unfused(small_work, max_iter):
    """A weighted graph's weights are used by default (as cuGraph), in the fused kernel too."""
    g = _skewed(weighted=True)
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0].astype(np.float64)
    assert (w[src == 5] == 0).all() and (src == 5).any()
    tol = 1e-6 if max_iter == 100 else 1e-12
    alpha = 0.6 if max_iter == 100 else 0.85  # to convergence: a third of the iterations (CI)
    expected = oracles.pagerank(g.n, src, dst, weights=w, alpha=alpha,
                                tol=0 if max_iter == 3 else 1e-12, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fused, info = pagerank(g, alpha=alpha, tol=tol, max_iter=max_iter, return_info=True)
        unfused, plain = pagerank(g, alpha=alpha, tol=tol, max_iter=max_iter, fused=False,
                                  return_info=True)
    assert info["fused"] and not plain["fused"] and info["iterations"] == plain["iterations"]
    assert np.abs(_ranks(fused) - expected).sum() <= (1e-5 if max_iter == 3 else 1e-4)
    assert np.abs(_ranks(fused) - _ranks(unfused)).sum() <= 1e-5
    unweighted = oracles.pagerank(g.n, src, dst, alpha=alpha, tol=1e-12)
    assert np.abs(expected - unweighted).sum() > 1e-2  # the weights matter here


@pytest.mark.parametrize("weighted", [False, True])
def test_personalization_distribution_is_fused(small_work, weighted):
    g = _skewed(weighted=weighted)
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0] if weighted else None
    t = np.zeros(g.n)
    t[[3, 25, 36]] = [2.0, 1.0, 1.0]  # heavy, dangling and isolated vertices
    person = pd.DataFrame({"vertex": [3, 25, 36], "value": [2.0, 1.0, 1.0]})
    # alpha 0.6: a third of the default's iterations (CI time)
    expected = oracles.pagerank(g.n, src, dst, weights=w, alpha=0.6, teleport=t / t.sum())
    fused, info = pagerank(g, alpha=0.6, personalization=person, tol=1e-7, return_info=True)
    unfused = pagerank(g, alpha=0.6, personalization=person, tol=1e-7, fused=False)
    assert info["fused"] and info["converged"]
    assert np.abs(_ranks(fused) - expected).sum() <= 1e-4
    assert np.abs(_ranks(fused) - _ranks(unfused)).sum() <= 1e-5


def test_fused_on_an_undirected_graph_at_default_sizes():
    g = build("undirected", seed=2)
    src, dst = csr_edges(g)
    df, info = pagerank(g, block_size=32, return_info=True)
    assert info["fused"] and info["converged"] and info["directions"] == ["pull"] * info["iterations"]
    assert np.abs(_ranks(df) - oracles.pagerank(g.n, src, dst)).sum() <= 1e-4


@pytest.mark.filterwarnings("ignore:.*did not converge:RuntimeWarning")  # 2 iterations
@pytest.mark.parametrize("options", [dict(change_driven=True), dict(fold=False),
                                     dict(direction="push")])
def test_only_bulk_pull_runs_fuse_by_default(options):
    """The choice is made before the first iteration (it does not depend on max_iter): two
    iterations show it; the ranks are the oracle's in the tests above."""
    g = build("directed", weights=1)
    _, info = pagerank(g, max_iter=2, return_info=True, **options)
    assert info["fused"] is False
    _, info = pagerank(g, max_iter=2, return_info=True)
    assert info["fused"] is True


@pytest.mark.parametrize("options, named", [
    (dict(change_driven=True), "change_driven=True"),
    (dict(fold=False), "fold=False"),
    (dict(direction="push"), "direction='push'"),
    (dict(block_size=48), "block_size"),
    (dict(tol=-1.0), "tol"),
])
def test_fused_bad_options_are_named(options, named):
    g = build("directed", weights=1)
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        pagerank(g, fused=True, **options)


@pytest.mark.parametrize("source, weighted", [(3, False), (25, False), (3, True)])
def test_one_source_personalized_pagerank_is_fused(small_work, source, weighted):
    """3 is heavy; 25 is dangling: its mass returns to it."""
    g = _skewed(weighted=weighted)
    src, dst = csr_edges(g)
    if weighted:
        t = np.zeros(g.n)
        t[source] = 1.0
        w = device.to_host(g.edge_weights)[:, 0]
        expected = oracles.pagerank(g.n, src, dst, weights=w, alpha=0.6, teleport=t)
    else:
        expected = oracles_learning.personalized_pagerank(g.n, src, dst, [source],
                                                          alpha=0.6)[:, 0]
    sources = device.to_host(g.vertices)[[source]]
    df, info = personalized_pagerank(g, sources, alpha=0.6, return_info=True)  # CI time
    plain = personalized_pagerank(g, sources, alpha=0.6, fused=False)
    got = (df.to_pandas() if hasattr(df, "to_pandas") else df)["ppr_0"].to_numpy(np.float64)
    other = (plain.to_pandas() if hasattr(plain, "to_pandas") else plain)["ppr_0"].to_numpy()
    assert info["fused"] and info["converged"]
    assert np.abs(got - expected).sum() <= 1e-4
    assert np.abs(got - other).sum() <= 1e-5


@pytest.mark.parametrize("source", [3, 25])
def test_one_source_fused_iterations_start_from_its_dangling_mass(small_work, source):
    """After two iterations (not yet converged, so a wrong start shows): 25 is dangling, its
    whole starting mass returns to it in the first iteration (a fixed point at once); 3 is
    not."""
    g = _skewed(weighted=False)
    src, dst = csr_edges(g)
    expected = oracles_learning.personalized_pagerank(g.n, src, dst, [source], tol=1e-12,
                                                      max_iter=2)[:, 0]
    df, info = personalized_pagerank(g, device.to_host(g.vertices)[[source]], max_iter=2,
                                     tol=1e-12, return_info=True)
    got = (df.to_pandas() if hasattr(df, "to_pandas") else df)["ppr_0"].to_numpy(np.float64)
    assert info["fused"] and info["iterations"] == (1 if source == 25 else 2)
    assert np.abs(got - expected).sum() <= 1e-5


@pytest.mark.filterwarnings("ignore:.*did not converge:RuntimeWarning")  # 2 iterations
def test_several_sources_are_not_fused():
    g = build("directed", seed=6)
    sources = device.to_host(g.vertices)[[0, 5]]
    _, info = personalized_pagerank(g, sources, max_iter=2, return_info=True)  # chosen first
    assert info["fused"] is False
    with pytest.raises(ValueError, match="2 sources"):
        personalized_pagerank(g, sources, fused=True)


def test_lanes_follow_the_in_degree_distribution():
    assert kernel.lane_edges(np.full(100, 16), 1024) == 8
    assert kernel.lane_edges(np.r_[np.full(90, 2), 500, 900], 1024) == 16
    assert kernel.lane_edges(np.full(10, 2000), 1024) == 16  # every vertex heavy
    rng = np.random.default_rng(3)  # every in-degree 12: 8 edges a lane, two lanes a vertex
    n = 24
    dst = np.repeat(np.arange(n), 12)
    src = np.concatenate([rng.choice(np.delete(np.arange(n), v), 12, replace=False)
                          for v in range(n)])
    g = Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), "src", "dst", directed=True)
    work = kernel.pull_work(g)
    assert work["per_lane"] == 8 and device.to_host(work["bin_units"])[1] == 2
    assert device.to_host(work["bin_start"])[1] == 0  # nobody in bin 0
    s, d = csr_edges(g)
    expected = oracles.pagerank(g.n, s, d, tol=1e-12, max_iter=100)
    got = pagerank(g, tol=1e-7)
    np.testing.assert_allclose(got.sort_values("vertex")["pagerank"].to_numpy(), expected,
                               atol=1e-6)
    # host-placed edges (zero-copy over PCIe): a lane per in-edge, 16 lanes a vertex here
    h = g.to("host")
    work = kernel.pull_work(h)
    assert work["per_lane"] == kernel.HOST_PER_LANE == 1
    assert device.to_host(work["bin_start"])[4] == 0 and device.to_host(work["bin_start"])[5] == n
    got = pagerank(h, tol=1e-7)
    np.testing.assert_allclose(got.sort_values("vertex")["pagerank"].to_numpy(), expected,
                               atol=1e-6)


@pytest.mark.parametrize("weighted", [False, True])
def test_shares_gathered_in_degree_order_give_the_same_ranks(small_work, monkeypatch, weighted):
    """With the shares stored in degree order (forced here: GATHER_ORDER_SHARE 0), PageRank,
    one-source PPR and one-column feature propagation still match their float64 oracles."""
    monkeypatch.setattr(kernel, "GATHER_ORDER_SHARE", 0.0)
    g = _skewed(weighted=weighted)
    slots, indices, positions = (device.to_host(a) for a in kernel.gather_order(g))
    degree = device.to_host(g.out_degree)
    order = np.empty(g.n, dtype=np.int64)
    order[slots] = np.arange(g.n)
    assert (np.diff(degree[order]) <= 0).all()
    assert not (slots == np.arange(g.n)).all()  # the order moved vertices
    offsets = device.to_host(g.in_offsets)
    head = np.repeat(np.arange(g.n), np.diff(offsets))
    np.testing.assert_array_equal(head[positions], head)  # each vertex keeps its in-edges
    np.testing.assert_array_equal(indices, slots[device.to_host(g.in_indices)][positions])
    for v in range(g.n):  # sorted by the new numbering within each vertex
        assert (np.diff(indices[offsets[v]:offsets[v + 1]]) >= 0).all()
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0].astype(np.float64) if weighted else None
    # alpha 0.6: a third of the default's iterations (CI time); the order is what is tested
    expected = oracles.pagerank(g.n, src, dst, weights=w, alpha=0.6, tol=1e-12)
    assert np.abs(_ranks(pagerank(g, alpha=0.6, tol=1e-7)) - expected).sum() <= 1e-4
    if weighted:
        return
    ppr, info = personalized_pagerank(g, sources=[3], alpha=0.6, tol=1e-7, return_info=True)
    ppr = ppr.to_pandas() if hasattr(ppr, "to_pandas") else ppr
    assert info["fused"]
    assert np.abs(ppr["ppr_0"].to_numpy(np.float64)
                  - oracles_learning.personalized_pagerank(g.n, src, dst, [3],
                                                           alpha=0.6)[:, 0]).sum() <= 1e-4
    from onyx_rapids import feature_propagation
    x = np.random.default_rng(1).random((g.n, 1)).astype(np.float32)
    simple = g.simple_undirected()
    s_src, s_dst = csr_edges(simple)
    h = feature_propagation(g, x, iterations=4)
    h = h.to_pandas() if hasattr(h, "to_pandas") else h
    assert kernel.gather_order(simple) is not None
    np.testing.assert_allclose(h["h_0"].to_numpy(np.float64),
                               oracles_learning.feature_propagation(simple.n, s_src, s_dst, x,
                                                                    iterations=4)[:, 0],
                               atol=1e-5)
