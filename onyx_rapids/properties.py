"""Named vertex/edge properties: n x k row-major (array of structures) float32 buffers.

The helpers here are the whole-property array operations that algorithms need between operator
calls (fills, copies, convergence measures); per-vertex and per-edge work goes through
:mod:`onyx_rapids.operators`.
"""

from __future__ import annotations

import numpy as np

from . import device, memory
from .kernels import columns

FLOAT = np.float32


def vertex_property(g, k: int, fill: float = 0.0, dtype=FLOAT):
    """A new ``n x k`` property of ``g`` filled with ``fill``."""
    if int(k) < 1:
        raise ValueError(f"k (features per vertex) must be positive, got {k}")
    dtype = np.dtype(dtype)
    memory.reserve(f"a vertex property of {g.n} x {int(k)} {dtype.name}",
                   g.n * int(k) * dtype.itemsize,
                   "vertex properties always live on the device: raise the budget or use "
                   "fewer features")
    return device.full((g.n, int(k)), fill, dtype)




def copy(a):
    return a.copy()


def fill(a, value):
    a.fill(value)
    return a


def column(values, dtype=FLOAT):
    """A 1-D array of ``n`` values as an ``n x 1`` property."""
    return device.xp.ascontiguousarray(device.xp.asarray(values, dtype=dtype).reshape(-1, 1))


def vector(k: int, value: float = 0.0, dtype=FLOAT):
    """A length-``k`` device array (one value per feature, read by kernels in place)."""
    return device.full((int(k),), value, dtype)


def dot_into(out, weights, a):
    """``out[f] = sum_v weights[v] * a[v, f]`` in float64, kept on the device."""
    out[...] = device.xp.dot(weights, a.astype(np.float64))
    return out


def l1_change_and_dot(a, b, weights, dot_out) -> float:
    """The largest per-feature L1 change ``max_f sum_v |a[v, f] - b[v, f]|`` (float64, returned)
    and ``dot_out[f] = sum_v weights[v] * a[v, f]``, from one pass over ``a`` and ``b`` (``n x
    k``, same shape) and ``weights`` (``n``, float64): :mod:`onyx_rapids.kernels.columns`.

    Example::

        >>> change = l1_change_and_dot(rank_next, rank, dangling_mask, dangling)  # doctest: +SKIP
    """
    if a.shape != b.shape or a.ndim != 2 or weights.shape != a.shape[:1]:
        raise ValueError(f"l1_change_and_dot needs a, b of one n x k shape and n weights, got "
                         f"{a.shape}, {b.shape} and {weights.shape}")
    n, k = a.shape
    sums = device.zeros((2, k), np.float64)
    if n:
        block = device.block_threads(None, 256, 32)
        if device.is_simulator():
            grid = -(-k // block)  # every column needs a thread
        else:
            grid = max(device.multiprocessor_count() * (2048 // block), -(-k // block))
        call = (a.reshape(-1), b.reshape(-1), weights, np.int64(k), sums)
        columns.l1_change_and_dot[grid, block](*device.kernel_args(call))
    dot_out[...] = sums[1]
    return float(sums[0].max())


def moved_rows(a, b, threshold: float):
    """n booleans: True where some feature of row v moved, ``|a[v, f] - b[v, f]| >
    threshold`` (``a``, ``b`` n x k), from one pass (:mod:`onyx_rapids.kernels.columns`)."""
    n, k = a.shape
    mask = device.zeros(n, np.uint8)
    if n:
        block = device.block_threads(None, 256, 32)
        grid = 1 if device.is_simulator() else device.multiprocessor_count() * (2048 // block)
        call = (a.reshape(-1), b.reshape(-1), np.float64(threshold), np.int64(k), mask)
        columns.moved_rows[grid, block](*device.kernel_args(call))
    return mask.astype(np.bool_)


def commit_rows(new, old, movers, pushed, delta):
    """Change-driven state after a bulk step from ``old`` to ``new`` (n x k): the ``movers``
    (n booleans) pushed ``new``, with change ``delta = new - old``; every other row pushed
    ``old`` (delta 0)."""
    xp, rows = device.xp, movers[:, None]
    xp.copyto(pushed, old)
    xp.copyto(pushed, new, where=rows)
    xp.subtract(new, old, out=delta)
    xp.copyto(delta, 0.0, where=~rows)


def l1_change(a, b) -> float:
    """The largest per-feature L1 change ``max_f sum_v |a[v, f] - b[v, f]|``, in float64."""
    if not a.size:
        return 0.0
    xp = device.xp
    return float(xp.abs(a.astype(np.float64) - b).sum(axis=0).max())


def max_change(a, b) -> float:
    return float(device.xp.abs(a - b).max()) if a.size else 0.0


def max_abs(a) -> float:
    return float(device.xp.abs(a).max()) if a.size else 0.0


def has_converged(new, old, tol: float) -> bool:
    """docs/algorithms.md's rule: max change <= tol * max(1, max |new|)."""
    return max_change(new, old) <= tol * max(1.0, max_abs(new))


def out_weight_sums(g, weights=None):
    """Per-vertex out-degree (``weights=None``) or sum of out-edge weights, float64."""
    xp = device.xp
    degree = xp.diff(g.out_offsets).astype(np.float64)
    if weights is None:
        return degree
    sources = xp.repeat(xp.arange(g.n), xp.diff(g.out_offsets).astype(np.int64))
    return xp.bincount(sources, weights=weights.astype(np.float64), minlength=g.n)


def inverse_or_zero(x, dtype=FLOAT):
    """``1 / x`` where ``x != 0``, else 0, as an ``n x 1`` property."""
    xp = device.xp
    safe = xp.where(x != 0, x, 1.0)
    return column(xp.where(x != 0, 1.0 / safe, 0.0), dtype)


def edge_values(g, k: int, fill: float = 0.0, dtype=FLOAT):
    """A new ``m x k`` edge property of ``g`` (CSR order) filled with ``fill``."""
    return device.full((g.m, int(k)), fill, dtype)
