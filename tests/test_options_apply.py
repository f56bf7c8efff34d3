"""Arguments checked in one place, options that do not apply refused (issue 35): every numeric
parameter of the registry's algorithms validated with its name, the value and the legal range
(bools and strings refused); keywords a function does not take and options of another variant
(bfs's ``filter`` from k sources) refused with the registry's one message, in the library and
the command line.  Cheap: the refusals come before any kernel."""

import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import cli, inputs, io, registry
from onyx_rapids.dask.algorithms import ALGORITHMS as DASK_ALGORITHMS
from onyx_rapids.graph import Graph


@pytest.fixture(scope="module")
def g():
    return Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 3]}),
                               directed=False)


def _required(spec):
    """Positional stand-ins for ``spec``'s required inputs: a valid count for k, None for
    the rest (the checks run before the function reads them)."""
    return [2 if isinstance(i.kind, inputs.Number) else None for i in spec.required_inputs]


def _all_specs():
    """Every registered spec, each with an id that is the same in every process (pytest-xdist's
    workers must collect the same tests)."""
    return [*(pytest.param(s, id=s.name) for s in registry.ALGORITHMS.values()),
            *(pytest.param(s, id=f"dask-{s.name}") for s in DASK_ALGORITHMS.values())]


# ------------------------------------------------------------------------ numbers


@pytest.mark.parametrize("call, match", [
    (lambda g: onyx.pagerank(g, alpha="0.85"),
     r"pagerank: alpha must be a number in \(0, 1\), got '0.85' \(a str\)"),
    (lambda g: onyx.pagerank(g, 0.85, 1e-6, True), "pagerank: max_iter must be a positive "
                                                    "integer, got True"),
    (lambda g: onyx.pagerank(g, tol=float("nan")), "tol must be a positive finite number"),
    (lambda g: onyx.personalized_pagerank(g, [0], alpha=1), r"alpha must be a number in \(0, 1\)"),
    (lambda g: onyx.label_propagation(g, {0: 0}, "2"),
     r"label_propagation: k \(classes per partition\) must be a positive integer, got '2'"),
    (lambda g: onyx.label_propagation(g, {0: 0}, 2, clamp=1), "clamp must be True or False"),
    (lambda g: onyx.label_propagation(g, {0: 0}, 2, max_iter=2.5), "max_iter"),
    (lambda g: onyx.sssp(g, source=0, delta=True), "sssp: delta must be a positive finite "
                                                   "number or None, got True"),
    (lambda g: onyx.feature_propagation(g, np.ones(4), alpha=1.5),
     r"feature_propagation: alpha must be a number in \[0, 1\], got 1.5"),
    (lambda g: onyx.feature_propagation(g, np.ones(4), iterations=-1),
     "iterations must be a non-negative integer"),
    (lambda g: onyx.als(g, 2, lam="0.1"), "als: lam must be a positive finite number"),
    (lambda g: onyx.als(g, 40), r"als: k must be an integer in \[1, 31\], got 40"),
    (lambda g: onyx.k_core(g, True), "k_core: k must be a non-negative integer, got True"),
    (lambda g: onyx.belief_propagation(g, None, None, tol=-1), "tol must be a positive"),
    (lambda g: onyx.weakly_connected_components(g, method="propagate", jump_every=0.5),
     "jump_every must be a positive integer or None"),
])
def test_numeric_parameters_are_named_with_their_range(g, call, match):
    with pytest.raises(ValueError, match=match):
        call(g)


@pytest.mark.parametrize("spec", _all_specs())
def test_every_numeric_parameter_is_declared_and_checked(spec):
    """Every parameter with a numeric default has a kind, and each kind refuses a string and a
    bool by name on the algorithm's own entry point."""
    sig = registry._signature(spec.function.__wrapped__)
    for name, p in sig.parameters.items():
        if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
            assert name in spec.param_kinds, f"{spec.name}.{name} is not declared"
    for name, kind in spec.param_kinds.items():
        if not isinstance(kind, inputs.Number):
            continue
        for bad in ("1", True):
            with pytest.raises(ValueError, match=f"{spec.name}: {name} must be"):
                spec.function(None, *_required(spec), **{name: bad})


def test_checked_values_are_normalized():
    spec = registry.get("pagerank")
    args, kwargs, given = spec.check_call((), dict(alpha=np.float32(0.5), max_iter=10.0,
                                                   personalization={0: 1.0}))
    assert args == (0.5,) and type(args[0]) is float  # bound as the function declares it
    assert kwargs["max_iter"] == 10 and type(kwargs["max_iter"]) is int
    assert kwargs["personalization"] == {0: 1.0} and given == {"personalization"}
    args, _, given = registry.get("k_core").check_call((np.int64(2),), {})
    assert args == (2,) and type(args[0]) is int and given == {"k"}


def test_cli_params_are_checked_before_the_graph_is_read(capsys):
    for value, needles in (("alpha=abc", ("--param 'alpha=abc'", "alpha must be a number in "
                                          "(0, 1), got 'abc'")),
                           ("max_iter=true", ("max_iter must be a positive integer, got True",)),
                           ("tol=-1", ("tol must be a positive finite number",))):
        code = cli.main(["run", "pagerank", "--graph", "/nonexistent.parquet", "--param",
                         value])
        err = capsys.readouterr().err
        assert code == 2 and "no such file" not in err, err
        for needle in needles:
            assert needle in err, err
    assert cli.main(["list"]) == 0
    assert "alpha (a number in (0, 1))" in capsys.readouterr().out


# ---------------------------------------------------------------- keywords and options


@pytest.mark.parametrize("call, error, match", [
    (lambda g: onyx.pagerank(g, k=3), TypeError,
     r"pagerank does not support k=3: its inputs are personalization; its parameters are "
     r"alpha, tol, max_iter, weight; its execution options are feature_aware"),
    (lambda g: onyx.bfs(g, source=0, weight="w"), TypeError, "bfs does not support weight='w'"),
    (lambda g: onyx.core_number(g, k=2), TypeError,
     "core_number does not support k=2: it has no inputs; it has no parameters"),
    (lambda g: onyx.bfs(g, sources=[0, 1], filter="ballot"), ValueError,
     r"bfs does not support filter='ballot' from k sources \(sources=\): k sources run as one "
     r"k-feature property through edgemap"),
    (lambda g: onyx.bfs(g, sources=[0, 1], threshold=8), ValueError, "threshold=8 from k"),
    (lambda g: onyx.bfs(g, sources=[0, 1], fused=True), ValueError, "fused=True from k"),
    (lambda g: onyx.bfs(g, sources=[0, 1], fused=False), ValueError, "fused=False from k"),
    (lambda g: onyx.sssp(g, sources=[0, 1], edge_access="merged"), ValueError,
     "sssp does not support edge_access='merged' from k sources"),
    (lambda g: onyx.bfs(g, source=0, feature_aware=False), ValueError,
     "bfs does not support feature_aware=False from one source"),
    (lambda g: onyx.sssp(g, start=0), TypeError, "sssp does not support start=0"),
])
def test_options_and_keywords_that_do_not_apply_are_refused(g, call, error, match):
    with pytest.raises(error, match=match):
        call(g)


def test_an_option_left_at_its_default_applies_to_every_variant(g):
    """filter="jit" is the default: an Execution shared by both variants is not refused."""
    df = io.to_pandas(onyx.bfs(g, sources=[0, 3], execution=onyx.Execution(filter="jit")))
    assert df["distance_0"].tolist() == [0, 1, 2, 3] and df["distance_1"].tolist() == [3, 2, 1, 0]


def test_variants_follow_the_inputs_given():
    """variants() lists what a default run (one source) takes; given k sources, the axes of
    the one-source engine drop and feature_aware appears; every listed variant resolves."""
    for name in ("bfs", "sssp"):
        spec = registry.get(name)
        one = spec.variants()
        many = spec.variants(given={"sources"})
        assert one and all("feature_aware" not in v and "fused" in v for v in one)
        assert {v["feature_aware"] for v in many} == {True, False}
        assert all("filter" not in v and "fused" not in v for v in many)
        for given, listed in (({"source"}, one), ({"sources"}, many)):
            for v in listed:
                spec.resolve(given=given, **v)


def test_variant_rules_name_declared_inputs():
    for spec in (param.values[0] for param in _all_specs()):
        names = {i.name for i in spec.inputs}
        for rule in spec.refuse:
            assert set(rule.inputs) <= names, (spec.name, rule)
            knobs = {"approximation"} if getattr(spec, "approximation", None) else set()
            assert set(rule.when) <= set(spec.options) | knobs, (spec.name, rule)


def test_cli_refuses_flags_that_do_not_apply(capsys, tmp_path):
    init = tmp_path / "init.parquet"
    pd.DataFrame({"vertex": [0], "a": [1.0]}).to_parquet(init)
    for argv, needles in (
        (["run", "pagerank", "--k", "3"], ("pagerank does not take --k", "--personalization is "
                                           "optional")),
        (["run", "multimodal_learning", "--k", "2", "--init", init],
         ("multimodal_learning does not take --k: the columns come from --init",)),
        (["run", "bfs", "--weight", "w"], ("bfs does not take --weight",)),
        (["run", "bfs", "--sources", "0,33", "--filter", "ballot"],
         ("bfs does not support filter='ballot' from k sources",)),
        (["run", "sssp", "--no-feature-aware"], ("sssp does not support feature_aware=False "
                                                 "from one source",)),
    ):
        code = cli.main([str(a) for a in argv])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "loading" not in err and "reading graph" not in err, err  # refused first
        for needle in needles:
            assert needle in err, err
