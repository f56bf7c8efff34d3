"""Push-pull PageRank (SIMD-X): change-driven ``direction="auto"`` pushes an iteration when the
active vertices' out-edges are at most ``pull_fraction`` of all edges and pulls otherwise."""

import warnings

import numpy as np
import pandas as pd
import pytest

import oracles
import oracles_learning
from graphs import build, csr_edges
from onyx_rapids import Graph, device, pagerank
from onyx_rapids.algorithms.pagerank import personalized_pagerank


def funnel(leaves=12, path=8, core=4):
    """Leaves (two out-edges each, in-degree 0) feed a path that ends in a complete core.

    Every vertex has out-edges.  The leaves settle after the first iteration, the path one
    vertex per iteration, so the frontier's share of the edges falls from all of them to the
    core's 12 of 44: the first iterations pull, the rest push (pull_fraction 0.3).
    """
    src, dst = [], []
    for i in range(core):
        for j in range(core):
            if i != j:
                src.append(i), dst.append(j)
    p = list(range(core, core + path))
    for a, b in zip(p, p[1:] + [0]):
        src.append(a), dst.append(b)
    for j in range(leaves):
        v = core + path + j
        src += [v, v]
        dst += [p[j % path], p[(j * 3 + 1) % path]]
    return Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), "src", "dst", directed=True)


def _ranks(df, columns):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[columns].to_numpy(dtype=np.float64)


@pytest.mark.parametrize("fa", [True, False], ids=["FA", "NFA"])
def test_auto_switches_and_agrees_with_forced_directions(fa):
    g = funnel()
    src, dst = csr_edges(g)
    expected = oracles.pagerank(g.n, src, dst, alpha=0.6)  # alpha 0.6: fewer iterations
    # the forced directions beside auto once, with FA (CI time): without FA, change-driven push
    # and pull run to convergence in test_pagerank's test_pagerank_matches_float64_oracle
    directions = ("auto", "push", "pull") if fa else ("auto",)
    runs = {d: pagerank(g, alpha=0.6, change_driven=True, feature_aware=fa, direction=d,
                        return_info=True) for d in directions}
    for d, (df, info) in runs.items():
        assert info["converged"] and info["direction"] == d
        assert len(info["directions"]) == info["iterations"]
        assert np.abs(_ranks(df, "pagerank") - expected).sum() <= 1e-4, d
        if d != "auto":
            assert set(info["directions"]) == {d}
    auto = runs["auto"][1]["directions"]
    # every vertex is active at first (pull); once the leaves and the path settle, push
    assert auto[0] == "pull" and auto[-1] == "push"
    assert auto == sorted(auto)  # pulls, then pushes: this frontier only shrinks
    ranks = {d: _ranks(df, "pagerank") for d, (df, _) in runs.items()}
    for d in directions[1:]:
        assert np.abs(ranks["auto"] - ranks[d]).sum() <= 1e-5, d


@pytest.mark.parametrize("fraction, used", [(0.0, {"pull"}), (1.0, {"push"})])
def test_pull_fraction_extremes(fraction, used):
    g = funnel()
    src, dst = csr_edges(g)
    df, info = pagerank(g, alpha=0.6, change_driven=True, pull_fraction=fraction,
                        return_info=True)
    assert info["converged"] and set(info["directions"]) == used
    assert np.abs(_ranks(df, "pagerank") - oracles.pagerank(g.n, src, dst, alpha=0.6)).sum() \
        <= 1e-4
    if hasattr(df, "attrs"):
        assert df.attrs["directions"] == info["directions"]


def test_personalized_pagerank_switches():
    g = funnel()
    src, dst = csr_edges(g)
    internal = [0, 5, 14]
    # alpha 0.6: fewer iterations (CI time), as the PageRank tests above
    expected = oracles_learning.personalized_pagerank(g.n, src, dst, internal, alpha=0.6)
    df, info = personalized_pagerank(g, device.to_host(g.vertices)[internal], alpha=0.6,
                                     change_driven=True, return_info=True)
    assert info["converged"] and {"push", "pull"} <= set(info["directions"])
    got = _ranks(df, [f"ppr_{f}" for f in range(3)])
    assert np.abs(got - expected).sum(axis=0).max() <= 1e-4


@pytest.mark.parametrize("cd, fold, way", [(False, False, "pull"), (False, True, "pull"),
                                           (True, True, "push")])
def test_auto_without_switching(cd, fold, way):
    """Bulk iterations always pull (every vertex is active); folded kernels keep their direction
    (change-driven: the folded push kernel), whatever ``pull_fraction`` says."""
    g = build("directed", seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _, info = pagerank(g, max_iter=3, change_driven=cd, fold=fold, pull_fraction=1.0,
                           return_info=True)
    assert info["direction"] == way and info["directions"] == [way] * 3


@pytest.mark.parametrize("fraction", [-0.1, 1.5, float("nan")])
@pytest.mark.parametrize("fn", ["pagerank", "personalized_pagerank"])
def test_bad_pull_fraction(fn, fraction):
    g = build("directed")
    with pytest.raises(ValueError, match="pull_fraction"):
        if fn == "pagerank":
            pagerank(g, change_driven=True, pull_fraction=fraction)
        else:
            personalized_pagerank(g, device.to_host(g.vertices)[:1], pull_fraction=fraction)


def test_default_fold_is_bulk_pull_only():
    g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2, 2], "dst": [1, 2, 0, 1]}), "src", "dst",
                            directed=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 2 iterations tell the fold
        assert pagerank(g, max_iter=2, return_info=True)[1]["fold"] is True
        assert pagerank(g, max_iter=2, direction="push", return_info=True)[1]["fold"] is False
        assert pagerank(g, max_iter=2, change_driven=True, return_info=True)[1]["fold"] is False
