"""Traversal benchmark: bfs, sssp, weakly connected components, core numbers and PageRank in
their variants on an R-MAT graph and a road-like grid, next to cuGraph on the same graph and GPU;
multi-source bfs / sssp (k traversals at once) against k separate single-source runs.

    python -m benchmarks.traversal [--families rmat,road]
                                   [--algorithms bfs,sssp,wcc,core_number,pagerank]
                                   [--multi-source bfs,sssp] [--ks 8,32,128] [--variants ...]
                                   [--scale 22] [--edge-factor 16] [--grid-side 2048] [--seed 0]
                                   [--repeat 5] [--multi-repeat 3] [--pagerank-tol 1e-6]
                                   [--budget 100] [--total-budget 480] [--max-call-seconds 30]
                                   [--no-cugraph] [--out benchmarks/results] [--tag ...] [--quick]

Graphs (``--families``):

* ``rmat``: Graph500 R-MAT/Kronecker, ``--scale`` 22 and ``--edge-factor`` 16, seed ``--seed``:
  the generator of benchmarks/foundation.py and ablation.py.  Its 67.1M raw directed edges lose
  self-loops and duplicates (cuGraph's Graph assumes a simple graph); what remains, 65.2M
  directed edges at scale 22, is the "RMAT scale 22, 65M directed edges" graph of cuGraph's
  reference timings.  The graph stays DIRECTED for bfs, sssp and PageRank; ours runs wcc and
  core numbers on its simple undirected view (``Graph.simple_undirected``, built once before
  those sections and timed apart, as cuGraph's undirected graph is), cuGraph on an undirected
  ``cugraph.Graph`` of the same distinct pairs.  Vertices are the ids with an edge (2.4M of the
  2**22 ids at scale 22): cuGraph's graph has no isolated vertices, so ours has none either.
  sssp weights: float32 uniform in [0.1, 1), seeded.  Sources: high-degree vertices, drawn at
  random (seeded) from the ``max(1024, 4 * max(ks))`` largest out-degrees.
* ``road``: a 4-neighbour 2-D grid ``--grid-side`` x ``--grid-side`` (2048: 4.19M vertices,
  8.4M undirected edges, diameter 4094 hops), undirected, float32 weights uniform in [0.1, 1)
  (seeded).  Sources: uniform random vertices (seeded).

Variants (data: :data:`VARIANTS`; ``--variants`` picks by name, across algorithms):

* bfs and wcc: ``<filter>/<fused|unfused>/<direction>`` runs ``filter=`` jit | ballot | online,
  ``fused=`` True | False and ``direction=`` auto | push | pull.  Fusion is measured with the
  JIT filter only (jit/fused vs jit/unfused in each direction: the fused-vs-unfused question);
  every filter runs unfused in each direction (the JIT vs ballot-only vs online question); that
  is 12 of the 18 combinations.  ``default/<direction>`` passes ``direction=`` alone, the
  library's default filter and fusion: it runs before the filter options exist and is the
  "what a user gets" row after.  Direction ``auto`` rows come first, so that a budget cut hits
  the push / pull rows.  wcc's rows of these names run ``method="propagate"`` (min-label
  propagation on acc); its ``hook`` row (first) is the library default, union-find hooking,
  and ``jump16/auto`` is propagation with pointer jumping every 16 rounds.
* sssp: ``auto``, ``push``, ``pull`` (``direction=``; ``delta`` left at its default).
* pagerank: ``NCD/pull`` (the library default: fused), ``NCD/pull/unfused`` (a launch per
  iteration), ``CD/push``, ``CD/pull``, ``CD/auto``
  (``change_driven=`` and ``direction=``; ``CD/auto`` also needs a ``pull_fraction`` parameter:
  before it exists 'auto' meant push), all with ``tol=--pagerank-tol`` (1e-6, as cuGraph's
  reference) and ``max_iter=--pagerank-max-iter``.
* core_number: ``default`` (one fused peeling kernel) and ``unfused`` (``fused=False``: a
  launch and a count read per peel round).

Before a variant runs, ``inspect.signature`` of the onyx_rapids function must show every keyword
it passes (and those it ``requires``); otherwise the cell reads ``n/a (not available: ...)``
(a function that does not exist at all, e.g. ``sssp`` before it lands, likewise).  A variant the
function refuses on its first call (ValueError / NotImplementedError, or a TypeError for an
unexpected keyword: an unsupported combination) reads ``n/a (rejected: ...)``; neither is a
failure.

Timing (benchmarks/foundation.py's ``_timed``: device synchronized before and after,
``time.perf_counter``): per variant one warm-up call (``first_call_ms``: compilation included),
then ``--repeat`` timed calls; the median is reported.  bfs / sssp use a fresh source per call
(the same seeded sequence for every variant and for cuGraph).  A call includes the function's
set-up and building its result frame (a pandas frame, i.e. a device-to-host copy, on a GPU
without cuDF); graph construction is outside (ours and cuGraph's).

cuGraph (when ``import cugraph`` works and not ``--no-cugraph``): ``cugraph.bfs``, ``sssp``,
``weakly_connected_components``, ``core_number``, ``pagerank(alpha=0.85, tol=--pagerank-tol)``,
each on a ``cugraph.Graph`` built from the same edge list (directed unweighted for bfs, directed
weighted for sssp, undirected for wcc / core_number, ``store_transposed=True`` for PageRank; on
the road graph all undirected), warmed up and timed like ours on the same sources; its time goes
in every row of the algorithm, with ``speedup vs cuGraph`` = cuGraph ms / ours ms (above 1: ours
is faster).  Without cuGraph the columns read "not installed".

Checks (a failed one is printed as ``FAILED`` at once and again at the end, shown in the table's
check column, and the exit status is 1; the results are still written):

* a certificate of every result, ours (each call) and cuGraph's (warm-up), computed on the
  device over the edges: bfs: d(source) = 0, every edge u->v with u reached has v reached with
  d(v) <= d(u) + 1, every reached vertex but the source has an in-edge with d(u) + 1 = d(v)
  (this proves the hop distances exact); sssp: the same with d(u) + w(u,v) within
  rtol 1e-5 / atol 1e-6; wcc: labels constant along every edge, and ours the smallest original
  id of the component (label <= own id, the label's vertex labels itself); core numbers: every
  vertex has >= c(v) neighbours of core >= c(v) and <= c(v) of core > c(v) (the h-index
  fixpoint of the core numbers, on the simple undirected view); PageRank: finite, >= 0, sums to
  1 (1e-3);
* the warm-up result of every variant against the first variant whose result passed its
  certificate (same source): bfs, wcc, core numbers exactly, sssp within rtol 1e-5 plus the
  float32 rounding a path of d / min_weight edges may gather (see :func:`agreement`; it only
  matters on the road graph's long paths), PageRank L1 <= 1e-3 after normalizing to sum 1;
* against cuGraph's warm-up result: the same, wcc as the same partition.

Multi-source (``--multi-source``, on the rmat graph; ``--ks``): per k, ``bfs(g, sources=[...])``
(``sssp``) timed against the k single-source calls on the same sources, each synchronized and
timed alone, summed; and, with cuGraph, k separate ``cugraph.bfs`` (``sssp``) calls summed the
same way.  ``--multi-repeat`` repeats with fresh sources (seeded), medians.  Every column of the
k-at-once result is compared with its single-source run (ours exactly / rtol 1e-5, and
cuGraph's).

Budget guard (one call cannot be interrupted without abandoning the GPU work it queued, so the
guard works between calls, plus an alarm between kernel launches):

* ``--budget`` seconds per section (one algorithm on one graph: cuGraph and every variant; one
  multi-source (algorithm, k)): once spent, the section's remaining cells read
  ``skipped: budget``; a variant's timed calls stop early when the next one (estimated by the
  last) would overrun (``calls`` shows done/asked);
* ``--total-budget`` seconds for the whole run (graph generation included): once spent, every
  remaining cell reads ``skipped: total budget``;
* ``--max-call-seconds``: one call running longer is interrupted by SIGALRM (the onyx_rapids
  algorithms loop in Python, so the alarm lands between launches; a cuGraph call is only
  noticed when it returns) and its cell reads ``skipped: call > N s``.
  0 disables each guard.

On the default rmat graph (scale 22, edge factor 16), with cuGraph or without, the Markdown adds
our fastest passing variant per algorithm next to the issue's cuGraph numbers (cuGraph 26.10 on
an H200: :data:`CUGRAPH_REFERENCE`), labelled as numbers not measured here.

Output under ``--out``: ``traversal_<device-slug>_<date>[_<tag>][_quick].json`` (device, git,
settings, graphs, every measurement, cuGraph rows, multi-source rows, the reference comparison,
failures) and ``.md`` (the tables; also printed to stdout).  Progress goes to stderr.

``--quick``: tiny graphs (R-MAT scale 5 / edge factor 4, 6 x 6 grid), ks 2,3, one timed call:
for tests under the simulator.

Fitting a 10-minute device call: give each family its own call and --tag (``--families rmat``
with the multi-source runs; ``--families road --multi-source none``); ``--variants`` and
``--algorithms`` narrow a re-run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import inspect
import signal
import statistics
import sys
import threading
import time
import traceback
import warnings

import numpy as np

import onyx_rapids as onyx
from onyx_rapids import datasets, device
from onyx_rapids.graph import Graph, _bincount

from .foundation import (Bench, _choose, _column, _fmt, _free_device_memory, _git, _timed,
                         output_stem, write_report)

# ------------------------------------------------------------------------------ variants (data)


def _variant(name, requires=(), **options) -> dict:
    """A variant: its name, the keywords it passes, and parameters it needs without passing."""
    return {"name": name, "options": options, "requires": tuple(requires)}


DIRECTIONS = ("auto", "push", "pull")


def _traversal_variants(**extra) -> tuple:
    rows = []
    for d in DIRECTIONS:
        rows += [
            _variant(f"default/{d}", direction=d, **extra),
            _variant(f"jit/unfused/{d}", filter="jit", fused=False, direction=d, **extra),
            _variant(f"jit/fused/{d}", filter="jit", fused=True, direction=d, **extra),
            _variant(f"ballot/unfused/{d}", filter="ballot", fused=False, direction=d, **extra),
            _variant(f"online/unfused/{d}", filter="online", fused=False, direction=d, **extra),
        ]
    return tuple(rows)


VARIANTS = {
    "bfs": _traversal_variants(),
    "sssp": tuple(_variant(d, direction=d) for d in DIRECTIONS)
    + (_variant("unfused/auto", direction="auto", fused=False),),
    "wcc": (_variant("hook", method="hook"),) + _traversal_variants(method="propagate")
    + (_variant("jump16/auto", method="propagate", jump_every=16, direction="auto"),),
    "core_number": (_variant("default"), _variant("unfused", fused=False)),
    "pagerank": (
        _variant("NCD/pull", change_driven=False, direction="pull"),  # fused: the default
        _variant("NCD/pull/unfused", change_driven=False, direction="pull", fused=False),
        _variant("CD/push", change_driven=True, direction="push"),
        _variant("CD/pull", change_driven=True, direction="pull"),
        _variant("CD/auto", requires=("pull_fraction",), change_driven=True, direction="auto"),
    ),
}
ALL_VARIANT_NAMES = tuple(dict.fromkeys(v["name"] for vs in VARIANTS.values() for v in vs))

ALGORITHMS = ("bfs", "sssp", "wcc", "core_number", "pagerank")
ALIASES = {"weakly_connected_components": "wcc", "core": "core_number"}
#: per algorithm: the onyx_rapids and cugraph function names, the result column, whether a
#: call takes a source, runs on the undirected view, needs weights, wants a transposed cuGraph
SPEC = {
    "bfs": dict(function="bfs", column="distance", source=True, undirected=False,
                weighted=False, transposed=False),
    "sssp": dict(function="sssp", column="distance", source=True, undirected=False,
                 weighted=True, transposed=False),
    "wcc": dict(function="weakly_connected_components", column="labels", source=False,
                undirected=True, weighted=False, transposed=False),
    "core_number": dict(function="core_number", column="core_number", source=False,
                        undirected=True, weighted=False, transposed=False),
    "pagerank": dict(function="pagerank", column="pagerank", source=False, undirected=False,
                     weighted=False, transposed=True),
}
MULTI_ALGORITHMS = ("bfs", "sssp")
MULTI_FAMILY = "rmat"
FAMILIES = ("rmat", "road")

UNREACHED_HOPS = 2**31 - 1  # bfs distance of an unreached vertex (ours; ALGORITHMS.md item 9)
# cuGraph 26.10 returns int64 bfs distances with int64 max for an unreached vertex: every
# distance at or above ours counts as unreached, on both sides


def _hops(values):
    """bfs distances as int64 with every unreached value (int32 or int64 max) as ours."""
    d = values.astype(np.int64)
    return device.xp.minimum(d, UNREACHED_HOPS)
UNREACHED_FLOAT = 3e38  # sssp: at or above this (float32 max, inf) counts as unreached
SSSP_RTOL, SSSP_ATOL = 1e-5, 1e-6
FLOAT32_UNIT = 2.0**-24  # unit roundoff: a float32 sum of h terms <= d is off by <= h * u * d
PAGERANK_SUM_TOL = 1e-3
PAGERANK_L1_TOL = 1e-3
PAGERANK_ALPHA = 0.85
POOL_MIN = 1024  # rmat sources: drawn from at least this many highest out-degree vertices
WEIGHT_LOW = 0.1
SOURCE_STREAM, MULTI_STREAM, WEIGHT_STREAM = 101, 202, 303
MIN_DEFAULT = {"rmat": 60_000_000, "road": 8_000_000}  # input edges of a default-size graph

DEFAULTS = dict(scale=22, edge_factor=16, grid_side=2048, ks="8,32,128", repeat=5,
                multi_repeat=3, budget=100.0, total_budget=480.0, max_call_seconds=30.0)
QUICK = dict(scale=5, edge_factor=4, grid_side=6, ks="2,3", repeat=1, multi_repeat=1,
             budget=300.0, total_budget=0.0, max_call_seconds=120.0)

NOT_INSTALLED = "not installed"

#: The issue's cuGraph timings (not measured by this script): shown next to our fastest
#: variant when the rmat graph has these parameters, labelled as another GPU's numbers.
CUGRAPH_REFERENCE = {
    "description": "cuGraph 26.10 on an H200, RMAT scale 22 (65M directed edges, a "
                   "high-degree source), pagerank tol 1e-6 (the issue's numbers)",
    "graph": {"family": "rmat", "scale": 22, "edge_factor": 16},
    "ms": {"bfs": 10.1, "sssp": 38.3, "wcc": 42.8, "core_number": 641.0, "pagerank": 15.3},
}


# ------------------------------------------------------------------------------ arguments


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.traversal",
        description="Traversal benchmark of onyx_rapids against cuGraph (see the module "
                    "docstring).",
    )
    p.add_argument("--families", default=",".join(FAMILIES),
                   help="comma-separated subset of " + ",".join(FAMILIES))
    p.add_argument("--algorithms", default=",".join(ALGORITHMS),
                   help="comma-separated subset of " + ",".join(ALGORITHMS) + " ('none': only "
                        "the multi-source runs)")
    p.add_argument("--multi-source", default=",".join(MULTI_ALGORITHMS),
                   help="multi-source algorithms, subset of " + ",".join(MULTI_ALGORITHMS)
                        + " ('none' skips them; they run on the rmat graph)")
    p.add_argument("--ks", help=f"multi-source k values (default {DEFAULTS['ks']})")
    p.add_argument("--variants", default="all",
                   help="comma-separated variant names (default all): "
                        + ",".join(ALL_VARIANT_NAMES))
    p.add_argument("--scale", type=int, help=f"R-MAT scale (default {DEFAULTS['scale']})")
    p.add_argument("--edge-factor", type=int,
                   help=f"R-MAT edges per vertex (default {DEFAULTS['edge_factor']})")
    p.add_argument("--grid-side", type=int,
                   help=f"road grid rows = columns (default {DEFAULTS['grid_side']})")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the graphs, weights and sources (default 0)")
    p.add_argument("--repeat", type=int,
                   help=f"timed calls per variant (default {DEFAULTS['repeat']})")
    p.add_argument("--multi-repeat", type=int,
                   help=f"timed rounds per multi-source k (default {DEFAULTS['multi_repeat']})")
    p.add_argument("--pagerank-tol", type=float, default=1e-6,
                   help="PageRank tolerance, ours and cuGraph's (default 1e-6)")
    p.add_argument("--pagerank-max-iter", type=int, default=100,
                   help="PageRank max_iter, ours and cuGraph's (default 100)")
    p.add_argument("--budget", type=float,
                   help="seconds per section: one algorithm on one graph, or one multi-source "
                        f"k (default {DEFAULTS['budget']:g}; 0: none)")
    p.add_argument("--total-budget", type=float,
                   help=f"seconds for the whole run (default {DEFAULTS['total_budget']:g}; "
                        "0: none)")
    p.add_argument("--max-call-seconds", type=float,
                   help="interrupt one call after this many seconds (default "
                        f"{DEFAULTS['max_call_seconds']:g}; 0: never)")
    p.add_argument("--no-cugraph", action="store_true",
                   help="leave cuGraph out even when it is installed")
    p.add_argument("--out", default="benchmarks/results", help="output folder")
    p.add_argument("--tag", default="",
                   help="appended to the output file names (to keep split runs of one day apart)")
    p.add_argument("--quick", action="store_true",
                   help="tiny run for tests: R-MAT scale 5 / edge factor 4, 6 x 6 grid, ks 2,3, "
                        "repeat 1 (explicit options still win)")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    base = QUICK if args.quick else DEFAULTS
    for key, value in base.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.families = _choose(args.families, FAMILIES, "--families", p)
    if str(args.algorithms).strip().lower() == "none":
        args.algorithms = []
    else:
        args.algorithms = _choose(args.algorithms, ALGORITHMS, "--algorithms", p, ALIASES)
    if str(args.multi_source).strip().lower() in ("none", ""):
        args.multi_source = []
    else:
        args.multi_source = _choose(args.multi_source, MULTI_ALGORITHMS, "--multi-source", p)
    try:
        args.ks = [int(x) for x in str(args.ks).split(",") if x.strip()]
    except ValueError:
        p.error(f"--ks must be comma-separated integers, got {args.ks!r}")
    if args.multi_source and (not args.ks or min(args.ks) < 1):
        p.error("--ks needs at least one positive integer")
    if str(args.variants).strip().lower() == "all":
        args.variants = list(ALL_VARIANT_NAMES)
    else:
        args.variants = _choose(args.variants, ALL_VARIANT_NAMES, "--variants", p)
    for key in ("scale", "edge_factor", "grid_side", "repeat", "multi_repeat",
                "pagerank_max_iter"):
        if getattr(args, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be >= 1")
    if args.scale > 31:
        p.error("--scale must be <= 31")
    for key in ("budget", "total_budget", "max_call_seconds"):
        if not getattr(args, key) >= 0:
            p.error(f"--{key.replace('_', '-')} must be >= 0")
    if not args.pagerank_tol > 0:
        p.error("--pagerank-tol must be positive")
    if not args.algorithms and not args.multi_source:
        p.error("nothing to run: --algorithms none and --multi-source none")
    return args


# ------------------------------------------------------------------------------ guards


class CallTimeout(BaseException):
    """Raised by the SIGALRM handler inside a call that ran past --max-call-seconds (a
    BaseException, so that no ``except Exception`` on the way swallows it)."""


def _alarm_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def call_limit(seconds: float):
    """Raise :class:`CallTimeout` in the block once ``seconds`` have passed (0: no limit; also
    none off the main thread, where signals cannot be set)."""
    if not seconds or seconds <= 0 or not _alarm_usable():
        yield
        return

    def _ring(signum, frame):
        raise CallTimeout(f"call > {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, float(seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Budget:
    """The section and whole-run time budgets (seconds, 0: none)."""

    def __init__(self, section_s: float, total_s: float, t0: float):
        self.section_s, self.total_s, self.t0 = float(section_s), float(total_s), t0
        self.t_section = time.perf_counter()

    def start_section(self) -> None:
        self.t_section = time.perf_counter()

    def total_spent(self):
        """None, or the skip text once the whole run's budget is spent."""
        if self.total_s and time.perf_counter() - self.t0 >= self.total_s:
            return f"skipped: total budget ({self.total_s:g} s)"
        return None

    def skip_reason(self):
        """None, or why a cell that has not started must not start."""
        now = time.perf_counter()
        spent = self.total_spent()
        if spent:
            return spent
        if self.section_s and now - self.t_section >= self.section_s:
            return f"skipped: budget ({self.section_s:g} s)"
        return None

    def room_for(self, seconds: float) -> bool:
        """Whether a further ``seconds`` fit in both budgets."""
        now = time.perf_counter()
        if self.total_s and now + seconds - self.t0 > self.total_s:
            return False
        if self.section_s and now + seconds - self.t_section > self.section_s:
            return False
        return True


def _timeout_status(seconds: float) -> str:
    return f"skipped: call > {seconds:g} s"


# ------------------------------------------------------------------------------ graphs


class Family:
    """One graph: ours, the edge list it came from (device arrays), statistics, sources, and the
    cuGraph graphs built from the same list (lazily, per kind)."""

    def __init__(self, name, g, stats, edges, pool):
        self.name, self.g, self.stats, self.edges, self.pool = name, g, stats, edges, pool
        self.cugraph_graphs = {}
        self._pairs = None

    def undirected_pairs(self):
        """Distinct (low, high) pairs of the edge list, self-loops gone (an undirected list)."""
        if self._pairs is None:
            xp = device.xp
            src, dst = self.edges["src"], self.edges["dst"]
            keep = src != dst
            low = xp.minimum(src[keep], dst[keep])
            high = xp.maximum(src[keep], dst[keep])
            span = int(self.edges["id_space"])
            keys = xp.unique(low * span + high)
            self._pairs = (keys // span, keys % span)
        return self._pairs


def edge_frame(columns: dict):
    """An edge frame of backend arrays: cuDF on the GPU when it imports (no host round trip),
    pandas otherwise (``Graph.from_edgelist`` and cuGraph take either)."""
    if device.BACKEND == "gpu":
        try:
            import cudf
        except Exception:
            cudf = None
        if cudf is not None:
            return cudf.DataFrame({k: device.xp.ascontiguousarray(v) for k, v in columns.items()})
    import pandas as pd

    return pd.DataFrame({k: device.to_host(v) for k, v in columns.items()})


def _uniform_weights(m: int, seed: int):
    rng = np.random.default_rng([seed, WEIGHT_STREAM])
    w = rng.random(m, dtype=np.float32) * np.float32(1.0 - WEIGHT_LOW) + np.float32(WEIGHT_LOW)
    return np.minimum(w, np.nextafter(np.float32(1.0), np.float32(0.0)))


def build_family(bench: Bench, args, name: str) -> Family:
    xp = device.xp
    t = time.perf_counter()
    if name == "rmat":
        bench.log(f"rmat: generating R-MAT scale {args.scale}, edge factor {args.edge_factor}, "
                  f"seed {args.seed}")
        df = datasets.rmat(args.scale, args.edge_factor, seed=args.seed)
        gen_s = time.perf_counter() - t
        t = time.perf_counter()
        src = device.asarray(df["src"].to_numpy())
        dst = device.asarray(df["dst"].to_numpy())
        raw = int(len(df))
        del df
        span = 1 << args.scale
        loops = int((src == dst).sum())
        keep = src != dst
        keys = xp.unique(src[keep] * span + dst[keep])
        del src, dst, keep
        src, dst = keys // span, keys % span
        del keys
        m_in = int(src.shape[0])
        weight = device.asarray(_uniform_weights(m_in, args.seed))
        extra = {"generator": "rmat (Graph500: a=0.57, b=0.19, c=0.19, permuted); self-loops "
                              "and duplicate edges dropped; directed",
                 "scale": args.scale, "edge_factor": args.edge_factor, "seed": args.seed,
                 "id_space": span, "raw_edges": raw, "self_loops_dropped": loops,
                 "duplicates_dropped": raw - loops - m_in,
                 "sources": f"high-degree: random among the max({POOL_MIN}, 4 * max k) largest "
                            "out-degrees"}
        directed = True
    else:
        side = args.grid_side
        bench.log(f"road: generating a {side} x {side} grid")
        df = datasets.grid_2d(side, side, weighted=True, seed=args.seed)
        gen_s = time.perf_counter() - t
        t = time.perf_counter()
        src = device.asarray(df["src"].to_numpy())
        dst = device.asarray(df["dst"].to_numpy())
        weight = device.asarray(df["weight"].to_numpy())
        del df
        span = side * side
        m_in = int(src.shape[0])
        extra = {"generator": "grid_2d (4-neighbour, road-like), undirected", "rows": side,
                 "cols": side, "seed": args.seed, "id_space": span,
                 "diameter_hops": 2 * (side - 1), "sources": "uniform random vertices"}
        directed = False
    prepare_s = time.perf_counter() - t
    edges = {"src": src, "dst": dst, "weight": weight, "id_space": span}
    frame = edge_frame({"src": src, "dst": dst, "weight": weight})
    bench.log(f"{name}: {m_in:,} input edges; building the graph")
    g, build_ms = _timed(lambda: Graph.from_edgelist(frame, "src", "dst", weight="weight",
                                                     directed=directed))
    del frame
    summary = g.summary()
    max_k = max(args.ks) if args.multi_source and args.ks else 1
    out_degree = g.out_degree
    if name == "rmat":
        positive = int((out_degree > 0).sum())
        size = max(1, min(positive, max(POOL_MIN, 4 * max_k)))
        idx = xp.argsort(-out_degree.astype(np.int64), kind="stable")[:size]
        pool = device.to_host(g.vertices[idx]).astype(np.int64)
        pool_min_degree = int(out_degree[idx].min())
    else:
        pool = device.to_host(g.vertices).astype(np.int64)
        pool_min_degree = int(out_degree.min()) if g.n else 0
    stats = {**extra, "family": name, "n": int(g.n), "m": int(g.m), "input_edges": m_in,
             "directed": bool(g.directed), "weighted": True,
             "max_out_degree": int(summary["max_out_degree"]),
             "max_in_degree": int(summary["max_in_degree"]),
             "mean_out_degree": float(g.m / g.n) if g.n else 0.0,
             "index_dtype": summary["index_dtype"], "source_pool": int(len(pool)),
             "min_weight": float(weight.min()) if m_in else None,
             "source_pool_min_out_degree": pool_min_degree, "generate_s": gen_s,
             "prepare_s": prepare_s, "build_ms": build_ms, "undirected_view_ms": None,
             "cugraph_build_ms": {}}
    kind = "directed" if g.directed else "undirected, both directions stored"
    bench.log(f"{name}: n={g.n:,} m={g.m:,} ({kind}), max out-degree "
              f"{stats['max_out_degree']:,}, built in {build_ms / 1e3:.2f} s")
    return Family(name, g, stats, edges, pool)


# ------------------------------------------------------------------------------ cuGraph


def import_cugraph(disabled: bool = False, named: bool = False):
    """(module or None, status text); also the harness's (benchmarks/harness.py).

    ``disabled`` (``--no-cugraph``): not imported.  The reason it is missing starts with
    ``NOT_INSTALLED`` (this script's table cells test for it), or with ``"cugraph "`` when
    ``named`` (the harness's skip reason names the peer)."""
    if disabled:
        return None, "disabled (--no-cugraph)"
    try:
        import cugraph
    except Exception as e:  # ImportError, or a broken CUDA / RAPIDS install
        reason = f"{NOT_INSTALLED} ({type(e).__name__}: {e})"
        return None, f"cugraph {reason}" if named else reason
    return cugraph, f"cugraph {getattr(cugraph, '__version__', '?')}"


def cugraph_kind(fam, algorithm: str, specs: dict | None = None) -> tuple:
    """(directed, weighted, transposed) of the cuGraph graph an algorithm runs on.

    ``fam``: anything with the onyx_rapids graph as ``.g`` (a Family; the harness's
    TraversalGraph); ``specs``: the algorithm table with the ``undirected``, ``weighted`` and
    ``transposed`` entries (default SPEC; the harness passes its TRAVERSAL)."""
    spec = (SPEC if specs is None else specs)[algorithm]
    return (bool(fam.g.directed and not spec["undirected"]), spec["weighted"], spec["transposed"])


def _kind_name(kind) -> str:
    directed, weighted, transposed = kind
    return ("directed" if directed else "undirected") + ("/weighted" if weighted else "") + (
        "/transposed" if transposed else "")


def cugraph_graph(bench: Bench, cg, fam: Family, kind):
    """The cugraph.Graph of ``kind`` for this family, built once (its build time recorded)."""
    if kind in fam.cugraph_graphs:
        return fam.cugraph_graphs[kind]
    directed, weighted, transposed = kind
    if directed or not fam.g.directed:  # the list as given (road: undirected, once per pair)
        cols = {"src": fam.edges["src"], "dst": fam.edges["dst"]}
        if weighted:
            cols["weight"] = fam.edges["weight"]
    else:
        if weighted:
            raise ValueError("no undirected weighted cuGraph graph of a directed edge list")
        low, high = fam.undirected_pairs()
        cols = {"src": low, "dst": high}
    frame = edge_frame(cols)
    G = cg.Graph(directed=directed)
    kwargs = dict(source="src", destination="dst", renumber=True)
    if weighted:
        kwargs["edge_attr"] = "weight"
    if transposed:
        kwargs["store_transposed"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, ms = _timed(lambda: G.from_cudf_edgelist(frame, **kwargs))
    fam.stats["cugraph_build_ms"][_kind_name(kind)] = ms
    bench.log(f"{fam.name}: cuGraph {_kind_name(kind)} graph built in {ms / 1e3:.2f} s")
    fam.cugraph_graphs[kind] = G
    return G


def cugraph_call(cg, algorithm: str, G, args, source=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if algorithm == "bfs":
            return cg.bfs(G, start=int(source))
        if algorithm == "sssp":
            return cg.sssp(G, source=int(source))
        if algorithm == "wcc":
            return cg.weakly_connected_components(G)
        if algorithm == "core_number":
            return cg.core_number(G)
        if algorithm == "pagerank":
            return cg.pagerank(G, alpha=PAGERANK_ALPHA, tol=args.pagerank_tol,
                               max_iter=args.pagerank_max_iter)
    raise ValueError(f"unknown algorithm {algorithm!r}")


def cugraph_values(algorithm: str, frame, g):
    """cuGraph's result column in our internal vertex order (its frame sorted by vertex)."""
    xp = device.xp
    vertex = _column(frame, "vertex").astype(np.int64)
    values = _column(frame, SPEC[algorithm]["column"])
    if int(vertex.shape[0]) != g.n:
        raise ValueError(f"cuGraph's result has {int(vertex.shape[0])} vertices, ours {g.n}")
    order = xp.argsort(vertex)
    if not bool((vertex[order] == g.vertices).all()):
        raise ValueError("cuGraph's result has other vertex ids than our graph")
    return values[order]


# ------------------------------------------------------------------------------ our calls


def _function(algorithm: str):
    """The onyx_rapids function, looked up now (tests patch them), or None."""
    return getattr(onyx, SPEC[algorithm]["function"], None)


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters  # follows __wrapped__
    except (TypeError, ValueError):
        return None


def _accepts(params, name: str) -> bool:
    if params is None:  # no signature to read: let the call decide
        return True
    p = params.get(name)
    if p is not None and p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL, p.VAR_KEYWORD):
        return True
    return any(q.kind == q.VAR_KEYWORD for q in params.values())


def availability(algorithm: str, variant: dict | None, *, multi: bool = False):
    """None when the installed function takes every keyword the cell needs, else the cell's
    "n/a (not available: ...)" text."""
    name = SPEC[algorithm]["function"]
    fn = _function(algorithm)
    if fn is None:
        return f"n/a (not available: onyx_rapids.{name})"
    params = _parameters(fn)
    needed = []
    if SPEC[algorithm]["source"]:
        needed += ["source", "sources"] if multi else ["source"]
    if variant is not None:
        needed += list(variant["options"]) + list(variant["requires"])
    missing = [k for k in dict.fromkeys(needed) if not _accepts(params, k)]
    if missing:
        return f"n/a (not available: {name}({', '.join(f'{k}=' for k in missing)}))"
    return None


def ours_call(algorithm: str, g, options: dict, args, *, source=None, sources=None):
    """One call of our ``algorithm``: (result frame, info dict)."""
    fn = _function(algorithm)
    params = _parameters(fn)
    kw = dict(options)
    if algorithm == "pagerank":
        for key, value in (("tol", args.pagerank_tol), ("max_iter", args.pagerank_max_iter),
                           ("alpha", PAGERANK_ALPHA)):
            if _accepts(params, key):
                kw[key] = value
    info_kw = params is not None and "return_info" in params
    if info_kw:
        kw["return_info"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": in info
        if source is not None:
            out = fn(g, source=int(source), **kw)
        elif sources is not None:
            out = fn(g, sources=np.asarray(sources, dtype=np.int64), **kw)
        else:
            out = fn(g, **kw)
    if info_kw and isinstance(out, tuple):
        return out[0], dict(out[1])
    return out, {}


def _rejection(e: BaseException):
    """The 'n/a (rejected: ...)' text when a first call refused its options, else None."""
    if isinstance(e, (ValueError, NotImplementedError)) or (
            isinstance(e, TypeError) and "unexpected keyword" in str(e)):
        text = " ".join(str(e).split())
        return f"n/a (rejected: {type(e).__name__}: {text[:160]})"
    return None


def result_values(algorithm: str, frame, g, column=None, *, check_vertices=True):
    """A result column as a backend array in internal vertex order (the frame's vertex column
    must be the graph's vertices)."""
    if check_vertices:
        vertex = _column(frame, "vertex")
        if int(vertex.shape[0]) != g.n or not bool(
                (vertex.astype(np.int64) == g.vertices).all()):
            raise ValueError("the result's vertex column is not the graph's vertices")
    return _column(frame, column or SPEC[algorithm]["column"])


# ------------------------------------------------------------------------------ checks


def certify(algorithm: str, fam: Family, values, source=None, *, canonical=True) -> dict:
    """The certificate of one result (see the module docstring); ``source`` in original ids,
    ``canonical``: wcc labels must be the smallest ids (ours; cuGraph's are arbitrary)."""
    g, xp = fam.g, device.xp
    n = g.n
    out = {"kind": "certificate"}
    if algorithm in ("bfs", "sssp"):
        s = int(g.to_internal(int(source)))
        src, dst = g.edge_sources, g.out_indices
        if algorithm == "bfs":
            d = _hops(values)
            reached = d != UNREACHED_HOPS
            du, dv = d[src], d[dst]
            ru, rv = reached[src], reached[dst]
            bad = ru & (~rv | (dv > du + 1))
            tight = ru & rv & (dv == du + 1)
            out["negative"] = int((d < 0).sum())
            out["other_zero"] = int((d == 0).sum()) - int(d[s] == 0)
        else:
            if g.edge_weights is None:
                raise ValueError("sssp certificate: the graph has no weights")
            d = values.astype(np.float64)
            reached = xp.isfinite(d) & (d < UNREACHED_FLOAT)
            w = g.edge_weights[:, 0].astype(np.float64)
            du, dv = d[src], d[dst]
            ru, rv = reached[src], reached[dst]
            slack = SSSP_RTOL * xp.abs(xp.where(rv, dv, 0.0)) + SSSP_ATOL
            bad = ru & (~rv | (dv > du + w + slack))
            tight = ru & rv & (xp.abs(du + w - dv) <= slack)
            out["negative"] = int((reached & (d < 0)).sum())
            out["nan"] = int(xp.isnan(d).sum())
        has_parent = xp.zeros(n, dtype=np.bool_)
        has_parent[dst[tight]] = True
        orphan = reached & ~has_parent
        orphan[s] = False
        out.update(source_zero=bool(d[s] == 0), edges_violated=int(bad.sum()),
                   orphans=int(orphan.sum()), reached=int(reached.sum()))
        out["max_distance"] = (float(d[reached].max()) if algorithm == "sssp" else
                               int(d[reached].max())) if out["reached"] else None
        out["ok"] = bool(out["source_zero"] and out["edges_violated"] == 0
                         and out["orphans"] == 0 and out["negative"] == 0
                         and out.get("other_zero", 0) == 0 and out.get("nan", 0) == 0)
    elif algorithm == "wcc":
        lab = values.astype(np.int64)
        out["edges_violated"] = int((lab[g.edge_sources] != lab[g.out_indices]).sum())
        if canonical:
            pos = xp.minimum(xp.searchsorted(g.vertices, lab), n - 1)
            found = g.vertices[pos] == lab
            out["label_not_a_vertex"] = int((~found).sum())
            out["label_above_own_id"] = int((lab > g.vertices).sum())
            out["label_not_self_labelled"] = int((found & (lab[pos] != lab)).sum())
            out["components"] = int((lab == g.vertices).sum())
        else:
            out["components"] = int(xp.unique(lab).shape[0])
        out["ok"] = all(out[k] == 0 for k in ("edges_violated", "label_not_a_vertex",
                                                 "label_above_own_id", "label_not_self_labelled")
                        if k in out)
    elif algorithm == "core_number":
        und = g.simple_undirected()
        c = values.astype(np.int64)
        s_, t_ = und.edge_sources, und.out_indices
        cs, ct = c[s_], c[t_]
        at_least = _bincount(s_[ct >= cs], n)
        above = _bincount(s_[ct > cs], n)
        out.update(negative=int((c < 0).sum()), too_few=int((at_least < c).sum()),
                   too_many=int((above > c).sum()), max_core=int(c.max()) if n else 0)
        out["ok"] = out["negative"] == 0 and out["too_few"] == 0 and out["too_many"] == 0
    elif algorithm == "pagerank":
        x = values.astype(np.float64)
        out.update(finite=bool(xp.isfinite(x).all()), negative=int((x < 0).sum()),
                   sum=float(x.sum()))
        out["ok"] = bool(out["finite"] and out["negative"] == 0
                         and abs(out["sum"] - 1.0) <= PAGERANK_SUM_TOL)
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    out["ok"] = bool(out["ok"])
    return out


def agreement(algorithm: str, values, ref, against: str, *, partition=False,
              min_weight=None) -> dict:
    """Compare a result with a reference of the same vertex order (see the module docstring).

    sssp: two float32 results may sum a path in different orders, or pick different paths whose
    lengths tie within rounding; a path to distance d has at most d / min_weight edges, so each
    may be off by h * u * d: the tolerance is rtol * d + atol + 2 * u * d * (d / min_weight)
    (the second term matters on long paths only: ~1e-5 relative at 30 hops)."""
    xp = device.xp
    out = {"against": against}
    if int(values.shape[0]) != int(ref.shape[0]):
        return {**out, "ok": False, "error": "different lengths"}
    if algorithm == "wcc" and partition:
        a, b = values.astype(np.int64), ref.astype(np.int64)
        _, ia = xp.unique(a, return_inverse=True)
        _, ib = xp.unique(b, return_inverse=True)
        na, nb = int(ia.max()) + 1 if ia.size else 0, int(ib.max()) + 1 if ib.size else 0
        pairs = int(xp.unique(ia.astype(np.int64).ravel() * max(nb, 1)
                              + ib.astype(np.int64).ravel()).shape[0]) if ia.size else 0
        out.update(metric="same partition", components=na, reference_components=nb,
                   label_pairs=pairs, ok=na == nb == pairs)
    elif algorithm == "bfs":
        mism = int((_hops(values) != _hops(ref)).sum())
        out.update(metric="mismatches", value=mism, ok=mism == 0)
    elif algorithm in ("wcc", "core_number"):
        mism = int((values.astype(np.int64) != ref.astype(np.int64)).sum())
        out.update(metric="mismatches", value=mism, ok=mism == 0)
    elif algorithm == "sssp":
        a, b = values.astype(np.float64), ref.astype(np.float64)
        ra = xp.isfinite(a) & (a < UNREACHED_FLOAT)
        rb = xp.isfinite(b) & (b < UNREACHED_FLOAT)
        reach = int((ra != rb).sum())
        both = ra & rb
        diff = xp.abs(a - b)
        mag = xp.abs(b)
        tol = SSSP_RTOL * mag + SSSP_ATOL
        if min_weight:
            tol = tol + 2.0 * FLOAT32_UNIT * mag * (mag / float(min_weight))
        over = int((both & (diff > tol)).sum())
        rel = float((diff[both] / xp.maximum(xp.abs(b[both]), 1e-30)).max()) if bool(
            both.any()) else 0.0
        out.update(metric="max relative error", value=rel, reach_mismatches=reach,
                   over_tolerance=over, rtol=SSSP_RTOL, min_weight=min_weight,
                   ok=reach == 0 and over == 0)
    elif algorithm == "pagerank":
        a, b = values.astype(np.float64), ref.astype(np.float64)
        sa, sb = float(a.sum()), float(b.sum())
        if not (sa > 0 and sb > 0):
            return {**out, "ok": False, "error": f"sums {sa}, {sb}"}
        diff = xp.abs(a / sa - b / sb)
        l1 = float(diff.sum())
        out.update(metric="l1 (each normalized to sum 1)", value=l1,
                   max_abs=float(diff.max()) if diff.size else 0.0, tol=PAGERANK_L1_TOL,
                   ok=bool(l1 <= PAGERANK_L1_TOL))  # NaN fails
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}")
    out["ok"] = bool(out["ok"])
    return out


def _describe(check: dict) -> str:
    keys = [k for k in check if k not in ("ok", "kind", "against", "metric")]
    return ", ".join(f"{k} {check[k]}" for k in keys)


# ------------------------------------------------------------------------------ measuring


def _median(xs):
    return statistics.median(xs) if xs else None


def _sources(args, fam: Family, count: int, stream) -> list[int]:
    """``count`` source ids (original) drawn from the family's pool, seeded."""
    rng = np.random.default_rng([args.seed, *stream])
    return [int(x) for x in fam.pool[rng.integers(0, len(fam.pool), size=count)]]


def _source_sets(args, fam: Family, k: int, count: int) -> list[list[int]]:
    """``count`` sets of k distinct sources (with repeats only when the pool is smaller)."""
    rng = np.random.default_rng([args.seed, MULTI_STREAM, k])
    pool = fam.pool
    return [[int(x) for x in pool[rng.choice(len(pool), size=k, replace=len(pool) < k)]]
            for _ in range(count)]


def _label(fam_name, algorithm, variant=None) -> str:
    return f"{algorithm} on {fam_name}" + (f" {variant}" if variant else "")


def measure_cugraph(bench: Bench, args, fam: Family, algorithm: str, cg, cg_status: str,
                    sources, budget: Budget) -> tuple[dict, object]:
    """cuGraph's row of one section and its warm-up result (our vertex order) or None."""
    kind = cugraph_kind(fam, algorithm)
    row = {"family": fam.name, "algorithm": algorithm, "graph_kind": _kind_name(kind),
           "status": None}
    if cg is None:
        row["status"] = cg_status
        return row, None
    skip = budget.skip_reason()
    if skip:
        row["status"] = skip
        return row, None
    label = _label(fam.name, algorithm, "cuGraph")
    spec = SPEC[algorithm]
    ref = None
    try:
        G = cugraph_graph(bench, cg, fam, kind)
        with call_limit(args.max_call_seconds):
            frame, first_ms = _timed(lambda: cugraph_call(cg, algorithm, G, args, sources[0]))
        row["first_call_ms"] = first_ms
        ref = cugraph_values(algorithm, frame, fam.g)
        del frame
        row["check"] = certify(algorithm, fam, ref, sources[0], canonical=False)
        if not row["check"]["ok"]:
            bench.fail(f"{label}: certificate failed ({_describe(row['check'])})")
        times, estimate = [], first_ms / 1e3
        for r in range(1, args.repeat + 1):
            if not budget.room_for(estimate):
                break
            s = sources[r] if spec["source"] else None
            with call_limit(args.max_call_seconds):
                frame, ms = _timed(lambda: cugraph_call(cg, algorithm, G, args, s))
            del frame
            times.append(ms)
            estimate = ms / 1e3
        row.update(times_ms=times, calls=len(times), median_ms=_median(times))
        row["status"] = "ok" if times else "skipped: budget (warm-up only)"
        bench.log(f"{label}: first {first_ms:9.1f} ms, median {_fmt(row['median_ms'], '.2f')} ms"
                  f" over {len(times)} call(s)")
    except CallTimeout:
        device.synchronize()
        row["status"] = _timeout_status(args.max_call_seconds)
        bench.log(f"{label}: {row['status']}")
    except Exception as e:
        row["status"] = "error"
        row["error"] = f"{type(e).__name__}: {e}"
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: raised {row['error']}")
        ref = None
    return row, ref


def measure_variant(bench: Bench, args, fam: Family, algorithm: str, variant: dict, sources,
                    refs: dict, budget: Budget) -> dict:
    """Warm-up, checks and timed calls of one of our variants."""
    spec = SPEC[algorithm]
    name = variant["name"]
    row = {"family": fam.name, "algorithm": algorithm, "variant": name,
           "options": dict(variant["options"]), "requires": list(variant["requires"]),
           "status": None, "repeat": args.repeat}
    na = availability(algorithm, variant)
    if na:
        row["status"] = na
        bench.log(f"{_label(fam.name, algorithm, name)}: {na}")
        return row
    skip = budget.skip_reason()
    if skip:
        row["status"] = skip
        bench.log(f"{_label(fam.name, algorithm, name)}: {skip}")
        return row
    label = _label(fam.name, algorithm, name)
    if spec["source"]:
        row["sources"] = list(sources[:args.repeat + 1])

    def call(s):
        return ours_call(algorithm, fam.g, variant["options"], args, source=s)

    s0 = sources[0] if spec["source"] else None
    try:
        with call_limit(args.max_call_seconds):
            (frame, info), first_ms = _timed(lambda: call(s0))
    except CallTimeout:
        device.synchronize()
        row["status"] = _timeout_status(args.max_call_seconds) + " (warm-up)"
        bench.log(f"{label}: {row['status']}")
        return row
    except Exception as e:
        rejected = _rejection(e)
        if rejected:
            row["status"] = rejected
            bench.log(f"{label}: {rejected}")
            return row
        row["status"] = "error"
        row["error"] = f"{type(e).__name__}: {e}"
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: raised {row['error']}")
        return row
    row["first_call_ms"] = first_ms
    row["warmup_info"] = info
    # checks of the warm-up result: certificate, the first variant, cuGraph
    try:
        values = result_values(algorithm, frame, fam.g)
        del frame
        row["check"] = certify(algorithm, fam, values, s0)
        if not row["check"]["ok"]:
            bench.fail(f"{label}: certificate failed ({_describe(row['check'])})")
        if refs.get("ours") is None:
            if row["check"]["ok"]:  # the reference: the first variant whose result is certified
                refs["ours"] = (name, values)
                row["agreement"] = {"against": name, "ok": True, "reference": True}
            else:
                row["agreement"] = {"against": None, "ok": True,
                                    "note": "not compared: no certified reference yet"}
        else:
            row["agreement"] = agreement(algorithm, values, refs["ours"][1], refs["ours"][0],
                                         min_weight=fam.stats["min_weight"])
            if not row["agreement"]["ok"]:
                bench.fail(f"{label}: disagrees with {refs['ours'][0]} "
                           f"({_describe(row['agreement'])})")
        if refs.get("cugraph") is not None:
            row["cugraph_agreement"] = agreement(algorithm, values, refs["cugraph"], "cuGraph",
                                                 partition=True,
                                                 min_weight=fam.stats["min_weight"])
            if not row["cugraph_agreement"]["ok"]:
                bench.fail(f"{label}: disagrees with cuGraph "
                           f"({_describe(row['cugraph_agreement'])})")
        del values
    except Exception as e:
        row["check_error"] = f"{type(e).__name__}: {e}"
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: checking the result raised {row['check_error']}")
    # timed calls, each result certified outside the timed region
    times, iterations, directions, failed_checks = [], [], [], []
    estimate = first_ms / 1e3
    try:
        for r in range(1, args.repeat + 1):
            if not budget.room_for(estimate):
                row["budget_cut"] = True
                break
            s = sources[r] if spec["source"] else None
            with call_limit(args.max_call_seconds):
                (frame, info), ms = _timed(lambda: call(s))
            times.append(ms)
            estimate = ms / 1e3
            iterations.append(info.get("iterations"))
            directions.append(info.get("direction"))
            cert = certify(algorithm, fam, result_values(algorithm, frame, fam.g), s)
            del frame
            if not cert["ok"]:
                failed_checks.append({"call": r, "source": s, **cert})
                bench.fail(f"{label}: timed call {r} certificate failed ({_describe(cert)})")
    except CallTimeout:
        device.synchronize()
        row["timed_out"] = _timeout_status(args.max_call_seconds)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: a timed call raised {row['error']}")
    row.update(times_ms=times, calls=len(times), median_ms=_median(times),
               min_ms=min(times) if times else None, iterations=iterations,
               directions=directions, timed_check_failures=failed_checks)
    known = [i for i in iterations if i is not None]
    row["median_iterations"] = _median(known)
    if row.get("error"):
        row["status"] = "error"
    elif times:
        row["status"] = "ok"
    elif row.get("timed_out"):
        row["status"] = row["timed_out"]
    else:
        row["status"] = "skipped: budget (warm-up only)"
    bench.log(f"{label}: first {first_ms:9.1f} ms, median {_fmt(row['median_ms'], '.2f')} ms "
              f"over {len(times)}/{args.repeat} call(s), iterations {known}, "
              f"check {_check_text(row)}")
    return row


def run_section(bench: Bench, args, fam: Family, algorithm: str, cg, cg_status: str,
                budget: Budget) -> tuple[list[dict], dict]:
    variants = [v for v in VARIANTS[algorithm] if v["name"] in args.variants]
    if not variants:
        bench.log(f"{_label(fam.name, algorithm)}: no selected variant; skipped")
        return [], {}
    budget.start_section()
    sources = (_sources(args, fam, args.repeat + 1, (SOURCE_STREAM, FAMILIES.index(fam.name)))
               if SPEC[algorithm]["source"] else [None] * (args.repeat + 1))
    if SPEC[algorithm]["undirected"] and fam.stats["undirected_view_ms"] is None:
        _, ms = _timed(fam.g.simple_undirected)  # cached on the graph: outside every timing
        fam.stats["undirected_view_ms"] = ms
        bench.log(f"{fam.name}: simple undirected view built in {ms / 1e3:.2f} s")
    bench.log(f"{_label(fam.name, algorithm)}: {len(variants)} variant(s)")
    refs = {}
    # cuGraph first: its result is the reference of every variant (and its time is worth
    # having even where ours is not available yet)
    cg_row, refs["cugraph"] = measure_cugraph(bench, args, fam, algorithm, cg, cg_status,
                                              sources, budget)
    rows = []
    for v in variants:
        rows.append(measure_variant(bench, args, fam, algorithm, v, sources, refs, budget))
    cg_ms = cg_row.get("median_ms")
    for r in rows:
        r["cugraph_ms"] = cg_ms
        r["speedup_vs_cugraph"] = (cg_ms / r["median_ms"]
                                   if cg_ms and r.get("median_ms") else None)
    refs.clear()
    _free_device_memory()
    return rows, cg_row


def measure_multi(bench: Bench, args, fam: Family, algorithm: str, k: int, cg, cg_status: str,
                  budget: Budget) -> dict:
    """k sources at once against k separate single-source runs (ours, cuGraph's)."""
    row = {"family": fam.name, "algorithm": algorithm, "k": k, "status": None,
           "repeat": args.multi_repeat, "cugraph_status": None}
    label = f"multi-source {algorithm} k={k} on {fam.name}"
    na = availability(algorithm, None, multi=True)
    if na:
        row["status"] = na
        bench.log(f"{label}: {na}")
        return row
    budget.start_section()
    skip = budget.skip_reason()
    if skip:
        row["status"] = skip
        bench.log(f"{label}: {skip}")
        return row
    g = fam.g
    sets = _source_sets(args, fam, k, args.multi_repeat + 1)
    row["sources"] = sets
    G = None
    if cg is not None:
        try:
            G = cugraph_graph(bench, cg, fam, cugraph_kind(fam, algorithm))
        except Exception as e:
            row["cugraph_status"] = "error"
            row["cugraph_error"] = f"{type(e).__name__}: {e}"
            bench.fail(f"{label}: cuGraph graph raised {row['cugraph_error']}")
    else:
        row["cugraph_status"] = cg_status
    at_once, separate, cg_separate = [], [], []
    mismatches, cg_mismatches, checks = [], [], []
    try:
        # warm-up: k at once, then single-source calls and cuGraph calls (compilation,
        # handles; the second of each is warm and estimates the first round)
        with call_limit(args.max_call_seconds):
            (frame, _), first_ms = _timed(lambda: ours_call(algorithm, g, {}, args,
                                                            sources=sets[0]))
            del frame
            one_ms = 0.0
            for _ in range(2):
                _, one_ms = _timed(lambda: ours_call(algorithm, g, {}, args,
                                                     source=sets[0][0]))
            cg_ms = 0.0
            if G is not None:
                for _ in range(2):
                    _, cg_ms = _timed(lambda: cugraph_call(cg, algorithm, G, args, sets[0][0]))
        row["first_call_ms"] = first_ms
        estimate = (first_ms + k * (one_ms + cg_ms)) / 1e3
        for r in range(1, args.multi_repeat + 1):
            if not budget.room_for(estimate):
                row["budget_cut"] = True
                break
            t_round = time.perf_counter()
            with call_limit(args.max_call_seconds):
                (frame, _), ms = _timed(lambda: ours_call(algorithm, g, {}, args,
                                                          sources=sets[r]))
            cols = [result_values(algorithm, frame, g, f"distance_{f}",
                                  check_vertices=f == 0) for f in range(k)]
            del frame
            total, bad = 0.0, 0
            for f, s in enumerate(sets[r]):
                with call_limit(args.max_call_seconds):
                    (single, _), one = _timed(lambda: ours_call(algorithm, g, {}, args,
                                                                source=s))
                total += one
                values = result_values(algorithm, single, g)
                del single
                if f == 0:
                    cert = certify(algorithm, fam, values, s)
                    checks.append(cert)
                    if not cert["ok"]:
                        bench.fail(f"{label}: certificate of the single run from {s} failed "
                                   f"({_describe(cert)})")
                if not agreement(algorithm, cols[f], values, "single-source",
                                 min_weight=fam.stats["min_weight"])["ok"]:
                    bad += 1
            at_once.append(ms)
            separate.append(total)
            mismatches.append(bad)
            if bad:
                bench.fail(f"{label}: {bad} of {k} columns differ from the single-source runs "
                           f"(round {r})")
            if G is not None:
                total, bad = 0.0, 0
                for f, s in enumerate(sets[r]):
                    with call_limit(args.max_call_seconds):
                        res, one = _timed(lambda: cugraph_call(cg, algorithm, G, args, s))
                    total += one
                    theirs = cugraph_values(algorithm, res, g)
                    del res
                    if not agreement(algorithm, cols[f], theirs, "cuGraph",
                                     min_weight=fam.stats["min_weight"])["ok"]:
                        bad += 1
                cg_separate.append(total)
                cg_mismatches.append(bad)
                if bad:
                    bench.fail(f"{label}: {bad} of {k} columns differ from cuGraph's runs "
                               f"(round {r})")
            del cols
            estimate = time.perf_counter() - t_round
    except CallTimeout:
        device.synchronize()
        row["timed_out"] = _timeout_status(args.max_call_seconds)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: raised {row['error']}")
    n_rounds = min(len(at_once), len(separate))
    row.update(rounds=n_rounds, at_once_ms=at_once, separate_ms=separate,
               median_at_once_ms=_median(at_once[:n_rounds]),
               median_separate_ms=_median(separate[:n_rounds]),
               column_mismatches=mismatches, single_certificates=checks)
    row["separate_over_at_once"] = (row["median_separate_ms"] / row["median_at_once_ms"]
                                    if row["median_at_once_ms"] and row["median_separate_ms"]
                                    else None)
    if G is not None:
        row.update(cugraph_separate_ms=cg_separate,
                   median_cugraph_separate_ms=_median(cg_separate),
                   cugraph_column_mismatches=cg_mismatches)
        row["cugraph_separate_over_at_once"] = (
            row["median_cugraph_separate_ms"] / row["median_at_once_ms"]
            if row["median_cugraph_separate_ms"] and row["median_at_once_ms"] else None)
        row["cugraph_status"] = "ok" if cg_separate else (row["cugraph_status"] or "—")
    if row.get("error"):
        row["status"] = "error"
    elif n_rounds:
        row["status"] = "ok"
    elif row.get("timed_out"):
        row["status"] = row["timed_out"]
    else:
        row["status"] = "skipped: budget (warm-up only)"
    bench.log(f"{label}: at once {_fmt(row['median_at_once_ms'], '.2f')} ms, separate "
              f"{_fmt(row['median_separate_ms'], '.2f')} ms, cuGraph separate "
              f"{_fmt(row.get('median_cugraph_separate_ms'), '.2f')} ms over {n_rounds} "
              f"round(s)")
    _free_device_memory()
    return row


# ------------------------------------------------------------------------------ output


def _check_text(row: dict) -> str:
    if row.get("error") or row.get("check_error"):
        return "ERROR"
    if "check" not in row:
        return "—"
    failed = []
    if not row.get("check", {}).get("ok"):
        failed.append("certificate")
    if row.get("timed_check_failures"):
        failed.append(f"{len(row['timed_check_failures'])} timed call(s)")
    if not row.get("agreement", {}).get("ok"):
        failed.append(f"vs {row.get('agreement', {}).get('against', 'reference')}")
    if "cugraph_agreement" in row and not row["cugraph_agreement"]["ok"]:
        failed.append("vs cuGraph")
    return "ok" if not failed else "FAILED: " + ", ".join(failed)


def _multi_check_text(row: dict) -> str:
    if row.get("error"):
        return "ERROR"
    if not row.get("rounds"):
        return "—"
    failed = []
    if any(row.get("column_mismatches") or []):
        failed.append("vs single-source")
    if any(row.get("cugraph_column_mismatches") or []):
        failed.append("vs cuGraph")
    if any(not c["ok"] for c in row.get("single_certificates") or []):
        failed.append("certificate")
    return "ok" if not failed else "FAILED: " + ", ".join(failed)


def _cell_ms(row: dict, key="median_ms") -> str:
    if row.get(key) is not None:
        return f"{row[key]:.2f}"
    return row.get("status") or "—"


def _cugraph_cells(cg_row: dict | None, row: dict) -> tuple[str, str]:
    if cg_row is None:
        return "—", "—"
    if cg_row.get("median_ms") is None:
        text = cg_row.get("status") or "—"
        if text.startswith(NOT_INSTALLED):
            text = NOT_INSTALLED
        return text, text if text in (NOT_INSTALLED,) else "—"
    speed = row.get("speedup_vs_cugraph")
    return f"{cg_row['median_ms']:.2f}", (f"{speed:.2f}x" if speed else "—")


def reference_rows(report: dict) -> list[dict]:
    """Our fastest passing variant per algorithm next to :data:`CUGRAPH_REFERENCE` (only for the
    rmat graph of the reference's parameters)."""
    ref = CUGRAPH_REFERENCE
    gr = report["graphs"].get(ref["graph"]["family"])
    if not gr or any(gr.get(k) != v for k, v in ref["graph"].items() if k != "family"):
        return []
    rows = []
    for algorithm, ms in ref["ms"].items():
        ok = [r for r in report["measurements"]
              if r["family"] == ref["graph"]["family"] and r["algorithm"] == algorithm
              and r.get("median_ms") and _check_text(r) == "ok"]
        best = min(ok, key=lambda r: r["median_ms"]) if ok else None
        rows.append({"algorithm": algorithm, "reference_ms": ms,
                     "ours_ms": best["median_ms"] if best else None,
                     "ours_variant": best["variant"] if best else None,
                     "reference_over_ours": ms / best["median_ms"] if best else None})
    return rows


def markdown(report: dict) -> str:
    d, s = report["device"], report["settings"]
    git = report["git"]
    lines = [
        f"# Traversal benchmark: {d.get('device')} ({report['date']})",
        "",
        f"Backend {d.get('backend')}; numba {d.get('numba')}, numba-cuda {d.get('numba-cuda')}, "
        f"cupy {d.get('cupy')}, cudf {d.get('cudf')}, cuGraph: {report['cugraph']}; git "
        f"{git.get('commit')}" + (f" (+{git.get('dirty_files')} changed files)"
                                  if git.get("dirty_files") else ""),
        "",
        f"Median of up to {s['repeat']} timed calls after a warm-up, device synchronized "
        "around each call; bfs / sssp from a fresh high-degree (rmat) or random (road) source "
        "per call, the same sources for every variant and cuGraph. A call includes set-up and "
        "the result frame, not graph construction. speedup vs cuGraph = cuGraph ms / ours ms. "
        f"PageRank tol {s['pagerank_tol']:g}, max_iter {s['pagerank_max_iter']}. Budget: "
        f"{s['budget']:g} s per section, {s['total_budget']:g} s in all, "
        f"{s['max_call_seconds']:g} s per call (0: none).",
        "",
        "## Graphs",
        "",
        "| graph | generator | n | m (stored) | input edges | directed | max out-degree "
        "| sources | build ms | undirected view ms | cuGraph build ms |",
        "|---|---|---:|---:|---:|---|---:|---|---:|---:|---|",
    ]
    for name, gr in report["graphs"].items():
        cgb = ", ".join(f"{k} {v:.0f}" for k, v in gr.get("cugraph_build_ms", {}).items())
        lines.append(
            f"| {name} | {gr['generator']} | {gr['n']:,} | {gr['m']:,} | {gr['input_edges']:,} | "
            f"{'yes' if gr['directed'] else 'no'} | {gr['max_out_degree']:,} | "
            f"{gr['sources']} (pool {gr['source_pool']:,}) | {gr['build_ms']:.1f} | "
            f"{_fmt(gr.get('undirected_view_ms'), '.1f')} | {cgb or '—'} |")
    lines += [
        "",
        "## Algorithms",
        "",
        "| algorithm | graph | variant | median ms | calls | iterations | cuGraph ms "
        "| speedup vs cuGraph | check |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    cg_rows = {(r["family"], r["algorithm"]): r for r in report["cugraph_rows"]}
    for r in report["measurements"]:
        cg_row = cg_rows.get((r["family"], r["algorithm"]))
        cg_ms, speed = _cugraph_cells(cg_row, r)
        calls = (f"{r['calls']}" + (f"/{r['repeat']}" if r["calls"] < r["repeat"] else "")
                 if "calls" in r else "—")
        its = r.get("median_iterations")
        its = "—" if its is None else (f"{its:g}" if isinstance(its, float) else str(its))
        lines.append(f"| {r['algorithm']} | {r['family']} | {r['variant']} | {_cell_ms(r)} | "
                     f"{calls} | {its} | {cg_ms} | {speed} | {_check_text(r)} |")
    if any(c.get("first_call_ms") is not None or c.get("status") == "error"
           for c in report["cugraph_rows"]):
        lines += [
            "",
            "cuGraph rows (graph kind, first call, check of its warm-up result):",
            "",
            "| algorithm | graph | cuGraph graph | median ms | calls | first call ms | check |",
            "|---|---|---|---:|---:|---:|---|",
        ]
        for c in report["cugraph_rows"]:
            chk = c.get("check")
            chk = "—" if chk is None else ("ok" if chk["ok"] else "FAILED: certificate")
            lines.append(f"| {c['algorithm']} | {c['family']} | {c['graph_kind']} | "
                         f"{_cell_ms(c)} | {c.get('calls', '—')} | "
                         f"{_fmt(c.get('first_call_ms'), '.1f')} | {chk} |")
    if report["multi_source"]:
        lines += [
            "",
            f"## Multi-source ({MULTI_FAMILY} graph)",
            "",
            f"k sources at once (one k-feature property) against k separate single-source calls "
            f"on the same sources, each synchronized, summed; median of up to "
            f"{s['multi_repeat']} rounds with fresh sources.",
            "",
            "| algorithm | k | ours k-at-once ms | ours k-separate ms | separate / at-once "
            "| cuGraph k-separate ms | cuGraph separate / ours at-once | check |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for m in report["multi_source"]:
            if m.get("median_cugraph_separate_ms") is not None:
                cg_ms = f"{m['median_cugraph_separate_ms']:.2f}"
                cg_ratio = _fmt(m.get("cugraph_separate_over_at_once"), ".2f")
            else:
                cg_ms = m.get("cugraph_status") or "—"
                if cg_ms.startswith(NOT_INSTALLED):
                    cg_ms = NOT_INSTALLED
                cg_ratio = "—"
            lines.append(
                f"| {m['algorithm']} | {m['k']} | {_cell_ms(m, 'median_at_once_ms')} | "
                f"{_fmt(m.get('median_separate_ms'), '.2f')} | "
                f"{_fmt(m.get('separate_over_at_once'), '.2f')} | {cg_ms} | {cg_ratio} | "
                f"{_multi_check_text(m)} |")
    if report.get("reference_comparison"):
        lines += [
            "",
            "## Against the issue's cuGraph numbers (not measured here)",
            "",
            f"{CUGRAPH_REFERENCE['description']}: another GPU and cuGraph's own graph build; "
            "ours: the fastest variant whose checks passed.",
            "",
            "| algorithm | reference cuGraph ms | ours ms | our variant | reference / ours |",
            "|---|---:|---:|---|---:|",
        ]
        for c in report["reference_comparison"]:
            lines.append(f"| {c['algorithm']} | {c['reference_ms']:g} | "
                         f"{_fmt(c['ours_ms'], '.2f')} | {c['ours_variant'] or '—'} | "
                         f"{_fmt(c['reference_over_ours'], '.2f')} |")
    skipped = [r for r in report["measurements"] + report["multi_source"]
               if str(r.get("status", "")).startswith("skipped") or r.get("budget_cut")]
    if skipped:
        lines += ["", f"Budget: {len(skipped)} cell(s) skipped or cut short (see 'calls' and "
                  "the cells reading 'skipped')."]
    lines += ["", "**All checks passed.**" if not report["failures"] else
              "**FAILED checks:**\n\n" + "\n".join(f"- {f}" for f in report["failures"]), ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ main


def main(argv=None) -> int:
    args = parse_args(argv)
    bench = Bench()
    budget = Budget(args.budget, args.total_budget, bench.t0)
    info = device.info()
    cg, cg_status = import_cugraph(args.no_cugraph)
    now = datetime.datetime.now(datetime.timezone.utc)
    bench.log(f"backend {info['backend']} ({info['device']}); families "
              f"{','.join(args.families)}; algorithms {','.join(args.algorithms) or 'none'}; "
              f"multi-source {','.join(args.multi_source) or 'none'} ks {args.ks}; cuGraph: "
              f"{cg_status}")
    report = {
        "benchmark": "traversal",
        "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"),
        "device": info,
        "git": _git(),
        "argv": list(sys.argv[1:] if argv is None else argv),
        "cugraph": cg_status,
        "settings": {
            "quick": args.quick, "families": args.families, "algorithms": args.algorithms,
            "multi_source": args.multi_source, "ks": args.ks, "variants": args.variants,
            "variant_table": {a: [dict(v, requires=list(v["requires"])) for v in VARIANTS[a]]
                              for a in ALGORITHMS},
            "scale": args.scale, "edge_factor": args.edge_factor, "grid_side": args.grid_side,
            "seed": args.seed, "repeat": args.repeat, "multi_repeat": args.multi_repeat,
            "pagerank_tol": args.pagerank_tol, "pagerank_max_iter": args.pagerank_max_iter,
            "pagerank_alpha": PAGERANK_ALPHA, "budget": args.budget,
            "total_budget": args.total_budget, "max_call_seconds": args.max_call_seconds,
            "no_cugraph": args.no_cugraph, "tag": args.tag,
            "tolerances": {"sssp_rtol": SSSP_RTOL, "sssp_atol": SSSP_ATOL,
                           "pagerank_sum": PAGERANK_SUM_TOL, "pagerank_l1": PAGERANK_L1_TOL},
        },
        "graphs": {},
        "measurements": [],
        "cugraph_rows": [],
        "multi_source": [],
        "failures": bench.failures,
    }
    for name in args.families:
        multi_here = bool(args.multi_source) and name == MULTI_FAMILY
        if not args.algorithms and not multi_here:
            continue
        skip = budget.total_spent()
        if skip:
            bench.log(f"{name}: {skip}; graph not built")
            for algorithm in args.algorithms:
                for v in VARIANTS[algorithm]:
                    if v["name"] in args.variants:
                        report["measurements"].append(
                            {"family": name, "algorithm": algorithm, "variant": v["name"],
                             "options": dict(v["options"]), "status": skip,
                             "repeat": args.repeat})
            if multi_here:
                for algorithm in args.multi_source:
                    for k in args.ks:
                        report["multi_source"].append(
                            {"family": name, "algorithm": algorithm, "k": k, "status": skip,
                             "repeat": args.multi_repeat})
            continue
        try:
            fam = build_family(bench, args, name)
        except Exception as e:
            bench.log(traceback.format_exc())
            bench.fail(f"{name}: graph construction raised {type(e).__name__}: {e}")
            continue
        report["graphs"][name] = fam.stats
        defaults = not args.quick and all(getattr(args, k) == DEFAULTS[k] for k in (
            ("scale", "edge_factor") if name == "rmat" else ("grid_side",)))
        if defaults and fam.stats["input_edges"] < MIN_DEFAULT[name]:
            bench.fail(f"{name}: default graph too small: {fam.stats['input_edges']:,} input "
                       f"edges (need >= {MIN_DEFAULT[name]:,})")
        for algorithm in args.algorithms:
            rows, cg_row = run_section(bench, args, fam, algorithm, cg, cg_status, budget)
            report["measurements"].extend(rows)
            if cg_row:
                report["cugraph_rows"].append(cg_row)
        if multi_here:
            for algorithm in args.multi_source:
                for k in args.ks:
                    report["multi_source"].append(
                        measure_multi(bench, args, fam, algorithm, k, cg, cg_status, budget))
        del fam
        _free_device_memory()
    if args.multi_source and MULTI_FAMILY not in args.families:
        bench.log(f"multi-source runs need the {MULTI_FAMILY} family; none ran")
    report["reference_comparison"] = reference_rows(report)
    report["ok"] = not bench.failures
    report["elapsed_s"] = time.perf_counter() - bench.t0
    out, stem = output_stem(args, "traversal", info, report["date"])
    return write_report(bench, report, out / stem, markdown(report))


if __name__ == "__main__":
    sys.exit(main())
