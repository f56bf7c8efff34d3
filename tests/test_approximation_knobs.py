"""The approximation knobs of issue 37 beyond the foundation's (tests/test_approximation.py):
``stop_changed_relative`` (a vertex's tolerance relative to its value), ``edge_fraction``
(partial edge processing) and ``activation_threshold`` (change-driven activation decoupled
from ``tol``): their checks and refusals by name, their exact ends, and loose values against
the float64 oracles (and a float64 emulation of the windows of docs/execution.md).

Small graphs, alpha 0.5 and a loose ``tol``: every run goes through the CUDA simulator.
"""

import math
import time

import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import build, csr_edges
import onyx_rapids as onyx
from onyx_rapids import Approximation, datasets, device, operators as ops
from onyx_rapids.algorithms._propagate import partial

ALPHA, TOL = 0.5, 1e-4


@pytest.fixture(scope="module")
def directed():
    """14 vertices (3 dangling), parallel edges, one weight column."""
    return build("directed", seed=4, weights=1)


def _ranks(df, column="pagerank"):
    return df[column].to_numpy(dtype=np.float64)


def _windowed_pagerank(g, fraction, iterations, weighted=False, teleport=None):
    """Float64 PageRank whose sums compute the windows of docs/execution.md ("Partial edge
    processing") afresh: every in-edge in the first iteration, then in iteration t in-edges
    (t c + v OFFSET) mod d .. of each vertex v; the others bring their last value."""
    host = device.to_host
    offsets, src = host(g.in_offsets).astype(np.int64), host(g.in_indices).astype(np.int64)
    n, d = g.n, np.diff(offsets)
    dst = np.repeat(np.arange(n), d)
    position = np.arange(src.size) - offsets[dst]
    w = host(g.edge_weights)[host(g.in_edge_ids), 0].astype(np.float64) if weighted \
        else np.ones(src.size)
    outw = np.bincount(src, weights=w, minlength=n)
    share = w / outw[src]
    c = np.ceil(fraction * d.astype(np.float64)).astype(np.int64)
    t = np.full(n, 1.0 / n) if teleport is None else teleport
    x = t.copy()
    stale = np.zeros(src.size)
    for turn in range(iterations):
        cv, dv = c[dst], d[dst]
        start = (turn * cv + dst * partial.OFFSET) % dv
        read = (position - start) % dv < cv if turn else np.ones(src.size, dtype=bool)
        stale = np.where(read, share * x[src], stale)
        acc = np.bincount(dst, weights=stale, minlength=n)
        x = ALPHA * (acc + x[outw == 0].sum() * t) + (1 - ALPHA) * t
    return x


# ------------------------------------------------------------------- checks and refusals


@pytest.mark.parametrize("knobs, message", [
    (dict(stop_changed_fraction=0.1, stop_changed_relative=0),
     "stop_changed_relative must be a number in (0, 1), got 0"),
    (dict(stop_changed_fraction=0.1, stop_changed_relative="0.01"),
     "stop_changed_relative must be a number in (0, 1), got '0.01' (a str)"),
    (dict(stop_changed_relative=0.01),
     "stop_changed_relative refines stop_changed_fraction: give stop_changed_fraction too"),
    (dict(edge_fraction=0), "edge_fraction must be a number in (0, 1], got 0"),
    (dict(edge_fraction=1.5), "edge_fraction must be a number in (0, 1], got 1.5"),
    (dict(edge_fraction=True), "edge_fraction must be a number"),
    (dict(activation_threshold=0.0), "activation_threshold must be a positive finite number"),
    (dict(activation_threshold="1e-3"), "activation_threshold must be a positive finite number"),
])
def test_each_knob_is_checked_by_name(knobs, message):
    with pytest.raises(ValueError) as e:
        Approximation(**knobs)
    assert message in str(e.value)


@pytest.mark.parametrize("call, needle", [
    (lambda g: onyx.bfs(g, 0, approximation=Approximation(edge_fraction=0.5)),
     "bfs does not support approximation edge_fraction=0.5: its approximation knobs are none"),
    (lambda g: onyx.pagerank(g, fused=True, approximation=Approximation(edge_fraction=0.5)),
     "pagerank does not support fused=True with approximation=Approximation(edge_fraction=0.5)"),
    (lambda g: onyx.pagerank(g, change_driven="auto",
                             approximation=Approximation(edge_fraction=0.5)),
     "change_driven='auto' with approximation=Approximation(edge_fraction=0.5): edge_fraction "
     "runs in bulk iterations"),
    (lambda g: onyx.personalized_pagerank(g, [0], direction="push",
                                          approximation=Approximation(edge_fraction=0.5)),
     "direction='push' with approximation=Approximation(edge_fraction=0.5): edge_fraction "
     "runs in pulls"),
    (lambda g: onyx.label_propagation(g, pd.DataFrame({"vertex": [0], "label": [0]}), 2,
                                      approximation=Approximation(activation_threshold=0.1)),
     "label_propagation does not support change_driven=False with approximation="
     "Approximation(activation_threshold=0.1): activation_threshold sets which vertices "
     "change-driven iterations activate"),
])
def test_refusals_name_the_knob(directed, call, needle):
    with pytest.raises(ValueError) as e:
        call(directed)
    assert needle in str(e.value)


def test_moved_count_relative_to_the_value():
    """ops.MaxChange's moved count with ``relative``: |new - old| > threshold + r |new|."""
    g = build("directed", seed=1)
    rng = np.random.default_rng(0)
    old = rng.random((g.n, 2)).astype(np.float32)
    new = (old * (1 + rng.choice([-0.02, 0.0, 0.005, 0.2], size=(g.n, 2)))).astype(np.float32)
    args = dict(new=device.asarray(new), old=device.asarray(old),
                stop=device.zeros(2, np.float32), moved=device.zeros(1, np.int64),
                threshold=1e-6, relative=0.01, ones=device.full(g.n, 1, np.int32))
    ops.vertexmap(g, [ops.MaxChange("new", "old", "stop", moved="moved", threshold="threshold",
                                    weight="ones", relative="relative")], args, k=2)
    expected = (np.abs(new - old) > 1e-6 + 0.01 * np.abs(new)).any(axis=1).sum()
    assert int(device.to_host(args["moved"])[0]) == expected > 0


# ------------------------------------------------------------------ stop_changed_relative


def test_changed_relative_exact_end_and_loose(directed):
    """Tiny: the exact iterations, bit for bit; at the default a fraction that the absolute
    tolerance alone never reaches before the exact test stops earlier, within the bound."""
    exact, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, fused=False, return_info=True)
    end, at_end = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True,
                                approximation=Approximation(stop_changed_fraction=0.3,
                                                            stop_changed_relative=1e-12))
    assert at_end.estimate["stopped_by"] == "tol" and at_end.iterations == info.iterations
    assert np.array_equal(_ranks(end), _ranks(exact))
    df, loose = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True,
                              approximation=Approximation(stop_changed_fraction=0.3,
                                                          stop_changed_relative=1e-2))
    assert loose.estimate["stopped_by"] == "stop_changed_fraction"
    assert loose.iterations < info.iterations and len(df) == directed.n
    assert loose.approximation == {"stop_changed_fraction": 0.3, "stop_changed_relative": 1e-2}
    src, dst = csr_edges(directed)
    w = device.to_host(directed.edge_weights)[:, 0]
    error = np.abs(_ranks(df) - oracles.pagerank(directed.n, src, dst, w, alpha=ALPHA)).sum()
    assert error <= ALPHA / (1 - ALPHA) * loose.estimate["l1_change"] + 1e-5
    print(f"relative 1e-2: {loose.iterations} iterations (exact {info.iterations}), "
          f"L1 error {error:.2e}")


# -------------------------------------------------------------------------- edge_fraction


def test_edge_fraction_at_its_exact_end_is_bit_for_bit(directed):
    """1 is the exact run; so is any fraction whose windows hold every in-edge (in-degrees
    below 100: ceil(0.99 d) = d), through the windowed edge function."""
    exact, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, fused=False, return_info=True)
    for fraction in (1.0, 0.99):
        df, run = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True,
                                approximation=Approximation(edge_fraction=fraction))
        assert np.array_equal(_ranks(df), _ranks(exact)) and run.iterations == info.iterations
        assert run.estimate["edges_fraction"] == 1.0 and run.estimate["stopped_by"] == "tol"


@pytest.mark.parametrize("weighted", [True, False], ids=["weighted", "unweighted"])
def test_edge_fraction_half_reads_the_windows(directed, weighted):
    """Half the in-edges an iteration (rounded up per vertex) computed afresh, the ranks the
    float64 windowed iteration's after as many iterations, a row per vertex, near the exact
    fixed point (the stale terms keep it)."""
    weight = None if weighted else False
    exact, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, weight=weight, return_info=True)
    df, run = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, weight=weight, return_info=True,
                            approximation=Approximation(edge_fraction=0.5))
    degree = np.diff(device.to_host(directed.in_offsets))
    read = np.ceil(0.5 * degree).sum() / directed.m
    assert run.estimate["edges_fraction"] == pytest.approx(read) and read < 0.75
    assert run.approximation == {"edge_fraction": 0.5} and len(df) == directed.n
    assert run.estimate["stopped_by"] == "tol"  # the exact test: the fixed point is exact
    emulated = _windowed_pagerank(directed, 0.5, run.iterations, weighted)
    assert np.abs(_ranks(df) - emulated).sum() <= 1e-5
    src, dst = csr_edges(directed)
    w = device.to_host(directed.edge_weights)[:, 0] if weighted else None
    error = np.abs(_ranks(df) - oracles.pagerank(directed.n, src, dst, w, alpha=ALPHA)).sum()
    assert error < 1e-3  # the exact fixed point, up to where the run stopped
    print(f"edge_fraction 0.5: {run.iterations} iterations of {read:.2f} of the edges (exact "
          f"{info.iterations} of all), L1 error {error:.2e} ({run.estimate['stopped_by']})")


def test_edge_fraction_per_source_and_label_propagation(directed):
    """k = 2 sources (a window per vertex, every column), and label propagation: rows for
    every vertex, the sources' emulation."""
    sources = device.to_host(directed.vertices)[[0, 5]]
    df, run = onyx.personalized_pagerank(directed, sources, alpha=ALPHA, tol=TOL, weight=False,
                                         return_info=True,
                                         approximation=Approximation(edge_fraction=0.4))
    assert run.estimate["edges_fraction"] < 1 and len(df) == directed.n
    for f, internal in enumerate([0, 5]):
        emulated = _windowed_pagerank(directed, 0.4, run.iterations,
                                      teleport=np.eye(directed.n)[internal])
        assert np.abs(_ranks(df, f"ppr_{f}") - emulated).sum() <= 1e-5
    g = build("undirected", seed=3)
    seeds = np.array([0, 5])
    labels = pd.DataFrame({"vertex": device.to_host(g.vertices)[seeds], "label": [0, 1]})
    # tol 1e-2: 10 iterations instead of 56 at 1e-3 (CI time), every label the oracle's
    lp, info = onyx.label_propagation(g, labels, 2, alpha=ALPHA, tol=1e-2, return_info=True,
                                      approximation=Approximation(edge_fraction=0.5))
    assert info.estimate["edges_fraction"] < 1 and len(lp) == g.n
    lp0 = np.full((g.n, 2), 0.5)  # unlabelled vertices start uniform
    lp0[seeds] = np.eye(2)
    src, dst = csr_edges(g)
    expected = oracles.label_propagation(g.n, src, dst, lp0, np.isin(np.arange(g.n), seeds), 2,
                                         alpha=ALPHA)
    assert lp["label"].tolist()[0] == 0 and lp["label"].tolist()[5] == 1
    agree = (lp["label"].to_numpy() == expected.argmax(axis=1)).mean()
    print(f"label_propagation edge_fraction 0.5: {info.iterations} iterations, labels agree "
          f"on {agree:.0%}")
    assert agree >= 0.8


# ------------------------------------------------------------------- activation_threshold


def test_activation_threshold_decouples_activation_from_tol(directed):
    """tol / n itself is the exact change-driven run, bit for bit; a larger threshold leaves
    fewer vertices active and ends sooner, within PageRank's remainder bound: the unpushed
    changes (below the threshold a vertex) move the fixed point by at most alpha / (1 -
    alpha) n threshold in L1."""
    common = dict(alpha=ALPHA, tol=TOL, weight=False, change_driven=True, return_info=True)
    exact, info = onyx.pagerank(directed, **common)
    same, at_end = onyx.pagerank(
        directed, approximation=Approximation(activation_threshold=TOL / directed.n), **common)
    assert np.array_equal(_ranks(same), _ranks(exact)) and at_end.iterations == info.iterations
    threshold = 1e-3
    df, run = onyx.pagerank(
        directed, approximation=Approximation(activation_threshold=threshold), **common)
    assert run.iterations < info.iterations and set(run.modes) == {"change-driven"}
    src, dst = csr_edges(directed)
    oracle = oracles.pagerank(directed.n, src, dst, alpha=ALPHA)
    error, exact_error = (np.abs(_ranks(x) - oracle).sum() for x in (df, exact))
    print(f"activation_threshold {threshold}: {run.iterations} iterations (exact "
          f"{info.iterations}), L1 error {error:.2e} (exact {exact_error:.2e})")
    assert error <= ALPHA / (1 - ALPHA) * directed.n * threshold + exact_error + 1e-5


# -------------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_rmat16_edge_fraction_half_on_the_gpu():
    """About half the in-edges an iteration on R-MAT 16; prints the normalized L1 error
    against the exact (fused) run and both times (the second call of each, kernels built)."""
    g = onyx.Graph.from_edgelist(datasets.rmat(16, seed=3), directed=True)
    approximation = Approximation(edge_fraction=0.5)
    runs = {}
    for name, kw in (("exact", {}), ("edge_fraction 0.5", dict(approximation=approximation))):
        for _ in range(2):
            started = time.perf_counter()
            df, info = onyx.pagerank(g, return_info=True, **kw)
            seconds = time.perf_counter() - started
        runs[name] = (_ranks(df), info, seconds)
    (reference, exact, t_exact), (rank, approx, t_approx) = runs.values()
    error = np.abs(rank - reference).sum() / np.abs(reference).sum()
    print(f"R-MAT 16 edge_fraction 0.5: {approx.iterations} iterations reading "
          f"{approx.estimate['edges_fraction']:.3f} of the edges, {t_approx * 1e3:.1f} ms; exact "
          f"{exact.iterations} iterations, {t_exact * 1e3:.1f} ms; normalized L1 error "
          f"{error:.3e} ({approx.estimate['stopped_by']})")
    assert 0.5 <= approx.estimate["edges_fraction"] < 0.6 and len(rank) == g.n
    assert error < 0.1 and math.isfinite(error)
