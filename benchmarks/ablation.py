"""Ablation benchmark: ONYX Table 7.2 (feature-aware mapping, change-driven iteration and folding
of every algorithm on several graph families) and Figure 7.3 (time per iteration against the
number of features k, FA vs NFA).

    python -m benchmarks.ablation [--families rmat,grid,ratings] [--scale 22] [--k 4]
                                  [--sweep 1,2,4,8,16,32,64,128]
                                  [--sweep-algorithm personalized_pagerank] [--max-iter 10]
                                  [--repeat 3] [--out benchmarks/results] [--quick]
                                  [--algorithms ...] [--variants ...] [--tag ...]
    python -m benchmarks.ablation --combine FILE.json [FILE.json ...] [--out DIR] [--tag ...]

Graph families (every one undirected: each input edge is stored in both directions, so the
stored ``m`` is about twice the input edge count; every id in range is a vertex, isolated ones
included):

* ``rmat``: Graph500 R-MAT/Kronecker (a=0.57, b=c=0.19, permuted), ``2**scale`` vertices,
  ``edge_factor * 2**scale`` input edges, symmetrized as Graph500's kernel 1 does (scale 22:
  67M input edges, 134M stored).  The foundation benchmark keeps this graph directed, so its
  numbers are not directly comparable with these;
* ``grid``: a road-like 4-neighbour 2-D grid, ``grid_side x grid_side`` vertices
  (4096: 33.5M input edges);
* ``ratings``: a bipartite users x items ratings graph from :func:`bipartite_ratings` (ratings
  1..5 as the one weight column; 2**25 = 33.5M ratings by default).  Only ALS runs on it, and
  ALS runs only on it.

Algorithms and their k features (``--k``, default 4): pagerank (k = 1 always),
personalized_pagerank (k sources), label_propagation (k classes, 1% of the vertices labelled),
feature_propagation (APPNP, k random features), als (k factors), belief_propagation (k states),
multi_manifold_ranking (k random positive edge weights and k initial scores),
multimodal_learning (k initial scores, 2 modalities of random edge weights).  Inputs are random
with fixed seeds, on the device before timing.

Variants: NFA/NCD, FA/NCD, NFA/CD, FA/CD (feature_aware x change_driven), each unfolded and
folded, direction "auto" (pull for NCD, push for CD; unfolded CD PageRank chooses push or pull
each iteration by the active vertices' out-edges, the SIMD-X rule).  An algorithm without a
``change_driven`` option (found from its signature) runs the NCD variants only; its CD cells
read "n/a".  Every variant runs ``--max-iter`` iterations with ``tol = --tol`` (default 1e-12,
so that no variant stops early and all do the same iterations; ``--cd-tol`` gives the CD runs a
larger, work-saving threshold instead).  Timing: one warm-up call (its time minus the median
warm call is the compile time), then ``--repeat`` calls, device synchronized before and after each,
``time.perf_counter``; ms/iteration = median call / iterations.  A call includes the
algorithm's set-up and building its result frame.

Device memory (GPU backend only): the warm-up call runs under a CuPy memory hook that adds up
the bytes CuPy's memory pool hands out and takes back (``malloc`` / ``free`` at the pool level,
in 512-byte blocks); ``peak_run_bytes`` is the highest running total: the high-water mark of
what one run holds at once through CuPy (every onyx_rapids array, the result's columns
included), beyond the graph and inputs that already existed.  ``baseline_pool_bytes`` and
``peak_pool_bytes`` are the pool's total size before (after releasing its free blocks) and after
the call, for reference.  Not counted: kernel local memory, and whatever cuDF takes from RMM if
it copies the columns into the result frame.  Under the simulator the arrays are NumPy's and the
three are None.  When CuPy allocates outside its default pool (another allocator installed, such
as RMM's: nothing reaches the pool or the hook) the three are None too and ``memory_note``
says so.  ONYX reports that folding shrinks the memory
footprint (belief propagation); the Markdown's "Device memory allocated by one run" table shows
ours.

Feature sweep: ``--sweep-algorithm`` (default personalized_pagerank) on the rmat graph for each
k of ``--sweep``, FA/NCD and NFA/NCD unfolded.

Checks (as in benchmarks/foundation.py): every result finite, PageRank sums to 1, personalized
PageRank columns sum to 1, label-propagation and belief rows sum to 1 (1e-3); every variant
agrees with the FA/NCD unfolded result of the same algorithm, graph and k (metric and tolerance
per algorithm in ``AGREE``); in the sweep NFA agrees with FA.  A failed check prints a ``FAILED``
line at once and again at the end; the results are still written and the exit status is 1.

Output under ``--out``: ``ablation_<device-slug>_<date>[_<tag>][_quick].json`` (device, graph
statistics, every measurement), ``.md`` (Table 7.2 layout, all variants, the sweep; also printed
to stdout) and ``ablation_sweep_<device-slug>_<date>[_<tag>][_quick].png`` (matplotlib; when it
is missing the reason is printed and only the table is written).  Progress goes to stderr.

``--quick``: tiny graphs (R-MAT scale 6, edge factor 8; 16 x 16 grid; 48 users x 16 items, 256
ratings), max_iter 2, repeat 1, sweep 1,2,4: for tests.

Restricting a run (e.g. to fit a time limit): ``--families grid``, ``--algorithms als``,
``--variants NFA/NCD,FA/CD`` (FA/NCD, the reference, always runs), ``--sweep none``; give split
runs of one day different ``--tag`` values or ``--out`` folders.  The sweep needs the rmat graph
and builds it even when ``--families`` leaves rmat out.

Merging split runs: ``--combine FILE.json [FILE.json ...]`` runs nothing; it reads the JSON
reports of earlier runs of this script (on one device) and writes one report from them under
``--out``, named as a run's (``ablation_<device-slug>_<date>[_<tag>][_quick]``, the latest
date of the files, ``_quick`` when every file is a quick run), with the table, the Markdown and
the sweep plot rebuilt.  Measurements are concatenated (one of the same section, family,
algorithm, k and variant in several files: the file later on the command line wins, and the log
says so; every row records its ``source`` file); graphs are united per family (a family whose
statistics, timings aside, differ between two files is an error); the sweep comes from the
files that have one (several: same algorithm and family, points united by k, a k measured
differently in two files is an error); failures are concatenated, each prefixed with its file's
name; ``settings.sources`` lists every file with its settings, git and timestamp, and a setting
that differs between the files is listed in ``settings.differing``.  All files must come from
the same device.  Run options (``--families``, ``--quick``, ...) are refused with
``--combine``; only ``--out`` and ``--tag`` apply.  The exit status is 1 when a merged failure
remains, as for a run.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import inspect
import json
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import onyx_rapids as onyx
from onyx_rapids import datasets, device
from onyx_rapids.graph import Graph

from .foundation import (BASELINE, REFERENCE, VARIANTS, Bench, _column, _fmt, _free_device_memory,
                         _choose, _git, _int_list, _kernel_misses, _slug, _timed, lp_labels,
                         variant_name, write_report)

ALGORITHMS = ("pagerank", "personalized_pagerank", "label_propagation", "feature_propagation",
              "als", "belief_propagation", "multi_manifold_ranking", "multimodal_learning")
FAMILIES = ("rmat", "grid", "ratings")
#: which algorithms run on which family: ALS only on the ratings graph, the others elsewhere
FAMILY_ALGORITHMS = {
    "rmat": tuple(a for a in ALGORITHMS if a != "als"),
    "grid": tuple(a for a in ALGORITHMS if a != "als"),
    "ratings": ("als",),
}
SWEEP_ALGORITHMS = tuple(a for a in ALGORITHMS if a not in ("pagerank", "als"))

#: result columns: a name (k = 1) or a prefix for name_0 .. name_{k-1}
RESULT_COLUMNS = {
    "pagerank": "pagerank", "personalized_pagerank": "ppr_", "label_propagation": "lp_",
    "feature_propagation": "h_", "als": "lf_", "belief_propagation": "belief_",
    "multi_manifold_ranking": "mmr_", "multimodal_learning": "mml_",
}
#: agreement with the reference: (metric, tolerance).  l1: sum |a - b| (PageRank sums to 1);
#: column_l1: max over columns of sum |a - b| (each PPR column sums to 1); max_abs; rel_l2:
#: ||a - b|| / ||ref||.  ALS solves float32 normal equations whose condition number amplifies
#: rounding over the alternations: 1e-2.
AGREE = {
    "pagerank": ("l1", 1e-3),
    "personalized_pagerank": ("column_l1", 1e-3),
    "label_propagation": ("max_abs", 1e-3),
    "feature_propagation": ("rel_l2", 1e-3),
    "als": ("rel_l2", 1e-2),
    "belief_propagation": ("max_abs", 1e-3),
    "multi_manifold_ranking": ("rel_l2", 1e-3),
    "multimodal_learning": ("rel_l2", 1e-3),
}
SUM_TOL = 1e-3
APPNP_ALPHA = 0.1
MML_MODALITIES = 2
INPUT_SEED = 1
MIN_DEFAULT_EDGES = 30_000_000  # input (undirected) edges of each default-size family

DEFAULTS = dict(scale=22, edge_factor=16, grid_side=4096, users=1 << 20, items=1 << 16,
                ratings=1 << 25, k=4, sweep="1,2,4,8,16,32,64,128", max_iter=10, repeat=3)
QUICK = dict(scale=6, edge_factor=8, grid_side=16, users=48, items=16, ratings=256, k=4,
             sweep="1,2,4", max_iter=2, repeat=1)

_BY_NAME = {variant_name(v).lower(): v for v in VARIANTS}
#: Table 7.2 columns: (header, variant, over): the speedup of ``variant`` over ``over``
SPEEDUPS = (
    ("FA/NCD speedup", (True, False, False), BASELINE),
    ("NFA/CD speedup", (False, True, False), BASELINE),
    ("FA/CD speedup", (True, True, False), BASELINE),
    ("FA/CD folded over unfolded", (True, True, True), (True, True, False)),
    ("FA/NCD folded over unfolded", (True, False, True), (True, False, False)),
)


# ------------------------------------------------------------------------------ arguments


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.ablation",
        description="ONYX Table 7.2 / Figure 7.3 ablation of onyx_rapids (see the module "
                    "docstring).",
    )
    p.add_argument("--families", default=",".join(FAMILIES),
                   help="comma-separated subset of " + ",".join(FAMILIES))
    p.add_argument("--algorithms", default=",".join(ALGORITHMS),
                   help="comma-separated subset of " + ",".join(ALGORITHMS))
    p.add_argument("--variants", default="all",
                   help="comma-separated subset of " + ",".join(variant_name(v) for v in VARIANTS)
                   + f" (default all; {variant_name(REFERENCE)} always runs: it is the reference)")
    p.add_argument("--scale", type=int, help=f"R-MAT scale (default {DEFAULTS['scale']})")
    p.add_argument("--edge-factor", type=int,
                   help=f"R-MAT input edges per vertex (default {DEFAULTS['edge_factor']})")
    p.add_argument("--grid-side", type=int,
                   help=f"grid rows = columns (default {DEFAULTS['grid_side']})")
    p.add_argument("--users", type=int, help=f"ratings graph users (default {DEFAULTS['users']})")
    p.add_argument("--items", type=int, help=f"ratings graph items (default {DEFAULTS['items']})")
    p.add_argument("--ratings", type=int,
                   help=f"ratings (distinct user-item pairs; default {DEFAULTS['ratings']})")
    p.add_argument("--seed", type=int, default=0, help="graph generator seed (default 0)")
    p.add_argument("--k", type=int, help=f"features per algorithm (default {DEFAULTS['k']})")
    p.add_argument("--sweep", help=f"k values of the feature sweep (default {DEFAULTS['sweep']}; "
                                   "'none' skips it)")
    p.add_argument("--sweep-algorithm", default="personalized_pagerank",
                   help="algorithm of the feature sweep, one of " + ",".join(SWEEP_ALGORITHMS))
    p.add_argument("--max-iter", type=int,
                   help=f"iterations of every run (default {DEFAULTS['max_iter']})")
    p.add_argument("--repeat", type=int,
                   help=f"timed calls per variant (default {DEFAULTS['repeat']})")
    p.add_argument("--tol", type=float, default=1e-12,
                   help="tol of every run (default 1e-12: no run stops early)")
    p.add_argument("--cd-tol", type=float,
                   help="tol of the change-driven runs (their push threshold; default --tol)")
    p.add_argument("--out", default="benchmarks/results", help="output folder")
    p.add_argument("--tag", default="",
                   help="appended to the output file names (to keep split runs of one day apart)")
    p.add_argument("--quick", action="store_true",
                   help="tiny run for tests: R-MAT scale 6 / edge factor 8, 16 x 16 grid, 48 x 16 "
                        "ratings graph with 256 ratings, max_iter 2, repeat 1, sweep 1,2,4 "
                        "(explicit options still win)")
    p.add_argument("--combine", nargs="+", metavar="FILE.json",
                   help="run nothing: merge the JSON reports of earlier (split) runs into one "
                        "report under --out (named with --tag); no other run option applies")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    if args.combine is not None:
        return _combine_args(p, args)

    base = QUICK if args.quick else DEFAULTS
    for key, value in base.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.families = _choose(args.families, FAMILIES, "--families", p)
    args.algorithms = _choose(args.algorithms, ALGORITHMS, "--algorithms", p)
    if str(args.sweep).strip().lower() in ("none", ""):
        args.sweep = []
    else:
        args.sweep = _int_list(args.sweep, "--sweep", p)
    if args.sweep_algorithm not in SWEEP_ALGORITHMS:
        p.error(f"--sweep-algorithm: {args.sweep_algorithm!r}; choose from "
                + ", ".join(SWEEP_ALGORITHMS))
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
    for key in ("scale", "edge_factor", "grid_side", "users", "items", "ratings", "k",
                "max_iter", "repeat"):
        if getattr(args, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be >= 1")
    if args.ratings > args.users * args.items:
        p.error(f"--ratings {args.ratings} exceeds users x items = {args.users * args.items}")
    if args.cd_tol is None:
        args.cd_tol = args.tol
    if not (args.tol > 0 and args.cd_tol > 0):
        p.error("--tol and --cd-tol must be positive")
    return args


#: options that still apply with --combine: where the merged report goes and its name
COMBINE_OPTIONS = ("combine", "out", "tag")
#: keys every ablation report has (a JSON lacking one is not a report of this script)
REPORT_KEYS = ("date", "device", "graphs", "measurements", "settings", "failures")


def _combine_args(p, args) -> argparse.Namespace:
    """--combine: refuse run options (they would be silently ignored) and read every file, so
    that a missing or wrong file is an argument error before anything is written."""
    # an option left at its default was not given (giving the default explicitly changes nothing)
    given = [f"--{dest.replace('_', '-')}" for dest, value in vars(args).items()
             if dest not in COMBINE_OPTIONS and value != p.get_default(dest)]
    if given:
        p.error(f"--combine merges earlier results and runs nothing; it takes no run options "
                f"(got {', '.join(given)}; only --out and --tag apply)")
    args.combine_reports = [(name, _load_report(p, name)) for name in args.combine]
    return args


def _load_report(p, name: str) -> dict:
    path = Path(name)
    if not path.is_file():
        p.error(f"--combine: {name}: no such file")
    try:
        report = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:  # JSONDecodeError is a ValueError
        p.error(f"--combine: {name} is not valid JSON ({e})")
    if not isinstance(report, dict) or report.get("benchmark") != "ablation":
        what = report.get("benchmark") if isinstance(report, dict) else type(report).__name__
        p.error(f"--combine: {name} is not an ablation report (benchmark: {what!r})")
    missing = [key for key in REPORT_KEYS if key not in report]
    if missing:
        p.error(f"--combine: {name} is not a complete ablation report (lacks {', '.join(missing)})")
    return report


# ------------------------------------------------------------------------------ graphs


def bipartite_ratings(n_users: int, n_items: int, m: int, seed: int = 0) -> pd.DataFrame:
    """``m`` distinct ratings: int64 ``src`` (user ids ``0..n_users-1``), ``dst`` (item ids
    ``n_users..n_users+n_items-1``: offset so that the two sides never collide) and float32
    ``rating`` (integers 1..5).  Users are uniform; item popularity is skewed (item index
    ``floor(n_items * u**2)``, u uniform: the most popular item gets ~1/sqrt(n_items) of the
    ratings), as in real ratings data.  Duplicate pairs are dropped and topped up from further
    draws; rows stay in draw order.  Deterministic for a seed; build the graph undirected.

    >>> df = bipartite_ratings(10, 5, 30, seed=1)
    >>> len(df), int(df["src"].max()) < 10, int(df["dst"].min()) >= 10
    (30, True, True)
    """
    for name, value in (("n_users", n_users), ("n_items", n_items), ("m", m)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if m > n_users * n_items:
        raise ValueError(f"m={m} exceeds the {n_users * n_items} possible user-item pairs")
    pair_rng, rating_rng = np.random.default_rng(seed).spawn(2)
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < m:
        draw = int((m - len(keys)) * 1.05) + 16
        users = pair_rng.integers(0, n_users, size=draw, dtype=np.int64)
        items = np.minimum((n_items * pair_rng.random(draw) ** 2).astype(np.int64), n_items - 1)
        keys = np.concatenate([keys, users * n_items + items])
        _, first = np.unique(keys, return_index=True)
        keys = keys[np.sort(first)]  # first occurrences, in draw order
    keys = keys[:m]
    src, item = np.divmod(keys, n_items)
    rating = rating_rng.integers(1, 6, size=m).astype(np.float32)
    return pd.DataFrame({"src": src, "dst": item + n_users, "rating": rating})


def _stats(g, extra: dict) -> dict:
    summary = g.summary()
    degree = g.out_degree  # undirected: out-degree = in-degree
    return {**extra, "n": int(g.n), "m": int(g.m), "directed": bool(g.directed),
            "max_degree": int(summary["max_out_degree"]),
            "mean_degree": float(g.m / g.n) if g.n else 0.0,
            "non_isolated_vertices": int((degree > 0).sum()),
            "self_loops": int(summary["self_loops"]), "index_dtype": summary["index_dtype"]}


def build_family(bench: Bench, args, family: str):
    """(graph, statistics, context) of one family; context holds what inputs need (ALS sides)."""
    if family == "rmat":
        desc = (f"R-MAT scale {args.scale}, edge factor {args.edge_factor}, seed {args.seed}, "
                "symmetrized")
        extra = {"generator": "rmat (Graph500: a=0.57, b=0.19, c=0.19, permuted), undirected",
                 "scale": args.scale, "edge_factor": args.edge_factor, "seed": args.seed}
        n_ids = 1 << args.scale
        make = lambda: datasets.rmat(args.scale, args.edge_factor, seed=args.seed)  # noqa: E731
        weight = None
    elif family == "grid":
        side = args.grid_side
        desc = f"{side} x {side} grid"
        extra = {"generator": "grid_2d (4-neighbour), undirected", "rows": side, "cols": side}
        n_ids = side * side
        make = lambda: datasets.grid_2d(side, side)  # noqa: E731
        weight = None
    else:
        desc = f"ratings {args.users} users x {args.items} items, {args.ratings} ratings"
        extra = {"generator": "bipartite_ratings (users uniform, item popularity ~ u**2, "
                              "ratings 1..5), undirected",
                 "users": args.users, "items": args.items, "ratings": args.ratings,
                 "seed": args.seed}
        n_ids = args.users + args.items
        make = lambda: bipartite_ratings(args.users, args.items, args.ratings,  # noqa: E731
                                         seed=args.seed)
        weight = "rating"
    bench.log(f"{family}: generating {desc}")
    t = time.perf_counter()
    df = make()
    gen_s = time.perf_counter() - t
    edges = len(df)
    bench.log(f"{family}: {edges:,} input edges in {gen_s:.1f} s; building the graph")
    ids = np.arange(n_ids, dtype=np.int64)
    g, build_ms = _timed(lambda: Graph.from_edgelist(df, "src", "dst", weight=weight,
                                                     directed=False, vertices=ids))
    del df
    gc.collect()
    context = {}
    if family == "ratings":  # users on side 0, items on side 1 (vertices are in id order)
        context["sides"] = (device.to_host(g.vertices) >= args.users).astype(np.int8)
    stats = _stats(g, {**extra, "input_edges": edges, "generate_s": gen_s, "build_ms": build_ms})
    bench.log(f"{family}: n={g.n:,} m={g.m:,} (stored, both directions), max degree "
              f"{stats['max_degree']:,}, built in {build_ms / 1e3:.2f} s")
    return g, stats, context


# ------------------------------------------------------------------------------ inputs and runs


def _rng(algorithm: str, k: int) -> np.random.Generator:
    return np.random.default_rng([INPUT_SEED, ALGORITHMS.index(algorithm), k])


def make_inputs(algorithm: str, g, k: int, context: dict) -> dict:
    """Fixed random inputs of ``algorithm`` with k features, arrays already on the device."""
    rng = _rng(algorithm, k)
    n, m = g.n, g.m

    def dev(a):
        return device.asarray(np.ascontiguousarray(a, dtype=np.float32))

    if algorithm == "pagerank":
        return {}
    if algorithm == "personalized_pagerank":  # k distinct sources with edges where possible
        candidates = np.flatnonzero(device.to_host(g.out_degree) > 0)
        if len(candidates) == 0:
            candidates = np.arange(n)
        idx = rng.choice(candidates, size=k, replace=len(candidates) < k)
        return {"sources": device.to_host(g.vertices)[idx].astype(np.int64)}
    if algorithm == "label_propagation":
        return {"labels": lp_labels(g, k)}
    if algorithm == "feature_propagation":
        return {"features": dev(rng.random((n, k), dtype=np.float32))}
    if algorithm == "als":
        return {"sides": context["sides"]}
    if algorithm == "belief_propagation":
        potential = np.full((k, k), 0.1, dtype=np.float64) + 0.8 * np.eye(k)
        return {"priors": dev(0.5 + rng.random((n, k), dtype=np.float32)),
                "potential": potential}
    if algorithm == "multi_manifold_ranking":
        return {"init": dev(rng.random((n, k), dtype=np.float32)),
                "weights": dev(0.1 + 0.9 * rng.random((m, k), dtype=np.float32))}
    if algorithm == "multimodal_learning":
        return {"init": dev(rng.random((n, k), dtype=np.float32)),
                "weights": dev(0.1 + 0.9 * rng.random((m, MML_MODALITIES), dtype=np.float32))}
    raise ValueError(f"unknown algorithm {algorithm!r}")


def _parameters(algorithm: str):
    """The parameters of ``algorithm`` as looked up now (tests patch onyx_rapids' functions;
    inspect.signature follows ``__wrapped__``)."""
    return inspect.signature(getattr(onyx, algorithm)).parameters


def supports_change_driven(algorithm: str) -> bool:
    return "change_driven" in _parameters(algorithm)


def run_algorithm(algorithm: str, g, inputs: dict, k: int, variant, tol: float, max_iter: int):
    """One call of ``algorithm`` in ``variant``: (result frame, info dict)."""
    fa, cd, fold = variant
    fn = getattr(onyx, algorithm)  # looked up per call (tests patch it)
    params = _parameters(algorithm)
    opts = dict(feature_aware=fa, fold=fold, direction="auto", return_info=True)
    if "change_driven" in params:
        opts["change_driven"] = cd
    elif cd:
        raise ValueError(f"{algorithm} has no change_driven option")
    if "tol" in params:
        opts["tol"] = tol
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": expected here
        if algorithm == "pagerank":
            return fn(g, max_iter=max_iter, **opts)
        if algorithm == "personalized_pagerank":
            return fn(g, inputs["sources"], max_iter=max_iter, **opts)
        if algorithm == "label_propagation":
            return fn(g, inputs["labels"], k, max_iter=max_iter, **opts)
        if algorithm == "feature_propagation":
            return fn(g, inputs["features"], alpha=APPNP_ALPHA, iterations=max_iter, **opts)
        if algorithm == "als":
            return fn(g, k, iterations=max_iter, sides=inputs["sides"], seed=INPUT_SEED, **opts)
        if algorithm == "belief_propagation":
            return fn(g, inputs["priors"], inputs["potential"], max_iter=max_iter, **opts)
        if algorithm in ("multi_manifold_ranking", "multimodal_learning"):
            return fn(g, inputs["init"], max_iter=max_iter, weights=inputs["weights"], **opts)
    raise ValueError(f"unknown algorithm {algorithm!r}")


def result_matrix(algorithm: str, frame, k: int):
    """The result as an n x c float64 backend array (c = 1 for PageRank, k otherwise)."""
    xp = device.xp
    name = RESULT_COLUMNS[algorithm]
    names = [name] if algorithm == "pagerank" else [f"{name}{j}" for j in range(k)]
    missing = [c for c in names if c not in list(frame.columns)]
    if missing:
        raise KeyError(f"{algorithm} result lacks columns {missing} (has {list(frame.columns)})")
    return xp.stack([_column(frame, c).astype(np.float64) for c in names], axis=1)


def sanity(algorithm: str, mat) -> dict:
    """Finite values; PageRank sums to 1, PPR columns and LP / belief rows sum to 1 (1e-3)."""
    xp = device.xp
    finite = bool(xp.isfinite(mat).all())
    out = {"finite": finite}
    if algorithm == "pagerank":
        out["sum"] = float(mat.sum())
        out["ok"] = finite and abs(out["sum"] - 1.0) <= SUM_TOL
    elif algorithm == "personalized_pagerank":
        err = float(xp.abs(mat.sum(axis=0) - 1.0).max()) if mat.shape[1] else 0.0
        out["max_column_sum_error"] = err
        out["ok"] = finite and err <= SUM_TOL
    elif algorithm in ("label_propagation", "belief_propagation"):
        err = float(xp.abs(mat.sum(axis=1) - 1.0).max()) if mat.shape[0] else 0.0
        out["max_row_sum_error"] = err
        out["ok"] = finite and err <= SUM_TOL
    else:
        out["ok"] = finite
    out["ok"] = bool(out["ok"])
    return out


def distance(metric: str, a, b) -> float:
    xp = device.xp
    diff = xp.abs(a - b)
    if metric == "l1":
        return float(diff.sum())
    if metric == "column_l1":
        return float(diff.sum(axis=0).max()) if diff.size else 0.0
    if metric == "max_abs":
        return float(diff.max()) if diff.size else 0.0
    if metric == "rel_l2":
        ref = float(xp.linalg.norm(b))
        return float(xp.linalg.norm(a - b)) / ref if ref > 0 else float(xp.linalg.norm(a - b))
    raise ValueError(f"unknown metric {metric!r}")


def agreement(algorithm: str, mat, ref, against: str) -> dict:
    metric, tol = AGREE[algorithm]
    d = distance(metric, mat, ref)
    return {"against": against, "metric": metric, "value": d, "tol": tol,
            "ok": bool(d <= tol)}  # NaN fails


def _label(family, algorithm, k) -> str:
    return f"{algorithm} k={k} on {family}"


def _pool_bytes():
    """Bytes held by CuPy's default memory pool (in use plus cached free blocks).  None under
    the simulator: its arrays are NumPy's, there is no device memory and no pool to read."""
    if device.BACKEND != "gpu":
        return None
    return int(device.xp.get_default_memory_pool().total_bytes())


def _pool_after_free():
    """The pool's bytes after releasing its free blocks: only what is alive remains, so that
    what the pool holds after the next call is that plus the call's high-water mark."""
    _free_device_memory()
    return _pool_bytes()


POOL_BYPASSED = ("not measured: CuPy allocated outside its default memory pool (another "
                 "allocator, e.g. RMM's, is installed)")


class _PeakCounter:
    """Running total and high-water mark of the bytes a memory pool has handed out: the
    callbacks of a CuPy ``MemoryHook`` (see :func:`_peak_hook`)."""

    name = "onyx_rapids_peak"

    def __init__(self):
        self.live = 0
        self.peak = 0

    def malloc_postprocess(self, **kw):
        self.live += int(kw["mem_size"])
        self.peak = max(self.peak, self.live)

    def free_postprocess(self, **kw):
        self.live -= int(kw["mem_size"])


def _peak_hook():
    """A :class:`_PeakCounter` installed as a CuPy memory hook (use it as a context manager);
    None under the simulator."""
    if device.BACKEND != "gpu":
        return None
    # the counter first: MemoryHook's own (no-op) callbacks must not shadow its methods
    hook_type = type("PeakHook", (_PeakCounter, device.xp.cuda.MemoryHook), {})
    hook = hook_type()
    _PeakCounter.__init__(hook)
    return hook


def measure(bench: Bench, args, family: str, algorithm: str, g, inputs: dict, k: int,
            variants, *, section: str = "table") -> list[dict]:
    """Warm-up and timed calls of each variant (the reference first), checked.  A CD variant of
    an algorithm without ``change_driven`` gives a row with ``skipped`` set.  The warm-up call
    also gives the device memory of one run (``baseline_pool_bytes``, ``peak_pool_bytes``,
    ``peak_run_bytes``: see the module docstring; None under the simulator or when the call
    failed)."""
    order = [REFERENCE] + [v for v in variants if v != REFERENCE]
    cd_ok = supports_change_driven(algorithm)
    rows, ref = [], None
    for v in order:
        fa, cd, fold = v
        name = variant_name(v)
        tol = args.cd_tol if cd else args.tol
        row = {"section": section, "family": family, "algorithm": algorithm, "k": k,
               "variant": name, "feature_aware": fa, "change_driven": cd, "fold": fold,
               "tol": tol, "max_iter": args.max_iter, "baseline_pool_bytes": None,
               "peak_pool_bytes": None, "peak_run_bytes": None}
        rows.append(row)
        if cd and not cd_ok:
            row["skipped"] = "n/a: no change_driven option"
            continue
        label = _label(family, algorithm, k)
        try:
            def call():
                return run_algorithm(algorithm, g, inputs, k, v, tol, args.max_iter)

            misses = _kernel_misses()
            # The pool never gives blocks back unless told to (or when a cudaMalloc fails, which
            # would show as a smaller peak), so its size right after the call is the call's
            # high-water mark on top of what was alive before.  Releasing the free blocks first
            # also makes the warm-up call pay for cudaMalloc again: compile_ms includes that.
            baseline = _pool_after_free()
            hook = _peak_hook()
            if hook is None:
                (frame, info), first_ms = _timed(call)
            else:
                with hook:
                    (frame, info), first_ms = _timed(call)
            row.update(baseline_pool_bytes=baseline, peak_pool_bytes=_pool_bytes(),
                       peak_run_bytes=None if hook is None else hook.peak)
            if hook is not None and hook.peak == 0 and not row["peak_pool_bytes"]:
                # nothing went through CuPy's default pool: CuPy allocates elsewhere (a
                # RAPIDS set-up may install RMM's allocator), where the hook cannot count
                row.update(baseline_pool_bytes=None, peak_pool_bytes=None, peak_run_bytes=None,
                           memory_note=POOL_BYPASSED)
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
                       ms_per_iter=median / iterations if iterations else None,
                       compile_ms=first_ms - median)
            if iterations != args.max_iter:
                bench.log(f"warning: {label} {name} ran {iterations} of {args.max_iter} "
                          "iterations")
            mat = result_matrix(algorithm, frame, k)
            del frame
            row["check"] = sanity(algorithm, mat)
            if not row["check"]["ok"]:
                bench.fail(f"{label} {name}: result check {row['check']}")
            if v == REFERENCE:
                ref = mat
                row["agreement"] = {"against": name, "metric": AGREE[algorithm][0], "value": 0.0,
                                    "tol": AGREE[algorithm][1], "ok": True}
            elif ref is None:
                row["agreement"] = {"against": variant_name(REFERENCE), "ok": False,
                                    "error": "reference unavailable"}
                bench.fail(f"{label} {name}: no reference to compare with")
            else:
                row["agreement"] = a = agreement(algorithm, mat, ref, variant_name(REFERENCE))
                if not a["ok"]:
                    bench.fail(f"{label} {name}: disagrees with {a['against']}: "
                               f"{a['metric']} = {a['value']:.3g} > {a['tol']:g}")
            del mat
            bench.log(f"{label} {name:<12} ({row['direction']}): first {first_ms:9.1f} ms, "
                      f"median {median:9.2f} ms, {iterations} it, "
                      f"{_fmt(row['ms_per_iter'])} ms/it")
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
            bench.log(traceback.format_exc())
            bench.fail(f"{label} {name}: raised {row['error']}")
    del ref
    _free_device_memory()
    return rows


# ------------------------------------------------------------------------------ tables


def _ms(rows, family, algorithm, variant, section="table"):
    name = variant_name(variant)
    for r in rows:
        if (r["section"], r["family"], r["algorithm"], r["variant"]) == (section, family,
                                                                         algorithm, name):
            return r
    return None


def table_rows(report: dict) -> list[dict]:
    """One Table 7.2 row per (algorithm, family) measured: NFA/NCD ms/iteration and speedups
    (None: not measured or failed; "n/a": the algorithm has no such variant)."""
    rows = report["measurements"]
    seen = []
    for r in rows:
        if r["section"] == "table" and (r["algorithm"], r["family"]) not in seen:
            seen.append((r["algorithm"], r["family"]))
    seen.sort(key=lambda af: (ALGORITHMS.index(af[0]), FAMILIES.index(af[1])))
    out = []
    for algorithm, family in seen:
        mine = [r for r in rows if r["section"] == "table" and r["algorithm"] == algorithm
                and r["family"] == family]
        base = _ms(rows, family, algorithm, BASELINE)
        entry = {"algorithm": algorithm, "family": family, "k": mine[0]["k"],
                 "nfa_ncd_ms_per_iter": base.get("ms_per_iter") if base else None,
                 "speedups": {}}
        for header, variant, over in SPEEDUPS:
            a, b = _ms(rows, family, algorithm, variant), _ms(rows, family, algorithm, over)
            if (a and a.get("skipped")) or (b and b.get("skipped")):
                value = "n/a"
            elif a and b and a.get("ms_per_iter") and b.get("ms_per_iter"):
                value = b["ms_per_iter"] / a["ms_per_iter"]
            else:
                value = None
            entry["speedups"][header] = value
        entry["ok"] = all(_status(r) in ("ok", "n/a") for r in mine)
        out.append(entry)
    return out


def _status(r) -> str:
    if r.get("skipped"):
        return "n/a"
    if r.get("error"):
        return "ERROR"
    checks = [r.get("check", {}).get("ok"), r.get("agreement", {}).get("ok")]
    return "ok" if all(c is True for c in checks) else "FAILED"


def _cell(x) -> str:
    if x == "n/a":
        return "n/a"
    return _fmt(x, ".2f") + ("x" if x is not None else "")


def _setting(s: dict, key: str, spec: str = "") -> str:
    """A setting for the text; in a combined report whose files differ in it, every distinct
    value and a note."""
    values = (s.get("differing") or {}).get(key)
    if values is None:
        return format(s[key], spec)
    distinct = []
    for v in values:
        if v not in distinct:
            distinct.append(v)
    return (" / ".join("—" if v is None else format(v, spec) for v in distinct)
            + " (differs between the source files)")


def _mib(r) -> str:
    if r is None:
        return "-"
    if r.get("skipped"):
        return "n/a"
    b = r.get("peak_run_bytes")
    return "-" if b is None else f"{b / 2**20:.1f}"


def markdown(report: dict) -> str:
    d, s = report["device"], report["settings"]
    lines = [
        f"# Ablation benchmark (ONYX Table 7.2, Figure 7.3): {d.get('device')} ({report['date']})",
        "",
        f"Backend {d.get('backend')}; numba {d.get('numba')}, numba-cuda {d.get('numba-cuda')}, "
        f"cupy {d.get('cupy')}, cudf {d.get('cudf')}; git {report['git'].get('commit')}"
        + (f" (+{report['git'].get('dirty_files')} changed files)"
           if report["git"].get("dirty_files") else ""),
        "",
    ]
    if s.get("sources"):
        lines += [f"Combined from {len(s['sources'])} result files: "
                  + ", ".join(f"{Path(src['file']).name} ({src.get('timestamp')})"
                              for src in s["sources"]) + ".", ""]
    lines += [
        "## Graphs",
        "",
        "All undirected: m counts both stored directions of every input edge.",
        "",
        "| family | generator | n | m | input edges | max degree | generate s | build ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for family, gr in report["graphs"].items():
        lines.append(f"| {family} | {gr['generator']} | {gr['n']:,} | {gr['m']:,} | "
                     f"{gr['input_edges']:,} | {gr['max_degree']:,} | {gr['generate_s']:.1f} | "
                     f"{gr['build_ms']:.1f} |")
    lines += [
        "",
        "## Table 7.2: time per iteration and speedups",
        "",
        f"k = {_setting(s, 'k')} (pagerank: 1); {_setting(s, 'max_iter')} iterations per call, "
        f"tol {_setting(s, 'tol', 'g')} (CD: {_setting(s, 'cd_tol', 'g')}); median of "
        f"{_setting(s, 'repeat')} synchronized call(s) after a warm-up; "
        "ms/iteration = call / iterations (set-up and result frame included). Speedups over "
        "NFA/NCD unfolded; the fold columns are folded over unfolded of the same variant. "
        "n/a: the algorithm has no change_driven option.",
        "",
        "| algorithm | graph | k | NFA/NCD ms/iter | " + " | ".join(h for h, _, _ in SPEEDUPS)
        + " | check |",
        "|---|---|---:|---:|" + "---:|" * len(SPEEDUPS) + "---|",
    ]
    for t in report["table"]:
        lines.append(
            f"| {t['algorithm']} | {t['family']} | {t['k']} | {_fmt(t['nfa_ncd_ms_per_iter'])} | "
            + " | ".join(_cell(t["speedups"][h]) for h, _, _ in SPEEDUPS)
            + f" | {'ok' if t['ok'] else 'FAILED'} |")
    names = [variant_name(v) for v in VARIANTS]
    lines += [
        "",
        "## All variants (ms/iteration)",
        "",
        "| algorithm | graph | k | " + " | ".join(names) + " |",
        "|---|---|---:|" + "---:|" * len(names),
    ]
    for t in report["table"]:
        cells = []
        for v in VARIANTS:
            r = _ms(report["measurements"], t["family"], t["algorithm"], v)
            if r is None:
                cells.append("—")
            elif r.get("skipped"):
                cells.append("n/a")
            else:
                st = _status(r)
                cells.append(_fmt(r.get("ms_per_iter")) + ("" if st == "ok" else f" {st}"))
        lines.append(f"| {t['algorithm']} | {t['family']} | {t['k']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Device memory allocated by one run (MiB)",
        "",
        "The most device memory one run (the warm-up call) held at once through CuPy's memory "
        "pool, counted by a memory hook: every onyx_rapids array, the result's columns "
        "included, beyond the graph and inputs already there. -: not measured (simulator backend, the call failed, or CuPy allocates outside its default pool); n/a: the algorithm "
        "has no such variant.",
        "",
        "| algorithm | graph | k | " + " | ".join(names) + " |",
        "|---|---|---:|" + "---:|" * len(names),
    ]
    for t in report["table"]:
        cells = [_mib(_ms(report["measurements"], t["family"], t["algorithm"], v))
                 for v in VARIANTS]
        lines.append(f"| {t['algorithm']} | {t['family']} | {t['k']} | " + " | ".join(cells) + " |")
    sweep = report.get("sweep") or {}
    if sweep.get("points"):
        lines += [
            "",
            f"## Feature sweep (Figure 7.3): {sweep['algorithm']} on {sweep['family']}",
            "",
            "NCD, unfolded; ms/iteration as above.",
            "",
            "| k | NFA ms/iter | FA ms/iter | FA speedup | check |",
            "|---:|---:|---:|---:|---|",
        ]
        for pt in sweep["points"]:
            lines.append(f"| {pt['k']} | {_fmt(pt['nfa_ms_per_iter'])} | "
                         f"{_fmt(pt['fa_ms_per_iter'])} | {_cell(pt['fa_speedup'])} | "
                         f"{'ok' if pt['ok'] else 'FAILED'} |")
        lines.append("")
        plot = report.get("plot") or {}
        lines.append(f"Plot: {plot['path']}" if plot.get("path")
                     else f"Plot not drawn: {plot.get('reason', 'no sweep')}")
    lines += ["", "**All checks passed.**" if not report["failures"] else
              "**FAILED checks:**\n\n" + "\n".join(f"- {f}" for f in report["failures"]), ""]
    return "\n".join(lines)


def plot_sweep(sweep: dict, path: Path, title: str) -> dict:
    """ms/iteration against k on log axes, FA vs NFA; {'path': ...} or {'reason': ...}."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # ImportError, or a broken installation
        return {"path": None, "reason": f"matplotlib is not available ({type(e).__name__}: {e}); "
                                        "wrote the sweep table only"}
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for fa, style in ((False, "o--"), (True, "s-")):
        key = "fa_ms_per_iter" if fa else "nfa_ms_per_iter"
        pts = [(pt["k"], pt[key]) for pt in sweep["points"] if pt[key]]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                    label="FA" if fa else "NFA")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("k (features)")
    ax.set_ylabel("ms / iteration")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return {"path": str(path), "reason": None}


# ------------------------------------------------------------------------------ combining


class CombineError(ValueError):
    """Result files that cannot be merged into one report (different devices, graphs or
    sweeps)."""


#: graph statistics that are timings: they differ between runs of the same graph
GRAPH_TIMINGS = ("generate_s", "build_ms")
#: settings merged by union (the others must agree, else they are listed as differing)
UNION_SETTINGS = ("families", "algorithms", "variants", "sweep", "sweep_algorithm", "tag",
                  "sources", "differing")


def _measurement_key(r) -> tuple:
    return (r["section"], r["family"], r["algorithm"], r["k"], r["variant"])


def _merge_graphs(sources) -> dict:
    graphs, origin = {}, {}
    for name, rep in sources:
        for family, stats in rep["graphs"].items():
            if family not in graphs:
                graphs[family], origin[family] = stats, name
                continue
            old = {k: v for k, v in graphs[family].items() if k not in GRAPH_TIMINGS}
            new = {k: v for k, v in stats.items() if k not in GRAPH_TIMINGS}
            if old != new:
                diff = ", ".join(f"{k} {old.get(k)!r} vs {new.get(k)!r}"
                                 for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k))
                raise CombineError(f"the {family} graph differs between {origin[family]} and "
                                   f"{name}: {diff}")
    order = [f for f in FAMILIES if f in graphs] + [f for f in graphs if f not in FAMILIES]
    return {f: graphs[f] for f in order}


def _merge_sweeps(sources) -> dict:
    """The sweep of the files that have one; a sweep split over several files (same algorithm,
    family and variants) is united by k.  Anything else that differs is an error."""
    sweep, first, points = {}, None, {}
    for name, rep in sources:
        sw = rep.get("sweep") or {}
        if not sw.get("points"):
            continue
        if first is None:
            sweep, first = dict(sw), name
        else:
            what = ("algorithm", "family", "variants")
            if any(sw.get(key) != sweep.get(key) for key in what):
                raise CombineError(
                    f"the sweeps of {first} and {name} differ: "
                    + " vs ".join(", ".join(f"{key} {x.get(key)!r}" for key in what)
                                  for x in (sweep, sw)))
        for pt in sw["points"]:
            if pt["k"] in points and points[pt["k"]][1] != pt:
                raise CombineError(f"the sweep point k={pt['k']} differs between "
                                   f"{points[pt['k']][0]} and {name}")
            points.setdefault(pt["k"], (name, pt))
    if sweep:
        sweep["ks"] = sorted(points)
        sweep["points"] = [points[k][1] for k in sweep["ks"]]
    return sweep


def _merge_settings(sources, sweep: dict, tag: str) -> dict:
    settings = [rep["settings"] for _, rep in sources]
    merged, differing = {}, {}
    for key in dict.fromkeys(k for st in settings for k in st):  # first-seen order
        if key in UNION_SETTINGS:
            continue
        values = [st.get(key) for st in settings]
        if all(v == values[0] for v in values):
            merged[key] = values[0]
        else:
            merged[key], differing[key] = None, values

    def union(key, allowed):
        chosen = {x for st in settings for x in st.get(key) or []}
        return [x for x in allowed if x in chosen] + sorted(chosen - set(allowed))

    merged.update(families=union("families", FAMILIES),
                  algorithms=union("algorithms", ALGORITHMS),
                  variants=union("variants", [variant_name(v) for v in VARIANTS]),
                  sweep=sweep.get("ks", []),
                  sweep_algorithm=sweep.get("algorithm", settings[0].get("sweep_algorithm")),
                  tag=tag, differing=differing,
                  sources=[{"file": name, "settings": rep["settings"], "git": rep.get("git"),
                            "timestamp": rep.get("timestamp"), "argv": rep.get("argv")}
                           for name, rep in sources])
    return merged


def combine_reports(sources: list[tuple[str, dict]], *, tag: str = "", argv=(),
                    log=print) -> dict:
    """One report from the reports of several runs, ``sources`` as (file name, report) in
    command-line order (see the module docstring for the rules).  The table is recomputed; the
    plot is left to the caller.  Raises :class:`CombineError`."""
    if not sources:
        raise CombineError("no result files to combine")
    devices = {name: rep["device"].get("device") for name, rep in sources}
    if len(set(devices.values())) > 1:
        raise CombineError("the files come from different devices: "
                           + "; ".join(f"{name}: {dev}" for name, dev in devices.items()))
    first = sources[0][1]["device"]
    for name, rep in sources[1:]:
        other = {k for k in set(first) | set(rep["device"])
                 if first.get(k) != rep["device"].get(k)}
        if other:  # e.g. a library updated between the runs: reported, not refused
            log(f"device facts differ between {sources[0][0]} and {name}: "
                + ", ".join(f"{k} {first.get(k)!r} vs {rep['device'].get(k)!r}"
                            for k in sorted(other)) + f"; the report gives {sources[0][0]}'s")
    rows, origin = {}, {}
    for name, rep in sources:
        for r in rep["measurements"]:
            key = _measurement_key(r)
            if key in rows:
                log(f"{' '.join(map(str, key))}: the measurement of {name} replaces that of "
                    f"{origin[key]}")
            # first position kept, the later file's row taken; a row of an earlier combined
            # report keeps the file it came from
            rows[key], origin[key] = {**r, "source": r.get("source", name)}, name
    groups = {}
    for key, name in origin.items():
        groups.setdefault(key[:4], []).append(name)
    for group, names in groups.items():
        if len(set(names)) > 1:  # a partial re-run: its speedups divide times of different runs
            log(f"{' '.join(map(str, group))}: variants from {', '.join(dict.fromkeys(names))}; "
                "speedups among them compare separate runs")
    commits = list(dict.fromkeys(rep.get("git", {}).get("commit") for _, rep in sources))
    git = {"commit": commits[0] if len(commits) == 1
           else ", ".join(str(c) for c in commits),
           "dirty_files": max(rep.get("git", {}).get("dirty_files") or 0 for _, rep in sources)}
    if len(commits) > 1:
        git["commits"] = commits
    sweep = _merge_sweeps(sources)
    report = {
        "benchmark": "ablation",
        "date": max(rep["date"] for _, rep in sources),
        "timestamp": max(str(rep.get("timestamp", "")) for _, rep in sources),
        "combined_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": first,
        "git": git,
        "argv": list(argv),
        "settings": _merge_settings(sources, sweep, tag),
        "graphs": _merge_graphs(sources),
        "measurements": list(rows.values()),
        "table": [],
        "sweep": sweep,
        "plot": {},
        "failures": [f"{Path(name).name}: {f}" for name, rep in sources for f in rep["failures"]],
        # the measuring time of all the files (combining itself takes no device time)
        "elapsed_s": sum(rep.get("elapsed_s") or 0.0 for _, rep in sources),
    }
    report["table"] = table_rows(report)
    report["ok"] = not report["failures"]
    return report


# ------------------------------------------------------------------------------ main


def run_sweep(bench: Bench, args, g, context: dict) -> list[dict]:
    algorithm, rows = args.sweep_algorithm, []
    variants = [(False, False, False), (True, False, False)]
    for k in args.sweep:
        bench.log(f"sweep: {algorithm} k={k} on rmat, NFA and FA")
        try:
            inputs = make_inputs(algorithm, g, k, context)
        except Exception as e:
            bench.log(traceback.format_exc())
            bench.fail(f"sweep {algorithm} k={k}: inputs raised {type(e).__name__}: {e}")
            continue
        rows.extend(measure(bench, args, "rmat", algorithm, g, inputs, k, variants,
                            section="sweep"))
        del inputs
    return rows


def sweep_points(rows: list[dict], ks) -> list[dict]:
    """Per k of the sweep: NFA and FA ms/iteration, FA's speedup, whether both passed."""
    points = []
    for k in ks:
        nfa = next((r for r in rows if r["k"] == k and not r["feature_aware"]), {})
        fa = next((r for r in rows if r["k"] == k and r["feature_aware"]), {})
        a, b = nfa.get("ms_per_iter"), fa.get("ms_per_iter")
        points.append({"k": k, "nfa_ms_per_iter": a, "fa_ms_per_iter": b,
                       "fa_speedup": a / b if a and b else None,
                       "ok": bool(nfa and fa and _status(nfa) == _status(fa) == "ok")})
    return points


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.combine is not None:
        return combine_main(args, argv)
    bench = Bench()
    info = device.info()
    now = datetime.datetime.now(datetime.timezone.utc)
    bench.log(f"backend {info['backend']} ({info['device']}); families {','.join(args.families)}; "
              f"algorithms {','.join(args.algorithms)}; variants "
              f"{','.join(variant_name(v) for v in args.variants)}; k {args.k}; sweep {args.sweep}")
    report = {
        "benchmark": "ablation",
        "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"),
        "device": info,
        "git": _git(),
        "argv": list(sys.argv[1:] if argv is None else argv),
        "settings": {
            "quick": args.quick, "families": args.families, "algorithms": args.algorithms,
            "variants": [variant_name(v) for v in args.variants], "scale": args.scale,
            "edge_factor": args.edge_factor, "grid_side": args.grid_side, "users": args.users,
            "items": args.items, "ratings": args.ratings, "seed": args.seed, "k": args.k,
            "sweep": args.sweep, "sweep_algorithm": args.sweep_algorithm,
            "max_iter": args.max_iter, "repeat": args.repeat, "tol": args.tol,
            "cd_tol": args.cd_tol, "direction": "auto", "reference": variant_name(REFERENCE),
            "baseline": variant_name(BASELINE),
            "agreement": {a: {"metric": m, "tol": t} for a, (m, t) in AGREE.items()},
            "input_seed": INPUT_SEED, "appnp_alpha": APPNP_ALPHA,
            "mml_modalities": MML_MODALITIES, "tag": args.tag,
        },
        "graphs": {},
        "measurements": [],
        "table": [],
        "sweep": {},
        "plot": {},
        "failures": bench.failures,
    }

    need_sweep = bool(args.sweep)
    families = list(args.families)
    if need_sweep and "rmat" not in families:
        families.insert(0, "rmat")  # built for the sweep only
    for family in families:
        algorithms = [a for a in args.algorithms
                      if a in FAMILY_ALGORITHMS[family] and family in args.families]
        sweep_here = need_sweep and family == "rmat"
        if not algorithms and not sweep_here:
            bench.log(f"{family}: no selected algorithm runs on it; skipped")
            continue
        try:
            g, stats, context = build_family(bench, args, family)
        except Exception as e:
            bench.log(traceback.format_exc())
            bench.fail(f"{family}: graph construction raised {type(e).__name__}: {e}")
            continue
        report["graphs"][family] = stats
        if (not args.quick and stats["input_edges"] < MIN_DEFAULT_EDGES
                and all(getattr(args, key) == DEFAULTS[key] for key in
                        {"rmat": ("scale", "edge_factor"), "grid": ("grid_side",),
                         "ratings": ("users", "items", "ratings")}[family])):
            bench.fail(f"{family}: default graph too small: {stats['input_edges']:,} input "
                       f"edges (need >= {MIN_DEFAULT_EDGES:,})")
        for algorithm in algorithms:
            k = 1 if algorithm == "pagerank" else args.k
            bench.log(f"{_label(family, algorithm, k)}: {len(args.variants)} variants, "
                      f"max_iter {args.max_iter}")
            try:
                inputs = make_inputs(algorithm, g, k, context)
            except Exception as e:
                bench.log(traceback.format_exc())
                bench.fail(f"{_label(family, algorithm, k)}: inputs raised "
                           f"{type(e).__name__}: {e}")
                continue
            report["measurements"].extend(
                measure(bench, args, family, algorithm, g, inputs, k, args.variants))
            del inputs
        if sweep_here:
            rows = run_sweep(bench, args, g, context)
            report["measurements"].extend(rows)
            report["sweep"] = {"algorithm": args.sweep_algorithm, "family": "rmat",
                               "ks": args.sweep,
                               "variants": [variant_name(BASELINE), variant_name(REFERENCE)],
                               "points": sweep_points(rows, args.sweep)}
        del g, context
        _free_device_memory()

    report["table"] = table_rows(report)
    out = Path(args.out)
    suffix = _suffix(report, args.tag, args.quick)
    _draw_sweep(bench, report, out, suffix)
    report["ok"] = not bench.failures
    report["elapsed_s"] = time.perf_counter() - bench.t0
    return _write(bench, report, out, suffix)


def combine_main(args, argv=None) -> int:
    """--combine: merge the reports read by :func:`parse_args` and write the merged one."""
    bench = Bench()
    sources = args.combine_reports
    bench.log(f"combining {len(sources)} result files: {', '.join(n for n, _ in sources)}")
    try:
        report = combine_reports(sources, tag=args.tag, log=bench.log,
                                 argv=sys.argv[1:] if argv is None else argv)
    except CombineError as e:
        build_parser().error(f"--combine: {e}")
    bench.failures = report["failures"]
    out = Path(args.out)
    suffix = _suffix(report, args.tag, report["settings"].get("quick") is True)
    inputs = {Path(name).resolve() for name, _ in sources}
    clash = [str(path) for path in (out / f"ablation_{suffix}.json", out / f"ablation_{suffix}.md")
             if path.resolve() in inputs]
    if clash:  # a run of the same day without --tag has the merged report's name
        build_parser().error(f"--combine: the merged report would overwrite its input "
                             f"{', '.join(clash)}; give another --tag or --out")
    bench.log(f"{len(report['measurements'])} measurements, {len(report['table'])} table rows, "
              f"graphs {', '.join(report['graphs']) or 'none'}, "
              f"sweep k {report['sweep'].get('ks', [])}, {len(report['failures'])} failures")
    _draw_sweep(bench, report, out, suffix)
    return _write(bench, report, out, suffix)


def _suffix(report: dict, tag: str, quick: bool) -> str:
    suffix = f"{_slug(report['device'].get('device'))}_{report['date']}"
    if tag:
        suffix += f"_{_slug(tag)}"
    if quick:
        suffix += "_quick"
    return suffix


def _draw_sweep(bench: Bench, report: dict, out: Path, suffix: str) -> None:
    """The sweep plot, when the report has sweep points (its path or why not in ``plot``)."""
    sw = report["sweep"]
    if not sw.get("points"):
        return
    out.mkdir(parents=True, exist_ok=True)
    scale = report["graphs"].get("rmat", {}).get("scale")
    iters = sorted({r["max_iter"] for r in report["measurements"] if r["section"] == "sweep"})
    title = (f"{sw['algorithm']} on R-MAT scale {scale} ({report['device'].get('device')}), "
             f"{'/'.join(map(str, iters))} iterations")
    try:
        report["plot"] = plot_sweep(sw, out / f"ablation_sweep_{suffix}.png", title)
    except Exception as e:
        report["plot"] = {"path": None, "reason": f"plotting raised {type(e).__name__}: {e}"}
    if report["plot"].get("path"):
        bench.log(f"wrote {report['plot']['path']}")
    else:
        bench.log(f"sweep plot not drawn: {report['plot']['reason']}")


def _write(bench: Bench, report: dict, out: Path, suffix: str) -> int:
    """The JSON and the Markdown (also printed); the exit status (1: a check failed)."""
    out.mkdir(parents=True, exist_ok=True)
    return write_report(bench, report, out / f"ablation_{suffix}", markdown(report))

if __name__ == "__main__":
    sys.exit(main())
