"""The device build: a graph's CSR and CSC sorted whole on the device from internal ids,
with backend arrays alone (:data:`onyx_rapids.device.xp`: CuPy on a GPU, NumPy under the
simulator): sorting, merging parallel edges and the offset scans are whole-array operations,
never Python loops over edges.

Simple graphs by default: parallel edges are merged into one that keeps the weights of the
FIRST occurrence in input row order, each self-loop is kept once, and an undirected edge
listed as u-v and v-u (or twice) is one edge, stored as u->v and v->u.  ``multigraph=True``
keeps every input row as an edge.  CSR entries are sorted by (source, destination), stable
among parallel edges; CSC entries by (destination, source, CSR position).  A simple undirected
graph's CSC is its CSR (the same arrays), its ``in_edge_ids`` the reverse pairing.

Every builder returns :class:`~onyx_rapids.construction.layout.Buffers`: :func:`from_ids` (original
ids, renumbered), :func:`from_csr`, :func:`from_bipartite`, :func:`build` (internal ids), and
the graphs derived from a graph, :func:`reordered` and :func:`simple_undirected`.
"""

from __future__ import annotations

import numpy as np

from .. import ids
from ..device import xp
from ..ids import VertexIds
from . import duplicates
from .layout import Buffers, edge_dtype, run_heads, vertex_dtype
from ..messages import SHOW, asymmetric_weights_message, no_reverse_message

# Largest n whose (source, destination) pair keys, source * n + destination < n * n, fit in
# uint32: up to it the CSR sort sorts 32-bit keys (CuPy sorts are radix sorts, whose cost grows
# with the key's bits), beyond it int64 keys. A module global so tests can lower it.
KEY32_MAX_N = 1 << 16


def from_ids(src_ids, dst_ids, weights, weight_names, *, directed, multigraph,
             extra_vertices=None, duplicates=None) -> Buffers:
    """Renumber original integer ids to 0..n-1 (ascending; :func:`onyx_rapids.ids.renumber`),
    or labels (host object arrays, when any of the ids are: :func:`onyx_rapids.ids.renumber_labels`),
    then :func:`build`."""
    labels = None
    if any(ids.is_labels(a) for a in (src_ids, dst_ids, extra_vertices)):
        vertices, (src, dst), labels = ids.renumber_labels([src_ids, dst_ids], extra_vertices)
    else:
        vertices, (src, dst) = ids.renumber([src_ids, dst_ids], extra_vertices)
    b = build(vertices, src, dst, weights, weight_names, directed=directed,
              multigraph=multigraph, duplicates=duplicates, labels=labels)
    b.labels = labels
    return b


def from_csr(offsets, indices, weights, weight_names, *, directed, multigraph) -> Buffers:
    """A graph on vertices 0..n-1 from checked CSR arrays (:func:`onyx_rapids.io.read_csr`);
    ``directed=False`` input is symmetric and stored as given."""
    n = int(offsets.shape[0]) - 1
    m = int(indices.shape[0])
    src = xp.searchsorted(offsets, xp.arange(m, dtype=np.int64), side="right") - 1
    vertices = xp.arange(n, dtype=np.int64)
    return build(vertices, src.astype(np.int64), indices.astype(np.int64), weights,
                 weight_names, directed=directed, multigraph=multigraph,
                 symmetric_input=not directed)


def from_bipartite(left_ids, right_ids, weights, weight_names, *, multigraph,
                   side_names, duplicates=None) -> Buffers:
    """An undirected bipartite graph: each side renumbered on its own, the left side first.
    Labels on either side (host object arrays) make both sides labelled: each side's labels
    take codes of their own, the right side's after the left side's."""
    labels = None
    if ids.is_labels(left_ids) or ids.is_labels(right_ids):
        left, (src,), lt = ids.renumber_labels([left_ids])
        right, (dst,), rt = ids.renumber_labels([right_ids])
        labels = ids.VertexLabels(np.concatenate([lt.values, rt.values]), split=lt.values.size)
        right = right + left.shape[0]
    else:
        left, (src,) = ids.renumber([left_ids])
        right, (dst,) = ids.renumber([right_ids])
    nl, nr = int(left.shape[0]), int(right.shape[0])
    if nl + nr > np.iinfo(dst.dtype).max:
        dst = dst.astype(np.int64)
    dst += dst.dtype.type(nl)
    sides = xp.concatenate([xp.zeros(nl, dtype=np.int8), xp.ones(nr, dtype=np.int8)])
    b = build(xp.concatenate([left, right]), src, dst, weights, weight_names,
              directed=False, multigraph=multigraph, sides=sides, side_names=side_names,
              duplicates=duplicates, labels=labels)
    b.labels = labels
    return b


def build(vertices, src, dst, weights, weight_names, *, directed, multigraph,
          symmetric_input=False, sides=None, side_names=None, distinct=False,
          duplicates="first", labels=None) -> Buffers:
    """From internal (src, dst) (int32 or int64): merge parallel edges unless ``multigraph``
    (or the caller says they are ``distinct``), their weights as ``duplicates`` says
    (:mod:`~onyx_rapids.construction.duplicates`; ``labels``, the ids' table if they are
    labels, names pairs in its messages), store an undirected edge list both ways (unless it
    is a ``symmetric_input`` that already is), sort into CSR and CSC.

    A simple undirected graph takes :func:`assemble_simple_undirected`; every other graph
    :func:`assemble`, after an undirected multigraph's reversed copies are appended."""
    undirected_list = not directed and not symmetric_input
    facts = dict(weight_names=weight_names, directed=directed, multigraph=multigraph,
                 sides=sides, side_names=side_names, duplicates=duplicates, labels=labels)
    if undirected_list and not multigraph:
        return assemble_simple_undirected(vertices, src, dst, weights, **facts)
    twins = None
    if undirected_list:
        src, dst, weights, twins = _with_reversed_copies(src, dst, weights)
    return assemble(vertices, src, dst, weights, dedupe=not multigraph and not distinct,
                    twins=twins, symmetric_input=symmetric_input and not directed, **facts)


def _with_reversed_copies(src, dst, weights):
    """Each non-loop edge and a reversed copy of it, after all the input rows: ``(src, dst,
    weights, twins)``, ``twins[e]`` the pre-sort position of the copy paired with e, so that
    the reverse pairing pairs an edge with its own copy."""
    m0 = int(src.shape[0])
    nonloop = xp.nonzero(src != dst)[0]
    tt = edge_dtype(m0 + int(nonloop.shape[0]))  # edge positions
    twins = xp.arange(m0 + int(nonloop.shape[0]), dtype=tt)
    twins[m0:] = nonloop
    twins[nonloop] = xp.arange(m0, m0 + nonloop.shape[0], dtype=tt)
    src, dst = xp.concatenate([src, dst[nonloop]]), xp.concatenate([dst, src[nonloop]])
    if weights is not None:
        weights = xp.concatenate([weights, weights[nonloop]])
    return src, dst, weights, twins


def assemble(vertices, src, dst, weights, weight_names, *, directed, multigraph,
             dedupe=False, twins=None, symmetric_input=False, sides=None,
             side_names=None, duplicates="first", labels=None) -> Buffers:
    """Sort internal (src, dst) pairs into CSR and CSC; ``dedupe`` keeps the first row of
    each (src, dst) pair, its weights merged as ``duplicates`` says (:func:`_merged`);
    ``twins`` pairs reverse copies; ``symmetric_input`` is paired with
    its reverse edges here, and refused (naming edges) when it is not symmetric.

    One stable sort by the pair key (source * n + destination) gives the CSR order, stable
    among parallel edges, and with it the first row of each pair (the head of its run of
    equal keys); one stable sort of the CSR destinations gives the CSC order (destination,
    then source and CSR position, which the CSR order already has)."""
    n = int(vertices.shape[0])
    key = _pair_keys(src, dst, n)
    order = xp.argsort(key, kind="stable")  # stable: parallel edges keep input row order
    sorted_key = key[order]
    del key
    merged = None
    if dedupe:
        head = run_heads(sorted_key)
        if head is not None:
            if weights is not None:
                merged = _merged(weights, order, head, sorted_key, n, duplicates,
                                 VertexIds(vertices, sides, side_names, labels=labels),
                                 directed, " -> ")
            keep = xp.flatnonzero(head)
            order, sorted_key = order[keep], sorted_key[keep]
    m = int(order.shape[0])
    vtype, etype = vertex_dtype(n), edge_dtype(m)
    src_sorted, dst_sorted = _split_keys(sorted_key, n, vtype)
    del sorted_key
    out_offsets = _sorted_offsets(src_sorted, n, etype)
    # CSC: a stable sort by destination keeps the CSR order, (source, position), in ties.
    csc = xp.argsort(dst_sorted, kind="stable")
    in_offsets = _sorted_offsets(dst_sorted[csc], n, etype)
    if merged is not None:
        weights = xp.ascontiguousarray(merged)
    elif weights is not None:
        weights = xp.ascontiguousarray(weights[order].astype(np.float32, copy=False))
    reverse = None
    if twins is not None:
        position = xp.empty(m, dtype=etype)
        position[order] = xp.arange(m, dtype=etype)
        reverse = position[twins[order]]
    b = Buffers(
        vertices=vertices.astype(np.int64, copy=False),
        out_offsets=out_offsets,
        out_indices=dst_sorted,
        in_offsets=in_offsets,
        in_indices=src_sorted[csc],
        in_edge_ids=csc.astype(etype, copy=False),
        out_degree=xp.diff(out_offsets).astype(np.int32),
        in_degree=xp.diff(in_offsets).astype(np.int32),
        edge_weights=weights,
        weight_names=weight_names,
        directed=directed,
        reverse_edge=reverse,
        multigraph=multigraph,
        sides=sides,
        side_names=side_names,
        edge_sources=src_sorted,
    )
    if symmetric_input:
        b.reverse_edge = _symmetric_pairing(b)
    return b


def _merged(weights, order, head, sorted_key, n: int, mode, id_map, directed: bool, arrow: str,
            skip=None):
    """The weights of each run of equal ``sorted_key`` (``weights`` in row order, ``order`` the
    row of each sorted entry)
    (:func:`~onyx_rapids.construction.duplicates.merge_weights`), after saying what disagreed
    (:func:`~onyx_rapids.construction.duplicates.report`, the pairs named in original ids by
    ``id_map``).  An undirected pair has two runs (u -> v and v -> u) and counts once, by its
    u <= v run."""
    merged, bad = duplicates.merge_weights(weights, order, head, mode, skip)
    if bad.shape[0] and mode in (None, "error"):
        u, v = _split_keys(sorted_key[xp.flatnonzero(head)[bad]], n, np.int64)
        if not directed:
            u, v = u[u <= v], v[u <= v]
        shown = zip(id_map.describe(u[:SHOW]), id_map.describe(v[:SHOW]))
        duplicates.report(int(u.shape[0]), [f"{a}{arrow}{b}" for a, b in shown], mode,
                          directed)
    return merged


def _symmetric_pairing(b: Buffers):
    """The reverse pairing of symmetric input; ValueError naming the edges without a reverse,
    then those whose weights differ from their reverse edge's."""
    reverse, missing = pair_reverse(b.edge_sources, b.out_indices, b.n, b.offset_dtype)
    id_map = VertexIds(b.vertices, b.sides, b.side_names, labels=b.labels)
    if missing is not None:
        raise ValueError(no_reverse_message(
            id_map.describe_edges(b.out_offsets, b.out_indices, missing)))
    if b.edge_weights is not None:
        differ = xp.nonzero(xp.any(b.edge_weights != b.edge_weights[reverse], axis=1))[0]
        if differ.shape[0]:
            raise ValueError(asymmetric_weights_message(
                id_map.describe_edges(b.out_offsets, b.out_indices, differ)))
    return reverse


def assemble_simple_undirected(vertices, src, dst, weights, weight_names, *, directed,
                               multigraph, sides=None, side_names=None, duplicates="first",
                               labels=None) -> Buffers:
    """A simple undirected graph from internal (src, dst) rows, with one sort.

    Row i becomes entries 2i (u->v) and 2i+1 (v->u). One stable sort by pair key puts each
    directed pair's entries in a run in row order, so a run's head comes from the first
    row naming the unordered pair {u, v} (either way round), whose weights it keeps; the
    heads in sorted order are the CSR (a self-loop's two equal entries share a run: it is
    stored once). The head of the v->u run is the twin of the u->v head (the same row's
    other entry), which gives the reverse pairing. The edge set is symmetric and has no
    parallel edges, so the CSC is the CSR transposed: the same offsets, degrees and indices,
    and in_edge_ids is the reverse pairing; those arrays are shared, not copied.  Rows that
    name one pair merge their weights as ``duplicates`` says (:func:`_merged`)."""
    n = int(vertices.shape[0])
    key = xp.stack([_pair_keys(src, dst, n), _pair_keys(dst, src, n)], axis=1).reshape(-1)
    order = xp.argsort(key, kind="stable")
    sorted_key = key[order]
    del key
    head = run_heads(sorted_key)
    merged = None
    if head is not None:
        if weights is not None:
            rows = order >> 1
            skip = None
            if duplicates == "sum":  # a loop's second copy
                skip = ((order & 1) == 1) & (src[rows] == dst[rows])
            merged = _merged(weights, rows, head, sorted_key, n, duplicates,
                             VertexIds(vertices, sides, side_names, labels=labels),
                             directed, " - ", skip)
            del rows, skip
        keep = xp.flatnonzero(head)
        order, sorted_key = order[keep], sorted_key[keep]
    m = int(order.shape[0])
    vtype, etype = vertex_dtype(n), edge_dtype(m)
    src_sorted, dst_sorted = _split_keys(sorted_key, n, vtype)
    del sorted_key
    positions = xp.arange(m, dtype=etype)
    slot = xp.empty(2 * int(src.shape[0]), dtype=etype)  # CSR position of each head entry
    slot[order] = positions
    # A self-loop's twin is no head (its slot is unset): a loop is its own reverse.
    reverse = xp.where(src_sorted == dst_sorted, positions, slot[order ^ 1])
    del slot, positions
    if merged is not None:
        weights = xp.ascontiguousarray(merged)
    elif weights is not None:
        weights = xp.ascontiguousarray(weights[order >> 1].astype(np.float32, copy=False))
    offsets = _sorted_offsets(src_sorted, n, etype)
    degree = xp.diff(offsets).astype(np.int32)
    return Buffers(
        vertices=vertices.astype(np.int64, copy=False),
        out_offsets=offsets,
        out_indices=dst_sorted,
        in_offsets=offsets,
        in_indices=dst_sorted,
        in_edge_ids=reverse,
        out_degree=degree,
        in_degree=degree,
        edge_weights=weights,
        weight_names=weight_names,
        directed=directed,
        reverse_edge=reverse,
        multigraph=multigraph,
        sides=sides,
        side_names=side_names,
        edge_sources=src_sorted,
    )


def reordered(g, order: str, pairing) -> Buffers:
    """``g``'s vertices renumbered in ``order`` ("degree": descending total degree, ties in
    the current order; "bfs": :func:`bfs_order`; "id": ascending ids) and its edges sorted again; ``pairing`` is the
    reverse pairing fixed at ``g``'s construction (or None), which the CSR rows keep."""
    if order == "degree":
        total = g.out_degree.astype(np.int64) + g.in_degree.astype(np.int64)
        new_order = xp.argsort(-total, kind="stable")
    elif order == "bfs":
        new_order = bfs_order(g.simple_undirected())
    else:
        new_order = xp.argsort(g.vertices, kind="stable")
    rank = xp.empty(g.n, dtype=g.index_dtype)
    rank[new_order] = xp.arange(g.n, dtype=g.index_dtype)
    vertices = g.vertices[new_order]
    src, dst = rank[g.edge_sources], rank[g.out_indices]
    if not g.directed and not g.multigraph:  # both copies in: merged to one edge
        b = build(vertices, src, dst, g.edge_weights, g.weight_names, directed=False,
                  multigraph=False)
    else:  # the CSR rows are the input rows: a pairing fixed at construction is theirs
        b = assemble(vertices, src, dst, g.edge_weights, g.weight_names, directed=g.directed,
                     multigraph=g.multigraph, twins=pairing)
    b.vertex_order, b.labels = order, g.id_map.labels
    return b


def bfs_order(und):
    """The vertices of a simple undirected graph ``und`` in breadth-first order (Graffix's
    BFS-level renumbering, Cuthill and McKee's order): from the vertex of largest degree,
    level by level, each level's vertices by their earliest parent's place (then descending
    degree, then current order), so a vertex's neighbours get nearby numbers; the vertices it
    does not reach follow in descending degree.  A loop of a few array steps per level."""
    n = und.n
    offsets, indices = und.out_offsets.astype(np.int64), und.out_indices.astype(np.int64)
    degree = offsets[1:] - offsets[:-1]
    place = xp.full(n, -1, np.int64)
    if n == 0:
        return place
    frontier = xp.argmax(degree).reshape(1)
    place[frontier] = 0
    placed = 1
    while frontier.shape[0]:
        count = degree[frontier]
        owner = xp.repeat(frontier, count)
        start = xp.repeat(offsets[frontier] - (xp.cumsum(count) - count), count)
        neighbour = indices[start + xp.arange(owner.shape[0])]
        fresh = place[neighbour] < 0
        neighbour, parent = neighbour[fresh], place[owner[fresh]]
        by = xp.lexsort(xp.stack([-degree[neighbour], parent, neighbour]))
        neighbour, parent = neighbour[by], parent[by]  # each vertex's earliest parent first
        head = xp.ones(neighbour.shape[0], bool)
        head[1:] = neighbour[1:] != neighbour[:-1]
        frontier, parent = neighbour[head], parent[head]
        frontier = frontier[xp.lexsort(xp.stack([frontier, -degree[frontier], parent]))]
        place[frontier] = xp.arange(placed, placed + frontier.shape[0])
        placed += int(frontier.shape[0])
    rest = xp.flatnonzero(place < 0)
    place[rest[xp.argsort(-degree[rest], kind="stable")]] = xp.arange(placed, n)
    return xp.argsort(place)


def simple_undirected(g) -> Buffers:
    """The simple undirected view of a device graph ``g``: directions dropped, parallel edges
    merged, self-loops removed, every vertex kept in the same internal order."""
    src = g.edge_sources.astype(np.int64)
    dst = g.out_indices.astype(np.int64)
    keep = src != dst
    low = xp.minimum(src[keep], dst[keep])
    high = xp.maximum(src[keep], dst[keep])
    pairs = xp.unique(low * g.n + high)
    b = build(g.vertices, pairs // g.n, pairs % g.n, None, [], directed=False,
              multigraph=False, sides=g.sides, side_names=g.side_names, distinct=True)
    b.vertex_order, b.labels = g.vertex_order, g.id_map.labels
    return b


def pair_reverse(src, dst, n: int, dtype):
    """The reverse pairing of CSR edges (``src``, ``dst``: internal ends in CSR order):
    ``(reverse as dtype, None)`` when every edge has a partner, else ``(None, positions
    without one)``.  Parallel edges pair up one to one in CSR order (the k-th u->v with the
    k-th v->u); a self-loop is its own reverse."""
    m = int(dst.shape[0])
    src = src.astype(np.int64)
    dst = dst.astype(np.int64)
    keys = src * n + dst  # ascending: CSR order is (source, destination)
    reverse_keys = dst * n + src
    lo = xp.searchsorted(keys, reverse_keys, side="left")
    hi = xp.searchsorted(keys, reverse_keys, side="right")
    rank = xp.arange(m, dtype=np.int64) - xp.searchsorted(keys, keys, side="left")
    paired = rank < (hi - lo)
    if m and not bool(paired.all()):
        return None, xp.nonzero(~paired)[0]
    return (lo + rank).astype(dtype), None  # edge positions


def _sorted_offsets(sorted_rows, n: int, dtype):
    """CSR offsets (n+1, ``dtype``) of ascending row indices: where each row 0..n starts, by a
    binary search per row (no pass over the m entries, no atomics)."""
    kind = sorted_rows.dtype if n < np.iinfo(sorted_rows.dtype).max else np.dtype(np.int64)
    rows = xp.arange(n + 1, dtype=kind)
    return xp.searchsorted(sorted_rows, rows, side="left").astype(dtype, copy=False)


def _pair_keys(src, dst, n: int):
    """``src * n + dst`` for internal indices in [0, n): uint32 while n <= :data:`KEY32_MAX_N`
    (then n * n <= 2**32), else int64; ascending keys are (source, destination) order."""
    if n <= KEY32_MAX_N:
        key = _as_uint32(src) * np.uint32(n)
        key += _as_uint32(dst)
        return key
    key = xp.multiply(src, np.int64(n), dtype=np.int64)
    key += dst
    return key


def _as_uint32(a):
    """Non-negative indices below 2**32 as uint32 (a view when they are int32)."""
    return a.view(np.uint32) if a.dtype == np.int32 else a.astype(np.uint32)


def _split_keys(keys, n: int, dtype):
    """(sources, destinations) as ``dtype`` from :func:`_pair_keys` keys."""
    if n == 0:
        return keys.astype(dtype), keys.astype(dtype)
    src, dst = xp.divmod(keys, keys.dtype.type(n))
    return src.astype(dtype, copy=False), dst.astype(dtype, copy=False)
