import itertools
import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import build, csr_edges
from onyx_rapids import Graph, datasets, device, pagerank

VARIANTS = list(itertools.product([True, False], [False, True], [False, True], ["pull", "push"]))


def _ids(v):
    return "-".join([("FA" if v[0] else "NFA"), ("CD" if v[1] else "NCD"),
                     ("fold" if v[2] else "unfold"), v[3]])


def _ranks(df):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df["vertex"].to_numpy(), df["pagerank"].to_numpy(dtype=np.float64)


def _halves():
    """Every variant once, on one of the two graphs (CI time; every variant runs on the directed
    graph in the fixed-iteration test below): the directed graph takes the half whose options
    have an even count of FA, CD, fold and push, so each (CD, fold, direction) stop test
    converges on both graphs, once with FA and once without."""
    for v in VARIANTS:
        odd = (v[0] + v[1] + v[2] + (v[3] == "push")) % 2
        yield ("undirected" if odd else "directed"), v


@pytest.mark.parametrize("kind, variant", list(_halves()),
                         ids=[f"{k}-{_ids(v)}" for k, v in _halves()])
def test_pagerank_matches_float64_oracle(kind, variant):
    """To convergence, at alpha 0.6 (a third of the default's iterations: CI time; the default
    alpha is checked against NetworkX below and on every path by the fixed-iteration test)."""
    fa, cd, fold, direction = variant
    g = build(kind, seed=len(kind))
    src, dst = csr_edges(g)
    expected = oracles.pagerank(g.n, src, dst, alpha=0.6)
    df, info = pagerank(g, alpha=0.6, feature_aware=fa, change_driven=cd, fold=fold,
                        direction=direction, return_info=True)
    vertex, rank = _ranks(df)
    assert info["converged"]
    assert (vertex == device.to_host(g.vertices)).all()
    assert np.abs(rank - expected).sum() <= 1e-4
    assert abs(rank.sum() - 1) <= 1e-4


@pytest.mark.parametrize("variant", VARIANTS, ids=_ids)
def test_each_iteration_matches_oracle(variant):
    """A fixed number of iterations: a wrong start or a stale aggregate cannot hide behind
    PageRank's contraction."""
    fa, cd, fold, direction = variant
    g = build("directed", seed=4)
    src, dst = csr_edges(g)
    expected = oracles.pagerank(g.n, src, dst, tol=0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _, rank = _ranks(pagerank(g, tol=1e-9, max_iter=3, feature_aware=fa, change_driven=cd,
                                  fold=fold, direction=direction))
    assert np.abs(rank - expected).sum() <= 1e-5


def test_pagerank_matches_networkx_on_karate():
    edges = datasets.load_edges("karate")
    g = Graph.from_edgelist(edges, "src", "dst", directed=False)
    reference = nx.pagerank(nx.from_pandas_edgelist(edges, "src", "dst"), alpha=0.85, tol=1e-12,
                            max_iter=10_000, weight=None)
    vertex, rank = _ranks(pagerank(g))
    assert np.abs(rank - np.array([reference[v] for v in vertex])).sum() <= 1e-4


@pytest.mark.parametrize("fa", [True, False])
def test_weighted_pagerank_uses_the_graph_weights_by_default(fa):
    """cuGraph and NetworkX use a weighted graph's weights; weight=False ignores them."""
    g = build("directed", weights=1)
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0]
    expected = oracles.pagerank(g.n, src, dst, weights=w)
    _, rank = _ranks(pagerank(g, feature_aware=fa, fold=True))
    assert np.abs(rank - expected).sum() <= 1e-4
    _, plain = _ranks(pagerank(g, weight=False, feature_aware=fa))
    assert np.abs(plain - oracles.pagerank(g.n, src, dst)).sum() <= 1e-4
    assert np.abs(plain - rank).sum() > 1e-3  # the weights matter on this graph


def test_single_vertex_with_self_loop():
    g = Graph.from_edgelist(pd.DataFrame({"src": [7], "dst": [7]}), "src", "dst", directed=True)
    _, rank = _ranks(pagerank(g))
    assert rank == pytest.approx([1.0], abs=1e-6)


def test_not_converging_warns_and_reports():
    g = build("directed")
    with pytest.warns(RuntimeWarning, match="did not converge"):
        df, info = pagerank(g, max_iter=2, return_info=True)
    assert info == {**info, "iterations": 2, "converged": False}
    if hasattr(df, "attrs"):
        assert df.attrs["iterations"] == 2


@pytest.mark.parametrize("kwargs, match", [
    (dict(alpha=1.0), "alpha"),
    (dict(alpha=-0.1), "alpha"),
    (dict(tol=0), "tol"),
    (dict(max_iter=0), "max_iter"),
    (dict(direction="sideways"), "direction"),
    (dict(weight="nope"), "weight"),
])
def test_bad_arguments(kwargs, match):
    g = build("directed")
    with pytest.raises(ValueError, match=match):
        pagerank(g, **kwargs)


def test_change_driven_agrees_with_bulk_on_a_larger_graph():
    rng = np.random.default_rng(5)
    n, m = 60, 300
    g = Graph.from_edgelist(pd.DataFrame({"src": rng.integers(0, n, m),
                                          "dst": rng.integers(0, n, m)}), "src", "dst",
                            directed=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no convergence or precision warning from us
        warnings.filterwarnings("ignore", message=".*Grid size")  # numba's small-launch note
        # alpha 0.6: a third of the default's iterations (CI time)
        _, bulk = _ranks(pagerank(g, alpha=0.6, feature_aware=False))
        _, cd = _ranks(pagerank(g, alpha=0.6, feature_aware=False, change_driven=True))
    assert np.abs(bulk - cd).sum() <= 1e-4
