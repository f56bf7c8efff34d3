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
keywords, and refuses options the algorithm does not support (and combinations it declares
illegal) in one place, with one kind of message.
"""

from __future__ import annotations

import functools
import inspect
import itertools
from dataclasses import dataclass, field
from typing import Callable, Mapping

from . import inputs as input_kinds, memory, profiling, streaming
from .execution import OPTIONS, Execution

__all__ = ["ALGORITHMS", "Algorithm", "Input", "Refuse", "algorithm", "get", "unsupported",
           "variant_name"]

GRAPH_KINDS = ("any", "undirected", "bipartite")
WEIGHTS = ("used", "required", "ignored")
#: The axes of the variant matrix (ONYX Table 7.2 for the propagations, SIMD-X's for traversals)
VARIANT_AXES = ("feature_aware", "change_driven", "fold", "direction", "filter", "fused")


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
    """An illegal combination: every option in ``when`` has (one of) the given value(s)."""

    when: Mapping[str, object]
    reason: str

    def matches(self, execution: Execution) -> bool:
        for name, value in self.when.items():
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

    def resolve(self, execution=None, **options) -> Execution:
        """The execution this algorithm runs: ``execution`` (default: ``Execution()``) with
        ``options`` applied, checked against what the algorithm supports, its defaults filled
        in for the options left at None.  ValueError names the algorithm and the option."""
        if execution is None:
            execution = Execution()
        elif not isinstance(execution, Execution):
            raise TypeError(f"{self.name}: execution must be an onyx_rapids.Execution, got "
                            f"{type(execution).__name__}")
        if options:
            execution = execution.replace(**options)
        for name, value in execution.changed().items():
            if name not in self.options:
                supported = ", ".join(self.options) or "none"
                raise unsupported(self.name, f"{name}={value!r}",
                                  f"its execution options are {supported}")
        for name, legal in self.options.items():
            value = getattr(execution, name)
            if legal is not None and value is not None and value not in legal:
                shown = ", ".join(repr(x) for x in legal)
                raise unsupported(self.name, f"{name}={value!r}", f"{name} must be {shown}")
        fill = {k: v for k, v in self.defaults.items() if getattr(execution, k) is None}
        if fill:
            execution = execution.replace(**fill)
        for rule in self.refuse:
            if rule.matches(execution):
                given = " with ".join(f"{k}={getattr(execution, k)!r}" for k in rule.when)
                raise unsupported(self.name, given, rule.reason)
        return execution

    def variants(self) -> list[dict]:
        """Every supported combination of the variant axes (feature_aware x change_driven x
        fold x direction for the propagations; direction x filter x fused for traversals)
        that the algorithm does not refuse, as keyword dicts."""
        axes, values = [], []
        for name in VARIANT_AXES:
            if name not in self.options:
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
                self.resolve(**options)
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


def unsupported(name: str, given: str, reason: str) -> ValueError:
    """The one error for an execution option an algorithm cannot honour (raise it)."""
    return ValueError(f"{name} does not support {given}: {reason}")


def algorithm(name, *, summary, columns, options, graph="any", weights="ignored", inputs=(),
              iterative=True, defaults=None, refuse=(), into=None):
    """Declare the decorated function as algorithm ``name`` (see :class:`Algorithm`) in
    ``into`` (default :data:`ALGORITHMS`; :mod:`onyx_rapids.dask` keeps its own table).

    The function is written as ``f(g, <math parameters>, *, execution, ...)`` and receives a
    resolved :class:`Execution`; callers may pass ``execution=`` and/or option keywords.
    """
    if graph not in GRAPH_KINDS:
        raise ValueError(f"graph must be one of {GRAPH_KINDS}, got {graph!r}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"{name}: unknown execution option(s) {unknown}")

    def register(function):
        @functools.wraps(function)
        def run(g, *args, execution=None, **kwargs):
            given = {k: kwargs.pop(k) for k in list(kwargs) if k in OPTIONS}
            execution = spec.resolve(execution, **given)
            with memory.running(name), streaming.session(), profiling.call():
                return function(g, *args, execution=execution, **kwargs)

        spec = Algorithm(name=name, function=run, summary=summary, graph=graph,
                         weights=weights, inputs=tuple(inputs), columns=tuple(columns),
                         options=dict(options), iterative=iterative,
                         defaults=dict(defaults or {}), refuse=tuple(refuse))
        run.spec = spec
        (ALGORITHMS if into is None else into)[name] = spec
        return run

    return register
