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


#: Slots of each block's partials in :func:`quick_sample`'s output: those of ``out`` above
#: (over the sampled edges, x and y shifted by the mean degree, w by the first sampled weight),
#: then the sampled vertices with no edge, with in-degree 0, with out-degree 0 (summed), the
#: largest out- and in-degree over every vertex (maxima), and the weight shift.
ISOLATED, ZERO_IN, ZERO_OUT, TOP_OUT, TOP_IN, W_SHIFT, QUICK_SLOTS = 14, 15, 16, 17, 18, 19, 20


@cuda.jit(device=True, inline=True)
def _combine(q, a, b):
    """Two partials of ``quick_sample``'s slot ``q``: summed, or the smaller or larger."""
    if q <= LOOPS or ISOLATED <= q <= ZERO_OUT:
        return a + b
    if q == W_MIN or q == X_MIN or q == Y_MIN:
        return min(a, b)
    return max(a, b)


@persist
@cuda.jit
def quick_sample(offsets, indices, out_degree, in_degree, weights, s_v, s_e, out):
    """The quick attributes' samples (n > 0): ``out[:s_v]`` and ``out[s_v:2 s_v]`` get the
    out- and in-degrees of the vertices ``int((i + 0.5) * (n / s_v))``; the stored edges
    ``e = int((j + 0.5) * (m / s_e))`` (every vertex and edge in order where ``s_v = n``,
    ``s_e = m``; an edge's source found by binary search in ``offsets``) are reduced to the
    moments of :func:`edge_moments`, and block b writes its partials of every slot to
    ``out[2 s_v + b * QUICK_SLOTS:][:QUICK_SLOTS]`` (no atomics: the host combines a few
    hundred numbers).  ``weights``: (m, k), or (0, 1) for an unweighted graph.  Launch with
    :data:`BLOCK` threads a block."""
    n, m = out_degree.shape[0], indices.shape[0]
    start, step = cuda.grid(1), cuda.gridsize(1)
    top_out = top_in = isolated = zero_in = zero_out = float64(0.0)
    for v in range(start, n, step):
        top_out = max(top_out, float64(out_degree[v]))
        top_in = max(top_in, float64(in_degree[v]))
    for i in range(start, s_v, step):
        v = int64((i + 0.5) * (n / s_v))
        a, b = out_degree[v], in_degree[v]
        out[i] = a
        out[s_v + i] = b
        zero_out += 1.0 if a == 0 else 0.0
        zero_in += 1.0 if b == 0 else 0.0
        isolated += 1.0 if a == 0 and b == 0 else 0.0
    mean = float64(m) / n  # the mean out- and in-degree
    weighted = weights.shape[0] > 0 and s_e > 0
    shift_w = float64(weights[int64(0.5 * (m / s_e)), 0]) if weighted else float64(0.0)
    sx = sy = sxx = syy = sxy = sw = sww = loops = float64(0.0)
    wlo = xlo = ylo = float64(math.inf)
    whi = xhi = yhi = float64(-math.inf)
    for j in range(start, s_e, step):
        e = int64((j + 0.5) * (m / s_e))
        u, hi = int64(0), int64(n - 1)  # the largest u with offsets[u] <= e: e's source
        while u < hi:
            mid = (u + hi + 1) // 2
            if offsets[mid] <= e:
                u = mid
            else:
                hi = mid - 1
        v = indices[e]
        loops += 1.0 if u == v else 0.0
        x = float64(out_degree[u]) - mean
        y = float64(in_degree[v]) - mean
        sx += x
        sy += y
        sxx += x * x
        syy += y * y
        sxy += x * y
        xlo, xhi, ylo, yhi = min(xlo, x), max(xhi, x), min(ylo, y), max(yhi, y)
        if weighted:
            w = float64(weights[e, 0])
            wlo, whi = min(wlo, w), max(whi, w)
            w -= shift_w
            sw += w
            sww += w * w
    tree = cuda.shared.array((QUICK_SLOTS, BLOCK), float64)
    t = cuda.threadIdx.x
    tree[SX, t], tree[SY, t], tree[SXX, t], tree[SYY, t] = sx, sy, sxx, syy
    tree[SXY, t], tree[SW, t], tree[SWW, t], tree[LOOPS, t] = sxy, sw, sww, loops
    tree[W_MIN, t], tree[W_MAX, t], tree[X_MIN, t], tree[X_MAX, t] = wlo, whi, xlo, xhi
    tree[Y_MIN, t], tree[Y_MAX, t], tree[ISOLATED, t] = ylo, yhi, isolated
    tree[ZERO_IN, t], tree[ZERO_OUT, t], tree[TOP_OUT, t] = zero_in, zero_out, top_out
    tree[TOP_IN, t], tree[W_SHIFT, t] = top_in, shift_w
    cuda.syncthreads()
    half = BLOCK // 2
    while half > 0:
        if t < half:
            for q in range(QUICK_SLOTS):
                tree[q, t] = _combine(q, tree[q, t], tree[q, t + half])
        cuda.syncthreads()
        half //= 2
    if t < QUICK_SLOTS:
        out[2 * s_v + cuda.blockIdx.x * QUICK_SLOTS + t] = tree[t, 0]


__all__ = ["edge_moments", "quick_sample", "start_values", "BLOCK", "SX", "SY", "SXX", "SYY",
           "SXY", "SW", "SWW", "LOOPS", "W_MIN", "W_MAX", "X_MIN", "X_MAX", "Y_MIN", "Y_MAX",
           "SLOTS", "ISOLATED", "ZERO_IN", "ZERO_OUT", "TOP_OUT", "TOP_IN", "W_SHIFT",
           "QUICK_SLOTS"]
