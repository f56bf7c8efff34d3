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

import contextlib
import functools
import gc
import itertools
import json
import math
import numbers
import os
import random
import statistics
import time
import warnings

from . import device, inputs as input_kinds, registry
from .execution import EDGE_ACCESS

__all__ = ["CANDIDATES", "FAR_FROM_BEST", "FREE_COLUMNS", "ONLY_WITH", "PARAMETERS",
           "PARAMETER_OPTIONS", "POOL_RANDOM", "SEARCH_TOP", "SLOW_MS", "TUNED", "DeltaFactor",
           "agreement", "call_options", "canonical", "choose", "collect", "config_json",
           "measure", "model_for", "pool", "run_tuned", "sample", "space", "training_inputs"]

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
    >>> p[0], {"method": "propagate"} in p, len(p) == len({tuning.config_json(c) for c in p})
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


#: A configuration whose first timed call took longer than this many ms is timed once, not
#: ``repeat`` times (:func:`measure`): a slow configuration is far from the peak anyway.
SLOW_MS = 1000.0
#: ... and so is one whose first timed call took over this many times the fastest first
#: timed call of the pool: its place in the ranking is clear from one call.
FAR_FROM_BEST = 2.0


@contextlib.contextmanager
def _collector_off(collect: bool = True):
    """Python's garbage collector off inside (``timeit``'s practice: a full collection among
    the many objects compiled kernels leave costs milliseconds, which fell into some timed
    calls and not others), after a collection when ``collect``; a collector already off
    stays off."""
    if collect:
        gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _timed_calls(call, repeat: int, collect: bool = True, warm: bool = True):
    """``call()`` once to warm up (compiling its kernels; ``warm=False``: not), then ``repeat``
    times (once when a call takes over :data:`SLOW_MS`), the device synchronized around each,
    the garbage collector off (:func:`_collector_off`); the warm-up's result (None without)
    and the timed calls' milliseconds."""
    with _collector_off(collect):
        result = None
        if warm:
            device.synchronize()
            result = call()
        times = []
        while len(times) < repeat:
            device.synchronize()
            start = time.perf_counter()
            call()  # (its result freed at once)
            device.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
            if times[-1] > SLOW_MS:
                break
        return result, times


def _drift(calls, rows, repeat: int) -> float:
    """The first configuration timed again after the passes, ``repeat`` calls alternating with
    the fastest other configuration (as in the passes, a call follows another
    configuration's), over its median in the passes; inside the passes' collector-off
    block."""
    timed = [i for i, row in enumerate(rows) if row["status"] == "ok" and i > 0]
    other = min(timed, key=lambda i: rows[i]["ms"], default=None)
    again = []
    for _ in range(repeat):
        again += _timed_calls(calls[0], 1, collect=False, warm=False)[1]
        if other is not None:
            _timed_calls(calls[other], 1, collect=False, warm=False)
    return statistics.median(again) / rows[0]["ms"]


def measure(g, name: str, inputs: dict | None = None, *, configs=None, count: int = 16,
            seed: int = 0, repeat: int = 3, table=None, graph_name: str = "", check=None):
    """Time configurations of algorithm ``name`` on ``g`` (``configs``, default ``count``
    sampled by :func:`sample` with ``seed``) and return a pandas frame, a row per
    configuration, fastest first; append it to the Parquet file ``table`` when given (created
    if missing).  ``inputs`` (a dict) are every call's inputs and parameters, e.g.
    ``{"source": 0}`` or betweenness' ``{"k": 16, "seed": 37}``: a dict of their own, so that
    none is taken for one of this function's arguments (a ``seed`` once was, and betweenness
    then drew other sources every call).

    Every configuration runs once to warm up (compiling its kernels; its result checked),
    then ``repeat`` timed passes call each once, in turn (each pass starting one configuration
    further on), with the device synchronized, after one collection and an untimed call, the
    garbage collector off: a drift of the machine over time then spreads over every
    configuration instead of favouring those timed last, and no configuration is always the
    first call after a collection (on an H200 the defaults, the first call of every pass after
    a collection, came out 1.3-1.6x slower than the identical ``{"block_size": 256}``).
    After the first pass, a configuration whose call took over :data:`SLOW_MS`, or over
    :data:`FAR_FROM_BEST` times the pass's fastest, is not timed again (column ``repeat``: its
    timed calls).  ``ms`` is the median.  After the last pass the first configuration is
    timed again, alternating with the fastest other one (:func:`_drift`): ``reference_drift``
    (every row) is that time over its median, the run's drift (near 1 where the machine held
    steady; NaN where the first did not run).  A configuration
    the call refuses (ValueError) gets a row with ``status`` ``"refused: ..."`` and no time; one
    that fails otherwise (a kernel that cannot launch, say) ``"error: <exception>: ..."``, no
    time and, with ``check``, ``agrees`` False: the other configurations are still measured.
    ``check``, a function ``check(reference, result) -> (ok, detail)`` of two result frames,
    compares every configuration's warm-up result with the first configuration's (columns
    ``agrees`` and ``check_detail``): a configuration must compute what the defaults compute.
    Columns:
    ``algorithm``, ``graph`` (``graph_name``), ``config`` (:func:`config_json`), ``ms``,
    ``edges_per_s`` (stored edges over the median time), ``status``, ``repeat``,
    ``device`` and ``backend`` (:func:`onyx_rapids.device.info`), ``attributes_version``,
    every attribute of ``g.attributes()`` as ``attr_<key>`` and of ``g.attributes(quick=True)``
    as ``qattr_<key>``.

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> rows = onyx.tuning.measure(g, "weakly_connected_components", count=2, repeat=1)
    >>> len(rows), rows["status"].tolist(), bool((rows["ms"] > 0).all())
    (2, ['ok', 'ok'], True)
    """
    import pandas as pd

    if isinstance(repeat, bool) or not isinstance(repeat, numbers.Integral) or repeat < 1:
        raise ValueError(f"repeat must be an integer of at least 1, got {repeat!r}")
    repeat = int(repeat)
    spec = registry.get(name)
    kwargs = dict(inputs or {})
    if configs is None:
        given = {key for key in kwargs if key in {i.name for i in spec.inputs}}
        configs = sample(name, count, seed, given=given or None, features=_features(kwargs))
    attrs = {f"{prefix}{key}": value
             for prefix, a in (("attr_", g.attributes()), ("qattr_", g.attributes(quick=True)))
             for key, value in a.items() if not isinstance(value, (list, dict))}
    facts = device.info()
    rows, calls, reference = [], [], None
    for index, config in enumerate(configs):  # the warm-up pass: compiled, checked
        row = dict(algorithm=name, graph=graph_name, config=config_json(config, name),
                   ms=math.nan, edges_per_s=math.nan, status="ok", repeat=0,
                   device=facts["device"], backend=facts["backend"],
                   attributes_version=attrs.get("attr_version"), **attrs)
        call = result = None
        try:
            options = call_options(name, config, g, kwargs.get("weight"))
            call = functools.partial(spec.function, g, **kwargs, **options)
            result = call()
            device.synchronize()
        except ValueError as e:
            row["status"], call = f"refused: {e}", None
        except Exception as e:  # noqa: BLE001 (a configuration that fails is a finding)
            row["status"], call = f"error: {type(e).__name__}: {e}", None
        if check is not None:
            if index == 0:
                reference = result
            ok, detail = (False, "no result") if result is None or reference is None else \
                check(reference, result)
            row.update(agrees=bool(ok), check_detail=str(detail))
        result = None  # only the reference is kept (device memory)
        rows.append(row)
        calls.append(call)
    times = [[] for _ in rows]
    active = [i for i, call in enumerate(calls) if call is not None]
    drift = math.nan
    with _collector_off():  # one collection, then none until the drift is timed
        if active:  # untimed: the first call after a collection ran 1-1.5 ms slow on an H200
            calls[active[0]]()
            device.synchronize()
        for timed_pass in range(repeat):  # one call of every configuration a pass, in turn,
            turn = timed_pass % max(len(active), 1)  # each pass starting one further on
            for i in active[turn:] + active[:turn]:
                try:
                    times[i].extend(_timed_calls(calls[i], 1, collect=False, warm=False)[1])
                except Exception as e:  # noqa: BLE001
                    rows[i]["status"] = f"error: {type(e).__name__}: {e}"
                    rows[i].update({"agrees": False} if check is not None else {})
            active = [i for i in active if rows[i]["status"] == "ok"]
            if timed_pass == 0 and active:  # far from the fastest, or slow: placed by one call
                cutoff = min(SLOW_MS, FAR_FROM_BEST * min(times[i][0] for i in active))
                active = [i for i in active if times[i][0] <= cutoff]
        for row, row_times in zip(rows, times):
            if row["status"] == "ok" and row_times:
                row["repeat"], row["ms"] = len(row_times), statistics.median(row_times)
                row["edges_per_s"] = g.m / (row["ms"] / 1e3)
        if rows and rows[0]["status"] == "ok":  # the first configuration again, at the end
            drift = _drift(calls, rows, repeat)
    for row in rows:
        row["reference_drift"] = drift
    frame = pd.DataFrame(rows).sort_values("ms", na_position="last", kind="stable")
    frame = frame.reset_index(drop=True)
    return _append(frame, table)


def _append(frame, table):
    """``frame`` after the rows of the Parquet file ``table``, written back to it (created if
    missing); ``frame`` itself when ``table`` is None."""
    import pandas as pd

    if table is None:
        return frame
    if os.path.exists(table):
        frame = pd.concat([pd.read_parquet(table), frame], ignore_index=True)
    frame.to_parquet(table, index=False)
    return frame


# ------------------------------------------------------------------------ training data

#: The algorithms the autotuner learns (issue 38), the features of the per-feature ones and
#: the sampled sources of betweenness.
TUNED = ("bfs", "sssp", "pagerank", "weakly_connected_components", "betweenness_centrality",
         "label_propagation", "personalized_pagerank")
FEATURES = {"label_propagation": 32, "personalized_pagerank": 32}
BC_SOURCES = 16


def training_inputs(name: str, g, features: int | None = None, seed: int = 0) -> dict:
    """The inputs a training measurement of ``name`` passes on ``g``: bfs / sssp from the
    vertex of largest out-degree, betweenness from :data:`BC_SOURCES` sampled sources,
    ``features`` (default :data:`FEATURES`, else 1) generated labels or sources (seeded)."""
    import numpy as np

    spec = registry.get(name)
    if name == "betweenness_centrality":
        return {"k": min(g.n, BC_SOURCES), "seed": 37}
    k = FEATURES.get(name, 1) if features is None else int(features)
    rng = np.random.default_rng([seed, TUNED.index(name) if name in TUNED else 99, k])
    return input_kinds.generate(spec, g, k, rng, {})


#: Result columns a configuration may set otherwise: a predecessor is any parent one step
#: closer to the source.
FREE_COLUMNS = ("predecessor",)


def agreement(reference, result, *, rtol: float = 1e-3, label_share: float = 0.01) -> tuple:
    """``(ok, detail)``: whether a configuration's result frame computes what the defaults'
    (``reference``) does, vertex by vertex: the same columns and vertices; integer columns
    equal (a propagation's argmax ``label`` may differ on up to ``label_share`` of the
    vertices: near ties), float columns within ``rtol`` of the column's largest magnitude
    with the same infinities and NaNs; :data:`FREE_COLUMNS` not compared.  The check
    :func:`collect` gives :func:`measure`.

    >>> import pandas as pd
    >>> a = pd.DataFrame({"vertex": [0, 1], "distance": [0.0, 2.0]})
    >>> agreement(a, a.assign(distance=[0.0, 2.5]))
    (False, 'distance: largest difference 0.25 of its scale')
    """
    import numpy as np

    def frame(f):
        f = f.to_pandas() if hasattr(f, "to_pandas") else f
        return f.sort_values("vertex").reset_index(drop=True) if "vertex" in f else f

    a, b = frame(reference), frame(result)
    if list(a.columns) != list(b.columns) or len(a) != len(b):
        return False, (f"columns {list(b.columns)} x {len(b)} rows, the defaults' "
                       f"{list(a.columns)} x {len(a)}")
    for col in a.columns:
        if col in FREE_COLUMNS:
            continue
        x, y = a[col], b[col]
        if x.dtype.kind == "f":
            x, y = x.to_numpy(np.float64), y.to_numpy(np.float64)
            same = (x == y) | (np.isnan(x) & np.isnan(y))
            finite = np.isfinite(x) & np.isfinite(y)
            if not (same | finite).all():
                return False, f"{col}: infinities or NaNs differ"
            scale = float(np.abs(x[finite]).max()) if finite.any() else 1.0
            worst = float(np.abs(x[finite] - y[finite]).max()) / (scale or 1.0) \
                if finite.any() else 0.0
            if worst > rtol:
                return False, f"{col}: largest difference {worst:.3g} of its scale"
        else:
            differ = float((x.astype("object").fillna(-1).to_numpy()
                            != y.astype("object").fillna(-1).to_numpy()).mean())
            if differ and not (col == "label" and differ <= label_share):
                return False, f"{col}: {differ:.3g} of the vertices differ"
    return True, "agrees"


def collect(graphs: dict, algorithms=TUNED, *, repeat: int = 3, random_count: int = POOL_RANDOM,
            table=None, progress=None):
    """Measure every configuration of each algorithm's :func:`pool` on every graph of
    ``graphs`` (name -> Graph) with :func:`training_inputs` (:func:`measure`, each result
    checked against the defaults' by :func:`agreement`: a configuration that computes
    something else is left out of training) and return the
    training table (pandas), appended to the Parquet file ``table`` when given.
    ``progress(text)`` hears of each (graph, algorithm) done."""
    import pandas as pd

    frames = []
    for graph_name, g in graphs.items():
        for name in algorithms:
            inputs = training_inputs(name, g)
            configs = pool(name, given=set(inputs) - {"seed"} or None,
                           features=_features(inputs), random_count=random_count)
            began = time.perf_counter()
            frame = measure(g, name, inputs, configs=configs, repeat=repeat,
                            graph_name=graph_name, check=agreement)
            frames.append(frame)
            if progress is not None:
                progress(f"{graph_name}: {name}, {len(configs)} configurations in "
                         f"{time.perf_counter() - began:.1f} s (fastest {frame['config'][0]})")
    return _append(pd.concat(frames, ignore_index=True), table)


# ------------------------------------------------------------------------ tuning="auto"

#: The configurations ``tuning="search"`` times on a graph's first call: the model's top ones.
SEARCH_TOP = 3
_MODELS: dict = {}  # path -> (modification time, Model): the default model, read once


@functools.lru_cache(maxsize=1)
def _this_device() -> tuple:
    facts = device.info()
    return facts["device"], facts["backend"]


def _default_model():
    from . import tuning_model

    path = tuning_model.default_model_path()
    if not path.exists():
        return None, (f"no tuning model file {path} (train one for this device with "
                      f"`onyx-rapids tune` and name it with {tuning_model.MODEL_ENV})")
    key, stamp = os.fspath(path), path.stat().st_mtime_ns
    if _MODELS.get(key, (None,))[0] != stamp:
        _MODELS[key] = (stamp, tuning_model.load_model(path))  # ModelError: a bad file
    return _MODELS[key][1], key


def model_for(tuning):
    """``(model, where)`` of an execution's ``tuning`` (a Model, or the default model file
    for ``"auto"`` / ``"search"``), or ``(None, why not)``: no model file, or a model trained
    on another device or backend (its times say nothing of this one).  A model file that
    cannot be read raises :class:`~onyx_rapids.tuning_model.ModelError`."""
    from .tuning_model import Model

    if isinstance(tuning, Model):
        model, where = tuning, tuning.source
    else:
        model, where = _default_model()
        if model is None:
            return None, where
    trained = (model.meta.get("device"), model.meta.get("backend"))
    if trained != _this_device():
        return None, (f"the tuning model {where} was trained on {trained[0]} ({trained[1]}), "
                      f"not on this {_this_device()[0]} ({_this_device()[1]})")
    return model, where


def _decoded(config: dict) -> dict:
    """A model's configuration (JSON values) as keywords: sssp's delta a DeltaFactor."""
    return {key: DeltaFactor(value) if key == "delta" else value
            for key, value in config.items()}


def _fits(spec, config: dict, execution, given, features: int, explicit: set) -> bool:
    """Whether ``config`` runs with the call's own choices: a width dividing the features, a
    parameter value whose function takes the options the call sets, not refused."""
    if "width" in config and features % config["width"]:
        return False
    for (algo, param, value), allowed in PARAMETER_OPTIONS.items():
        if algo == spec.name and config.get(param) == value and explicit - allowed:
            return False
    options = {k: v for k, v in config.items() if k not in PARAMETERS.get(spec.name, {})}
    try:
        spec.resolve(execution.replace(**options), given=given)
    except ValueError:
        return False
    return True


def choose(spec, g, execution, given, kwargs: dict, tuning, explicit: set) -> tuple:
    """``(candidates, report)`` of a call of ``spec`` with ``tuning`` on ``g``: the model's
    configurations (in :meth:`~onyx_rapids.tuning_model.Model.choices` order; one for
    ``"auto"``, :data:`SEARCH_TOP` for ``"search"``) less the options and parameters in
    ``explicit`` (the caller's win), each one that the call can run; ``[{}]`` (the
    defaults) with a RuntimeWarning saying why when no model serves this device, ``[{}]``
    without one when the model does not tune the algorithm.  ``report`` is what
    ``info.tuning`` says."""
    began = time.perf_counter()
    mode = "search" if tuning == "search" else "auto"
    model, where = model_for(tuning)
    report = {"mode": mode, "model": where if model is not None else None, "config": {},
              "reason": None}
    if model is None:
        warnings.warn(f"tuning={mode!r}: {where}; running the defaults", RuntimeWarning,
                      stacklevel=4)
        report["reason"] = where
        return [{}], report
    if spec.name not in model.algorithms:
        report["reason"] = f"the tuning model does not tune {spec.name}; the defaults"
        return [{}], report
    attributes = model.graph_attributes(g)
    report["attributes_seconds"] = time.perf_counter() - began  # 0 once cached
    began = time.perf_counter()
    features, wanted = _features(kwargs), SEARCH_TOP if mode == "search" else 1

    def ordered():  # the pick first; the regressor's ranking only when that is not enough
        yield model.pick(spec.name, attributes)
        yield from model.choices(spec.name, attributes)

    def predict():
        candidates = []
        for config in ordered():
            config = {k: v for k, v in _decoded(config).items()
                      if k not in explicit}
            if config not in candidates and _fits(spec, config, execution, given, features,
                                                  explicit):
                candidates.append(config)
                if len(candidates) == wanted:
                    break
        return tuple(candidates) or ({},)

    # one prediction per graph, model and call shape: later calls cost a lookup (the entry
    # holds the model, so no other model can take its id while the graph lives)
    key = ("tuning", "choice", spec.name, id(model), wanted, features,
           json.dumps(sorted(given)), repr(sorted(
               (k, getattr(execution, k, None)) for k in explicit)))
    candidates = [dict(c) for c in g.cached(key, lambda: (model, predict()))[1]]
    report["predict_seconds"] = time.perf_counter() - began
    return candidates, report


def run_tuned(spec, g, args, kwargs, execution, chosen, tuning):
    """A call of ``spec`` with ``tuning`` (the registry's wrapper hands it over): choose the
    configuration (:func:`choose`; ``"search"``: time the candidates on the graph's first
    call and remember the fastest, per algorithm, inputs and explicit choices), run it, and
    put the report in ``info.tuning``."""
    from .execution import OPTIONS, Execution

    if not hasattr(g, "attributes"):
        raise ValueError(f"{spec.name}: tuning needs an onyx_rapids.Graph, got "
                         f"{type(g).__name__}")
    base = (execution or Execution()).replace(tuning=None)
    explicit = (set(chosen) | set(base.changed()) | set(kwargs)) & (
        set(OPTIONS) | set(PARAMETERS.get(spec.name, {})))
    _, checked, given = spec.check_call(args, dict(kwargs))
    probe = base.replace(**chosen)
    candidates, report = choose(spec, g, probe, given, checked, tuning, explicit)

    def call(config, **extra):
        options = call_options(spec.name, config, g, checked.get("weight"))
        return spec.function(g, *args, execution=base, **{**chosen, **kwargs, **options,
                                                            **extra})

    if len(candidates) > 1:
        own = {**chosen, **base.changed(), **{k: kwargs[k] for k in explicit if k in kwargs}}
        key = ("tuning", "search", spec.name, json.dumps(sorted(given)),
               repr(sorted((k, repr(v)) for k, v in own.items())), _features(checked))

        def search():
            timings = []
            for config in candidates:  # warm (compiled, caches built), then one timed call
                _, (ms,) = _timed_calls(lambda: call(config, return_info=False), 1,
                                        collect=False)
                timings.append((config, ms / 1e3))
            return timings

        timings = g.cached(key, search)
        report["searched"] = [{"config": config_json(c, spec.name), "ms": s * 1e3}
                              for c, s in timings]
        config = min(timings, key=lambda item: item[1])[0]
    else:
        config = candidates[0]
    report["config"] = json.loads(config_json(config, spec.name))
    out = call(config)
    info = out[1] if isinstance(out, tuple) and len(out) == 2 and hasattr(out[1], "variant") \
        else None
    if info is not None:
        info.variant["tuning"] = report
    return out
