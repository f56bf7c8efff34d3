"""Suite ``outofcore`` (directed R-MAT graphs written to Parquet): a graph built from a file
straight into host memory, and the algorithms on it, at sizes where the edge list does not fit
on the device (EMOGI; ``Graph.from_parquet(..., placement="host")``).

* Preparation (not timed as a row): the spec's R-MAT edge list (Graph500 a, b, c; ids permuted;
  self-loops and repeated pairs kept, as ``datasets.rmat``) is drawn on the device in chunks and
  written (by cuDF's chunked writer on a GPU, else pyarrow) to an uncompressed Parquet file under ``$ONYX_BENCH_SCRATCH`` (default: the system's
  temporary directory), row groups of 2**20 rows; deleted at the end.
* case ``from_parquet``: ``Graph.from_parquet(path, placement="host")`` once (the build is
  minutes at 2**31 rows), with the peaks of device memory (the GPU's bytes in use: total less free) and
  of the process's resident host memory, sampled every 20 ms by a thread, and the build's
  passes (the ``onyx_rapids.host_build`` log).  Checked: under the simulator against the
  device build of the same file (every array equal); on a GPU, against the edge count of the
  distinct (source, destination) pairs of the file, counted on the device in chunks.
* ``bfs`` (from the vertex of largest out-degree), ``weakly_connected_components``
  (``method="propagate"``), ``pagerank`` (unweighted, ``max_iter=20, tol=1e-12``: 20 iterations):
  variant ``host`` (the graph as built, run first, with the device to itself) and ``device``
  (``g.to("device")`` after it, when the edge arrays fit in the device memory available, and
  the run fits beside them; else the row says so); the host rows are checked against the
  device rows (exact; pagerank normalized L1 1e-5),
  wcc without a device row against union-find (``method="hook"``) on the host graph.  ``params`` hold the edge
  bytes read and GB/s as in suite ``hostmem``, against a pinned memcpy row.
"""

from __future__ import annotations

import logging
import os
import resource
import shutil
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np

from onyx_rapids import device, inputs, io, memory
from onyx_rapids.graph import Graph

from ..common import (column, compare, error_text, free_memory, out_of_memory,
                      time_calls, timed)
from .hostmem import _memcpy_row

ALGORITHMS = ("bfs", "weakly_connected_components", "pagerank")
ROW_GROUP = 1 << 20
PAGERANK_ITERATIONS = 20


def algorithms():
    return ALGORITHMS


# ------------------------------------------------------------------------------ the file

def _rmat_chunk(rng, rows: int, scale: int, a: float, b: float, c: float, perm):
    """``rows`` R-MAT edges (int32 when the ids fit, else int64) of 2**scale ids, permuted."""
    xp = device.xp
    dtype = np.int32 if scale <= 30 else np.int64
    src = xp.zeros(rows, dtype=dtype)
    dst = xp.zeros(rows, dtype=dtype)
    for _ in range(scale):
        r = rng.random(rows, dtype=np.float32)
        down = r >= a + b                      # quadrants c, d: the row's bit is 1
        right = ((r >= a) & ~down) | (r >= a + b + c)  # quadrants b, d: the column's bit
        src <<= 1
        src |= down.astype(dtype)
        dst <<= 1
        dst |= right.astype(dtype)
    return perm[src], perm[dst]


def write_rmat_parquet(path, scale: int, edge_factor: int, a: float = 0.57, seed: int = 1,
                       chunk: int = 1 << 26) -> int:
    """Write an R-MAT edge list (columns ``src``, ``dst``) to ``path``; returns its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    xp = device.xp
    b = c = 0.19  # as datasets.rmat and the rmat:SCALE:EDGE_FACTOR:A spec of benchmarks.graphs
    rng = xp.random.default_rng(seed)
    n = 1 << scale
    perm = xp.random.RandomState(seed + 1).permutation(n).astype(
        np.int32 if scale <= 30 else np.int64)
    rows = edge_factor * n
    schema = pa.schema([("src", pa.from_numpy_dtype(perm.dtype)),
                        ("dst", pa.from_numpy_dtype(perm.dtype))])
    chunks = (_rmat_chunk(rng, min(chunk, rows - start), scale, a, b, c, perm)
              for start in range(0, rows, chunk))
    cudf = io._cudf()
    if cudf is not None:  # encoded on the device
        from cudf.io.parquet import ParquetWriter

        with ParquetWriter(str(path), compression=None, row_group_size_rows=ROW_GROUP) as w:
            for src, dst in chunks:
                w.write_table(cudf.DataFrame({"src": src, "dst": dst}))
        return rows
    with pq.ParquetWriter(path, schema, compression="none") as writer:
        for src, dst in chunks:
            table = pa.table({"src": device.to_host(src), "dst": device.to_host(dst)},
                             schema=schema)
            writer.write_table(table, row_group_size=ROW_GROUP)
    return rows


def prepare(spec, *, undirected: bool = False, log=None):
    """The spec's Parquet file: (path, statistics)."""
    if spec.kind != "rmat":
        raise ValueError(f"suite outofcore draws R-MAT graphs (rmat:SCALE[:EDGE_FACTOR[:A]]); "
                         f"got {spec.text}")
    p = spec.params
    folder = Path(tempfile.mkdtemp(prefix="onyx_outofcore_",
                                   dir=os.environ.get("ONYX_BENCH_SCRATCH")))
    path = folder / "edges.parquet"
    (log or print)(f"graph {spec.text}: writing the edge list to {path}")
    rows, ms = timed(lambda: write_rmat_parquet(path, p["scale"], p["edge_factor"],
                                                p.get("a", 0.57)))
    facts = {"spec": spec.text, "kind": spec.kind, "params": dict(p), "rows": rows,
             "file_bytes": path.stat().st_size, "write_ms": ms, "directed": True,
             "weighted": False, "path": str(path), "n": 1 << p["scale"], "m": rows,
             "max_degree": 0}  # n, m, max_degree: the rows' until the build replaces them
    (log or print)(f"graph {spec.text}: {rows:,} rows, {facts['file_bytes'] / 1e9:.2f} GB "
                   f"written in {ms / 1e3:.1f} s")
    return path, facts


# ------------------------------------------------------------------------------ peaks

class Peaks:
    """Peak device bytes in use (the GPU's: total less free) and peak resident host bytes of the
    process, sampled by a thread every ``interval`` seconds while the block runs."""

    def __init__(self, interval: float = 0.02):
        self.interval, self.device, self.host = interval, 0, 0
        self._stop = threading.Event()

    @staticmethod
    def _rss() -> int:
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    @staticmethod
    def _device_used() -> int:
        """Bytes in use on the GPU (all of them: total less free), 0 without one."""
        if device.BACKEND != "gpu":
            return 0
        free, total = device.xp.cuda.runtime.memGetInfo()
        return int(total - free)

    def _sample(self):
        self.device = max(self.device, self._device_used())
        self.host = max(self.host, self._rss())

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self.device_before, self.host_before = self._device_used(), self._rss()
        self._sample()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()
        return False


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def _distinct_pairs(path) -> int:
    """Distinct (src, dst) pairs of the file, counted on the device chunk by chunk: keys
    src * n + dst bucketed by their top bits so that each bucket's keys fit on the device."""
    import pyarrow.parquet as pq

    xp = device.xp
    reader = pq.ParquetFile(path)
    n = 1 + max(int(reader.metadata.row_group(i).column(j).statistics.max)
                for i in range(reader.metadata.num_row_groups) for j in (0, 1))
    # a bucket's keys, their concatenation and the sort's work space: ~32 bytes a key
    buckets = 1 + (reader.metadata.num_rows * 64) // max(memory.device_available(), 1)
    total = 0
    for bucket in range(buckets):
        keys = []
        for batch in reader.iter_batches(batch_size=1 << 26, columns=["src", "dst"]):
            src = xp.asarray(batch.column(0).to_numpy()).astype(np.int64)
            keep = src % buckets == bucket
            keys.append(src[keep] * n + xp.asarray(batch.column(1).to_numpy())[keep])
        total += int(xp.unique(xp.concatenate(keys)).shape[0])
        del keys
        free_memory()
    return total


# ------------------------------------------------------------------------------ measure

def measure(run, spec, path, stats) -> None:
    graph = spec.text
    try:
        _measure(run, graph, path, stats)
    finally:
        shutil.rmtree(Path(path).parent, ignore_errors=True)


def _measure(run, graph, path, stats) -> None:
    lines = _Lines()
    logger = logging.getLogger("onyx_rapids.host_build")
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    row = run.row(graph, "graph construction", "from_parquet", "host", "ours", "ours",
                  params={"rows": stats["rows"], "file_bytes": stats["file_bytes"]})
    try:
        with Peaks() as peaks:
            h, ms = timed(lambda: Graph.from_parquet(path, placement="host", directed=True))
    except Exception as e:
        run.error(row, e, "from_parquet")
        return
    finally:
        logger.removeHandler(lines)
    row.update(ms=ms, first_call_ms=ms, times_ms=[ms], repeats=1)
    degree = device.to_host(h.out_degree).astype(np.int64) + device.to_host(h.in_degree)
    stats.update(n=h.n, m=h.m, index_dtype=str(h.index_dtype),
                 offset_dtype=str(h.offset_dtype), edge_bytes=h.edge_bytes(),
                 max_degree=int(degree.max()), build_ms=ms,
                 max_out_degree=int(device.to_host(h.out_degree).max()))
    row["params"].update(n=h.n, m=h.m, index_dtype=str(h.index_dtype),
                         offset_dtype=str(h.offset_dtype),
                         edge_bytes=h.edge_bytes(), m_over_2_31=h.m / 2**31,
                         device_peak_bytes=peaks.device - peaks.device_before,
                         host_peak_bytes=peaks.host - peaks.host_before,
                         rows_per_s=stats["rows"] / (ms / 1e3), passes=lines.lines)
    run.log(f"from_parquet host on {graph}: n={h.n:,} m={h.m:,} ({h.index_dtype} indices, "
            f"{h.offset_dtype} offsets) in "
            f"{ms / 1e3:.1f} s; device peak "
            f"{memory.format_bytes(peaks.device - peaks.device_before)}, host peak "
            f"{memory.format_bytes(peaks.host - peaks.host_before)}")
    for line in lines.lines:
        run.log(f"  {line}")
    if device.BACKEND == "gpu":
        want, _ = timed(lambda: _distinct_pairs(path))
        record = {"against": "distinct (src, dst) pairs of the file", "metric": "edges",
                  "value": h.m, "reference": want, "ok": h.m == want}
    else:
        g = Graph.from_parquet(path, placement="device", directed=True)
        same = all(np.array_equal(device.to_host(getattr(g, a)), device.to_host(getattr(h, a)))
                   for a in ("vertices", "out_offsets", "out_indices", "in_offsets",
                             "in_indices", "in_edge_ids"))
        record = {"against": "the device build", "metric": "arrays equal", "value": same,
                  "ok": same}
    run.check(row, record, f"from_parquet host on {graph}")
    _algorithms(run, graph, h)


def _algorithms(run, graph, h):
    from onyx_rapids import bfs, pagerank, weakly_connected_components

    copy_gb_s = _memcpy_row(run, graph, min(int(h.out_indices.nbytes), 1 << 31))
    # bytes read per edge: its vertex index (index_dtype; the offsets, edge-position dtype,
    # are read per vertex, not per edge)
    item = np.dtype(h.index_dtype).itemsize
    source = inputs.top_vertex(h)
    calls = {"bfs": (lambda g: bfs(g, source=source), "distance", "hops", 0.0),
             "weakly_connected_components": (
                 lambda g: weakly_connected_components(g, method="propagate"), "labels",
                 "exact", 0.0),
             "pagerank": (lambda g: pagerank(g, weight=False, tol=1e-12,
                                             max_iter=PAGERANK_ITERATIONS), "pagerank",
                          "normalized_l1", 1e-5)}
    for name in run.algorithms:
        call, col, metric, tol = calls[name]
        values, rows = {}, {}
        # the host run first, with the device to itself (as where the graph does not fit);
        # then the graph moved to the device, when it fits there, for the reference
        for variant in ("host", "device"):
            row = rows[variant] = run.row(graph, name, "default", variant, "ours",
                                          "ours" if variant == "host" else "variant",
                                          params={"placement": variant})
            g = h
            if variant == "device":
                free_memory()
                if h.edge_bytes() > memory.device_available() - (2 << 30):
                    row["status"] = (f"n/a: the edge arrays ({memory.format_bytes(h.edge_bytes())})"
                                     " do not fit on the device")
                    continue
                g = h.to("device")
            try:
                with warnings.catch_warnings():  # 20 iterations on purpose: not converged
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out, first, times = time_calls(lambda: call(g), run.repeat)
            except Exception as e:
                g = None
                if variant == "device" and out_of_memory(e):
                    row["status"] = f"n/a: out of device memory ({error_text(e)[:160]})"
                else:
                    run.error(row, e, variant)
                continue
            g = None  # the device copy goes before the next run
            row.update(first_call_ms=first, times_ms=times, repeats=len(times),
                       ms=float(np.median(times)))
            values[variant] = column(out, col)
            del out
            if name == "bfs":
                reached = device.to_host(values[variant]) < 2**31 - 1
                nbytes = int(device.to_host(h.out_degree).astype(np.int64)[reached].sum()) * item
            elif name == "pagerank":
                nbytes = h.m * item * PAGERANK_ITERATIONS
            else:
                nbytes = h.m * item
            row["params"].update(bytes=nbytes, gb_s=nbytes / (row["ms"] * 1e6))
            if copy_gb_s:
                row["params"]["fraction_of_memcpy"] = row["params"]["gb_s"] / copy_gb_s
            run.log(f"{name} {variant} on {graph}: {row['ms']:.1f} ms, "
                    f"{row['params']['gb_s']:.1f} GB/s")
            free_memory()
        if "host" in values:
            reference, against = values.get("device"), "the device placement"
            if reference is None and name == "weakly_connected_components":
                hook = weakly_connected_components(h, method="hook")
                reference, against = column(hook, col), "union-find (method='hook') on host"
            if reference is None:
                run.log(f"{name} host on {graph}: no reference (the device run failed)")
                rows["host"]["check"] = "-"
            else:
                run.check(rows["host"], compare(metric, values["host"], reference,
                                                against=against, tol=tol),
                          f"{name} host on {graph}")
        del values
        free_memory()
