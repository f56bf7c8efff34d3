import warnings

import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import build, csr_edges
from onyx_rapids import device, label_propagation, registry
from onyx_rapids.registry import variant_name

VARIANTS = registry.get("label_propagation").variants()


def _seeds(g, k, partitions=1, count=3, seed=0):
    rng = np.random.default_rng(seed)
    internal = rng.choice(g.n, size=count, replace=False)
    frame = {"vertex": device.to_host(g.vertices)[internal]}
    names = ["label"] if partitions == 1 else [f"label_{p}" for p in range(partitions)]
    for name in names:
        frame[name] = rng.integers(0, k, count)
    lp0 = np.full((g.n, partitions * k), 1.0 / k)
    lp0[internal] = 0.0
    for p, name in enumerate(names):
        lp0[internal, p * k + frame[name]] = 1.0
    labelled = np.zeros(g.n, dtype=bool)
    labelled[internal] = True
    return pd.DataFrame(frame), lp0, labelled


def _probabilities(df, K):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[[f"lp_{i}" for i in range(K)]].to_numpy(dtype=np.float64)


def _halves():
    """Every variant once, on one of the two graphs (CI time): the directed graph takes the half
    with an even count of FA, CD, fold and push, so each (CD, fold, direction) runs on both
    graphs, once with FA and once without."""
    for v in VARIANTS:
        odd = (v["feature_aware"] + v["change_driven"] + v["fold"]
               + (v["direction"] == "push")) % 2
        yield ("undirected" if odd else "directed"), v


@pytest.mark.parametrize("kind, variant", list(_halves()),
                         ids=[f"{k}-{variant_name(v)}" for k, v in _halves()])
def test_fixed_iterations_match_oracle(kind, variant):
    """Every variant computes the same iteration (change-driven: up to its push threshold)."""
    g = build(kind, seed=3)
    k = 3
    seeds, lp0, labelled = _seeds(g, k)
    src, dst = csr_edges(g)
    expected = oracles.label_propagation(g.n, src, dst, lp0, labelled, k, tol=0, max_iter=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 4 iterations do not converge
        df, info = label_propagation(g, seeds, k, tol=1e-7, max_iter=4, **variant,
                                     return_info=True)
    assert info["iterations"] == 4
    assert np.abs(_probabilities(df, k) - expected).max() <= 1e-4


# a covering pair in which each option takes both values: FA/NCD/fold/push and
# NFA/CD/unfold/pull (every variant runs in the fixed-iteration test above; the other two of
# the former sample, FA/CD/fold/pull and NFA/NCD/unfold/push, only repeated each option's values)
@pytest.mark.parametrize("variant", VARIANTS[3:13:9], ids=variant_name)
def test_converged_matches_oracle_and_labels(variant):
    g = build("undirected", seed=2)
    k = 2
    seeds, lp0, labelled = _seeds(g, k, seed=4)
    src, dst = csr_edges(g)
    expected = oracles.label_propagation(g.n, src, dst, lp0, labelled, k)
    # tol 1e-5, not the default 1e-6: 14 fewer iterations (CI time); the fixed point is then
    # within tol alpha / (1 - alpha) < 6e-5 of the run, below the 1e-4 checked
    df, info = label_propagation(g, seeds, k, tol=1e-5, **variant, return_info=True)
    assert info["converged"]
    got = _probabilities(df, k)
    assert np.abs(got - expected).max() <= 1e-4
    labels = (df.to_pandas() if hasattr(df, "to_pandas") else df)["label"].to_numpy()
    top2 = np.sort(expected, axis=1)[:, -2:]
    decided = top2[:, 1] - top2[:, 0] > 1e-3
    assert (labels[decided] == expected.argmax(axis=1)[decided]).all()
    # clamped seeds keep their one-hot rows
    assert np.array_equal(got[labelled], lp0[labelled])


@pytest.mark.parametrize("fa", [True, False])
def test_partitions_with_weights(fa):
    g = build("directed", seed=5, weights=2)
    k, P = 2, 2
    seeds, lp0, labelled = _seeds(g, k, partitions=P, seed=6)
    src, dst = csr_edges(g)
    weights = device.to_host(g.edge_weights)
    expected = oracles.label_propagation(g.n, src, dst, lp0, labelled, k, weights=weights,
                                         tol=0, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        df = label_propagation(g, seeds, k, tol=1e-7, max_iter=3, feature_aware=fa, fold=True)
    assert "label" not in df.columns  # argmax only for a single partition
    assert np.abs(_probabilities(df, P * k) - expected).max() <= 1e-4


def test_full_initial_matrix_and_no_clamp():
    g = build("undirected", seed=2)
    k = 2
    _, lp0, labelled = _seeds(g, k, seed=4)
    src, dst = csr_edges(g)
    expected = oracles.label_propagation(g.n, src, dst, lp0, labelled, k, clamp=False,
                                         tol=0, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        df = label_propagation(g, lp0.astype(np.float32), k, clamp=False, tol=1e-7, max_iter=5,
                               feature_aware=False)
    assert np.abs(_probabilities(df, k) - expected).max() <= 1e-4


def test_bad_inputs():
    g = build("directed", seed=3)
    seeds, _, _ = _seeds(g, 3)
    with pytest.raises(ValueError, match="k"):
        label_propagation(g, seeds, 0)
    with pytest.raises(ValueError, match=r"classes in \[0, 2\)"):
        label_propagation(g, seeds.assign(label=[0, 1, 2]), 2)
    with pytest.raises(ValueError, match="'vertex'"):
        label_propagation(g, seeds.rename(columns={"vertex": "id"}), 3)
    with pytest.raises(ValueError, match="not vertices of the graph"):
        label_propagation(g, seeds.assign(vertex=[123456789123, 1, 2]), 3)
    weighted = build("directed", seed=5, weights=2)
    seeds2, _, _ = _seeds(weighted, 3)
    with pytest.raises(ValueError, match="edge weight"):
        label_propagation(weighted, seeds2, 3)  # 1 partition, 2 weight columns
    with pytest.raises(ValueError, match="multiple of k"):
        label_propagation(g, np.ones((g.n, 5), dtype=np.float32), 3)


def test_label_frame_errors_name_the_problem():
    g = build("directed", seed=3)
    seeds, _, _ = _seeds(g, 3)
    with pytest.raises(ValueError, match="'label' column"):
        label_propagation(g, seeds.rename(columns={"label": "class"}), 3)
    with pytest.raises(TypeError, match="integers"):
        label_propagation(g, seeds.assign(label=[0.5, 1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="more than once"):
        label_propagation(g, pd.concat([seeds, seeds]), 3)
