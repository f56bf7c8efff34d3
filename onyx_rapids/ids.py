"""Vertex ids: the renumbering map between original ids and internal indices 0..n-1.

Built once per graph: :func:`renumber` gives the distinct original ids ascending and each
input id's internal index (the device build); :class:`Renumbering` maps chunks of ids by the
sorted distinct ids (the host build).  Kept by the graph as a :class:`VertexIds`
(``Graph.id_map``): ``vertices``, the original id of each internal index (for a bipartite
graph also ``sides``, 0 left and 1 right, and ``side_names``), and the lookups back from
original ids (:meth:`VertexIds.to_internal`, :meth:`VertexIds.locate`), also after
``Graph.reorder`` has permuted the internal order; and the descriptions of vertices and edges
in original ids that error messages use.

Ids that are not integers (strings, bytes, categoricals, any hashable: NetworkX node labels)
are renumbered as cuGraph renumbers them (:func:`renumber_labels`): each distinct label gets a
code 0..n-1, ascending label order when the labels sort (strings, bytes, mixed ints and floats),
else in order of first appearance; the graph keeps the codes in ``vertices`` and the labels in
a :class:`VertexLabels` (``VertexIds.labels``), through which every lookup by original id and
every result column of ids (:meth:`VertexIds.column`, a :class:`LabelColumn`) passes.  Integer
ids never take this path: their renumbering is :func:`renumber`, unchanged.
"""

from __future__ import annotations

import numpy as np

from . import device
from .messages import SHOW, listing
from .device import xp

# Renumbering marks the ids in a table over [smallest id, largest id] when that span is at most
# this many times the number of ids read (the table costs 5 bytes a slot, about what the sort
# it replaces allocates), else it sorts the ids. A module global so tests can set it (0: sort).
DENSE_SPAN_FACTOR = 2
_INT32_MAX = int(np.iinfo(np.int32).max)


def is_labels(a) -> bool:
    """Whether ``a`` holds labels (a host NumPy object array, as :mod:`onyx_rapids.io` reads
    non-integer ids), not integer ids."""
    return isinstance(a, np.ndarray) and a.dtype == object


def as_labels(a):
    """Ids as a host object array of labels (integer ids become Python ints)."""
    if is_labels(a):
        return a
    return device.to_host(a).astype(object)


def _factorize(values):
    """``(codes int64, distinct labels)`` of a host object array: the labels ascending when
    they sort, else in order of first appearance (pandas' hash table: equal labels, such as
    ``1`` and ``1.0``, are one, as in a dict)."""
    import pandas as pd

    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError:  # labels of types that do not compare (str and tuple, say)
        codes, uniques = pd.factorize(values, sort=False)
    uniques = np.asarray(uniques, dtype=object)
    return codes.astype(np.int64, copy=False), uniques


def renumber_labels(parts, extra=None):
    """Renumber labels (non-integer ids, host object arrays; integer arrays among them are
    read as labels too) to 0..n-1: :func:`renumber`'s result for labels, plus their table.

    Returns ``(vertices, internal, labels)``: ``vertices`` (n, int64) the codes 0..n-1 (each
    vertex's label is ``labels.values[code]``), each array of ``parts`` as internal indices on
    the device (int32 while n fits), and the :class:`VertexLabels`."""
    every = [as_labels(p).reshape(-1) for p in parts]
    if extra is not None and extra.size:
        every.append(as_labels(extra).reshape(-1))
    codes, uniques = _factorize(np.concatenate(every) if every else np.zeros(0, object))
    n = int(uniques.shape[0])
    dtype = np.int32 if n <= _INT32_MAX else np.int64
    internal, start = [], 0
    for p in every[:len(parts)]:
        stop = start + int(p.shape[0])
        internal.append(device.asarray(codes[start:stop].astype(dtype)))
        start = stop
    return xp.arange(n, dtype=np.int64), internal, VertexLabels(uniques)


class VertexLabels:
    """The original ids of a graph whose ids are labels (strings, bytes, any hashable):
    ``values`` (host object array), the label of each code (the codes are what the graph
    keeps in ``vertices``); for a bipartite graph the left side's labels, then the right
    side's (``split``: how many are left).  Lookups go through a pandas Index per side,
    built on first use."""

    def __init__(self, values, split: int | None = None):
        self.values = values
        self.split = split
        self.strings = all(isinstance(v, str) for v in values)
        self._index = {}

    def _side_index(self, side):
        """(pandas Index of the labels of ``side`` (None: all), their first code)."""
        if side not in self._index:
            import pandas as pd

            lo, hi = (0, len(self.values)) if side is None or self.split is None else \
                ((0, self.split) if side == 0 else (self.split, len(self.values)))
            self._index[side] = (pd.Index(self.values[lo:hi], dtype=object, tupleize_cols=False), lo)
        return self._index[side]

    def codes(self, labels, side=None):
        """Codes (int64 host array, -1 where absent) of a host array of ``labels``; ``side``
        (bipartite graphs): 0/1, or an array of them, one per label."""
        labels = as_labels(labels).reshape(-1)
        if self.split is None or side is None or isinstance(side, (int, np.integer)):
            index, lo = self._side_index(None if self.split is None else side)
            found = index.get_indexer(labels).astype(np.int64)
            return np.where(found >= 0, found + lo, -1)
        side = device.to_host(side).reshape(-1)
        return np.where(side == 0, self.codes(labels, 0), self.codes(labels, 1))

    def take(self, codes):
        """The labels of ``codes`` (any array of them) as a host object array."""
        return self.values[device.to_host(codes).astype(np.int64)]


class LabelColumn:
    """A result column of vertex ids of a labelled graph: ``codes`` (a backend array of the
    codes the graph keeps in ``vertices``), written as their labels (``labels``, a
    :class:`VertexLabels`), null where ``valid`` (when given) is False."""

    def __init__(self, codes, labels: VertexLabels, valid=None):
        self.codes, self.labels, self.valid = codes, labels, valid

    @property
    def shape(self):
        return self.codes.shape

    def values(self):
        """The labels as a host object array, None where not valid."""
        out = self.labels.take(self.codes)
        if self.valid is not None:
            out = out.copy()
            out[~device.to_host(self.valid)] = None
        return out


def renumber(parts, extra=None):
    """Renumber integer ids to 0..n-1 in ascending id order.

    Returns ``(vertices, internal)``: the n distinct ids of ``parts`` and ``extra`` ascending
    (int64), and each array of ``parts`` as internal indices (int32 while n fits, else int64).
    ``extra`` (ids that may have no edges) only adds vertices. One pass marks the ids in a
    table over [smallest, largest id] when that span is small (at most :data:`DENSE_SPAN_FACTOR`
    times the ids read: ids 0..n-1, or any dense range), and a prefix sum over the table gives
    each id its index; otherwise one sort of all the ids (keys alone, 32-bit when the span fits
    in 32 bits) gives the distinct ids, and a binary search among them each id's index.
    """
    every = list(parts) + ([] if extra is None or extra.size == 0 else [extra.reshape(-1)])
    total = sum(int(p.shape[0]) for p in every)
    if total == 0:
        return xp.zeros(0, dtype=np.int64), [xp.zeros(0, dtype=np.int32) for _ in parts]
    bounds = device.to_host(xp.stack([p.min() for p in every] + [p.max() for p in every]))
    lo, hi = int(bounds[:len(every)].min()), int(bounds[len(every):].max())
    limit = DENSE_SPAN_FACTOR * total
    if hi - lo < limit:
        return _renumber_dense(parts, every, lo, hi, limit)
    return _renumber_sorted(parts, every, lo, hi, total)


def _renumber_dense(parts, every, lo: int, hi: int, limit: int):
    """:func:`renumber` by a table: rank[id - base] is the id's index. Base 0 when the ids are
    non-negative and the table still fits, so ids 0..n-1 (or 1..n) are used as they are, with
    no shift."""
    base = 0 if 0 <= lo and hi < limit else lo
    span = hi - base + 1
    shifted = [_shift(p, base, span) for p in every]
    present = xp.zeros(span, dtype=np.bool_)
    for p in shifted:
        _mark(present, p)
    rank = xp.cumsum(present, dtype=np.int32 if span <= _INT32_MAX else np.int64)
    rank -= 1
    vertices = xp.nonzero(present)[0].astype(np.int64, copy=False)
    if base:
        vertices += base
    return vertices, [rank[p] for p in shifted[:len(parts)]]


def _renumber_sorted(parts, every, lo: int, hi: int, total: int):
    """:func:`renumber` of sparse ids: one sort of the keys alone, then a binary search per id.
    Keys relative to the smallest id fit in uint32 when the span does (32-bit radix sort and
    searches); a keys-only sort moves half the bytes of an argsort with a scatter of the run
    numbers (``unique``'s ``return_inverse``)."""
    ids = xp.concatenate([p.astype(np.int64, copy=False) for p in every])
    key = (ids - lo).astype(np.uint32) if hi - lo < (1 << 32) else ids
    del ids
    sorted_key = xp.sort(key)
    head = xp.empty(total, dtype=np.bool_)
    head[0] = True
    xp.not_equal(sorted_key[1:], sorted_key[:-1], out=head[1:])
    distinct = sorted_key[head]
    del sorted_key, head
    index_dtype = np.int32 if distinct.shape[0] < _INT32_MAX else np.int64
    internal, start = [], 0
    for p in parts:
        stop = start + int(p.shape[0])
        internal.append(xp.searchsorted(distinct, key[start:stop]).astype(index_dtype))
        start = stop
    vertices = distinct.astype(np.int64, copy=False)
    if distinct.dtype != np.int64:
        vertices += lo
    return vertices, internal


_MARK_KERNEL = []  # the CuPy kernel of _mark, built on first use


def _mark(table, ids) -> None:
    """``table[ids] = True`` for a boolean ``table``.

    On the GPU a CuPy kernel stores only into slots still False: a plain scatter stores once
    per id, and on a skewed graph the stores to a hub's slot queue up. Duplicate ids race to
    write the same value, as they do in the scatter."""
    if xp is np:
        table[ids] = True
        return
    if not _MARK_KERNEL:
        _MARK_KERNEL.append(xp.ElementwiseKernel("I x", "raw B table",
                                                 "if (!table[x]) table[x] = 1;",
                                                 "onyx_graph_mark"))
    _MARK_KERNEL[0](ids, table)


def _shift(ids, base: int, span: int):
    """``ids - base`` as an index array (int64 unless the ids' own type holds ``span``)."""
    if base == 0:
        return ids
    if ids.dtype.itemsize < 8 and span > np.iinfo(ids.dtype).max:
        return xp.subtract(ids, base, dtype=np.int64)
    return ids - base


class Renumbering:
    """Original ids -> internal indices by the sorted distinct ids: a subtraction when they
    are one dense range, else a binary search (the host build's chunks)."""

    def __init__(self, distinct):
        self.distinct = distinct
        self.n = int(distinct.shape[0])
        self.dtype = np.int32 if self.n <= np.iinfo(np.int32).max else np.int64
        lo, hi = (int(v) for v in device.to_host(xp.stack([distinct[0], distinct[-1]])))
        self.base = lo if hi - lo == self.n - 1 else None

    def __call__(self, ids):
        if self.base is not None:
            return (ids - self.base).astype(self.dtype)
        return xp.searchsorted(self.distinct, ids).astype(self.dtype)


class VertexIds:
    """A graph's renumbering map: ``vertices`` (n, int64), the original id of each internal
    index, in ``order`` ("id": ascending ids, for a bipartite graph the left side then the
    right; "degree": as ``Graph.reorder`` permuted them); ``sides`` (n, int8) and
    ``side_names`` of a bipartite graph, else None; ``labels``: a :class:`VertexLabels` when
    the ids are labels (``vertices`` then holds their codes), else None.  Internal indices
    come back as ``index_dtype``."""

    def __init__(self, vertices, sides=None, side_names=None, order: str = "id",
                 index_dtype=np.int32, labels: VertexLabels | None = None):
        self.vertices, self.sides, self.side_names = vertices, sides, side_names
        self.labels = labels
        self.order = order
        self.index_dtype = np.dtype(index_dtype)
        self.n = int(vertices.shape[0])
        self.left_count = self.n if sides is None else int((sides == 0).sum())
        self._lookup = None  # (sorted ids, their positions) of a reordered graph, on first use

    def side_code(self, side, arg: str = "side"):
        """0 (left) or 1 (right) for a side given by its name (e.g. ``"user"``),
        ``"left"``/``"right"`` or 0/1; None for a non-bipartite graph given None.

        Raises ValueError naming ``arg`` when a bipartite graph gets no side, a non-bipartite
        graph gets one, or the side is unknown."""
        if self.sides is None:
            if side is None:
                return None
            raise ValueError(f"{arg}={side!r}: sides exist only in bipartite graphs (built with "
                             "Graph.from_bipartite); drop it")
        left, right = self.side_names
        choices = (f"{left!r} or {right!r} (or 'left'/'right', 0/1)")
        if side is None:
            raise ValueError(f"{arg}: this graph is bipartite, and an id may name a vertex on "
                             f"each side; pass {arg}={choices}")
        if isinstance(side, (int, np.integer)) and not isinstance(side, (bool, np.bool_)):
            if int(side) in (0, 1):
                return int(side)
        elif isinstance(side, str):
            for code, label in ((0, left), (1, right), (0, "left"), (1, "right")):
                if side == label:
                    return code
        raise ValueError(f"{arg}={side!r} is not a side of this graph; pass {arg}={choices}")

    def sorted_lookup(self):
        """None while ``vertices`` ascend (a binary search finds an id's position); else
        (the ids ascending, the internal position of each), built once."""
        if self.order == "id":
            return None
        if self._lookup is None:  # per-vertex, on the device whatever the placement
            where = xp.argsort(self.vertices, kind="stable")
            self._lookup = (self.vertices[where], where.astype(self.index_dtype))
        return self._lookup

    def id_order(self):
        """Internal positions of the vertices in ascending original-id order: ``arange(n)``
        unless the order is another (``Graph.reorder``)."""
        lookup = self.sorted_lookup()
        return xp.arange(self.n, dtype=self.index_dtype) if lookup is None else lookup[1]

    def original(self, internal=None):
        """The original ids of ``internal`` vertices (all, in internal order, when None) as a
        host array: int64 ids, or the labels (an object array) of a labelled graph."""
        codes = self.vertices if internal is None else \
            self.vertices[device.asarray(internal).astype(np.int64)]
        return device.to_host(codes) if self.labels is None else self.labels.take(codes)

    def column(self, codes, valid=None):
        """A result column of vertex ids (:func:`onyx_rapids.io.to_frame`) from ``codes``,
        values of ``vertices`` (``vertices[internal]``): ``codes`` themselves (or ``(codes,
        valid)``: null where ``valid`` is False) for integer ids, a :class:`LabelColumn` that
        writes the labels for a labelled graph."""
        if self.labels is not None:
            return LabelColumn(codes, self.labels, valid)
        return codes if valid is None else (codes, valid)

    def locate(self, ids, side=None):
        """(internal positions, found mask) of int64 ``ids`` (for a labelled graph: its labels,
        any array of them; integer ids are labels there too); ``side`` (bipartite graphs only)
        is 0/1 or an array of them, one per id."""
        if self.labels is not None:
            ids = device.asarray(self.labels.codes(ids, side))
        n, nl = self.n, self.left_count
        lookup = self.sorted_lookup()
        if lookup is not None:  # reordered: search the sorted ids, then map to positions
            ordered, where = lookup
            at = xp.minimum(xp.searchsorted(ordered, ids), max(n - 1, 0))
            found = (ordered[at] == ids) if n else xp.zeros(ids.shape, dtype=bool)
            return where[at] if n else at, found
        if self.sides is None:
            pos = xp.searchsorted(self.vertices, ids)
            limit = n
        else:
            left = xp.searchsorted(self.vertices[:nl], ids)
            right = xp.searchsorted(self.vertices[nl:], ids) + nl
            if isinstance(side, (int, np.integer)):
                pos, limit = (left, nl) if side == 0 else (right, n)
            else:
                pos = xp.where(side == 0, left, right)
                limit = xp.where(side == 0, nl, n)
        found = (pos < limit) & (self.vertices[xp.minimum(pos, max(n - 1, 0))] == ids)
        return pos, found

    def to_internal(self, arr, code=None):
        """Internal indices (``index_dtype``) of the int64 ids ``arr`` (a 0-d array gives an
        int) on side ``code`` (:meth:`side_code`); ValueError naming ids not in the graph."""
        flat = arr.reshape(-1)
        if self.labels is None and is_labels(flat):
            shown = listing(repr(x) for x in dict.fromkeys(flat[:SHOW].tolist()))
            raise TypeError(f"ids: this graph's vertex ids are integers, got labels ({shown}); "
                            "pass integer ids (build the graph from labelled columns to look "
                            "vertices up by label)")
        pos, found = self.locate(flat, code)
        if flat.shape[0] and not bool(found.all()):
            host = flat if is_labels(flat) else device.to_host(flat)
            missing = list(dict.fromkeys(host[~device.to_host(found)].tolist()))
            if not is_labels(flat):
                missing.sort()
            where = "" if code is None else f" on side {self.side_names[code]!r}"
            known = "Graph.vertices" if self.labels is None else "the graph's labels"
            raise ValueError(
                f"ids: {len(missing)} id{'s are' if len(missing) != 1 else ' is'} not a vertex "
                f"of this graph{where}: {listing((repr(x) for x in missing), len(missing))}; "
                f"pass ids from {known} (or add them with vertices= when building the graph)"
            )
        pos = pos.astype(self.index_dtype)
        if arr.ndim == 0:
            return int(pos[0])
        return pos.reshape(arr.shape)

    def describe(self, internal) -> list:
        """Original ids of internal vertices as strings for messages: ``'5'``, or for a
        bipartite graph ``'user 5'`` (side name, id)."""
        internal = device.asarray(internal).astype(np.int64).reshape(-1)
        ids = self.original(internal).tolist()
        if self.sides is None:
            return [str(i) for i in ids]
        sides = device.to_host(self.sides[internal]).tolist()
        return [f"{self.side_names[s]} {i}" for s, i in zip(sides, ids)]

    def describe_edges(self, out_offsets, out_indices, positions, total: int | None = None) -> str:
        """'3 edges (a->b, ...)' in original ids, for error messages: the first of the CSR
        ``positions`` (of the CSR ``out_offsets``, ``out_indices``) and their number
        (``total``: how many there are in all, when ``positions`` holds only the first ones)."""
        total = int(positions.shape[0]) if total is None else int(total)
        shown = device.asarray(positions[:SHOW])
        # the sources of the shown edges alone (a host graph's edge sources would be O(m))
        sources = xp.searchsorted(out_offsets, shown, side="right") - 1
        u = self.describe(sources)
        v = self.describe(out_indices[shown])
        pairs = [f"{a}->{b}" for a, b in zip(u, v)]
        return f"{total} edge{'s' if total != 1 else ''} ({listing(pairs, total)})"
