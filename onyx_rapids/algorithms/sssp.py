"""Single-source shortest paths by delta-stepping (docs/algorithms.md, "sssp"), from one source or
from k sources at once.

    d(s) = 0,   d(v) = min_{u -> v} d(u) + w(u, v)   (float32, inf when unreachable)

Bulk-synchronous delta-stepping with a near and a far set (Meyer & Sanders; the near-far pile of
Davidson et al. 2014): the current bucket ends at the threshold T = (i+1) * delta.  A vertex is
*pending* while its distance is below the distance it last offered (``offered``, inf until it
first does).  Each round relaxes the out-edges of the pending vertices whose distance is below T
(the near frontier) by one min-combine edge pass, pushing or pulling as bfs does; pending
vertices at or above T wait (the far set, recomputed from the distances).  When no pending
vertex is below T, T jumps to the end of the bucket of the smallest waiting distance (empty
buckets are skipped).  The run ends when nothing is pending, so every vertex has offered its
final distance along all its out-edges: the distances are the fixpoint of the relaxation
whatever delta is (a tiny delta is Dijkstra-like, a huge one is Bellman-Ford).  With k sources
the distances are one n x k property (feature f from ``sources[f]``) and the frontier is the
union of the k frontiers: a vertex is pending while any feature is, keyed by its smallest
pending feature.

Predecessors (single source) come from a breadth-first search over the *tight* edges after the
distances are final, run on the Active-Compute-Combine engine (:func:`onyx_rapids.acc`, fused
into one kernel): u -> v is tight when ``d(u) + w == d(v)`` in the same float32 addition the
relaxation uses, and a vertex takes as parent the tight in-neighbour whose level reached it
first.  A parent is always one level closer to the source, so the predecessors form a tree even
across zero-weight cycles, where every edge of the cycle is tight.  Every reachable vertex has
a tight in-edge from a vertex outside any set of reachable non-source vertices (the one that
first wrote the smallest distance of the set), so the search reaches all of them.

Reduced execution (``Approximation(stop_changed_fraction=...)``, :mod:`._reduced`) stops a
bucket's relaxation early: the vertices it lowered in its last round keep their distance
without offering it, so distances only overestimate, and a vertex's distance is at least its
writer's plus the weight (the parent search takes those edges as tight).
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ..acc import AccOptions, acc
from .bfs import original_parents
from .. import inputs
from ..registry import Input, algorithm
from ._common import STARTS, Info, choose_direction, finish
from ._reduced import ChangedFraction

UNREACHED = np.float32(np.inf)  # distance of a vertex no source reaches (docs/algorithms.md)
HOPS_UNREACHED = 2**31 - 1  # parent search: not reached by the tight-edge search yet
# C of the automatic delta = C * mean weight / mean out-degree.  Davidson et al. take 32 (about
# a warp of light edges per vertex in a bucket); our buckets run to a fixpoint on acc, where
# fewer, larger buckets pay off, on R-MAT and on the grid alike (docs/performance.md)
DELTA_WARP = 256


@cuda.jit(device=True)
def relax(f, u, v, e, distance, weight):
    return distance[u, f] + weight[e, 0]


@cuda.jit(device=True)
def tight_hop(u, v, e, hops, distance, weight):
    """u's level + 1 along a tight edge (see the module docstring) into a reached v, unreached
    otherwise.  The test is ``<=``: final distances offer no less than ``distance[v]`` along
    any edge, so it is equality there, and it keeps the edges of a reduced run's unoffered
    distances."""
    if distance[u, 0] + weight[e, 0] <= distance[v, 0] < UNREACHED:
        return hops[u] + 1
    return HOPS_UNREACHED


@cuda.jit(device=True)
def hop_reached(v, hops):
    return hops[v] != HOPS_UNREACHED


@cuda.jit(device=True)
def relax_one(u, v, e, distance, weight):
    return distance[u] + weight[e, 0]


@cuda.jit(device=True)
def below_bound(v, distance, bound):
    return distance[v] < bound[0]


def default_delta(g, weight):
    """``DELTA_WARP`` (256) * mean edge weight / mean out-degree (m / n): Davidson et al.'s rule
    with a larger constant (see ``DELTA_WARP``); 1.0 when the graph has no
    edges or only zero weights (every distance is then 0 or inf, any delta does)."""
    if g.m == 0:
        return 1.0
    mean_weight = float(device.xp.mean(weight.astype(np.float64)))
    if not mean_weight > 0:
        return 1.0
    return DELTA_WARP * mean_weight / (g.m / max(g.n, 1))


def _edge_weights(g, weight=None):
    """The weight column ``weight`` (None: the graph's only one) as an m x 1 float32 property,
    1.0 for every edge of an unweighted graph; ValueError for a name the graph lacks, for
    several columns and no name, and for negative, NaN or infinite weights."""
    names = list(g.weight_names) if g.edge_weights is not None else []
    if weight is None:
        if g.edge_weights is None:
            return props.edge_values(g, 1, fill=1.0)
        if g.edge_weights.shape[1] != 1:
            raise ValueError(f"weight: the graph has {g.edge_weights.shape[1]} weight columns "
                             f"{names}; pass weight=<one of them>")
        j = 0
    elif not isinstance(weight, str) or weight not in names:
        have = (f"its weight columns are {names}" if names else "it has no weights (build it "
                "with weight=<column>, or leave sssp's weight=None for 1.0 per edge)")
        raise ValueError(f"weight={weight!r} is not a weight column of the graph; {have}")
    else:
        j = names.index(weight)
    column = device.xp.ascontiguousarray(g.edge_weights[:, j], dtype=np.float32)
    name = names[j] if names else str(j)
    for bad, what in ((~device.xp.isfinite(column), "NaN or infinite"), (column < 0, "negative")):
        where = device.xp.flatnonzero(bad)
        if where.size:
            raise ValueError(f"g: sssp needs finite, non-negative edge weights, but weight "
                             f"column {name!r} has {what} values on {g._describe_edges(where)}")
    return column.reshape(-1, 1)


@algorithm(
    "sssp", summary="shortest-path distances (delta-stepping) from one source or k at once",
    weights="used",
    inputs=(Input("source", inputs.VERTEX, required=False, help="one start vertex"),
            Input("sources", inputs.VERTICES, required=False, help="k start vertices at once")),
    columns=("vertex", "distance", "predecessor"),  # k sources: vertex, distance_{i}
    options=dict(direction=None, pull_fraction=None, filter=None, threshold=None, fused=None,
                 feature_aware=None, block_size=None, edge_access=None),
    defaults=dict(fused=True), refuse=STARTS, iterative=True,
    params=dict(delta=inputs.Float(0, low_open=True, optional=True)),
    approximation=dict(stop_changed_fraction=None))
def sssp(g, source=None, sources=None, *, delta=None, weight=None, execution,
         return_info=False):
    """Shortest-path distances from ``source`` (``vertex``, ``distance``, ``predecessor``) or
    from each of ``sources`` at once (``vertex``, ``distance_0``..``distance_{k-1}``); original
    ids, by delta-stepping.

    Parameters
    ----------
    g : Graph
    source : vertex id, optional
        The start vertex.
    sources : list of vertex ids, optional
        k start vertices run at once, one distance column each.
    delta : float, optional
        The bucket width (a positive finite number); ``None`` picks
        ``256 * mean weight / mean out-degree`` (Davidson et al. 2014's rule, whose constant is
        32, with fewer and larger buckets).  The result does not depend on delta, only the
        number of rounds does.
    weight : str, optional
        The weight column to use; ``None``: the graph's weight column when it has one (1.0 per
        edge when it has none).  Weights must be finite and non-negative.
    execution : Execution, optional
        How to run (also as keywords): ``direction`` (None: push from one source, "auto" for
        k sources), ``pull_fraction``, ``filter``, ``threshold``, ``fused`` (True),
        ``feature_aware`` (the k-source run), ``block_size``, and ``approximation``: an
        :class:`~onyx_rapids.Approximation` with ``stop_changed_fraction`` stops a bucket's
        relaxation once a round lowered fewer than that fraction of the vertices below the
        bucket's end, and no more than the round before (reduced execution: the vertices it
        lowered keep their distance without offering it, an overestimate; the next bucket
        goes on).
    return_info : bool
        Also return a RunInfo: rounds run (``iterations``), the ``buckets`` visited and the
        ``delta`` used; the knob and ``estimate`` of an approximate run.

    Distances are float32; an unreachable vertex gets ``inf`` (cuGraph writes float32 max).
    ``predecessor`` is null (pandas ``<NA>`` of an ``Int64`` column, a cuDF null) for the source
    and the unreachable vertices.
    Predecessors form a tree of tight edges rooted at the source, zero-weight cycles included
    (a bfs over the tight edges picks them).
    One source runs each bucket to its fixpoint on :func:`onyx_rapids.acc` (``active`` is
    "below the bucket's end", so vertices pushed past it wait for their bucket); k sources run
    as one k-feature property through ``edgemap``.

    Example::

        >>> df = sssp(g, source=0)                      # doctest: +SKIP
        >>> df.loc[df["vertex"] == 3, "distance"].item()  # doctest: +SKIP
        2.5
    """
    direction, pull_fraction = execution.direction, execution.pull_fraction
    feature_aware = execution.feature_aware
    if direction is None:
        direction = "push" if sources is None else "auto"
    starts = inputs.starts(g, source, sources)
    weight = _edge_weights(g, weight)
    if delta is None:
        delta = default_delta(g, weight[:, 0])

    xp = device.xp
    k = starts.size
    distance = props.vertex_property(g, k, fill=UNREACHED)
    distance[device.asarray(starts), xp.arange(k)] = 0
    offered = props.vertex_property(g, k, fill=UNREACHED)  # the distances last relaxed
    args = dict(distance=distance, weight=weight)
    options = ops.MapOptions(feature_aware=feature_aware, block_size=execution.block_size)
    info = Info(variant=dict(feature_aware=feature_aware, direction=direction, delta=delta,
                             buckets=0), directions=[])
    reduced = ChangedFraction(execution.approximation, g.n)
    if sources is None:
        _one_source(g, distance[:, 0], weight, delta, info,
                    AccOptions.of(execution, direction=direction), reduced)
    bound = -math.inf
    while sources is not None:
        pending = distance < offered
        key = xp.where(pending, distance, UNREACHED).min(axis=1).astype(np.float64)
        waiting = pending.any(axis=1)
        if not bool(waiting.any()):
            break
        near = key < bound
        changed = int(near.sum())  # lowered below the bucket's end by the last round
        if changed and reduced.stops(changed):  # the bucket stops: near keeps its distances
            offered[near] = distance[near]
            continue
        if not changed:  # next non-empty bucket: the one of the smallest waiting key
            reduced.restart()
            low = float(key[waiting].min())
            bound = (math.floor(low / delta) + 1) * delta
            if not bound > low:  # rounding at extreme delta: still take the smallest
                bound = float(np.nextafter(low, np.inf))
            info.variant["buckets"] += 1
            near = key < bound
        offered[near] = distance[near]
        active = frontier.from_mask(near)
        info.iterations += 1
        way = choose_direction(g, active, direction, pull_fraction)
        info.directions.append(way)
        ops.edgemap(g, relax, "distance", args, reduce="min", k=k, active_in=active,
                    direction=way, options=options)
    info.converged = True
    reduced.record(info)
    if sources is not None:
        return finish(g, "sssp", {"distance_*": distance}, info, return_info)
    return finish(g, "sssp", {"distance": distance[:, 0],
                              "predecessor": _predecessors(g, distance, weight, starts[0],
                                                           direction, pull_fraction,
                                                           execution.edge_access)},
                  info, return_info)


def _one_source(g, dist, weight, delta, info, options, reduced):
    """Delta-stepping with each bucket run to its fixpoint on acc: the pending vertices below
    the bucket's end start it, and a vertex improved past the end is not active, so it stays
    pending until its bucket comes.  After a bucket every vertex below its end has offered its
    final distance (``reduced``, a :class:`~._reduced.ChangedFraction`, may stop a bucket's
    acc run early: those it left count as offered)."""
    xp = device.xp
    offered = xp.full(g.n, UNREACHED, np.float32)
    bound = xp.zeros(1, np.float32)
    while True:
        pending = dist < offered
        if not bool(pending.any()):
            break
        low = np.float32(float(dist[pending].min()))  # a host scalar (CuPy: a 0-d array)
        end = np.float32((math.floor(float(low) / delta) + 1) * delta)
        if not end > low:  # rounding at extreme delta: still take the smallest
            end = np.nextafter(low, np.float32(np.inf))
        bound[0] = end
        info.variant["buckets"] += 1
        run = acc(g, dist, relax_one, combine="min", active=below_bound,
                  args=dict(weight=weight, bound=bound),
                  active_in=frontier.from_mask(pending & (dist < end)), options=options,
                  stop_below=reduced.below)
        if run.stopped:
            reduced.stopped(run.left)
        info.iterations += run.iterations
        info.directions.extend(run.directions)
        done = dist < end
        offered[done] = dist[done]


def _predecessors(g, distance, weight, start, direction, pull_fraction, edge_access):
    """Original-id predecessors by a bfs over the tight edges (see the module docstring), as
    ``(ids, valid)``: none (the source, unreachable vertices) is a null."""
    hops = device.full(g.n, HOPS_UNREACHED, np.int32)
    hops[start] = 0
    parent = device.full(g.n, -1, g.out_indices.dtype)
    acc(g, hops, tight_hop, combine="min", settled=hop_reached,
        args=dict(distance=distance, weight=weight),
        active_in=frontier.from_vertices(g.n, [start]), parent=parent,
        options=AccOptions(direction=direction, pull_fraction=pull_fraction, fused=True,
                           edge_access=edge_access))
    return original_parents(g, parent)
