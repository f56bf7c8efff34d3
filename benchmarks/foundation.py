"""Foundation benchmark: graph construction, first-call compile time, time per iteration and
time to convergence of PageRank and label propagation on one R-MAT graph.

    python -m benchmarks.foundation [--scale 22] [--edge-factor 16] [--ks 4,16,64] [--repeat 3]
                                    [--out benchmarks/results] [--quick]

What it measures (all on one Graph500 R-MAT graph, fixed seed; every vertex id in
``[0, 2**scale)`` is a vertex, isolated ones included):

1. graph construction (pandas edge frame -> :class:`~onyx_rapids.graph.Graph` on the device) and
   the graph's statistics;
2. first-call time of every variant (the first call in the process, Numba compilation of the
   generated kernels included) and ``compile = first call - median warm call``;
3. time per iteration of every variant NFA/NCD, FA/NCD, NFA/CD, FA/CD (feature_aware x
   change_driven), unfolded and folded, default direction (pull for NCD, push for CD; unfolded
   CD PageRank switches per iteration, reported as "auto"): one warm-up call, then
   ``--repeat`` timed calls of ``--max-iter`` iterations (NCD with ``tol=1e-12`` so that the
   iteration count is fixed; CD with ``--tol``, its work-saving threshold), device
   synchronized before and after, ``time.perf_counter``;
4. for each change-driven variant, a run to convergence (``--tol``, ``--conv-max-iter``) next to
   the NCD run of the same mapping and folding.

Every result is checked: finite, PageRank sums to 1 (1e-3), label-propagation rows sum to 1
(1e-3), and each variant agrees with the FA/NCD unfolded result of the same algorithm, k and
iteration budget (PageRank L1 <= 1e-3, label-propagation max abs <= 1e-3).  A failed check prints
a ``FAILED`` line at once and again at the end; the results are still written and the exit
status is 1.

Output: ``<out>/foundation_<device-slug>_<date>[_<tag>][_quick].json`` (everything) and ``.md``
(tables), the Markdown also printed to stdout at the end.  Progress goes to stderr.

Restricting a run (e.g. to fit a time limit): ``--algorithms pagerank``, ``--ks 64``,
``--variants FA/NCD,FA/CD/fold`` (FA/NCD, the reference, always runs), ``--skip-convergence``;
give split runs of one day different ``--tag`` values or ``--out`` folders.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import re
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import onyx_rapids as onyx
from onyx_rapids import datasets, device, io, operators
from onyx_rapids.graph import Graph

ALGORITHMS = ("pagerank", "label_propagation")

#: (feature_aware, change_driven, fold), in the order they run.
VARIANTS = tuple(
    (fa, cd, fold) for cd in (False, True) for fa in (False, True) for fold in (False, True)
)
REFERENCE = (True, False, False)  # FA/NCD unfolded: every variant is checked against it
BASELINE = (False, False, False)  # NFA/NCD unfolded: speedups are over it

NCD_TOL = 1e-12  # bulk runs never stop early at this tolerance: fixed iteration count
PAGERANK_SUM_TOL = 1e-3
AGREE_TOL = {"pagerank": 1e-3, "label_propagation": 1e-3}
AGREE_METRIC = {"pagerank": "l1", "label_propagation": "max_abs"}
LABEL_SEED = 1
LABEL_FRACTION = 0.01

DEFAULTS = dict(scale=22, edge_factor=16, ks="4,16,64", repeat=3, max_iter=20, conv_max_iter=100)
QUICK = dict(scale=8, edge_factor=8, ks="4", repeat=1, max_iter=3, conv_max_iter=10)
MIN_DEFAULT_VERTICES = 1 << 22
MIN_DEFAULT_EDGES = 32_000_000


def variant_name(v) -> str:
    fa, cd, fold = v
    return f"{'FA' if fa else 'NFA'}/{'CD' if cd else 'NCD'}" + ("/fold" if fold else "")


_BY_NAME = {variant_name(v).lower(): v for v in VARIANTS}


# ------------------------------------------------------------------------------ arguments


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.foundation",
        description="Foundation benchmark of onyx_rapids (see the module docstring).",
    )
    p.add_argument("--scale", type=int, help=f"R-MAT scale (default {DEFAULTS['scale']})")
    p.add_argument("--edge-factor", type=int,
                   help=f"R-MAT edges per vertex (default {DEFAULTS['edge_factor']})")
    p.add_argument("--seed", type=int, default=0, help="R-MAT seed (default 0)")
    p.add_argument("--ks", help=f"label-propagation class counts (default {DEFAULTS['ks']})")
    p.add_argument("--repeat", type=int, help=f"timed calls per variant (default {DEFAULTS['repeat']})")
    p.add_argument("--max-iter", type=int,
                   help=f"iterations of the fixed-count runs (default {DEFAULTS['max_iter']})")
    p.add_argument("--tol", type=float, default=1e-6,
                   help="tolerance of the CD runs and of the runs to convergence (default 1e-6)")
    p.add_argument("--conv-max-iter", type=int,
                   help=f"max_iter of the runs to convergence (default {DEFAULTS['conv_max_iter']})")
    p.add_argument("--conv-repeat", type=int, default=1,
                   help="timed runs to convergence per variant (default 1; kernels are warm)")
    p.add_argument("--skip-convergence", action="store_true", help="no runs to convergence")
    p.add_argument("--algorithms", default=",".join(ALGORITHMS),
                   help="comma-separated subset of " + ",".join(ALGORITHMS))
    p.add_argument("--variants", default="all",
                   help="comma-separated subset of " + ",".join(variant_name(v) for v in VARIANTS)
                   + f" (default all; {variant_name(REFERENCE)} always runs: it is the reference)")
    p.add_argument("--out", default="benchmarks/results", help="output folder")
    p.add_argument("--tag", default="",
                   help="appended to the output file names (to keep split runs of one day apart)")
    p.add_argument("--quick", action="store_true",
                   help="tiny run for tests: scale 8, edge factor 8, ks 4, repeat 1, max_iter 3, "
                        "conv max_iter 10 (explicit options still win)")
    args = p.parse_args(argv)

    base = QUICK if args.quick else DEFAULTS
    for key, value in base.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    try:
        args.ks = [int(x) for x in str(args.ks).split(",") if x.strip()]
    except ValueError:
        p.error(f"--ks must be comma-separated integers, got {args.ks!r}")
    if not args.ks or min(args.ks) < 1:
        p.error("--ks needs at least one positive integer")
    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    unknown = [a for a in algorithms if a not in ALGORITHMS]
    if unknown or not algorithms:
        p.error(f"--algorithms: unknown {unknown}; choose from {', '.join(ALGORITHMS)}")
    args.algorithms = [a for a in ALGORITHMS if a in algorithms]
    if args.variants.strip().lower() == "all":
        chosen = set(VARIANTS)
    else:
        names = [x.strip().lower() for x in args.variants.split(",") if x.strip()]
        unknown = [x for x in names if x not in _BY_NAME]
        if unknown:
            p.error(f"--variants: unknown {unknown}; choose from "
                    + ", ".join(variant_name(v) for v in VARIANTS))
        chosen = {_BY_NAME[x] for x in names}
    chosen.add(REFERENCE)
    args.variants = [v for v in VARIANTS if v in chosen]
    for key in ("scale", "edge_factor", "repeat", "max_iter", "conv_max_iter", "conv_repeat"):
        if getattr(args, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be >= 1")
    if not args.tol > 0:
        p.error("--tol must be positive")
    return args


# ------------------------------------------------------------------------------ helpers


class Bench:
    """Progress log and the list of failed checks."""

    def __init__(self):
        self.t0 = time.perf_counter()
        self.failures: list[str] = []

    def log(self, msg: str) -> None:
        print(f"[{time.perf_counter() - self.t0:8.1f} s] {msg}", file=sys.stderr, flush=True)

    def fail(self, msg: str) -> None:
        self.failures.append(msg)
        line = f"FAILED: {msg}"
        print("!" * 78 + "\n" + line + "\n" + "!" * 78, file=sys.stderr, flush=True)
        print(line, flush=True)


def _timed(fn):
    """(fn(), milliseconds), the device synchronized before and after."""
    device.synchronize()
    t = time.perf_counter()
    out = fn()
    device.synchronize()
    return out, (time.perf_counter() - t) * 1e3


def _kernel_misses() -> int:
    return int(operators.kernel_cache_info()["misses"])


def _free_device_memory(torch_cache: bool = False) -> None:
    """Collect garbage and hand CuPy's pooled blocks back (and torch's cache, if asked and
    torch is imported) so the next measurement starts from free memory."""
    gc.collect()
    if device.BACKEND == "gpu":
        device.xp.get_default_memory_pool().free_all_blocks()
        torch = sys.modules.get("torch") if torch_cache else None
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()


def lp_labels(g, k: int, seed: int = LABEL_SEED, fraction: float = LABEL_FRACTION):
    """``vertex``, ``label``: a fixed random ``fraction`` of the vertices (original ids), each with
    a random class in [0, k)."""
    rng = np.random.default_rng(seed)
    count = max(1, int(round(g.n * fraction)))
    idx = np.sort(rng.choice(g.n, size=count, replace=False))
    ids = device.to_host(g.vertices)[idx].astype(np.int64)
    classes = rng.integers(0, k, size=count, dtype=np.int64)
    return pd.DataFrame({"vertex": ids, "label": classes})


def run_algorithm(algorithm, g, labels, k, variant, tol, max_iter):
    """One call of ``algorithm`` in ``variant``: (result frame, info dict)."""
    fa, cd, fold = variant
    opts = dict(tol=tol, max_iter=max_iter, feature_aware=fa, change_driven=cd, fold=fold,
                direction="auto", return_info=True)
    fn = getattr(onyx, algorithm)  # looked up per call (tests patch it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": expected here
        if algorithm == "pagerank":
            return fn(g, **opts)
        return fn(g, labels, k, **opts)


def _column(frame, name):
    col = frame[name]
    if hasattr(col, "to_cupy"):  # cuDF
        return col.to_cupy()
    return device.asarray(col.to_numpy())


def result_matrix(algorithm, frame, k):
    """The result as an n x c float64 backend array (c = 1 for PageRank, k for LP)."""
    xp = device.xp
    names = ["pagerank"] if algorithm == "pagerank" else [f"lp_{j}" for j in range(k)]
    missing = [c for c in names if c not in list(frame.columns)]
    if missing:
        raise KeyError(f"{algorithm} result lacks columns {missing} (has {list(frame.columns)})")
    return xp.stack([_column(frame, c).astype(np.float64) for c in names], axis=1)


def sanity(algorithm, mat) -> dict:
    """Finite values; PageRank sums to 1, each LP row sums to 1 (within 1e-3)."""
    xp = device.xp
    finite = bool(xp.isfinite(mat).all())
    if algorithm == "pagerank":
        total = float(mat.sum())
        ok = finite and abs(total - 1.0) <= PAGERANK_SUM_TOL
        return {"finite": finite, "sum": total, "ok": bool(ok)}
    rows = mat.sum(axis=1)
    dev = float(xp.abs(rows - 1.0).max()) if mat.shape[0] else 0.0
    ok = finite and dev <= PAGERANK_SUM_TOL
    return {"finite": finite, "max_row_sum_error": dev, "ok": bool(ok)}


def distance(algorithm, a, b) -> float:
    xp = device.xp
    diff = xp.abs(a - b)
    return float(diff.sum() if AGREE_METRIC[algorithm] == "l1" else diff.max())


def _agreement(algorithm, mat, ref) -> dict:
    d = distance(algorithm, mat, ref)
    tol = AGREE_TOL[algorithm]
    return {"against": variant_name(REFERENCE), "metric": AGREE_METRIC[algorithm], "value": d,
            "tol": tol, "ok": bool(d <= tol)}  # NaN fails


def _label(algorithm, k) -> str:
    return "pagerank" if algorithm == "pagerank" else f"label_propagation k={k}"


def _git() -> dict:
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return {"commit": head or None, "dirty_files": len(dirty.splitlines()) if dirty else 0}
    except Exception as e:  # no git, no repository
        return {"commit": None, "error": f"{type(e).__name__}: {e}"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "unknown"


def _plain(obj):
    """JSON fallback for NumPy scalars and arrays."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


# ------------------------------------------------------------------------------ phases


def build_graph(bench: Bench, args) -> tuple[Graph, dict]:
    bench.log(f"generating R-MAT scale {args.scale}, edge factor {args.edge_factor}, "
              f"seed {args.seed}")
    t = time.perf_counter()
    df = datasets.rmat(args.scale, args.edge_factor, seed=args.seed)
    gen_s = time.perf_counter() - t
    frame_bytes = int(df.memory_usage(index=False, deep=False).sum())
    bench.log(f"generated {len(df):,} edges ({frame_bytes / 2**30:.2f} GiB) in {gen_s:.1f} s; "
              "building the graph")
    all_ids = np.arange(1 << args.scale, dtype=np.int64)  # Graph500: n = 2**scale, isolated too
    g, build_ms = _timed(lambda: Graph.from_edgelist(df, "src", "dst", vertices=all_ids))
    del df, all_ids
    gc.collect()
    summary = g.summary()
    degree = g.out_degree.astype(np.int64) + g.in_degree.astype(np.int64)
    stats = {
        "generator": "rmat (Graph500: a=0.57, b=0.19, c=0.19, permuted)",
        "scale": args.scale,
        "edge_factor": args.edge_factor,
        "seed": args.seed,
        "n": int(g.n),
        "m": int(g.m),
        "max_out_degree": int(summary["max_out_degree"]),
        "max_in_degree": int(summary["max_in_degree"]),
        "max_degree": int(degree.max()) if g.n else 0,
        "non_isolated_vertices": int((degree > 0).sum()),
        "self_loops": int(summary["self_loops"]),
        "index_dtype": summary["index_dtype"],
        "edge_frame_bytes": frame_bytes,
        "generate_s": gen_s,
        "build_ms": build_ms,
    }
    del degree
    bench.log(f"graph n={g.n:,} m={g.m:,} max out/in degree "
              f"{stats['max_out_degree']:,}/{stats['max_in_degree']:,}, built in "
              f"{build_ms / 1e3:.2f} s")
    return g, stats


def measure_fixed(bench: Bench, args, algorithm, g, labels, k) -> list[dict]:
    """First call, warm calls and checks of every selected variant at ``args.max_iter``."""
    rows, pending, ref = [], [], None
    for v in args.variants:
        fa, cd, fold = v
        name = variant_name(v)
        tol = args.tol if cd else NCD_TOL
        row = {"algorithm": algorithm, "k": k, "variant": name, "feature_aware": fa,
               "change_driven": cd, "fold": fold, "tol": tol, "max_iter": args.max_iter}
        rows.append(row)
        try:
            def call():
                return run_algorithm(algorithm, g, labels, k, v, tol, args.max_iter)

            misses = _kernel_misses()
            (frame, info), first_ms = _timed(call)
            row["kernels_compiled"] = _kernel_misses() - misses
            del frame
            times = []
            misses = _kernel_misses()
            for r in range(args.repeat):
                (frame, info), ms = _timed(call)
                times.append(ms)
                if r < args.repeat - 1:
                    del frame
            row["kernels_compiled_while_timed"] = _kernel_misses() - misses
            median = statistics.median(times)
            iterations = int(info["iterations"])
            row.update(direction=info.get("direction"), first_call_ms=first_ms, times_ms=times,
                       median_ms=median, iterations=iterations,
                       converged=bool(info["converged"]),
                       ms_per_iter=median / iterations if iterations else None,
                       compile_ms=first_ms - median)
            mat = result_matrix(algorithm, frame, k)
            del frame
            row["check"] = sanity(algorithm, mat)
            if not row["check"]["ok"]:
                bench.fail(f"{_label(algorithm, k)} {name}: result check {row['check']}")
            if row["kernels_compiled_while_timed"]:
                bench.log(f"warning: {row['kernels_compiled_while_timed']} kernel(s) compiled "
                          "during the timed calls (kernel cache too small?)")
            if v == REFERENCE:
                ref = mat
                row["agreement"] = {"against": name, "metric": AGREE_METRIC[algorithm],
                                    "value": 0.0, "tol": AGREE_TOL[algorithm], "ok": True}
                for prow, pmat in pending:
                    _record_agreement(bench, algorithm, k, prow, pmat, ref)
                pending = []
            elif ref is None:
                pending.append((row, mat))
            else:
                _record_agreement(bench, algorithm, k, row, mat, ref)
            del mat
            bench.log(f"{_label(algorithm, k)} {name:<12} ({row['direction']}): first "
                      f"{first_ms:9.1f} ms, median {median:9.2f} ms, {iterations} it, "
                      f"{row['ms_per_iter']:.3f} ms/it")
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
            bench.log(traceback.format_exc())
            bench.fail(f"{_label(algorithm, k)} {name}: raised {row['error']}")
    for prow, _ in pending:  # the reference itself failed
        prow["agreement"] = {"against": variant_name(REFERENCE), "ok": False,
                             "error": "reference unavailable"}
        bench.fail(f"{_label(algorithm, k)} {prow['variant']}: no reference to compare with")
    del ref, pending
    base = next((r for r in rows if r["variant"] == variant_name(BASELINE)), None)
    for row in rows:
        if base and base.get("ms_per_iter") and row.get("ms_per_iter"):
            row["speedup_vs_nfa_ncd"] = base["ms_per_iter"] / row["ms_per_iter"]
        else:
            row["speedup_vs_nfa_ncd"] = None
    _free_device_memory()
    return rows


def _record_agreement(bench, algorithm, k, row, mat, ref) -> None:
    row["agreement"] = _agreement(algorithm, mat, ref)
    if not row["agreement"]["ok"]:
        a = row["agreement"]
        bench.fail(f"{_label(algorithm, k)} {row['variant']}: disagrees with "
                   f"{a['against']}: {a['metric']} = {a['value']:.3g} > {a['tol']:g}")


def measure_result_frame(algorithm, g, k, repeat: int) -> float:
    """Median ms of building a result frame of this shape (part of every timed call)."""
    xp = device.xp
    cols = ({"pagerank": xp.full(g.n, 1.0 / max(g.n, 1), dtype=np.float32)}
            if algorithm == "pagerank" else {"lp_*": xp.full((g.n, k), 1.0 / k, dtype=np.float32)})
    times = []
    for _ in range(max(3, repeat)):
        frame, ms = _timed(lambda: io.to_frame(g, cols))
        del frame
        times.append(ms)
    return statistics.median(times)


def measure_convergence(bench: Bench, args, algorithm, g, labels, k, warmed) -> list[dict]:
    """Each selected CD variant run to convergence, next to the NCD run of the same mapping and
    folding; every result checked against the FA/NCD unfolded run to convergence."""
    cd_variants = [v for v in args.variants if v[1]]
    if not cd_variants:
        return []
    order = [REFERENCE]
    for fa, _, fold in cd_variants:
        for v in ((fa, False, fold), (fa, True, fold)):
            if v not in order:
                order.append(v)
    runs, ref = {}, None
    for v in order:
        name = variant_name(v)
        run = {"algorithm": algorithm, "k": k, "variant": name, "feature_aware": v[0],
               "change_driven": v[1], "fold": v[2], "tol": args.tol,
               "max_iter": args.conv_max_iter}
        runs[v] = run
        try:
            if v not in warmed:  # an NCD partner not measured above: compile it untimed
                run_algorithm(algorithm, g, labels, k, v, args.tol, 2)
                warmed.add(v)

            def call():
                return run_algorithm(algorithm, g, labels, k, v, args.tol, args.conv_max_iter)

            times = []
            for r in range(args.conv_repeat):
                (frame, info), ms = _timed(call)
                times.append(ms)
                if r < args.conv_repeat - 1:
                    del frame
            iterations = int(info["iterations"])
            median = statistics.median(times)
            run.update(direction=info.get("direction"), times_ms=times, total_ms=median,
                       iterations=iterations, converged=bool(info["converged"]),
                       ms_per_iter=median / iterations if iterations else None)
            mat = result_matrix(algorithm, frame, k)
            del frame
            run["check"] = sanity(algorithm, mat)
            if not run["check"]["ok"]:
                bench.fail(f"{_label(algorithm, k)} {name} (to convergence): result check "
                           f"{run['check']}")
            if v == REFERENCE:
                ref = mat
                run["agreement"] = {"against": name, "metric": AGREE_METRIC[algorithm],
                                    "value": 0.0, "tol": AGREE_TOL[algorithm], "ok": True}
            elif ref is None:
                run["agreement"] = {"ok": False, "error": "reference unavailable"}
                bench.fail(f"{_label(algorithm, k)} {name} (to convergence): no reference")
            else:
                run["agreement"] = _agreement(algorithm, mat, ref)
                if not run["agreement"]["ok"]:
                    a = run["agreement"]
                    bench.fail(f"{_label(algorithm, k)} {name} (to convergence): disagrees with "
                               f"{a['against']}: {a['metric']} = {a['value']:.3g} > {a['tol']:g}")
            del mat
            bench.log(f"{_label(algorithm, k)} {name:<12} to convergence: {iterations} it "
                      f"({'converged' if run['converged'] else 'NOT converged'}), "
                      f"{median:.1f} ms")
        except Exception as e:
            run["error"] = f"{type(e).__name__}: {e}"
            bench.log(traceback.format_exc())
            bench.fail(f"{_label(algorithm, k)} {name} (to convergence): raised {run['error']}")
    del ref
    _free_device_memory()
    rows = []
    for fa, _, fold in cd_variants:
        ncd, cd = runs[(fa, False, fold)], runs[(fa, True, fold)]
        speedup = (ncd["total_ms"] / cd["total_ms"]
                   if ncd.get("total_ms") and cd.get("total_ms") else None)
        rows.append({"algorithm": algorithm, "k": k, "feature_aware": fa, "fold": fold,
                     "ncd": ncd, "cd": cd, "cd_speedup": speedup})
    return rows


# ------------------------------------------------------------------------------ output


def _fmt(x, spec=".3f", none="—"):
    return none if x is None else format(x, spec)


def _ok(entry) -> str:
    if entry.get("error"):
        return "ERROR"
    checks = [entry.get("check", {}).get("ok"), entry.get("agreement", {}).get("ok")]
    return "ok" if all(c is True for c in checks) else "FAILED"


def markdown(report: dict) -> str:
    d, s, gr = report["device"], report["settings"], report["graph"]
    lines = [
        f"# Foundation benchmark: {d.get('device')} ({report['date']})",
        "",
        f"Backend {d.get('backend')}; numba {d.get('numba')}, numba-cuda {d.get('numba-cuda')}, "
        f"cupy {d.get('cupy')}, cudf {d.get('cudf')}; git {report['git'].get('commit')}"
        + (f" (+{report['git'].get('dirty_files')} changed files)"
           if report["git"].get("dirty_files") else ""),
        "",
        f"Graph: R-MAT scale {gr['scale']}, edge factor {gr['edge_factor']}, seed {gr['seed']}: "
        f"n = {gr['n']:,} ({gr['non_isolated_vertices']:,} with edges), m = {gr['m']:,}, "
        f"max degree {gr['max_degree']:,} (out {gr['max_out_degree']:,}, in "
        f"{gr['max_in_degree']:,}). Generated in {gr['generate_s']:.1f} s (CPU); "
        f"pandas -> Graph on the device in {gr['build_ms']:.1f} ms.",
        "",
        f"Fixed-count runs: max_iter {s['max_iter']}, tol {s['ncd_tol']:g} (NCD) / "
        f"{s['tol']:g} (CD), {s['repeat']} timed call(s) after one warm-up, median. "
        "ms/iter = median total / iterations; totals include the result frame "
        "(see 'frame ms'). LP labels: 1% of the vertices (seed 1).",
        "",
        "## Time per iteration",
        "",
        "| algorithm | k | variant | direction | ms/iter | iterations | total ms | frame ms "
        "| speedup vs NFA/NCD | check |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    frame_ms = {(f["algorithm"], f["k"]): f["ms"] for f in report["result_frame"]}
    for r in report["fixed"]:
        lines.append(
            f"| {r['algorithm']} | {r['k']} | {r['variant']} | {r.get('direction', '—')} | "
            f"{_fmt(r.get('ms_per_iter'))} | {r.get('iterations', '—')} | "
            f"{_fmt(r.get('median_ms'), '.2f')} | "
            f"{_fmt(frame_ms.get((r['algorithm'], r['k'])), '.2f')} | "
            f"{_fmt(r.get('speedup_vs_nfa_ncd'), '.2f')} | {_ok(r)} |")
    lines += [
        "",
        "## First-call compile time",
        "",
        "First call of each variant in the process (its generated kernels compiled) minus the "
        "median warm call. The first variant of the process also pays one-time costs "
        "(CUDA context use, CuPy kernels).",
        "",
        "| algorithm | k | variant | first call ms | warm ms | compile ms | kernels compiled |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for r in report["fixed"]:
        lines.append(
            f"| {r['algorithm']} | {r['k']} | {r['variant']} | "
            f"{_fmt(r.get('first_call_ms'), '.1f')} | {_fmt(r.get('median_ms'), '.1f')} | "
            f"{_fmt(r.get('compile_ms'), '.1f')} | {r.get('kernels_compiled', '—')} |")
    if report["convergence"]:
        lines += [
            "",
            f"## Run to convergence (tol {s['tol']:g}, max_iter {s['conv_max_iter']})",
            "",
            "| algorithm | k | mapping | fold | NCD iterations | NCD ms | CD iterations | CD ms "
            "| CD speedup | check |",
            "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for c in report["convergence"]:
            def its(run):
                if "iterations" not in run:
                    return "—"
                return f"{run['iterations']}" + ("" if run.get("converged") else " (not conv.)")
            ok = "ok" if _ok(c["ncd"]) == "ok" and _ok(c["cd"]) == "ok" else "FAILED"
            lines.append(
                f"| {c['algorithm']} | {c['k']} | {'FA' if c['feature_aware'] else 'NFA'} | "
                f"{'yes' if c['fold'] else 'no'} | {its(c['ncd'])} | "
                f"{_fmt(c['ncd'].get('total_ms'), '.1f')} | {its(c['cd'])} | "
                f"{_fmt(c['cd'].get('total_ms'), '.1f')} | {_fmt(c['cd_speedup'], '.2f')} | {ok} |")
    lines += ["", "**All checks passed.**" if not report["failures"] else
              "**FAILED checks:**\n\n" + "\n".join(f"- {f}" for f in report["failures"]), ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ main


def main(argv=None) -> int:
    args = parse_args(argv)
    bench = Bench()
    info = device.info()
    now = datetime.datetime.now(datetime.timezone.utc)
    bench.log(f"backend {info['backend']} ({info['device']}); variants "
              f"{', '.join(variant_name(v) for v in args.variants)}; algorithms "
              f"{', '.join(args.algorithms)}; ks {args.ks}")
    report = {
        "benchmark": "foundation",
        "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"),
        "device": info,
        "git": _git(),
        "argv": list(sys.argv[1:] if argv is None else argv),
        "settings": {
            "quick": args.quick, "scale": args.scale, "edge_factor": args.edge_factor,
            "seed": args.seed, "ks": args.ks, "repeat": args.repeat, "max_iter": args.max_iter,
            "ncd_tol": NCD_TOL, "tol": args.tol, "conv_max_iter": args.conv_max_iter,
            "conv_repeat": args.conv_repeat, "skip_convergence": args.skip_convergence,
            "algorithms": args.algorithms, "variants": [variant_name(v) for v in args.variants],
            "reference": variant_name(REFERENCE), "baseline": variant_name(BASELINE),
            "agreement_tol": AGREE_TOL, "agreement_metric": AGREE_METRIC,
            "tag": args.tag, "label_seed": LABEL_SEED, "label_fraction": LABEL_FRACTION, "direction": "auto",
        },
        "graph": {},
        "fixed": [],
        "compile": [],
        "result_frame": [],
        "convergence": [],
        "failures": bench.failures,
    }

    g = None
    try:
        g, report["graph"] = build_graph(bench, args)
        defaults = not args.quick and (args.scale, args.edge_factor) == (
            DEFAULTS["scale"], DEFAULTS["edge_factor"])
        if defaults and (g.n < MIN_DEFAULT_VERTICES or g.m < MIN_DEFAULT_EDGES):
            bench.fail(f"default graph too small: n={g.n}, m={g.m} (need >= "
                       f"{MIN_DEFAULT_VERTICES} vertices and {MIN_DEFAULT_EDGES} edges)")
    except Exception as e:
        bench.log(traceback.format_exc())
        bench.fail(f"graph construction raised {type(e).__name__}: {e}")

    if g is not None:
        for algorithm in args.algorithms:
            for k in ([1] if algorithm == "pagerank" else args.ks):
                labels = lp_labels(g, k) if algorithm == "label_propagation" else None
                bench.log(f"{_label(algorithm, k)}: {len(args.variants)} variants, "
                          f"max_iter {args.max_iter}")
                rows = measure_fixed(bench, args, algorithm, g, labels, k)
                report["fixed"].extend(rows)
                try:
                    report["result_frame"].append({"algorithm": algorithm, "k": k,
                                                   "ms": measure_result_frame(algorithm, g, k,
                                                                              args.repeat)})
                except Exception as e:
                    bench.log(f"result-frame timing raised {type(e).__name__}: {e}")
                if not args.skip_convergence:
                    warmed = {_BY_NAME[r["variant"].lower()] for r in rows if "error" not in r}
                    bench.log(f"{_label(algorithm, k)}: runs to convergence")
                    report["convergence"].extend(
                        measure_convergence(bench, args, algorithm, g, labels, k, warmed))
                del labels
        _free_device_memory()

    report["compile"] = [
        {key: r.get(key) for key in ("algorithm", "k", "variant", "first_call_ms", "median_ms",
                                     "compile_ms", "kernels_compiled")}
        for r in report["fixed"]
    ]
    report["ok"] = not bench.failures
    report["elapsed_s"] = time.perf_counter() - bench.t0

    out, stem = output_stem(args, "foundation", info, report["date"])
    return write_report(bench, report, out / stem, markdown(report))



def _int_list(text, what: str, p, allow_empty: bool = True) -> list[int]:
    """A comma-separated list of positive integers from the command line (``p.error`` else)."""
    try:
        values = [int(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        p.error(f"{what} must be comma-separated integers, got {text!r}")
    if (not values and not allow_empty) or min(values, default=1) < 1:
        p.error(f"{what} needs positive integers, got {text!r}")
    return values


def _choose(text: str, allowed, what: str, p, aliases=None) -> list[str]:
    """The named subset of ``allowed`` (in its order), ``aliases`` mapping other names."""
    chosen = [x.strip() for x in str(text).split(",") if x.strip()]
    if aliases:
        chosen = [aliases.get(x, x) for x in chosen]
    unknown = [x for x in chosen if x not in allowed]
    if unknown or not chosen:
        p.error(f"{what}: unknown {unknown}; choose from {', '.join(allowed)}")
    return [x for x in allowed if x in chosen]


def output_stem(args, name: str, info: dict, date: str) -> tuple[Path, str]:
    """(``args.out``, made if missing; the file stem ``name``_<device>_``date``[_<tag>][_quick])
    of a run's output files; also harness.py's and traversal.py's."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{name}_{_slug(info.get('device'))}_{date}"
    if args.tag:
        stem += f"_{_slug(args.tag)}"
    if args.quick:
        stem += "_quick"
    return out, stem


def write_report(bench: Bench, report: dict, stem: Path, text: str) -> int:
    """``stem``.json and ``stem``.md (``text``, also printed); the exit status (1: a check
    failed, each failure listed last)."""
    json_path, md_path = stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".md")
    json_path.write_text(json.dumps(report, indent=2, default=_plain) + "\n")
    md_path.write_text(text)
    bench.log(f"wrote {json_path} and {md_path}")
    print(text, flush=True)
    if bench.failures:
        print("=" * 78, flush=True)
        for f in bench.failures:
            print(f"FAILED: {f}", flush=True)
        print(f"FAILED: {len(bench.failures)} check(s) failed", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
