import numpy as np
import pandas as pd
import pytest

import oracles_learning as oracles
from graphs import csr_edges
from onyx_rapids import Graph, device, registry
from onyx_rapids.algorithms.belief_propagation import belief_propagation
from onyx_rapids.registry import variant_name

# every variant, each with one of a few state counts (40: many lanes, against the iteration)
CASES = [(k, v) for k, v in zip([2, 3, 40] * 4, registry.get("belief_propagation").variants())]


def _beliefs(df, k):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[[f"belief_{f}" for f in range(k)]].to_numpy(dtype=np.float64)


def _tree(n, seed):
    rng = np.random.default_rng(seed)
    parents = [int(rng.integers(0, v)) for v in range(1, n)]
    return pd.DataFrame({"src": parents, "dst": list(range(1, n))})


@pytest.mark.parametrize("k, variant", CASES, ids=[f"k{k}-{variant_name(v)}" for k, v in CASES])
def test_tree_beliefs_are_exact_marginals(k, variant):
    n = 8 if k < 40 else 5
    edges = _tree(n, seed=k)
    g = Graph.from_edgelist(edges, "src", "dst", directed=False)
    rng = np.random.default_rng(k)
    priors = rng.random((n, k)) + 0.1
    a = rng.random((k, k)) + 0.2
    psi = a + a.T
    if k < 40:  # brute force over k^n assignments
        expected = oracles.exact_marginals(n, list(zip(edges.src, edges.dst)), priors, psi)
    else:
        src, dst = csr_edges(g)
        expected = oracles.belief_propagation(n, src, dst, priors, psi)
    df, info = belief_propagation(g, priors.astype(np.float32), psi, tol=1e-7, max_iter=50,
                                  **variant, return_info=True)
    assert info["converged"]
    assert np.abs(_beliefs(df, k) - expected).max() <= 1e-4


def test_high_degree_star_stays_finite():
    # a leaf's message is about (0.34, 0.66): the centre's product of 400 of them (0.66^400 ~
    # 1e-72, as of 1000 before: CI time) underflows float32, and so does exp() of its log sum
    # unless shifted by the maximum
    leaves = 400
    g = Graph.from_edgelist(pd.DataFrame({"src": np.zeros(leaves, np.int64),
                                          "dst": np.arange(1, leaves + 1)}), "src", "dst",
                            directed=False)
    priors = np.tile([0.3, 0.7], (g.n, 1))
    psi = np.array([[0.9, 0.1], [0.1, 0.9]])
    src, dst = csr_edges(g)
    expected = oracles.belief_propagation(g.n, src, dst, priors, psi, max_iter=3, tol=0)
    got = _beliefs(belief_propagation(g, priors, psi, max_iter=3, feature_aware=False), 2)
    assert np.isfinite(got).all()
    assert np.abs(got - expected).max() <= 1e-4


def test_bad_inputs():
    g = Graph.from_edgelist(_tree(5, 0), "src", "dst", directed=False)
    good = np.full((5, 2), 0.5)
    psi = np.array([[0.9, 0.1], [0.1, 0.9]])
    with pytest.raises(ValueError, match="priors must be positive"):
        belief_propagation(g, np.zeros((5, 2)), psi)
    with pytest.raises(ValueError, match="positive"):
        belief_propagation(g, good, [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="symmetric"):
        belief_propagation(g, good, [[0.9, 0.2], [0.1, 0.9]])
    with pytest.raises(ValueError, match="2 x 2"):
        belief_propagation(g, good, np.ones((3, 3)))
    directed = Graph.from_edgelist(_tree(5, 0), "src", "dst", directed=True)
    with pytest.raises(ValueError, match="reverse"):
        belief_propagation(directed, good, psi)
