"""Per-feature (column) reductions of ``n x k`` properties in one pass over the data.

An iteration of PageRank with ``k`` teleport vectors needs, per feature ``f``, the L1 change
``sum_v |a[v, f] - b[v, f]|`` (the stop test) and the dangling mass ``sum_v w[v] a[v, f]`` (the
next iteration's teleport share).  Array expressions compute them in five passes (casts to
float64, a difference, an absolute value, a matrix product); ``l1_change_and_dot`` reads ``a``
and ``b`` once (measurements: benchmarks/NOTES.md).

Thread ``t`` of ``T`` (``T`` rounded down to a multiple of ``k``) walks the flat row-major data
at ``t, t + T, ...``: every element it meets lies in column ``t % k``, and a warp reads
consecutive addresses.  Each thread sums in float64; a block then folds the partial sums of each
column in shared memory and adds them to ``out`` with one atomic per column.
"""

from __future__ import annotations

from numba import cuda, float64

from .disk_cache import persist

MAX_BLOCK = 1024


@persist
@cuda.jit
def l1_change_and_dot(a, b, w, k, out):
    """``out[0, f] += sum_v |a[v, f] - b[v, f]|`` and ``out[1, f] += sum_v w[v] a[v, f]`` over
    the flat row-major ``a`` and ``b`` (``n * k`` values) and ``w`` (``n``)."""
    t = cuda.grid(1)
    lanes = cuda.gridsize(1) // k * k
    l1 = float64(0.0)
    dot = float64(0.0)
    if t < lanes:
        for i in range(t, a.shape[0], lanes):
            x = float64(a[i])
            l1 += abs(x - float64(b[i]))
            dot += w[i // k] * x
    part_l1 = cuda.shared.array(MAX_BLOCK, float64)
    part_dot = cuda.shared.array(MAX_BLOCK, float64)
    tid = cuda.threadIdx.x
    part_l1[tid] = l1
    part_dot[tid] = dot
    cuda.syncthreads()
    block = cuda.blockDim.x
    if tid < k:
        # entries tid, tid + k, ... of this block all belong to one column
        column = (cuda.blockIdx.x * block + tid) % k
        for j in range(tid + k, block, k):
            l1 += part_l1[j]
            dot += part_dot[j]
        cuda.atomic.add(out, (0, column), l1)
        cuda.atomic.add(out, (1, column), dot)


@persist
@cuda.jit
def moved_rows(a, b, threshold, k, mask):
    """``mask[v] = 1`` where some ``|a[v, f] - b[v, f]| > threshold`` over the flat row-major
    ``a`` and ``b`` (``n * k`` values); ``mask`` starts at 0 (every writer stores 1)."""
    t = cuda.grid(1)
    for i in range(t, a.shape[0], cuda.gridsize(1)):
        if abs(a[i] - b[i]) > threshold:
            mask[i // k] = 1
