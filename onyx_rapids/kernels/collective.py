"""Feature-aware collaborative operations (ONYX Section 5.3) as Numba device functions.

A *feature group* is the set of ``T`` consecutive threads (``T`` a power of two) that together
hold the ``k <= T`` features of one vertex or edge property: thread ``f`` of the group works on
feature ``f``.  For ``T <= 32`` a group lives inside one warp and the operations below use warp
intrinsics only; ``gmask`` is the group's lanes (``((1 << T) - 1) << group_base``).  Groups wider
than a warp use the ``block_*`` variants, which exchange through shared memory and need every
thread of the block to call them (they contain ``syncthreads``).

These run unchanged under the CUDA simulator thanks to :mod:`.warp_emulation`.
"""

from __future__ import annotations

import math

import numpy as np

from numba import cuda, uint32

FULL_MASK = 0xFFFFFFFF


def group_mask(T: int, lane: int) -> int:
    """Host-side reference for the lanes of the group that holds ``lane`` (tests use it)."""
    if T >= 32:
        return FULL_MASK
    base = lane - lane % T
    return ((1 << T) - 1) << base


@cuda.jit(device=True)
def lane_group_mask(lane, T):
    """The lanes of the size-``T`` group holding ``lane`` (device side)."""
    if T >= 32:
        return uint32(FULL_MASK)
    return uint32(((1 << T) - 1) << (lane - (lane & (T - 1))))


@cuda.jit(device=True)
def is_active(bits, v):
    """Bit ``v`` of a uint32 bit-vector."""
    return (bits[v >> 5] >> (v & 31)) & 1


@cuda.jit(device=True)
def mark_active(bits, v):
    """Set bit ``v`` of a uint32 bit-vector (atomic: many edges may hit the same word).

    The word is read first and the atomic issued only while the bit is clear: a push marks a
    destination once per in-edge, and on skewed graphs most of those hit a few hot words that
    are already set (a stale read only costs a redundant atomic)."""
    bit = uint32(1) << uint32(v & 31)
    if (bits[v >> 5] & bit) == 0:
        cuda.atomic.or_(bits, v >> 5, bit)


@cuda.jit(device=True)
def group_any(pred, gmask):
    """``any_feature_updated``: True on every lane of the group if any lane's ``pred`` is.

    Every lane of the warp must call it (a full-warp ballot keeps the warp converged; asking
    each group's lanes alone would split the warp into as many convergence groups).
    """
    return (cuda.ballot_sync(FULL_MASK, pred) & gmask) != 0


@cuda.jit(device=True)
def group_segment_sum(x, f, segment, T, gmask):
    """Sum of ``x`` over the lanes of the same segment (features ``[s*segment, (s+1)*segment)``).

    A segmented inclusive scan with ``shfl_up_sync`` (log2 T steps), then a broadcast of the
    segment's last lane, so ``segment`` need not be a power of two.  Lanes with ``f`` past the
    last full segment form a partial segment of their own; callers ignore their result.  Every
    lane of the warp calls it: the shuffles name the whole warp (``gmask`` is kept for the
    signature) and the position test keeps each segment to its own lanes.
    """
    pos = f % segment
    d = 1
    while d < T:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if pos >= d:
            x += y
        d *= 2
    last = f - pos + segment - 1
    if last > T - 1:
        last = T - 1
    base = cuda.laneid - f
    return cuda.shfl_sync(FULL_MASK, x, base + last)


@cuda.jit(device=True)
def group_segment_max(x, f, segment, T, gmask):
    """Maximum of ``x`` over the lanes of the same segment (see :func:`group_segment_sum`)."""
    pos = f % segment
    d = 1
    while d < T:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if pos >= d and y > x:
            x = y
        d *= 2
    last = f - pos + segment - 1
    if last > T - 1:
        last = T - 1
    base = cuda.laneid - f
    return cuda.shfl_sync(FULL_MASK, x, base + last)


@cuda.jit(device=True)
def group_broadcast(x, lanes, f, j):
    """Feature ``j``'s ``x`` to every lane of ``lanes`` (the property's lanes, feature ``f``
    being the caller's): one ``shfl_sync`` over those lanes only, so it may run where groups
    diverge (inside an edge loop).  See ``lanes`` in :func:`onyx_rapids.operators.foldmap`."""
    return cuda.shfl_sync(lanes, x, cuda.laneid - f + j)


@cuda.jit(device=True)
def warp_inclusive_scan(x):
    """Inclusive prefix sum over the 32 lanes of a full warp."""
    lane = cuda.laneid
    d = 1
    while d < 32:
        y = cuda.shfl_up_sync(FULL_MASK, x, d)
        if lane >= d:
            x += y
        d *= 2
    return x


@cuda.jit(device=True)
def warp_upper_lane(excl, slot):
    """Largest lane ``L`` whose exclusive prefix ``excl`` (non-decreasing) is ``<= slot``.

    The binary search of ONYX's per-edge phase, done over the warp's registers with shuffles
    instead of a shared-memory array: five ``shfl_sync`` steps.
    """
    lo = 0
    step = 16
    while step > 0:
        cand = lo + step
        if cuda.shfl_sync(FULL_MASK, excl, cand) <= slot:
            lo = cand
        step >>= 1
    return lo


@cuda.jit(device=True)
def block_group_any(pred, g, f, flags):
    """``group_any`` for groups wider than a warp; ``flags`` is a shared int32 array."""
    if f == 0:
        flags[g] = 0
    cuda.syncthreads()
    if pred:
        flags[g] = 1
    cuda.syncthreads()
    result = flags[g] != 0
    cuda.syncthreads()
    return result


@cuda.jit(device=True)
def warp_sum(x):
    """Sum of ``x`` over the 32 lanes of a full warp, on every lane (five ``shfl_xor_sync``)."""
    d = 16
    while d > 0:
        x += cuda.shfl_xor_sync(FULL_MASK, x, d)
        d >>= 1
    return x


@cuda.jit(device=True)
def warp_max(x):
    """Maximum of ``x`` over the 32 lanes of a full warp, on every lane."""
    d = 16
    while d > 0:
        y = cuda.shfl_xor_sync(FULL_MASK, x, d)
        if y > x:
            x = y
        d >>= 1
    return x


@cuda.jit(device=True)
def block_segment_sum(x, f, segment, k, group_start, scratch):
    """Segment sum for groups wider than a warp, through the shared ``scratch`` array.

    A segment made of whole warps (``segment`` a multiple of 32; groups start on a warp) sums
    each warp by shuffles and adds the segment's warp sums from ``scratch``: 5 shuffles and
    ``segment / 32`` shared loads a lane.  Other segments straddle warps: each lane adds the
    segment's ``segment`` values from ``scratch`` (a broadcast read, no bank conflict).
    """
    tid = cuda.threadIdx.x
    start = group_start + f - f % segment  # the segment's first thread
    if segment % 32 == 0:
        s = warp_sum(x)
        if cuda.laneid == 0:
            scratch[tid >> 5] = s
        cuda.syncthreads()
        total = scratch[start >> 5] * 0
        if f < k:
            for i in range(segment >> 5):
                total += scratch[(start >> 5) + i]
        cuda.syncthreads()
        return total
    scratch[tid] = x
    cuda.syncthreads()
    total = scratch[tid] * 0
    if f < k:
        for i in range(segment):
            total += scratch[start + i]
    cuda.syncthreads()
    return total


@cuda.jit(device=True)
def block_segment_max(x, f, segment, k, group_start, scratch):
    """Segment maximum for groups wider than a warp (see :func:`block_segment_sum`)."""
    tid = cuda.threadIdx.x
    start = group_start + f - f % segment
    if segment % 32 == 0:
        s = warp_max(x)
        if cuda.laneid == 0:
            scratch[tid >> 5] = s
        cuda.syncthreads()
        best = x
        if f < k:
            best = scratch[start >> 5]
            for i in range(1, segment >> 5):
                if scratch[(start >> 5) + i] > best:
                    best = scratch[(start >> 5) + i]
        cuda.syncthreads()
        return best
    scratch[tid] = x
    cuda.syncthreads()
    best = x
    if f < k:
        best = scratch[start]
        for i in range(1, segment):
            if scratch[start + i] > best:
                best = scratch[start + i]
    cuda.syncthreads()
    return best


MAX_SOLVE = 32
_SOLVE_AREA = MAX_SOLVE * MAX_SOLVE  # local.array needs a literal shape: a product is not one
_F64 = np.dtype(np.float64)


@cuda.jit(device=True)
def spd_solve_row(stats, v, k, lam, out):
    """``out[v, :k] = (A + lam I)^{-1} b`` by Cholesky in float64, where row ``v`` of ``stats``
    holds A (k x k, row-major) then b (k values).  One thread solves (k <= MAX_SOLVE)."""
    L = cuda.local.array(_SOLVE_AREA, _F64)
    y = cuda.local.array(MAX_SOLVE, _F64)
    kk = k * k
    for j in range(k):
        d = stats[v, j * k + j] + lam
        for p in range(j):
            d -= L[j * k + p] * L[j * k + p]
        d = math.sqrt(d) if d > 0 else 0.0
        L[j * k + j] = d
        for i in range(j + 1, k):
            s = 1.0 * stats[v, i * k + j]
            for p in range(j):
                s -= L[i * k + p] * L[j * k + p]
            L[i * k + j] = s / d if d > 0 else 0.0
    for i in range(k):  # L y = b
        s = 1.0 * stats[v, kk + i]
        for p in range(i):
            s -= L[i * k + p] * y[p]
        y[i] = s / L[i * k + i] if L[i * k + i] > 0 else 0.0
    for i in range(k - 1, -1, -1):  # L^T x = y
        s = y[i]
        for p in range(i + 1, k):
            s -= L[p * k + i] * y[p]
        y[i] = s / L[i * k + i] if L[i * k + i] > 0 else 0.0
        out[v, i] = y[i]


@cuda.jit(device=True)
def _solve_roles(f, d):
    """What thread ``f`` holds in a solve of order ``d``: (holds an entry of A, holds an entry
    of b, A's row, A's column, b's index); unused fields are 0."""
    dd = d * d
    is_a = f < dd
    is_b = f >= dd and f < dd + d
    row = f // d if is_a else 0
    col = f - row * d if is_a else 0
    bi = f - dd if is_b else 0
    return is_a, is_b, row, col, bi


@cuda.jit(device=True)
def group_spd_solve(a, f, d, lam):
    """Collaborative Cholesky solve of ``(A + lam I) x = b`` by the lanes of one feature group.

    Lane ``f < d*d`` holds ``A[f // d, f % d]`` and lane ``d*d + i`` holds ``b[i]`` (``a``, a
    float64); on return lane ``d*d + i`` holds ``x[i]`` (the other lanes hold L).  Needs
    ``d*d + d <= T <= 32``.  Right-looking: column ``j`` of L is one shuffle of the pivot, a
    division on the column's lanes and a rank-1 update of the trailing triangle (two shuffles),
    so the factorization takes ``d`` rounds instead of one lane's ``d^3 / 3`` steps; the two
    triangular solves take ``d`` rounds each.  Every lane of the warp calls it.
    """
    base = cuda.laneid - f
    dd = d * d
    is_a, is_b, row, col, bi = _solve_roles(f, d)
    if is_a and row == col:
        a += lam
    for j in range(d):
        piv = cuda.shfl_sync(FULL_MASK, a, base + j * d + j)
        piv = math.sqrt(piv) if piv > 0 else 0.0
        if is_a and col == j and row >= j:
            if row == j:
                a = piv
            else:
                a = a / piv if piv > 0 else 0.0
        lij = cuda.shfl_sync(FULL_MASK, a, base + row * d + j)
        llj = cuda.shfl_sync(FULL_MASK, a, base + col * d + j)
        if is_a and col > j and row >= col:
            a -= lij * llj
    for p in range(d):  # L y = b, y overwriting b
        lpp = cuda.shfl_sync(FULL_MASK, a, base + p * d + p)
        yp = cuda.shfl_sync(FULL_MASK, a, base + dd + p)
        yp = yp / lpp if lpp > 0 else 0.0
        lip = cuda.shfl_sync(FULL_MASK, a, base + (bi if bi > p else p) * d + p)
        if is_b:
            if bi == p:
                a = yp
            elif bi > p:
                a -= lip * yp
    for i in range(d - 1, -1, -1):  # L^T x = y
        lii = cuda.shfl_sync(FULL_MASK, a, base + i * d + i)
        xi = cuda.shfl_sync(FULL_MASK, a, base + dd + i)
        xi = xi / lii if lii > 0 else 0.0
        lib = cuda.shfl_sync(FULL_MASK, a, base + i * d + (bi if bi < i else i))
        if is_b:
            if bi == i:
                a = xi
            elif bi < i:
                a -= lib * xi
    return a


@cuda.jit(device=True)
def block_spd_solve(a, f, d, lam, group_start, buf):
    """:func:`group_spd_solve` for groups wider than a warp: the entries live in the shared
    float64 ``buf`` (one per thread of the block) and each round ends with ``syncthreads``.
    Every thread of the block calls it."""
    tid = cuda.threadIdx.x
    dd = d * d
    is_a, is_b, row, col, bi = _solve_roles(f, d)
    if is_a and row == col:
        a += lam
    buf[tid] = a
    cuda.syncthreads()
    for j in range(d):
        piv = buf[group_start + j * d + j]
        piv = math.sqrt(piv) if piv > 0 else 0.0
        cuda.syncthreads()  # every thread has the pivot before its lane overwrites it
        if is_a and col == j and row >= j:
            if row == j:
                a = piv
            else:
                a = a / piv if piv > 0 else 0.0
            buf[tid] = a
        cuda.syncthreads()
        if is_a and col > j and row >= col:  # reads column j, writes columns > j
            a -= buf[group_start + row * d + j] * buf[group_start + col * d + j]
            buf[tid] = a
        cuda.syncthreads()
    for p in range(d):
        lpp = buf[group_start + p * d + p]
        yp = buf[group_start + dd + p]
        yp = yp / lpp if lpp > 0 else 0.0
        lip = buf[group_start + (bi if bi > p else p) * d + p]
        cuda.syncthreads()
        if is_b:
            if bi == p:
                a = yp
            elif bi > p:
                a -= lip * yp
            buf[tid] = a
        cuda.syncthreads()
    for i in range(d - 1, -1, -1):
        lii = buf[group_start + i * d + i]
        xi = buf[group_start + dd + i]
        xi = xi / lii if lii > 0 else 0.0
        lib = buf[group_start + i * d + (bi if bi < i else i)]
        cuda.syncthreads()
        if is_b:
            if bi == i:
                a = xi
            elif bi < i:
                a -= lib * xi
            buf[tid] = a
        cuda.syncthreads()
    return a

