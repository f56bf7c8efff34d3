"""Suite ``approximate`` (issue 37): each approximation knob's speed / accuracy curve, against
our exact call and against the trivial approximation, loosening the tolerance.

For every algorithm (default: every registry algorithm declaring an approximation knob,
``registry.Algorithm.approximation``), on each graph (directed mode: every graph weighted;
strongly_connected_components on an undirected graph's directed version and
minimum_spanning_tree on a directed graph's undirected weighted version, :data:`VIEWS`),
with k features (``--ks``) where its result has per-feature columns:

* ``exact`` (role ``ours``): the call at the library's defaults; every speedup is its ms / the
  row's ms (``speedup_vs_ours``);
* one row per knob setting (series = the knob; ``--variants`` names the knobs, default all):
  the knob swept over :data:`SWEEPS` (a knob the
  suite does not list: a few values spread over its declared range, :func:`spread`, logged),
  with the execution options it needs (:data:`KNOB_OPTIONS`: ``activation_threshold``
  change-driven, ``edge_fraction`` bulk);
* the loosened-tolerance baseline (series ``loosened tol``): the exact call with ``tol``
  times each of :data:`LOOSEN` (without a tol, ``max_iter`` halved 1-4 times; without either,
  an ``n/a`` row);
* ``reference`` (its own case) where :class:`Measure` ``tight``: our call at tol 1e-10 and
  max_iter 1000, checked against the float64 CPU oracle (``traversal.oracle``) up to
  :data:`~benchmarks.common.ORACLE_MAX_EDGES` stored edges.

ms: median of ``--repeat`` calls after a warm-up, device synchronized.  Inaccuracy (column
``inaccuracy``, the first metric of the algorithm's :data:`MEASURES`; every metric in
``params["metrics"]``), against the reference (tight) or the exact run:

* pagerank / personalized_pagerank: normalized L1 error (each column scaled to sum 1, the
  largest over columns), and top-100 overlap (|top100(ours) ∩ top100(reference)| / 100, per
  column, the smallest; vertices tied with the reference's 100th count as its members, ours
  contributes exactly 100: largest values, smaller index first);
* label_propagation: fraction of vertices whose label differs from the exact run's;
* sssp: the larger of the mean relative distance error over the vertices both runs reach and
  the fraction of the reference's reached vertices left unreached (both also reported);
* weakly_connected_components, strongly_connected_components: the fraction of :data:`PAIRS`
  sampled vertex pairs wrongly together or apart;
* minimum_spanning_tree: the relative error of the forest's total weight, and the share of
  the exact forest's edges missing;
* betweenness_centrality (its exact call: :data:`BC_SOURCES` sampled sources,
  :data:`EXTRA_INPUTS`): the share of the exact top 100 missed (1 - top-100 overlap), and the
  relative L1 error.

Goals (:data:`GOALS`, issue 37; column ``goal``): PageRank (and PPR) >= 2x at <= 1% normalized
L1 and >= 1.2x over the loosened-tolerance curve at the same error; change-driven PageRank
with ``activation_threshold`` faster than our exact (bulk) call at <= 1%; SSSP >= 1.5x at <= 5%
(the worse of its two errors); betweenness >= 4x at top-100 overlap >= 0.95.  A verdict is
``met``, ``missed: ...`` (by how much), ``over error`` (the row is past the goal's error) or
``no goal``; the loosened rows are held to the speedup alone.
The loosened-tolerance curve's value at an error (column ``baseline_speedup``,
:func:`baseline_at`): its upper envelope (the best speedup the exact and loosened rows reach at
that error or less), linear in log10(error) between its points, flat beyond them.  The Markdown
summary gives, per (graph, algorithm, series), the best speedup at or under the goal's error,
the baseline there and the verdict; one plot per (graph, algorithm): speedup against
inaccuracy (log), one line per knob and the loosened-tolerance line.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

import onyx_rapids as onyx
from onyx_rapids import approximation as approx, device, inputs as kinds
from onyx_rapids.inputs import top_vertex

from .. import catalog, graphs
from ..catalog import call, make_inputs
from ..common import (ORACLE_MAX_EDGES, UNREACHED_FLOAT, column, compare, fmt, free_memory,
                      ms_text, ordered)
from . import traversal

PAGERANKS = ("pagerank", "personalized_pagerank")


def _activation(name: str, n: int) -> list[dict]:
    """activation_threshold: c / n for the PageRanks (the unpushed remainder is at most
    n x threshold in L1, so c bounds it), c for the others (values of order 1)."""
    scale = 1.0 / max(n, 1) if name in PAGERANKS else 1.0
    return [{"activation_threshold": c * scale} for c in (1e-1, 1e-2, 1e-3, 1e-4, 1e-5)]


#: Each knob's settings (fields of :class:`onyx_rapids.Approximation`), loosest first: a list,
#: or a function of (algorithm, n).  A knob may be listed before an algorithm declares it.
SWEEPS = {
    "stop_changed_fraction": [{"stop_changed_fraction": f}
                              for f in (0.9, 0.5, 0.3, 0.1, 0.03, 0.01, 0.003)],
    "stop_top_k": [{"stop_top_k": 100, "stop_top_k_rounds": r} for r in (1, 2, 4, 8)],
    "edge_fraction": [{"edge_fraction": f} for f in (0.1, 0.25, 0.5, 0.75, 0.9)],
    "activation_threshold": _activation,
    "merge_similarity": [{"merge_similarity": t} for t in (0.3, 0.5, 0.7, 0.9)],
    "source_fraction": [{"source_fraction": 1 / d} for d in (32, 16, 8, 4, 2)],
    "degree_normalization": [{"degree_normalization": t} for t in (1.0, 0.5, 0.25, 0.1)],
    "replicate_threshold": [{"replicate_threshold": t, "replicate_sync": s}
                            for t, s in ((0.05, 4), (0.05, 1), (0.2, 1), (0.5, 1), (1.0, 1))],
    "shared_clustering": [{"shared_clustering": c, "shared_rounds": r}
                          for c, r in ((0.0, 4), (0.0, 1), (0.1, 4), (0.3, 4), (0.3, 2))],
}
#: The execution options (keyword arguments) a knob's rows run with, by knob or by (algorithm,
#: knob): the knob works in those iterations only; weakly_connected_components' union-find
#: (its default method) has no rounds to stop, so its knob rows propagate labels (against the
#: exact call at defaults, as every row)
KNOB_OPTIONS = {"activation_threshold": {"change_driven": True},
                "edge_fraction": {"change_driven": False},
                ("weakly_connected_components", "stop_changed_fraction"): {
                    "method": "propagate"}}
#: Inputs the suite gives an algorithm besides the generated ones, by name: f(n, quick).
#: Betweenness: its exact call samples BC_SOURCES sources (every vertex is out of reach on
#: the suite's graphs), so ``source_fraction`` runs a fraction of those.
BC_SOURCES = 1024
EXTRA_INPUTS = {"betweenness_centrality": lambda n, quick: dict(
    k=min(n, 8 if quick else BC_SOURCES), seed=37)}
LOOSEN = (10, 100, 1000, 10_000)  # the baseline's tol factors
REFERENCE = {"tol": 1e-10, "iterations": 1000}
REFERENCE_TOL = 1e-5  # the tight reference's normalized L1 against the float64 oracle
TOP = 100
PAIRS = 1_000_000
ZERO = 1e-12  # errors of 0 on a log axis / in log10 interpolation


# ------------------------------------------------------------------------------ metrics


def _columns(x) -> np.ndarray:
    x = np.asarray(device.to_host(x), dtype=np.float64)
    return x[:, None] if x.ndim == 1 else x


def normalized_l1(ours, ref) -> float:
    """Largest over columns of sum |ours / sum(ours) - ref / sum(ref)|."""
    a, b = _columns(ours), _columns(ref)
    return float(np.abs(a / a.sum(axis=0) - b / b.sum(axis=0)).sum(axis=0).max())


def top_overlap(ours, ref, k: int = TOP) -> float:
    """Smallest over columns of |top-k(ours) ∩ top-k(ref)| / k (k at most n): the reference's
    members are every vertex at least its k-th largest (ties count), ours exactly k (largest
    values, smaller index first)."""
    a, b = _columns(ours), _columns(ref)
    n = a.shape[0]
    k = min(k, n)
    worst = 1.0
    for col in range(a.shape[1]):
        members = b[:, col] >= np.partition(b[:, col], n - k)[n - k]
        mine = np.lexsort((np.arange(n), -a[:, col]))[:k]
        worst = min(worst, float(members[mine].sum()) / k)
    return worst


def label_difference(ours, ref) -> float:
    """Fraction of vertices whose label differs."""
    a, b = np.asarray(device.to_host(ours)), np.asarray(device.to_host(ref))
    return float((a != b).mean()) if a.size else 0.0


def sssp_errors(ours, ref) -> dict:
    """The larger of the two below (the inaccuracy: a run that stops before reaching most
    vertices has a small error on the few it reached), the mean relative distance error
    over the vertices both reach (0 / 0 is 0), and the fraction of the reference's reached
    vertices that ours leaves unreached."""
    a, b = (np.asarray(device.to_host(x), dtype=np.float64).ravel() for x in (ours, ref))
    ra, rb = (np.isfinite(x) & (x < UNREACHED_FLOAT) for x in (a, b))
    both = ra & rb
    rel = np.abs(a[both] - b[both]) / np.maximum(b[both], 1e-30)
    mean = float(rel.mean()) if rel.size else 0.0
    unreached = float((rb & ~ra).sum()) / max(1, int(rb.sum()))
    return {"worse_of_both": max(mean, unreached), "mean_relative_error": mean,
            "wrongly_unreached": unreached}


def pair_disagreement(ours, ref, pairs: int = PAIRS, seed: int = 37) -> float:
    """Fraction of ``pairs`` vertex pairs (drawn uniformly, seeded) that one labelling puts
    together and the other apart."""
    a, b = np.asarray(device.to_host(ours)), np.asarray(device.to_host(ref))
    if not a.size:
        return 0.0
    u, v = np.random.default_rng(seed).integers(0, a.size, size=(2, pairs))
    return float(((a[u] == a[v]) != (b[u] == b[v])).mean())


def weight_errors(ours, ref) -> dict:
    """The spanning forest's total weight's relative error, and the share of the exact
    forest's edges it lacks (``ours``, ``ref``: (total weight, edges))."""
    return {"total_weight_error": abs(ours[0] - ref[0]) / max(abs(ref[0]), 1e-300),
            "edges_missing": max(ref[1] - ours[1], 0) / max(ref[1], 1)}


def _forest_total(frame, g, k):
    """A spanning forest's (float64 total weight, edges)."""
    weight = np.asarray(device.to_host(column(frame, "weight")), np.float64)
    return float(weight.sum()), int(weight.size)


def _pagerank_metrics(ours, ref) -> dict:
    return {"normalized_l1": normalized_l1(ours, ref), "top100_overlap": top_overlap(ours, ref)}


def betweenness_errors(ours, ref) -> dict:
    """The top-100 members missed (1 - :func:`top_overlap`) and the relative L1 error,
    sum |ours - ref| / sum |ref|."""
    a, b = _columns(ours), _columns(ref)
    return {"top100_missed": 1.0 - top_overlap(a, b),
            "relative_l1": float(np.abs(a - b).sum() / max(np.abs(b).sum(), 1e-300))}


@dataclass(frozen=True)
class Measure:
    """How an algorithm's inaccuracy is measured: ``metrics(ours, ref)`` -> {name: value}
    (the first is the row's ``inaccuracy``), on result ``column`` (None: every value column,
    n x k), against a tight reference (``tight``) or the exact run."""

    metrics: object
    column: str | None = None
    tight: bool = False
    read: object = None  # (frame, g, k) -> values, for a result that is not per vertex


MEASURES = {
    "pagerank": Measure(_pagerank_metrics, tight=True),
    "personalized_pagerank": Measure(_pagerank_metrics, tight=True),
    "label_propagation": Measure(lambda a, b: {"labels_differ": label_difference(a, b)},
                                 "label"),
    "sssp": Measure(sssp_errors, "distance"),
    "weakly_connected_components": Measure(
        lambda a, b: {"pairs_wrong": pair_disagreement(a, b)}, "labels"),
    "strongly_connected_components": Measure(
        lambda a, b: {"pairs_wrong": pair_disagreement(a, b)}, "labels"),
    "minimum_spanning_tree": Measure(weight_errors, read=_forest_total),
    "betweenness_centrality": Measure(betweenness_errors, "betweenness_centrality"),
}


# ------------------------------------------------------------------------------ goals


@dataclass(frozen=True)
class Goal:
    """At an inaccuracy of at most ``max_error``: ``speedup`` over our exact call and
    ``over_baseline`` over the loosened-tolerance curve at the same error (None: none)."""

    max_error: float
    speedup: float | None = None
    over_baseline: float | None = None


PAGERANK_GOAL = Goal(0.01, 2.0, 1.2)
#: By algorithm, or by (algorithm, knob) where the issue sets a knob its own goal
GOALS = {"pagerank": PAGERANK_GOAL, "personalized_pagerank": PAGERANK_GOAL,
         "sssp": Goal(0.05, 1.5), ("pagerank", "activation_threshold"): Goal(0.01, 1.0),
         "betweenness_centrality": Goal(0.05, 4.0)}  # top-100 overlap >= 0.95
NO_GOAL = Goal(0.01)  # others: the summary's best speedup at <= 1%, no target


def goal_of(name: str, series: str) -> Goal:
    return GOALS.get((name, series)) or GOALS.get(name) or NO_GOAL


def baseline_at(points, error: float):
    """The loosened-tolerance curve's speedup at ``error``: ``points`` (error, speedup) made
    an upper envelope (best speedup at that error or less), linear in log10(error) between
    its points, flat beyond them; None without points."""
    pts = sorted((max(e, ZERO), s) for e, s in points if e is not None and s is not None)
    if not pts:
        return None
    env, best = [], -math.inf
    for e, s in pts:
        best = max(best, s)
        env.append((math.log10(e), best))
    x = math.log10(max(error, ZERO))
    xs, ys = zip(*env)
    return float(np.interp(x, xs, ys))


def verdict(goal: Goal, error, speedup, baseline) -> str:
    """``met``, ``missed: ...`` (by how much), ``over error`` or ``no goal``."""
    if goal.speedup is None:
        return "no goal"
    if error is None or speedup is None:
        return "missed: not measured"
    if error > goal.max_error:
        return f"over error ({error:.3g} > {goal.max_error:g})"
    misses = []
    if speedup < goal.speedup:
        misses.append(f"{speedup:.2f}x < {goal.speedup:g}x by {goal.speedup - speedup:.2f}x")
    if goal.over_baseline and baseline:
        over = speedup / baseline
        if over < goal.over_baseline:
            misses.append(f"{over:.2f}x over loosened tol < {goal.over_baseline:g}x by "
                          f"{goal.over_baseline - over:.2f}x")
    return "missed: " + "; ".join(misses) if misses else "met"


def finish(rows: list[dict]) -> None:
    """Columns ``baseline_speedup`` (knob rows) and ``goal`` from each curve's rows (after the
    harness's speedups)."""
    for group in _curves(rows).values():
        points = [(r["inaccuracy"], r["speedup_vs_ours"]) for r in group
                  if r["series"] in ("exact", "loosened tol") and _ok(r)]
        for r in group:
            goal = goal_of(r["algorithm"], r["series"])
            knob = r["series"] not in ("exact", "loosened tol")
            base = baseline_at(points, r["inaccuracy"]) if knob and _ok(r) else None
            r["baseline_speedup"] = base
            if r["status"].startswith("n/a"):
                r["goal"] = r["status"]
            elif r["series"] == "exact" or not _ok(r):
                r["goal"] = "—" if _ok(r) else "missed: not measured"
            else:  # the loosened rows: the speedup goal alone
                r["goal"] = verdict(goal if knob else Goal(goal.max_error, goal.speedup),
                                    r["inaccuracy"], r["speedup_vs_ours"], base)


def _ok(r) -> bool:
    return r["status"] == "ok" and r.get("inaccuracy") is not None and bool(r["ms"])


def _curves(rows) -> dict:
    """(graph, algorithm, case) -> the rows of its curves (the reference left out)."""
    out = {}
    for r in rows:
        if r.get("series") and r["series"] != "reference":
            out.setdefault((r["graph"], r["algorithm"], r["case"]), []).append(r)
    return out


def summary(rows) -> list[dict]:
    """Per (graph, algorithm, case, series): the best speedup at or under the goal's error."""
    out = []
    for (graph, name, case), group in _curves(rows).items():
        for series in dict.fromkeys(r["series"] for r in group if r["series"] != "exact"):
            goal = goal_of(name, series)
            mine = [r for r in group if r["series"] == series and _ok(r)]
            within = [r for r in mine if r["inaccuracy"] <= goal.max_error]
            best = max(within, key=lambda r: r["speedup_vs_ours"] or 0, default=None)
            absent = [r["status"] for r in group if r["series"] == series
                      and r["status"].startswith("n/a")]
            if best is None and absent and not mine:
                text = absent[0]
            elif best is None:
                least = min((r["inaccuracy"] for r in mine), default=None)
                text = "no goal" if goal.speedup is None else \
                    f"missed: no setting at <= {goal.max_error:g} (least {fmt(least, '.3g')})"
            else:
                text = best["goal"]
            out.append({"graph": graph, "algorithm": name, "case": case, "series": series,
                        "best": best, "goal": goal, "verdict": text})
    return out


# ------------------------------------------------------------------------------ settings


def spread(kind, count: int = 5) -> list:
    """``count`` values spread over a knob's declared range (a :class:`~onyx_rapids.inputs.
    Number`): a bounded range evenly inside its bounds, a range with a lower bound only
    geometrically above it (x10 for numbers, x2 for integers).  ValueError for a kind that is
    not a number range."""
    if not isinstance(kind, kinds.Number) or kind.low is None:
        raise ValueError(f"no values to spread over {kind.describe()}")
    low, high, integer = kind.low, kind.high, kind.integer
    if high is not None:
        values = [low + (high - low) * (i + 1) / (count + 1) for i in range(count)]
    elif integer:
        start = low + 1 if kind.low_open else max(low, 1)
        values = [start * 2 ** i for i in range(count)]
    else:
        start = low if low > 0 and not kind.low_open else (low * 10 if low > 0 else 1e-4)
        values = [start * 10 ** i for i in range(count)]
    values = sorted({round(v) for v in values}) if integer else values
    return [v for v in values if kind._in_range(v)]


def settings(name: str, knob: str, kind, n: int, quick: bool, log) -> list[dict]:
    """The knob's settings on a graph of n vertices: :data:`SWEEPS` (``stop_top_k`` at most
    n // 2), else :func:`spread` over its declared range (logged); the first (loosest) only
    with ``--quick``."""
    if knob in SWEEPS:
        sweep = SWEEPS[knob]
        chosen = [dict(s) for s in (sweep(name, n) if callable(sweep) else sweep)]
        for s in chosen:
            if "stop_top_k" in s:
                s["stop_top_k"] = min(s["stop_top_k"], max(1, n // 2))
    else:
        kind = kind or approx.RANGES[knob]
        chosen = [{knob: v} for v in spread(kind)]
        log(f"{name}: knob {knob} has no sweep in the suite: values {[s[knob] for s in chosen]}"
            f" spread over its declared range, {kind.describe()}")
    return chosen[:1] if quick else chosen


def _label(fields: dict) -> str:
    return "/".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in fields.items())


def loosened(entry, quick: bool) -> list[tuple[str, dict]]:
    """The baseline's (variant, call keywords): tol x :data:`LOOSEN`, else max_iter halved;
    [] when the algorithm has neither; the loosest only with ``--quick``."""
    defaults = inspect.signature(entry.spec.function).parameters
    factors = LOOSEN[-1:] if quick else LOOSEN
    if "tol" in defaults:
        tol = defaults["tol"].default
        return [(f"tol x{f:g}", {"tol": tol * f}) for f in factors]
    key = next((p for p in ("max_iter", "iterations") if p in defaults), None)
    if key is None:
        return []
    top = defaults[key].default
    return [(f"{key} {max(1, top >> j)}", {"iterations": max(1, top >> j)})
            for j in range(1, len(factors) + 1)]


# ------------------------------------------------------------------------------ measuring


def algorithms():
    """Registry algorithms that declare at least one approximation knob."""
    return tuple(a for a, e in catalog.algorithms().items() if e.spec.approximation)


def _values(entry, measure: Measure, frame, g, k: int):
    if measure.read is not None:
        return measure.read(frame, g, k)
    names = [measure.column] if measure.column else entry.value_columns(k)
    cols = [ordered(frame, g, c) for c in names]
    return cols[0] if measure.column else device.xp.stack(
        [c.astype(np.float64) for c in cols], axis=1)


def _reference(run, graph, g, entry, measure, inputs, k, case, exact, hub):
    """The tight reference (a row of case ``reference``, checked against the oracle where
    the graph is small enough), or the exact run's values."""
    if not measure.tight:
        return exact
    row = run.row(graph, entry.name, "reference", case, "ours", "ours", k=k,
                  series="reference", params=dict(REFERENCE))
    out = run.timed(row, lambda: call(entry, g, inputs, **REFERENCE), repeat=0)
    if out is None:
        return None
    ref = _values(entry, measure, out[0], g, k)
    row["iterations"] = out[1].get("iterations")
    row["params"]["converged"] = out[1].get("converged")
    if g.m > ORACLE_MAX_EDGES:
        row["check"] = f"unchecked: {g.m:,} edges are too many for the CPU oracle"
        return ref
    sources = [hub] if entry.name == "pagerank" else list(inputs["sources"])
    weighted = g.edge_weights is not None
    oracle = np.stack([traversal.oracle(entry.name, g, s, weighted=weighted)[0]
                       for s in sources], axis=1)
    run.check(row, compare("normalized_l1", ref, device.asarray(oracle),
                           against="float64 power iteration", tol=REFERENCE_TOL),
              f"{entry.name} reference on {graph}")
    return ref


def _curve(run, graph, g, entry, k: int, hub) -> None:
    name, case = entry.name, f"k={k}"
    measure = MEASURES.get(name)
    if measure is None:
        run.row(graph, name, case, "exact", "ours", "ours", k=k, series="exact",
                status="n/a: no inaccuracy metric in approximate.MEASURES")
        run.log(f"{name}: no inaccuracy metric (benchmarks/suites/approximate.py MEASURES)")
        return
    context = {"source": hub} if "source" in entry.input_names() else {}
    inputs = make_inputs(entry, g, k, context)
    inputs.update(EXTRA_INPUTS[name](g.n, run.quick) if name in EXTRA_INPUTS else {})
    tag = f"{name} {case} on {graph}"

    def timed(series, variant, role="variant", **kw):
        """A row timed: (row, its values in vertex order), values None after an error."""
        row = run.row(graph, name, case, variant, "ours", role, k=k, series=series,
                      params={key: (v.knobs() if key == "approximation" else v)
                              for key, v in kw.items()})
        out = run.timed(row, lambda: call(entry, g, inputs, **kw))
        if out is None:
            return row, None
        row["iterations"] = out[1].get("iterations")
        row["params"]["stopped_by"] = (out[1].get("estimate") or {}).get("stopped_by")
        try:
            return row, _values(entry, measure, out[0], g, k)
        except Exception as e:
            run.error(row, e, "reading its result")
            return row, None

    def score(row, values, ref):
        if values is None or ref is None:
            if ref is None and values is not None:
                row["status"] = "n/a: no reference"
            return
        try:
            metrics = measure.metrics(values, ref)
        except Exception as e:
            run.error(row, e, "the inaccuracy")
            return
        row.update(inaccuracy=next(iter(metrics.values())), inaccuracy_metric=next(iter(metrics)))
        row["params"]["metrics"] = metrics
        run.log(f"{tag}: {row['variant']}: {ms_text(row['ms'])} ms, {row.get('iterations')} "
                f"iterations, {metrics}")

    run.log(f"{tag}: exact, reference")
    exact_row, exact = timed("exact", "exact", role="ours")
    if exact is None:
        return
    ref = _reference(run, graph, g, entry, measure, inputs, k, case, exact, hub)
    score(exact_row, exact, ref)
    for knob, kind in entry.spec.approximation.items():
        if run.variants and knob.lower() not in run.variants:
            continue  # --variants names the knobs to sweep
        try:
            chosen = settings(name, knob, kind, g.n, run.quick, run.log)
        except ValueError as e:
            run.row(graph, name, case, knob, "ours", "variant", k=k, series=knob,
                    status=f"n/a: {e}")
            run.log(f"{name}: knob {knob}: {e}")
            continue
        for fields in chosen:
            score(*timed(knob, _label(fields), approximation=onyx.Approximation(**fields),
                         **KNOB_OPTIONS.get(knob, {}), **KNOB_OPTIONS.get((name, knob), {})),
                  ref)
    baseline = loosened(entry, run.quick)
    for variant, kw in baseline:
        score(*timed("loosened tol", variant, **kw), ref)
    if not baseline:
        run.row(graph, name, case, "loosened tol", "ours", "variant", k=k,
                series="loosened tol", status="n/a: no tol or max_iter to loosen")


#: The graph an algorithm runs on, where it needs another version of the suite's graph (as
#: the traversal suite's rows: :mod:`benchmarks.suites.structure`)
VIEWS = {"strongly_connected_components": graphs.directed_version,
         "minimum_spanning_tree": graphs.undirected_weighted}


def measure(run, spec, g, stats) -> None:
    hub = top_vertex(g)
    views = {}
    for name in run.algorithms:
        entry = catalog.get(name)
        per_feature = any("{i}" in c for c in entry.columns)
        view = g
        if name in VIEWS:
            if VIEWS[name] not in views:
                views[VIEWS[name]] = VIEWS[name](g)
            view = views[VIEWS[name]]
            run.log(f"{name} on {spec.text}: its version ({view.n:,} vertices, {view.m:,} "
                    f"stored edges, {'directed' if view.directed else 'undirected'})")
        for k in run.ks if per_feature else (1,):
            _curve(run, spec.text, view, entry, k, hub)
            free_memory()


# ------------------------------------------------------------------------------ report, plots


def _state(r) -> str:
    """A row without a goal: the reference's check, else its status."""
    return f"check {r['check']}" if r["series"] == "reference" else r["status"]


def report(rep: dict) -> list[str]:
    """The Markdown sections of the suite: the goals' summary and every curve's rows."""
    lines = ["## Goals (issue 37)", "",
             "Best speedup over our exact call per series at or under the goal's error; "
             "'loosened tol' is the loosened-tolerance curve's speedup at that row's error "
             "(upper envelope of the exact and loosened rows, linear in log10 error, flat "
             "beyond); 'over' is speedup / that.  Goals: PageRank / PPR >= 2x at <= 1% "
             "normalized L1 and >= 1.2x over the loosened tolerance (activation_threshold: faster "
             "than the exact bulk call); SSSP >= 1.5x at <= 5% mean relative error; betweenness "
             f"(against {BC_SOURCES} sampled sources) >= 4x at top-100 overlap >= 0.95 "
             "(inaccuracy: the share of the top 100 missed); others: no goal (best at <= 1% "
             "shown).  The loosened-tol series is held to the speedup "
             "alone.", "",
             "| graph | algorithm | case | series | best setting | inaccuracy | speedup | "
             "loosened tol | over | verdict |", "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    for s in summary(rep["rows"]):
        b = s["best"] or {}
        base = b.get("baseline_speedup")
        over = b["speedup_vs_ours"] / base if base and b.get("speedup_vs_ours") else None
        lines.append(f"| {s['graph']} | {s['algorithm']} | {s['case']} | {s['series']} | "
                     f"{b.get('variant', '—')} | {fmt(b.get('inaccuracy'), '.3g')} | "
                     f"{fmt(b.get('speedup_vs_ours'), '.2f')} | {fmt(base, '.2f')} | "
                     f"{fmt(over, '.2f')} | {s['verdict']} |")
    lines += ["", "## Curves", "", "| graph | algorithm | case | series | setting | ms | "
              "speedup | iterations | stopped by | inaccuracy | metrics | loosened tol | goal |",
              "|---|---|---|---|---|---:|---:|---:|---|---:|---|---:|---|"]
    for r in rep["rows"]:
        if not r.get("series"):
            continue
        p = r["params"] or {}
        metrics = ", ".join(f"{k} {v:.3g}" for k, v in (p.get("metrics") or {}).items())
        lines.append(f"| {r['graph']} | {r['algorithm']} | {r['case']} | {r['series']} | "
                     f"{r['variant']} | {ms_text(r['ms'])} | "
                     f"{fmt(r.get('speedup_vs_ours'), '.2f')} | {r.get('iterations') or '—'} | "
                     f"{p.get('stopped_by') or '—'} | {fmt(r.get('inaccuracy'), '.3g')} | "
                     f"{metrics} | {fmt(r.get('baseline_speedup'), '.2f')} | "
                     f"{r.get('goal') or _state(r)} |")
    return lines


def plot(rep: dict, slugs: dict, plt, save) -> None:
    """One plot per (graph, algorithm, case): speedup against inaccuracy (log x; an error of
    0 drawn at a tenth of the smallest positive), a line per knob and the loosened-tolerance
    line (from the exact row), the goal's error and speedup dashed."""
    for (graph, name, case), group in _curves(rep["rows"]).items():
        ok = [r for r in group if _ok(r) and r["speedup_vs_ours"]]
        if not ok:
            continue
        positive = [r["inaccuracy"] for r in ok if r["inaccuracy"] > 0]
        floor = min(positive) / 10 if positive else ZERO
        lines = {}
        for r in ok:
            series = "loosened tol (from exact)" if r["series"] in ("exact", "loosened tol") \
                else r["series"]
            lines.setdefault(series, []).append((max(r["inaccuracy"], floor),
                                                 r["speedup_vs_ours"]))
        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        for series, pts in lines.items():
            ax.plot(*zip(*sorted(pts)), marker="o", label=series,
                    linestyle="--" if series.startswith("loosened") else "-")
        goal = goal_of(name, "")
        ax.axvline(goal.max_error, color="grey", linestyle=":", linewidth=1)
        if goal.speedup:
            ax.axhline(goal.speedup, color="grey", linestyle=":", linewidth=1,
                       label=f"goal: {goal.speedup:g}x at <= {goal.max_error:g}")
        ax.axhline(1.0, color="black", linewidth=0.5)
        ax.set_xscale("log")
        zero = f"; 0 drawn at {floor:.0e}" if len(positive) < len(ok) else ""
        ax.set_xlabel(f"inaccuracy ({ok[0].get('inaccuracy_metric')}{zero})")
        ax.set_ylabel("speedup over our exact call")
        ax.set_title(f"{name} {case} on {graph}", fontsize=9)
        ax.legend(fontsize=7)
        suffix = f"{slugs.get(graph, graph)}_{name}" + ("" if case == "k=1" else f"_{case}")
        save(fig, suffix.replace("=", ""))
