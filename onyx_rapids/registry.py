"""Every public algorithm, declared once: its function, inputs, result columns and the
execution options it supports.

The command line, the benchmark harness and the tests' variant matrices read
:data:`ALGORITHMS` instead of keeping lists of their own; each input names its kind
(:mod:`onyx_rapids.inputs`), which normalizes the value, gives the command line's default and
generates the benchmarks' inputs::

    >>> import onyx_rapids as onyx
    >>> spec = onyx.registry.get("pagerank")
    >>> spec.columns
    ('vertex', 'pagerank')
    >>> "change_driven" in spec.options
    True

An algorithm module declares itself with the :func:`algorithm` decorator, which also makes the
function accept ``execution=`` and the :class:`~onyx_rapids.execution.Execution` fields as
keywords, and checks every call in one place, before any work: its numeric parameters
(``alpha``, ``tol``, ``max_iter``, ``k``, ``delta``...: each declared with a kind from
:mod:`onyx_rapids.inputs`, :data:`PARAMS` holding the shared ones) with messages naming the
argument, its legal values and the value; keywords it does not take; options it does not
support, combinations it declares illegal, options that do not apply to the variant being
run (bfs's ``filter`` with ``sources=``) and approximation knobs it does not support
(``approximation=``: the knobs of :class:`~onyx_rapids.approximation.Approximation` it
declares, with their ranges), all with one kind of message::

    >>> onyx.pagerank(None, alpha="0.85")
    Traceback (most recent call last):
    ...
    ValueError: pagerank: alpha must be a number in (0, 1), got '0.85' (a str)
    >>> onyx.bfs(None, 0, approximation=onyx.Approximation(stop_changed_fraction=0.01))
    Traceback (most recent call last):
    ...
    ValueError: bfs does not support approximation stop_changed_fraction=0.01: its approximation knobs are none
"""

from __future__ import annotations

import functools
import inspect
import itertools
from dataclasses import dataclass, field
from typing import Callable, Mapping

from . import approximation as approx, inputs as input_kinds, memory, profiling, streaming
from .execution import OPTIONS, Execution, checked_options

__all__ = ["ALGORITHMS", "CHANGED", "PARAMS", "Algorithm", "Input", "Refuse", "algorithm", "get",
           "unsupported", "variant_name"]

GRAPH_KINDS = ("any", "undirected", "bipartite", "directed")
WEIGHTS = ("used", "required", "ignored")
#: The axes of the variant matrix (ONYX Table 7.2 for the propagations, SIMD-X's for traversals)
VARIANT_AXES = ("feature_aware", "change_driven", "fold", "direction", "filter", "fused")


#: The parameters many algorithms share, declared once (an algorithm's ``params=`` adds its
#: own and overrides these: feature_propagation's ``alpha`` may be 0 or 1).
PARAMS = {
    "alpha": input_kinds.Float(0, 1, low_open=True, high_open=True),
    "tol": input_kinds.Float(0, low_open=True),
    "max_iter": input_kinds.Int(1),
    "iterations": input_kinds.Int(0),
}

#: A :class:`Refuse` value: the option differs from the :class:`Execution` default (the
#: user gave it), whatever its value.
CHANGED = type("Changed", (), {"__repr__": lambda self: "CHANGED"})()


@dataclass(frozen=True)
class Input:
    """One input an algorithm needs besides the graph: its parameter name and kind (an
    :class:`onyx_rapids.inputs.Kind`, or the name of one)."""

    name: str
    kind: input_kinds.Kind
    required: bool = True
    help: str = ""

    def __post_init__(self):
        object.__setattr__(self, "kind", input_kinds.kind(self.kind))


@dataclass(frozen=True)
class Refuse:
    """An illegal combination: every option in ``when`` has (one of) the given value(s), or,
    for :data:`CHANGED`, was given a value other than the default.  ``inputs`` names the
    variant the rule is about: input name -> whether the call passes it (bfs from
    ``sources=`` takes no ``filter``); ``variant`` says it in words for the message.
    ``knobs`` names approximation knobs the rule is about: it applies only while they are
    all on (with ``approximation=CHANGED`` in ``when``, the message shows them)."""

    when: Mapping[str, object]
    reason: str
    inputs: Mapping[str, bool] = field(default_factory=dict)
    variant: str = ""
    knobs: tuple = ()

    def matches(self, execution: Execution, changed: dict | None = None, given=None) -> bool:
        """Whether the rule refuses ``execution`` (its defaults filled in), of which the
        caller ``changed`` those options, on a call passing the inputs ``given`` (None:
        rules about a variant do not apply)."""
        if self.inputs and (given is None or any((name in given) != passed
                                                 for name, passed in self.inputs.items())):
            return False
        on = execution.approximation.knobs() if execution.approximation is not None else {}
        if any(knob not in on for knob in self.knobs):
            return False
        for name, value in self.when.items():
            if value is CHANGED:
                if name not in (changed or {}):
                    return False
                continue
            legal = value if isinstance(value, tuple) else (value,)
            if getattr(execution, name) not in legal:
                return False
        return True


@dataclass(frozen=True)
class Algorithm:
    """An algorithm's declaration; see the module docstring."""

    name: str
    function: Callable
    summary: str
    graph: str
    weights: str
    inputs: tuple
    columns: tuple
    options: Mapping[str, tuple | None]
    iterative: bool = True
    defaults: Mapping[str, object] = field(default_factory=dict)
    refuse: tuple = ()
    param_kinds: Mapping[str, input_kinds.Kind] = field(default_factory=dict)
    approximation: Mapping[str, input_kinds.Kind | None] = field(default_factory=dict)

    def resolve(self, execution=None, *, given=None, **options) -> Execution:
        """The execution this algorithm runs: ``execution`` (default: ``Execution()``) with
        ``options`` applied, checked against what the algorithm supports (``given``: the
        inputs the call passes, for the rules about a variant), its defaults filled in for
        the options left at None.  ValueError names the algorithm and the option.  Every
        algorithm takes ``tuning`` (its registry wrapper hands the call to
        :func:`onyx_rapids.tuning.run_tuned`)."""
        if execution is None:
            execution = Execution()
        elif not isinstance(execution, Execution):
            raise TypeError(f"{self.name}: execution must be an onyx_rapids.Execution, got "
                            f"{type(execution).__name__}")
        if options:
            execution = execution.replace(**options)
        self._check_knobs(execution.approximation)
        for name, value in execution.changed().items():
            if name not in self.options and name not in ("approximation", "tuning"):
                supported = ", ".join(self.options) or "none"
                raise unsupported(self.name, f"{name}={value!r}",
                                  f"its execution options are {supported}")
        for name, legal in self.options.items():
            value = getattr(execution, name)
            if legal is not None and value is not None and value not in legal:
                shown = ", ".join(repr(x) for x in legal)
                raise unsupported(self.name, f"{name}={value!r}", f"{name} must be {shown}")
        changed = execution.changed()
        fill = {k: v for k, v in self.defaults.items() if getattr(execution, k) is None}
        if fill:
            execution = execution.replace(**fill)
        for rule in self.refuse:
            if rule.matches(execution, changed, given):
                shown = " with ".join(f"{k}={getattr(execution, k)!r}" for k in rule.when)
                raise unsupported(self.name, shown + (f" {rule.variant}" if rule.variant
                                                      else ""), rule.reason)
        return execution

    def knobs(self) -> dict:
        """The approximation knobs the algorithm supports, each with its legal values in
        words (its declared range, else the knob's own, ``approximation.RANGES``)."""
        return {knob: (kind or approx.RANGES[knob]).describe()
                for knob, kind in self.approximation.items()}

    def _check_knobs(self, approximation):
        """Refuse the knobs of ``approximation`` the algorithm does not support, and values
        outside the range it declares, naming the knob and what it supports."""
        if approximation is None:
            return
        for name, value in approximation.knobs().items():
            knob = approx.knob_of(name)
            if knob not in self.approximation:
                supported = ", ".join(self.approximation) or "none"
                raise unsupported(self.name, f"approximation {name}={value!r}",
                                  f"its approximation knobs are {supported}")
            narrower = self.approximation[knob]
            if name == knob and narrower is not None:
                try:
                    narrower.check(value, name)
                except ValueError as e:
                    raise unsupported(self.name, f"approximation {name}={value!r}",
                                      str(e)) from None

    def check_call(self, args: tuple, kwargs: dict):
        """``(args, kwargs, given)`` of a call ``f(g, *args, **kwargs)`` (execution options
        taken out): the declared parameters and count inputs checked and normalized (their
        kinds' :meth:`~onyx_rapids.inputs.Kind.check`), ``given`` the declared inputs it
        passes.  A keyword the function does not take raises TypeError saying what it
        takes; a bad value ValueError naming the algorithm and the argument."""
        signature = _signature(self.function.__wrapped__)
        unknown = [k for k in kwargs if k not in signature.parameters]
        if unknown:
            raise unsupported(self.name, f"{unknown[0]}={kwargs[unknown[0]]!r}",
                              self.takes(), error=TypeError)
        bound = signature.bind_partial(None, *args, **kwargs)
        for name, value in list(bound.arguments.items())[1:]:
            kind = self.param_kinds.get(name) or self._input_kinds().get(name)
            if kind is not None:
                try:
                    bound.arguments[name] = kind.check(value, name)
                except ValueError as e:
                    raise ValueError(f"{self.name}: {e}") from None
        given = {i.name for i in self.inputs if bound.arguments.get(i.name) is not None}
        return bound.args[1:], bound.kwargs, given

    def _input_kinds(self) -> dict:
        return {i.name: i.kind for i in self.inputs}

    def takes(self) -> str:
        """What the algorithm takes besides the graph, for messages: its inputs, parameters
        and execution options."""
        parts = [("inputs", [i.name for i in self.inputs]), ("parameters", self.params),
                 ("execution options", list(self.options))]
        return "; ".join(f"its {what} are {', '.join(names)}" if names else f"it has no {what}"
                         for what, names in parts)

    def variants(self, given=None) -> list[dict]:
        """Every supported combination of the variant axes (feature_aware x change_driven x
        fold x direction for the propagations; direction x filter x fused for traversals)
        that the algorithm does not refuse on a call passing the inputs ``given`` (default:
        those a default run passes, :func:`onyx_rapids.inputs.wanted`: bfs from one
        ``source``), as keyword dicts."""
        if given is None:
            given = {i.name for i in input_kinds.wanted(self, set())}
        # options the variant refuses whatever their value (bfs's filter from k sources)
        moot = {name for rule in self.refuse if rule.inputs and rule.matches(
                    Execution(), dict.fromkeys(rule.when), given)
                for name in rule.when}
        axes, values = [], []
        for name in VARIANT_AXES:
            if name not in self.options or name in moot:
                continue
            legal = self.options[name]
            if legal is None:
                legal = {"feature_aware": (True, False), "change_driven": (False, True),
                         "fold": (False, True), "fused": (False, True),
                         "direction": ("pull", "push"), "filter": ("jit",)}[name]
            legal = tuple(v for v in legal if v not in (None, "auto"))
            if legal:
                axes.append(name)
                values.append(legal)
        out = []
        for combo in itertools.product(*values):
            options = dict(zip(axes, combo))
            try:
                self.resolve(given=given, **options)
            except ValueError:
                continue
            out.append(options)
        return out

    @property
    def required_inputs(self) -> tuple:
        return tuple(i for i in self.inputs if i.required)

    @property
    def params(self) -> list[str]:
        """The mathematical parameters (``alpha``, ``tol``, ...): the function's parameters
        other than the graph, the declared inputs, the execution options, ``execution`` and
        ``return_info``."""
        skip = {i.name for i in self.inputs} | set(OPTIONS) | {"execution", "return_info"}
        parameters = list(inspect.signature(self.function).parameters.items())[1:]
        return [name for name, p in parameters
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and name not in skip]


#: name -> :class:`Algorithm`, in declaration order; complete once ``onyx_rapids`` is imported.
ALGORITHMS: dict[str, Algorithm] = {}


def get(name: str) -> Algorithm:
    """The declaration of algorithm ``name`` (ValueError listing the known names)."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; the algorithms are "
                         f"{', '.join(ALGORITHMS)}") from None


def variant_name(options: dict) -> str:
    """``FA/NCD/fold/pull``-style name of an options dict, e.g. one of ``variants()``
    ("default" when empty)."""
    words = {"feature_aware": ("FA", "NFA"), "change_driven": ("CD", "NCD"),
             "fold": ("fold", "unfold"), "fused": ("fused", "unfused")}
    order = ("feature_aware", "change_driven", "fold", "filter", "fused", "direction")
    parts = []
    for key in order:
        if key in options and options[key] is not None:
            v = options[key]
            parts.append(words[key][0 if v else 1] if key in words else str(v))
    parts += [f"{k}={v}" for k, v in options.items() if k not in order]
    return "/".join(parts) or "default"


def unsupported(name: str, given: str, reason: str, error=ValueError) -> Exception:
    """The one error for an option or keyword an algorithm cannot honour (raise it): a
    ValueError, or ``error`` (TypeError for a keyword the function does not take)."""
    return error(f"{name} does not support {given}: {reason}")


@functools.lru_cache(maxsize=None)
def _signature(function) -> inspect.Signature:
    return inspect.signature(function)


def _param_kinds(name: str, function, params: Mapping) -> dict:
    """The kinds of ``function``'s parameters: ``params``, else :data:`PARAMS` by name.  A
    parameter whose default is a number must have one (ValueError at import otherwise), so
    that no numeric parameter goes unchecked."""
    kinds = {}
    for pname, p in list(_signature(function).parameters.items())[1:]:
        kind = params.get(pname, PARAMS.get(pname))
        numeric = isinstance(p.default, (int, float)) and not isinstance(p.default, bool)
        if kind is None and numeric:
            raise ValueError(f"{name}: declare the kind of parameter {pname!r} (params=)")
        if kind is not None:
            kinds[pname] = input_kinds.kind(kind)
    unknown = sorted(set(params) - set(_signature(function).parameters))
    if unknown:
        raise ValueError(f"{name}: params= names no parameter of the function: {unknown}")
    return kinds


def algorithm(name, *, summary, columns, options, graph="any", weights="ignored", inputs=(),
              iterative=True, defaults=None, refuse=(), params=None, approximation=None,
              into=None):
    """Declare the decorated function as algorithm ``name`` (see :class:`Algorithm`) in
    ``into`` (default :data:`ALGORITHMS`; :mod:`onyx_rapids.dask` keeps its own table).

    The function is written as ``f(g, <math parameters>, *, execution, ...)`` and receives a
    resolved :class:`Execution` and checked parameters; callers may pass ``execution=``
    and/or option keywords.  ``params`` maps parameter names to their kinds
    (:class:`onyx_rapids.inputs.Number`...) where :data:`PARAMS` has none or another.
    ``approximation`` maps the knobs of :data:`onyx_rapids.approximation.KNOBS` the algorithm
    supports to None (the knob's whole range) or a :class:`~onyx_rapids.inputs.Number`
    narrowing it.
    """
    if graph not in GRAPH_KINDS:
        raise ValueError(f"graph must be one of {GRAPH_KINDS}, got {graph!r}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{name}: unknown execution option(s) {unknown}")
    unknown = sorted(set(approximation or {}) - set(approx.KNOBS))
    if unknown:
        raise ValueError(f"{name}: unknown approximation knob(s) {unknown}")

    def register(function):
        @functools.wraps(function)
        def run(g, *args, execution=None, **kwargs):
            chosen = {k: kwargs.pop(k) for k in list(kwargs) if k in OPTIONS}
            tuned = chosen.pop("tuning", None) if "tuning" in chosen else getattr(
                execution, "tuning", None)
            if tuned is not None:  # the tuner chooses, then calls run again untuned
                from . import tuning

                checked_options(tuning=tuned)
                return tuning.run_tuned(spec, g, args, kwargs, execution, chosen, tuned)
            args, kwargs, given = spec.check_call(args, kwargs)
            execution = spec.resolve(execution, given=given, **chosen)
            with memory.running(name), streaming.session(), profiling.call():
                return function(g, *args, execution=execution, **kwargs)

        spec = Algorithm(name=name, function=run, summary=summary, graph=graph,
                         weights=weights, inputs=tuple(inputs), columns=tuple(columns),
                         options=dict(options), iterative=iterative,
                         defaults=dict(defaults or {}), refuse=tuple(refuse),
                         param_kinds=_param_kinds(name, function, dict(params or {})),
                         approximation=dict(approximation or {}))
        run.spec = spec
        (ALGORITHMS if into is None else into)[name] = spec
        return run

    return register
