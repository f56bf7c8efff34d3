"""Breadth-first search (docs/algorithms.md, "bfs") from one source or from k sources at once.

    d(s) = 0,   d(v) = min_{u -> v, u in frontier} d(u) + 1,   frontier' = {v : d(v) improved}

Level by level, the frontier offers ``d(u) + 1`` along its out-edges and the heads keep the
minimum (a min-combine: atomics when pushing, a register reduction when pulling).  With k
sources the distances are one n x k property, feature f holding the hops from source f, and the
frontier is the union of the k frontiers: a vertex stays in it while any feature improved.
``direction='auto'`` pushes while the frontier's out-edges are under ``pull_fraction`` of all
edges and pulls above (the Ligra / SIMD-X rule).  A predecessor (single source) is the frontier
vertex whose offer reached v: every offer of one level is the same d + 1, so whichever write
lands is a valid parent.

One source runs on the Active-Compute-Combine engine (:func:`onyx_rapids.acc`): ``filter``
(jit / online / ballot worklists, ``threshold`` entries per thread-private bin), ``fused`` (one
persistent kernel for all levels) and push / pull / auto per level.  k sources run as one
k-feature property through ``edgemap`` (feature-aware mapping, union frontier).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ..acc import AccOptions, acc
from ..io.results import identity_ids
from .. import inputs
from ..registry import Input, algorithm
from ._common import STARTS, Info, choose_direction, finish

UNREACHED = 2**31 - 1  # int32 distance of a vertex no source reaches, as cuGraph


@cuda.jit(device=True)
def offer(f, u, v, e, distance, unreached):
    d = distance[u, f]
    return unreached if d == unreached else d + 1


@cuda.jit(device=True)
def hop(u, v, e, distance):
    return distance[u] + 1


@cuda.jit(device=True)
def reached(v, distance):
    return distance[v] != UNREACHED


def acc_facts(run, direction, filter) -> dict:
    """The variant record of a traversal on :func:`onyx_rapids.acc`: options and how it went."""
    return dict(direction=direction, filter=filter, fused=run.fused,
                push_iterations=run.push, pull_iterations=run.pull,
                ballot_iterations=run.ballot)


def original_parents(g, parent):
    """``(original ids, valid)`` of internal parents (-1: none; a labelled graph's labels:
    ``VertexIds.column``), the masked column that
    :func:`onyx_rapids.io.to_frame` writes as nulls: no predecessor is a null, never a vertex id
    (-1 may be one)."""
    if identity_ids(g):  # ids are internal ones: the masked column needs no gather
        return parent, parent >= 0
    xp = device.xp
    return g.id_map.column(g.vertices[xp.maximum(parent, 0)], parent >= 0)


@algorithm(
    "bfs", summary="hop distances from one source or k sources at once",
    inputs=(Input("source", inputs.VERTEX, required=False, help="one start vertex (cuGraph: start)"),
            Input("sources", inputs.VERTICES, required=False, help="k start vertices at once")),
    columns=("vertex", "distance", "predecessor"),  # k sources: vertex, distance_{i}
    options=dict(direction=None, pull_fraction=None, filter=None, threshold=None, fused=None,
                 feature_aware=None, block_size=None, edge_access=None),
    defaults=dict(direction="auto", fused=True), refuse=STARTS, iterative=True)
def bfs(g, source=None, sources=None, *, start=None, execution, return_info=False):
    """Hop distances from ``source`` (``vertex``, ``distance``, ``predecessor``) or from each of
    ``sources`` at once (``vertex``, ``distance_0``..``distance_{k-1}``); original ids.

    Parameters
    ----------
    g : Graph
    source : vertex id, optional
        The start vertex (``start`` is cuGraph's name for it; give one of them).
    sources : list of vertex ids, optional
        k start vertices run at once, one distance column each.
    execution : Execution, optional
        How to run (also as keywords): ``direction`` ("auto"), ``pull_fraction``, ``filter``,
        ``threshold``, ``fused`` (True: the single-source traversal runs as one persistent
        kernel), ``feature_aware`` (the k-source run), ``block_size``, ``edge_access`` (the
        single-source run: how a vertex's edges are read; "aligned" on a host-placed graph).
    return_info : bool
        Also return a :class:`~onyx_rapids.algorithms._common.RunInfo`.

    Unreachable vertices get distance 2^31 - 1, as cuGraph's.  ``predecessor`` is null (pandas
    ``<NA>`` of an ``Int64`` column, a cuDF null) where there is none: the source and the
    unreachable vertices.
    ``filter``, ``threshold`` and ``fused`` tune the single-source engine (see
    :func:`onyx_rapids.acc`).

    Example::

        >>> bfs(g, source=0)["distance"].max()   # doctest: +SKIP
        3
    """
    if start is not None:
        if source is not None:
            raise ValueError(f"give source or its cuGraph name start, not both (source={source!r}, "
                             f"start={start!r})")
        source = start
    direction, pull_fraction = execution.direction, execution.pull_fraction
    feature_aware = execution.feature_aware
    starts = inputs.starts(g, source, sources)
    k = starts.size
    if sources is None:
        distance = props.vertex_property(g, 1, fill=UNREACHED, dtype=np.int32)[:, 0]
        distance[int(starts[0])] = 0  # one small write, no copy of the start to the device
        parent = device.full(g.n, -1, g.out_indices.dtype)
        run = acc(g, distance, hop, combine="min", settled=reached,
                  active_in=frontier.from_vertices(g.n, starts), parent=parent,
                  same_offers=True, options=AccOptions.of(execution))
        info = Info(iterations=run.iterations, converged=run.converged,
                    variant=acc_facts(run, direction, execution.filter), directions=run.directions)
        return finish(g, "bfs", {"distance": distance,
                                 "predecessor": original_parents(g, parent)}, info, return_info)
    distance = props.vertex_property(g, k, fill=UNREACHED, dtype=np.int32)
    distance[device.asarray(starts), device.xp.arange(k)] = 0
    args = dict(distance=distance, unreached=UNREACHED)
    options = ops.MapOptions(feature_aware=feature_aware, block_size=execution.block_size)
    active = frontier.from_vertices(g.n, np.unique(starts))
    info = Info(variant=dict(feature_aware=feature_aware, direction=direction), directions=[])
    while frontier.any_active(active):
        info.iterations += 1
        way = choose_direction(g, active, direction, pull_fraction)
        info.directions.append(way)
        active = ops.edgemap(g, offer, "distance", args, reduce="min", active_in=active,
                             active_out=frontier.empty(g.n), direction=way, k=k,
                             options=options)
    info.converged = True
    return finish(g, "bfs", {"distance_*": distance}, info, return_info)

