"""The ``onyx-rapids`` command (also ``python -m onyx_rapids``).

    onyx-rapids run pagerank                              # the embedded karate graph
    onyx-rapids run bfs --source 5 --out bfs.csv          # any algorithm of the registry
    onyx-rapids run pagerank --graph edges.parquet --src u --dst v --weight w --out pr.parquet
    onyx-rapids run label_propagation --labels seeds.parquet --param alpha=0.9
    onyx-rapids run pagerank --approx stop_changed_fraction=0.01,stop_top_k=10
    onyx-rapids run als                                   # a small generated ratings graph
    onyx-rapids list [--json]                             # algorithms: inputs, columns, options
    onyx-rapids info [--json]                             # backend, versions, device
    onyx-rapids datasets [--json]                         # the embedded graphs
    onyx-rapids generate rmat --scale 20 --out rmat20.parquet
    onyx-rapids run sssp --graph edges.parquet --tuning auto   # the tuning model's choice
    onyx-rapids tune a.parquet b.parquet --out model.json      # retrain it on your GPU

Everything ``run`` knows about an algorithm comes from :data:`onyx_rapids.registry.ALGORITHMS`:
its graph kind, the inputs it needs (a flag per input name, with defaults on the embedded
graphs), its result columns and the execution options it supports (the flags ``--fold``,
``--direction``, ... are generated from :class:`onyx_rapids.Execution`; the algorithm refuses
those it does not support; ``--approx KNOB=VALUE,..`` gives an
:class:`onyx_rapids.Approximation`).  Mathematical parameters go through ``--param name=value``.

Progress lines, a heartbeat while the algorithm runs and a summary go to stderr, results to
stdout (or ``--out``: Parquet, CSV or JSON by its extension, written atomically).  Errors in the
input (a missing file, a bad column, an unknown name, an option the algorithm does not support,
an existing ``--out`` without ``--force``) print one line ``onyx-rapids: error: ...`` and exit
with status 2, as usage errors do; anything unexpected exits with status 1 and a traceback.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import inspect
import json
import logging
import os
import secrets
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path

from . import inputs

PROG = "onyx-rapids"

#: Exceptions that mean "bad input": one line on stderr and exit status 2.
USER_ERRORS = (
    ValueError, TypeError, KeyError, FileNotFoundError, FileExistsError, IsADirectoryError,
    NotADirectoryError, PermissionError, MemoryError,
)

#: ``--out`` extensions and the format each names.
OUT_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".json": "json"}

#: Seconds between heartbeat lines while an algorithm runs (``--heartbeat``; this variable
#: sets the default).
HEARTBEAT_ENV = "ONYX_RAPIDS_HEARTBEAT"
HEARTBEAT_SECONDS = 5.0

# Execution fields that are reserved for upcoming work (no flag until they take values).
_RESERVED_OPTIONS = ()


class CLIError(Exception):
    """A user error found by the command line itself (exit status 2)."""


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        text = str(exc.args[0])  # str(KeyError) would quote the message
    else:
        text = str(exc)
    text = " ".join(text.split())
    if isinstance(exc, MemoryError):
        return f"out of memory{': ' + text if text else ''}; try a smaller graph or --scale"
    return text or type(exc).__name__


class Progress:
    """Short timestamped progress lines on stderr, silenced by ``--quiet``."""

    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream
        self.start = time.perf_counter()
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def __call__(self, message: str) -> None:
        if not self.quiet:
            with self._lock:
                print(f"[{self.elapsed():7.2f}s] {message}", file=self.stream or sys.stderr,
                      flush=True)


class Heartbeat:
    """A background thread that reports ``what`` with its elapsed time every ``interval``
    seconds until stopped (a context manager); ``interval <= 0`` or a quiet ``progress``: off."""

    def __init__(self, progress: Progress, what: str, interval: float):
        self.progress, self.what, self.interval = progress, what, interval
        self._stop = threading.Event()
        self._thread = None
        self.beats = 0

    def _run(self, t0: float) -> None:
        while not self._stop.wait(self.interval):
            self.beats += 1
            self.progress(f"{self.what} still running: {time.perf_counter() - t0:.1f} s "
                          "elapsed")

    def __enter__(self):
        if self.interval > 0 and not self.progress.quiet:
            self._thread = threading.Thread(target=self._run, args=(time.perf_counter(),),
                                            name="onyx-rapids-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return False


def _print_table(rows: list[tuple], file=None) -> None:
    """``key: value`` lines with the values aligned."""
    width = max((len(str(k)) for k, _ in rows), default=0) + 1
    for key, value in rows:
        print(f"{str(key) + ':':<{width}} {value}", file=file or sys.stdout)


def _to_pandas(df):
    from . import io

    return io.to_pandas(df)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


# ------------------------------------------------------------------------------------- output


def _check_out(path: str | None, force: bool) -> tuple[Path, str] | None:
    """(path, format) of ``--out``, refused early (before any work) when its extension names no
    format we write, when it is a directory, or when it exists and ``--force`` is not given."""
    if path is None:
        return None
    out = Path(path)
    fmt = OUT_FORMATS.get(out.suffix.lower())
    if fmt is None:
        shown = f"extension {out.suffix!r}" if out.suffix else "no extension"
        raise CLIError(f"--out {path!r}: {shown} names no output format; end the file name in "
                       ".parquet (or .pq), .csv or .json")
    if out.is_dir():
        raise CLIError(f"--out {path!r} is a directory; give a file path")
    if out.exists() and not force:
        raise CLIError(f"--out {path!r} already exists; pass --force to overwrite it")
    return out, fmt


def _write(df, out: tuple[Path, str], force: bool) -> Path:
    """Write ``df`` (without its index) to ``out`` in its format, atomically: a temporary file in
    the same directory, fsynced, then renamed (or, without ``force``, hard-linked, which refuses
    to clobber a file that appeared meanwhile) into place.  Nulls (a bfs ``predecessor`` with
    no predecessor) stay nulls in Parquet and JSON and are empty fields in CSV."""
    path, fmt = out
    df = _to_pandas(df)
    exists = f"--out {str(path)!r} already exists; pass --force to overwrite it"
    if path.exists() and not force:
        raise CLIError(exists)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        with open(tmp, "xb") as f:
            if fmt == "parquet":
                df.to_parquet(f, index=False)
            elif fmt == "csv":
                f.write(df.to_csv(index=False, na_rep="").encode())
            else:
                f.write(df.to_json(orient="records").encode())
            f.flush()
            os.fsync(f.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise CLIError(exists) from None
            except OSError:  # a filesystem without hard links
                os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


# ---------------------------------------------------------------------------- info, datasets


def cmd_info(args) -> int:
    from . import device

    facts = device.info()
    if args.json:
        print(json.dumps(facts, indent=2, default=str))
    else:
        _print_table(list(facts.items()))
    return 0


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
    progress(f"writing {len(df)} edges to {out[0]}...")
    _write(df, out, args.force)
    progress("done")
    print(f"wrote {out[0]}: {len(df)} edges of a {args.kind} graph on 2**{args.scale} = "
          f"{1 << args.scale} vertex ids (columns {', '.join(map(str, df.columns))}; "
          f"seed {args.seed})")
    return 0


# ---------------------------------------------------------------------------------- tune


def _tune_graph(spec: str, args, progress):
    """An embedded graph's name or an edge list file (Parquet / CSV) as a Graph."""
    from . import datasets
    from .graph import Graph

    names = {d["name"]: d for d in datasets.list_datasets()}
    if spec in names:
        weighted = names[spec]["weighted"]
        return Graph.from_edgelist(datasets.load_edges(spec), weight="weight" if weighted
                                   else None, directed=args.directed)
    if not os.path.exists(spec):
        raise FileNotFoundError(f"graph {spec!r}: no such file, nor an embedded graph (those "
                                f"are {', '.join(names)})")
    progress(f"loading {spec}...")
    kw = dict(source=args.src, destination=args.dst, weight=args.weight, directed=args.directed)
    if spec.lower().endswith(".csv"):
        import pandas as pd

        return Graph.from_edgelist(pd.read_csv(spec), **kw)
    return Graph.from_parquet(spec, **kw)


def cmd_tune(args) -> int:
    """Measure every configuration of each algorithm's pool on the graphs, train the tuning
    models on them (with any earlier ``--table``) and write the model file."""
    from . import tuning, tuning_model

    if args.quick and args.degree_only:
        raise CLIError("give --quick or --degree-only, not both")
    progress = Progress(args.quiet)
    out = _check_out(args.out, args.force)
    if out[1] != "json":
        raise CLIError(f"--out {args.out}: a tuning model is a .json file")
    algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()] \
        if args.algorithms else list(tuning.TUNED)
    for name in algorithms:
        _resolve_algorithm(name)
    if args.repeat < 1 or args.random < 0:
        raise CLIError("--repeat must be >= 1 and --random >= 0")
    graphs = {spec: _tune_graph(spec, args, progress) for spec in args.graphs}
    table = tuning.collect(graphs, algorithms, repeat=args.repeat, random_count=args.random,
                           table=args.table, progress=progress)
    progress(f"training on {table['graph'].nunique()} graphs, {len(table)} measurements...")
    model = tuning_model.train(table, seed=args.seed, structure=not args.degree_only,
                               quick=args.quick)
    tmp = out[0].with_name(out[0].name + ".tmp")
    model.save(tmp)
    os.replace(tmp, out[0])
    if not args.quiet:
        for name in model.algorithms:
            print(model.describe(name), file=sys.stderr)
    print(f"wrote {out[0]}: a tuning model of {', '.join(model.algorithms)} for "
          f"{model.meta['device']} ({table['graph'].nunique()} graphs); use it with "
          f"{tuning_model.MODEL_ENV}={out[0]} and tuning='auto'")
    return 0


# ---------------------------------------------------------------------------------- list


def _describe(spec) -> dict:
    """An algorithm's declaration as plain values (``list --json``)."""
    return {
        "name": spec.name,
        "summary": spec.summary,
        "graph": spec.graph,
        "weights": spec.weights,
        "iterative": spec.iterative,
        "inputs": [{"name": i.name, "kind": i.kind.name, "required": i.required, "help": i.help,
                    "flag": _flag(i.name)} for i in spec.inputs],
        "columns": list(spec.columns),
        "options": {name: (None if legal is None else list(legal))
                    for name, legal in spec.options.items()},
        "approximation": spec.knobs(),
        "params": spec.params,
    }


def cmd_list(args) -> int:
    if args.dask:
        try:
            from .dask.algorithms import ALGORITHMS
        except ImportError as e:
            raise CLIError(f"list --dask needs dask ({e}): pip install "
                           "'onyx_rapids[dask]'") from None
    else:
        from .registry import ALGORITHMS

    specs = list(ALGORITHMS.values())
    if args.json:
        print(json.dumps([_describe(s) for s in specs], indent=2, default=str))
        return 0
    for spec in specs:
        d = _describe(spec)
        takes = ", ".join(f"{i['flag']} ({i['kind']}{'' if i['required'] else ', optional'})"
                          for i in d["inputs"]) or "-"
        options = ", ".join(name if legal is None else f"{name} in {'/'.join(map(str, legal))}"
                            for name, legal in d["options"].items()) or "-"
        graph = {"any": "any graph", "undirected": "undirected graph",
                 "bipartite": "bipartite graph (--left/--right)",
                 "directed": "directed graph"}[spec.graph]
        print(f"{spec.name}: {spec.summary}")
        _print_table([
            ("  graph", f"{graph}; weights {spec.weights}"),
            ("  inputs", takes),
            ("  columns", ", ".join(spec.columns)),
            ("  options", options),
            ("  --approx", ", ".join(f"{knob} ({legal})" for knob, legal in d["approximation"]
                                     .items()) or "-"),
            ("  --param", ", ".join(f"{p} ({spec.param_kinds[p].describe()})"
                                    if p in spec.param_kinds else p
                                    for p in d["params"]) or "-"),
        ])
    if args.dask:
        print(f"({len(specs)} Dask algorithms; call one from Python as "
              "onyx_rapids.dask.NAME(graph, ...))")
    else:
        print(f"({len(specs)} algorithms; run one with: {PROG} run NAME [--help])")
    return 0


# -------------------------------------------------------------------------------------- run


def _resolve_algorithm(name: str):
    from . import registry

    key = name.replace("-", "_")
    if key not in registry.ALGORITHMS:
        raise CLIError(f"unknown algorithm {name!r}; available: "
                       f"{', '.join(registry.ALGORITHMS)} (see '{PROG} list')")
    return registry.ALGORITHMS[key]


def _literal(text: str):
    """A ``--param`` value: a Python/JSON literal (``0.85``, ``10``, ``true``, ``None``,
    ``[0.5, 0.3]``), a comma-separated list of them (``0.5,0.3``), else the string itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    else:
        return list(value) if isinstance(value, tuple) else value
    if "," in text:
        items = [_literal(part) for part in text.split(",")]
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
            return items
    return text


def _params(args, spec) -> dict:
    valid = spec.params
    params = {}
    for item in args.param or ():
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise CLIError(f"--param {item!r}: write name=value, e.g. --param "
                           f"{(valid or ['alpha'])[0]}=...")
        if name not in valid:
            hint = ""
            if name in {i.name for i in spec.inputs}:
                hint = f"; {name} is an input: give it as {_flag(name)}"
            else:
                from .approximation import FIELDS
                from .execution import OPTIONS
                if name in OPTIONS:
                    hint = f"; {name} is an execution option: give it as {_flag(name)}"
                elif name in FIELDS:
                    hint = f"; {name} is an approximation knob: give it as --approx {item}"
            raise CLIError(f"--param {item!r}: {spec.name} has no parameter {name!r}; its "
                           f"parameters are {', '.join(valid) or 'none'}{hint}")
        try:  # the registry's one check of the parameter's kind and range
            params[name] = spec.param_kinds[name].check(_literal(value), name) \
                if name in spec.param_kinds else _literal(value)
        except ValueError as e:
            raise CLIError(f"--param {item!r}: {spec.name}: {e}") from None
    return params


def _execution_options(args) -> dict:
    """The execution options given on the command line (the algorithm refuses those it does
    not support, in one place: the registry)."""
    from .execution import OPTIONS

    options = {name: getattr(args, name) for name in OPTIONS
               if name not in _RESERVED_OPTIONS and getattr(args, name, None) is not None}
    if "approximation" in options:
        options["approximation"] = _approximation(options["approximation"])
    return options


def _approximation(text: str):
    """The :class:`~onyx_rapids.Approximation` of ``--approx KNOB=VALUE[,KNOB=VALUE..]``
    (each value a ``--param``-style literal)."""
    from .approximation import FIELDS, Approximation

    knobs = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in FIELDS:
            raise CLIError(f"--approx {text!r}: {item.strip()!r} is not KNOB=VALUE with one of "
                           f"the knobs {', '.join(FIELDS)}")
        knobs[name] = _literal(value)
    try:
        return Approximation(**knobs)
    except ValueError as e:
        raise CLIError(f"--approx {text!r}: {e}") from None


# --- graphs


def _weight_arg(spec: str | None):
    if spec is None:
        return None
    names = [w.strip() for w in spec.split(",")]
    if not all(names):
        raise CLIError(f"--weight {spec!r}: give one column name or several separated by commas")
    return names[0] if len(names) == 1 else names


def _looks_like_path(spec: str) -> bool:
    return bool(os.path.exists(spec) or os.sep in spec or "/" in spec
                or (os.altsep is not None and os.altsep in spec) or Path(spec).suffix)


def _ratings(seed: int = 0):
    """A small deterministic ratings table (user, item, rating in 1..5): 24 users and 16 items
    whose ratings follow two hidden tastes, each user rating 6 items; the default graph of the
    bipartite algorithms (ALS)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    users, items, per_user = 24, 16, 6
    user_taste = rng.random((users, 2))
    item_taste = rng.random((items, 2))
    affinity = user_taste @ item_taste.T
    rows = []
    for u in range(users):
        for i in rng.choice(items, size=per_user, replace=False):
            stars = 1 + 4 * affinity[u, i] / affinity.max()
            rows.append((u, int(i), float(np.clip(np.rint(stars), 1, 5))))
    return pd.DataFrame(rows, columns=["user", "item", "rating"]).astype(
        {"user": "int64", "item": "int64", "rating": "float32"})


@contextlib.contextmanager
def _logged_to(progress, logger_name: str):
    """INFO lines of ``logger_name`` go to ``progress`` while the block runs."""
    class Lines(logging.Handler):
        def emit(self, record):
            progress(record.getMessage())

    logger, handler = logging.getLogger(logger_name), Lines(logging.INFO)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _load_graph(args, spec, progress):
    """(graph, description, embedded dataset name or None) for ``spec`` from the graph flags."""
    from . import datasets
    from .graph import Graph

    if args.dataset is not None and args.graph is not None:
        raise CLIError("give --graph PATH or --dataset NAME, not both")
    names = {d["name"]: d for d in datasets.list_datasets()}
    given = args.dataset if args.dataset is not None else args.graph
    weight = _weight_arg(args.weight)
    extra = dict(multigraph=True) if args.multigraph else {}
    extra["placement"] = args.placement
    bipartite = spec.graph == "bipartite"
    if args.directed and spec.graph not in ("any", "directed"):
        raise CLIError(f"--directed: {spec.name} runs on an undirected "
                       f"{'bipartite ' if bipartite else ''}graph; drop --directed")
    if args.undirected and spec.graph == "directed":
        raise CLIError(f"--undirected: {spec.name} runs on a directed graph; drop --undirected")
    undirected = args.undirected or spec.graph == "undirected"

    if given is None and bipartite:
        progress("generating a small ratings graph (24 users x 16 items)...")
        df = _ratings(args.seed)
        g = Graph.from_bipartite(df, "user", "item", weight or "rating", **extra)
        where, dataset = f"generated ratings ({len(df)} ratings of 24 users, 16 items)", None
    elif given is None or given in names:
        name = given if given is not None else datasets.DEFAULT_GRAPH
        d = names[name]
        if weight is None and d["weighted"] and not args.unweighted:
            weight = "weight"
        progress(f"loading embedded graph {name!r}...")
        edges = datasets.load_edges(name)
        src, dst = args.src or "src", args.dst or "dst"
        if bipartite:
            left, right = args.left or src, args.right or dst
            g = Graph.from_bipartite(edges, left, right, weight, **extra)
        else:
            if args.directed and not d["directed"]:
                raise CLIError(f"--directed: the embedded graph {name!r} is undirected (each "
                               "edge listed once); drop --directed")
            directed = d["directed"] and not undirected
            if spec.graph == "directed" and not directed:
                import pandas as pd

                progress(f"{spec.name} runs on a directed graph: each edge taken both ways")
                edges = pd.concat([edges, edges.rename(columns={src: dst, dst: src})],
                                  ignore_index=True)
                directed = True
            g = Graph.from_edgelist(edges, src, dst, weight, directed=directed, **extra)
        where, dataset = f"{name} (embedded)", name
    elif args.dataset is not None:
        raise CLIError(f"--dataset {given!r}: unknown dataset; embedded datasets: "
                       f"{', '.join(names)} (a Parquet file goes to --graph)")
    elif _looks_like_path(given):
        progress(f"reading graph {given}...")
        src, dst = args.src or "src", args.dst or "dst"
        if bipartite:
            table = inputs.read_table(given, "--graph")
            left, right = args.left or src, args.right or dst
            g = Graph.from_bipartite(table, left, right, weight, **extra)
        else:
            if not os.path.exists(given):
                raise CLIError(f"--graph {given!r}: no such file")
            with _logged_to(progress, "onyx_rapids.host_build"):  # the chunked build's passes
                g = Graph.from_parquet(given, src, dst, weight,
                                       directed=args.directed or spec.graph == "directed",
                                       **extra)
        where, dataset = given, None
    else:
        raise CLIError(f"--graph {given!r}: unknown dataset name and no such file; embedded "
                       f"datasets: {', '.join(names)} (or give a Parquet path)")
    if args.vertex_order != "id":
        if bipartite or g.placement == "host":
            raise CLIError(f"--vertex-order {args.vertex_order}: "
                           + ("a bipartite graph keeps each side in id order" if bipartite else
                              "the graph's edges are in host memory; reorder needs them on the "
                              "device (--placement device)"))
        progress(f"numbering the vertices by {args.vertex_order}...")
        g = g.reorder(args.vertex_order)
    kind = "bipartite, " if bipartite else ""
    progress(f"graph ready (n={g.n}, m={g.m}, {kind}{'directed' if g.directed else 'undirected'}"
             f", edges on the {g.placement}"
             f"{', weights ' + ','.join(g.weight_names) if g.weight_names else ''})")
    return g, where, dataset


# --- inputs


def _inputs(args, spec, g, dataset) -> dict:
    """The keyword arguments for ``spec``'s declared inputs: given by their flags, else the
    kinds' defaults (:func:`onyx_rapids.inputs.from_cli`)."""
    texts = {i.name: getattr(args, _dest(i.name), None) for i in spec.inputs}
    context = inputs.CliContext(spec=spec, g=g, dataset=dataset, k=args.k, seed=args.seed,
                                flag=_flag)
    return inputs.from_cli(spec, texts, context)


def _k_refusal(args, spec) -> str | None:
    """Why ``--k`` does not apply to ``spec`` as run (None: it applies): it is the
    algorithm's k input, or the columns of a vertex-values input generated by default (one
    that is required and not given)."""
    if "k" in {i.name for i in spec.inputs}:
        return None
    values = [i for i in spec.inputs if isinstance(i.kind, inputs.VertexValues)]
    generated = [i for i in values if i.required and getattr(args, _dest(i.name)) is None]
    if generated:
        return None
    if not values:
        return "it has no k input and no vertex values to generate"
    given = [_flag(i.name) for i in values if getattr(args, _dest(i.name)) is not None]
    if given:
        return f"the columns come from {', '.join(given)}"
    optional = ", ".join(_flag(i.name) for i in values)
    return (f"it has no k input, and its {optional} is optional and never generated (give it "
            "as a Parquet file)")


def _check_inputs_given(args, spec) -> None:
    """Refuse input flags the algorithm does not take (before loading anything)."""
    own = {i.name for i in spec.inputs}
    if args.k is not None:
        why = _k_refusal(args, spec)
        if why is not None:
            raise CLIError(f"{spec.name} does not take --k: {why}")
    if args.weight is not None and spec.weights == "ignored":
        raise CLIError(f"{spec.name} does not take --weight: it ignores edge weights; drop "
                       "--weight")
    for name in _all_input_names():
        if name in own or getattr(args, _dest(name), None) is None:
            continue
        takes = ", ".join(_flag(i.name) for i in spec.inputs) or "no inputs"
        hint = ""
        if name == "source" and args.graph is not None:
            hint = "; the edge list's source column is named by --src"
        raise CLIError(f"{spec.name} does not take {_flag(name)} (it takes {takes}){hint}")


def _run_algorithm(spec, g, kwargs, progress, heartbeat):
    """Run, returning (frame, info, seconds, warning lines)."""
    from . import device

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Heartbeat(progress, spec.name, heartbeat):
            t0 = time.perf_counter()
            result = spec.function(g, **kwargs)
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


def _variant_text(info, options) -> str:
    from .execution import OPTIONS

    facts = dict(info) if info else {}
    shown = [f"{k}={facts[k]}" for k in OPTIONS if k in facts
             and k not in ("approximation", "tuning")]
    tuned = facts.get("tuning")
    if tuned:  # the tuner's choice, or why it ran the defaults
        shown.append(f"tuning={tuned['mode']} chose {json.dumps(tuned['config'])}"
                     + (f" ({tuned['reason']})" if tuned.get("reason") else ""))
    if not shown:  # the run recorded none: show what was asked for
        shown = [f"{k}={v}" for k, v in options.items() if k != "approximation"]
    return " ".join(shown) or "-"


def _approximation_text(facts) -> str:
    """An approximate run's knobs and what it measured of its last iteration."""
    knobs = ",".join(f"{k}={v}" for k, v in facts["approximation"].items())
    measured = ", ".join(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                         for k, v in facts["estimate"].items())
    return f"{knobs} ({measured})"


def _heartbeat_seconds(args) -> float:
    if args.heartbeat is not None:
        return args.heartbeat
    env = os.environ.get(HEARTBEAT_ENV)
    if env:
        try:
            return float(env)
        except ValueError:
            raise CLIError(f"{HEARTBEAT_ENV}={env!r} is not a number of seconds") from None
    return HEARTBEAT_SECONDS


def cmd_run(args) -> int:
    """``run``: under ``--device-budget`` when given (the previous budget restored after)."""
    from . import memory

    if args.device_budget is None:
        return _cmd_run(args)
    previous = memory.device_budget()
    try:
        memory.set_device_budget(args.device_budget)
    except ValueError as e:
        raise CLIError(f"--device-budget {args.device_budget!r}: {e}") from None
    try:
        return _cmd_run(args)
    finally:
        memory.set_device_budget(previous)


def _cmd_run(args) -> int:
    from . import device

    progress = Progress(args.quiet)
    spec = _resolve_algorithm(args.algorithm)
    heartbeat = _heartbeat_seconds(args)
    # everything that can be refused without work is refused before the graph is read
    _check_inputs_given(args, spec)
    params = _params(args, spec)
    options = _execution_options(args)
    flagged = {i.name for i in spec.inputs if getattr(args, _dest(i.name), None) is not None}
    given = {i.name for i in inputs.wanted(spec, flagged)}
    spec.resolve(given=given, **options)  # the registry's one refusal of unsupported options
    out = _check_out(args.out, args.force)
    if spec.graph != "bipartite" and (args.left or args.right):
        raise CLIError(f"--left/--right name the two sides of a bipartite graph; {spec.name} "
                       "takes --src/--dst")

    with Heartbeat(progress, "reading the graph", heartbeat):
        g, where, dataset = _load_graph(args, spec, progress)
    if spec.weights == "required" and not g.weight_names:
        raise CLIError(f"{spec.name} needs edge weights and {where} has none; name the weight "
                       "column(s) with --weight COL[,COL..]")
    kwargs = dict(_inputs(args, spec, g, dataset), **params, **options)
    if "return_info" in inspect.signature(spec.function).parameters:
        kwargs["return_info"] = True

    shown = {k: v for k, v in kwargs.items() if k != "return_info" and not hasattr(v, "shape")}
    described = ", ".join(f"{k}={v!r}" for k, v in shown.items() if not hasattr(v, "columns"))
    progress(f"running {spec.name}{' (' + described + ')' if described else ''}...")
    result, info, seconds, warning_lines = _run_algorithm(spec, g, kwargs, progress, heartbeat)
    progress(f"{spec.name} done in {seconds:.3f} s")
    for line in warning_lines:
        print(f"{PROG}: warning: {line}", file=sys.stderr)
    df = _to_pandas(result)

    facts = dict(info) if info else {}
    summary = [
        ("backend", device.BACKEND),
        ("graph", f"{where}: n={g.n}, m={g.m} ({'directed' if g.directed else 'undirected'}"
                  f"{', weights ' + ','.join(g.weight_names) if g.weight_names else ''})"),
        ("algorithm", spec.name),
        ("variant", _variant_text(info, options)),
        ("iterations", facts.get("iterations", "-")),
        ("converged", {True: "yes", False: "no"}.get(facts.get("converged"), "-")),
        ("wall time", f"{seconds:.3f} s ({spec.name}), {progress.elapsed():.3f} s in all"),
    ]
    if facts.get("approximation"):
        summary.insert(4, ("approximation", _approximation_text(facts)))
    if out is not None:
        progress(f"writing {len(df)} rows to {out[0]}...")
        _write(df, out, args.force)
        summary.append(("output", f"{out[0]} ({len(df)} rows, {out[1]})"))
    _print_table(summary, file=sys.stderr)
    if out is None:
        rows = df if args.head <= 0 else df.head(args.head)
        print(rows.to_string(index=False))
        if len(rows) < len(df):
            print(f"... {len(df)} rows in all (showing {len(rows)}; --head 0 shows all, "
                  "--out FILE writes all)")
        else:
            print(f"({len(df)} rows)")
    return 0


# ----------------------------------------------------------------------------------- parser


def _dest(input_name: str) -> str:
    return "input_" + input_name


def _all_input_names() -> list[str]:
    """Every input name declared in the registry, in declaration order (one flag each)."""
    from . import registry

    names = []
    for spec in registry.ALGORITHMS.values():
        for inp in spec.inputs:
            if inp.name not in names:
                names.append(inp.name)
    return names


def _input_help(name: str) -> str:
    from . import registry

    uses = [(s.name, i) for s in registry.ALGORITHMS.values() for i in s.inputs if i.name == name]
    help_text = next((i.help for _, i in uses if i.help), "")
    what = uses[0][1].kind.help(optional=not any(i.required for _, i in uses))
    return (f"{help_text + '; ' if help_text else ''}{what} [{', '.join(a for a, _ in uses)}]"
            .replace("%", "%%"))


def _option_help(name: str, default) -> str:
    from . import registry

    users = [s.name for s in registry.ALGORITHMS.values() if name in s.options]
    doc = {
        "feature_aware": "one thread per (vertex, feature) lane",
        "change_driven": "only vertices whose value moved push their change ('auto': "
                         "bulk while many move, change-driven below --pull-fraction)",
        "fold": "fold an iteration's edge and vertex steps into one kernel",
        "direction": "push along out-edges, pull along in-edges, or choose per iteration",
        "pull_fraction": "the push/pull switch point of --direction auto",
        "fused": "every iteration in one persistent kernel",
        "block_size": "CUDA threads per block (a multiple of 32 in [32, 1024])",
        "filter": "worklist construction of the traversals",
        "threshold": "bin entries per thread before the online filter overflows",
        "edge_access": "how traversal kernels read a vertex's edges (EMOGI: merged, aligned)",
    }.get(name, "execution option")
    default_text = "the algorithm's" if default is None else repr(default)
    return (f"{doc} (default: {default_text}; supported by "
            f"{', '.join(users) if users else 'no algorithm yet'})")


def _add_execution_flags(group) -> None:
    """One flag per :class:`~onyx_rapids.execution.Execution` field (reserved ones aside);
    None when not given, so that only the options the user names reach the algorithm."""
    from . import execution

    for f in dataclasses.fields(execution.Execution):
        if f.name in _RESERVED_OPTIONS:
            continue
        if f.name == "approximation":
            group.add_argument("--approx", dest=f.name, metavar="KNOB=VALUE[,..]", default=None,
                               help="approximation knobs, e.g. stop_changed_fraction=0.01 "
                               "(onyx_rapids.Approximation; 'list' shows each algorithm's)")
            continue
        flag = _flag(f.name)
        annotation = str(f.type)
        choices = getattr(execution, f.name.upper() + "S", getattr(execution, f.name.upper(),
                                                                   None))
        if annotation == "bool | str":  # True / False or "auto": --X, --no-X, --X auto
            group.add_argument(flag, dest=f.name, nargs="?", const=True, choices=("auto",),
                               default=None, help=_option_help(f.name, f.default))
            group.add_argument("--no-" + flag[2:], dest=f.name, action="store_const",
                               const=False, help=f"{flag} off")
        elif annotation.startswith("bool"):
            group.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                               default=None, help=_option_help(f.name, f.default))
        elif isinstance(choices, tuple):
            group.add_argument(flag, dest=f.name, choices=choices, default=None,
                               help=_option_help(f.name, f.default))
        elif annotation.startswith("int"):
            group.add_argument(flag, dest=f.name, type=int, default=None, metavar="N",
                               help=_option_help(f.name, f.default))
        elif annotation.startswith("float"):
            group.add_argument(flag, dest=f.name, type=float, default=None, metavar="X",
                               help=_option_help(f.name, f.default))
        else:  # pragma: no cover - a new kind of option: add its flag here
            raise RuntimeError(f"cli: no flag for execution option {f.name} ({annotation})")


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error of every other error of the command."""

    def error(self, message):
        if message.startswith("unrecognized arguments"):
            message += " (mathematical parameters go as --param NAME=VALUE)"
        self.exit(2, f"{PROG}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    import onyx_rapids

    parser = _Parser(
        prog=PROG,
        description="Feature-aware graph processing on the GPU (ONYX operators on RAPIDS); "
                    "runs on the Numba CUDA simulator where there is no GPU.",
    )
    parser.add_argument("--version", action="version",
                        version=f"{PROG} {onyx_rapids.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=_Parser)

    # --- run
    run = sub.add_parser(
        "run", help="run an algorithm on a graph",
        description="Run an algorithm of the registry ('onyx-rapids list') on an embedded "
                    "graph or a Parquet edge list, with the inputs it needs (defaults on the "
                    "embedded graphs). A summary goes to stderr; the result frame to stdout, "
                    "or to --out as Parquet, CSV or JSON by the extension.",
    )
    run.add_argument("algorithm", metavar="ALGO",
                     help=f"algorithm name: {', '.join(onyx_rapids.registry.ALGORITHMS)}")
    gg = run.add_argument_group("graph")
    gg.add_argument("--graph", metavar="PATH",
                    help="a Parquet edge file (or directory) (default: the embedded karate "
                         "graph; a generated ratings graph for bipartite algorithms)")
    gg.add_argument("--dataset", metavar="NAME",
                    help="an embedded graph (see 'onyx-rapids datasets')")
    gg.add_argument("--src", "--source-column", dest="src", metavar="COL",
                    help="source vertex column (default: src)")
    gg.add_argument("--dst", "--destination", "--destination-column", dest="dst",
                    metavar="COL", help="destination vertex column (default: dst)")
    gg.add_argument("--weight", metavar="COL[,COL..]",
                    help="edge weight column(s) (default: none for a Parquet file, 'weight' "
                         "for a weighted embedded graph)")
    gg.add_argument("--unweighted", action="store_true",
                    help="ignore the weights of a weighted embedded graph")
    way = gg.add_mutually_exclusive_group()
    way.add_argument("--directed", action="store_true",
                     help="read each row of a Parquet file as the one-way edge src->dst "
                          "(default: undirected, as cuGraph and NetworkX, but directed for "
                          "the algorithms that need a directed graph; the default before "
                          "0.2 was directed)")
    way.add_argument("--undirected", action="store_true",
                     help="treat the edges as undirected (the default for a Parquet file; "
                          "algorithms that need an undirected graph get one without it)")
    gg.add_argument("--multigraph", action="store_true",
                    help="keep every row as an edge (default: a simple graph as cuGraph's: "
                         "parallel edges merged)")
    gg.add_argument("--placement", choices=("auto", "device", "host"), default="auto",
                    help="where the graph's edge arrays live: device memory, or pinned host "
                         "memory read zero-copy (graphs larger than the GPU; a Parquet file "
                         "is then built in chunks); auto (default) picks by size")
    gg.add_argument("--vertex-order", choices=("id", "degree", "bfs"), default="id",
                    help="internal vertex order: ascending id (default), degree (hubs "
                         "first: faster propagations on skewed graphs whose ids carry no "
                         "locality) or bfs (breadth-first levels: neighbours numbered "
                         "nearby); result rows then follow that order")
    gg.add_argument("--device-budget", metavar="BYTES",
                    help="cap the device memory onyx_rapids allocates, e.g. 16GB (as "
                         "ONYX_RAPIDS_DEVICE_BUDGET)")
    gg.add_argument("--left", metavar="COL",
                    help="bipartite algorithms: the left (user) id column (default: --src)")
    gg.add_argument("--right", metavar="COL",
                    help="bipartite algorithms: the right (item) id column (default: --dst)")

    ig = run.add_argument_group("inputs (each algorithm takes those 'onyx-rapids list' shows)")
    reserved = {a.dest for a in run._actions}
    for name in _all_input_names():
        if name == "k":
            continue  # the shared --k below
        if _flag(name) in run._option_string_actions or name in reserved:
            raise RuntimeError(f"cli: the input name {name!r} collides with a flag of 'run'")
        ig.add_argument(_flag(name), dest=_dest(name), metavar="VALUE", help=_input_help(name))
    ig.add_argument("--k", type=int, metavar="K", dest="k",
                    help="an algorithm's k input (classes, factors, core order; default 2, or "
                         "the classes of --labels), else the columns of a default "
                         "vertex_values input (default 2)")
    ig.add_argument("--seed", type=int, default=0, metavar="S",
                    help="seed of generated inputs and graphs (default 0)")
    ig.add_argument("--param", action="append", metavar="NAME=VALUE",
                    help="a mathematical parameter of the algorithm (alpha, tol, max_iter, ...; "
                         "repeatable; 'onyx-rapids list' shows each algorithm's)")

    _add_execution_flags(run.add_argument_group(
        "execution (defaults: the algorithm's; an option it does not support is refused)"))

    og = run.add_argument_group("output")
    og.add_argument("--out", metavar="FILE",
                    help="write the result frame here (atomically) in the format of the "
                         "extension: .parquet/.pq, .csv (nulls as empty fields), .json "
                         "(records; nulls and infinities as null)")
    og.add_argument("--force", action="store_true", help="overwrite an existing --out")
    og.add_argument("--head", type=int, default=10, metavar="N",
                    help="without --out: rows to print (default 10; 0 prints all)")
    og.add_argument("--heartbeat", type=float, metavar="SECONDS",
                    help=f"seconds between 'still running' lines (default "
                         f"{HEARTBEAT_SECONDS:g}, or ${HEARTBEAT_ENV}; 0: none)")
    og.add_argument("-q", "--quiet", action="store_true",
                    help="no progress or heartbeat lines (the summary stays)")
    run.set_defaults(func=cmd_run)
    if "k" in _all_input_names():
        run.set_defaults(**{_dest("k"): None})

    # --- list
    for name, aliases in (("list", ["algorithms"]),):
        ls = sub.add_parser(name, aliases=aliases, help="list the algorithms",
                            description="Every registered algorithm with its graph kind, "
                                        "inputs, result columns, execution options and "
                                        "parameters.")
        ls.add_argument("--json", action="store_true", help="print JSON")
        ls.add_argument("--dask", action="store_true",
                        help="the distributed algorithms of onyx_rapids.dask (needs dask)")
        ls.set_defaults(func=cmd_list)

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

    # --- tune
    tune = sub.add_parser(
        "tune", help="retrain the tuning model on your GPU and graphs",
        description="Time every configuration of each algorithm's pool (onyx_rapids.tuning."
                    "pool) on the graphs, train the tuning models (decision trees per graph "
                    "kind, a throughput regressor; needs scikit-learn: pip install "
                    "'onyx_rapids[tune]') and write the model file that tuning='auto' reads "
                    "when ONYX_RAPIDS_TUNING_MODEL names it.")
    tune.add_argument("graphs", nargs="+", metavar="GRAPH",
                      help="edge lists (Parquet or CSV) or embedded graph names")
    tune.add_argument("--out", required=True, metavar="PATH", help="the model file (.json)")
    tune.add_argument("--algorithms", metavar="A,B",
                      help="the algorithms to tune (default: " + ", ".join(
                          ("bfs", "sssp", "pagerank", "...")) + " -- onyx_rapids.tuning.TUNED)")
    tune.add_argument("--table", metavar="PATH",
                      help="a Parquet training table: earlier measurements are read from it "
                           "and the new ones appended")
    tune.add_argument("--src", default="src", metavar="COL", help="source column (src)")
    tune.add_argument("--dst", default="dst", metavar="COL", help="destination column (dst)")
    tune.add_argument("--weight", metavar="COL", help="edge weight column")
    tune.add_argument("--directed", action="store_true", help="the edge lists are directed")
    tune.add_argument("--repeat", type=int, default=3, metavar="N",
                      help="timed calls per configuration (median; default 3)")
    tune.add_argument("--random", type=int, default=16, metavar="N",
                      help="random configurations in each pool besides the one-option ones "
                           "(default 16)")
    tune.add_argument("--seed", type=int, default=0, metavar="S", help="training seed")
    tune.add_argument("--degree-only", action="store_true",
                      help="train without the costly attributes (BFS sweeps, wedges): a "
                           "tuned call then computes only degree statistics")
    tune.add_argument("--quick", action="store_true",
                      help="train on the quick attributes (degree statistics estimated from "
                           "samples): the cheapest first tuned call")
    tune.add_argument("--force", action="store_true", help="overwrite an existing --out")
    tune.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    tune.set_defaults(func=cmd_tune)

    # --- generate
    gen = sub.add_parser(
        "generate", help="generate a synthetic graph as an edge list",
        description="Generate a synthetic graph with 2**scale vertices (rmat / kronecker: "
                    "Graph500 R-MAT, 16 edges per vertex; erdos_renyi: G(n, 16n); grid: 2-D "
                    "grid) and write its edges (src, dst[, weight]) atomically as Parquet "
                    "(or CSV / JSON by the extension of --out).",
    )
    gen.add_argument("kind", metavar="KIND", help="rmat, kronecker, erdos_renyi or grid")
    gen.add_argument("--scale", type=int, required=True, metavar="N", help="2**N vertices")
    gen.add_argument("--out", required=True, metavar="PATH", help="file to write (.parquet)")
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
    except SystemExit as e:  # usage errors (2), --help and --version (0)
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
