"""The ``onyx-rapids`` command (also ``python -m onyx_rapids``).

    onyx-rapids run pagerank                              # the embedded karate graph
    onyx-rapids run pagerank --graph edges.parquet --source u --destination v --out pr.parquet
    onyx-rapids run label_propagation --k 2               # karate, seeded with vertices 0 and 33
    onyx-rapids info [--json]                             # backend, versions, device
    onyx-rapids datasets [--json]                         # the embedded graphs
    onyx-rapids generate rmat --scale 20 --out rmat20.parquet

Progress lines and a summary go to stderr, results to stdout (or ``--out``, written atomically).
Errors in the input (a missing file, a bad column, an unknown name, an existing ``--out``
without ``--force``) print one line ``onyx-rapids: error: ...`` and exit with status 2, as
usage errors do; anything unexpected exits with status 1 and a traceback.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path

PROG = "onyx-rapids"

#: Exceptions that mean "bad input": one line on stderr and exit status 2.
USER_ERRORS = (
    ValueError, TypeError, KeyError, FileNotFoundError, FileExistsError, IsADirectoryError,
    NotADirectoryError, PermissionError,
)

# Label propagation seeds on the embedded karate graph: the two club leaders.
_KARATE_SEEDS = (0, 33)


class CLIError(Exception):
    """A user error found by the command line itself (exit status 2)."""


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        text = str(exc.args[0])  # str(KeyError) would quote the message
    else:
        text = str(exc)
    text = " ".join(text.split())
    return text or type(exc).__name__


class Progress:
    """Short timestamped progress lines on stderr, silenced by ``--quiet``."""

    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def __call__(self, message: str) -> None:
        if not self.quiet:
            stream = self.stream or sys.stderr
            print(f"[{self.elapsed():7.2f}s] {message}", file=stream, flush=True)


def _print_table(rows: list[tuple], file=None) -> None:
    """``key: value`` lines with the values aligned."""
    width = max((len(str(k)) for k, _ in rows), default=0) + 1
    for key, value in rows:
        print(f"{str(key) + ':':<{width}} {value}", file=file or sys.stdout)


def _to_pandas(df):
    return df.to_pandas() if hasattr(df, "to_pandas") else df


def _check_out(path: str | None, force: bool) -> Path | None:
    """Refuse early (before any work) to clobber an existing ``--out`` without ``--force``."""
    if path is None:
        return None
    out = Path(path)
    if out.is_dir():
        raise CLIError(f"--out {path!r} is a directory; give a file path")
    if out.exists() and not force:
        raise CLIError(f"--out {path!r} already exists; pass --force to overwrite it")
    return out


def _write(df, out: Path, force: bool) -> Path:
    from . import datasets

    try:
        # temp file in the same directory, fsync, then rename into place (datasets.write_parquet)
        return datasets.write_parquet(df, out, overwrite=force)
    except FileExistsError:
        raise CLIError(f"--out {str(out)!r} already exists; pass --force to overwrite it") from None


# ------------------------------------------------------------------------------------- info


def cmd_info(args) -> int:
    from . import device

    facts = device.info()
    if args.json:
        print(json.dumps(facts, indent=2, default=str))
    else:
        _print_table(list(facts.items()))
    return 0


# --------------------------------------------------------------------------------- datasets


def cmd_datasets(args) -> int:
    from . import datasets

    listing = datasets.list_datasets()
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    header = ("name", "n", "m", "directed", "description")
    rows = [header] + [
        (d["name"], str(d["n"]), str(d["m"]), "yes" if d["directed"] else "no",
         d["description"]) for d in listing
    ]
    widths = [max(len(r[j]) for r in rows) for j in range(len(header) - 1)]
    for r in rows:
        cells = [r[0].ljust(widths[0]), r[1].rjust(widths[1]), r[2].rjust(widths[2]),
                 r[3].ljust(widths[3]), r[4]]
        print("  ".join(cells))
    return 0


# --------------------------------------------------------------------------------- generate


def cmd_generate(args) -> int:
    from . import datasets

    progress = Progress(args.quiet)
    if args.kind not in datasets.GENERATOR_KINDS:
        raise CLIError(f"unknown generator kind {args.kind!r}; choose one of "
                       f"{', '.join(datasets.GENERATOR_KINDS)}")
    out = _check_out(args.out, args.force)
    progress(f"generating {args.kind} scale={args.scale} seed={args.seed}"
             f"{' weighted' if args.weighted else ''}...")
    df = datasets.generate(args.kind, args.scale, seed=args.seed, weighted=args.weighted)
    progress(f"writing {len(df)} edges to {out}...")
    _write(df, out, args.force)
    progress("done")
    print(f"wrote {out}: {len(df)} edges of a {args.kind} graph on 2**{args.scale} = "
          f"{1 << args.scale} vertex ids (columns {', '.join(map(str, df.columns))}; "
          f"seed {args.seed})")
    return 0


# -------------------------------------------------------------------------------------- run


def _resolve_algorithm(name: str):
    import onyx_rapids

    key = name.replace("-", "_")
    if key not in onyx_rapids.ALGORITHMS:
        raise CLIError(f"unknown algorithm {name!r}; available: "
                       f"{', '.join(onyx_rapids.ALGORITHMS)}")
    return key, onyx_rapids.ALGORITHMS[key]


def _weight_arg(spec: str | None):
    if spec is None:
        return None
    names = [w.strip() for w in spec.split(",")]
    if not all(names):
        raise CLIError(f"--weight {spec!r}: give one column name or several separated by commas")
    return names[0] if len(names) == 1 else names


def _load_graph(args, progress):
    """(graph, description, dataset name or None) from --graph and the column options."""
    from . import datasets
    from .graph import Graph

    spec = args.graph if args.graph is not None else datasets.DEFAULT_GRAPH
    weight = _weight_arg(args.weight)
    names = {d["name"]: d for d in datasets.list_datasets()}
    looks_like_path = (os.path.exists(spec) or os.sep in spec or "/" in spec
                       or (os.altsep is not None and os.altsep in spec) or Path(spec).suffix)
    if spec in names:
        directed = names[spec]["directed"] and not args.undirected
        progress(f"loading embedded graph {spec!r}...")
        edges = datasets.load_edges(spec)
        progress(f"building graph ({len(edges)} {'directed' if directed else 'undirected'} "
                 "edges)...")
        g = Graph.from_edgelist(edges, args.source, args.destination, weight, directed=directed)
        where, dataset = f"{spec} (embedded)", spec
    elif looks_like_path:
        progress(f"reading graph {spec}...")
        g = Graph.from_parquet(spec, args.source, args.destination, weight,
                               directed=not args.undirected)
        where, dataset = spec, None
    else:
        raise CLIError(f"--graph {spec!r}: unknown dataset name and no such file; embedded "
                       f"datasets: {', '.join(names)} (or give a Parquet path)")
    progress(f"graph ready (n={g.n}, m={g.m}{', undirected' if not g.directed else ''})")
    return g, where, dataset


def _read_labels(path: str):
    import pandas as pd

    if not os.path.exists(path):
        raise CLIError(f"--labels {path!r}: no such file")
    try:
        labels = pd.read_parquet(path)
    except Exception as e:  # pyarrow raises several kinds for a file that is not Parquet
        raise CLIError(f"--labels {path!r} is not a readable Parquet file ({e})") from e
    if "vertex" not in labels.columns or "label" not in labels.columns:
        raise CLIError(f"--labels {path!r} needs columns 'vertex' and 'label'; it has "
                       f"{', '.join(map(str, labels.columns))}")
    return labels


def _default_labels(dataset: str | None, algo: str):
    from . import datasets

    if dataset != "karate":
        raise CLIError(f"{algo} needs --labels PATH.parquet (a frame of vertex,label seed "
                       "labels); only the embedded karate graph has default seeds")
    clubs = datasets.load_labels("karate")
    seeds = clubs[clubs["vertex"].isin(_KARATE_SEEDS)]
    return seeds.rename(columns={"club": "label"})[["vertex", "label"]].reset_index(drop=True)


def _algorithm_kwargs(args, algo: str, params) -> dict:
    options = {
        "alpha": ("--alpha", args.alpha),
        "tol": ("--tol", args.tol),
        "max_iter": ("--max-iter", args.max_iter),
        "feature_aware": ("--feature-aware/--no-feature-aware", args.feature_aware),
        "change_driven": ("--change-driven/--no-change-driven", args.change_driven),
        "fold": ("--fold/--no-fold", args.fold),
        "direction": ("--direction", args.direction),
        "block_size": ("--block-size", args.block_size),
        "k": ("--k", args.k),
    }
    kwargs = {}
    for name, (flag, value) in options.items():
        if value is None:
            continue
        if name not in params:
            raise CLIError(f"{algo} does not take {flag}")
        kwargs[name] = value
    if args.labels is not None and "labels" not in params:
        raise CLIError(f"{algo} does not take --labels")
    if "k" in params and "k" not in kwargs:
        kwargs["k"] = 2
    if "weighted" in params and args.weight is not None:
        kwargs["weighted"] = True
    if "return_info" in params:
        kwargs["return_info"] = True
    return kwargs


def _run_algorithm(fn, g, kwargs):
    """Run, returning (result, info dict, seconds, warning lines)."""
    from . import device

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        result = fn(g, **kwargs)
        device.synchronize()
        seconds = time.perf_counter() - t0
    info = {}
    if kwargs.get("return_info"):
        result, info = result
    lines = []
    for w in caught:
        if type(w.message).__name__ == "NumbaPerformanceWarning":
            continue  # low-occupancy notes on small graphs: noise for a command-line user
        line = " ".join(str(w.message).split())
        if line not in lines:
            lines.append(line)
    return result, info, seconds, lines


def cmd_run(args) -> int:
    from . import device

    progress = Progress(args.quiet)
    algo, fn = _resolve_algorithm(args.algorithm)
    params = inspect.signature(fn).parameters
    kwargs = _algorithm_kwargs(args, algo, params)
    out = _check_out(args.out, args.force)
    labels = _read_labels(args.labels) if args.labels is not None else None

    g, where, dataset = _load_graph(args, progress)
    positional = []
    if "labels" in params:
        positional.append(labels if labels is not None else _default_labels(dataset, algo))
    if positional:
        fn_call = lambda graph, **kw: fn(graph, *positional, **kw)  # noqa: E731
    else:
        fn_call = fn

    progress(f"running {algo}...")
    result, info, seconds, warning_lines = _run_algorithm(fn_call, g, kwargs)
    progress(f"{algo} done in {seconds:.3f} s")
    for line in warning_lines:
        print(f"{PROG}: warning: {line}", file=sys.stderr)
    df = _to_pandas(result)

    variant_keys = ("feature_aware", "change_driven", "fold", "direction")
    variant = " ".join(f"{k}={info[k]}" for k in variant_keys if k in info)
    summary = [
        ("backend", device.BACKEND),
        ("graph", f"{where}: n={g.n}, m={g.m} ({'directed' if g.directed else 'undirected'}"
                  f"{', weights ' + ','.join(g.weight_names) if g.weight_names else ''})"),
        ("algorithm", algo),
        ("variant", variant or "-"),
        ("iterations", info.get("iterations", "-")),
        ("converged", {True: "yes", False: "no"}.get(info.get("converged"), "-")),
        ("wall time", f"{seconds:.3f} s ({algo}), {progress.elapsed():.3f} s in all"),
    ]
    if out is not None:
        progress(f"writing {len(df)} rows to {out}...")
        _write(df, out, args.force)
        summary.append(("output", f"{out} ({len(df)} rows)"))
    _print_table(summary, file=sys.stderr)
    if out is None:
        shown = df if args.head <= 0 else df.head(args.head)
        print(shown.to_string(index=False))
        if len(shown) < len(df):
            print(f"... {len(df)} rows in all (showing {len(shown)}; --head 0 shows all, "
                  "--out FILE writes all)")
        else:
            print(f"({len(df)} rows)")
    return 0


# ----------------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Feature-aware graph processing on the GPU (ONYX operators on RAPIDS); "
                    "runs on the Numba CUDA simulator where there is no GPU.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    # --- run
    run = sub.add_parser(
        "run", help="run an algorithm on a graph",
        description="Run an algorithm on an embedded graph or a Parquet edge list. A summary "
                    "goes to stderr; the result frame to stdout, or to --out as Parquet.",
    )
    run.add_argument("algorithm", metavar="ALGO",
                     help="algorithm name (pagerank, label_propagation, ...)")
    gg = run.add_argument_group("graph")
    gg.add_argument("--graph", metavar="PATH|NAME",
                    help="a Parquet edge file (or directory) or an embedded dataset name "
                         "(default: the embedded karate graph; see 'onyx-rapids datasets')")
    gg.add_argument("--source", default="src", metavar="COL",
                    help="source vertex column (default: src)")
    gg.add_argument("--destination", default="dst", metavar="COL",
                    help="destination vertex column (default: dst)")
    gg.add_argument("--weight", metavar="COL[,COL..]",
                    help="edge weight column(s); pagerank then runs weighted")
    gg.add_argument("--undirected", action="store_true",
                    help="treat the Parquet edges as undirected (each stored both ways); "
                         "embedded graphs carry their own kind")
    ag = run.add_argument_group("algorithm")
    ag.add_argument("--alpha", type=float, help="damping / mixing factor (library default)")
    ag.add_argument("--tol", type=float, help="convergence tolerance (library default)")
    ag.add_argument("--max-iter", type=int, metavar="N",
                    help="iteration limit (library default)")
    ag.add_argument("--k", type=int, metavar="K",
                    help="label_propagation: number of classes (default 2)")
    ag.add_argument("--labels", metavar="PATH.parquet",
                    help="label_propagation: seed labels, a frame of vertex,label (default on "
                         "karate: the clubs of vertices 0 and 33)")
    vg = run.add_argument_group("variant (defaults: the library's)")
    vg.add_argument("--feature-aware", action=argparse.BooleanOptionalAction, default=None,
                    help="one thread per (vertex, feature) lane")
    vg.add_argument("--change-driven", action=argparse.BooleanOptionalAction, default=None,
                    help="only vertices that changed push their update")
    vg.add_argument("--fold", action=argparse.BooleanOptionalAction, default=None,
                    help="fuse the edge and vertex steps into one kernel")
    vg.add_argument("--direction", choices=("auto", "push", "pull"), default=None,
                    help="edge traversal direction (default: auto)")
    vg.add_argument("--block-size", type=int, metavar="N", help="CUDA threads per block")
    og = run.add_argument_group("output")
    og.add_argument("--out", metavar="OUT.parquet",
                    help="write the result frame here as Parquet (atomically)")
    og.add_argument("--force", action="store_true", help="overwrite an existing --out")
    og.add_argument("--head", type=int, default=10, metavar="N",
                    help="without --out: rows to print (default 10; 0 prints all)")
    og.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    run.set_defaults(func=cmd_run)

    # --- info
    info = sub.add_parser("info", help="show the backend, library versions and the device",
                          description="Show onyx_rapids.device.info().")
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=cmd_info)

    # --- datasets
    ds = sub.add_parser("datasets", help="list the embedded datasets",
                        description="List the embedded graphs (name, n, m, directed, "
                                    "description); m counts each undirected edge once.")
    ds.add_argument("--json", action="store_true", help="print JSON")
    ds.set_defaults(func=cmd_datasets)

    # --- generate
    gen = sub.add_parser(
        "generate", help="generate a synthetic graph as a Parquet edge list",
        description="Generate a synthetic graph with 2**scale vertices (rmat / kronecker: "
                    "Graph500 R-MAT, 16 edges per vertex; erdos_renyi: G(n, 16n); grid: 2-D "
                    "grid) and write its edges (src, dst[, weight]) atomically as Parquet.",
    )
    gen.add_argument("kind", metavar="KIND", help="rmat, kronecker, erdos_renyi or grid")
    gen.add_argument("--scale", type=int, required=True, metavar="N", help="2**N vertices")
    gen.add_argument("--out", required=True, metavar="PATH", help="Parquet file to write")
    gen.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    gen.add_argument("--weighted", action="store_true", help="add a float32 weight column")
    gen.add_argument("--force", action="store_true", help="overwrite an existing --out")
    gen.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    gen.set_defaults(func=cmd_generate)
    return parser


def main(argv=None) -> int:
    """Entry point of ``onyx-rapids``; returns the exit status (0, 1 or 2)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # usage errors (2) and --help (0)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    try:
        return args.func(args)
    except (CLIError,) + USER_ERRORS as e:
        print(f"{PROG}: error: {_one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout closed early (| head): end quietly, as Unix tools do
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141
    except Exception:
        traceback.print_exc()
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
