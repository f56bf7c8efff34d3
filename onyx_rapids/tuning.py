"""The tuning space (issue 38): every way to run an algorithm that its registry entry allows,
as keyword dicts, declared once for the autotuner and the benchmarks.

An algorithm's space is the product of the values in :data:`CANDIDATES` of each execution
option it declares (``registry.get(name).options``; an option that declares its own legal
values keeps those of them listed here) and of :data:`PARAMETERS` (parameters that change how
an algorithm runs, not what it computes: weakly connected components' ``method``, sssp's
``delta`` as a factor of its default), less every combination the entry refuses
(:meth:`~onyx_rapids.registry.Algorithm.resolve` raises, or the function for a parameter's
value: :data:`PARAMETER_OPTIONS`; a ``width`` that does not divide the features) and every
option set where it changes nothing (:data:`ONLY_WITH`).  None stands for "the option left
to the library" wherever the option takes it, so a configuration names only what it sets.

    >>> import onyx_rapids as onyx
    >>> from onyx_rapids import tuning
    >>> space = tuning.space("weakly_connected_components")
    >>> {"method": "propagate", "direction": "push"} in space  # every other option left alone
    True
    >>> {"fused": True, "change_driven": True} in tuning.space("pagerank")  # refused
    False
    >>> tuning.space("bfs", given={"sources"}) == tuning.space("bfs")  # k sources: no filter
    False
    >>> tuning.sample("pagerank", 3, seed=1) == tuning.sample("pagerank", 3, seed=1)
    True

A configuration runs as ``function(g, ..., **tuning.call_options(name, config, g, weight))``
(:func:`call_options` turns ``delta``'s factor into sssp's value for the graph).

:func:`measure` times sampled configurations of an algorithm on a graph and appends a row per
configuration (the graph's attributes, the configuration, the median time, edges per second,
the device) to a Parquet training table, the autotuner's data.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import random
import statistics
import time

from . import device, inputs as input_kinds, registry
from .execution import EDGE_ACCESS

__all__ = ["CANDIDATES", "ONLY_WITH", "PARAMETERS", "PARAMETER_OPTIONS", "POOL_RANDOM",
           "DeltaFactor", "call_options", "canonical", "config_json", "measure", "pool",
           "sample", "space"]

#: The values the tuner tries for each execution option (None: the library's choice).  Numeric
#: options take a few values around their default; the choices take all their values.
CANDIDATES = {
    "feature_aware": (True, False),
    "change_driven": (False, True, "auto"),
    "fold": (None, True, False),
    "fused": (None, True, False),
    "direction": (None, "pull", "push", "auto"),
    "filter": (None, "online", "ballot"),
    "edge_access": (None, *EDGE_ACCESS),
    "pull_fraction": (None, 0.05, 0.6),
    "block_size": (None, 128, 256, 512),
    "width": (None, 1, 2, 4),
    "threshold": (None, 16, 256),
}

#: Options that change nothing unless another has one of some values: a configuration sets
#: them only then (``pull_fraction`` is the push/pull switch point of ``direction="auto"``,
#: ``threshold`` the online filter's bin size).
ONLY_WITH = {"pull_fraction": ("direction", (None, "auto")),
             "threshold": ("filter", ("online",))}


class DeltaFactor(float):
    """sssp's ``delta`` as a factor of its default for the graph
    (:func:`onyx_rapids.algorithms.sssp.default_delta`); resolved by :func:`call_options`."""

    def __repr__(self):
        return f"DeltaFactor({float(self)!r})"


#: Parameters that choose how an algorithm runs, by algorithm: name -> values tried.
PARAMETERS = {
    "weakly_connected_components": {"method": ("hook", "propagate")},
    "sssp": {"delta": tuple(DeltaFactor(f) for f in (0.25, 1.0, 4.0))},
}
#: Each parameter's value that runs as the call without it (sssp's default delta, union-find).
PARAMETER_DEFAULTS = {"weakly_connected_components": {"method": "hook"},
                      "sssp": {"delta": DeltaFactor(1.0)}}
#: (algorithm, parameter, value) -> the only execution options a run with that value takes
#: (the function refuses the others itself: union-find has no rounds to direct).
PARAMETER_OPTIONS = {("weakly_connected_components", "method", "hook"): {"block_size"}}


def _axes(spec, features: int) -> list[tuple[str, tuple]]:
    axes = []
    for option, legal in spec.options.items():
        values = CANDIDATES.get(option)
        if values is None:
            continue
        if legal is not None:
            values = tuple(v for v in values if v is None or v in legal)
        if option == "width":  # features per thread: a divisor of the features
            values = tuple(v for v in values if v is None or features % v == 0)
        axes.append((option, values))
    axes.extend(PARAMETERS.get(spec.name, {}).items())
    return axes


def space(name: str, given=None, features: int = 1) -> list[dict]:
    """Every configuration of algorithm ``name`` its registry entry does not refuse on a call
    passing the inputs ``given`` (names; default: those a default run passes, bfs and sssp
    from one ``source``) with ``features`` features a vertex (PageRank 1, k sources or
    classes), as keyword dicts of the options and parameters it sets (None values left out),
    in a fixed order; built once per (name, given, features) (a copy each call)."""
    if given is None:
        given = {i.name for i in input_kinds.wanted(registry.get(name), set())}
    return [dict(c) for c in _space(name, frozenset(given), int(features))]


@functools.lru_cache(maxsize=None)
def _space(name: str, given: frozenset, features: int) -> tuple:
    spec = registry.get(name)
    axes = _axes(spec, features)
    params = set(PARAMETERS.get(name, {}))
    out, seen = [], set()
    for combo in itertools.product(*(values for _, values in axes)):
        config = {key: value for (key, _), value in zip(axes, combo) if value is not None}
        if any(option in config and config.get(other) not in values
               for option, (other, values) in ONLY_WITH.items()):
            continue  # the same run as with the option left alone
        if any(config.get(param) == value and set(config) - params - allowed
               for (algo, param, value), allowed in PARAMETER_OPTIONS.items() if algo == name):
            continue  # refused by the function for that parameter value
        key = tuple(sorted(config.items(), key=lambda item: item[0]))
        if key in seen:
            continue
        seen.add(key)
        try:
            spec.resolve(given=given, **{k: v for k, v in config.items() if k not in params})
        except ValueError:
            continue
        out.append(config)
    return tuple(out)


def sample(name: str, count: int, seed: int = 0, given=None, features: int = 1) -> list[dict]:
    """``count`` configurations of :func:`space` drawn without replacement (seeded; the
    whole space, in order, when it has at most ``count``)."""
    configs = space(name, given, features)
    if len(configs) <= count:
        return configs
    return random.Random(seed).sample(configs, count)


#: Random configurations a :func:`pool` adds to the one-option ones.
POOL_RANDOM = 16


def canonical(config: dict, name: str | None = None) -> dict:
    """``config`` less the options set to :class:`~onyx_rapids.execution.Execution`'s
    defaults and the parameters of algorithm ``name`` set to :data:`PARAMETER_DEFAULTS` (a
    configuration names only what it changes; ``{}`` is the library's defaults)."""
    from .execution import _DEFAULTS

    defaults = dict(_DEFAULTS, **PARAMETER_DEFAULTS.get(name, {}))
    return {key: value for key, value in config.items()
            if not (key in defaults and value == defaults[key] and value is not None)}


def config_json(config: dict, name: str | None = None) -> str:
    """The canonical JSON text of a configuration (sssp's :class:`DeltaFactor` as its number),
    the key of a configuration in a training table and a model."""
    return json.dumps({key: float(v) if isinstance(v, DeltaFactor) else v
                       for key, v in canonical(config, name).items()}, sort_keys=True)


def pool(name: str, given=None, features: int = 1, random_count: int = POOL_RANDOM,
         seed: int = 0) -> list[dict]:
    """The configurations the autotuner measures on every graph of a training corpus: the
    defaults (``{}``) first, then every configuration of :func:`space` that changes one option
    or parameter from them, then ``random_count`` more drawn from the rest (seeded); all
    canonical (:func:`canonical`).  One pool per (algorithm, inputs, features) keeps every
    graph's measurements comparable: a graph's peak is the best of the pool.

    >>> from onyx_rapids import tuning
    >>> p = tuning.pool("weakly_connected_components", random_count=2)
    >>> p[0], {"method": "hook"} in p, len(p) == len({tuning.config_json(c) for c in p})
    ({}, True, True)
    """
    configs = [canonical(c, name) for c in space(name, given, features)]
    out = [{}]
    out += [c for c in configs if len(c) == 1]
    rest = [c for c in configs if len(c) > 1]
    out += random.Random(seed).sample(rest, min(random_count, len(rest)))
    seen, unique = set(), []
    for c in out:
        key = config_json(c, name)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def call_options(name: str, config: dict, g=None, weight=None) -> dict:
    """The keywords of a call running ``config``: sssp's :class:`DeltaFactor` times its
    default delta on ``g`` (with ``weight``, as the call's)."""
    out = dict(config)
    if isinstance(out.get("delta"), DeltaFactor):
        from .algorithms.sssp import _edge_weights, default_delta
        out["delta"] = float(out["delta"]) * default_delta(g, _edge_weights(g, weight)[:, 0])
    return out


def _features(kwargs) -> int:
    """The features a vertex carries in a call with ``kwargs``: its sources' count, its
    classes ``k``, else 1."""
    if kwargs.get("sources") is not None:
        return len(kwargs["sources"])
    k = kwargs.get("k")
    return int(k) if isinstance(k, int) and k > 0 else 1


def measure(g, name: str, *, count: int = 16, seed: int = 0, repeat: int = 3, table=None,
            graph_name: str = "", configs=None, check=None, **kwargs):
    """Time configurations of algorithm ``name`` on ``g`` (``configs``, default ``count``
    sampled by :func:`sample`; ``kwargs`` are the call's inputs and parameters, e.g.
    ``source=0``) and return a pandas frame, a row per configuration, fastest first; append it
    to the Parquet file ``table`` when given (created if missing).

    Each configuration runs once to warm up (compiling its kernels), then ``repeat`` times
    with the device synchronized; ``ms`` is the median.  A configuration the call refuses
    (ValueError) gets a row with ``status`` ``"refused: ..."`` and no time.  ``check``, a
    function ``check(reference, result) -> (ok, detail)`` of two result frames, compares every
    configuration's warm-up result with the first configuration's (columns ``agrees`` and
    ``check_detail``): a configuration must compute what the defaults compute.  Columns:
    ``algorithm``, ``graph`` (``graph_name``), ``config`` (:func:`config_json`), ``ms``,
    ``edges_per_s`` (stored edges over the median time), ``status``, ``repeat``,
    ``device`` and ``backend`` (:func:`onyx_rapids.device.info`), ``attributes_version``,
    and every attribute of ``g.attributes()`` as ``attr_<key>``.

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> rows = onyx.tuning.measure(g, "weakly_connected_components", count=2, repeat=1)
    >>> len(rows), rows["status"].tolist(), bool((rows["ms"] > 0).all())
    (2, ['ok', 'ok'], True)
    """
    import pandas as pd

    spec = registry.get(name)
    if configs is None:
        given = {key for key in kwargs if key in {i.name for i in spec.inputs}}
        configs = sample(name, count, seed, given=given or None, features=_features(kwargs))
    attrs = {f"attr_{key}": value for key, value in g.attributes().items()
             if not isinstance(value, (list, dict))}
    facts = device.info()
    rows, reference = [], None
    for index, config in enumerate(configs):
        row = dict(algorithm=name, graph=graph_name, config=config_json(config, name),
                   ms=math.nan, edges_per_s=math.nan, status="ok", repeat=repeat,
                   device=facts["device"], backend=facts["backend"],
                   attributes_version=attrs.get("attr_version"), **attrs)
        out = result = None
        try:
            options = call_options(name, config, g, kwargs.get("weight"))
            times = []
            for i in range(repeat + 1):
                device.synchronize()
                start = time.perf_counter()
                out = spec.function(g, **kwargs, **options)
                device.synchronize()
                if i:  # the first call warms up
                    times.append((time.perf_counter() - start) * 1e3)
                else:
                    result = out
            row["ms"] = statistics.median(times) if times else math.nan
            row["edges_per_s"] = g.m / (row["ms"] / 1e3) if times else math.nan
        except ValueError as e:
            row["status"] = f"refused: {e}"
        if check is not None:
            if index == 0:
                reference = result
            ok, detail = (False, "no result") if result is None or reference is None else \
                check(reference, result)
            row.update(agrees=bool(ok), check_detail=str(detail))
        out = result = None  # only the reference is kept (device memory)
        rows.append(row)
    frame = pd.DataFrame(rows).sort_values("ms", na_position="last", kind="stable")
    frame = frame.reset_index(drop=True)
    if table is not None:
        if os.path.exists(table):
            frame = pd.concat([pd.read_parquet(table), frame], ignore_index=True)
        frame.to_parquet(table, index=False)
    return frame
