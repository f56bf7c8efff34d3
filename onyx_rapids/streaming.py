"""Streaming a host-placed graph's in-edges through device memory, for the pulls that read
every edge.

Zero-copy (EMOGI) reads only the edges a kernel asks for, which is what a traversal wants; an
iteration that pulls over every vertex reads every in-edge, and reading them zero-copy with
the access of a pull (a few edges per vertex, scattered over the rows) reached a fraction of
the pinned-memcpy bandwidth, against the copy engines' full bandwidth for a plain
``cudaMemcpyAsync`` (``docs/performance.md``).  So a generated pull kernel over every vertex
(``all_active``; a bulk PageRank, personalized PageRank, label or feature propagation
iteration, APPNP) on a graph placed on the host runs **streamed**:

* the CSC is cut into partitions of whole destination vertices of about
  :data:`PARTITION_BYTES` of source ids (and edge ids, where an edge function reads them);
* the first partitions stay **resident** in device memory for the call, as many as fit in
  :data:`RESIDENT_FRACTION` of the device memory the library may still allocate
  (:func:`onyx_rapids.memory.device_available`, so under the budget), together with two
  staging buffers for the rest; the resident ones run as one launch;
* every other partition is copied into a staging buffer with ``cudaMemcpyAsync`` on a copy
  stream while the kernels run the partition before it (events order the two streams), and
  the kernels visit only that partition's vertices (the generated kernel's ``first_vertex``)
  reading its edges from the buffer;
* successive launches walk the staged partitions in alternate directions, so a launch starts
  with the two partitions the last one left in the buffers, uncopied.

The fused kernels (PageRank's, APPNP's), which run every iteration in one launch and cannot
take partitions, read a **whole copy** of the CSC (and of the CSC-order weights) made once per
call (:func:`whole`) where it fits in that room; where it does not, those algorithms take the
streamed generated pull instead.  The generated pulls sum in the order they do on the device
placement; the fused kernel on a copy leaves out the device's gather order (the results agree
within the contract's tolerance: ``tests/test_streaming.py``).  Device
memory for the resident edges and the buffers is held for one algorithm call (the registry's
wrapper opens a :func:`session`) and given back when it returns; operators called outside an
algorithm keep it on the graph until :func:`release` (or ``g.clear_cache()``).  When not even
the two buffers fit, the pulls read the edges zero-copy as before.  Pulls over some vertices
(a frontier), traversals, pushes and kernels given an explicit ``edge_access`` read host edges
zero-copy; ``STREAM = False`` makes every pull do so (the ablation).

>>> import numpy as np, onyx_rapids as onyx
>>> g = onyx.Graph.from_csr(np.array([0, 1, 3, 3]), np.array([1, 0, 2]), placement="host")
>>> before = COUNTERS["bytes_copied"]
>>> ranks = onyx.pagerank(g)        # the fused kernel reads a copy of the CSC made for the call
>>> COUNTERS["bytes_copied"] - before    # its three int32 source ids
12
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from . import device, memory

__all__ = ["STREAM", "PARTITION_BYTES", "RESIDENT_FRACTION", "RESIDENT_LIMIT", "COUNTERS",
           "applies",
           "preferred", "stream_for", "session", "release", "EdgeStream"]

#: Stream the in-edges of host-placed graphs for pulls over every vertex (False: zero-copy).
STREAM = True
#: Source-id (and edge-id) bytes per streamed partition.
PARTITION_BYTES = 64 << 20
#: The resident edges and the two staging buffers take at most this fraction of the device
#: memory the library may still allocate when the call's first streamed pull runs.
RESIDENT_FRACTION = 0.5
#: At most this many bytes of in-edges stay resident (None: as many as fit, above); 0 copies
#: every partition every launch (the benchmarks' streaming rows set it).
RESIDENT_LIMIT = None
#: Running totals: streamed launches, partitions launched (the resident ones count as one),
#: bytes copied to the device by streaming.
COUNTERS = {"launches": 0, "partitions": 0, "bytes_copied": 0}

_KEY = ("streaming", "streams")


def applies(g, *, direction: str, has_edges: bool, all_active: bool, edge_access) -> bool:
    """Whether a generated kernel with these traits on ``g`` runs streamed (see the module
    doc); a CUDA-graph capture in progress never streams."""
    return (edge_access is None and direction == "pull" and has_edges and all_active
            and _host_edges(g))


def preferred(g) -> bool:
    """Whether pulls over every vertex of ``g`` would stream its in-edges: it is placed on the
    host, :data:`STREAM` is on, and two buffers of its largest in-degree's source ids fit in
    :data:`RESIDENT_FRACTION` of the device memory the library may allocate now (the fused
    kernels, which would read the edges zero-copy, step aside by default)."""
    if not _host_edges(g):
        return False
    widest = int(g.cached(("streaming", "max in-degree"),
                          lambda: int(device.xp.diff(g.in_offsets).max())))
    need = 2 * widest * np.dtype(g.in_indices.dtype).itemsize
    return need <= memory.device_available() * RESIDENT_FRACTION


def _host_edges(g) -> bool:
    """Streaming is on and ``g`` has edges placed on the host, outside a CUDA-graph capture."""
    return (STREAM and getattr(g, "placement", "device") == "host" and g.m > 0
            and not _capturing())


def _capturing() -> bool:
    return device.BACKEND == "gpu" and device.xp.cuda.get_current_stream().ptr != 0


def stream_for(g, with_ids: bool):
    """The graph's :class:`EdgeStream` for pulls that read (or not) the edge ids, built on
    first use in this session; None when its buffers do not fit the device (zero-copy)."""
    streams = g.cached(_KEY, dict)
    if with_ids not in streams:
        try:
            streams[with_ids] = EdgeStream(g, with_ids)
        except _NoRoom:
            streams[with_ids] = None
        _hold(g)
    return streams[with_ids]


def whole_fits(g, nbytes: int) -> bool:
    """Whether ``nbytes`` of ``g``'s edge arrays would be copied whole to the device for a
    call (:func:`whole`): ``g`` is placed on the host, :data:`STREAM` is on and they fit in
    :data:`RESIDENT_FRACTION` of the device memory the library may allocate (and
    :data:`RESIDENT_LIMIT`)."""
    return _host_edges(g) and nbytes <= _room()


def whole(g, arrays):
    """Device copies of ``arrays`` (edge arrays of the host-placed ``g``, read by a fused
    kernel that cannot take partitions) held for the session, when they fit
    (:func:`whole_fits`); None otherwise, and the kernel reads them zero-copy."""
    if not whole_fits(g, 0):
        return None
    streams = g.cached(_KEY, dict)
    key = ("whole",) + tuple(id(a) for a in arrays)
    if key not in streams:
        nbytes = sum(int(a.nbytes) for a in arrays)
        streams[key] = None
        if nbytes <= _room():
            with memory.allocating("the in-edges of a host-placed graph, copied for this call",
                                   nbytes):
                streams[key] = _Whole(tuple(device.xp.empty(a.shape, a.dtype)
                                            for a in arrays))
            for dst, src in zip(streams[key].arrays, arrays):
                _copy_whole(dst, src)
        _hold(g)
    return None if streams[key] is None else streams[key].arrays


class _Whole:
    def __init__(self, arrays):
        self.arrays = arrays

    def close(self):
        self.arrays = ()


def _room(limited: bool = True) -> int:
    """:data:`RESIDENT_FRACTION` of the device memory the library may allocate now; at most
    :data:`RESIDENT_LIMIT` when ``limited`` (the bound on resident edges, not on buffers)."""
    room = int(memory.device_available() * RESIDENT_FRACTION)
    return room if not limited or RESIDENT_LIMIT is None else min(room, RESIDENT_LIMIT)


def _copy_whole(dst, src, count=None):
    """``dst[:count] = src[:count]`` by ``cudaMemcpy`` (the copy engines, at the PCIe bandwidth)
    on a GPU; counted in :data:`COUNTERS`."""
    count = src.shape[0] if count is None else count
    nbytes = count * np.dtype(src.dtype).itemsize
    if device.BACKEND == "gpu":
        dst.data.copy_from_device(src.data, nbytes)
    else:
        dst[:count] = src[:count]
    COUNTERS["bytes_copied"] += nbytes


def _hold(g) -> None:
    if _session["depth"]:
        _session["graphs"][id(g)] = g  # given back when the session ends


def release(g) -> None:
    """Give back the device memory of ``g``'s streamed edges (the next streamed pull copies
    them again)."""
    cached = getattr(g, "cached", None)
    if cached is None:
        return
    streams = cached(_KEY, dict)
    for stream in streams.values():
        if stream is not None:
            stream.close()
    streams.clear()


_session = {"depth": 0, "graphs": {}}


@contextlib.contextmanager
def session():
    """Give back, when the block (an algorithm call) ends, the streamed edges of every graph
    that streamed in it (the one it was given, or a view derived from it); nested sessions (an
    algorithm calling another) give them back at the outer end."""
    _session["depth"] += 1
    try:
        yield
    finally:
        _session["depth"] -= 1
        if _session["depth"] == 0:
            graphs = list(_session["graphs"].values())
            _session["graphs"].clear()
            for held in graphs:
                release(held)


class _NoRoom(Exception):
    pass


@dataclasses.dataclass
class _Slot:
    arrays: tuple  # a staging buffer per streamed array (source ids, and edge ids)
    holds: int = -1  # the partition it holds (-1: none)
    ready: object = None  # event: its copy is done (GPU)
    freed: object = None  # event: the kernels that read it are done (GPU)


class EdgeStream:
    """A host-placed graph's CSC in partitions, the resident ones on the device, the others
    copied through two staging buffers (see the module doc).  :meth:`windows` yields each
    partition's vertex range and its edge arrays as the kernels should index them."""

    def __init__(self, g, with_ids: bool):
        xp = device.xp
        self.m = int(g.m)
        self.sources = (g.in_indices,) + ((g.in_edge_ids,) if with_ids else ())
        per_edge = sum(np.dtype(a.dtype).itemsize for a in self.sources)
        self.offsets = g.cached(("streaming", "host offsets"),
                                lambda: device.to_host(g.in_offsets).astype(np.int64))
        room = _room(limited=False)
        resident_room = min(room, RESIDENT_LIMIT if RESIDENT_LIMIT is not None else room)
        # partitions small enough that the two buffers take at most half the room
        per = max(1, min(PARTITION_BYTES, room // 4) // per_edge)
        from .construction.layout import row_blocks

        parts = [(v0, v1, int(self.offsets[v0]), int(self.offsets[v1]))
                 for v0, v1 in row_blocks(self.offsets, per)]
        if self.m * per_edge <= resident_room:
            resident = len(parts)
            staging = 0
        else:
            widest = max(e1 - e0 for _, _, e0, e1 in parts)
            staging = 2 * widest * per_edge
            if staging > room:
                raise _NoRoom
            resident, total = 0, staging
            while resident < len(parts):
                size = (parts[resident][3] - parts[resident][2]) * per_edge
                if total + size > room or total - staging + size > resident_room:
                    break
                total += size
                resident += 1
        # the resident partitions are a prefix: one array of their edges, one launch
        self.resident_hi = parts[resident - 1][1] if resident else 0
        resident_edges = parts[resident - 1][3] if resident else 0
        self.parts = parts[resident:]
        nbytes = resident_edges * per_edge + staging
        with memory.allocating(f"the streamed in-edges of a host-placed graph "
                               f"({resident} resident partitions, 2 staging buffers)", nbytes):
            self.resident = tuple(xp.empty(resident_edges, a.dtype) for a in self.sources)
            slots = []
            if self.parts:
                widest = max(e1 - e0 for _, _, e0, e1 in self.parts)
                slots = [_Slot(tuple(xp.empty(widest, a.dtype) for a in self.sources))
                         for _ in range(2)]
        self.slots = slots
        self.gpu = device.BACKEND == "gpu"
        if self.gpu and self.slots:
            self.copy_stream = xp.cuda.Stream(non_blocking=True)
            for slot in self.slots:
                slot.ready = xp.cuda.Event(disable_timing=True)
                slot.freed = xp.cuda.Event(disable_timing=True)
            # the pool hands out memory freed on the compute stream, where work queued before
            # may still write it: the copies start after that work
            allocated = xp.cuda.Event(disable_timing=True)
            allocated.record(xp.cuda.get_current_stream())
            self.copy_stream.wait_event(allocated)
        for dst, src in zip(self.resident, self.sources):
            if resident_edges:
                _copy_whole(dst, src, resident_edges)
        self.forward = True
        self.views = {}  # (buffer pointer, first edge) -> the window a kernel is given
        self.resident_bytes = resident_edges * per_edge
        self.staging_bytes = staging

    def close(self):
        if self.gpu and self.slots:
            self.copy_stream.synchronize()
        self.resident, self.slots = (), []

    # -- the arrays a kernel indexes ---------------------------------------------------------

    def _window(self, buffer, first_edge: int, end_edge: int):
        """``buffer`` as an array of m edges whose entry ``first_edge`` is the buffer's first:
        the kernels index a partition's edges by their positions in the whole CSC."""
        if not self.gpu:  # under the simulator a full-length copy, invalid ids elsewhere
            out = np.full(self.m, np.iinfo(buffer.dtype).max, dtype=buffer.dtype)
            out[first_edge:end_edge] = buffer[:end_edge - first_edge]
            return out
        key = (int(buffer.data.ptr), first_edge)
        view = self.views.get(key)
        if view is not None:
            return view
        from numba import cuda

        item = np.dtype(buffer.dtype).itemsize
        face = {"shape": (self.m,), "typestr": np.dtype(buffer.dtype).str, "version": 3,
                "strides": None, "data": (int(buffer.data.ptr) - first_edge * item, False)}
        view = self.views[key] = cuda.from_cuda_array_interface(face, owner=None, sync=False)
        return view

    def _copy(self, slot: _Slot, index: int):
        """Copy partition ``index`` into ``slot`` (after the kernels that read it are done)."""
        _, _, e0, e1 = self.parts[index]
        slot.holds = index
        for dst, src in zip(slot.arrays, self.sources):
            nbytes = (e1 - e0) * np.dtype(src.dtype).itemsize
            COUNTERS["bytes_copied"] += nbytes
            if not self.gpu:
                dst[:e1 - e0] = src[e0:e1]
                continue
            self.copy_stream.wait_event(slot.freed)
            dst.data.copy_from_device_async(src.data + e0 * src.itemsize, nbytes,
                                            self.copy_stream)
        if self.gpu:
            slot.ready.record(self.copy_stream)

    def _schedule(self):
        """(partition, slot, copy?) in this launch's order: the staged partitions forwards or
        backwards (alternately), each in the slot that holds it, else the slot the partition
        before last used."""
        order = list(range(len(self.parts)))
        if not self.forward:
            order.reverse()
        self.forward = not self.forward
        holds = [slot.holds for slot in self.slots]  # as the plan leaves them
        plan, previous = [], None
        for j, index in enumerate(order):
            copy = index not in holds
            if not copy:
                slot = holds.index(index)
            elif previous is not None:
                slot = 1 - previous
            else:  # the first: spare a slot holding a partition still to come
                later = set(order[j + 1:])
                slot = 1 if holds[0] in later and holds[1] not in later else 0
            holds[slot] = index
            plan.append((index, slot, copy))
            previous = slot
        return plan

    def windows(self):
        """Yield ``(first_vertex, end_vertex, arrays)`` for each partition, ``arrays`` the
        streamed arrays (source ids, and edge ids) as windows; launch its kernels on the
        current stream before asking for the next."""
        COUNTERS["launches"] += 1
        plan = self._schedule()
        copies = [j for j, (_, _, copy) in enumerate(plan) if copy]
        issued = 0

        def issue(limit):  # the copies of the plan's entries before ``limit``
            nonlocal issued
            while issued < len(copies) and copies[issued] < limit:
                index, slot, _ = plan[copies[issued]]
                self._copy(self.slots[slot], index)
                issued += 1

        issue(2)  # the two buffers fill while the resident partitions run
        if self.resident_hi:
            COUNTERS["partitions"] += 1
            yield 0, self.resident_hi, tuple(a if self.gpu else self._window(a, 0, a.shape[0])
                                             for a in self.resident)
        compute = device.xp.cuda.get_current_stream() if self.gpu else None
        for j, (index, s, copy) in enumerate(plan):
            slot = self.slots[s]
            if copy and self.gpu:
                compute.wait_event(slot.ready)
            v0, v1, e0, e1 = self.parts[index]
            COUNTERS["partitions"] += 1
            yield v0, v1, tuple(self._window(a, e0, e1) for a in slot.arrays)
            if self.gpu:
                slot.freed.record(compute)
            issue(j + 3)  # the entry after next reuses this slot
