"""Graffix's degree normalization (issue 37, knob ``degree_normalization``,
:mod:`onyx_rapids.algorithms._normalized`): the added edges against the rule in NumPy, PageRank
against the float64 oracle on the normalized graph, the graph cached, results in original ids,
refusals."""

import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import assert_refused, csr_edges, pandas
import onyx_rapids as onyx
from onyx_rapids import Approximation, device
from onyx_rapids.algorithms import _normalized

ALPHA, TOL = 0.85, 1e-5  # loose: few simulated iterations


def knob(t):
    return Approximation(degree_normalization=t)



@pytest.fixture(scope="module")
def skewed():
    """40 vertices (two warps), weighted, directed: a hub of in-degree 12 in each warp, the
    other vertices of in-degree 0-3; string ids."""
    rng = np.random.default_rng(3)
    src = np.r_[rng.integers(0, 40, 12), rng.integers(0, 40, 12), rng.integers(0, 40, 50)]
    dst = np.r_[np.full(12, 5), np.full(12, 35), rng.integers(0, 40, 50)]
    keep = src != dst
    frame = pd.DataFrame({"src": [f"v{x:02d}" for x in src[keep]],
                          "dst": [f"v{x:02d}" for x in dst[keep]],
                          "w": rng.uniform(0.5, 2.0, keep.sum())})
    return onyx.Graph.from_edgelist(frame, weight="w", directed=True, duplicates="first",
                                    vertices=[f"v{x:02d}" for x in range(40)])


@pytest.mark.parametrize("t", [0.3, 1.0])
def test_added_edges_follow_the_rule(skewed, t):
    g = skewed
    offsets = device.to_host(g.in_offsets).astype(np.int64)
    into = device.to_host(g.in_indices).astype(np.int64)
    u, w, first = (device.to_host(a) for a in _normalized.added_edges(
        g.in_offsets, g.in_indices, g.n, t, budget=g.m))
    ins = [set(into[offsets[x]:offsets[x + 1]]) for x in range(g.n)]
    degree = np.diff(offsets)
    top = np.array([degree[x // 32 * 32:x // 32 * 32 + 32].max() for x in range(g.n)])
    two_hop = [set().union(*[ins[v] for v in ins[x]]) - ins[x] - {x} for x in range(g.n)]
    assert len(set(zip(u.tolist(), w.tolist()))) == u.size > 0  # distinct pairs
    for x, y, f in zip(u, w, first):
        assert y in two_hop[x] and into[f] in ins[x] and y in ins[into[f]]
    counts = np.bincount(u, minlength=g.n)
    assert (counts <= np.maximum(np.floor(t * top) - degree, 0)).all()
    assert counts[degree == 0].sum() == 0


def test_budget_caps_the_added_edges(skewed):
    u, _, _ = _normalized.added_edges(skewed.in_offsets, skewed.in_indices, skewed.n, 1.0,
                                      budget=7)
    assert 0 < u.shape[0] <= 7


def test_pagerank_is_the_oracle_on_the_normalized_graph(skewed):
    g = skewed
    df, info = onyx.pagerank(g, alpha=ALPHA, tol=TOL, approximation=knob(0.5),
                             return_info=True)
    (h, added), ms = _normalized.normalized(g, 0.5, g.weights_for(None, name="t"), "w")
    assert ms == 0.0 and info.estimate["normalize_build_ms"] > 0  # built once, then cached
    assert h.m == g.m + added == info.estimate["normalized_edges"] and added > 0
    assert info.approximation == {"degree_normalization": 0.5}
    src, dst = csr_edges(h)
    x = oracles.pagerank(h.n, src, dst, weights=device.to_host(h.edge_weights[:, 0]),
                         alpha=ALPHA)
    df = pandas(df)
    assert df["vertex"].tolist() == [f"v{i:02d}" for i in range(40)]
    np.testing.assert_allclose(df["pagerank"].to_numpy(), x, atol=2e-5)
    exact = pandas(onyx.pagerank(g, alpha=ALPHA, tol=TOL))
    assert not np.allclose(df["pagerank"].to_numpy(), exact["pagerank"].to_numpy())


def test_personalized_sources_keep_their_ids(skewed):
    df = pandas(onyx.personalized_pagerank(skewed, sources=["v05"], alpha=ALPHA, tol=TOL,
                                           approximation=knob(0.5)))
    assert list(df.columns) == ["vertex", "ppr_0"] and len(df) == skewed.n
    assert abs(df["ppr_0"].sum() - 1.0) < 1e-4
    at = df.set_index("vertex")["ppr_0"]
    assert at["v05"] == at.max()  # its own teleport's largest


@pytest.mark.parametrize("call, needle", [
    (lambda g: onyx.sssp(g, 0, approximation=knob(0.5)),
     "sssp does not support approximation degree_normalization=0.5"),
    (lambda g: knob(0), "degree_normalization must be a number in (0, 1], got 0"),
    (lambda g: knob(1.5), "degree_normalization must be a number in (0, 1], got 1.5"),
])
def test_refusals_name_the_knob(call, needle):
    assert_refused(call, [needle])
