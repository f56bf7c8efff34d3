"""Weakly connected components (ALGORITHMS.md item 11) by min-label propagation.

    label(v) = v,   label(v) = min(label(v), min_{u ~ v, u active} label(u))

on the simple undirected view (directions dropped), until no label moves.  Internal ids are
ascending in the original ids, so the smallest internal id of a component is its smallest
original id, which becomes its label.  It runs on the Active-Compute-Combine engine
(:func:`onyx_rapids.acc`): only vertices whose label dropped offer it in the next round, pushing
or pulling per round as ``direction`` says, with the ``filter`` / ``fused`` options of the
engine.
"""

from __future__ import annotations

from numba import cuda

from .. import device
from ..acc import acc
from ._common import Info, acc_variant, check_traversal_options, finish


@cuda.jit(device=True)
def offer_label(u, v, e, label, aux):
    return label[u]


def weakly_connected_components(g, *, direction="auto", pull_fraction=0.3, filter="jit",
                                threshold=64, fused=False, block_size=None, return_info=False):
    """Component label of every vertex: ``vertex``, ``labels`` (the smallest original id of
    the vertex's weakly connected component).

    Example::

        >>> weakly_connected_components(g)["labels"].nunique()   # doctest: +SKIP
        3
    """
    check_traversal_options(direction, pull_fraction)
    und = g.simple_undirected()
    label = device.xp.arange(g.n, dtype=g.out_indices.dtype)
    run = acc(und, label, offer_label, combine="min", direction=direction,
              pull_fraction=pull_fraction, filter=filter, threshold=threshold, fused=fused,
              block_size=block_size)
    info = Info(iterations=run["iterations"], converged=run["converged"],
                variant=acc_variant(run, direction, filter))
    return finish(g, "weakly_connected_components", {"labels": g.vertices[label]}, info,
                  return_info)
