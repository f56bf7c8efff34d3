"""The host build: a graph whose edges do not fit on the device, built in chunks into
host-placed CSR and CSC arrays (:meth:`Graph.from_parquet` with ``placement="host"``, say).

The whole edge list is never on the device, nor in host memory beyond one chunk and the
graph's own arrays.  The file is read three times, each chunk moved to the device, used, and
dropped; then the host arrays are worked through in blocks:

1. **Distinct ids** (the renumbering to 0..n-1): the sorted distinct ids of each chunk,
   merged into one sorted set on the device (O(n)); the weights are validated here, so a bad
   file fails before anything large is allocated.
2. **Out-degrees** of the raw rows (an undirected row counts once at each end).
3. **Scatter**: each row's entry goes to the next free slot of its source's range in the
   host CSR arrays (a cursor per vertex on the device), so a row keeps its file order
   within its source's range.
4. **Rows**: blocks of whole rows come back to the device, are sorted by destination
   (stably: parallel edges keep file order), their parallel edges merged, their weights as
   ``duplicates`` says (unless ``multigraph``; :mod:`~onyx_rapids.construction.duplicates`),
   and are written back moved left over the gaps the merging left; the in-degrees are counted
   on the way.
5. **CSC**: blocks of the finished CSR are scanned in order; an edge's CSC slot is its
   destination's offset plus a cursor per destination, so each column lists its sources
   ascending with their CSR positions (``in_edge_ids``).  A simple undirected graph's CSC is
   its CSR, and this pass gives the reverse-edge pairing instead.

Label ids (strings, say: :func:`onyx_rapids.ids.renumber_labels`) take pass 1 on the host: each
chunk's distinct labels join a set there, which becomes the sorted label table; later passes look
each chunk's labels up in it (a pandas hash index) before moving the codes to the device.

The same passes 2-5 build :meth:`Graph.simple_undirected` of a host-placed graph from blocks
of its CSR (:func:`simple_undirected`): what weakly connected components, core numbers
and APPNP run on; and a graph from CSR arrays in host memory (:func:`from_csr`,
:meth:`Graph.from_csr` with ``placement="host"``), from chunks of its entries (no
renumbering: pass 1 is the check of the input, on the host), a symmetric (undirected) input
stored as given and paired with its reverse edges in blocks of vertices.  An edge frame on
the device (:meth:`Graph.from_cugraph`'s cuDF frame) is read in slices where it is.

The result equals what the device build (:mod:`onyx_rapids.construction.device`) gives (the same
arrays, dtypes and order): vertex indices (``out_indices``, ``in_indices``) take
:func:`~onyx_rapids.construction.layout.vertex_dtype` of n, offsets and edge positions
(``in_edge_ids``, the reverse pairing) take :func:`~onyx_rapids.construction.layout.edge_dtype`
of the number of edges left after merging.  Every builder returns
:class:`~onyx_rapids.construction.layout.Buffers` placed on the host.  Progress lines go to the
``onyx_rapids.host_build`` logger (level INFO).
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .. import device, io, memory
from ..device import xp
from ..ids import Renumbering, VertexIds, is_labels, renumber_labels
from . import duplicates
from .layout import Buffers, edge_dtype, edge_rows, row_blocks, run_heads, vertex_dtype
from ..messages import SHOW, asymmetric_weights_message, no_reverse_message

__all__ = ["from_parquet", "from_frame", "from_csr", "simple_undirected", "assemble",
           "default_chunk_rows"]

# The logger's name is the one the CLI and users listen to (the module's name before the
# builds moved into onyx_rapids.construction).
log = logging.getLogger("onyx_rapids.host_build")

#: Device bytes a chunk row costs at its peak (ids read as int64, sort keys, orders, entries
#: stored both ways for an undirected graph): chunk sizes are chosen from it.
CHUNK_ROW_BYTES = 160


def default_chunk_rows() -> int:
    """Rows per chunk: what a quarter of the device memory the library may use holds, between
    2**16 and 2**27."""
    rows = memory.device_available() // (4 * CHUNK_ROW_BYTES)
    return int(min(max(rows, 1 << 16), 1 << 27))


def from_parquet(path, source, destination, weight, *, directed: bool, multigraph: bool,
                 vertices=None, chunk_rows: int | None = None, duplicates=None) -> Buffers:
    """A host-placed graph from a Parquet file, read in chunks (module docstring).

    ``directed=False`` with ``multigraph=True`` (reverse pairing of every parallel copy) is
    not built this way; :meth:`Graph.from_parquet` builds it on the device.
    """
    path, columns = io.parquet_edge_columns(path, source, destination, weight)
    chunk_rows = default_chunk_rows() if chunk_rows is None else int(chunk_rows)

    ids = len(dict.fromkeys(sum(io.pair_id_columns(source, destination), [])))  # come first

    def chunks(weights: bool):
        for start, table in io.parquet_chunks(path, columns if weights else columns[:ids],
                                              chunk_rows):
            yield start, table

    return _from_chunks(chunks, source, destination, weight, directed=directed,
                        multigraph=multigraph, vertices=vertices, chunk_rows=chunk_rows,
                        where=f"Parquet file {path!r}", empty=f"path={path!r}",
                        duplicates=duplicates)


def from_frame(df, source, destination, weight, *, directed: bool, multigraph: bool,
               vertices=None, chunk_rows: int | None = None, weight_names=None,
               duplicates=None) -> Buffers:
    """A host-placed graph from an edge frame (pandas, pyarrow or cuDF), its rows
    moved to the device ``chunk_rows`` at a time (:meth:`Graph.from_edgelist` with
    ``placement="host"``; :meth:`Graph.from_cugraph`, whose cuDF frame is sliced where it
    is): the module docstring's passes, the frame read three times.  ``weight_names`` names
    the weight columns in the graph instead of their frame names."""
    total = io.frame_rows(df)
    chunk_rows = min(default_chunk_rows(), max(total, 1)) if chunk_rows is None \
        else int(chunk_rows)

    def chunks(weights: bool):
        for start in range(0, total, chunk_rows):
            yield start, io.frame_rows_slice(df, start, min(start + chunk_rows, total))

    return _from_chunks(chunks, source, destination, weight, directed=directed,
                        multigraph=multigraph, vertices=vertices, chunk_rows=chunk_rows,
                        where="the edge list", empty="df", weight_names=weight_names,
                        duplicates=duplicates)


def _from_chunks(chunks, source, destination, weight, *, directed, multigraph, vertices,
                 chunk_rows, where, empty, weight_names=None, duplicates=None):
    """Passes 1-5 over ``chunks(weights)``, which yields ``(first row, frame)`` pieces of the
    edge list (with the weight columns when ``weights``); ``where`` names it in messages,
    ``weight_names`` (when given) the weight columns in the graph."""
    if not directed and multigraph:
        raise ValueError("an undirected multigraph is built on the device, not in chunks")
    extra = None if vertices is None else io.read_extra_vertices(vertices)

    def rows_of(weights: bool):
        for start, frame in chunks(weights):
            yield io.read_edgelist(frame, source, destination, weight if weights else None,
                                   where=where, row_offset=start, labels=True)

    with memory.allocating(f"building a graph from {where} in chunks of {chunk_rows} rows",
                           chunk_rows * CHUNK_ROW_BYTES,
                           "pass a smaller chunk_rows, or raise the budget"):
        clock = _Clock()
        distinct, names, rows, found = None, [], 0, []
        for src, dst, _w, names in rows_of(True):
            rows += int(src.shape[0])
            if is_labels(src):  # labels: their distinct values gathered on the host
                found.append(_distinct_labels(np.concatenate([src, dst])))
                continue
            ids = xp.unique(xp.concatenate([src, dst]))
            distinct = ids if distinct is None else xp.unique(xp.concatenate([distinct, ids]))
        if not rows:
            raise ValueError(f"{empty}: the edge list is empty (0 rows); a graph needs at "
                             "least one edge (for a graph without edges use Graph.from_csr)")
        labels = None
        if found or (extra is not None and is_labels(extra)):
            distinct, _internal, labels = renumber_labels(found + (
                [] if distinct is None else [distinct]), extra)
        elif extra is not None and extra.size:
            distinct = xp.unique(xp.concatenate([distinct, extra.reshape(-1)]))
        internal = Renumbering(distinct)
        clock.done("distinct ids", rows=rows, n=internal.n)

        def entries(weights: bool):
            for src, dst, w, _names in rows_of(weights):
                if labels is not None:
                    src, dst = (device.asarray(labels.codes(a)) for a in (src, dst))
                yield internal(src), internal(dst), w

        if weight_names is not None:
            names = list(weight_names)
        b = assemble(entries, distinct, names, directed=directed, multigraph=multigraph,
                     block=chunk_rows, clock=clock, duplicates=duplicates, labels=labels)
        b.labels = labels
        return b


def _distinct_labels(values):
    """The distinct labels of a host object array (order of first appearance)."""
    import pandas as pd

    return np.asarray(pd.unique(values), dtype=object)


def from_csr(offsets, indices, weights, *, directed: bool, multigraph: bool,
             chunk_rows: int | None = None) -> Buffers:
    """A host-placed graph on vertices 0..n-1 from host CSR parts (NumPy arrays,
    lists, pandas Series: :func:`onyx_rapids.io.csr_inputs`), for :meth:`Graph.from_csr`
    with ``placement="host"``.

    The input is checked on the host in blocks (:func:`onyx_rapids.io.read_csr_on_host`: the
    device build's checks and errors), then passes 2-5 of the module docstring run over
    chunks of ``chunk_rows`` entries: each entry's row found in the offsets (on the device,
    O(n)), its index and weights sliced from the input and moved to the device; the ids are
    the vertex indices (no renumbering).  ``directed=False`` input is symmetric and stored
    as given (not both ways); its reverse pairing is found, and its symmetry checked, in
    blocks of vertices (:func:`_pair_symmetric`).
    """
    block = default_chunk_rows() if chunk_rows is None else int(chunk_rows)
    clock = _Clock()
    csr = io.read_csr_on_host(offsets, indices, weights, block)  # before any device memory
    clock.done("CSR checked", n=csr.n, entries=csr.m)
    if chunk_rows is None:
        block = min(block, max(csr.m, 1))
    n, m = csr.n, csr.m
    vtype = vertex_dtype(n)
    with memory.allocating(f"building a graph from CSR arrays of {m} entries in chunks of "
                           f"{block} rows", block * CHUNK_ROW_BYTES,
                           "pass a smaller chunk_rows, or raise the budget"):
        rows_of = device.asarray(csr.offsets)  # per vertex: on the device

        def entries(weights: bool):
            for a in range(0, m, block):
                b = min(a + block, m)
                src = edge_rows(rows_of, a, b, vtype)
                dst = _on_device(csr.indices[a:b]).astype(vtype, copy=False)
                w = None
                if weights and csr.weights is not None:
                    w = _on_device(csr.weights.block(a, b))
                yield src, dst, w

        return assemble(entries, xp.arange(n, dtype=np.int64), csr.names, directed=directed,
                        multigraph=multigraph, block=block, clock=clock,
                        symmetric_input=not directed)


def simple_undirected(g, chunk_rows: int | None = None) -> Buffers:
    """:meth:`Graph.simple_undirected` of a host-placed graph, built in blocks of its CSR
    straight into host memory (passes 2-5 of the module docstring)."""
    block = default_chunk_rows() if chunk_rows is None else int(chunk_rows)

    def entries(_weights: bool):
        for a in range(0, g.m, block):
            b = min(a + block, g.m)
            dst = _on_device(g.out_indices[a:b])
            src = edge_rows(g.out_offsets, a, b, dst.dtype)
            keep = src != dst
            yield src[keep], dst[keep], None

    with memory.allocating(f"building the simple undirected view of a host graph of {g.m} "
                           f"edges in blocks of {block}", block * CHUNK_ROW_BYTES):
        b = assemble(entries, g.vertices, [], directed=False, multigraph=False, block=block,
                     clock=_Clock(), sides=g.sides, side_names=g.side_names)
    b.vertex_order, b.labels = g.vertex_order, g.id_map.labels
    return b


def assemble(entries, vertices, names, *, directed: bool, multigraph: bool, block: int, clock,
             sides=None, side_names=None, symmetric_input: bool = False, duplicates="first",
             labels=None) -> Buffers:
    """Passes 2-5 (module docstring) over ``entries(weights)``: an iterable of (src, dst,
    weights | None) chunks of internal indices, read again for each pass (``weights`` False:
    the weights are not needed).  An undirected graph's rows are stored both ways here,
    unless they are a ``symmetric_input`` (CSR of an undirected graph, every u->v with its
    v->u): those are stored as given, with a CSC of their own, as the device build stores
    them, and paired with their reverses (:func:`_pair_symmetric`, which checks them).
    Parallel rows merge their weights as ``duplicates`` says (``labels``, the ids' table when
    they are labels, names pairs in its messages)."""
    n = int(vertices.shape[0])
    symmetric = symmetric_input and not directed
    separate_csc = directed or symmetric  # else a simple undirected graph's CSC is its CSR

    def stored(weights: bool):
        for src, dst, w in entries(weights):
            if not directed and not symmetric:  # entry 2i is row i as given, 2i+1 reversed
                copy = src != dst  # (a self-loop's reversed copy is itself: stored once)
                src, dst = (xp.stack([src, dst], axis=1).reshape(-1),
                            xp.stack([dst, src], axis=1).reshape(-1))
                w = None if w is None else xp.repeat(w, 2, axis=0)
                keep = xp.stack([xp.ones_like(copy), copy], axis=1).reshape(-1)
                if not bool(keep.all()):
                    src, dst = src[keep], dst[keep]
                    w = None if w is None else w[keep]
            yield src, dst, w

    degree = xp.zeros(n, dtype=np.int64)
    for src, _dst, _w in stored(False):
        degree += xp.bincount(src, minlength=n)
    raw = int(degree.sum())
    vtype = vertex_dtype(n)  # vertex indices; the offsets' dtype waits for m (after merging)
    raw_offsets = _offsets(degree)
    clock.done("out-degrees", entries=raw)

    out_indices = memory.host_empty(raw, vtype)
    weights = None if not names else memory.host_empty((raw, len(names)), np.float32)
    cursor = raw_offsets[:-1].copy()
    for src, dst, w in stored(bool(names)):
        order, pos = _slots(src, cursor, n)
        out_indices[pos] = dst[order].astype(vtype, copy=False)
        if weights is not None:
            weights[pos] = w[order]
        del order, pos
    del cursor
    clock.done("scatter")

    merging = None if multigraph else _Merging(
        duplicates, directed, VertexIds(vertices, sides, side_names, labels=labels))
    out_degree, in_degree, m = _sort_rows(out_indices, weights, raw_offsets, degree, n,
                                          block=block, merging=merging)
    if merging is not None:
        merging.report()
    del raw_offsets, degree
    out_indices = out_indices[:m]
    weights = None if weights is None else weights[:m]
    etype = edge_dtype(m)  # offsets and edge positions
    out_offsets = _offsets(out_degree).astype(etype)
    clock.done("rows sorted", m=m)

    if separate_csc:
        in_offsets = _offsets(in_degree).astype(etype)
        in_indices = memory.host_empty(m, vtype)
    else:
        in_offsets, in_indices = out_offsets, out_indices
    in_edge_ids = memory.host_empty(m, etype)
    _columns(out_indices, out_offsets, in_offsets, in_indices if separate_csc else None,
             in_edge_ids, n, block=block)
    clock.done("CSC")
    out_deg32 = out_degree.astype(np.int32)
    b = Buffers(vertices=vertices.astype(np.int64, copy=False), out_offsets=out_offsets,
                out_indices=out_indices, in_offsets=in_offsets, in_indices=in_indices,
                in_edge_ids=in_edge_ids, out_degree=out_deg32,
                in_degree=in_degree.astype(np.int32) if separate_csc else out_deg32,
                edge_weights=weights, weight_names=names, directed=directed,
                reverse_edge=None if separate_csc else in_edge_ids, multigraph=multigraph,
                sides=sides, side_names=side_names, placement="host")
    if symmetric:
        b.reverse_edge = _pair_symmetric(b, block)
        clock.done("reverse pairing")
    return b


def _pair_symmetric(g: Buffers, block: int):
    """The reverse pairing (a host array, ``offset_dtype``) of a host graph ``g`` built from
    symmetric input, found in blocks of about ``block`` entries of whole vertices, as
    :func:`~onyx_rapids.construction.device.pair_reverse` finds it on the device: the k-th
    u->v (CSR order) pairs with the k-th v->u, a self-loop with itself.  An edge u->v is entry
    j of column v of the CSC, whose entries are sorted by (source, CSR position); its reverse
    lies in row v of the CSR, sorted by (destination, position): so a block of vertices pairs
    its columns with its rows.  Raises the device build's ValueError (the same text) for edges
    without a reverse, then for weights that differ from their reverse edge's."""
    describe = VertexIds(g.vertices, g.sides, g.side_names, labels=g.labels).describe_edges
    n, m = g.n, g.m
    reverse = memory.host_empty(m, g.offset_dtype)
    out_off = device.to_host(g.out_offsets).astype(np.int64)
    in_off = device.to_host(g.in_offsets).astype(np.int64)
    missing = _First()
    for v0, v1 in row_blocks(out_off + in_off, block):
        ca, cb = int(in_off[v0]), int(in_off[v1])
        if ca == cb:  # no edge ends at these vertices
            continue
        ra, rb = int(out_off[v0]), int(out_off[v1])
        column = edge_rows(g.in_offsets, ca, cb, np.int64) - v0
        ckey = column * n + _on_device(g.in_indices[ca:cb]).astype(np.int64)  # ascending
        row = edge_rows(g.out_offsets, ra, rb, np.int64) - v0
        rkey = row * n + _on_device(g.out_indices[ra:rb]).astype(np.int64)  # ascending
        del column, row
        rank = xp.arange(cb - ca, dtype=np.int64) - xp.searchsorted(ckey, ckey, side="left")
        lo = xp.searchsorted(rkey, ckey, side="left")
        paired = rank < xp.searchsorted(rkey, ckey, side="right") - lo
        edge = _on_device(g.in_edge_ids[ca:cb])  # CSR positions of the column entries
        reverse[edge[paired]] = (lo + rank + ra)[paired].astype(reverse.dtype, copy=False)
        missing.add(edge[~paired])
    if missing.total:
        raise ValueError(no_reverse_message(describe(g.out_offsets, g.out_indices,
                                                     missing.first, missing.total)))
    if g.edge_weights is not None:
        differ = _First()
        for a in range(0, m, block):
            b = min(a + block, m)
            mine = _on_device(g.edge_weights[a:b])
            theirs = g.edge_weights[_on_device(reverse[a:b])]
            differ.add(xp.flatnonzero(xp.any(mine != theirs, axis=1)) + a)
        if differ.total:
            raise ValueError(asymmetric_weights_message(
                describe(g.out_offsets, g.out_indices, differ.first, differ.total)))
    return reverse


class _First:
    """How many edge positions were found, over blocks, and the smallest few of them (what
    an error message names)."""

    def __init__(self):
        self.total, self.first = 0, None

    def add(self, positions) -> None:
        k = int(positions.shape[0])
        if not k:
            return
        self.total += k
        positions = positions.astype(np.int64)
        merged = positions if self.first is None else xp.concatenate([self.first, positions])
        self.first = xp.sort(merged)[:SHOW]


class _Clock:
    """Timed progress lines of the build, on the ``onyx_rapids.host_build`` logger."""

    def __init__(self):
        self.t0 = self.last = time.perf_counter()

    def done(self, step: str, **figures) -> None:
        now = time.perf_counter()
        detail = " ".join(f"{k}={v}" for k, v in figures.items())
        log.info("host build: %s in %.2f s (%.2f s in all) %s", step, now - self.last,
                 now - self.t0, detail)
        self.last = now


def _offsets(counts):
    """Offsets (n+1, int64) of per-vertex ``counts``."""
    out = xp.zeros(int(counts.shape[0]) + 1, dtype=np.int64)
    xp.cumsum(counts, out=out[1:])
    return out


def _slots(keys, cursor, n: int):
    """Where each entry of a chunk goes: ``(order, positions)`` with ``positions[i]`` the slot
    of entry ``order[i]``: its key's next free slot, ``cursor[key]`` onward in chunk order;
    advances ``cursor`` past the chunk's entries."""
    order = xp.argsort(keys, kind="stable")
    ordered = keys[order]
    rank = xp.arange(ordered.shape[0], dtype=np.int64)
    rank -= xp.searchsorted(ordered, ordered, side="left")
    positions = cursor[ordered] + rank
    cursor += xp.bincount(keys, minlength=n)
    return order, positions


def _on_device(a):
    """A device copy of (a slice of) a host-placed array."""
    return xp.array(a, copy=True)


class _Merging:
    """Pass 4's merging of parallel rows over blocks: their weights as ``mode`` says
    (:func:`~onyx_rapids.construction.duplicates.merge_weights`), and the pairs whose rows
    disagreed, counted (an undirected pair once) and the first few kept for
    :meth:`report`."""

    def __init__(self, mode, directed: bool, id_map):
        self.mode, self.directed, self.id_map = mode, directed, id_map
        self.count, self.shown = 0, []

    def weights(self, weights, order, head, row, dst):
        """The merged weights of a block (``weights`` in block order, ``order`` its sorted
        order, runs of ``head``; ``row``/``dst``: the internal ends of each sorted entry),
        noting the pairs that disagreed."""
        merged, bad = duplicates.merge_weights(weights, order, head, self.mode)
        if bad.shape[0] and self.mode in (None, "error"):
            first = xp.flatnonzero(head)[bad]
            u, v = row[first].astype(np.int64), dst[first].astype(np.int64)
            if not self.directed:
                u, v = u[u <= v], v[u <= v]
            self.count += int(u.shape[0])
            arrow = " -> " if self.directed else " - "
            take = max(SHOW - len(self.shown), 0)
            self.shown += [f"{a}{arrow}{b}" for a, b in zip(
                self.id_map.describe(u[:take]), self.id_map.describe(v[:take]))]
        return merged

    def report(self) -> None:
        duplicates.report(self.count, self.shown, self.mode, self.directed)


def _sort_rows(indices, weights, offsets, degree, n: int, *, block: int, merging):
    """Pass 4: sort each row of the raw host CSR by destination (stably), merge parallel
    edges unless ``merging`` is None (their weights by it, a :class:`_Merging`), and write
    the rows back moved left; returns (out-degrees, in-degrees, m) on the device."""
    host_offsets = device.to_host(offsets)
    out_degree = xp.zeros(n, dtype=np.int64)
    in_degree = xp.zeros(n, dtype=np.int64)
    written = 0
    for v0, v1 in row_blocks(host_offsets, block):
        a, b = int(host_offsets[v0]), int(host_offsets[v1])
        if a == b:
            continue
        dst = _on_device(indices[a:b])
        row = xp.searchsorted(offsets[v0 + 1:v1 + 1] - a, xp.arange(b - a), side="right")
        key = row.astype(np.int64) * n + dst
        order = xp.argsort(key, kind="stable")
        merged = None
        if merging is not None:
            head = run_heads(key[order])
            if head is not None:
                if weights is not None:
                    merged = merging.weights(_on_device(weights[a:b]), order, head,
                                             row[order] + v0, dst[order])
                order = order[xp.flatnonzero(head)]
        del key
        row, dst = row[order], dst[order]
        k = int(dst.shape[0])
        indices[written:written + k] = dst
        if weights is not None:
            weights[written:written + k] = _on_device(weights[a:b])[order] if merged is None \
                else merged
        out_degree[v0:v1] = xp.bincount(row, minlength=v1 - v0)
        in_degree += xp.bincount(dst, minlength=n)
        written += k
    return out_degree, in_degree, written


def _columns(out_indices, out_offsets, in_offsets, in_indices, in_edge_ids, n: int, *,
             block: int):
    """Pass 5: scan the finished CSR in blocks and place each edge in its CSC slot:
    ``in_indices`` (its source; None when the CSC shares the CSR's) and ``in_edge_ids`` (its
    CSR position)."""
    m = int(out_indices.shape[0])
    cursor = in_offsets[:-1].astype(np.int64)
    for a in range(0, m, block):
        b = min(a + block, m)
        dst = _on_device(out_indices[a:b])
        order, pos = _slots(dst, cursor, n)
        in_edge_ids[pos] = (order.astype(np.int64) + a).astype(in_edge_ids.dtype, copy=False)
        if in_indices is not None:
            in_indices[pos] = edge_rows(out_offsets, a, b, in_indices.dtype)[order]
