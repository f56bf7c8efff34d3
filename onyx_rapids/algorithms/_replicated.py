"""Graffix's vertex replication for memory coalescing (knob ``replicate_threshold`` of
:class:`~onyx_rapids.approximation.Approximation`, refined by ``replicate_sync``): PageRank on a
layout where a vertex well connected to a far warp of vertices gets a copy inside it.

The vertices are numbered in BFS order (:func:`~onyx_rapids.construction.device.bfs_order` on
the simple undirected view, Graffix's BFS-level renumbering) and cut into chunks of
``CHUNK = 32`` consecutive positions, a warp's lanes.  With ``e(v, C)`` the edges from v into
chunk C (v outside C) and ``d(v)`` v's out-degree, v gets a replica in C when

    e(v, C) >= 2  and  e(v, C) / d(v) >= t      (t the knob)

The new slots are each chunk's members (in BFS order), then its replicas (by their masters'
positions), so the sources a chunk's threads read sit next to their own rows.  An edge
v -> u whose u's chunk holds a replica of v reads the replica's slot, every other edge its
master's.  PageRank (uniform teleport, the dangling mass and the L1 stop test of
:func:`onyx_rapids.pagerank`, float32 ranks) runs as a pull, a thread per vertex (master
slot), with each edge's ``w / outw(master)`` precomputed; every ``replicate_sync`` iterations
the replicas take their masters' values.  At 1 they always hold the value of the iteration
that just ended: the exact PageRank up to float rounding.  Above 1 they serve stale values in
between: the approximation.  Each vertex's value is read back from its master slot.

The layout (built once per graph, knob value and weight column, cached on the graph) is
reported in ``RunInfo.estimate``: ``replicas``, ``replicated_edges`` (edges reading a
replica), ``chunks``, ``replicate_build_ms`` (this call's milliseconds building it; 0 when
the cache held it), ``reconciles`` (the replicas' updates) and ``l1_change`` (of the last
iteration).  :func:`run` with ``threshold=None`` runs the same kernels on the BFS-ordered
graph without replicas: the baseline that isolates the replicas' effect.

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> knob = onyx.Approximation(replicate_threshold=0.2)
    >>> df, info = onyx.pagerank(g, approximation=knob, return_info=True)
    >>> len(df) == g.n, info.estimate["replicas"] > 0, round(float(df["pagerank"].sum()), 4)
    (True, True, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, float64

from .. import device, operators as ops, properties as props
from ..construction import device as device_build
from ..kernels.collective import warp_sum
from ..kernels.disk_cache import persist
from ..registry import CHANGED, Refuse
from ._common import RunInfo, cached_build, finish

__all__ = ["CHUNK", "RULES", "Layout", "knob", "layout", "pagerank", "run"]

CHUNK = 32  # a chunk: the positions of a warp's lanes
WARP = 32

#: pagerank's rules while the knob is on: its own bulk pull, a uniform teleport
RULES = tuple(Refuse(when, reason, knobs=("replicate_threshold",), **variant) for
              when, reason, variant in (
    (dict(change_driven=(True, "auto"), approximation=CHANGED),
     "replicate_threshold runs its own bulk pull iterations; leave change_driven False", {}),
    (dict(direction="push", approximation=CHANGED),
     "replicate_threshold pulls; leave direction unset or 'pull'", {}),
    (dict(approximation=CHANGED), "replicate_threshold runs the uniform teleport only; drop "
     "personalization or the knob",
     dict(inputs=dict(personalization=True), variant="with personalization")))) + tuple(
    Refuse(dict(approximation=CHANGED), f"replicate_threshold runs its own loop, without {other}",
           knobs=("replicate_threshold", other))
    for other in ("stop_changed_fraction", "stop_top_k", "activation_threshold", "edge_fraction"))


def knob(execution) -> float | None:
    """The ``replicate_threshold`` of ``execution`` (None: off)."""
    a = execution.approximation
    return None if a is None else a.replicate_threshold


@dataclass
class Layout:
    """The replicated layout: ``target[i]`` the slot of the i-th vertex in BFS order (its
    in-edges the CSC row i: ``offsets``, ``sources`` slots, ``factor`` = w / outw(master)),
    ``dead[i]`` whether it is dangling, ``slot[v]`` the slot of g's internal vertex v,
    ``replica`` / ``master`` the replicas' slots and their masters'; ``slots`` in all."""

    offsets: object
    sources: object
    factor: object
    target: object
    dead: object
    slot: object
    replica: object
    master: object
    slots: int
    replicated_edges: int
    chunks: int


def replicas(position, src, dst, threshold):
    """``(keys, counts, replicated, edge_key)``: the pairs (v, C) of an edge v -> u into a
    chunk C other than v's (``key = v * chunks + C``, ascending; ``position``: each vertex's
    BFS position), their edge counts ``e(v, C)``, whether v gets a replica in C (threshold
    None: never), and each edge's index into ``keys`` (-1: inside its source's chunk)."""
    xp = device.xp
    n = position.shape[0]
    chunks = max(1, -(-n // CHUNK))
    chunk = position // CHUNK
    outside = chunk[src] != chunk[dst]
    key = src * chunks + chunk[dst]
    keys, inverse, counts = xp.unique(key[outside], return_inverse=True, return_counts=True)
    edge_key = xp.full(src.shape[0], -1, np.int64)
    edge_key[outside] = inverse.reshape(-1)
    degree = xp.bincount(src, minlength=n)
    v = keys // chunks
    if threshold is None:
        replicated = xp.zeros(keys.shape[0], bool)
    else:
        replicated = (counts >= 2) & (counts / degree[v] >= threshold)
    return keys, counts, replicated, edge_key


def _build(g, threshold, weights) -> Layout:
    xp = device.xp
    n = g.n
    order = device_build.bfs_order(g.simple_undirected())
    position = xp.empty(n, np.int64)
    position[order] = xp.arange(n, dtype=np.int64)
    src, dst = g.edge_sources.astype(np.int64), g.out_indices.astype(np.int64)
    keys, _, replicated, edge_key = replicas(position, src, dst, threshold)
    chunks = max(1, -(-n // CHUNK))
    chunk = position // CHUNK
    # slots: chunk C's members, then its replicas (ordered by their masters' positions)
    rep = xp.flatnonzero(replicated)
    rv, rc = keys[rep] // chunks, keys[rep] % chunks
    by = xp.lexsort(xp.stack([position[rv], rc]))
    rep, rv, rc = rep[by], rv[by], rc[by]
    members = xp.minimum(CHUNK, n - CHUNK * xp.arange(chunks))
    extra = xp.bincount(rc, minlength=chunks)
    start = xp.cumsum(members + extra) - members - extra
    slot = start[chunk] + position - CHUNK * chunk
    rank = xp.arange(rep.shape[0]) - (xp.cumsum(extra) - extra)[rc]
    key_slot = xp.full(keys.shape[0], -1, np.int64)
    key_slot[rep] = start[rc] + members[rc] + rank
    # each edge v -> u reads v's replica in u's chunk where there is one, else v's master
    via = xp.full(src.shape[0], -1, np.int64)
    cross = edge_key >= 0  # none when the graph fits one chunk
    via[cross] = key_slot[edge_key[cross]]
    read = xp.where(via >= 0, via, slot[src])
    w = xp.ones(src.shape[0]) if weights is None else weights.reshape(-1).astype(np.float64)
    outw = xp.bincount(src, weights=w, minlength=n)
    factor = w / outw[src]  # outw(src) > 0: src has this edge
    # the CSC over the vertices in slot order (their BFS order: row = position), each row's
    # sources ascending
    by = xp.lexsort(xp.stack([read, position[dst]]))
    offsets = xp.concatenate([xp.zeros(1, np.int64),
                              xp.cumsum(xp.bincount(position[dst], minlength=n))])
    return Layout(offsets=offsets.astype(g.in_offsets.dtype),
                  sources=read[by].astype(np.int32), factor=factor[by].astype(props.FLOAT),
                  target=slot[order].astype(np.int32),
                  dead=(outw[order] == 0).astype(np.uint8),
                  slot=slot, replica=key_slot[rep].astype(np.int32),
                  master=slot[rv].astype(np.int32), slots=n + int(rep.shape[0]),
                  replicated_edges=int((via >= 0).sum()), chunks=chunks)


def layout(g, threshold, weights=None, weight_key=None) -> tuple[Layout, float]:
    """The layout of ``g`` at ``threshold`` (None: none replicated), from the graph's cache,
    and this call's build milliseconds."""
    threshold = None if threshold is None else float(threshold)
    return cached_build(g, ("replicate_threshold", threshold, weight_key),
                        lambda: _build(g, threshold, weights))


@persist
@cuda.jit
def pull(offsets, sources, factor, target, dead, x, cur, alpha, uniform, dangling, stats):
    """One iteration: the vertex of row i pulls ``x[cur, sources] * factor`` over its in-edges
    into ``x[1 - cur, target[i]]``; ``stats`` gets the L1 change and the new dangling mass."""
    nxt = 1 - cur
    change = 0.0
    mass = 0.0
    for i in range(cuda.grid(1), target.shape[0], cuda.gridsize(1)):
        acc = float32(0.0)
        for p in range(offsets[i], offsets[i + 1]):
            acc += x[cur, sources[p]] * factor[p]
        s = target[i]
        new = float32(alpha * (float64(acc) + dangling * uniform) + (1.0 - alpha) * uniform)
        x[nxt, s] = new
        change += abs(float64(new) - float64(x[cur, s]))
        if dead[i]:
            mass += float64(new)
    change = warp_sum(change)
    mass = warp_sum(mass)
    if cuda.threadIdx.x % WARP == 0:
        cuda.atomic.add(stats, 0, change)
        cuda.atomic.add(stats, 1, mass)


@persist
@cuda.jit
def reconcile(replica, master, x, row):
    """Every replica takes its master's value of ``x[row]`` (in both rows)."""
    for i in range(cuda.grid(1), replica.shape[0], cuda.gridsize(1)):
        value = x[row, master[i]]
        x[0, replica[i]] = value
        x[1, replica[i]] = value


def iterate(t: Layout, alpha, tol, max_iter, sync=1, block_size=None):
    """PageRank on layout ``t``: (each vertex's value, in g's internal order; iterations,
    converged, the last L1 change, the reconciles)."""
    xp = device.xp
    n = t.target.shape[0]
    x = xp.full((2, t.slots), 1.0 / n, props.FLOAT)
    stats = xp.zeros((max_iter, 2), np.float64)
    dangling = float(t.dead.sum()) / n
    block = device.block_threads(block_size, 256)
    grid = device.stride_grid(n, block, 2048 // block)
    spread = device.stride_grid(t.replica.shape[0], block, 2048 // block)
    reconciles, change, converged, it = 0, float("inf"), False, 0
    while it < max_iter:
        it += 1
        ops.launch_kernel("replicated pagerank", pull, grid, block, t.offsets, t.sources,
                          t.factor, t.target, t.dead, x, np.int64((it - 1) % 2),
                          np.float64(alpha), np.float64(1.0 / n), np.float64(dangling),
                          stats[it - 1])
        if t.replica.shape[0] and it % sync == 0:
            ops.launch_kernel("replicas", reconcile, spread, block, t.replica, t.master, x,
                              np.int64(it % 2))
            reconciles += 1
        change, dangling = (float(s) for s in device.to_host(stats[it - 1]))
        if change < tol:
            converged = True
            break
    return x[it % 2][t.slot], it, converged, change, reconciles


def run(g, threshold, sync=1, *, alpha=0.85, tol=1e-6, max_iter=100, weights=None,
        weight_key=None, block_size=None):
    """(PageRank of g's vertices in its internal order, RunInfo) on the layout at
    ``threshold``; None runs the same kernels on the BFS-ordered graph, nothing replicated."""
    if g.placement == "host":
        raise ValueError("pagerank: replicate_threshold builds a new layout on the device; "
                         "g's edges are in host memory (g.to('device') first)")
    t, build_ms = layout(g, threshold, weights, weight_key)
    rank, iterations, converged, change, reconciles = iterate(t, alpha, tol, max_iter, sync,
                                                              block_size)
    info = RunInfo(iterations=iterations, converged=converged,
                   variant=dict(change_driven=False, fold=True, fused=False, direction="pull"),
                   directions=["pull"] * iterations, modes=["bulk"] * iterations)
    info.estimate = dict(stopped_by="tol" if converged else None, l1_change=change,
                         replicas=int(t.replica.shape[0]), replicated_edges=t.replicated_edges,
                         chunks=t.chunks, replicate_build_ms=build_ms, reconciles=reconciles)
    return rank, info


def pagerank(g, execution, return_info, *, weights, weight_key, alpha, tol, max_iter):
    """:func:`onyx_rapids.pagerank` with ``replicate_threshold`` on."""
    a = execution.approximation
    rank, info = run(g, a.replicate_threshold, a.replicate_sync or 1, alpha=alpha, tol=tol,
                     max_iter=max_iter, weights=weights, weight_key=weight_key,
                     block_size=execution.block_size)
    info.approximation = a.knobs()
    return finish(g, "pagerank", {"pagerank": rank}, info, return_info)
