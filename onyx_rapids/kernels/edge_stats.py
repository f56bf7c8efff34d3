"""One pass over a graph's stored edges for :mod:`onyx_rapids.attributes`: the self-loops, the
moments of (out-degree of the source, in-degree of the target) behind the degree
assortativity, and the moments and extremes of the first weight column
(:func:`edge_moments`); and the quick attributes' samples in one launch
(:func:`quick_sample`).

Each thread sums its edges (grid-stride) in registers; each block combines its threads' values
in shared memory (a tree: log2(block) steps) and its thread 0 adds them to the outputs with
atomics.  The graph's arrays are read once and nothing of size m is written (the vectorized
formulas built several float64 arrays of m entries, ~0.5 GB apiece on R-MAT 22).  Shared memory
rather than warp shuffles: the simulator emulates a shuffle in ~30 ms, a barrier in far less.
Values are shifted before squaring (``shift``: the mean degree, the first weight) so that the
variances do not cancel."""

from __future__ import annotations

import math

from numba import cuda, float64, int64

from .. import device
from .disk_cache import persist

#: Slots of ``out`` (float64[SLOTS]): Σx, Σy, Σx², Σy², Σxy (x, y the shifted degrees at the
#: two ends), Σw, Σw² (w the shifted weight), the self-loops (summed: the first LOOPS + 1);
#: then minima and maxima of w, x and y (the caller starts them at +inf / -inf).
SX, SY, SXX, SYY, SXY, SW, SWW, LOOPS = 0, 1, 2, 3, 4, 5, 6, 7
W_MIN, W_MAX, X_MIN, X_MAX, Y_MIN, Y_MAX, SLOTS = 8, 9, 10, 11, 12, 13, 14
#: Threads of a block (a compile-time constant: the size of the shared tree).
BLOCK = 32 if device.is_simulator() else 256


def start_values(xp):
    """``out`` before the pass: sums 0, minima +inf, maxima -inf."""
    out = xp.zeros(SLOTS, dtype="float64")
    out[W_MIN::2] = math.inf
    out[W_MAX::2] = -math.inf
    return out


@persist
@cuda.jit
def edge_moments(src, dst, out_degree, in_degree, weights, shift, out):
    """Combine this graph's edges into ``out`` (see the slots); ``weights``: (m, k), or (0, 1)
    for an unweighted graph; ``shift``: float64[3] subtracted from x, y and w.  Launch with
    :data:`BLOCK` threads a block."""
    sx = sy = sxx = syy = sxy = sw = sww = loops = float64(0.0)
    wlo = xlo = ylo = float64(math.inf)
    whi = xhi = yhi = float64(-math.inf)
    weighted = weights.shape[0] > 0
    for e in range(cuda.grid(1), src.shape[0], cuda.gridsize(1)):  # in registers
        u, v = src[e], dst[e]
        if u == v:
            loops += 1.0
        x = float64(out_degree[u]) - shift[0]
        y = float64(in_degree[v]) - shift[1]
        sx += x
        sy += y
        sxx += x * x
        syy += y * y
        sxy += x * y
        xlo, xhi, ylo, yhi = min(xlo, x), max(xhi, x), min(ylo, y), max(yhi, y)
        if weighted:
            w = float64(weights[e, 0])
            wlo, whi = min(wlo, w), max(whi, w)
            w -= shift[2]
            sw += w
            sww += w * w
    tree = cuda.shared.array((SLOTS, BLOCK), float64)  # then the block's tree
    t = cuda.threadIdx.x
    tree[SX, t], tree[SY, t], tree[SXX, t], tree[SYY, t] = sx, sy, sxx, syy
    tree[SXY, t], tree[SW, t], tree[SWW, t], tree[LOOPS, t] = sxy, sw, sww, loops
    tree[W_MIN, t], tree[W_MAX, t], tree[X_MIN, t], tree[X_MAX, t] = wlo, whi, xlo, xhi
    tree[Y_MIN, t], tree[Y_MAX, t] = ylo, yhi
    cuda.syncthreads()
    half = BLOCK // 2
    while half > 0:
        if t < half:
            for q in range(SLOTS):
                a, b = tree[q, t], tree[q, t + half]
                tree[q, t] = a + b if q <= LOOPS else (min(a, b) if q % 2 == 0 else max(a, b))
        cuda.syncthreads()
        half //= 2
    if t == 0:
        for q in range(LOOPS + 1):
            cuda.atomic.add(out, q, tree[q, 0])
        for q in range(W_MIN, SLOTS, 2):
            cuda.atomic.min(out, q, tree[q, 0])
            cuda.atomic.max(out, q + 1, tree[q + 1, 0])


@persist
@cuda.jit
def quick_sample(offsets, indices, out_degree, in_degree, weights, s_v, s_e, out):
    """Gather the quick attributes' samples into ``out`` (float64, zeroed by the caller):
    ``[0, s_v)`` and ``[s_v, 2 s_v)`` the out- and in-degrees of the vertices
    ``int((i + 0.5) * (n / s_v))``; then, over the stored edges
    ``e = int((j + 0.5) * (m / s_e))`` (every vertex and edge in order where ``s_v = n``,
    ``s_e = m``), ``s_e`` values each of the out-degree of e's source (found by binary search in
    ``offsets``), the in-degree of its target, whether it is a self-loop (1.0 or 0.0) and, when
    ``weights`` has rows, its first weight; the last two slots get the largest out- and
    in-degree over all n vertices.  One launch for what were a dozen array operations, each a
    launch of its own.  Launch with :data:`BLOCK` threads a block."""
    n, m = out_degree.shape[0], indices.shape[0]
    start, step = cuda.grid(1), cuda.gridsize(1)
    top_out = top_in = float64(0.0)
    for v in range(start, n, step):
        top_out = max(top_out, float64(out_degree[v]))
        top_in = max(top_in, float64(in_degree[v]))
    for i in range(start, s_v, step):
        v = int64((i + 0.5) * (n / s_v))
        out[i] = out_degree[v]
        out[s_v + i] = in_degree[v]
    base = 2 * s_v
    for j in range(start, s_e, step):
        e = int64((j + 0.5) * (m / s_e))
        lo, hi = int64(0), int64(n - 1)  # the largest u with offsets[u] <= e: e's source
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if offsets[mid] <= e:
                lo = mid
            else:
                hi = mid - 1
        v = indices[e]
        out[base + j] = out_degree[lo]
        out[base + s_e + j] = in_degree[v]
        out[base + 2 * s_e + j] = 1.0 if lo == v else 0.0
        if weights.shape[0] > 0:
            out[base + 3 * s_e + j] = weights[e, 0]
    tree = cuda.shared.array((2, BLOCK), float64)  # the block's maxima, then one atomic each
    t = cuda.threadIdx.x
    tree[0, t], tree[1, t] = top_out, top_in
    cuda.syncthreads()
    half = BLOCK // 2
    while half > 0:
        if t < half:
            tree[0, t] = max(tree[0, t], tree[0, t + half])
            tree[1, t] = max(tree[1, t], tree[1, t + half])
        cuda.syncthreads()
        half //= 2
    if t == 0:
        last = out.shape[0] - 2
        cuda.atomic.max(out, last, tree[0, 0])
        cuda.atomic.max(out, last + 1, tree[1, 0])


__all__ = ["edge_moments", "quick_sample", "start_values", "BLOCK", "SX", "SY", "SXX", "SYY", "SXY", "SW",
           "SWW", "LOOPS", "W_MIN", "W_MAX", "X_MIN", "X_MAX", "Y_MIN", "Y_MAX", "SLOTS"]
