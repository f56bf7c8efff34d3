import itertools
import warnings

import networkx as nx
import numpy as np
import pytest

import oracles_learning as oracles
from graphs import build, csr_edges
from onyx_rapids import device
from onyx_rapids.algorithms.pagerank import personalized_pagerank

VARIANTS = list(itertools.product([True, False], [False, True], [False, True], ["pull", "push"]))


def _ids(v):
    return "-".join([("FA" if v[0] else "NFA"), ("CD" if v[1] else "NCD"),
                     ("fold" if v[2] else "unfold"), v[3]])


def _matrix(df, k):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[[f"ppr_{f}" for f in range(k)]].to_numpy(dtype=np.float64)


@pytest.mark.parametrize("variant", VARIANTS, ids=_ids)
def test_each_iteration_matches_oracle(variant):
    fa, cd, fold, direction = variant
    g = build("directed", seed=6)
    src, dst = csr_edges(g)
    internal = [0, 5, 12]  # 12 is dangling: its mass returns to itself
    expected = oracles.personalized_pagerank(g.n, src, dst, internal, tol=0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        df = personalized_pagerank(g, device.to_host(g.vertices)[internal], tol=1e-9, max_iter=3,
                                   feature_aware=fa, change_driven=cd, fold=fold,
                                   direction=direction)
    assert np.abs(_matrix(df, 3) - expected).sum(axis=0).max() <= 1e-5


@pytest.mark.parametrize("fa, cd", [(True, False), (False, True)])
def test_converged_matches_networkx(fa, cd):
    g = build("undirected", seed=2)
    src, dst = csr_edges(g)
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(g.n))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    internal = [1, 4, 7, 10]
    df, info = personalized_pagerank(g, device.to_host(g.vertices)[internal], feature_aware=fa,
                                     change_driven=cd, return_info=True)
    assert info["converged"]
    got = _matrix(df, 4)
    for f, s in enumerate(internal):
        ref = nx.pagerank(G, alpha=0.85, personalization={s: 1}, dangling={s: 1}, tol=1e-13,
                          max_iter=10_000)
        assert np.abs(got[:, f] - np.array([ref[v] for v in range(g.n)])).sum() <= 1e-4


def test_bad_sources():
    g = build("directed", seed=6)
    with pytest.raises(ValueError, match="not"):
        personalized_pagerank(g, [123456789])
    with pytest.raises(ValueError, match="at least one"):
        personalized_pagerank(g, [])
