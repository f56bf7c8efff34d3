"""Weakly connected components (ALGORITHMS.md item 11) by min-label propagation with pointer
jumping.

    label(v) = v,   label(v) = min(label(v), min_{u ~ v, u active} label(u))

on the simple undirected view (directions dropped), until no label moves.  Internal ids are
ascending in the original ids, so the smallest internal id of a component is its smallest
original id, which becomes its label.  The propagation runs on the Active-Compute-Combine engine
(:func:`onyx_rapids.acc`): only vertices whose label dropped offer it in the next round, pushing
or pulling per round as ``direction`` says, with the ``filter`` / ``fused`` options of the
engine.  Plain propagation needs as many rounds as the component's diameter, so the rounds come
in phases of ``jump_every``: after each phase every label jumps to its label's label until none
moves (label(v) <- label(label(v)), Shiloach-Vishkin's shortcut: a label is always an id of the
same component, so it stays valid), and the next phase starts from every vertex.  The run ends
with a phase that converges with nothing left to jump, which is the propagation's fixpoint.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device
from ..acc import acc
from ._common import Info, acc_variant, check_traversal_options, finish


@cuda.jit(device=True)
def offer_label(u, v, e, label, aux):
    return label[u]


def weakly_connected_components(g, *, direction="auto", pull_fraction=0.3, filter="jit",
                                threshold=64, fused=False, jump_every=None, block_size=None,
                                return_info=False):
    """Component label of every vertex: ``vertex``, ``labels`` (the smallest original id of
    the vertex's weakly connected component).  ``jump_every`` rounds of propagation run between
    pointer-jumping passes (``None``, the default: propagate to the end, no jumping; e.g. 16 on
    high-diameter graphs, where plain propagation needs a round per hop).

    Example::

        >>> weakly_connected_components(g)["labels"].nunique()   # doctest: +SKIP
        3
    """
    check_traversal_options(direction, pull_fraction)
    if jump_every is not None and (isinstance(jump_every, bool)
                                   or not isinstance(jump_every, (int, np.integer))
                                   or jump_every < 1):
        raise ValueError(f"jump_every must be a positive integer or None, got {jump_every!r}")
    und = g.simple_undirected()
    label = device.xp.arange(g.n, dtype=g.out_indices.dtype)
    total = dict(iterations=0, push=0, pull=0, ballot=0, fused=bool(fused))
    phases = 0
    while True:
        phases += 1
        run = acc(und, label, offer_label, combine="min", direction=direction,
                  pull_fraction=pull_fraction, filter=filter, threshold=threshold, fused=fused,
                  max_iter=jump_every, block_size=block_size)
        for key in ("iterations", "push", "pull", "ballot"):
            total[key] += run[key]
        jumped = False
        while True:  # label <- label[label] until no label moves
            further = label[label]
            if not bool((further != label).any()):
                break
            label = further
            jumped = True
        if run["converged"] and not jumped:
            break
    info = Info(iterations=total["iterations"], converged=True,
                variant=dict(acc_variant(total, direction, filter), phases=phases))
    return finish(g, "weakly_connected_components", {"labels": g.vertices[label]}, info,
                  return_info)
