"""Weakly connected components (docs/algorithms.md): by concurrent union-find (the default,
``method="hook"``) or by min-label propagation with pointer jumping (``method="propagate"``).

``"hook"`` (:mod:`onyx_rapids.kernels.union_find`): union-find on the simple undirected view,
the larger of two roots hooked under the smaller with a compare-and-swap, edges taken in
Afforest's order (each vertex's first two neighbours, then the other edges of the vertices
outside the largest component only); at most one pass over the edges whatever the diameter,
and the root of a component is its smallest internal id.

``"propagate"``:

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

Reduced execution (``Approximation(stop_changed_fraction=...)``, ``"propagate"`` only,
:mod:`._reduced`): the propagation stops after a round in which fewer than that fraction of the
vertices took a smaller label (and no more than in the round before), then jumps the labels
once more.  A label is still an id of the vertex's component, so components may be split,
never merged.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, inputs, operators as ops
from ..acc import AccOptions, acc
from ..kernels import union_find
from ..registry import algorithm, unsupported
from . import _merged
from ._common import Info, finish
from ._reduced import ChangedFraction

METHODS = ("hook", "propagate")
PROPAGATE_DEFAULTS = dict(direction="auto", fused=False)  # options left at None


@cuda.jit(device=True)
def offer_label(u, v, e, label):
    return label[u]


@algorithm(
    "weakly_connected_components",
    summary="component labels (smallest original id) by union-find or label propagation",
    columns=("vertex", "labels"),
    options=dict(direction=None, pull_fraction=None, filter=None, threshold=None, fused=None,
                 block_size=None, edge_access=None),
    iterative=True, params=dict(jump_every=inputs.Int(1, optional=True)),
    approximation=dict(stop_changed_fraction=None, merge_similarity=None))
def weakly_connected_components(g, *, method="hook", jump_every=None, execution,
                                return_info=False):
    """Component label of every vertex: ``vertex``, ``labels`` (the smallest original id of
    the vertex's weakly connected component).

    Parameters
    ----------
    g : Graph
        Directions are dropped (the simple undirected view).
    method : {"hook", "propagate"}
        ``"hook"`` (default: union-find, one pass over the edges) or ``"propagate"`` (min-label
        propagation on :func:`onyx_rapids.acc`).
    jump_every : int, optional
        ``"propagate"`` only: rounds of propagation between pointer-jumping passes; ``None``
        propagates to the end with no jumping (e.g. 16 on high-diameter graphs, where plain
        propagation needs a round per hop).
    execution : Execution, optional
        How to run (also as keywords): ``block_size``, and for ``"propagate"`` only
        ``direction`` ("auto"), ``pull_fraction``, ``filter``, ``threshold``, ``fused``
        (False) and ``edge_access``; ``approximation``: an
        :class:`~onyx_rapids.Approximation` with ``stop_changed_fraction`` (``"propagate"``
        only) stops once a round changed fewer than that fraction of the labels, and no more
        than the round before (reduced execution: a component may come out split);
        ``merge_similarity`` runs on the graph of merged similar neighbours (exact: a group
        is connected).
    return_info : bool
        Also return a RunInfo (``method``; ``phases`` for ``"propagate"``; the knob and
        ``estimate`` of an approximate run).

    Example::

        >>> weakly_connected_components(g)["labels"].nunique()   # doctest: +SKIP
        3
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if _merged.knob(execution) is not None:
        return _merged.components(g, weakly_connected_components, execution, return_info,
                                  smallest_ids, method=method, jump_every=jump_every)
    if method == "hook":
        if execution.approximation is not None:
            raise unsupported("weakly_connected_components",
                              f"approximation {execution.approximation!r} with method='hook'",
                              "union-find makes one pass over the edges, with no rounds for "
                              "stop_changed_fraction to stop; pass method='propagate'")
        given = {name: value for name, value in execution.changed().items()
                 if name != "block_size"}
        if jump_every is not None:
            raise ValueError(f"jump_every={jump_every!r}: only method='propagate' takes it")
        if given:
            shown = ", ".join(f"{name}={value!r}" for name, value in sorted(given.items()))
            raise unsupported("weakly_connected_components",
                              f"the execution option(s) {shown} with method='hook'",
                              "union-find takes only block_size; pass method='propagate' to "
                              "use them")
        label = _hook(g.simple_undirected(), execution.block_size)
        info = Info(iterations=1, converged=True, variant=dict(method="hook"))
        return finish(g, "weakly_connected_components", {"labels": smallest_ids(g, label)}, info,
                      return_info)
    fill = {name: value for name, value in PROPAGATE_DEFAULTS.items()
            if getattr(execution, name) is None}
    return _propagate(g, execution=execution.replace(**fill), jump_every=jump_every,
                      return_info=return_info)


SAMPLE = 1024  # vertices whose roots vote for the giant component


def smallest_ids(g, root, smallest_root=True):
    """The smallest original id of each vertex's component (a result column:
    ``VertexIds.column``), given any one internal vertex of the component per vertex
    (``root``).  In ascending id order a root that is the smallest internal index of its
    component (``smallest_root``, union-find's) already is it; a reordered graph
    (:meth:`Graph.reorder`) or other roots take the minimum per component."""
    if g.vertex_order == "id" and smallest_root:
        return g.id_map.column(g.vertices[root])
    xp = device.xp
    ids = g.vertices
    order = g.id_order()  # by id, then stably by component
    order = order[xp.argsort(root[order], kind="stable")]
    first = xp.ones(order.shape[0], dtype=bool)
    first[1:] = root[order][1:] != root[order][:-1]
    best = xp.empty(g.n, dtype=ids.dtype)
    best[root[order][first]] = ids[order][first]
    return g.id_map.column(best[root])


def _hook(und, block_size):
    """Root (smallest internal id) of every vertex's component, by union-find on the edges
    (Afforest order: two neighbour-sampling rounds, then the rest outside the giant)."""
    block = device.block_threads(block_size, 256)
    xp = device.xp
    grid = device.stride_grid(und.n, block, 16)
    off, idx = und.out_offsets, und.out_indices
    parent = xp.arange(und.n, dtype=idx.dtype)
    if und.n == 0:
        return parent
    off, idx, view = device.kernel_args((off, idx, parent))
    for r in range(2):
        ops.launch_kernel("union-find link_neighbour", union_find.link_neighbour, grid, block,
                          off, idx, view, np.int64(r))
        ops.launch_kernel("union-find compress", union_find.compress, grid, block, view)
    roots, votes = xp.unique(parent[xp.linspace(0, und.n - 1, min(SAMPLE, und.n))
                                    .astype(np.int64)], return_counts=True)
    giant = np.dtype(idx.dtype).type(int(roots[int(votes.argmax())]))  # a host scalar
    ops.launch_kernel("union-find link_rest", union_find.link_rest, grid, block, off, idx,
                      view, np.int64(2), giant)
    ops.launch_kernel("union-find compress", union_find.compress, grid, block, view)
    return parent


def _propagate(g, *, execution, jump_every, return_info):
    und = g.simple_undirected()
    label = device.xp.arange(g.n, dtype=g.out_indices.dtype)
    total = dict(iterations=0, push=0, pull=0, ballot=0)
    directions = []
    phases, options = 0, AccOptions.of(execution)
    reduced = ChangedFraction(execution.approximation, g.n)
    while True:
        phases += 1
        run = acc(und, label, offer_label, combine="min", max_iter=jump_every,
                  options=options, stop_below=reduced.below)
        if run.stopped:
            reduced.stopped(run.left)
        for key in ("iterations", "push", "pull", "ballot"):
            total[key] += getattr(run, key)
        directions.extend(run.directions)
        jumped = False
        while True:  # label <- label[label] until no label moves
            further = label[label]
            if not bool((further != label).any()):
                break
            label = further
            jumped = True
        if run.stopped or (run.converged and not jumped):
            break
    info = Info(iterations=total["iterations"], converged=True, directions=directions,
                variant=dict(direction=execution.direction, filter=execution.filter,
                             fused=bool(execution.fused),
                             push_iterations=total["push"], pull_iterations=total["pull"],
                             ballot_iterations=total["ballot"], method="propagate",
                             phases=phases))
    reduced.record(info)
    return finish(g, "weakly_connected_components", {"labels": smallest_ids(g, label)}, info,
                  return_info)
