"""Fused PageRank: every bulk pull iteration in one persistent (cooperative) kernel.

Iteration ``i`` reads ``ys[(i - 1) % 2]`` (``y = rank / outw``, 0 on dangling vertices, so an
edge costs one gather, and one weight read on a weighted graph) and ``ranks[(i - 1) % 2]``, and
writes both rows ``i % 2``::

    rank_i(v) = alpha * (sum_{u -> v} y_{i-1}(u) w(u, v) + D_{i-1} t(v)) + (1 - alpha) t(v)

with ``outw`` the out-degree (unweighted) or the out-weight sum, and ``t`` uniform (1/n,
PageRank), one-hot at a source (personalized PageRank, k = 1) or a given distribution (cuGraph's
``personalization``).  The weighted kernel reads ``w`` in CSC order (:func:`in_weights`); the
two kernels are one body specialized by its gather (:func:`kernel`).

Each thread adds up its vertices' L1 change and the new dangling mass ``D_i``; one atomic per warp
lands them in ``stats[i % 3]``, a grid-wide barrier follows, and every thread reads the same
totals, so all stop at the same iteration once the change is below ``tol`` (as cuGraph).  With
``switch_edges >= 0`` (``change_driven="auto"``) they also add up the out-edges of the vertices
that moved by more than ``threshold`` and stop once those are at most ``switch_edges``: the run
goes on change-driven.  Slot
``(i + 1) % 3`` is cleared during iteration ``i``: it was last read before the previous
barrier and is next written after this one.

Load balance (SIMD-X's small/medium/large worklists, fixed for the graph): the vertices are
grouped by in-degree (:func:`pull_work`); bin ``b`` gives each vertex ``bin_units[b]`` lanes (1
to 32, about 16 or 8 edges each as the in-degree distribution says, :func:`lane_edges`; in bin
0 a lane takes two vertices at once, so that their chains of dependent loads overlap; measured
in benchmarks/NOTES.md), and a vertex with ``HEAVY`` or more in-edges is cut into chunks of
``CHUNK`` edges, one warp each.  A chunk's warp adds its sum to ``hacc`` with an atomic;
the warp that finishes a vertex's last chunk (a counter per heavy vertex, after a fence) takes
the whole sum and settles the vertex, so no second barrier is needed.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32, float64, uint32

from .. import device, memory
from .collective import warp_sum
from .disk_cache import persist

WARP = 32
FULL = uint32(0xFFFFFFFF)
PER_LANE = None  # light vertices: about this many in-edges per lane; None: from the graph
# (:func:`lane_edges`: 16, or 8 where PAIRED_SHARE says; the sweep behind it is in
# docs/performance.md, "Measurements behind the library's constants").
PAIRED_SHARE = 0.25  # 8 edges a lane once this share of the light in-edges sits on vertices of
# in-degree 9..16 (bin 0's paired lanes would chain 2 x 16 dependent loads); the shares of the
# measured graphs: docs/performance.md
HOST_PER_LANE = 1  # host-placed edges (read zero-copy over PCIe): a lane per in-edge, so a
# vertex's lanes read its edges in coalesced runs (fewer edges a lane was faster on every graph
# measured: docs/performance.md)
HEAVY = 1024  # in-degree from which a vertex's edges are cut into chunks
CHUNK = 256  # edges of one chunk (one warp)
# register cap per thread (0: none).  No cap was best or close everywhere; a cap of 64 spilled
# to local memory, which cost the weighted gather most (docs/performance.md).
MAX_REGISTERS = 0


UNIFORM, VECTOR, APPNP = -1, -2, -3  # ``source`` codes besides a vertex: t = 1/n, t =
# teleport[v]; APPNP: feature propagation's step at k = 1 (see :func:`_settle`)


@cuda.jit(device=True)
def _settle(v, total, cur, nxt, ranks, ys, inv_out, alpha, dangling, uniform, source, teleport,
            out_offsets, threshold, watch, slots, permuted):
    """Store v's new rank and share; return (its L1 change, its dangling mass, its out-edges
    if ``watch`` and it moved by more than ``threshold``, else 0).  ``source == APPNP``: the
    APPNP step instead, ``h = alpha s (total + y(v)) + (1 - alpha) x(v)``, ``y = s h``, with
    ``s = inv_out[v]`` (1 / sqrt of the degree with the self-loop) and ``x = teleport``.
    ``permuted``: ``ys`` is in the gather order, v's share at ``slots[v]``."""
    y = slots[v] if permuted else v
    if source == APPNP:
        s = inv_out[v]
        new = float32(alpha * float64(s) * (total + float64(ys[cur, y]))
                      + (1.0 - alpha) * float64(teleport[v]))
        ranks[nxt, v] = new
        ys[nxt, y] = new * s
        return abs(float64(new) - float64(ranks[cur, v])), 0.0, 0.0
    if source == UNIFORM:  # v's teleport share
        t = uniform
    elif source == VECTOR:
        t = float64(teleport[v])
    else:
        t = 1.0 if v == source else 0.0
    new = float32(alpha * (total + dangling * t) + (1.0 - alpha) * t)
    ranks[nxt, v] = new
    w = inv_out[v]
    ys[nxt, y] = new * w
    change = abs(float64(new) - float64(ranks[cur, v]))
    edges = 0.0
    if watch and change > threshold:
        edges = float64(out_offsets[v + 1] - out_offsets[v])
    return change, (float64(new) if w == 0 else 0.0), edges


@cuda.jit(device=True)
def _share(ys, cur, indices, weights, p):
    """What in-edge ``p`` brings: its source's share."""
    return ys[cur, indices[p]]


@cuda.jit(device=True)
def _weighted_share(ys, cur, indices, weights, p):
    """What in-edge ``p`` brings on a weighted graph: its source's share times its weight."""
    return ys[cur, indices[p]] * weights[p]


_KERNELS = {}


def kernel(weighted: bool):
    """The fused kernel for unweighted or weighted graphs (compiled once each)."""
    if weighted not in _KERNELS:
        _KERNELS[weighted] = _make(_weighted_share if weighted else _share)
    return _KERNELS[weighted]


def _make(gather):
    # MAX_REGISTERS: see its comment; the simulator takes no register limit
    @persist
    @cuda.jit(**({} if device.is_simulator() or not MAX_REGISTERS
                 else {"max_registers": MAX_REGISTERS}))
    def pagerank_fused(offsets, indices, weights, order, bin_start, bin_units, chunk_start,
                       chunk_slot, slot_vertex, slot_chunks, hacc, hcount, inv_out, ranks, ys,
                       stats, alpha, uniform, source, teleport, dangling, tol, max_iter, chunk,
                       chunks, out_offsets, threshold, switch_edges, slots, permuted, out):
        """``out`` gets (iterations, converged, switched); the result is
        ``ranks[iterations % 2]``.  The
        first ``chunks`` entries of ``chunk_start``/``chunk_slot`` are the heavy vertices'
        chunks.  ``weights``: the in-edges' weights in CSC order (read only by the weighted
        gather).  ``source`` >= 0 personalizes the teleport vector to that vertex (``t =
        e_source``; the dangling mass returns to it), UNIFORM keeps it uniform (``t = uniform =
        1/n``), VECTOR reads it from ``teleport``.  ``switch_edges >= 0``: stop (switched)
        once the vertices that moved by more than ``threshold`` own at most that many out-edges
        (``out_offsets``: the CSR offsets).  ``permuted``: ``ys`` and the gathered ``indices``
        are in the gather order (:func:`gather_order`), v's share at ``slots[v]``."""
        grid = cuda.cg.this_grid()
        tid = cuda.grid(1)
        threads = cuda.gridsize(1)
        lane = cuda.threadIdx.x % WARP
        warp = tid // WARP
        warps = threads // WARP
        it = 0
        converged = 0
        switched = 0
        watch = switch_edges >= 0
        while it < max_iter:
            it += 1
            cur = (it - 1) % 2
            nxt = it % 2
            if tid == 0:
                stats[(it + 1) % 3, 0] = 0.0
                stats[(it + 1) % 3, 1] = 0.0
                stats[(it + 1) % 3, 2] = 0.0
            change = 0.0
            mass = 0.0
            moved = 0.0
            # heavy vertices: a warp per chunk; the last chunk's warp settles the vertex
            for c in range(warp, chunks, warps):
                h = chunk_slot[c]
                v = slot_vertex[h]
                s = float32(0.0)
                for p in range(chunk_start[c] + lane,
                               min(chunk_start[c] + chunk, offsets[v + 1]), WARP):
                    s += gather(ys, cur, indices, weights, p)
                s = warp_sum(s)
                if lane == 0:
                    cuda.atomic.add(hacc, h, float64(s))
                    cuda.threadfence()
                    if cuda.atomic.add(hcount, h, 1) == slot_chunks[h] - 1:
                        total = cuda.atomic.add(hacc, h, 0.0)  # the whole sum; reset
                        hacc[h] = 0.0
                        hcount[h] = 0
                        dc, dm, de = _settle(v, total, cur, nxt, ranks, ys, inv_out, alpha,
                                             dangling, uniform, source, teleport, out_offsets,
                                             threshold, watch, slots, permuted)
                        change += dc
                        mass += dm
                        moved += de
            # bin 0, a lane per vertex: two vertices a lane at once, so that their chains of
            # dependent loads (order -> offsets -> indices -> ys) overlap
            hi = bin_start[1]
            for first in range(warp * 2 * WARP, hi, warps * 2 * WARP):
                i0 = first + lane
                i1 = i0 + WARP
                v0 = v1 = 0
                b0 = e0 = b1 = e1 = offsets[0]
                if i0 < hi:
                    v0 = order[i0]
                    b0 = offsets[v0]
                    e0 = offsets[v0 + 1]
                if i1 < hi:
                    v1 = order[i1]
                    b1 = offsets[v1]
                    e1 = offsets[v1 + 1]
                s0 = float32(0.0)
                s1 = float32(0.0)
                for q in range(max(e0 - b0, e1 - b1)):
                    if b0 + q < e0:
                        s0 += gather(ys, cur, indices, weights, b0 + q)
                    if b1 + q < e1:
                        s1 += gather(ys, cur, indices, weights, b1 + q)
                if i0 < hi:
                    dc, dm, de = _settle(v0, s0, cur, nxt, ranks, ys, inv_out, alpha,
                                         dangling, uniform, source, teleport, out_offsets,
                                         threshold, watch, slots, permuted)
                    change += dc
                    mass += dm
                    moved += de
                if i1 < hi:
                    dc, dm, de = _settle(v1, s1, cur, nxt, ranks, ys, inv_out, alpha,
                                         dangling, uniform, source, teleport, out_offsets,
                                         threshold, watch, slots, permuted)
                    change += dc
                    mass += dm
                    moved += de
            # the other light bins: bin b gives each vertex `units` lanes, 32 // units a warp
            for b in range(1, bin_units.shape[0]):
                units = bin_units[b]
                per_warp = WARP // units
                hi = bin_start[b + 1]
                gi = lane % units
                for first in range(bin_start[b] + warp * per_warp, hi, warps * per_warp):
                    i = first + lane // units
                    s = float32(0.0)
                    if i < hi:
                        v = order[i]
                        for p in range(offsets[v] + gi, offsets[v + 1], units):
                            s += gather(ys, cur, indices, weights, p)
                    d = 1
                    while d < units:  # the vertex's lanes add up their sums
                        s += cuda.shfl_xor_sync(FULL, s, d)
                        d *= 2
                    if i < hi and gi == 0:
                        dc, dm, de = _settle(order[i], s, cur, nxt, ranks, ys, inv_out,
                                             alpha, dangling, uniform, source, teleport,
                                             out_offsets, threshold, watch, slots, permuted)
                        change += dc
                        mass += dm
                        moved += de
            change = warp_sum(change)
            mass = warp_sum(mass)
            if watch:
                moved = warp_sum(moved)
            if lane == 0:
                cuda.atomic.add(stats, (it % 3, 0), change)
                cuda.atomic.add(stats, (it % 3, 1), mass)
                if watch:
                    cuda.atomic.add(stats, (it % 3, 2), moved)
            grid.sync()
            dangling = stats[it % 3, 1]
            if stats[it % 3, 0] < tol:
                converged = 1
                break
            if watch and stats[it % 3, 2] <= switch_edges:
                switched = 1
                break
        if tid == 0:
            out[0] = it
            out[1] = converged
            out[2] = switched
    return pagerank_fused


def run(g, work, inv_out, in_weights, ranks, ys, *, alpha, source, teleport, dangling, tol,
        max_iter, threshold, switch_edges, block_size=None, weighted=False, order=None,
        indices=None):
    """Launch the fused kernel on ``g``'s in-edges (``work``: :func:`pull_work`) from row 0 of
    ``ranks`` / ``ys``; returns (iterations, converged, switched).  The rows of the last
    iteration are ``ranks[iterations % 2]``.  ``order``: :func:`gather_order`'s, with ``ys``
    in that order (v's share at ``slots[v]``) and ``in_weights`` reordered by its positions.
    ``indices``: a copy of ``g.in_indices`` to read instead (a host-placed graph's, on the
    device for the call: :func:`onyx_rapids.streaming.whole`)."""
    from .. import operators as ops

    xp = device.xp
    heavy = max(1, work["heavy"])
    out = xp.zeros(3, dtype=np.int64)
    slots, indices = order[:2] if order is not None else (
        device.zeros(1, np.int32), g.in_indices if indices is None else indices)
    call = (g.in_offsets, indices, in_weights, work["order"], work["bin_start"],
            work["bin_units"], work["chunk_start"], work["chunk_slot"], work["slot_vertex"],
            work["slot_chunks"], xp.zeros(heavy, dtype=np.float64),
            xp.zeros(heavy, dtype=np.int32), inv_out, ranks, ys,
            xp.zeros((3, 3), dtype=np.float64), np.float64(alpha), np.float64(1.0 / g.n),
            np.int64(source), xp.ascontiguousarray(teleport), np.float64(dangling),
            np.float64(tol), np.int64(max_iter), np.int64(work["chunk"]),
            np.int64(work["chunks"]), g.out_offsets, np.float64(threshold),
            np.float64(switch_edges), slots, np.bool_(order is not None), out)
    fused = kernel(weighted=weighted)
    block = device.block_threads(block_size, 256)
    grid = 1
    if not device.is_simulator():
        grid = min(device.multiprocessor_count() * (2048 // block),
                   device.cooperative_blocks(fused, call, block))
    ops.launch_kernel("fused pagerank", fused, grid, block, *call)
    return tuple(int(x) for x in device.to_host(out))


#: Gather the shares in degree order (:func:`gather_order`) on graphs where the vertices of
#: at least 4x the mean out-degree are the sources of at least this share of the edges; None:
#: never.  The order paid on the R-MAT graphs whose hubs source more than half the edges and
#: was mixed on the flatter a = 0.45, hence 0.5 (the shares and timings: docs/performance.md).
GATHER_ORDER_SHARE = 0.5


def gather_order(g):
    """(slots, indices, positions): the shares ``ys`` stored in descending out-degree order
    (``slots[v]``: v's position) and each vertex's in-edges renumbered alike and sorted by it
    (``indices``; ``positions``: the CSC positions they came from, to reorder the weights), so
    the shares most edges gather (the hubs') share cache lines and a vertex's lanes read
    neighbouring ones; None where the graph has no such hubs (:data:`GATHER_ORDER_SHARE`), is
    already in degree order or keeps its edges on the host.  Offsets, work lists and ranks
    keep the graph's numbering.  Costs a sort of the n degrees and one of the m in-edges, and
    m indices and positions, cached on the graph; None also where its int64 temporaries (four
    of m) do not fit in the device memory available."""

    def build():
        xp = device.xp
        if (GATHER_ORDER_SHARE is None or g.m == 0 or g.vertex_order == "degree"
                or g.placement == "host"
                or 4 * 8 * g.m > memory.device_available()):  # its int64 temporaries
            return None
        degree = g.out_degree.astype(np.int64)
        hot = degree >= 4 * g.m / g.n
        if int(degree[hot].sum()) < GATHER_ORDER_SHARE * g.m:
            return None
        slots = xp.empty(g.n, dtype=np.int64)
        slots[xp.argsort(-degree, kind="stable")] = xp.arange(g.n, dtype=np.int64)
        head = xp.repeat(xp.arange(g.n, dtype=np.int64), xp.diff(g.in_offsets).astype(np.int64))
        renumbered = slots[g.in_indices]
        positions = xp.argsort(head * g.n + renumbered)
        del head
        return (slots.astype(np.int32), renumbered[positions].astype(g.in_indices.dtype),
                positions)

    return g.cached(("pagerank", "gather order"), build)


def pull_work(g, per_lane: int | None = None, heavy: int | None = None,
              chunk: int | None = None, *, from_host: bool | None = None) -> dict:
    """The work lists of :func:`pagerank_fused` for ``g``'s in-edges, cached on the graph.

    ``order``: the vertices of in-degree below ``heavy`` grouped by bin (ascending ids within a
    bin), ``bin_start`` the bins' bounds in it, ``bin_units`` their lanes per vertex
    (``next_pow2(ceil(degree / per_lane))``, at most 32; ``per_lane`` None: HOST_PER_LANE for
    edges read from the host, else :func:`lane_edges` of the graph's in-degrees);
    ``slot_vertex`` the heavy vertices,
    ``slot_chunks`` their chunk counts, ``chunk_start``/``chunk_slot`` one entry per chunk.
    ``from_host``: whether the kernel reads the edges from host memory (default: where they
    are placed).
    """
    per_lane = PER_LANE if per_lane is None else per_lane
    from_host = g.placement == "host" if from_host is None else from_host
    if per_lane is None and from_host:  # (False: a host graph's edges copied to the device)
        per_lane = HOST_PER_LANE
    heavy, chunk = HEAVY if heavy is None else heavy, CHUNK if chunk is None else chunk
    if per_lane is None:
        per_lane = g.cached(("pagerank", "lane_edges", int(heavy)),
                            lambda: lane_edges(_in_degree(g), int(heavy)))
    return g.cached(("pagerank", "pull_work", int(per_lane), int(heavy), int(chunk)),
                    lambda: _pull_work(g, int(per_lane), int(heavy), int(chunk)))


def resident(g, in_weights=None):
    """``(work, indices, in_weights)`` for :func:`run` on ``g``: a host-placed graph's
    in-edges (and CSC-order weights, when given) copied to the device for the call where they
    fit (:func:`onyx_rapids.streaming.whole`), with the device's lanes per vertex; else the
    arrays where they are (``indices`` None: ``g.in_indices``)."""
    from .. import streaming

    copies = streaming.whole(g, (g.in_indices,) + (() if in_weights is None else (in_weights,)))
    if copies is None:
        return pull_work(g), None, in_weights
    return pull_work(g, from_host=False), copies[0], \
        (in_weights if in_weights is None else copies[1])


def lane_edges(degree: np.ndarray, heavy: int) -> int:
    """In-edges a lane takes in the fused kernel, from the in-degree distribution: 16, or 8
    when more than ``PAIRED_SHARE`` of the light vertices' in-edges sit on vertices of in-degree
    9..16 (with 16, bin 0 gives each of them a lane shared with a second vertex: a chain of up
    to 32 dependent loads, where 8 splits them over two lanes).

    >>> lane_edges(np.full(100, 16), 1024), lane_edges(np.r_[np.full(90, 2), 500, 900], 1024)
    (8, 16)
    """
    light = degree[degree < heavy]
    total = light.sum()
    paired = light[(light > 8) & (light <= 16)].sum()
    return 8 if total and paired > PAIRED_SHARE * total else 16


def _in_degree(g) -> np.ndarray:
    return device.to_host(device.xp.diff(g.in_offsets)).astype(np.int64)


def _pull_work(g, per_lane, heavy, chunk):
    degree = _in_degree(g)
    light = degree < heavy
    lanes = np.minimum(WARP, -(-degree // per_lane))
    bins = np.where(lanes <= 1, 0, np.ceil(np.log2(np.maximum(lanes, 1))).astype(np.int64))
    bins = np.where(light, bins, -1)
    order = np.flatnonzero(light)
    order = order[np.argsort(bins[order], kind="stable")]
    counts = np.bincount(bins[order], minlength=6)
    bin_start = np.concatenate(([0], np.cumsum(counts)))
    hv = np.flatnonzero(~light)
    slot_chunks = -(-degree[hv] // chunk)
    chunk_slot = np.repeat(np.arange(hv.size), slot_chunks)
    within = np.arange(chunk_slot.size) - np.repeat(np.cumsum(slot_chunks) - slot_chunks,
                                                    slot_chunks)
    first = device.to_host(g.in_offsets).astype(np.int64)[hv]
    chunk_start = np.repeat(first, slot_chunks) + within * chunk
    index = g.in_offsets.dtype
    work = dict(
        order=device.asarray(order.astype(np.int32)),
        bin_start=device.asarray(bin_start.astype(np.int64)),
        bin_units=device.asarray((1 << np.arange(6)).astype(np.int32)),
        slot_vertex=device.asarray(_padded(hv.astype(np.int32))),
        slot_chunks=device.asarray(_padded(slot_chunks.astype(np.int32))),
        chunk_start=device.asarray(_padded(chunk_start.astype(index))),
        chunk_slot=device.asarray(_padded(chunk_slot.astype(np.int32))),
        per_lane=int(per_lane),
        chunk=int(chunk),
        chunks=int(chunk_slot.size),
        heavy=int(hv.size),
    )
    return work


def _padded(a):
    """``a``, or one zero when empty (a kernel argument needs memory; the counts bound the loops)."""
    return a if a.size else np.zeros(1, a.dtype)
