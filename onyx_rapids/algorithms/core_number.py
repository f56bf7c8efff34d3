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


def _peel(g, k_min, feature_aware, block_size):
    """Peel the simple undirected view: first every vertex outside the ``k_min``-core at once
    (SIMD-X's early stop: decrements only reach live vertices, so nothing below ``k_min`` is
    ordered by level, and all of it gets core number ``k_min - 1``), then level by level from
    ``k_min + 1``.  Returns (core, Info): exact core numbers for the ``k_min``-core's members."""
    xp = device.xp
    und = g.simple_undirected()
    degree = und.out_degree.astype(np.int32)[:, None].copy()
    alive = xp.ones(g.n, dtype=np.bool_)
    core = xp.zeros(g.n, dtype=np.int32)
    args = dict(degree=degree, alive=alive)
    info = Info(variant=dict(feature_aware=feature_aware))
    first = True
    k = max(1, k_min)
    big = np.int32(np.iinfo(np.int32).max)
    while bool(alive.any()):
        if not first:  # skip the levels nobody is under (no boolean indexing: no extra sync)
            k = max(k, int(xp.where(alive, degree[:, 0], big).min()) + 1)
        while True:  # level k: peel until no live vertex is under k
            peel = alive & (degree[:, 0] < k)
            if not bool(peel.any()):
                break
            info.iterations += 1
            core = xp.where(peel, np.int32(k - 1), core)
            alive &= ~peel
            ops.edgemap(und, lose_neighbour, "degree", args, active_in=frontier.from_mask(peel),
                        direction="push", k=1, feature_aware=feature_aware,
                        block_size=block_size)
        first = False
    info.converged = True
    return core, info


def core_number(g, *, feature_aware=True, block_size=None, return_info=False):
    """Core number of every vertex of the simple undirected view: ``vertex``, ``core_number``.

    Example::

        >>> core_number(g)["core_number"].max()   # doctest: +SKIP
        4
    """
    core, info = _peel(g, 1, feature_aware, block_size)
    return finish(g, "core_number", {"core_number": core}, info, return_info)


def k_core(g, k, *, feature_aware=True, block_size=None, return_info=False):
    """The k-core's members: ``vertex``, ``core_number`` for the vertices whose core number is
    at least ``k`` (cuGraph returns the induced subgraph; these are its vertices).  Everything
    outside the k-core is peeled in one phase, with no order among the levels below k.

    Example::

        >>> k_core(g, 3)["vertex"].tolist()   # doctest: +SKIP
        [0, 1, 2, 3]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    core, info = _peel(g, int(k), feature_aware, block_size)
    df = finish(g, "k_core", {"core_number": core}, info, return_info=False)
    members = df[df["core_number"] >= int(k)].reset_index(drop=True)  # the rest hold k - 1
    try:
        members.attrs.update(info.as_dict())
    except AttributeError:
        pass
    return (members, info.as_dict()) if return_info else members
