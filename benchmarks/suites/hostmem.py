"""Suite ``hostmem`` (EMOGI; directed-mode graphs): the same traversals and propagations with
the graph's edge arrays in device memory, in pinned host memory read zero-copy (placement
``"host"``), and in CUDA managed memory (the unified-memory baseline), in one run.

* case ``pinned memcpy``: one ``cudaMemcpy`` host-to-device of as many bytes as the CSR's
  indices, from a pinned buffer (median of 5): the PCIe bandwidth the zero-copy rows are
  measured against.
* ``bfs`` and ``sssp`` (from the vertex of largest out-degree, pushing top-down as EMOGI's
  kernels do) and ``weakly_connected_components`` (``method="propagate"``): variants ``host
  aligned`` (ours: the host default), ``host merged``, ``host naive`` (EMOGI's ablation:
  ``edge_access``), ``device`` (the graph in device memory), ``uvm`` (the CSR/CSC in managed
  memory with read-mostly advice; every timed call starts cold: the host rewrites the arrays
  first, so their pages are on the host).  ``pagerank`` (unweighted) and
  ``feature_propagation`` at k = 1 and 32 (10 iterations): ``device`` and ``uvm``; ``host``,
  the default on host edges, streams the CSC (:mod:`onyx_rapids.streaming`: as much of it
  resident as fits, the rest copied each iteration; the fused kernels of pagerank and
  k = 1 read a copy of the whole CSC made once per call where it fits); ``host streamed,
  CSC/2 resident`` and ``host streamed, none resident`` (32 MiB partitions) cap what stays
  resident, so the copy pipeline shows; ``host fused zero-copy`` is the fused kernel
  (pagerank, k = 1) reading the host edges zero-copy, a lane an in-edge (streaming off);
  and, for feature propagation, the generated pull
  kernel reading them zero-copy in aligned runs, merged runs and a load per group and edge
  (``host aligned`` / ``merged`` / ``degree``, ``... generated`` at k = 1).  Streamed rows
  record ``copied_bytes``, the bytes the call copied over PCIe.  Pagerank also ``partition
  streaming`` (:class:`Streamed`: the peer a user would write, the CSC copied to the device
  in partitions every iteration, as many iterations as our run took).
* Every row is checked against the device row (exact for bfs / wcc, relative 1e-4 for sssp,
  1e-5 for the propagations).  ``params`` hold the edge-array bytes the run had to read (bfs:
  the reached vertices' out-edges, ids; sssp: the same with weights, a lower bound; wcc: the
  CSR once, a lower bound; pagerank: the CSC ids (and weights) per iteration;
  feature_propagation: the ids of its simple undirected view per iteration) and ``gb_s`` =
  those bytes over the time, with ``fraction_of_memcpy``.
* ``budget``: under a budget of what is in use plus half the edge bytes, ``g.to("auto")`` must
  choose the host and bfs / pagerank there must give the device results.
* ``auto`` (with ``--device-budget B``): bfs and pagerank on the placement the library chooses
  for this graph when it may allocate B bytes of device memory besides what it holds: over a
  range of graph sizes this series crosses from device to host where the edges pass half of B
  (the plot of GB/s against edges marks that size).
"""

from __future__ import annotations

import ctypes

import numpy as np

from onyx_rapids import device, inputs, memory, streaming
from onyx_rapids.construction.layout import row_blocks
from onyx_rapids.graph import Graph

from ..common import column, compare, free_memory, median, time_calls, timed

ALGORITHMS = ("bfs", "sssp", "weakly_connected_components", "pagerank", "feature_propagation")
ACCESS = ("aligned", "merged", "naive")
FP_ITERATIONS = 10
MIN_HEADROOM = 128 * 2**20


def algorithms():
    return ALGORITHMS


def _memcpy_row(run, graph, nbytes):
    xp = device.xp
    row = run.row(graph, "pinned memcpy", "host-to-device", "cudaMemcpy", "cupy", "peer",
                  label="cupy ndarray.set(pinned array)", params={"bytes": nbytes})
    if device.BACKEND != "gpu":
        row["status"] = "n/a: no GPU"
        return None
    import cupyx

    src = cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    src[:] = np.arange(nbytes, dtype=np.uint64).astype(np.uint8)
    dst = xp.empty(nbytes, dtype=np.uint8)
    run.timed(row, lambda: dst.set(src), repeat=max(run.repeat, 5))
    bad = int((dst[:4096].get() != src[:4096]).sum())
    run.check(row, {"against": "the host bytes", "metric": "mismatches", "value": bad,
                    "ok": bad == 0}, f"memcpy {graph}")
    if row["ms"]:
        row["params"]["gb_s"] = nbytes / (row["ms"] * 1e6)
        run.log(f"pinned memcpy on {graph}: {nbytes / 1e9:.2f} GB at "
                f"{row['params']['gb_s']:.1f} GB/s")
        return row["params"]["gb_s"]
    return None


class Managed:
    """The graph with its edge arrays in CUDA managed memory (read-mostly advice), and
    ``cold()``: the host rewrites them, so that their pages leave the device."""

    def __init__(self, g):
        self.host, self.arrays, self.advice = [], {}, "read-mostly"
        for name in Graph.EDGE_ARRAYS:
            a = getattr(g, name)
            if a is not None and id(a) not in self.arrays:
                self.arrays[id(a)] = self._managed(device.to_host(a))
        self.graph = g.with_edge_arrays(lambda a: None if a is None else self.arrays[id(a)],
                                        "device")

    def _managed(self, values):
        cupy = device.xp
        values = np.ascontiguousarray(values)
        pointer = cupy.cuda.malloc_managed(max(values.nbytes, 1))
        try:
            cupy.cuda.runtime.memAdvise(pointer.ptr, values.nbytes, 1,  # SetReadMostly
                                        cupy.cuda.Device().id)
        except Exception as e:  # CUDA 13 changed the call; record it, run without
            self.advice = f"none ({type(e).__name__}: {e})"
        self.host.append((pointer, values))
        ctypes.memmove(pointer.ptr, values.ctypes.data, values.nbytes)
        return cupy.ndarray(values.shape, values.dtype, pointer)

    def cold(self):
        device.synchronize()
        for pointer, values in self.host:
            ctypes.memmove(pointer.ptr, values.ctypes.data, values.nbytes)


def _cold_times(fn, managed, repeat):
    """(result, first ms, times): every call after ``managed.cold()``."""
    times, out, first = [], None, None
    for i in range(repeat + 1):
        managed.cold()
        res, ms = timed(fn)
        if i == 0:
            out, first = res, ms
        else:
            times.append(ms)
    return out, first, times


def _values(name, frame):
    """The result's value column(s) as a backend array (frame order: vertex order)."""
    single = {"bfs": "distance", "sssp": "distance", "weakly_connected_components": "labels",
              "pagerank": "pagerank"}.get(name)
    if single is not None:
        return column(frame, single)
    cols = [c for c in frame.columns if c.startswith("h_")]
    return device.xp.stack([column(frame, c) for c in cols], axis=1)


#: metric and tolerance of each algorithm against the device placement
METRIC = {"bfs": ("hops", 0.0), "sssp": ("distance", 1e-4),
          "weakly_connected_components": ("exact", 0.0), "pagerank": ("normalized_l1", 1e-5),
          "feature_propagation": ("rel_l2", 1e-5)}


def _check(run, row, name, got, want, label):
    metric, tol = METRIC[name]
    run.check(row, compare(metric, got, want, against="the device placement", tol=tol), label)


def _bytes_read(name, g, frame, info, k):
    # bytes read per edge: its vertex index (index_dtype, the dtype of out_indices/in_indices;
    # the offsets, of offset_dtype, are read per vertex, not per edge)
    item = np.dtype(g.index_dtype).itemsize
    if name in ("bfs", "sssp"):
        reached = device.to_host(_values(name, frame))
        out_degree = device.to_host(g.out_degree).astype(np.int64)
        finite = reached < (2**31 - 1 if name == "bfs" else np.float32(3.0e38))
        edges = int(out_degree[finite].sum())
        return edges * (item + (4 if name == "sssp" else 0))
    if name == "weakly_connected_components":
        return g.m * item
    iterations = int(getattr(info, "iterations", 0) or FP_ITERATIONS)
    if name == "feature_propagation":  # it propagates over the simple undirected view
        return g.simple_undirected().m * item * iterations
    return g.m * item * iterations


def measure(run, spec, g, stats) -> None:
    graph = spec.text
    copy_gb_s = _memcpy_row(run, graph, int(g.out_indices.nbytes))
    h = g.to("host")
    try:
        managed = Managed(g) if device.BACKEND == "gpu" else None
    except Exception as e:  # e.g. no managed memory: rows say so
        managed, why = None, f"managed memory: {type(e).__name__}: {e}"
    else:
        why = "no GPU" if managed is None else None
    source = inputs.top_vertex(g)
    cases = []
    for name in run.algorithms:
        if name in ("bfs", "sssp"):
            if name == "sssp" and g.edge_weights is None:
                continue
            kw = dict(source=source, direction="push")
            cases.append((name, "default", kw, [("device", g, {})]
                          + [(f"host {a}", h, {"edge_access": a}) for a in ACCESS]))
        elif name == "weakly_connected_components":
            kw = dict(method="propagate")
            cases.append((name, "propagate", kw, [("device", g, {})]
                          + [(f"host {a}", h, {"edge_access": a}) for a in ACCESS]))
        elif name == "pagerank":
            kw = dict(weight=False, tol=1e-6, max_iter=100, return_info=True)
            cases.append((name, "unweighted", kw, [("device", g, {}), ("host", h, {})]
                          + _streamed_variants(g, h) + [ZERO_COPY_FUSED(h)]))
        elif name == "feature_propagation":
            for k in (1, 32):
                rng = np.random.default_rng(k)
                features = device.asarray(rng.random((g.n, k), dtype=np.float32))
                kw = dict(features=features, iterations=FP_ITERATIONS)
                # the generated pull kernel's reads: aligned runs (the host default from k = 2
                # on), merged runs, and each group loading each edge (the device default);
                # k = 1's default is PageRank's fused kernel (a lane an in-edge on the host)
                reads = [(f"host {a}", h, {"edge_access": a}) for a in ("aligned", "merged",
                                                                       "degree")]
                if k == 1:
                    reads = [ZERO_COPY_FUSED(h)] + [
                        (f"{v} generated", x, o) for v, x, o in reads]
                cases.append((name, f"k={k}", kw, [("device", g, {}), ("host", h, {})]
                              + _streamed_variants(g.simple_undirected(), h) + reads))
    from onyx_rapids import registry

    for name, case, kw, variants in cases:
        fn = registry.get(name).function
        k = kw["features"].shape[1] if "features" in kw else 1
        reference = None
        for variant, graph_obj, extra in variants + [("uvm", None, {})]:
            extra = dict(extra)
            knobs = extra.pop("streaming", None)
            ours = "host" if name in ("pagerank", "feature_propagation") else "host aligned"
            role = "ours" if variant == ours else "variant"
            if variant == "uvm":
                role = "peer"
            row = run.row(graph, name, case, variant, "ours" if variant != "uvm" else
                          "uvm", role, k=k, params={"placement": variant.split()[0]})
            if variant == "uvm":
                row["label"] = f"ours on CUDA managed memory ({managed.advice if managed else why})"
                if managed is None:
                    row["status"] = f"n/a: {why}"
                    continue
                graph_obj = managed.graph
            call = lambda: fn(graph_obj, **kw, **extra)  # noqa: E731
            copied = streaming.COUNTERS["bytes_copied"]
            try:
                if variant == "uvm":
                    out, first, times = _cold_times(call, managed, run.repeat)
                else:
                    with _knobs(knobs):
                        out, first, times = time_calls(call, run.repeat)
            except Exception as e:
                run.error(row, e, variant)
                continue
            copied = (streaming.COUNTERS["bytes_copied"] - copied) / (len(times) + 1)
            if copied:  # the streamed pulls' copies: bytes over PCIe per call
                row["params"]["copied_bytes"] = copied
            if knobs:
                row["params"].update({f"streaming.{k}": v for k, v in knobs.items()})
            row.update(first_call_ms=first, times_ms=times, repeats=len(times), ms=median(times))
            frame, info = out if isinstance(out, tuple) else (out, None)
            values = _values(name, frame)
            if variant == "device":
                reference = values
            elif reference is not None:
                _check(run, row, name, values, reference, f"{name} {case} {variant} {graph}")
            nbytes = _bytes_read(name, g, frame, info, k)
            row["params"].update(bytes=nbytes, gb_s=nbytes / (row["ms"] * 1e6))
            if copy_gb_s:
                row["params"]["fraction_of_memcpy"] = row["params"]["gb_s"] / copy_gb_s
            run.log(f"{name} {case} {variant} on {graph}: {row['ms']:.2f} ms, "
                    f"{row['params']['gb_s']:.1f} GB/s")
            del out, frame
            if name == "bfs" and variant == "device":
                _emogi_rows(run, graph, g, source, values, copy_gb_s)
            if name == "pagerank" and variant == "device":
                _streaming_row(run, graph, h, values, info.iterations, copy_gb_s)
        free_memory()
    del h, managed
    free_memory()
    _budget_case(run, graph, g, source)
    if getattr(run, "device_budget", None):
        _auto_case(run, graph, g, source, run.device_budget)


def ZERO_COPY_FUSED(h):  # noqa: N802  (a row's spec)
    """The fused kernel reading the host edges zero-copy: streaming off."""
    return ("host fused zero-copy", h, {"fused": True, "streaming": dict(STREAM=False)})


def _streamed_variants(g, h):
    """``host streamed`` rows with less of the pulled CSC's source ids resident (``g`` the graph
    the algorithm pulls over): at most half of them, and none with 32 MiB partitions (every
    iteration then copies all but the two partitions its buffers still hold)."""
    csc = int(g.m) * np.dtype(g.in_indices.dtype).itemsize
    return [("host streamed, CSC/2 resident", h, {"streaming": dict(RESIDENT_LIMIT=csc // 2)}),
            ("host streamed, none resident", h, {"streaming": dict(RESIDENT_LIMIT=0,
                                                                   PARTITION_BYTES=32 << 20)})]


class _knobs:
    """:mod:`onyx_rapids.streaming`'s module settings set to ``values`` for the block."""

    def __init__(self, values):
        self.values = values or {}

    def __enter__(self):
        self.before = {name: getattr(streaming, name) for name in self.values}
        for name, value in self.values.items():
            setattr(streaming, name, value)

    def __exit__(self, *exc):
        for name, value in self.before.items():
            setattr(streaming, name, value)


def _auto_case(run, graph, g, source, budget: int):
    """Case ``auto``: bfs / pagerank where ``Graph.to("auto")`` puts the edges when the library
    may allocate ``budget`` more bytes on the device, checked against the device placement."""
    from onyx_rapids import bfs, pagerank

    calls = {"bfs": (lambda x: bfs(x, source=source, direction="push"), "distance", {}),
             "pagerank": (lambda x: pagerank(x, weight=False, tol=1e-6, max_iter=100,
                                             return_info=True), "pagerank", {})}
    calls = {k: v for k, v in calls.items() if k in run.algorithms}
    want = {}
    for name, (call, col, _) in calls.items():
        out = call(g)
        want[name] = column(out[0] if isinstance(out, tuple) else out, col)
    used = int(device.xp.get_default_memory_pool().used_bytes()) if device.BACKEND == "gpu" \
        else 0
    host = g.to("host")  # auto's choice for a graph not on the device yet (a fresh build)
    before = memory.device_budget()
    memory.set_device_budget(used + budget)
    try:
        placed = host.to("auto")
        facts = {"budget": budget, "edge_bytes": g.edge_bytes(), "placement": placed.placement,
                 "auto_limit_bytes": int(memory.AUTO_FRACTION * budget)}
        for name, (call, col, _) in calls.items():
            row = run.row(graph, name, "auto", f"auto ({memory.format_bytes(budget)} budget)",
                          "ours", "variant", k=1, params=dict(facts))
            out = run.timed(row, lambda: call(placed))
            if out is None:
                continue
            frame, info = out if isinstance(out, tuple) else (out, None)
            metric, tol = METRIC[name]
            record = compare(metric, column(frame, col), want[name],
                             against="the device placement", tol=tol)
            run.check(row, record, f"{name} auto on {graph}")
            nbytes = _bytes_read(name, g, frame, info, 1)
            row["params"].update(bytes=nbytes, gb_s=nbytes / (row["ms"] * 1e6))
            run.log(f"{name} auto under {memory.format_bytes(budget)} on {graph}: "
                    f"{placed.placement}, {row['ms']:.2f} ms, {row['params']['gb_s']:.1f} GB/s")
        del placed
    finally:
        memory.set_device_budget(before)
        del host
        free_memory()


STREAM_PARTITION_BYTES = 256 << 20  # CSC bytes copied per partition by the streaming baseline


class Streamed:
    """PageRank by partition streaming, the other thing a user would do with edges in host
    memory: every iteration copies the CSC's source ids to the device one partition of
    destination vertices at a time (``cudaMemcpyAsync`` on a copy stream into one of two
    device buffers, so the next partition's copy overlaps this one's work) and pulls that
    partition's ranks with CuPy (a gather of the sources' shares and a segmented sum by
    cumulative sums, float64).  cuGraph's update: ``r' = alpha (A^T (r / d_out) + D / n) +
    (1 - alpha) / n``, D the dangling vertices' rank."""

    def __init__(self, h, partition_bytes: int = STREAM_PARTITION_BYTES):
        xp = device.xp
        self.h, self.n = h, h.n
        self.offsets = device.to_host(h.in_offsets).astype(np.int64)
        item = h.in_indices.dtype.itemsize
        per = max(1, partition_bytes // item)
        self.parts = list(row_blocks(self.offsets, per))  # whole vertices
        widest = max(int(self.offsets[b] - self.offsets[a]) for a, b in self.parts)
        self.buffers = [xp.empty(max(widest, 1), dtype=h.in_indices.dtype) for _ in range(2)]
        self.gpu = device.BACKEND == "gpu"
        if self.gpu:
            self.copy_stream = xp.cuda.Stream(non_blocking=True)
        out_degree = h.out_degree.astype(np.float64)
        self.inv_out = xp.where(out_degree > 0, 1.0 / xp.maximum(out_degree, 1.0), 0.0)
        self.dangling = out_degree == 0
        self.in_offsets = h.in_offsets.astype(np.int64)

    def _copy(self, k: int, freed: list):
        """Start copying partition k's source ids into buffer k % 2, once the work that last
        read that buffer (``freed[k % 2]``, an event on the compute stream) is done; returns
        an event for the copy's end."""
        a, b = (int(self.offsets[v]) for v in self.parts[k])
        dst, src = self.buffers[k % 2][:b - a], self.h.in_indices[a:b]
        if not self.gpu:
            dst[...] = src
            return None
        xp = device.xp
        with self.copy_stream:
            if freed[k % 2] is not None:
                self.copy_stream.wait_event(freed[k % 2])
            dst.data.copy_from_device_async(src.data, (b - a) * src.itemsize, self.copy_stream)
            done = xp.cuda.Event()
            done.record(self.copy_stream)
        return done

    def pagerank(self, alpha: float, iterations: int):
        xp = device.xp
        rank = xp.full(self.n, 1.0 / self.n, dtype=np.float64)
        freed = [None, None]  # per buffer: the compute-stream event after its last reader
        for _ in range(iterations):
            share = rank * self.inv_out
            dangling = float(rank[self.dangling].sum())
            nxt = xp.empty_like(rank)
            pending = self._copy(0, freed)
            for k, (v0, v1) in enumerate(self.parts):
                if pending is not None:
                    xp.cuda.get_current_stream().wait_event(pending)
                if k + 1 < len(self.parts):  # overlaps this partition's work
                    upcoming = self._copy(k + 1, freed)
                a = int(self.offsets[v0])
                ids = self.buffers[k % 2][:int(self.offsets[v1]) - a]
                sums = xp.concatenate([xp.zeros(1), xp.cumsum(share[ids])])
                ends = self.in_offsets[v0:v1 + 1] - a
                nxt[v0:v1] = alpha * (sums[ends[1:]] - sums[ends[:-1]] + dangling / self.n) \
                    + (1.0 - alpha) / self.n
                if self.gpu:
                    freed[k % 2] = xp.cuda.Event()
                    freed[k % 2].record(xp.cuda.get_current_stream())
                if k + 1 < len(self.parts):
                    pending = upcoming
            rank = nxt
        device.synchronize()
        return rank.astype(np.float32)


def _streaming_row(run, graph, h, reference, iterations, copy_gb_s):
    """Row ``partition streaming`` of the pagerank case: :class:`Streamed` for as many
    iterations as our run took, checked against the device placement's ranks."""
    row = run.row(graph, "pagerank", "unweighted", "partition streaming", "cupy", "peer",
                  label=f"CuPy pull, CSC streamed in {STREAM_PARTITION_BYTES >> 20} MiB "
                        "partitions (cudaMemcpyAsync, 2 buffers)",
                  params={"iterations": iterations})
    try:
        streamed = Streamed(h)
        ranks = run.timed(row, lambda: streamed.pagerank(0.85, iterations))
    except Exception as e:
        run.error(row, e, "partition streaming")
        return
    if ranks is None:
        return
    row["params"]["partitions"] = len(streamed.parts)
    nbytes = h.m * h.in_indices.dtype.itemsize * iterations
    row["params"].update(bytes=nbytes, gb_s=nbytes / (row["ms"] * 1e6))
    if copy_gb_s:
        row["params"]["fraction_of_memcpy"] = row["params"]["gb_s"] / copy_gb_s
    _check(run, row, "pagerank", ranks, reference, f"pagerank partition streaming {graph}")
    run.log(f"pagerank partition streaming on {graph}: {row['ms']:.2f} ms, "
            f"{row['params']['gb_s']:.1f} GB/s")


def _emogi_rows(run, graph, g, source, distance, copy_gb_s):
    """EMOGI's own bfs (8-byte ids) and bfs_32 (4-byte) from the same root, in each of its
    memory modes, one process per timed run; checked: its BFS iterations equal our deepest
    level + 1 from that root."""
    import tempfile
    from pathlib import Path

    mod, label = run.peer("emogi")
    if mod is None:
        return
    hops = device.to_host(distance).astype(np.int64)
    levels = int(hops[hops < 2**31 - 1].max()) + 1
    reached = int(device.to_host(g.out_degree).astype(np.int64)[hops < 2**31 - 1].sum())
    root = int(g.to_internal(source))
    with tempfile.TemporaryDirectory(prefix="emogi_graph_") as folder:
        bel = mod.write_bel(g, Path(folder) / "graph")
        for program in mod.PROGRAMS:
            item = 4 if program.endswith("32") else 8
            for mode, mode_name in mod.MODES.items():
                row = run.row(graph, "bfs", "default", f"emogi {program} {mode_name}", "emogi",
                              "peer", label=label, params={"program": program, "mode": mode,
                                                           "kernel": 2, "root": root})
                try:
                    runs = [mod.run_bfs(program, bel, root, mode)[0]
                            for _ in range(run.repeat + 1)]
                except Exception as e:
                    run.error(row, e, f"EMOGI {program}")
                    continue
                times = [ms for _r, _i, ms in runs[1:]]
                row.update(first_call_ms=runs[0][2], times_ms=times, repeats=len(times),
                           ms=median(times))
                nbytes = reached * item
                row["params"].update(bytes=nbytes, gb_s=nbytes / (row["ms"] * 1e6))
                if copy_gb_s:
                    row["params"]["fraction_of_memcpy"] = row["params"]["gb_s"] / copy_gb_s
                got = {i for _r, i, _ms in runs}
                run.check(row, {"against": "our bfs levels + 1", "metric": "iterations",
                                "value": sorted(got), "reference": levels,
                                "ok": got == {levels}}, f"EMOGI {program} on {graph}")
                run.log(f"bfs EMOGI {program} {mode_name} on {graph}: {row['ms']:.2f} ms, "
                        f"{row['params']['gb_s']:.1f} GB/s")


def _budget_case(run, graph, g, source):
    """Case ``budget``: the device budget set to what is in use plus half the edge arrays'
    bytes (the edges are 2x the headroom; graphs with edges of 2 x MIN_HEADROOM or more), ``g.to("auto")`` must place the edges on the host,
    ``g.to("device")`` must be refused with a MemoryError, and bfs / pagerank there must give
    the device placement's results."""
    from onyx_rapids import bfs, pagerank

    want = {"bfs": column(bfs(g, source=source), "distance"),
            "pagerank": column(pagerank(g, weight=False), "pagerank")}
    used = int(device.xp.get_default_memory_pool().used_bytes()) if device.BACKEND == "gpu" \
        else 0
    headroom = g.edge_bytes() // 2
    if headroom < MIN_HEADROOM:  # the traversal's fixed work space alone is tens of MB
        for name in ("bfs", "pagerank"):
            run.row(graph, name, "budget", "auto under budget", "ours", "ours",
                    status=f"n/a: edge arrays under {2 * MIN_HEADROOM // 2**20} MiB")
        return
    facts = {"budget": used + headroom, "headroom": headroom, "edge_bytes": g.edge_bytes(),
             "edges_over_headroom": g.edge_bytes() / headroom}
    before = memory.device_budget()  # an ONYX_RAPIDS_DEVICE_BUDGET of the run comes back after
    memory.set_device_budget(used + headroom)
    try:
        placed = g.to("auto")
        facts["auto_placement"] = placed.placement
        try:
            g.to("host").to("device")
            facts["to_device"] = "allowed (should have been refused)"
        except MemoryError as e:
            facts["to_device"] = f"refused: {e}"[:200]
        for name, call in (("bfs", lambda: bfs(placed, source=source)),
                           ("pagerank", lambda: pagerank(placed, weight=False))):
            row = run.row(graph, name, "budget", "auto under budget", "ours", "ours",
                          params=dict(facts))
            out = run.timed(row, call)
            if out is None:
                continue
            metric, tol = METRIC[name]
            value = column(out, "distance" if name == "bfs" else "pagerank")
            record = compare(metric, value, want[name], against="the device placement",
                             tol=tol)
            record["ok"] = bool(record["ok"]) and placed.placement == "host" \
                and facts["to_device"].startswith("refused")
            record.update(auto_placement=placed.placement)
            run.check(row, record, f"{name} under the budget on {graph}")
            run.log(f"{name} under a budget of {memory.format_bytes(used + headroom)} "
                    f"(edges {memory.format_bytes(g.edge_bytes())}): placement "
                    f"{placed.placement}, {row['ms']:.2f} ms")
        del placed
    finally:
        memory.set_device_budget(before)
        free_memory()
