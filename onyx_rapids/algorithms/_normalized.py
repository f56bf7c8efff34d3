"""Graffix's degree normalization (knob ``degree_normalization`` of
:class:`~onyx_rapids.approximation.Approximation`): low-degree vertices given extra edges to
vertices two hops away, so that the 32 vertices a warp's lanes process have more even degrees,
and the algorithm run on that graph.

The degree is the one the algorithm's kernels read per vertex: the in-degree for the
PageRanks, which pull (a directed graph's added edge w -> u, for u <- v <- w, raises u's
in-degree; an undirected graph's is stored both ways).  For the vertices of a warp (32
consecutive internal ids) with largest degree D, a vertex u of degree d, 0 < d, gets

    added(u) = min(floor(t D) - d, the two-hop paths from u)   (when positive; t the knob)

edges to distinct vertices two hops away that are not yet its neighbours (nor u), drawn
uniformly over its two-hop paths (seeded, so the graph is the same on every build of one
device).  The edges added in all are at most m (each vertex's count scaled down to fit), so the
graph at most doubles.  An added edge weighs what the path's edge into u weighs (1.0 when
unweighted): the walk that reaches u through v may also come from v's in-neighbour.  The
result is an approximation: PageRank on the graph with the added edges, every vertex's value
read back unchanged (same vertices, same internal order, same ids).  Graffix adds the edges to
balance the warp's lanes; a lane per vertex is how its kernels read edges, whereas ours give
a vertex's edges to a whole warp (``feature_aware``, a lane per in-edge) when the degrees are
skewed, so this measures what the extra edges cost (docs/performance.md).

The graph (built once per graph, knob value and weight column, cached on the graph) is
reported in ``RunInfo.estimate``: ``added_edges``, ``normalized_edges`` (its stored edges)
and ``normalize_build_ms`` (this call's milliseconds building it; 0 when the cache held it).

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> knob = onyx.Approximation(degree_normalization=0.5)
    >>> df, info = onyx.pagerank(g, approximation=knob, return_info=True)
    >>> len(df) == g.n, info.estimate["normalized_edges"] > g.m
    (True, True)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import device
from ..construction import device as device_build
from ..graph import Graph
from ..io.arrays import as_array
from ._common import cached_build, finish

__all__ = ["knob", "normalized", "run"]

WARP = 32
SEED = 37


def knob(execution) -> float | None:
    """The ``degree_normalization`` of ``execution`` (None: off)."""
    a = execution.approximation
    return None if a is None else a.degree_normalization


def _segment_sum(offsets, values):
    """Per row of a CSR, the sum of ``values`` (one per entry)."""
    xp = device.xp
    total = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(values, dtype=np.int64)])
    return total[offsets[1:]] - total[offsets[:-1]]


def added_edges(offsets, indices, n: int, fraction: float, budget: int, seed: int = SEED):
    """(u, w) pairs: the two-hop neighbours w added to each row u of the CSR (``offsets``,
    ``indices``: the neighbours the degree counts) as the module docstring says, and the
    position of the path's first entry (u's entry of v) for each."""
    xp = device.xp
    offsets = offsets.astype(np.int64)
    degree = offsets[1:] - offsets[:-1]
    padded = xp.zeros(-(-n // WARP) * WARP, np.int64)
    padded[:n] = degree
    top = padded.reshape(-1, WARP).max(axis=1)[xp.arange(n) // WARP]
    paths = _segment_sum(offsets, degree[indices])
    need = xp.minimum(xp.floor(fraction * top).astype(np.int64) - degree, paths)
    need = xp.where(degree > 0, xp.maximum(need, 0), 0)
    total = int(need.sum())
    if total > budget:  # scale every vertex's count down to fit m added edges
        need = (need * (budget / total)).astype(np.int64)
    draws = 2 * need  # extra draws: some hit u, a neighbour or a repeat
    owner = xp.repeat(xp.arange(n, dtype=np.int64), draws)
    if not owner.shape[0]:
        return owner, owner, owner
    rng = xp.random.default_rng(seed)
    first = offsets[owner] + (rng.random(owner.shape[0]) * degree[owner]).astype(np.int64)
    v = indices[first].astype(np.int64)
    second = offsets[v] + (rng.random(owner.shape[0]) * degree[v]).astype(np.int64)
    w = indices[xp.minimum(second, indices.shape[0] - 1)].astype(np.int64)
    present = indices.astype(np.int64) + xp.repeat(xp.arange(n, dtype=np.int64), degree) * n
    key = owner * n + w
    at = xp.minimum(xp.searchsorted(present, key), present.shape[0] - 1)
    ok = (degree[v] > 0) & (w != owner) & (present[at] != key)
    key, first = key[ok], first[ok]
    key, where = xp.unique(key, return_index=True)
    first = first[where]
    u = key // n
    start = xp.searchsorted(u, xp.arange(n, dtype=np.int64))  # each owner's first pair
    keep = xp.arange(u.shape[0]) - start[u] < need[u]
    return u[keep], (key % n)[keep], first[keep]


def _build(g, fraction: float, weights) -> tuple[Graph, int]:
    xp = device.xp
    u, w, first = added_edges(g.in_offsets, g.in_indices, g.n, fraction, g.m)
    src, dst = g.edge_sources.astype(np.int64), g.out_indices.astype(np.int64)
    rows = xp.arange(g.m) if g.directed else xp.flatnonzero(src <= dst)  # one copy each
    src, dst = xp.concatenate([src[rows], w]), xp.concatenate([dst[rows], u])  # w -> u added
    if weights is None:
        column, names = None, []
    else:  # the added edge weighs what the path's edge v -> u does (CSC entry ``first``)
        column = xp.concatenate([weights[rows], weights[g.in_edge_ids[first]]])[:, None]
        names = ["weight"]
    b = device_build.build(g.vertices, src, dst, column, names, directed=g.directed,
                           multigraph=g.multigraph, sides=g.sides, side_names=g.side_names)
    b.vertex_order, b.labels = g.vertex_order, g.id_map.labels
    return Graph.from_buffers(b), int(u.shape[0])


def normalized(g, fraction: float, weights=None, weight_key=None):
    """((the graph with added edges, the edges added), this call's build milliseconds),
    from the graph's cache."""
    return cached_build(g, ("degree_normalization", float(fraction), weight_key),
                        lambda: _build(g, fraction, weights))


def run(g, name, function, execution, return_info, columns, *, weights, weight_key,
        **kwargs):
    """``function`` on the normalized graph (the other knobs kept), its ``columns`` read back
    unchanged onto ``g``'s vertices."""
    if g.placement == "host":
        raise ValueError(f"{name}: degree_normalization builds a new graph on the device; "
                         "g's edges are in host memory (g.to('device') first)")
    (h, added), build_ms = normalized(g, knob(execution), weights, weight_key)
    rest = dataclasses.replace(execution.approximation, degree_normalization=None)
    inner = execution.replace(approximation=rest if rest.knobs() else None)
    frame, info = function(h, execution=inner, return_info=True, **kwargs)
    values = {key: as_array(frame[key], key) for key in columns(frame)}
    info.estimate = dict(info.estimate or {}, added_edges=added, normalized_edges=h.m,
                         normalize_build_ms=build_ms)
    info.approximation = execution.approximation.knobs()
    return finish(g, name, values, info, return_info, warn=False)
