"""What every suite shares: the progress log and failure list, timing (warm-up, device
synchronization, median), the environment record (device, versions, git), result checks and
output files (Parquet, JSON, Markdown, PNG).

Timing: :func:`time_calls` makes one warm-up call (``first_call_ms``: compilation included)
then ``repeat`` timed calls, each between two device synchronizations (``time.perf_counter``);
suites report the median.

Checks (:func:`compare`): one function for every metric a suite uses, each returning a record
``{"against", "metric", "value", "tol", "ok", ...}``; NaN never passes.
"""

from __future__ import annotations

import gc
import importlib
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from onyx_rapids import device

VERSION_MODULES = ("onyx_rapids", "numba", "numba_cuda", "cupy", "cudf", "cugraph",
                   "pylibcugraph", "torch", "torch_geometric", "scipy", "networkx")
NOT_INSTALLED = "not installed"
UNREACHED_HOPS = 2**31 - 1  # bfs: every value at or above (int32 / int64 max) is unreached
UNREACHED_FLOAT = 3e38      # sssp: at or above (float32 max, inf) is unreached
FLOAT32_UNIT = 2.0**-24
ORACLE_MAX_EDGES = 200_000  # the largest graph (stored edges) the suites' CPU oracles run on


class Log:
    """Progress lines on stderr and the list of failures (each printed at once)."""

    def __init__(self, quiet: bool = False):
        self.t0 = time.perf_counter()
        self.failures: list[str] = []
        self.quiet = quiet

    def __call__(self, msg: str) -> None:
        if not self.quiet:
            print(f"[{time.perf_counter() - self.t0:8.1f} s] {msg}", file=sys.stderr, flush=True)

    def fail(self, msg: str) -> None:
        self.failures.append(msg)
        print(f"FAILED: {msg}", file=sys.stderr, flush=True)


def unique(keys: np.ndarray) -> np.ndarray:
    """The distinct values of host array ``keys``, sorted.  NumPy 2.4's ``np.unique`` (and
    what calls it: ``setdiff1d``, ``union1d``, ``isin`` without ``assume_unique``) takes ~20 s
    for 16M int64 keys on the CI machine and minutes on a 67M-edge graph; a sort and a mask
    0.3 s."""
    keys = np.sort(keys)
    return keys[np.r_[True, keys[1:] != keys[:-1]]] if keys.size else keys

def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"


def out_of_memory(e: BaseException) -> bool:
    """CuPy's / torch's OutOfMemoryError or a CUDA allocation failure."""
    return ("OutOfMemory" in type(e).__name__ or isinstance(e, MemoryError)
            or "out of memory" in str(e).lower())


# ------------------------------------------------------------------------------ timing


def timed(fn):
    """(fn(), milliseconds), the device synchronized before and after."""
    device.synchronize()
    t = time.perf_counter()
    out = fn()
    device.synchronize()
    return out, (time.perf_counter() - t) * 1e3


def time_calls(fn, repeat: int):
    """(warm-up result, warm-up ms, [ms of each of ``repeat`` timed calls])."""
    out, first = timed(fn)
    times = []
    for _ in range(repeat):
        res, ms = timed(fn)
        del res
        times.append(ms)
    return out, first, times


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def free_memory() -> None:
    """Collect garbage and hand CuPy's (and torch's) cached blocks back."""
    gc.collect()
    if device.BACKEND == "gpu":
        device.xp.get_default_memory_pool().free_all_blocks()
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.empty_cache()


# ------------------------------------------------------------------------------ environment


def _version(module: str) -> str:
    try:
        mod = importlib.import_module(module)
    except Exception:
        return NOT_INSTALLED
    v = getattr(mod, "__version__", None)
    if v is None:
        try:
            from importlib.metadata import version
            v = version(module.replace("_", "-"))
        except Exception:
            v = "?"
    return str(v)


def git() -> dict:
    root = Path(__file__).resolve().parent.parent
    try:
        run = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True,  # noqa
                                        text=True, timeout=10).stdout.strip()
        dirty = run("status", "--porcelain")
        return {"commit": run("rev-parse", "HEAD") or None,
                "dirty_files": len(dirty.splitlines()) if dirty else 0}
    except Exception as e:
        return {"commit": None, "error": error_text(e)}


def environment() -> dict:
    """Device facts, library versions ("not installed" when one does not import) and git."""
    return {"device": device.info(), "versions": {m: _version(m) for m in VERSION_MODULES},
            "git": git()}


def slug(text) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-") or "unknown"


def stem(out, suite: str, device_name, date: str, tag: str = "", quick: bool = False) -> Path:
    """``out/run-<suite>_<device>_<date>[_<tag>][_quick]`` (the folder made if missing)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"run-{suite}_{slug(device_name)}_{date}"
    if tag:
        name += f"_{slug(tag)}"
    return out / (name + ("_quick" if quick else ""))


def suffixed(stem: Path, suffix: str) -> Path:
    """``stem`` + ``suffix``; not ``Path.with_suffix``, which takes a graph slug's decimal
    point (``..._rmat-17-4-0.5``) for a suffix and replaced it: the run of rmat:17:4:0.5 was
    written as ``..._rmat-17-4-0.parquet``, where rmat:17:4:0.55's would land too.

    >>> suffixed(Path("out/run-tuning_h200_2026-11-28_i38-rmat-17-4-0.5"), ".md").name
    'run-tuning_h200_2026-11-28_i38-rmat-17-4-0.5.md'
    """
    return stem.parent / (stem.name + suffix)


def plain(obj):
    """JSON fallback for NumPy scalars and arrays."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=2, default=plain) + "\n")


def results_table(report: dict) -> list[dict]:
    """A run's rows as its Parquet file holds them: each row with its graph's statistics
    (``graph_*``) and the run's device, date, commit and versions; ``params`` as JSON text.
    Also rebuilds the table from a run's JSON report (``json.load``)."""
    env, settings = report["environment"], report["settings"]
    meta = {"device": env["device"].get("device"), "backend": env["device"].get("backend"),
            "driver": env["device"].get("driver"), "date": report["date"],
            "timestamp": report["timestamp"], "git_commit": env["git"].get("commit"),
            "tag": settings["tag"], "quick": settings["quick"],
            **{f"version_{k}": v for k, v in env["versions"].items()}}
    table = []
    for r in report["rows"]:
        st = report["graphs"].get(r["graph"], {})
        table.append({**r, "params": json.dumps(r["params"], default=plain),
                      "graph_kind": st.get("kind"), "graph_n": st.get("n"),
                      "graph_m": st.get("m"), "graph_directed": st.get("directed"),
                      "graph_weighted": st.get("weighted"),
                      "graph_max_degree": st.get("max_degree"), **meta})
    return table


def results_frame(rows: list[dict]) -> "object":
    """Rows as the Parquet file's frame: times as float64 (NaN where none), ``k`` nullable."""
    import pandas as pd

    df = pd.DataFrame(rows)
    for col in ("ms", "first_call_ms", "speedup_vs_ours", "ratio_vs_ours"):
        if col in df:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    if "k" in df:
        df["k"] = pd.array(df["k"], dtype="Int64")
    return df


def write_parquet(path: Path, rows: list[dict]) -> None:
    results_frame(rows).to_parquet(path, index=False)


def pyplot():
    """matplotlib.pyplot (Agg), or the reason there is none."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt, None
    except Exception as e:
        return None, f"no plot: matplotlib {NOT_INSTALLED} ({error_text(e)})"


def fmt(x, spec=".3f", none="—"):
    return none if x is None else format(x, spec)


def ms_text(ms) -> str:
    if ms is None:
        return "—"
    return f"{ms:.1f}" if ms >= 100 else f"{ms:.3f}" if ms >= 1 else f"{ms:.3g}"


# ------------------------------------------------------------------------------ result columns


def host(values) -> np.ndarray:
    """A column (pandas / cuDF series, CuPy / NumPy array) as a NumPy array."""
    if hasattr(values, "values_host"):
        return np.asarray(values.values_host)
    if hasattr(values, "to_numpy"):
        return np.asarray(values.to_numpy())
    return np.asarray(device.to_host(values))


def column(frame, name: str, *, null=None):
    """A result column as a backend array; nullable columns (pandas Int64 <NA>, cuDF nulls)
    have their nulls replaced by ``null`` (an error when None and the column has nulls)."""
    col = frame[name]
    if null is not None and hasattr(col, "fillna"):
        if str(getattr(col, "dtype", "")) in ("Int64", "Int32") or getattr(col, "has_nulls",
                                                                           False):
            col = col.fillna(null)
            col = col.astype("int64")
    if hasattr(col, "to_cupy"):  # cuDF
        return col.to_cupy()
    if str(getattr(col, "dtype", "")) in ("Int64", "Int32"):
        if bool(col.isna().any()):
            raise ValueError(f"column {name!r} has nulls; give null= to replace them")
        col = col.astype("int64")
    return device.asarray(col.to_numpy())


def ordered(frame, g, name: str, *, null=None):
    """Column ``name`` in the graph's internal vertex order (the frame's vertex column must be
    the graph's vertices, in any order)."""
    return by_vertex(column(frame, "vertex"), column(frame, name, null=null), g, "the result")


def by_vertex(vertex, values, g, who: str):
    """``values`` (one per id of ``vertex``) in the graph's internal vertex order, whatever
    the order of the rows and of the graph (ascending ids or :meth:`Graph.reorder`'s); raises
    ValueError naming ``who`` unless ``vertex`` holds each vertex of the graph once."""
    xp = device.xp
    vertex = vertex.astype(np.int64)
    if int(vertex.shape[0]) != g.n:
        raise ValueError(f"{who} has {int(vertex.shape[0])} vertices, the graph {g.n}")
    try:
        pos = xp.asarray(device.asarray(g.to_internal(vertex))).astype(np.int64)
    except ValueError as e:
        raise ValueError(f"{who} has other vertex ids than the graph ({e})") from None
    seen = xp.zeros(g.n, dtype=bool)
    seen[pos] = True
    if not bool(seen.all()):
        raise ValueError(f"{who} has other vertex ids than the graph (some twice)")
    out = xp.empty_like(values)
    out[pos] = values
    return out


def predecessors(frame, g):
    """bfs / sssp predecessors as internal indices, -1 for none: the nullable column (a null:
    no predecessor) and the older -1 convention are both read."""
    if "predecessor" not in list(frame.columns):
        return None
    ids = ordered(frame, g, "predecessor", null=-1).astype(np.int64)
    xp = device.xp
    out = xp.full(ids.shape[0], -1, dtype=np.int64)
    has = ids != -1
    if g.n and bool(has.any()):
        out[has] = xp.asarray(device.asarray(g.to_internal(ids[has]))).astype(np.int64)
    return out


# ------------------------------------------------------------------------------ checks


def _hops(v):
    return device.xp.minimum(v.astype(np.int64), UNREACHED_HOPS)


def compare(metric: str, ours, ref, *, against: str, tol: float = 0.0, **extra) -> dict:
    """``ours`` against ``ref`` (same order; backend arrays, or sorted ids for ``members``).

    metrics: ``hops`` (bfs distances equal, every unreached value counts as one), ``distance``
    (sssp: the same vertices reached, |a - b| <= tol |b| + 1e-6 + the float32 rounding of a
    path of |b| / min_weight edges when ``min_weight`` is given), ``exact``, ``partition``
    (the same components), ``members`` (the same id sets), ``normalized_l1`` (L1 of each column
    scaled to sum 1, the largest over columns), ``l1``, ``column_l1`` (largest column L1),
    ``max_abs``, ``rel_l2`` (||a - b|| / ||b||), ``rel_max`` (the largest
    |a - b| / (|b| + 1e-9 max |b|): every value within a relative tolerance)."""
    xp = device.xp
    out = {"against": against, "metric": metric, "tol": tol, **extra}
    if metric == "members":
        a, b = unique(np.asarray(ours, dtype=np.int64)), unique(np.asarray(ref, dtype=np.int64))
        value = int(np.setdiff1d(a, b, assume_unique=True).size
                    + np.setdiff1d(b, a, assume_unique=True).size)
        return {**out, "value": value, "members": int(a.size), "ok": value == 0}
    if tuple(ours.shape)[:1] != tuple(ref.shape)[:1]:
        return {**out, "value": None, "ok": False,
                "error": f"{ours.shape[0]} values, reference {ref.shape[0]}"}
    if metric == "hops":
        value = int((_hops(ours) != _hops(ref)).sum())
        return {**out, "value": value, "ok": value == 0}
    if metric == "exact":
        value = int((ours.astype(np.int64) != ref.astype(np.int64)).sum())
        return {**out, "value": value, "ok": value == 0}
    if metric == "partition":
        _, ia = xp.unique(ours.astype(np.int64), return_inverse=True)
        _, ib = xp.unique(ref.astype(np.int64), return_inverse=True)
        ia, ib = ia.ravel().astype(np.int64), ib.ravel().astype(np.int64)
        na = int(ia.max()) + 1 if ia.size else 0
        nb = int(ib.max()) + 1 if ib.size else 0
        pairs = int(xp.unique(ia * max(nb, 1) + ib).shape[0]) if ia.size else 0
        return {**out, "value": abs(pairs - na) + abs(pairs - nb), "components": na,
                "reference_components": nb, "ok": na == nb == pairs}
    if metric == "distance":
        a, b = ours.astype(np.float64), ref.astype(np.float64)
        ra = xp.isfinite(a) & (a < UNREACHED_FLOAT)
        rb = xp.isfinite(b) & (b < UNREACHED_FLOAT)
        both = ra & rb
        a, b = xp.where(both, a, 0.0), xp.where(both, b, 0.0)
        diff, mag = xp.abs(a - b), xp.abs(b)
        bound = tol * mag + 1e-6
        if extra.get("min_weight"):
            bound = bound + 2.0 * FLOAT32_UNIT * mag * (mag / float(extra["min_weight"]))
        over = int((both & (diff > bound)).sum())
        reach = int((ra != rb).sum())
        rel = float((diff / xp.maximum(mag, 1e-30))[both].max()) if bool(both.any()) else 0.0
        return {**out, "value": rel, "reach_mismatches": reach, "over_tolerance": over,
                "ok": reach == 0 and over == 0}
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    if a.ndim == 1:
        a, b = a[:, None], b[:, None]
    if metric == "normalized_l1":
        sa, sb = a.sum(axis=0), b.sum(axis=0)
        if not (bool((sa > 0).all()) and bool((sb > 0).all())):
            return {**out, "value": None, "ok": False, "error": "a column does not sum > 0"}
        value = float(xp.abs(a / sa - b / sb).sum(axis=0).max()) if a.size else 0.0
    elif metric == "l1":
        value = float(xp.abs(a - b).sum())
    elif metric == "column_l1":
        value = float(xp.abs(a - b).sum(axis=0).max()) if a.size else 0.0
    elif metric == "max_abs":
        value = float(xp.abs(a - b).max()) if a.size else 0.0
    elif metric == "rel_max":
        floor = 1e-9 * float(xp.abs(b).max()) if b.size else 0.0
        value = float((xp.abs(a - b) / (xp.abs(b) + max(floor, 1e-300))).max()) if a.size \
            else 0.0
    elif metric == "rel_l2":
        ref_norm = float(xp.linalg.norm(b))
        value = float(xp.linalg.norm(a - b)) / (ref_norm if ref_norm > 0 else 1.0)
    else:
        raise ValueError(f"compare: unknown metric {metric!r}")
    return {**out, "value": value, "ok": bool(value <= tol)}  # NaN fails


def sane(metric_sums: str | None, mat) -> dict:
    """Finite values, and (``"total"``) the whole sums to 1, (``"columns"``) each column sums
    to 1, (``"rows"``) each row sums to 1, all within 1e-3."""
    xp = device.xp
    out = {"finite": bool(xp.isfinite(mat).all())}
    if metric_sums == "total":
        out["sum_error"] = abs(float(mat.sum()) - 1.0)
    elif metric_sums in ("columns", "rows"):
        axis = 0 if metric_sums == "columns" else 1
        out["sum_error"] = float(xp.abs(mat.sum(axis=axis) - 1.0).max()) if mat.size else 0.0
    out["ok"] = bool(out["finite"] and out.get("sum_error", 0.0) <= 1e-3)
    return out


def detail(check: dict) -> str:
    """'metric value (tol ..., other facts)' of a check record."""
    show = lambda v: fmt(v, ".3g") if isinstance(v, float) else str(v)  # noqa: E731
    text = f"{check.get('metric', '')} {show(check.get('value'))}".strip()
    extra = [f"{k} {show(v)}" for k, v in check.items()
             if k not in ("ok", "against", "metric", "value") and v is not None]
    return text + (f" ({', '.join(extra)})" if extra else "")
