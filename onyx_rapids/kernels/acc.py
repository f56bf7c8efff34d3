"""Kernels of SIMD-X's Active-Compute-Combine engine (see :mod:`onyx_rapids.acc`).

One iteration has two phases, written once as device functions and run either as separate
launches (the host decides between them) or inside one persistent cooperative kernel with
grid-wide barriers (``fused``):

* **compute**: *push* walks the out-edges of the worklist, whose vertices are classified by
  out-degree into a small (one thread per vertex), a medium (one warp) and a large (one block)
  list, and combines ``compute(u, v, e)`` into ``state[v]`` with atomics; *pull* walks the
  in-edges of every vertex that is not ``settled``, ``G`` lanes per vertex, takes the sources in
  the frontier bit-vector, and combines in registers (shuffles), atomic-free.  A vertex whose
  state improved is set in the next frontier bit-vector; the first thread to set it records it
  in its private bin (the *online* filter) while the bin has room (``threshold``).
* **filter**: the next worklists are built from the bins when none overflowed (each thread moves
  its bin, reserving space with one atomic per class), else by the *ballot* filter: every block
  scans a contiguous range of the next frontier with warp ballots, counts per class, and after a
  barrier writes its vertices at the offsets of the lower blocks, which gives sorted,
  duplicate-free worklists.  ``filter_mode`` forces either (online: a full bin spills straight
  into the worklists) or lets overflow decide per iteration (JIT).

Counters live in a ``(3, NC)`` int64 array, one row per iteration modulo 3: the row an
iteration fills is read at the start of the next and cleared one iteration later, so that no
thread clears a row another may still read.  Under the simulator a cooperative grid has one
block, which is what :func:`onyx_rapids.acc.acc` launches there.
"""

from __future__ import annotations

from numba import cuda, int64, uint32

from .. import device
from .collective import is_active
from .disk_cache import persist

FULL = 0xFFFFFFFF
# counter columns
C_OVERFLOW, C_SMALL, C_MEDIUM, C_LARGE, C_EDGES, NC = 0, 1, 2, 3, 4, 8
# filter and direction modes
JIT, ONLINE, BALLOT = 0, 1, 2
AUTO, PUSH, PULL = 0, 1, 2
# trace columns: one row per iteration
T_PULL, T_BALLOT, T_SIZE, T_EDGES, NT = 0, 1, 2, 3, 4


def build(compute, active, settled, combine: str, *, group: int, threshold: int,
          medium_degree: int, large_degree: int, block: int, track_parent: bool = False,
          align: int = 0, first_offer: bool = False):
    """The kernels for one (compute, active, settled, combine) and launch shape.

    ``track_parent``: an improving offer from u also writes ``parent[v] = u`` (push: after the
    atomic that improved v; pull: the u of the group's best offer).  ``align`` (a power of
    two, in edges; 0: none): warps and blocks start reading a vertex's edges at the multiple of
    ``align`` at or below its first edge, the lanes before it idle, so that every read request
    of the group starts on a 128-byte boundary (EMOGI's aligned access: over PCIe a request
    that straddles a boundary costs two).  ``first_offer``: every offer of one iteration is
    the same value (BFS levels), so a pulling lane stops reading a vertex's in-edges at its
    first offer (Beamer's bottom-up early exit, per lane)."""
    is_min = combine == "min"
    TRACK = bool(track_parent)
    G = int(group)
    TH = int(threshold)
    MED = int(medium_degree)
    LARGE = int(large_degree)
    WARPS = block // 32
    ALIGN = int(align)
    FIRST = bool(first_offer)

    @cuda.jit(device=True, inline=True)
    def first_read(start):
        """Where a group's reads of the edges from ``start`` on begin (see ``align``)."""
        if ALIGN > 0:
            return start - (start & (ALIGN - 1))
        return start

    @cuda.jit(device=True, inline=True)
    def degree_class(deg):
        if deg < MED:
            return 0
        if deg < LARGE:
            return 1
        return 2

    @cuda.jit(device=True, inline=True)
    def enqueue(v, out_off, qn, ctrn):
        deg = out_off[v + 1] - out_off[v]
        c = degree_class(deg)
        pos = cuda.atomic.add(ctrn, C_SMALL + c, 1)
        qn[c, pos] = v
        cuda.atomic.add(ctrn, C_EDGES, int64(deg))

    @cuda.jit(device=True, inline=True)
    def record(v, nb, tid, state, aux, nbits, bins, out_off, qn, ctrn, filter_mode):
        """v's state improved: if v is active now, set it in the next frontier, and the first
        setter bins it.  (An inactive improvement sets nothing, so that a later improvement of
        the same iteration that makes v active is still the first and gets binned.)"""
        if not active(v, state, aux):
            return nb
        bit = uint32(1) << uint32(v & 31)
        old = cuda.atomic.or_(nbits, v >> 5, bit)
        if (old & bit) == 0 and filter_mode != BALLOT:
            if nb < TH:
                bins[tid * TH + nb] = v
                nb += 1
            elif filter_mode == ONLINE:
                enqueue(v, out_off, qn, ctrn)
            else:
                ctrn[C_OVERFLOW] = 1
        return nb

    @cuda.jit(device=True, inline=True)
    def relax(u, v, e, nb, tid, state, aux, nbits, bins, out_off, qn, ctrn, filter_mode,
              parent):
        val = compute(u, v, e, state, aux)
        # Test before the atomic: a state only ever moves one way (down for min), so an offer
        # no better than a plain (possibly stale) read of it cannot win; most offers of a
        # traversal land on vertices already reached, and skip the atomic.
        if is_min:
            if val >= state[v]:
                return nb
            better = val < cuda.atomic.min(state, v, val)
        else:
            if val <= state[v]:
                return nb
            better = val > cuda.atomic.max(state, v, val)
        if better:
            if TRACK:
                parent[v] = u
            nb = record(v, nb, tid, state, aux, nbits, bins, out_off, qn, ctrn, filter_mode)
        return nb

    @cuda.jit(device=True)
    def push_phase(state, aux, out_off, out_idx, q, ctrc, nbits, bins, binc, qn, ctrn,
                   filter_mode, parent):
        tid = cuda.grid(1)
        nthreads = cuda.gridDim.x * cuda.blockDim.x
        nb = binc[tid]
        for i in range(tid, ctrc[C_SMALL], nthreads):  # small: a thread per vertex
            u = q[0, i]
            for e in range(out_off[u], out_off[u + 1]):
                nb = relax(u, out_idx[e], e, nb, tid, state, aux, nbits, bins, out_off, qn,
                           ctrn, filter_mode, parent)
        lane = cuda.laneid
        for i in range(tid // 32, ctrc[C_MEDIUM], nthreads // 32):  # medium: a warp
            u = q[1, i]
            start = out_off[u]
            for e in range(first_read(start) + lane, out_off[u + 1], 32):
                if e >= start:
                    nb = relax(u, out_idx[e], e, nb, tid, state, aux, nbits, bins, out_off, qn,
                               ctrn, filter_mode, parent)
        for i in range(cuda.blockIdx.x, ctrc[C_LARGE], cuda.gridDim.x):  # large: a block
            u = q[2, i]
            start = out_off[u]
            for e in range(first_read(start) + cuda.threadIdx.x, out_off[u + 1],
                           cuda.blockDim.x):
                if e >= start:
                    nb = relax(u, out_idx[e], e, nb, tid, state, aux, nbits, bins, out_off, qn,
                               ctrn, filter_mode, parent)
        binc[tid] = nb

    @cuda.jit(device=True)
    def pull_phase(n, state, aux, ident, in_off, in_idx, in_eid, fbits, nbits, bins, binc,
                   out_off, qn, ctrn, filter_mode, parent):
        tid = cuda.grid(1)
        nthreads = cuda.gridDim.x * cuda.blockDim.x
        nb = binc[tid]
        sub = tid & (G - 1)
        ngroups = nthreads // G
        # warp-uniform loop: every lane reaches the shuffles
        for vb in range(0, n, ngroups):
            v = vb + tid // G
            valid = v < n
            if valid:
                valid = not settled(v, state, aux)
            best = ident[0]
            bu = in_idx[0] if in_idx.shape[0] else 0
            if valid:
                start = in_off[v]
                for e in range(first_read(start) + sub, in_off[v + 1], G):
                    if e < start:
                        continue
                    u = in_idx[e]
                    if is_active(fbits, u) and active(u, state, aux):
                        val = compute(u, v, in_eid[e], state, aux)
                        if (is_min and val < best) or (not is_min and val > best):
                            best = val
                            bu = u
                        if FIRST:
                            break
            d = G // 2
            while d > 0:
                other = cuda.shfl_xor_sync(FULL, best, d)
                ou = cuda.shfl_xor_sync(FULL, bu, d)
                if (is_min and other < best) or (not is_min and other > best):
                    best = other
                    bu = ou
                d //= 2
            if valid and sub == 0:
                if (is_min and best < state[v]) or (not is_min and best > state[v]):
                    state[v] = best
                    if TRACK:
                        parent[v] = bu
                    nb = record(v, nb, tid, state, aux, nbits, bins, out_off, qn, ctrn,
                                filter_mode)
        binc[tid] = nb

    @cuda.jit(device=True)
    def gather_phase(bins, binc, out_off, qn, ctrn):
        """Online filter: every thread moves its bin into the worklists."""
        tid = cuda.grid(1)
        nb = binc[tid]
        if nb == 0:
            return
        c0 = 0
        c1 = 0
        edges = int64(0)
        for i in range(nb):
            v = bins[tid * TH + i]
            deg = out_off[v + 1] - out_off[v]
            edges += deg
            c = degree_class(deg)
            if c == 0:
                c0 += 1
            elif c == 1:
                c1 += 1
        c2 = nb - c0 - c1
        p0 = cuda.atomic.add(ctrn, C_SMALL, c0) if c0 else 0
        p1 = cuda.atomic.add(ctrn, C_MEDIUM, c1) if c1 else 0
        p2 = cuda.atomic.add(ctrn, C_LARGE, c2) if c2 else 0
        cuda.atomic.add(ctrn, C_EDGES, edges)
        for i in range(nb):
            v = bins[tid * TH + i]
            c = degree_class(out_off[v + 1] - out_off[v])
            if c == 0:
                qn[0, p0] = v
                p0 += 1
            elif c == 1:
                qn[1, p1] = v
                p1 += 1
            else:
                qn[2, p2] = v
                p2 += 1
        binc[tid] = 0

    @cuda.jit(device=True, inline=True)
    def block_range(n):
        per = (n + cuda.gridDim.x - 1) // cuda.gridDim.x
        per = ((per + cuda.blockDim.x - 1) // cuda.blockDim.x) * cuda.blockDim.x
        lo = min(n, cuda.blockIdx.x * per)
        return lo, min(n, lo + per)

    @cuda.jit(device=True, inline=True)
    def wanted(v, hi, bits, state, aux):
        if v >= hi:
            return False
        if not is_active(bits, v):
            return False
        return active(v, state, aux)

    @cuda.jit(device=True)
    def ballot_count_phase(n, state, aux, bits, out_off, bcount, ctrn, shared):
        """Ballot filter, pass 1: each block counts its range's vertices per class."""
        lo, hi = block_range(n)
        t = cuda.threadIdx.x
        if t < 4:
            shared[t] = 0
        cuda.syncthreads()
        c0 = int64(0)
        c1 = int64(0)
        c2 = int64(0)
        edges = int64(0)
        for base in range(lo, hi, cuda.blockDim.x):
            v = base + t
            if wanted(v, hi, bits, state, aux):
                deg = out_off[v + 1] - out_off[v]
                edges += deg
                c = degree_class(deg)
                if c == 0:
                    c0 += 1
                elif c == 1:
                    c1 += 1
                else:
                    c2 += 1
        if c0:
            cuda.atomic.add(shared, 0, c0)
        if c1:
            cuda.atomic.add(shared, 1, c1)
        if c2:
            cuda.atomic.add(shared, 2, c2)
        if edges:
            cuda.atomic.add(shared, 3, edges)
        cuda.syncthreads()
        if t < 3:
            bcount[t, cuda.blockIdx.x] = shared[t]
            if shared[t]:
                cuda.atomic.add(ctrn, C_SMALL + t, shared[t])
        if t == 3 and shared[3]:
            cuda.atomic.add(ctrn, C_EDGES, shared[3])
        cuda.syncthreads()

    @cuda.jit(device=True)
    def ballot_write_phase(n, state, aux, bits, out_off, bcount, qn, binc, shared, wcount):
        """Ballot filter, pass 2: each block writes its range's vertices in order, after the
        vertices of the lower blocks (offsets from pass 1's counts)."""
        lo, hi = block_range(n)
        t = cuda.threadIdx.x
        lane = cuda.laneid
        warp = t // 32
        if t < 3:
            shared[t] = 0
        cuda.syncthreads()
        for b in range(t, cuda.blockIdx.x, cuda.blockDim.x):  # offsets: the lower blocks
            for c in range(3):
                if bcount[c, b]:
                    cuda.atomic.add(shared, c, bcount[c, b])
        cuda.syncthreads()
        below = cuda.lanemask_lt()
        for base in range(lo, hi, cuda.blockDim.x):
            v = base + t
            ok = wanted(v, hi, bits, state, aux)
            c = 0
            if ok:
                c = degree_class(out_off[v + 1] - out_off[v])
            rank = int64(0)
            for k in range(3):
                votes = uint32(cuda.ballot_sync(FULL, ok and c == k))
                if ok and c == k:
                    rank = int64(cuda.popc(votes & uint32(below)))  # no uint64 mixes
                if lane == 0:
                    wcount[k, warp] = int64(cuda.popc(votes))
            cuda.syncthreads()
            if t < 3:  # exclusive scan over the warps; the block's running base moves on
                run = shared[t]
                for w in range(WARPS):
                    cnt = wcount[t, w]
                    wcount[t, w] = run
                    run += cnt
                shared[t] = run
            cuda.syncthreads()
            if ok:
                qn[c, wcount[c, warp] + rank] = v
            cuda.syncthreads()
        tid = cuda.grid(1)  # bins are not used this iteration: empty them
        binc[tid] = 0

    @cuda.jit(device=True)
    def clear_phase(bits):
        tid = cuda.grid(1)
        for i in range(tid, bits.shape[0], cuda.gridDim.x * cuda.blockDim.x):
            bits[i] = 0

    @cuda.jit(device=True)
    def reset_row(ctr, row):
        if cuda.grid(1) == 0:
            for c in range(NC):
                ctr[row, c] = 0

    # -- launches of one phase (the host decides) ---------------------------------------------
    # registers capped so that a block of ``block`` threads launches (the fused kernel's
    # specializations of 512 threads wanted more than 128 on an H200: no block was resident)
    kernel_jit = cuda.jit(**device.jit_options(block))

    @kernel_jit
    def k_push(state, aux, out_off, out_idx, queues, ctr, bits, bins, binc, it, filter_mode,
               parent):
        p = it % 2
        push_phase(state, aux, out_off, out_idx, queues[p], ctr[it % 3], bits[1 - p], bins,
                   binc, queues[1 - p], ctr[(it + 1) % 3], filter_mode, parent)

    @kernel_jit
    def k_pull(n, state, aux, ident, in_off, in_idx, in_eid, out_off, queues, ctr, bits, bins,
               binc, it, filter_mode, parent):
        p = it % 2
        pull_phase(n, state, aux, ident, in_off, in_idx, in_eid, bits[p], bits[1 - p], bins,
                   binc, out_off, queues[1 - p], ctr[(it + 1) % 3], filter_mode, parent)

    @kernel_jit
    def k_gather(out_off, queues, ctr, bins, binc, it):
        gather_phase(bins, binc, out_off, queues[1 - it % 2], ctr[(it + 1) % 3])

    @kernel_jit
    def k_ballot_count(n, state, aux, out_off, bits, bcount, ctr, it):
        shared = cuda.shared.array(4, int64)
        ballot_count_phase(n, state, aux, bits[1 - it % 2], out_off, bcount,
                           ctr[(it + 1) % 3], shared)

    @kernel_jit
    def k_ballot_write(n, state, aux, out_off, bits, bcount, queues, binc, it):
        shared = cuda.shared.array(4, int64)
        wcount = cuda.shared.array((3, WARPS), int64)
        ballot_write_phase(n, state, aux, bits[1 - it % 2], out_off, bcount, queues[1 - it % 2],
                           binc, shared, wcount)

    @kernel_jit
    def k_clear(bits, it):
        clear_phase(bits[it % 2])

    # -- one persistent kernel for the whole traversal -----------------------------------------

    @kernel_jit
    def k_fused(n, state, aux, ident, out_off, out_idx, in_off, in_idx, in_eid, queues, ctr,
                bits, bins, binc, bcount, trace, max_iter, pull_edges, direction_mode,
                filter_mode, done, parent, stop_below):
        grid = cuda.cg.this_grid()
        shared = cuda.shared.array(4, int64)
        wcount = cuda.shared.array((3, WARPS), int64)
        it = 0
        before = int64(0)
        while it < max_iter:
            cur = ctr[it % 3]
            size = cur[C_SMALL] + cur[C_MEDIUM] + cur[C_LARGE]
            if size == 0:
                break
            if it > 0:  # reduced execution: few improved, no more than before (acc's stop_below)
                if size < stop_below and size <= before:
                    break
                before = size
            pull = direction_mode == PULL or (direction_mode == AUTO
                                              and cur[C_EDGES] > pull_edges)
            p = it % 2
            nxt = ctr[(it + 1) % 3]
            reset_row(ctr, (it + 2) % 3)
            if pull:
                pull_phase(n, state, aux, ident, in_off, in_idx, in_eid, bits[p], bits[1 - p],
                           bins, binc, out_off, queues[1 - p], nxt, filter_mode, parent)
            else:
                push_phase(state, aux, out_off, out_idx, queues[p], cur, bits[1 - p], bins,
                           binc, queues[1 - p], nxt, filter_mode, parent)
            grid.sync()
            ballot = filter_mode == BALLOT or nxt[C_OVERFLOW] != 0
            if ballot:
                ballot_count_phase(n, state, aux, bits[1 - p], out_off, bcount, nxt, shared)
                grid.sync()
                ballot_write_phase(n, state, aux, bits[1 - p], out_off, bcount, queues[1 - p],
                                   binc, shared, wcount)
            else:
                gather_phase(bins, binc, out_off, queues[1 - p], nxt)
            clear_phase(bits[p])
            if cuda.grid(1) == 0 and it < trace.shape[0]:  # the first iterations' rows
                trace[it, T_PULL] = 1 if pull else 0
                trace[it, T_BALLOT] = 1 if ballot else 0
                trace[it, T_SIZE] = size
                trace[it, T_EDGES] = cur[C_EDGES]
            grid.sync()
            it += 1
        if cuda.grid(1) == 0:
            done[0] = it

    kernels = dict(push=k_push, pull=k_pull, gather=k_gather, ballot_count=k_ballot_count,
                   ballot_write=k_ballot_write, clear=k_clear, fused=k_fused)
    return {name: persist(kernel) for name, kernel in kernels.items()}


__all__ = ["build", "JIT", "ONLINE", "BALLOT", "AUTO", "PUSH", "PULL"]
