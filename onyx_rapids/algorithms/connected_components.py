"""Weakly connected components (ALGORITHMS.md item 11) by min-label propagation.

    label(v) = v,   label(v) = min(label(v), min_{u ~ v, u active} label(u))

on the simple undirected view (directions dropped), until no label moves.  Internal ids are
ascending in the original ids, so the smallest internal id of a component is its smallest
original id, which becomes its label.  Only vertices whose label dropped in a round offer it
in the next (change-driven), pushing or pulling per round as ``direction`` says.
"""

from __future__ import annotations

from numba import cuda

from .. import device, frontier, operators as ops
from ._common import Info, check_traversal_options, choose_direction, finish


@cuda.jit(device=True)
def offer_label(f, u, v, e, label):
    return label[u, f]


def weakly_connected_components(g, *, direction="auto", pull_fraction=0.3, feature_aware=True,
                                block_size=None, return_info=False):
    """Component label of every vertex: ``vertex``, ``labels`` (the smallest original id of
    the vertex's weakly connected component).

    Example::

        >>> weakly_connected_components(g)["labels"].nunique()   # doctest: +SKIP
        3
    """
    check_traversal_options(direction, pull_fraction)
    und = g.simple_undirected()
    label = device.xp.arange(g.n, dtype=g.out_indices.dtype)[:, None].copy()
    args = dict(label=label)
    active = frontier.full(g.n)
    info = Info(variant=dict(feature_aware=feature_aware, direction=direction))
    while frontier.any_active(active):
        info.iterations += 1
        way = choose_direction(und, active, direction, pull_fraction)
        active = ops.edgemap(und, offer_label, "label", args, reduce="min", active_in=active,
                             active_out=frontier.empty(g.n), direction=way, k=1,
                             feature_aware=feature_aware, block_size=block_size)
    info.converged = True
    return finish(g, "weakly_connected_components", {"labels": g.vertices[label[:, 0]]}, info,
                  return_info)
