"""Minimum spanning forest (docs/algorithms.md, "minimum_spanning_tree") by Boruvka rounds on
the GPU.

    F = the spanning forest of minimum total weight sum_{(u,v) in F} w(u,v), with one tree per
        connected component, unique under the order (w, edge position)

Each round every component picks its lightest outgoing edge (:mod:`onyx_rapids.kernels.boruvka`:
one 64-bit key per edge, weight bits then the edge's CSR position, so ties are broken by
position and the picks form a forest), the picked edges join the forest and their ends are
united (:mod:`onyx_rapids.kernels.union_find`), and the edges that now lie inside a
component leave the work list.  The rounds end when no edge joins two components; each merges
every component that has an outgoing edge with at least one other, so there are at most
log2(n) of them.  Self-loops never join two components; parallel edges (a multigraph's) are
edges of their own, of which the lightest (the first in CSR order among equals) can be picked.

Approximation (docs/execution.md, "Approximation"): ``stop_changed_fraction`` ends the rounds
after one, not the first, that joined fewer than ``ceil(fraction * n)`` edges and no more than
the round before (:class:`~._reduced.ChangedFraction`, the joined edges counted as the growth
of the ``chosen`` marks, only with the knob on): a sub-forest of the exact one.
``edge_fraction`` keeps of each vertex u's c(u) canonical edges (in CSR order) the first
``ceil(edge_fraction * c(u))`` in the work list, and the rounds run on that partial graph.
"""

from __future__ import annotations

import numpy as np

from .. import device, memory, operators as ops
from ..kernels import boruvka, union_find
from ..registry import algorithm
from ._common import Info, finish
from ._reduced import ChangedFraction

NAME = "minimum_spanning_tree"
BLOCK_EDGES = 1 << 26  # stored edges scanned at a time for the first work list


def _launch(name, kernel, items, block_size, *args):
    block = device.block_threads(block_size, 256)
    ops.launch_kernel(name, kernel, device.stride_grid(items, block, 16), block, *args)


def _check_graph(g):
    if g.directed:
        raise ValueError(f"g: {NAME} needs an undirected graph, and g is directed; build it "
                         "with directed=False (the default of Graph.from_edgelist), each edge "
                         "stored both ways, e.g. Graph.from_edgelist(df, weight='w')")
    if g.m >= 2**boruvka.ID_BITS:
        raise ValueError(f"g: {NAME} keys an edge by its position in {boruvka.ID_BITS} bits, "
                         f"so it takes at most {2**boruvka.ID_BITS - 1} stored edges, and g "
                         f"stores {g.m}")


def _canonical_edges(g):
    """CSR positions of every edge's canonical copy (internal source < destination: no
    self-loops), in CSR order; built in blocks of stored edges."""
    xp = device.xp
    src, dst = g.edge_sources, g.out_indices
    parts = [(xp.flatnonzero(src[a:a + BLOCK_EDGES] < dst[a:a + BLOCK_EDGES]) + a)
             .astype(g.offset_dtype) for a in range(0, g.m, BLOCK_EDGES)]
    return xp.concatenate(parts) if parts else xp.zeros(0, dtype=g.offset_dtype)


def _first_of_each(g, work, fraction):
    """Of the canonical edges ``work`` (CSR order: sources ascending), the first
    ``ceil(fraction * c(u))`` of each vertex u's c(u): rank within u = position - u's first."""
    xp = device.xp
    u = g.edge_sources[work]
    c = xp.bincount(u, minlength=g.n)
    rank = xp.arange(work.shape[0]) - (xp.cumsum(c) - c)[u]
    return work[rank < xp.ceil(fraction * c[u])]


def _forest(g, weights, block_size, reduced, fraction=None):
    """(CSR positions of the forest's edges, ascending; rounds; edges of the first work list;
    canonical edges) of ``g`` under ``weights`` (float32 per stored edge, None: all equal).
    ``reduced`` (a :class:`ChangedFraction`) may end the rounds early; ``fraction`` (None:
    every edge) keeps the first of each vertex's canonical edges (:func:`_first_of_each`)."""
    xp = device.xp
    src, dst = g.edge_sources, g.out_indices
    need = g.m // 2 * g.offset_dtype.itemsize + g.m + g.n * 16
    with memory.allocating(f"{NAME}'s work list (up to {g.m // 2} undirected edges)", need,
                           "the rounds keep the positions of the edges between components, "
                           "a mark per stored edge and two words per vertex on the device"):
        work = _canonical_edges(g)
        canonical = work.shape[0]
        if fraction is not None:
            work = _first_of_each(g, work, fraction)
        chosen = xp.zeros(g.m, dtype=np.uint8)
        comp = xp.arange(g.n, dtype=g.index_dtype)
        best = xp.empty(g.n, dtype=np.uint64)
    if weights is None:
        wbits, wstride = xp.zeros(1, dtype=np.uint32), np.int64(0)
    else:
        wbits, wstride = weights.view(np.uint32), np.int64(1)
    rounds, forest, processed = 0, 0, work.shape[0]
    while work.shape[0]:
        rounds += 1
        best.fill(boruvka.NO_EDGE)
        _launch("boruvka lightest", boruvka.lightest, work.shape[0], block_size, work, src,
                dst, wbits, wstride, comp, best)
        _launch("boruvka hook", boruvka.hook, g.n, block_size, best, src, dst, comp, chosen)
        _launch("union-find compress", union_find.compress, g.n, block_size, comp)
        if reduced.below:  # stop_changed_fraction: the edges this round joined
            before, forest = forest, int(xp.count_nonzero(chosen))
            if reduced.stops(forest - before):
                break
        work = work[comp[src[work]] != comp[dst[work]]]  # drop the edges now inside a tree
    return xp.flatnonzero(chosen), rounds, processed, canonical


def _rows(g, edges):
    """(``edges``, internal sources, internal destinations) of the result's rows: each edge
    turned so that its source comes first in the graph's id order, rows sorted by (source,
    destination) in that order.  Canonical copies in CSR order already are, unless the graph
    was reordered."""
    xp = device.xp
    u, v = g.edge_sources[edges], g.out_indices[edges]
    if g.vertex_order == "id":
        return edges, u, v
    rank = xp.empty(g.n, dtype=np.int64)
    rank[g.id_order()] = xp.arange(g.n)
    turn = rank[u] > rank[v]
    u, v = xp.where(turn, v, u), xp.where(turn, u, v)
    order = xp.lexsort(xp.stack([rank[v], rank[u]]))
    return edges[order], u[order], v[order]


@algorithm(NAME, summary="minimum spanning forest (Boruvka): its edges and total weight",
           graph="undirected", weights="used", columns=("src", "dst", "weight"),
           options=dict(block_size=None), iterative=True,
           approximation=dict(stop_changed_fraction=None, edge_fraction=None))
def minimum_spanning_tree(g, *, weight=None, execution, return_info=False):
    """The minimum spanning forest of an undirected graph: ``src``, ``dst``, ``weight``, one row
    per forest edge (a spanning tree of each connected component), original ids.

    Each row's ``src`` comes before its ``dst`` in the graph's id order (ascending id or
    label; on a bipartite graph ``src`` is the left side's id), rows sorted by (``src``,
    ``dst``).  Edges of equal weight are taken in CSR order (ascending (smaller end, larger
    end) in internal ids), so the forest is unique and the same on every run.

    Parameters
    ----------
    g : Graph
        Undirected (a directed graph is refused). Self-loops never join the forest; parallel
        edges of a multigraph are edges of their own (a simple graph merged them when built:
        ``duplicates=``).
    weight : None, str or False
        The weight column: None uses the graph's one (1.0 per edge when it has none), a name
        picks one of several, False gives every edge weight 1.0. Weights must be non-negative
        and finite (float32 as stored).
    execution : Execution, optional
        How to run (also as keywords): ``block_size``, and ``approximation``: an
        :class:`~onyx_rapids.Approximation` with ``stop_changed_fraction`` ends the rounds
        after one (not the first) that joined fewer than ``ceil(fraction * n)`` edges to the
        forest and no more than the round before: a sub-forest of the exact one (more trees,
        less total weight; below ``1 / n`` it never stops).  ``edge_fraction`` keeps of each
        vertex's canonical edges (the copies u->v with u < v in internal ids, CSR order) the
        first ``ceil(edge_fraction * c)`` of its c: the result is the minimum spanning forest
        of that partial graph (no lighter than the exact one where it keeps g's components
        connected, with more trees where it lacks a connection; 1 is the exact run).
    return_info : bool
        Also return a RunInfo: ``total_weight`` (float64 sum of the forest's float32 weights),
        ``components`` (trees in the forest, isolated vertices included) and ``iterations``
        (Boruvka rounds); with ``approximation``, the knobs and ``estimate``: ``stopped_by``,
        ``changed_fraction`` (the edges the stopping round joined, over n), ``rounds``,
        ``edges_processed`` (of the first round's work list) and ``exact_edges`` (canonical
        edges).

    Example::

        >>> import onyx_rapids as onyx, pandas as pd
        >>> g = onyx.Graph.from_edgelist(pd.DataFrame(
        ...     {"src": [0, 1, 2, 0], "dst": [1, 2, 0, 3], "w": [1.0, 2.0, 0.5, 4.0]}), weight="w")
        >>> df, info = onyx.minimum_spanning_tree(g, return_info=True)
        >>> onyx.io.to_pandas(df).to_dict("list"), info["total_weight"]
        ({'src': [0, 0, 0], 'dst': [1, 2, 3], 'weight': [1.0, 0.5, 4.0]}, 5.5)
    """
    _check_graph(g)
    weights = g.weights_for(weight, name=NAME, non_negative=True)
    reduced, knobs = ChangedFraction(execution.approximation, g.n), execution.approximation
    edges, rounds, processed, canonical = _forest(
        g, weights, execution.block_size, reduced, knobs and knobs.edge_fraction)
    edges, u, v = _rows(g, edges)
    w = weights[edges] if weights is not None else \
        device.xp.ones(edges.shape[0], dtype=np.float32)
    total = float(w.astype(np.float64).sum())
    info = Info(iterations=rounds, converged=True,
                variant=dict(total_weight=total, components=g.n - int(edges.shape[0])))
    reduced.record(info)
    if info.estimate is not None:  # edges, not vertices, were cut: "unrelaxed" means nothing
        del info.estimate["unrelaxed"]
        info.estimate.update(edges_processed=processed, exact_edges=canonical)
    return finish(g, NAME, {"weight": w}, info, return_info, pairs=(u, v))
