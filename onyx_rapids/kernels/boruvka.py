"""Kernels of Boruvka's minimum spanning forest (:mod:`onyx_rapids.algorithms.minimum_spanning_tree`).

An undirected edge is stored twice (u->v and v->u); the rounds walk only its *canonical* copy,
the one with the smaller internal source, and name the edge by that copy's CSR position ``e``.
Every edge gets one 64-bit key, ``weight bits << 33 | e``: a float32 weight that is not
negative orders as its IEEE bit pattern read as an unsigned integer (the sign bit cleared, so
``-0.0`` is ``0.0``), so keys order edges by (weight, e), a total order in which no two edges tie.
With it the lightest edge leaving each component is unique, both components of an edge that is
lightest for both pick that same edge, and the picked edges never close a cycle: the forest is
the unique minimum one of the order, whatever the threads' interleaving.

One round: :func:`lightest` takes an atomic minimum of the keys of the edges between different
components into ``best`` of each endpoint's component (read first, so that a component most
edges touch sees few atomics); :func:`hook` marks each component's pick in ``chosen`` and
unions its two ends (:func:`onyx_rapids.kernels.union_find.union`); then
:func:`~onyx_rapids.kernels.union_find.compress` points every vertex at its new root.  The
caller drops the edges that became internal and repeats while any edge is left.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .disk_cache import persist
from .union_find import union

#: Bits of the edge position in a key: positions below 2**33 (8.6e9 stored edges).
ID_BITS = 33
#: ``best`` of a component that no edge leaves (above every key: weight bits are < 2**31).
NO_EDGE = np.uint64(2**64 - 1)
_SHIFT = np.uint64(ID_BITS)
_ID_MASK = np.uint64(2**ID_BITS - 1)
_MAGNITUDE = np.uint32(0x7FFFFFFF)  # clears the sign bit: -0.0 -> 0.0


@persist
@cuda.jit
def lightest(work, src, dst, wbits, wstride, comp, best):
    """``best[c]`` = the smallest key of the edges ``work`` (canonical CSR positions) that
    leave component ``c`` (``comp``: every vertex's root).  ``wbits`` holds the weights' bits
    (uint32), read at ``e * wstride``: ``wstride`` 0 and one zero gives every edge one weight."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, work.shape[0], stride):
        e = work[i]
        cu = comp[src[e]]
        cv = comp[dst[e]]
        if cu == cv:
            continue
        key = (np.uint64(wbits[e * wstride] & _MAGNITUDE) << _SHIFT) | np.uint64(e)
        if key < best[cu]:
            cuda.atomic.min(best, cu, key)
        if key < best[cv]:
            cuda.atomic.min(best, cv, key)


@persist
@cuda.jit
def hook(best, src, dst, parent, chosen):
    """Every component with an outgoing edge (``best`` not :data:`NO_EDGE`: only roots get
    one) marks its lightest edge in ``chosen`` and unions the edge's two ends."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for r in range(start, best.shape[0], stride):
        key = best[r]
        if key == NO_EDGE:
            continue
        e = key & _ID_MASK
        chosen[e] = 1  # both ends may pick the same edge: one mark
        union(parent, src[e], dst[e])
