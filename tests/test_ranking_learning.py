import itertools
import warnings

import numpy as np
import pytest

import oracles_learning as oracles
from graphs import build, csr_edges
from onyx_rapids import device
from onyx_rapids.algorithms.multi_manifold_ranking import multi_manifold_ranking
from onyx_rapids.algorithms.multimodal_learning import multimodal_learning

VARIANTS = list(itertools.product([True, False], [False, True], [False, True], ["pull", "push"]))


def _ids(v):
    return "-".join([("FA" if v[0] else "NFA"), ("CD" if v[1] else "NCD"),
                     ("fold" if v[2] else "unfold"), v[3]])


def _matrix(df, prefix, k):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[[f"{prefix}_{f}" for f in range(k)]].to_numpy(dtype=np.float64)


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("variant", VARIANTS, ids=_ids)
def test_mmr_each_iteration_matches_oracle(variant):
    fa, cd, fold, direction = variant
    g = build("directed", seed=9, weights=2)
    src, dst = csr_edges(g)
    W = device.to_host(g.edge_weights).astype(np.float64)
    mm0 = np.random.default_rng(2).random((g.n, 2)).astype(np.float32)
    expected = oracles.multi_manifold_ranking(g.n, src, dst, W, mm0, tol=0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        df = multi_manifold_ranking(g, mm0, tol=1e-7, max_iter=3, feature_aware=fa,
                                    change_driven=cd, fold=fold, direction=direction)
    assert _rel(_matrix(df, "mmr", 2), expected) <= 1e-4


@pytest.mark.parametrize("variant", [(True, False, True, "pull"), (False, True, False, "push"),
                                     (True, True, True, "push")], ids=_ids)
def test_mml_matches_oracle_to_convergence(variant):
    fa, cd, fold, direction = variant
    g = build("directed", seed=10, weights=3)
    src, dst = csr_edges(g)
    W = device.to_host(g.edge_weights).astype(np.float64)
    W[: len(W) // 3, 1] = 0.0  # a modality that is zero on some in-edges
    mm0 = np.random.default_rng(3).random((g.n, 3)).astype(np.float32)
    alphas = [0.2, 0.1, 0.15]  # summing to 0.45, not 0.75: half the iterations (CI time)
    expected = oracles.multimodal_learning(g.n, src, dst, W, mm0, alphas=alphas)
    df, info = multimodal_learning(g, mm0, alphas=alphas, weights=W.astype(np.float32),
                                   feature_aware=fa, change_driven=cd, fold=fold,
                                   direction=direction, return_info=True)
    assert info["converged"]
    assert _rel(_matrix(df, "mml", 3), expected) <= 1e-4


def test_bad_inputs():
    g = build("directed", seed=9, weights=2)
    mm0 = np.ones((g.n, 2), np.float32)
    with pytest.raises(ValueError, match="needs 3 edge weight column"):
        multi_manifold_ranking(g, np.ones((g.n, 3), np.float32))
    with pytest.raises(ValueError, match="positive"):
        multi_manifold_ranking(g, mm0, weights=-np.ones((g.m, 2), np.float32))
    with pytest.raises(ValueError, match="alphas"):
        multimodal_learning(g, mm0, alphas=[0.6, 0.5])
    with pytest.raises(ValueError, match="alphas"):
        multimodal_learning(g, mm0, alphas=[0.5])
