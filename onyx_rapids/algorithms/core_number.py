"""Core numbers and k-cores (docs/algorithms.md, "core_number", "k_core") by peeling, as SIMD-X.

On the simple undirected view: at level k every live vertex of degree < k is peeled (its core
number is k - 1) and each of its live neighbours loses one degree; that may bring them under k,
so the level repeats until no live vertex is under k, then k rises to one more than the
smallest live degree.  Decrements only touch live vertices (a peeled vertex's degree no longer
matters).  ``k_core(k)`` keeps the vertices of core number >= k.

The rounds are queue-driven (:mod:`onyx_rapids.kernels.peel`): a round walks only the edges of
the vertices peeled in the round before, and the decrement that takes a neighbour from k to
k - 1 queues it, so no round scans the graph; one scan per level finds its first vertices.
"""

from __future__ import annotations

import numpy as np

from .. import device, operators as ops
from ..kernels import peel as kernels
from .. import inputs
from ..registry import Input, algorithm
from ._common import Info, finish


def _launch(kernel, items, block_size, *args):
    block = device.block_threads(block_size, 256)
    kernel[device.stride_grid(items, block, 8), block](*device.kernel_args(args))


def _peel(g, k_min, block_size, fused):
    """Peel the simple undirected view: first every vertex outside the ``k_min``-core at once
    (SIMD-X's early stop: decrements only reach live vertices, so nothing below ``k_min`` is
    ordered by level, and all of it gets core number ``k_min - 1``), then level by level from
    ``k_min + 1``.  Returns (core, Info): exact core numbers for the ``k_min``-core's members.
    Info: ``iterations`` = peel rounds, ``levels`` = levels that peeled something."""
    xp = device.xp
    und = g.simple_undirected()
    n = g.n
    degree = und.out_degree.astype(np.int32)
    core = xp.full(n, -1, dtype=np.int32)  # -1: live
    if fused:
        return _peel_fused(und, degree, core, k_min, block_size)
    queues = [xp.empty(max(n, 1), dtype=np.int32) for _ in range(2)]
    count = xp.zeros(1, dtype=np.int32)
    lowest = xp.zeros(1, dtype=np.int32)
    big = np.iinfo(np.int32).max
    info = Info(variant=dict(levels=0, fused=False))
    live, k, first = n, max(1, int(k_min)), True
    while live:
        if not first:  # skip the levels nobody is under
            lowest.fill(big)
            _launch(kernels.min_live_degree, n, block_size, degree, core, lowest)
            k = max(k, int(lowest[0]) + 1)
        first = False
        count.fill(0)
        _launch(kernels.peel_below, n, block_size, degree, core, np.int32(k), queues[0], count)
        size = int(count[0])
        info.variant["levels"] += size > 0
        while size:  # rounds of level k until nobody falls below k
            live -= size
            info.iterations += 1
            count.fill(0)
            _launch(kernels.peel_round, size * kernels.WARP, block_size, und.out_offsets,
                    und.out_indices, queues[0], np.int64(size), degree, core, np.int32(k),
                    queues[1], count)
            queues.reverse()
            size = int(count[0])
    info.converged = True
    return core, info


def _peel_fused(und, degree, core, k_min, block_size):
    xp = device.xp
    block = device.block_threads(block_size, 256, simulator_default=32)
    queues = xp.empty((2, max(und.n, 1)), dtype=np.int32)
    counts = xp.zeros(3, dtype=np.int32)
    lows = xp.full(2, kernels.BIG, dtype=np.int32)
    out = xp.zeros(2, dtype=np.int64)
    call = (und.out_offsets, und.out_indices, degree, core, queues, counts, lows,
            np.int32(max(1, int(k_min))), out)
    grid = 1
    if not device.is_simulator():
        grid = min(device.multiprocessor_count() * (2048 // block),
                   device.cooperative_blocks(kernels.peel_fused, call, block))
    ops.launch_kernel("fused peel", kernels.peel_fused, grid, block, *call)
    rounds, levels = (int(x) for x in device.to_host(out))
    info = Info(iterations=rounds, converged=True, variant=dict(levels=levels, fused=True))
    return core, info


@algorithm("core_number", summary="core number of every vertex by peeling",
           columns=("vertex", "core_number"), options=dict(fused=None, block_size=None),
           defaults=dict(fused=True), iterative=True)
def core_number(g, *, execution, return_info=False):
    """Core number of every vertex of the simple undirected view: ``vertex``, ``core_number``.

    Parameters
    ----------
    g : Graph
        Directions, self-loops and parallel edges are dropped (the simple undirected view).
    execution : Execution, optional
        How to run (also as keywords): ``fused`` (True: the whole peeling as one persistent
        kernel with grid-wide barriers between rounds; False: a kernel launch and a count read
        per round) and ``block_size``.
    return_info : bool
        Also return a RunInfo: ``iterations`` (peel rounds), ``levels`` (levels that peeled a
        vertex) and ``fused``.

    Example::

        >>> core_number(g)["core_number"].max()   # doctest: +SKIP
        4
    """
    core, info = _peel(g, 1, execution.block_size, execution.fused)
    return finish(g, "core_number", {"core_number": core}, info, return_info)


@algorithm("k_core", summary="the members of the k-core (core number >= k)",
           inputs=(Input("k", inputs.CORE_ORDER, help="the core order: members have core number >= k"),),
           columns=("vertex", "core_number"), options=dict(fused=None, block_size=None),
           defaults=dict(fused=True), iterative=True)
def k_core(g, k, *, execution, return_info=False):
    """The k-core's members: ``vertex``, ``core_number`` for the vertices whose core number is
    at least ``k`` (cuGraph returns the induced subgraph; these are its vertices).  Everything
    outside the k-core is peeled in one phase, with no order among the levels below k.

    Parameters
    ----------
    g : Graph
        As :func:`core_number`.
    k : int
        A non-negative integer.
    execution : Execution, optional
        ``fused`` and ``block_size`` as :func:`core_number`.
    return_info : bool
        Also return a RunInfo, as :func:`core_number`.

    Example::

        >>> k_core(g, 3)["vertex"].tolist()   # doctest: +SKIP
        [0, 1, 2, 3]
    """
    core, info = _peel(g, int(k), execution.block_size, execution.fused)
    df = finish(g, "k_core", {"core_number": core}, info, return_info=False)
    members = df[df["core_number"] >= int(k)].reset_index(drop=True)  # the rest hold k - 1
    try:
        members.attrs.update(info.as_dict())
    except AttributeError:
        pass
    return (members, info) if return_info else members
