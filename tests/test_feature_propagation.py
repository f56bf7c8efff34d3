import numpy as np
import pandas as pd
import pytest

import oracles_learning as oracles
from graphs import build, csr_edges
from onyx_rapids import Graph, device, registry
from onyx_rapids.algorithms.feature_propagation import feature_propagation
from onyx_rapids.registry import variant_name

# every variant with 3 and 40 features; the fused kernel's with one (it propagates one column)
CASES = [(k, v) for v in registry.get("feature_propagation").variants()
         for k in ((1,) if v["fused"] else (3, 40))]


def _matrix(df, k):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[[f"h_{f}" for f in range(k)]].to_numpy(dtype=np.float64)


@pytest.mark.parametrize("k, variant", CASES, ids=[f"k{k}-{variant_name(v)}" for k, v in CASES])
def test_matches_oracle(k, variant):
    g = build("directed", seed=8)  # multi-edges, a self-loop, both directions of some edges
    src, dst = csr_edges(g)
    X = np.random.default_rng(k).random((g.n, k)).astype(np.float32) - 0.3
    expected = oracles.feature_propagation(g.n, src, dst, X, alpha=0.1, iterations=4)
    df = feature_propagation(g, X, iterations=4, **variant)
    got = _matrix(df, k)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) <= 1e-5


def test_zero_iterations_return_the_features_and_frame_input():
    g = build("undirected", seed=2)
    X = np.random.default_rng(1).random((g.n, 2)).astype(np.float32)
    frame = pd.DataFrame({"vertex": device.to_host(g.vertices), "a": X[:, 0], "b": X[:, 1]})
    assert np.allclose(_matrix(feature_propagation(g, frame, iterations=0), 2), X)


def test_simple_undirected_view():
    g = Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 2, 3, 1], "dst": [2, 1, 2, 1, 2]}),
                            directed=True)
    s = g.simple_undirected()
    assert s.n == 3 and s.m == 4 and not s.directed  # {1,2} and {1,3}, both ways
    assert device.to_host(s.out_degree).tolist() == [2, 1, 1]


@pytest.mark.parametrize("kwargs, match", [(dict(alpha=1.5), "alpha"),
                                           (dict(iterations=-1), "iterations")])
def test_bad_arguments(kwargs, match):
    g = build("undirected", seed=2)
    with pytest.raises(ValueError, match=match):
        feature_propagation(g, np.ones((g.n, 2), np.float32), **kwargs)
    with pytest.raises(ValueError, match="features"):
        feature_propagation(g, np.ones((g.n + 1, 2), np.float32))


def test_fold_with_push_is_refused():
    g = build("undirected", seed=2)
    with pytest.raises(ValueError, match="fold=True"):
        feature_propagation(g, np.ones((g.n, 2), np.float32), fold=True, direction="push")


@pytest.mark.parametrize("heavy", [False, True])
def test_one_column_runs_fused_and_matches_the_oracle(heavy, monkeypatch):
    """k = 1 defaults to the fused kernel (in-degree bins; with ``heavy``, every vertex's
    in-edges in chunks of 2), equal to the oracle and to the generated kernel."""
    from onyx_rapids.kernels import pagerank as fused_kernel

    if heavy:
        monkeypatch.setattr(fused_kernel, "HEAVY", 2)
        monkeypatch.setattr(fused_kernel, "CHUNK", 2)
    g = build("directed", seed=8)
    src, dst = csr_edges(g)
    X = np.random.default_rng(5).random((g.n, 1)).astype(np.float32) - 0.3
    expected = oracles.feature_propagation(g.n, src, dst, X, alpha=0.2, iterations=5)
    df, info = feature_propagation(g, X, alpha=0.2, iterations=5, return_info=True)
    assert info.variant["fused"] and info.iterations == 5
    got = _matrix(df, 1)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) <= 1e-5
    generated = _matrix(feature_propagation(g, X, alpha=0.2, iterations=5, fused=False), 1)
    assert np.abs(got - generated).max() <= 1e-5
    assert np.allclose(_matrix(feature_propagation(g, X, iterations=0), 1), X)


def test_fused_needs_one_column():
    g = build("undirected", seed=2)
    with pytest.raises(ValueError, match="fused=True.*one feature column; these features have 2"):
        feature_propagation(g, np.ones((g.n, 2), np.float32), fused=True)
    for bad, reason in ((dict(fold=False), "fused=True with fold=False: the fused kernel is "
                         "one folded kernel"),
                        (dict(direction="push"), "fold=True with direction='push': its folded "
                         "kernel pulls")):
        with pytest.raises(ValueError, match=reason):
            feature_propagation(g, np.ones((g.n, 1), np.float32), fused=True, **bad)
