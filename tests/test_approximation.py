"""Approximate processing (issue 37): ``onyx.Approximation``, its registry declarations and
refusals, reduced execution of the propagations against the float64 oracles, RunInfo and the
command line's ``--approx``.

Runs are short (alpha 0.5, a loose ``tol``): every in-kernel measure costs under the CUDA
simulator.
"""

import numpy as np
import pandas as pd
import pytest

import oracles
from graphs import assert_refused, build, csr_edges, run_cli
import onyx_rapids as onyx
from onyx_rapids import Approximation, Execution, datasets, device, inputs, registry

ALPHA, TOL = 0.5, 1e-4


@pytest.fixture(scope="module")
def directed():
    """14 vertices, 3 of them dangling: PageRank's exact test runs on the rows, the
    approximate measures in the vertex kernel."""
    return build("directed", seed=4)


def _ranks(df, column="pagerank"):
    return df[column].to_numpy(dtype=np.float64)


def _oracle(g, **kw):
    src, dst = csr_edges(g)
    return oracles.pagerank(g.n, src, dst, alpha=ALPHA, **kw)


# ------------------------------------------------------------------------------ the value


@pytest.mark.parametrize("knobs, message", [
    (dict(stop_changed_fraction=0), "stop_changed_fraction must be a number in (0, 1), got 0"),
    (dict(stop_changed_fraction=1.0), "stop_changed_fraction must be a number in (0, 1)"),
    (dict(stop_changed_fraction="0.1"), "stop_changed_fraction must be a number in (0, 1), "
                                        "got '0.1' (a str)"),
    (dict(stop_changed_fraction=True), "stop_changed_fraction must be a number"),
    (dict(stop_top_k=0), "stop_top_k must be a positive integer, got 0"),
    (dict(stop_top_k=2.5), "stop_top_k must be a positive integer, got 2.5"),
    (dict(stop_top_k=5, stop_top_k_moves=5), "stop_top_k_moves must be an integer in [0, 4]"),
    (dict(stop_top_k=5, stop_top_k_moves=-1), "stop_top_k_moves must be an integer in [0, 4]"),
    (dict(stop_top_k=5, stop_top_k_moves=1.0), "stop_top_k_moves must be a number in [0, 1)"),
    (dict(stop_top_k=5, stop_top_k_moves="1"), "stop_top_k_moves must be an integer"),
    (dict(stop_top_k=5, stop_top_k_rounds=0), "stop_top_k_rounds must be a positive integer"),
    (dict(stop_top_k_moves=1), "stop_top_k_moves refines stop_top_k: give stop_top_k too"),
    (dict(stop_top_k_rounds=3), "stop_top_k_rounds refines stop_top_k: give stop_top_k too"),
])
def test_each_knob_is_checked_by_name(knobs, message):
    with pytest.raises(ValueError) as e:
        Approximation(**knobs)
    assert message in str(e.value)


def test_knobs_moves_and_execution():
    a = Approximation(stop_top_k=10, stop_top_k_moves=0.25)
    assert (a.knobs(), a.top_k_moves) == ({"stop_top_k": 10, "stop_top_k_moves": 0.25}, 2)
    assert repr(a) == "Approximation(stop_top_k=10, stop_top_k_moves=0.25)"
    assert Approximation(stop_top_k=10, stop_top_k_moves=np.int64(3)).top_k_moves == 3
    assert Approximation(stop_top_k=10).top_k_moves == 0
    assert Execution(approximation=a).approximation is a
    assert Execution().replace(approximation=a).changed() == {"approximation": a}
    with pytest.raises(ValueError, match="approximation must be an onyx_rapids.Approximation"):
        Execution(approximation={"stop_top_k": 10})
    with pytest.raises(TypeError):
        Approximation(merge_jaccard=0.5)  # no stub of a knob not built


# --------------------------------------------------------------------------- the registry


def test_registry_declares_each_algorithms_knobs():
    assert registry.get("pagerank").knobs() == {
        "stop_changed_fraction": "a number in (0, 1)", "stop_top_k": "a positive integer",
        "activation_threshold": "a positive finite number",
        "edge_fraction": "a number in (0, 1]", "merge_similarity": "a number in (0, 1]",
        "degree_normalization": "a number in (0, 1]",
        "replicate_threshold": "a number in (0, 1]", "shared_clustering": "a number in [0, 1]"}
    assert list(registry.get("personalized_pagerank").knobs()) == [
        "stop_changed_fraction", "stop_top_k", "activation_threshold", "edge_fraction",
        "merge_similarity", "degree_normalization"]
    assert list(registry.get("label_propagation").knobs()) == [
        "stop_changed_fraction", "activation_threshold", "edge_fraction"]
    assert registry.get("bfs").knobs() == {}


@pytest.mark.parametrize("call, needles", [
    (lambda g: onyx.bfs(g, 0, approximation=Approximation(stop_changed_fraction=0.1)),
     ["bfs does not support approximation stop_changed_fraction=0.1",
      "its approximation knobs are none"]),
    (lambda g: onyx.sssp(g, 0, execution=Execution(
        approximation=Approximation(stop_top_k=3))),
     ["sssp does not support approximation stop_top_k=3"]),
    (lambda g: onyx.label_propagation(g, pd.DataFrame({"vertex": [0], "label": [0]}), k=2,
                                      approximation=Approximation(stop_top_k=3,
                                                                  stop_top_k_rounds=2)),
     ["label_propagation does not support approximation stop_top_k=3",
      "its approximation knobs are stop_changed_fraction"]),
    (lambda g: onyx.pagerank(g, fused=True,
                             approximation=Approximation(stop_changed_fraction=0.1)),
     ["pagerank does not support fused=True with approximation=Approximation("
      "stop_changed_fraction=0.1)",
      "the fused kernel runs exact iterations"]),
])
def test_unsupported_knob_is_refused_by_name(call, needles):
    assert_refused(call, needles)


def test_declared_range_narrows_and_unknown_knob_fails_at_import():
    table = {}

    @registry.algorithm("narrow", summary="-", columns=("vertex",), options={}, into=table,
                        approximation=dict(stop_top_k=inputs.Int(1, 8)))
    def narrow(g, *, execution):
        return execution

    assert table["narrow"].knobs() == {"stop_top_k": "an integer in [1, 8]"}
    assert narrow(None, approximation=Approximation(stop_top_k=8)).approximation.stop_top_k == 8
    with pytest.raises(ValueError, match=r"narrow does not support approximation stop_top_k=9: "
                                         r"stop_top_k must be an integer in \[1, 8\]"):
        narrow(None, approximation=Approximation(stop_top_k=9))
    with pytest.raises(ValueError, match="unknown approximation knob"):
        registry.algorithm("bad", summary="-", columns=(), options={}, into={},
                           approximation=dict(merge_jaccard=None))


# ------------------------------------------------------------------------ reduced execution


def test_none_is_the_exact_run_bit_for_bit(directed):
    plain, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True)
    for kw in (dict(approximation=None), dict(execution=Execution(approximation=None))):
        df, again = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True, **kw)
        assert np.array_equal(_ranks(df), _ranks(plain))
        assert again.as_dict() == info.as_dict() and again.approximation is None
        assert "approximation" not in df.attrs


@pytest.mark.parametrize("knobs", [dict(stop_changed_fraction=1e-6, stop_changed_relative=1e-12),
                                   dict(stop_top_k=3, stop_top_k_rounds=100)],
                         ids=["fraction-below-1/n-relative-tiny", "top-k-never-stable-long"])
def test_knob_at_its_exact_end_gives_the_exact_result(directed, knobs):
    exact, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, fused=False, return_info=True)
    df, approx = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True,
                               approximation=Approximation(**knobs))
    assert approx.estimate["stopped_by"] == "tol"
    assert approx.iterations == info.iterations and approx.converged
    assert np.abs(_ranks(df) - _ranks(exact)).sum() <= TOL


def _check_early(g, df, info, exact_iterations, knob, column="pagerank", teleport=None):
    """Stopped by ``knob`` before the exact run, a row per vertex, and the error against the
    float64 oracle within bulk PageRank's bound from the last L1 change; the ranks are the
    oracle's after as many iterations."""
    assert info.estimate["stopped_by"] == knob and info.converged
    assert info.iterations < exact_iterations
    assert len(df) == g.n and (df["vertex"].to_numpy() == device.to_host(g.vertices)).all()
    rank = _ranks(df, column)
    error = np.abs(rank - _oracle(g, teleport=teleport)).sum()
    assert error <= ALPHA / (1 - ALPHA) * info.estimate["l1_change"] + 1e-5
    truncated = _oracle(g, teleport=teleport, tol=0.0, max_iter=info.iterations)
    assert np.abs(rank - truncated).sum() <= 1e-5
    print(f"{knob}: {info.iterations} iterations (exact {exact_iterations}), L1 error {error:.2e}")
    return error


def test_loose_knobs_stop_earlier_within_the_bound(directed):
    _, exact = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True)
    knobs = Approximation(stop_changed_fraction=0.9)
    df, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, approximation=knobs,
                             return_info=True)
    assert info.approximation == {"stop_changed_fraction": 0.9} == df.attrs["approximation"]
    assert info.estimate["changed_fraction"] < 0.9 and "top_k_moves" not in info.estimate
    _check_early(directed, df, info, exact.iterations, "stop_changed_fraction")
    df, info = onyx.pagerank(directed, alpha=ALPHA, tol=TOL, return_info=True,
                             execution=Execution(approximation=Approximation(stop_top_k=3)))
    assert info.estimate["top_k_moves"] == 0
    _check_early(directed, df, info, exact.iterations, "stop_top_k")


def test_top_k_per_source_on_the_rows_of_the_folded_push(directed):
    """Two sources (a top-k set per column), folded push: measured on the rows."""
    sources = device.to_host(directed.vertices)[[0, 5]]
    _, exact = onyx.personalized_pagerank(directed, sources, alpha=ALPHA, tol=TOL,
                                          return_info=True)
    df, info = onyx.personalized_pagerank(
        directed, sources, alpha=ALPHA, tol=TOL, fold=True, direction="push", return_info=True,
        approximation=Approximation(stop_top_k=4, stop_top_k_moves=1, stop_top_k_rounds=2))
    assert info.fused is False and info.directions[-1] == "push"
    for f, internal in enumerate([0, 5]):
        _check_early(directed, df, info, exact.iterations, "stop_top_k", f"ppr_{f}",
                     teleport=np.eye(directed.n)[internal])
    with pytest.raises(ValueError, match="stop_top_k=15 must be at most the graph's 14"):
        onyx.personalized_pagerank(directed, sources[:1],
                                   approximation=Approximation(stop_top_k=15))


def test_change_driven_label_propagation_stops_earlier():
    """Change-driven (its measures in the change-driven vertex kernel) label propagation;
    the exact end of stop_changed_fraction is the exact test."""
    g = build("undirected", seed=3)
    seeds = np.array([0, 5])
    labels = pd.DataFrame({"vertex": device.to_host(g.vertices)[seeds], "label": [0, 1]})
    src, dst = csr_edges(g)
    lp0 = np.full((g.n, 2), 0.5)  # unlabelled vertices start uniform
    lp0[seeds] = np.eye(2)
    labelled = np.zeros(g.n, bool)
    labelled[seeds] = True
    expected = oracles.label_propagation(g.n, src, dst, lp0, labelled, 2, alpha=ALPHA)
    rows = ["lp_0", "lp_1"]
    common = dict(alpha=ALPHA, tol=1e-2, change_driven=True, feature_aware=False,
                  return_info=True)
    exact, info = onyx.label_propagation(g, labels, 2, **common)
    end, at_end = onyx.label_propagation(
        g, labels, 2, approximation=Approximation(stop_changed_fraction=1e-6), **common)
    assert at_end.estimate["stopped_by"] == "tol" and at_end.iterations == info.iterations
    assert np.array_equal(end[rows].to_numpy(), exact[rows].to_numpy())
    df, loose = onyx.label_propagation(
        g, labels, 2, approximation=Approximation(stop_changed_fraction=0.5), **common)
    assert loose.estimate["stopped_by"] == "stop_changed_fraction"
    assert loose.iterations < info.iterations and len(df) == g.n
    assert set(loose.modes) == {"change-driven"}
    # no further from the fixed point than the exact iteration after as many steps, but for
    # the change-driven remainders (below tol a vertex, a few neighbours each)
    error = np.abs(df[rows].to_numpy() - expected).max()
    truncated = oracles.label_propagation(g.n, src, dst, lp0, labelled, 2, alpha=ALPHA, tol=0.0,
                                          max_iter=loose.iterations)
    print(f"label_propagation: {loose.iterations} iterations (exact {info.iterations}), "
          f"max error {error:.2e}, {np.abs(truncated - expected).max():.2e} truncated")
    assert error <= np.abs(truncated - expected).max() + 2e-2


# ------------------------------------------------------------------------- command line


def test_cli_approx(capsys, tmp_path):
    edges = tmp_path / "edges.parquet"
    pd.DataFrame({"src": [0, 1, 2, 3, 4, 0], "dst": [1, 2, 3, 4, 0, 2]}).to_parquet(edges,
                                                                               index=False)
    code, out, err = run_cli(capsys, "run", "pagerank", "--graph", edges, "--src", "src", "--dst",
                          "dst", "--quiet", "--approx", "stop_top_k=2,stop_top_k_rounds=2")
    assert code == 0, err
    line = next(x for x in err.splitlines() if x.startswith("approximation"))
    assert "stop_top_k=2,stop_top_k_rounds=2" in line and "stopped_by stop_top_k" in line
    assert "(5 rows)" in out
    for argv, needles in [
        (["pagerank", "--approx", "stop_top_k=0"], ["--approx", "stop_top_k must be a positive "
                                                    "integer, got 0"]),
        (["pagerank", "--approx", "merge_jaccard=0.5"], ["'merge_jaccard=0.5' is not KNOB=VALUE",
                                                         "stop_changed_fraction"]),
        (["pagerank", "--approx", "stop_top_k"], ["'stop_top_k' is not KNOB=VALUE"]),
        (["bfs", "--approx", "stop_changed_fraction=0.1"],
         ["bfs does not support approximation stop_changed_fraction=0.1"]),
        (["pagerank", "--param", "stop_top_k=3"], ["stop_top_k is an approximation knob: give "
                                                  "it as --approx stop_top_k=3"]),
    ]:
        code, _, err = run_cli(capsys, "run", *argv)
        assert code == 2, err
        for needle in needles:
            assert needle in err, err
    code, out, _ = run_cli(capsys, "list")
    assert "--approx: stop_changed_fraction (a number in (0, 1)), stop_top_k (a positive " \
           "integer), activation_threshold (a positive finite number), edge_fraction (a number " \
           "in (0, 1])" in out


# -------------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@pytest.mark.parametrize("knobs", [dict(stop_changed_fraction=0.01),
                                   dict(stop_top_k=100, stop_top_k_rounds=2)],
                         ids=["changed-fraction", "top-100"])
def test_rmat16_reduced_execution_on_the_gpu(knobs):
    """Fewer iterations than the exact (fused) run, the normalized L1 error against it printed
    and within the bound from the last L1 change (and the exact run's from tol).  A vertex
    moved by more than a thousandth of its rank (``stop_changed_relative``'s default) until
    a few iterations before the exact stop, so a fraction of 1% stops earlier."""
    g = onyx.Graph.from_edgelist(datasets.rmat(16, seed=3), directed=True)
    exact, info = onyx.pagerank(g, return_info=True)
    df, approx = onyx.pagerank(g, return_info=True, approximation=Approximation(**knobs))
    rank, reference = _ranks(df), _ranks(exact)
    error = np.abs(rank - reference).sum() / np.abs(reference).sum()
    print(f"R-MAT 16 {knobs}: {approx.iterations} iterations against {info.iterations} exact, "
          f"normalized L1 error {error:.3e}, estimate {approx.estimate}")
    assert approx.estimate["stopped_by"] == next(iter(knobs))
    assert approx.iterations < info.iterations and len(df) == g.n
    assert error <= 0.85 / 0.15 * (approx.estimate["l1_change"] + 1e-6) + 5e-5
