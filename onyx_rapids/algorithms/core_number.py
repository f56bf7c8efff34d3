"""Core numbers and k-cores (ALGORITHMS.md item 12) by peeling, as SIMD-X.

On the simple undirected view: at level k every live vertex of degree < k is peeled (its core
number is k - 1) and each of its live neighbours loses one degree; that may bring them under k,
so the level repeats until no live vertex is under k, then k rises to one more than the
smallest live degree.  Decrements only touch live vertices (a peeled vertex's degree no longer
matters).  ``k_core(k)`` keeps the vertices of core number >= k.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops
from ._common import Info, finish


@cuda.jit(device=True)
def lose_neighbour(f, u, v, e, alive):
    return -1 if alive[v] else 0


def core_number(g, *, feature_aware=True, block_size=None, return_info=False):
    """Core number of every vertex of the simple undirected view: ``vertex``, ``core_number``.

    Example::

        >>> core_number(g)["core_number"].max()   # doctest: +SKIP
        4
    """
    xp = device.xp
    und = g.simple_undirected()
    degree = und.out_degree.astype(np.int32)[:, None].copy()
    alive = xp.ones(g.n, dtype=np.bool_)
    core = xp.zeros(g.n, dtype=np.int32)
    args = dict(degree=degree, alive=alive)
    info = Info(variant=dict(feature_aware=feature_aware))
    k = 1
    while bool(alive.any()):
        k = max(k, int(degree[alive, 0].min()) + 1)  # skip the levels nobody is under
        while True:  # level k: peel until no live vertex is under k
            peel = alive & (degree[:, 0] < k)
            if not bool(peel.any()):
                break
            info.iterations += 1
            core[peel] = k - 1
            alive &= ~peel
            ops.edgemap(und, lose_neighbour, "degree", args, active_in=frontier.from_mask(peel),
                        direction="push", k=1, feature_aware=feature_aware,
                        block_size=block_size)
    info.converged = True
    return finish(g, "core_number", {"core_number": core}, info, return_info)


def k_core(g, k, *, feature_aware=True, block_size=None, return_info=False):
    """The k-core's members: ``vertex``, ``core_number`` for the vertices whose core number is
    at least ``k`` (cuGraph returns the induced subgraph; these are its vertices)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    df, info = core_number(g, feature_aware=feature_aware, block_size=block_size,
                           return_info=True)
    members = df[df["core_number"] >= int(k)].reset_index(drop=True)
    return (members, info) if return_info else members
