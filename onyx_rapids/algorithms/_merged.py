"""Graprox's approximate graph representation (knob ``merge_similarity`` of
:class:`~onyx_rapids.approximation.Approximation`): adjacent vertices with similar
neighbourhoods merged into one vertex, the algorithm run on the smaller graph, and every
original vertex given its group's value.

Similarity of an edge u-v of the simple undirected view (directions dropped, self-loops and
parallel edges removed): the Jaccard similarity of the closed neighbourhoods N[u] = N(u) + {u},

    J(u, v) = |N[u] & N[v]| / |N[u] | N[v]| = (c + 2) / (d(u) + d(v) - c)

with c the common neighbours and d the degrees; J is 1 exactly for true twins (N[u] = N[v]).
A thread per edge intersects the two sorted adjacency lists (:func:`similar_edges`), unless
the degrees alone rule the edge out (J <= (min(d) + 2) / max(d), so a hub's edges to
low-degree vertices are skipped and the work is not sum d^2 on skewed graphs); the edges
with J >= the threshold are hooked by union-find (:mod:`onyx_rapids.kernels.union_find`), so
the groups are the components of those edges (chains merge: two members of a group may be
less similar than the threshold).  Groups are numbered 0..k-1 by their smallest member.

The merged graph (built with :meth:`Graph.from_csr`, once per graph, threshold and weight
column, and cached on the graph): a vertex per group, stored directed (an undirected graph's
two copies of an edge give two edges of equal weight; a directed graph's edges keep their
direction, its groups coming from its undirected view), an edge G -> H wherever some u -> v
of the graph has u in G and v in H, weighted by the sum of those edges' weights (their count
when unweighted).  The edges inside a group are kept as a self-loop of their summed weight: a
walk from u to its group-mate v stays in the group, and dropping the loop would send that
share of every member's transitions outside instead.  With the teleport of a group its
members' (``|G| / n`` for PageRank's uniform one) and true twins of equal degree, PageRank on
the merged graph is the exact PageRank summed per group.

Back in the original vertices: PageRank and personalized PageRank split a group's rank
among its members in proportion to their degrees in the simple undirected view (an isolated
vertex is a group of its own and keeps its rank), so each column still sums to 1;
weakly connected components give every member its group's component (exact: a group is
connected).  Strongly connected components do too, on the merged graph's directed edges: a
path of the graph is one of the merged graph, so components only merge, wrongly where a group
is not strongly connected (a lone u -> v makes twins of u and v); exact where every group
is, e.g. on a graph whose every edge is stored both ways.  ``RunInfo.estimate`` records
``merged_vertices``, ``merged_edges`` and ``merge_build_ms`` (the milliseconds this call
spent building the merged graph; 0 when the graph's cache held it).

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> knob = onyx.Approximation(merge_similarity=0.5)
    >>> df, info = onyx.pagerank(g, approximation=knob, return_info=True)
    >>> len(df) == g.n, round(float(df["pagerank"].sum()), 4)
    (True, 1.0)
    >>> info.estimate["merged_vertices"] < g.n
    True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import cuda

from .. import device, inputs, operators as ops
from ..graph import Graph
from ..io.arrays import as_array
from ..kernels import union_find
from ..kernels.disk_cache import persist
from ._common import cached_build, finish

__all__ = ["Merged", "components", "knob", "merged", "pagerank", "personalized_pagerank",
           "strong_components"]


@persist
@cuda.jit
def similar_edges(offsets, indices, sources, threshold, keep):
    """keep[e] for each edge u -> v (u < v) of a sorted symmetric CSR whose closed
    neighbourhoods' Jaccard similarity is at least ``threshold``."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for e in range(start, indices.shape[0], stride):
        u, v = sources[e], indices[e]
        keep[e] = False
        if u >= v:
            continue
        i, i_end, j, j_end = offsets[u], offsets[u + 1], offsets[v], offsets[v + 1]
        du, dv = i_end - i, j_end - j
        if min(du, dv) + 2.0 < threshold * max(du, dv):
            continue  # J <= (min + 2) / max: a hub's edges to small vertices cost nothing
        common = 0
        while i < i_end and j < j_end:
            a, b = indices[i], indices[j]
            common += a == b
            i += a <= b
            j += b <= a
        keep[e] = (common + 2.0) / (du + dv - common) >= threshold


@dataclass(frozen=True)
class Merged:
    """A graph's merged graph: ``graph`` (vertex i is group i), ``group`` (each internal
    vertex's group) and ``share`` (its part of its group's rank: degree / the group's
    degree)."""

    graph: Graph
    group: object
    share: object


def knob(execution) -> float | None:
    """The ``merge_similarity`` of ``execution`` (None: no merging)."""
    a = execution.approximation
    return None if a is None else a.merge_similarity


def groups(und, threshold: float):
    """Each vertex's group (0..k-1, numbered by smallest member) in the simple undirected
    view ``und``, and k."""
    xp = device.xp
    block = device.block_threads(None, 256)
    keep = xp.zeros(und.m, dtype=np.bool_)
    if und.m:
        ops.launch_kernel("merge similar_edges", similar_edges,
                          device.stride_grid(und.m, block, 16), block, und.out_offsets,
                          und.out_indices, und.edge_sources, np.float64(threshold), keep)
    kept = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(keep, dtype=np.int64)])
    offsets, indices = kept[und.out_offsets], und.out_indices[keep]  # the similar edges' CSR
    parent = xp.arange(und.n, dtype=und.index_dtype)
    if indices.shape[0]:
        grid = device.stride_grid(und.n, block, 16)
        ops.launch_kernel("union-find link_rest", union_find.link_rest, grid, block, offsets,
                          indices, parent, np.int64(0), und.index_dtype.type(-1))
        ops.launch_kernel("union-find compress", union_find.compress, grid, block, parent)
    root = parent == xp.arange(und.n, dtype=parent.dtype)
    number = xp.cumsum(root, dtype=np.int64) - 1
    return number[parent], int(root.sum())


def _build(g, threshold: float, weights) -> Merged:
    xp = device.xp
    und = g.simple_undirected()
    group, k = groups(und, threshold)
    key = group[g.edge_sources] * k + group[g.out_indices]
    pairs, where = xp.unique(key, return_inverse=True)
    summed = xp.bincount(where.reshape(-1), minlength=pairs.shape[0],
                         weights=None if weights is None else weights.astype(np.float64))
    offsets = xp.searchsorted(pairs // k, xp.arange(k + 1, dtype=np.int64))
    h = Graph.from_csr(offsets, pairs % k, {"weight": summed}, placement="device")
    degree = und.out_degree.astype(np.float64)
    total = xp.bincount(group, weights=degree, minlength=k)[group]
    share = xp.where(total > 0, degree / xp.where(total > 0, total, 1.0), 1.0)
    return Merged(h, group, share)


def merged(g, threshold: float, weights=None, weight_key=None) -> tuple[Merged, float]:
    """The merged graph of ``g`` at ``threshold`` with ``weights`` (the column named
    ``weight_key``; None: unweighted), from the graph's cache, and the milliseconds this call
    spent building it."""
    return cached_build(g, ("approximate_graph", float(threshold), weight_key),
                        lambda: _build(g, threshold, weights))


def _run(g, name, function, execution, return_info, columns, merge, build_ms, **kwargs):
    """``function`` on ``merge``'s graph (the other knobs kept) and its result frame's
    columns mapped back onto every vertex of ``g``: ``columns`` maps each result column to
    (the frame's column, ``spread(values in group order)``)."""
    rest = dataclasses.replace(execution.approximation, merge_similarity=None)
    inner = execution.replace(approximation=rest if rest.knobs() else None)
    frame, info = function(merge.graph, execution=inner, return_info=True, **kwargs)
    values = {key: spread(as_array(frame[col], col)) for key, (col, spread) in columns.items()}
    info.estimate = dict(info.estimate or {}, merged_vertices=merge.graph.n,
                         merged_edges=merge.graph.m, merge_build_ms=build_ms)
    info.approximation = execution.approximation.knobs()
    return finish(g, name, values, info, return_info, warn=False)


def pagerank(g, function, execution, return_info, *, weights, weight_key, personalization,
             **params):
    """:func:`onyx_rapids.pagerank` with ``merge_similarity``: the teleport summed per group
    (uniform: ``|G| / n``), the ranks split by degree."""
    merge, build_ms = merged(g, knob(execution), weights, weight_key)
    xp = device.xp
    if personalization is None:
        teleport = xp.full(g.n, 1.0 / g.n)
    else:
        vertex, column = inputs.DISTRIBUTION.teleport(g, personalization, "personalization")
        teleport = column[:, 0].astype(np.float64) if vertex is None \
            else (xp.arange(g.n) == vertex).astype(np.float64)
    grouped = xp.bincount(merge.group, weights=teleport, minlength=merge.graph.n)
    return _run(g, "pagerank", function, execution, return_info,
                {"pagerank": ("pagerank", lambda x: x[merge.group] * merge.share)}, merge,
                build_ms, personalization=grouped, **params)


def personalized_pagerank(g, function, execution, return_info, *, weights, weight_key,
                          sources, **params):
    """:func:`onyx_rapids.personalized_pagerank` with ``merge_similarity``: each source's
    teleport goes to its group, the ranks are split by degree."""
    merge, build_ms = merged(g, knob(execution), weights, weight_key)
    ids = device.to_host(merge.group[device.asarray(inputs.starts(g, None, sources))])
    columns = {f"ppr_{i}": (f"ppr_{i}", lambda x: x[merge.group] * merge.share)
               for i in range(ids.size)}
    return _run(g, "personalized_pagerank", function, execution, return_info, columns, merge,
                build_ms, sources=ids.tolist(), **params)


def components(g, function, execution, return_info, smallest_ids, **params):
    """:func:`onyx_rapids.weakly_connected_components` with ``merge_similarity``: each vertex
    labelled with its group's component (exact), by ``smallest_ids`` (its module's)."""
    return _labels(g, "weakly_connected_components", function, execution, return_info,
                   smallest_ids, **params)


def strong_components(g, function, execution, return_info, smallest_ids, **params):
    """:func:`onyx_rapids.strongly_connected_components` with ``merge_similarity``: each
    vertex labelled with its group's component on the merged graph's directed edges (members
    of a group not strongly connected come out wrongly together), by ``smallest_ids``."""
    return _labels(g, "strongly_connected_components", function, execution, return_info,
                   smallest_ids, **params)


def _labels(g, name, function, execution, return_info, smallest_ids, **params):
    """A components algorithm on the merged graph, each vertex labelled (the smallest
    original id) with the component its group's merged vertex is in."""
    merge, build_ms = merged(g, knob(execution))
    return _run(g, name, function, execution, return_info,
                {"labels": ("labels", lambda x: smallest_ids(g, x[merge.group],
                                                             smallest_root=False))},
                merge, build_ms, **params)
