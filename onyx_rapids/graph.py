"""Graph: a directed graph held as CSR (out-edges) and CSC (in-edges) on the device.

A :class:`Graph` is built once, by one of its ``from_*`` constructors, from backend arrays alone
(:data:`onyx_rapids.device.xp`: CuPy on a GPU, NumPy under the simulator): renumbering, sorting,
merging parallel edges and the offset scans are whole-array operations, never Python loops over
edges. Everything that knows DataFrames, Parquet, SciPy or cuGraph lives in
:mod:`onyx_rapids.io`; the constructors here call into it and then hand plain id arrays to
:meth:`Graph._from_ids`.

Simple graphs by default, as cuGraph's ``Graph`` and NetworkX's ``Graph``/``DiGraph``: parallel
edges are merged into one that keeps the weights of the FIRST occurrence in input row order,
each self-loop is kept once, and an undirected edge listed as u-v and v-u (or twice) is one edge,
stored as u->v and v->u. ``multigraph=True`` keeps every input row as an edge (``g.multigraph``
says which).

Layout: arrays of vertex indices (values in [0, n): ``out_indices``, ``in_indices``, the edge
sources) are ``index_dtype``, int32 while n fits in int32, int64 beyond; arrays of edge
positions or counts (values in [0, m]: the offsets, ``in_edge_ids``, ``reverse_edge``) are
``offset_dtype``, int32 while m fits in int32, int64 beyond. So a graph of more than 2**31 edges
on fewer than 2**31 vertices (R-MAT scale 26: 2.4e9 edges, 39.5M vertices) keeps 4-byte vertex
indices beside 8-byte offsets.

* ``vertices`` (n, int64): original ids in internal order, which is ascending id order (for a
  bipartite graph: the left side ascending, then the right side ascending; see ``sides``), or
  the order :meth:`Graph.reorder` chose (``vertex_order`` says which);
* ``out_offsets`` (n+1) / ``out_indices`` (m): CSR, edges sorted by (source, destination),
  stable among parallel edges (only a multigraph has them);
* ``in_offsets`` (n+1) / ``in_indices`` (m, the source) / ``in_edge_ids`` (m): CSC, entries
  sorted by (destination, source, CSR position); ``in_edge_ids`` is the CSR position of each CSC
  entry, so edge properties stored in CSR order can be read in pull mode. A simple undirected
  graph's adjacency is symmetric, so its CSC equals its CSR: the two share their offsets,
  indices and degrees (the same arrays), and ``in_edge_ids`` is ``reverse_edge``;
* ``out_degree`` / ``in_degree`` (n, int32);
* ``edge_weights`` (m, w) float32 in CSR order, or None; ``weight_names`` (w names);
* ``reverse_edge`` (m): the CSR position of each edge's reverse. An undirected graph stores every
  edge u-v as u->v and v->u (a self-loop once) and pairs the two copies; a directed graph
  computes the pairing on first use, and fails if some edge has no reverse;
* ``multigraph`` (bool); ``sides`` (n, int8: 0 left, 1 right) and ``side_names`` for a graph
  from :meth:`Graph.from_bipartite`, else None.

Data derived from a graph (reverse edges, the simple undirected view, kernels' work lists) lives
in one cache, :meth:`Graph.cached`; a Graph is never modified after it is built.
"""

from __future__ import annotations

import numpy as np

from . import device, memory
from .device import xp

__all__ = ["Graph"]

#: Internal vertex orders (:meth:`Graph.reorder`): ascending original id, descending degree.
VERTEX_ORDERS = ("id", "degree")
# Largest n that int32 vertex-index arrays, and largest m that int32 offset / edge-position
# arrays, hold (:func:`_vertex_dtype`, :func:`_edge_dtype`); a module global so tests can lower it.
_INDEX32_LIMIT = int(np.iinfo(np.int32).max)
_SHOW = 10  # how many offending items an error message names
# Largest n whose (source, destination) pair keys, source * n + destination < n * n, fit in
# uint32: up to it the CSR sort sorts 32-bit keys (CuPy sorts are radix sorts, whose cost grows
# with the key's bits), beyond it int64 keys. A module global so tests can lower it.
_KEY32_MAX_N = 1 << 16
# Renumbering marks the ids in a table over [smallest id, largest id] when that span is at most
# this many times the number of ids read (the table costs 5 bytes a slot, about what the sort
# it replaces allocates), else it sorts the ids. A module global so tests can set it (0: sort).
_DENSE_SPAN_FACTOR = 2
_INT32_MAX = int(np.iinfo(np.int32).max)


def edge_rows(offsets, a: int, b: int, dtype):
    """The row (source vertex) of each CSR position a..b-1 of ``offsets``, as ``dtype``."""
    positions = xp.arange(a, b, dtype=np.int64)
    return (xp.searchsorted(offsets, positions, side="right") - 1).astype(dtype, copy=False)


def _vertex_dtype(n: int) -> np.dtype:
    """The dtype of arrays holding vertex indices (values in [0, n)): int32 while n fits."""
    return np.dtype(np.int32) if n <= _INDEX32_LIMIT else np.dtype(np.int64)


def _edge_dtype(m: int) -> np.dtype:
    """The dtype of arrays holding edge positions or counts (values in [0, m]: offsets,
    ``in_edge_ids``, ``reverse_edge``): int32 while m fits."""
    return np.dtype(np.int32) if m <= _INDEX32_LIMIT else np.dtype(np.int64)


def _listing(items, total: int) -> str:
    shown = ", ".join(str(x) for x in items[:_SHOW])
    return shown + (f", ... ({total} in all)" if total > _SHOW else "")


def _bincount(values, n: int):
    if values.shape[0] == 0:
        return xp.zeros(n, dtype=np.int64)
    return xp.bincount(values, minlength=n)


def _sorted_offsets(sorted_rows, n: int, dtype):
    """CSR offsets (n+1, ``dtype``) of ascending row indices: where each row 0..n starts, by a
    binary search per row (no pass over the m entries, no atomics)."""
    kind = sorted_rows.dtype if n < np.iinfo(sorted_rows.dtype).max else np.dtype(np.int64)
    rows = xp.arange(n + 1, dtype=kind)
    return xp.searchsorted(sorted_rows, rows, side="left").astype(dtype, copy=False)


def _renumber(parts, extra=None):
    """Renumber integer ids to 0..n-1 in ascending id order.

    Returns ``(vertices, internal)``: the n distinct ids of ``parts`` and ``extra`` ascending
    (int64), and each array of ``parts`` as internal indices (int32 while n fits, else int64).
    ``extra`` (ids that may have no edges) only adds vertices. One pass marks the ids in a
    table over [smallest, largest id] when that span is small (at most ``_DENSE_SPAN_FACTOR``
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
    limit = _DENSE_SPAN_FACTOR * total
    if hi - lo < limit:
        # Dense: rank[id - base] is the id's index. Base 0 when the ids are non-negative and
        # the table still fits, so ids 0..n-1 (or 1..n) are used as they are, with no shift.
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
    # Sparse ids: one sort of the keys alone, then a binary search per id. Keys relative to
    # the smallest id fit in uint32 when the span does (32-bit radix sort and searches). A
    # keys-only sort moves half the bytes of an argsort with a scatter of the run numbers
    # (unique's return_inverse), and was faster on the GPU (docs/performance.md).
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
    per id, and on a skewed graph the stores to a hub's slot queue up (docs/performance.md
    has the two timed on R-MAT). Duplicate ids race to write
    the same value, as they do in the scatter."""
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


def _pair_keys(src, dst, n: int):
    """``src * n + dst`` for internal indices in [0, n): uint32 while n <= ``_KEY32_MAX_N``
    (then n * n <= 2**32), else int64; ascending keys are (source, destination) order."""
    if n <= _KEY32_MAX_N:
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


def _no_reverse_message(edges: str) -> str:
    """The error of symmetric input (``directed=False`` CSR) with ``edges`` lacking a reverse."""
    return ("directed=False needs a symmetric edge set (every u->v with a v->u), but "
            f"{edges} have no reverse edge; pass directed=True, or add the reverse edges")


def _asymmetric_weights_message(edges: str) -> str:
    """The error of symmetric input whose ``edges`` weigh otherwise than their reverse."""
    return ("directed=False needs symmetric weights, but the weights of "
            f"{edges} differ from their reverse edge's; pass directed=True, or make the "
            "weights symmetric")


def _run_heads(sorted_keys):
    """Mask of the first entry of each run of equal ``sorted_keys``, or None when every entry
    starts a run (all keys distinct)."""
    m = int(sorted_keys.shape[0])
    if m < 2:
        return None
    head = xp.empty(m, dtype=np.bool_)
    head[0] = True
    xp.not_equal(sorted_keys[1:], sorted_keys[:-1], out=head[1:])
    if bool(head.all()):
        return None
    return head


class Graph:
    """A directed (or undirected, stored both ways) graph in CSR and CSC form on the device.

    Simple by default (``multigraph=False``); see the module docstring. Build one with
    :meth:`from_edgelist`, :meth:`from_parquet`, :meth:`from_csr`, :meth:`from_cugraph` or
    :meth:`from_bipartite`; the initializer only gathers finished buffers.
    """

    def __init__(
        self,
        *,
        vertices,
        out_offsets,
        out_indices,
        in_offsets,
        in_indices,
        in_edge_ids,
        out_degree,
        in_degree,
        edge_weights=None,
        weight_names=(),
        directed: bool = True,
        reverse_edge=None,
        multigraph: bool = False,
        sides=None,
        side_names=None,
        placement: str = "device",
        vertex_order: str = "id",
    ):
        self.vertices = vertices
        self.placement = placement
        self.vertex_order = vertex_order
        self.n = int(vertices.shape[0])
        self.m = int(out_indices.shape[0])
        self.directed = bool(directed)
        self.multigraph = bool(multigraph)
        # vertex indices (out_indices, in_indices, edge sources) and edge positions (offsets,
        # in_edge_ids, reverse_edge) take their own dtypes: see the module docstring
        self.index_dtype = np.dtype(out_indices.dtype)
        self.offset_dtype = np.dtype(out_offsets.dtype)
        self.out_offsets = out_offsets
        self.out_indices = out_indices
        self.in_offsets = in_offsets
        self.in_indices = in_indices
        self.in_edge_ids = in_edge_ids
        self.out_degree = out_degree
        self.in_degree = in_degree
        self.edge_weights = edge_weights
        self.weight_names = list(weight_names)
        self.sides = sides
        self.side_names = None if side_names is None else tuple(side_names)
        self._left_count = self.n if sides is None else int((sides == 0).sum())
        # Reverse pairing fixed at construction (an undirected edge's two copies); not derived
        # data, so clear_cache() keeps it.
        self._reverse_edge = reverse_edge
        self._cache: dict = {}
        self._lookup = None  # (sorted ids, their positions) of a reordered graph, on first use

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_edgelist(
        cls,
        df,
        source="src",
        destination="dst",
        weight=None,
        directed: bool = True,
        vertices=None,
        multigraph: bool = False,
        placement: str = "auto",
        chunk_rows: int | None = None,
    ) -> "Graph":
        """A graph from an edge frame: a pandas or cuDF DataFrame, or a pyarrow Table.

        Parameters
        ----------
        df : pandas.DataFrame, cudf.DataFrame or pyarrow.Table
            One row per edge.
        source, destination : str
            Integer vertex-id columns (any integer dtype, negative and int64 ids allowed); ids
            are renumbered to 0..n-1 in ascending order.
        weight : None, str or list of str
            Weight column(s), one float32 column each in ``edge_weights[:, j]``.
        directed : bool
            False stores each edge u-v in both directions (u->v and v->u).
        vertices : array-like of int, optional
            Ids that may have no edges (isolated vertices).
        multigraph : bool
            False (the default, as cuGraph's ``Graph``): rows with the same (source,
            destination) -- for ``directed=False`` the same unordered pair, in either order --
            are one edge, which keeps the weights of the first such row; a self-loop is kept
            once. True keeps every row as an edge.
        placement : {"auto", "device", "host"}
            Where the edge arrays live (:mod:`onyx_rapids.memory`): device memory, or pinned
            host memory that kernels read zero-copy over PCIe (graphs larger than the GPU);
            "auto" keeps them on the device when they take at most half of the device memory
            still available (:func:`onyx_rapids.memory.device_available`, which honours the
            device budget), else on the host.  ``g.placement`` says which.  The graph is
            built whole on the device (peak about 40 bytes per edge row) and its edge arrays
            then move, except with ``"host"`` and when the finished edge arrays alone would
            not fit the device: then it is built as :meth:`from_parquet` builds it, the
            frame's rows moved to the device ``chunk_rows`` at a time and the CSR/CSC filled
            in pinned host memory (an undirected multigraph is always built on the device).
        chunk_rows : int, optional
            Rows per chunk of the host build (default: what a quarter of the device memory
            the library may use holds).

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"src": [10, 10, -3, 10], "dst": [-3, 7, 7, 7],
        ...                    "w": [0.5, 1.0, 2.0, 9.0]})
        >>> g = Graph.from_edgelist(df, weight="w", vertices=[99])
        >>> g.n, g.m, device.to_host(g.vertices).tolist()
        (4, 3, [-3, 7, 10, 99])
        >>> device.to_host(g.out_offsets).tolist(), device.to_host(g.out_indices).tolist()
        ([0, 1, 1, 3, 3], [1, 0, 1])
        >>> device.to_host(g.edge_weights[:, 0]).tolist()  # 10->7 keeps its first weight
        [2.0, 0.5, 1.0]
        >>> Graph.from_edgelist(df, multigraph=True).m
        4
        """
        directed = _check_flag(directed, "directed")
        multigraph = _check_flag(multigraph, "multigraph")
        placement = memory.check_placement(placement)
        _check_chunk_rows(chunk_rows)
        return cls._from_frame(df, source, destination, weight, directed=directed,
                               multigraph=multigraph, vertices=vertices, placement=placement,
                               chunk_rows=chunk_rows)

    @classmethod
    def _from_frame(cls, df, source, destination, weight, *, directed: bool, multigraph: bool,
                    vertices, placement: str, chunk_rows, weight_names=None) -> "Graph":
        """The build of :meth:`from_edgelist` (and :meth:`from_cugraph`, whose edge list is a
        cuDF frame) from checked arguments: in chunks straight into host arrays for ``"host"``
        (and ``"auto"`` when the finished edge arrays would not fit the device), else whole
        on the device, then placed.  ``weight_names`` (one per weight column) names the
        weight columns in the graph instead of their frame names."""
        from . import io

        if placement == "auto":  # in chunks only when not even the finished arrays fit
            columns = 0 if weight is None else (1 if isinstance(weight, str) else len(weight))
            rows = io.frame_rows(df) * (1 if directed else 2)
            if _edge_bytes_estimate(rows, columns) > memory.device_available():
                placement = "host"
        if placement == "host" and (directed or not multigraph):
            from . import host_build

            return host_build.from_frame_on_host(
                cls, df, source, destination, weight, directed=directed,
                multigraph=multigraph, vertices=vertices, chunk_rows=chunk_rows,
                weight_names=weight_names)
        src, dst, weights, names = io.read_edgelist(df, source, destination, weight)
        if weight_names is not None:
            names = list(weight_names)
        extra = None if vertices is None else io.read_vertex_ids(vertices, "vertices")
        return _placed(lambda: cls._from_ids(src, dst, weights, names, directed=directed,
                                             multigraph=multigraph, extra_vertices=extra),
                       placement, src.shape[0] * (1 if directed else 2), weights)

    @classmethod
    def from_parquet(
        cls,
        path,
        source="src",
        destination="dst",
        weight=None,
        directed: bool = True,
        vertices=None,
        multigraph: bool = False,
        placement: str = "auto",
        chunk_rows: int | None = None,
    ) -> "Graph":
        """A graph from a Parquet file (or a directory of them), reading only the named columns.

        The arguments mean what they mean in :meth:`from_edgelist` (simple graph unless
        ``multigraph=True``).  With ``placement="device"`` the file is read whole
        (``cudf.read_parquet`` on a GPU with cuDF, ``pyarrow.parquet`` otherwise) and built
        on the device.  With ``placement="host"`` it is read in chunks of ``chunk_rows`` rows
        (default: what a quarter of the available device memory holds, at most 2**27) straight
        into host-placed arrays (:mod:`onyx_rapids.host_build`), so the edge list is never
        whole on the device: device memory peaks at about 160 bytes per chunk row plus 40 bytes
        per vertex, pinned host memory at the finished graph's edge arrays (per row read, a
        directed graph's two vertex indices and one edge position, an undirected graph's
        one of each for each of its two stored directions; 4 bytes each, 8 for vertex indices
        from 2**31 vertices and for edge positions from 2**31 edges; plus 4 bytes per weight
        column), plus one chunk as read by pyarrow.  The file is read three times.
        An undirected multigraph is built on the device and then moved.  ``"auto"``
        estimates the graph's edge bytes from the file's row count and builds it the host
        way when they exceed half the device memory available.  Progress lines of the chunked
        build go to the ``onyx_rapids.host_build`` logger (level INFO).

        >>> g = Graph.from_parquet("edges.parquet", source="u", destination="v",
        ...                        weight="rating", directed=False)  # doctest: +SKIP
        >>> big = Graph.from_parquet("web/", placement="host")  # doctest: +SKIP
        """
        from . import host_build, io

        directed = _check_flag(directed, "directed")
        multigraph = _check_flag(multigraph, "multigraph")
        placement = memory.check_placement(placement)
        _check_chunk_rows(chunk_rows)
        if placement == "auto":
            path, columns = io.parquet_edge_columns(path, source, destination, weight)
            rows = io.parquet_row_count(path) * (1 if directed else 2)
            estimate = _edge_bytes_estimate(rows, len(columns) - 2)
            if _auto_placement(estimate, on_device=False) == "host":
                placement = "host"
        if placement == "host" and (directed or not multigraph):
            return host_build.from_parquet_on_host(
                cls, path, source, destination, weight, directed=directed,
                multigraph=multigraph, vertices=vertices, chunk_rows=chunk_rows)
        table = io.read_parquet_edges(path, source, destination, weight)
        src, dst, weights, names = io.read_edgelist(table, source, destination, weight)
        extra = None if vertices is None else io.read_vertex_ids(vertices, "vertices")
        return _placed(lambda: cls._from_ids(src, dst, weights, names, directed=directed,
                                             multigraph=multigraph, extra_vertices=extra),
                       placement, src.shape[0] * (1 if directed else 2), weights)

    @classmethod
    def from_csr(cls, offsets, indices=None, weights=None, directed: bool = True,
                 multigraph: bool = False, placement: str = "auto",
                 chunk_rows: int | None = None) -> "Graph":
        """A graph on vertices 0..n-1 from CSR arrays (NumPy or CuPy) or a SciPy sparse matrix.

        ``offsets`` (n+1) and ``indices`` (m) are validated (offsets[0] == 0, non-decreasing,
        offsets[-1] == m, 0 <= indices < n) and edges are re-sorted by destination within each
        row. ``weights`` is an (m,) or (m, w) array or a dict {name: (m,) array}. A SciPy (or
        CuPy) sparse matrix may be passed as ``offsets`` alone: its stored values become the
        weight column ``"weight"`` unless ``weights=False`` (or other weights are given).
        ``directed=False`` expects the symmetric structure of an undirected graph (each u->v
        has a v->u of the same weight) and stores it as given. Repeated (row, column) entries
        are one edge keeping the first entry's weights, unless ``multigraph=True``.

        ``placement`` as in :meth:`from_edgelist`:

        * ``"device"``: the arrays are copied to the device and the graph is built there
          whole (peak about 40 bytes per entry), and kept there.
        * ``"host"`` with host input (NumPy arrays, lists, pandas Series, a SciPy matrix):
          built in chunks straight into pinned host arrays (:mod:`onyx_rapids.host_build`),
          so a CSR larger than the device loads.  The input is read three times where it
          lies: once to check it, on the host in blocks of ``chunk_rows`` entries (the
          device build's checks and error messages, nothing copied to the device), then
          twice ``chunk_rows`` entries at a time (each entry's row found in the offsets, its
          index and weights moved to the device) for the passes of the host build.
          ``directed=False`` input is stored as given; its symmetry is checked and its
          reverse pairing found in blocks of vertices.  Device memory peaks at one chunk
          (about 160 bytes per chunk row) plus about 40 bytes per vertex; pinned host memory
          at the finished graph's edge arrays: per entry two vertex indices and one edge
          position (4 bytes each; 8 for vertex indices from 2**31 vertices and for edge
          positions from 2**31 edges), 4 bytes per weight column, and for ``directed=False``
          one more edge position (the reverse pairing); the caller's input stays where it
          is.  The graph equals ``from_csr(..., placement="device").to("host")`` (the same
          arrays, dtypes and order).  CuPy input is on the device already: it is built
          there, then its edge arrays move to the host.
        * ``"auto"``: for host input, the chunked host build when the finished edge arrays
          would not fit the device memory available
          (:func:`onyx_rapids.memory.device_available`); otherwise the device build, its
          arrays then placed by size as :meth:`from_edgelist` places them.

        ``chunk_rows`` is the entries per chunk of the host build (default: what a quarter
        of the device memory the library may use holds).  Progress lines of the chunked
        build go to the ``onyx_rapids.host_build`` logger (level INFO).

        >>> import numpy as np
        >>> g = Graph.from_csr(np.array([0, 2, 3, 3]), np.array([2, 1, 0]))
        >>> g.n, g.m, device.to_host(g.in_offsets).tolist()
        (3, 3, [0, 1, 2, 3])
        >>> import scipy.sparse as sp
        >>> a = sp.csr_matrix(np.array([[0, 2.0], [2.0, 0]]))
        >>> Graph.from_csr(a, directed=False).weight_names
        ['weight']
        >>> h = Graph.from_csr(np.array([0, 2, 3, 3]), np.array([2, 1, 0]),
        ...                    np.array([0.5, 1.0, 2.0]), placement="host", chunk_rows=2)
        >>> h.placement, device.to_host(h.out_indices).tolist()
        ('host', [1, 2, 0])
        >>> device.to_host(h.edge_weights[:, 0]).tolist()  # row 0 re-sorted by destination
        [1.0, 0.5, 2.0]
        """
        from . import io

        directed = _check_flag(directed, "directed")
        multigraph = _check_flag(multigraph, "multigraph")
        placement = memory.check_placement(placement)
        _check_chunk_rows(chunk_rows)
        offsets, indices, weights = io.csr_inputs(offsets, indices, weights)
        if placement != "device" and not io.csr_on_device(offsets, indices, weights):
            if placement == "auto":  # in chunks only when not even the finished arrays fit
                size = io.csr_size(offsets, indices, weights)
                if size is not None and _edge_bytes_estimate(size[1], size[2], max(size[0], 0)) \
                        > memory.device_available():
                    placement = "host"
            if placement == "host":
                from . import host_build

                return host_build.from_csr_on_host(cls, offsets, indices, weights,
                                                   directed=directed, multigraph=multigraph,
                                                   chunk_rows=chunk_rows)
        offsets, indices, weights, names = io.read_csr(offsets, indices, weights)
        n = int(offsets.shape[0]) - 1
        m = int(indices.shape[0])

        def build():
            src = xp.searchsorted(offsets, xp.arange(m, dtype=np.int64), side="right") - 1
            vertices = xp.arange(n, dtype=np.int64)
            return cls._build(vertices, src.astype(np.int64), indices.astype(np.int64), weights,
                              names, directed=directed, multigraph=multigraph,
                              symmetric_input=not directed)

        return _placed(build, placement, m, weights)

    @classmethod
    def from_cugraph(cls, G, multigraph: bool = False, placement: str = "auto",
                     chunk_rows: int | None = None) -> "Graph":
        """A graph from a single-GPU ``cugraph.Graph``, read on the device (no host round trip).

        Reads the edge list ``G`` keeps in original ids (``G.view_edge_list()``, a device
        frame) and its vertex list (isolated vertices included); undirected edges are stored
        both ways as in :meth:`from_edgelist`. cuGraph's ``Graph`` has no parallel edges; pass
        ``multigraph=True`` to keep those of a ``cugraph.MultiGraph`` (else they are merged).
        The weight column is named ``G.weight_column`` (or ``"weight"``).

        ``placement`` as in :meth:`from_edgelist`: ``"device"`` builds the graph whole on the
        device beside ``G`` (peak about 40 bytes per stored edge row) and keeps it there.
        ``"host"`` builds it as :meth:`from_edgelist` does with ``placement="host"``: the
        edge frame, on the device already, is read in slices of ``chunk_rows`` rows (three
        times) and the CSR/CSC filled in pinned host memory, never the whole graph on the
        device (in place of the device build's ``_from_ids``): device memory peaks at
        ``G`` itself plus a chunk (about 160 bytes per chunk row) and about 40 bytes per
        vertex, host memory at the finished graph's edge arrays (as in :meth:`from_parquet`).
        The result equals ``from_cugraph(G, placement="device").to("host")``.  An undirected
        ``multigraph=True`` graph is built on the device, then moved.  ``"auto"`` takes the
        chunked host build when the finished edge arrays would not fit the device memory
        available, else builds on the device and places the arrays by size.
        ``chunk_rows``: rows per chunk of the host build (default as in
        :meth:`from_edgelist`).

        >>> import cudf, cugraph  # doctest: +SKIP
        >>> G = cugraph.Graph(directed=True)  # doctest: +SKIP
        >>> G.from_cudf_edgelist(cudf.DataFrame({"src": [0, 5], "dst": [5, 9]}),
        ...                      source="src", destination="dst")  # doctest: +SKIP
        >>> Graph.from_cugraph(G).n  # doctest: +SKIP
        3
        >>> Graph.from_cugraph(G, placement="host").placement  # doctest: +SKIP
        'host'
        """
        from . import io

        multigraph = _check_flag(multigraph, "multigraph")
        placement = memory.check_placement(placement)
        _check_chunk_rows(chunk_rows)
        edges, source, destination, weight, names, directed, extra = io.cugraph_edges(G)
        return cls._from_frame(edges, source, destination, weight, directed=directed,
                               multigraph=multigraph, vertices=extra, placement=placement,
                               chunk_rows=chunk_rows, weight_names=names)

    @classmethod
    def from_bipartite(cls, df, left, right, weight=None, multigraph: bool = False,
                       placement: str = "auto") -> "Graph":
        """An undirected bipartite graph (users and items, say) whose two sides have separate
        id namespaces: user 5 and item 5 are two vertices.

        Parameters
        ----------
        df : pandas.DataFrame, cudf.DataFrame or pyarrow.Table
            One row per edge (a rating, say).
        left, right : str
            The integer id columns of the two sides; their names become ``g.side_names``.
        weight : None, str or list of str
            Weight column(s), as in :meth:`from_edgelist`.
        multigraph : bool
            False (the default): rows with the same (left, right) pair are one edge, keeping
            the first row's weights. True keeps every row.
        placement : {"auto", "device", "host"}
            Where the edge arrays live, as in :meth:`from_edgelist`.

        Returns
        -------
        Graph
            Undirected; internal order is the left ids ascending, then the right ids
            ascending. ``g.vertices`` holds the original ids (an id may occur once per side),
            ``g.sides`` is 0 (left) or 1 (right) per vertex. Look ids up with
            ``g.to_internal(ids, side="user")``; :func:`onyx_rapids.io.to_frame` gives
            ``side`` and ``vertex`` columns, and per-vertex input frames are keyed by both.

        Examples
        --------
        >>> import pandas as pd
        >>> ratings = pd.DataFrame({"user": [5, 5, 7], "item": [5, 8, 5],
        ...                         "stars": [4.0, 2.0, 5.0]})
        >>> g = Graph.from_bipartite(ratings, "user", "item", weight="stars")
        >>> g.n, g.m, device.to_host(g.vertices).tolist(), device.to_host(g.sides).tolist()
        (4, 6, [5, 7, 5, 8], [0, 0, 1, 1])
        >>> g.to_internal(5, side="item")
        2
        """
        from . import io

        multigraph = _check_flag(multigraph, "multigraph")
        placement = memory.check_placement(placement)
        io.check_column_name(left, "left")
        io.check_column_name(right, "right")
        if left == right:
            raise ValueError(f"left and right name the same column {left!r}; pass the two id "
                             "columns of the two sides (e.g. left='user', right='item')")
        lids, rids, weights, names = io.read_edgelist(df, left, right, weight,
                                                      arg_names=("left", "right"))

        def build():
            left_ids, (src,) = _renumber([lids])
            right_ids, (dst,) = _renumber([rids])
            nl, nr = int(left_ids.shape[0]), int(right_ids.shape[0])
            if nl + nr > np.iinfo(dst.dtype).max:
                dst = dst.astype(np.int64)
            dst += dst.dtype.type(nl)
            sides = xp.concatenate([xp.zeros(nl, dtype=np.int8), xp.ones(nr, dtype=np.int8)])
            return cls._build(xp.concatenate([left_ids, right_ids]), src, dst, weights, names,
                              directed=False, multigraph=multigraph, sides=sides,
                              side_names=(left, right))

        return _placed(build, placement, 2 * lids.shape[0], weights)

    # ------------------------------------------------------------------ building

    @classmethod
    def _from_ids(cls, src_ids, dst_ids, weights, weight_names, *, directed, multigraph,
                  extra_vertices=None) -> "Graph":
        """Renumber original integer ids to 0..n-1 (ascending; :func:`_renumber`), then
        :meth:`_build`."""
        vertices, (src, dst) = _renumber([src_ids, dst_ids], extra_vertices)
        return cls._build(vertices, src, dst, weights, weight_names, directed=directed,
                          multigraph=multigraph)

    @classmethod
    def _build(cls, vertices, src, dst, weights, weight_names, *, directed, multigraph,
               symmetric_input=False, sides=None, side_names=None,
               distinct=False) -> "Graph":
        """From internal (src, dst) (int32 or int64): merge parallel edges unless ``multigraph``
        (or the caller says they are ``distinct``), store an undirected edge list both ways
        (unless it is a ``symmetric_input`` that already is), sort into CSR and CSC.

        A simple undirected graph takes :meth:`_assemble_simple_undirected`; every other graph
        :meth:`_assemble`, after an undirected multigraph's reversed copies are appended."""
        undirected_list = not directed and not symmetric_input
        labels = dict(weight_names=weight_names, directed=directed, multigraph=multigraph,
                      sides=sides, side_names=side_names)
        if undirected_list and not multigraph:
            return cls._assemble_simple_undirected(vertices, src, dst, weights, **labels)
        twins = None
        if undirected_list:
            # Each non-loop edge gets a reversed copy, after all the input rows; twins[e] is
            # the pre-sort position of the copy paired with e, so reverse_edge pairs an edge
            # with its own copy.
            n = int(vertices.shape[0])
            m0 = int(src.shape[0])
            nonloop = xp.nonzero(src != dst)[0]
            tt = _edge_dtype(m0 + int(nonloop.shape[0]))  # edge positions
            twins = xp.arange(m0 + int(nonloop.shape[0]), dtype=tt)
            twins[m0:] = nonloop
            twins[nonloop] = xp.arange(m0, m0 + nonloop.shape[0], dtype=tt)
            src, dst = xp.concatenate([src, dst[nonloop]]), xp.concatenate([dst, src[nonloop]])
            if weights is not None:
                weights = xp.concatenate([weights, weights[nonloop]])
        return cls._assemble(vertices, src, dst, weights, dedupe=not multigraph and not distinct,
                             twins=twins, symmetric_input=symmetric_input and not directed,
                             **labels)

    @classmethod
    def _assemble(cls, vertices, src, dst, weights, weight_names, *, directed, multigraph,
                  dedupe=False, twins=None, symmetric_input=False, sides=None,
                  side_names=None) -> "Graph":
        """Sort internal (src, dst) pairs into CSR and CSC; ``dedupe`` keeps the first row of
        each (src, dst) pair; ``twins`` pairs reverse copies.

        One stable sort by the pair key (source * n + destination) gives the CSR order, stable
        among parallel edges, and with it the first row of each pair (the head of its run of
        equal keys); one stable sort of the CSR destinations gives the CSC order (destination,
        then source and CSR position, which the CSR order already has)."""
        n = int(vertices.shape[0])
        key = _pair_keys(src, dst, n)
        order = xp.argsort(key, kind="stable")  # stable: parallel edges keep input row order
        sorted_key = key[order]
        del key
        if dedupe:
            head = _run_heads(sorted_key)
            if head is not None:
                keep = xp.flatnonzero(head)
                order, sorted_key = order[keep], sorted_key[keep]
        m = int(order.shape[0])
        vtype, etype = _vertex_dtype(n), _edge_dtype(m)
        src_sorted, dst_sorted = _split_keys(sorted_key, n, vtype)
        del sorted_key
        out_offsets = _sorted_offsets(src_sorted, n, etype)
        # CSC: a stable sort by destination keeps the CSR order, (source, position), in ties.
        csc = xp.argsort(dst_sorted, kind="stable")
        in_offsets = _sorted_offsets(dst_sorted[csc], n, etype)
        if weights is not None:
            weights = xp.ascontiguousarray(weights[order].astype(np.float32, copy=False))
        reverse = None
        if twins is not None:
            position = xp.empty(m, dtype=etype)
            position[order] = xp.arange(m, dtype=etype)
            reverse = position[twins[order]]
        g = cls(
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
        )
        g._cache["edge_sources"] = src_sorted
        if symmetric_input:
            reverse, missing = g._pair_reverse_edges()
            if missing is not None:
                raise ValueError(_no_reverse_message(g._describe_edges(missing)))
            if weights is not None:
                differ = xp.nonzero(xp.any(weights != weights[reverse], axis=1))[0]
                if differ.shape[0]:
                    raise ValueError(_asymmetric_weights_message(g._describe_edges(differ)))
            g._reverse_edge = reverse
        return g

    @classmethod
    def _assemble_simple_undirected(cls, vertices, src, dst, weights, weight_names, *,
                                    directed, multigraph, sides=None,
                                    side_names=None) -> "Graph":
        """A simple undirected graph from internal (src, dst) rows, with one sort.

        Row i becomes entries 2i (u->v) and 2i+1 (v->u). One stable sort by pair key puts each
        directed pair's entries in a run in row order, so a run's head comes from the first
        row naming the unordered pair {u, v} (either way round), whose weights it keeps; the
        heads in sorted order are the CSR (a self-loop's two equal entries share a run: it is
        stored once). The head of the v->u run is the twin of the u->v head (the same row's
        other entry), which gives the reverse pairing. The edge set is symmetric and has no
        parallel edges, so the CSC is the CSR transposed: the same offsets, degrees and indices,
        and in_edge_ids is the reverse pairing; those arrays are shared, not copied."""
        n = int(vertices.shape[0])
        key = xp.stack([_pair_keys(src, dst, n), _pair_keys(dst, src, n)], axis=1).reshape(-1)
        order = xp.argsort(key, kind="stable")
        sorted_key = key[order]
        del key
        head = _run_heads(sorted_key)
        if head is not None:
            keep = xp.flatnonzero(head)
            order, sorted_key = order[keep], sorted_key[keep]
        m = int(order.shape[0])
        vtype, etype = _vertex_dtype(n), _edge_dtype(m)
        src_sorted, dst_sorted = _split_keys(sorted_key, n, vtype)
        del sorted_key
        positions = xp.arange(m, dtype=etype)
        slot = xp.empty(2 * int(src.shape[0]), dtype=etype)  # CSR position of each head entry
        slot[order] = positions
        # A self-loop's twin is no head (its slot is unset): a loop is its own reverse.
        reverse = xp.where(src_sorted == dst_sorted, positions, slot[order ^ 1])
        del slot, positions
        if weights is not None:
            weights = xp.ascontiguousarray(weights[order >> 1].astype(np.float32, copy=False))
        offsets = _sorted_offsets(src_sorted, n, etype)
        degree = xp.diff(offsets).astype(np.int32)
        g = cls(
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
        )
        g._cache["edge_sources"] = src_sorted
        return g

    # ------------------------------------------------------------------ placement

    #: The per-edge arrays that placement moves (the per-vertex ones stay on the device).
    EDGE_ARRAYS = ("out_indices", "in_indices", "in_edge_ids", "edge_weights", "_reverse_edge")

    def reorder(self, order: str = "degree") -> "Graph":
        """This graph with its internal vertex numbering permuted for memory locality; the same
        vertices and edges, results still in original ids.

        ``order="degree"``: descending total degree (in + out; ties keep the current order),
        so the rows that most edges gather (the hubs') share cache lines and stay in L2.  On a
        skewed graph whose ids carry no locality (R-MAT's are permuted) this speeds up every
        gather of a propagation; ``benchmarks/NOTES.md`` has the measurements.  Result frames
        list the vertices in the new internal order; look vertices up by id (``vertex``
        column, :meth:`to_internal`), never by position.  A positional vertex or edge
        property array of the old graph does not fit the new one.  ``order="id"`` gives back
        ascending id order.  Costs one sort of the edges, as building the graph did.

        Raises ValueError for an unknown order, a bipartite graph (its two sides keep their own
        orders) or a host-placed graph (reorder on the device, then :meth:`to` the host).

        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 3, 3], "dst": [3, 3, 1, 2]}))
        >>> h = g.reorder("degree")
        >>> h.vertex_order, device.to_host(h.vertices).tolist(), h.to_internal(3)
        ('degree', [3, 1, 2], 0)
        """
        if order not in VERTEX_ORDERS:
            raise ValueError(f"order={order!r}: choose one of {', '.join(map(repr, VERTEX_ORDERS))}")
        if self.sides is not None:
            raise ValueError("reorder: a bipartite graph keeps each side in ascending id order; "
                             "it cannot be reordered")
        if self.placement == "host":
            raise ValueError("reorder: this graph's edges are in host memory; reorder it on the "
                             "device (g.to('device').reorder(...)) and place it on the host after")
        if order == self.vertex_order:
            return self
        if order == "degree":
            total = self.out_degree.astype(np.int64) + self.in_degree.astype(np.int64)
            new_order = xp.argsort(-total, kind="stable")
        else:
            new_order = xp.argsort(self.vertices, kind="stable")
        rank = xp.empty(self.n, dtype=self.index_dtype)
        rank[new_order] = xp.arange(self.n, dtype=self.index_dtype)
        vertices = self.vertices[new_order]
        src, dst = rank[self.edge_sources], rank[self.out_indices]
        if not self.directed and not self.multigraph:  # both copies in: merged to one edge
            g = Graph._build(vertices, src, dst, self.edge_weights, self.weight_names,
                             directed=False, multigraph=False)
        else:  # the CSR rows are the input rows: a pairing fixed at construction is theirs
            g = Graph._assemble(vertices, src, dst, self.edge_weights, self.weight_names,
                                directed=self.directed, multigraph=self.multigraph,
                                twins=self._reverse_edge)
        g.vertex_order = order
        return g

    def id_order(self):
        """Internal positions of the vertices in ascending original-id order (a backend
        array): ``arange(n)`` unless the graph was reordered (:meth:`reorder`).  Inputs drawn
        per vertex in this order land on the same ids whatever the internal order."""
        lookup = self._id_lookup()
        return xp.arange(self.n, dtype=self.index_dtype) if lookup is None else lookup[1]

    def _id_lookup(self):
        """None while ``vertices`` ascend (a binary search finds an id's position); else
        (the ids ascending, the internal position of each), built once."""
        if self.vertex_order == "id":
            return None
        if self._lookup is None:  # per-vertex, on the device whatever the placement
            where = xp.argsort(self.vertices, kind="stable")
            self._lookup = (self.vertices[where], where.astype(self.index_dtype))
        return self._lookup

    def edge_bytes(self) -> int:
        """Bytes of the edge arrays (each distinct array once: a simple undirected graph's
        CSC shares its CSR's)."""
        seen = {}
        for name in self.EDGE_ARRAYS:
            a = getattr(self, name)
            if a is not None:
                seen[id(a)] = int(a.nbytes)
        return sum(seen.values())

    def to(self, placement: str) -> "Graph":
        """This graph with its edge arrays in ``placement`` ("device", "host" or "auto"; see
        :meth:`from_edgelist`): ``self`` when they are there already, else a new Graph sharing
        the per-vertex arrays (arrays shared within the graph stay shared; derived data is
        rebuilt on use, except the edge sources, which move along).

        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}))
        >>> h = g.to("host")
        >>> h.placement, h.m, device.to_host(h.out_indices).tolist()
        ('host', 2, [1, 2])
        """
        placement = memory.check_placement(placement)
        if placement == "auto":
            placement = _auto_placement(self.edge_bytes(), on_device=self.placement == "device")
        if placement == self.placement:
            return self
        if placement == "device":
            memory.reserve(f"moving the edge arrays of a graph of {self.m} edges to the device",
                           self.edge_bytes(), "keep placement='host', or raise the budget")
        moved: dict = {}

        def move(a):
            if a is None:
                return None
            if id(a) not in moved:
                moved[id(a)] = memory.to_host_placed(a) if placement == "host" \
                    else device.xp.array(a, copy=True)
            return moved[id(a)]

        g = self.with_edge_arrays(move, placement)
        if "edge_sources" in self._cache:
            g._cache["edge_sources"] = move(self._cache["edge_sources"])
        return g

    def with_edge_arrays(self, convert, placement: str | None = None) -> "Graph":
        """A new Graph sharing this one's per-vertex arrays, with each edge array
        (:data:`EDGE_ARRAYS`) replaced by ``convert(array)`` (None stays None); the caller
        keeps arrays shared within the graph shared.  Its derived data starts empty."""
        return Graph(vertices=self.vertices, out_offsets=self.out_offsets,
                     out_indices=convert(self.out_indices), in_offsets=self.in_offsets,
                     in_indices=convert(self.in_indices),
                     in_edge_ids=convert(self.in_edge_ids), out_degree=self.out_degree,
                     in_degree=self.in_degree, edge_weights=convert(self.edge_weights),
                     weight_names=self.weight_names, directed=self.directed,
                     reverse_edge=convert(self._reverse_edge), multigraph=self.multigraph,
                     sides=self.sides, side_names=self.side_names,
                     placement=self.placement if placement is None else placement,
                     vertex_order=self.vertex_order)

    def _placed_value(self, value):
        """Derived data of a host-placed graph: per-edge arrays (length m) go to the host too,
        a derived graph takes this one's placement."""
        if self.placement != "host":
            return value
        if isinstance(value, Graph):
            return value.to("host")
        if isinstance(value, tuple):
            return tuple(self._placed_value(v) for v in value)
        if device.is_device_array(value) and value.ndim >= 1 and self.m > 0 \
                and value.shape[0] == self.m and not memory.is_host_placed(value):
            return memory.to_host_placed(value)
        return value

    # ------------------------------------------------------------------ derived data

    def cached(self, key, build):
        """The value stored under ``key``, built by ``build()`` on first use.

        The one home of data derived from this graph (work lists, transposed views, validated
        weight columns): a Graph never changes after it is built, so a value stays valid for
        the graph's lifetime, and it goes away with the graph. Keys are any hashable value;
        prefix them with the module that builds them (``("pagerank", "work")``) so that two
        modules never collide. ``build`` raising stores nothing.

        Parameters
        ----------
        key : hashable
            Where the value lives.
        build : callable
            Called with no arguments when ``key`` holds nothing yet.

        Examples
        --------
        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [1, 2], "dst": [2, 3]}))
        >>> work = g.cached(("mymodule", "work"), dict)
        >>> work is g.cached(("mymodule", "work"), dict)
        True
        >>> g.clear_cache()
        >>> work is g.cached(("mymodule", "work"), dict)
        False
        """
        try:
            return self._cache[key]
        except KeyError:
            pass
        except TypeError:
            raise TypeError(f"key must be hashable (a str or a tuple of them), got "
                            f"{type(key).__name__} {key!r}") from None
        value = self._placed_value(build())
        self._cache[key] = value
        return value

    def clear_cache(self) -> None:
        """Drop every value that :meth:`cached` holds (they are rebuilt on next use), to free
        device memory; the graph itself is unchanged."""
        self._cache.clear()

    def simple_undirected(self) -> "Graph":
        """The simple undirected view: directions dropped, parallel edges merged, self-loops
        removed, every vertex kept in the same internal order (the graph of APPNP's A and of
        core numbers); ``sides`` carry over. Cached.

        >>> import pandas as pd
        >>> Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 2], "dst": [2, 1, 2]})
        ...                     ).simple_undirected().m
        2
        """
        if self.placement == "host":  # built in blocks, never O(m) on the device
            from . import host_build

            def build_on_host():
                view = host_build.simple_undirected_on_host(self)
                view.vertex_order = self.vertex_order
                return view

            return self.cached("simple_undirected", build_on_host)

        def build():
            src = self.edge_sources.astype(np.int64)
            dst = self.out_indices.astype(np.int64)
            keep = src != dst
            low = xp.minimum(src[keep], dst[keep])
            high = xp.maximum(src[keep], dst[keep])
            pairs = xp.unique(low * self.n + high)
            view = Graph._build(self.vertices, pairs // self.n, pairs % self.n, None, [],
                                directed=False, multigraph=False, sides=self.sides,
                                side_names=self.side_names, distinct=True)
            view.vertex_order = self.vertex_order
            return view

        return self.cached("simple_undirected", build)

    @property
    def edge_sources(self):
        """The internal source vertex of each edge, in CSR order (m,)."""
        def rows(a: int, b: int):
            return edge_rows(self.out_offsets, a, b, self.index_dtype)

        def build():
            if self.placement != "host":
                return rows(0, self.m)
            out = memory.host_empty(self.m, self.index_dtype)  # in blocks, into host memory
            block = 1 << 26
            for a in range(0, self.m, block):
                out[a:a + block] = rows(a, min(a + block, self.m))
            return out

        return self.cached("edge_sources", build)

    @property
    def reverse_edge(self):
        """CSR position of each edge's reverse (m,); see :meth:`reverse_edge_index`."""
        return self.reverse_edge_index()

    def reverse_edge_index(self):
        """CSR position of each edge's reverse, computed on first use and cached.

        Parallel edges pair up one to one in CSR order (the k-th u->v with the k-th v->u); a
        self-loop is its own reverse. Raises ValueError naming edges that have no reverse.
        """
        if self._reverse_edge is not None:
            return self._reverse_edge

        def build():
            reverse, missing = self._pair_reverse_edges()
            if missing is not None:
                raise ValueError(
                    f"reverse_edge_index: {self._describe_edges(missing)} have no reverse edge; "
                    "build the graph with directed=False, or add the reverse edges"
                )
            return reverse

        return self.cached("reverse_edge", build)

    def _pair_reverse_edges(self):
        """(reverse, None) when every edge has a partner, else (None, positions without one)."""
        n, m = self.n, self.m
        src = self.edge_sources.astype(np.int64)
        dst = self.out_indices.astype(np.int64)
        keys = src * n + dst  # ascending: CSR order is (source, destination)
        reverse_keys = dst * n + src
        lo = xp.searchsorted(keys, reverse_keys, side="left")
        hi = xp.searchsorted(keys, reverse_keys, side="right")
        rank = xp.arange(m, dtype=np.int64) - xp.searchsorted(keys, keys, side="left")
        paired = rank < (hi - lo)
        if m and not bool(paired.all()):
            return None, xp.nonzero(~paired)[0]
        return (lo + rank).astype(self.offset_dtype), None  # edge positions

    def _describe_edges(self, positions, total: int | None = None) -> str:
        """'3 edges (a->b, ...)' in original ids, for error messages: the first of the CSR
        ``positions`` and their number (``total``: how many there are in all, when
        ``positions`` holds only the first ones)."""
        total = int(positions.shape[0]) if total is None else int(total)
        shown = device.asarray(positions[:_SHOW])
        # the sources of the shown edges alone (a host graph's edge_sources would be O(m))
        sources = xp.searchsorted(self.out_offsets, shown, side="right") - 1
        u = self.describe_vertices(sources)
        v = self.describe_vertices(self.out_indices[shown])
        pairs = [f"{a}->{b}" for a, b in zip(u, v)]
        return f"{total} edge{'s' if total != 1 else ''} ({_listing(pairs, total)})"

    def describe_vertices(self, internal) -> list:
        """Original ids of internal vertices as strings for messages: ``'5'``, or for a
        bipartite graph ``'user 5'`` (side name, id)."""
        internal = device.asarray(internal).astype(np.int64).reshape(-1)
        ids = device.to_host(self.vertices[internal]).tolist()
        if self.sides is None:
            return [str(i) for i in ids]
        sides = device.to_host(self.sides[internal]).tolist()
        return [f"{self.side_names[s]} {i}" for s, i in zip(sides, ids)]

    # ------------------------------------------------------------------ lookups and properties

    def side_code(self, side, arg: str = "side"):
        """0 (left) or 1 (right) for a side of a bipartite graph, given by its name (e.g.
        ``"user"``), ``"left"``/``"right"`` or 0/1; None for a non-bipartite graph given None.

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

    def _locate(self, ids, side=None):
        """(internal positions, found mask) of int64 ``ids``; ``side`` (bipartite graphs only)
        is 0/1 or an array of them, one per id."""
        n, nl = self.n, self._left_count
        lookup = self._id_lookup()
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

    def to_internal(self, ids, side=None):
        """Internal indices (``index_dtype``) of original vertex ids; a scalar gives an int.

        Parameters
        ----------
        ids : int, list, NumPy/CuPy array, pandas/cuDF Series or Index
            Original vertex ids.
        side : str or int, optional
            Required for a bipartite graph (:meth:`from_bipartite`), where an id may name a
            vertex on each side: the side's name (``"user"``), ``"left"``/``"right"`` or 0/1.

        Raises TypeError for non-integer ids and ValueError naming ids not in the graph.

        Examples
        --------
        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [30, 10], "dst": [10, 20]}))
        >>> g.to_internal(20), device.to_host(g.to_internal(pd.Series([30, 10]))).tolist()
        (1, [2, 0])
        """
        from . import io

        code = self.side_code(side, "side")
        arr = io.read_vertex_ids(ids, "ids")
        flat = arr.reshape(-1)
        pos, found = self._locate(flat, code)
        if flat.shape[0] and not bool(found.all()):
            missing = device.to_host(flat[~found])
            missing = np.unique(missing)
            where = "" if code is None else f" on side {self.side_names[code]!r}"
            raise ValueError(
                f"ids: {missing.size} id{'s are' if missing.size != 1 else ' is'} not a vertex "
                f"of this graph{where}: {_listing(missing.tolist(), missing.size)}; pass ids "
                "from Graph.vertices (or add them with vertices= when building the graph)"
            )
        pos = pos.astype(self.index_dtype)
        if arr.ndim == 0:
            return int(pos[0])
        return pos.reshape(arr.shape)

    def vertex_property(self, values, columns=None, name: str = "values"):
        """An n x k float32 C-contiguous array in internal vertex order.

        Parameters
        ----------
        values : DataFrame, Series or array-like
            Aligned by vertex id, never by position, when it is a pandas/cuDF object: a
            DataFrame (or pyarrow Table) with a ``vertex`` column is keyed by it (for a
            bipartite graph by ``side`` and ``vertex``); a pandas/cuDF DataFrame without one,
            or a Series, is keyed by its index (a (side, vertex) MultiIndex for a bipartite
            graph). Every vertex needs exactly one row; ids not in the graph are refused. The
            value columns are all but the keys (or ``columns``, in order). A NumPy/CuPy array
            (or list) of n rows (1-D is n x 1) is positional, in :attr:`vertices` order.
        columns : str or list of str, optional
            Which frame columns are the features.
        name : str
            The argument name that error messages use.

        Examples
        --------
        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [30, 10], "dst": [10, 20]}))
        >>> device.to_host(g.vertex_property(pd.Series({30: 3.0, 10: 1.0, 20: 2.0}))).ravel()
        array([1., 2., 3.], dtype=float32)
        """
        from . import io

        if io.is_frame(values) or io.is_series(values):
            return io.read_vertex_frame(self, values, columns=columns, name=name)
        if columns is not None:
            raise ValueError(
                f"{name}: columns= selects DataFrame columns, but {name} is an array; "
                "drop columns= or pass a DataFrame keyed by 'vertex'"
            )
        return io.read_property_array(values, self.n, "vertices", name)

    def edge_property(self, values, columns=None, name: str = "values"):
        """An m x k float32 C-contiguous array in CSR edge order.

        ``values`` is an array-like of m rows (1-D is m x 1), or a DataFrame of m rows whose
        columns (or the given ``columns``) are the k features, rows in CSR order.
        """
        from . import io

        if io.is_frame(values):
            return io.read_table_matrix(values, self.m, "edges", name, columns=columns)
        if columns is not None:
            raise ValueError(
                f"{name}: columns= selects DataFrame columns, but {name} is an array; "
                "drop columns="
            )
        return io.read_property_array(values, self.m, "edges", name)

    def weight_column(self, name=None):
        """One weight column as a contiguous (m,) float32 array; ``name`` may be omitted when the
        graph has exactly one."""
        if self.edge_weights is None:
            raise ValueError("this graph has no edge weights; build it with weight=<column>")
        if name is None:
            if len(self.weight_names) != 1:
                raise ValueError(
                    f"name: the graph has {len(self.weight_names)} weight columns "
                    f"{self.weight_names}; pass name= one of them"
                )
            j = 0
        elif name in self.weight_names:
            j = self.weight_names.index(name)
        else:
            raise ValueError(f"name={name!r}: no such weight column; the graph has "
                             f"{self.weight_names}")
        return xp.ascontiguousarray(self.edge_weights[:, j])

    def weights_for(self, weight=None, *, name: str, non_negative: bool = False,
                    required: bool = False):
        """The edge weights an algorithm uses, resolved and validated in one place.

        Parameters
        ----------
        weight : None, str, True or False
            None: the graph's weight column when it has exactly one (as cuGraph and NetworkX
            do), no weights when it has none, and a ValueError listing the columns when it has
            several. A str: that weight column. False: ignore the weights. True: like None, but
            the graph must have weights.
        name : str
            The algorithm, for error messages.
        non_negative : bool
            Refuse negative (or NaN/infinite) weights, naming the column, how many edges and
            examples (for algorithms whose math needs them non-negative).
        required : bool
            The algorithm cannot run unweighted: no weights (or ``weight=False``) is an error.

        Returns
        -------
        array or None
            A contiguous (m,) float32 array in CSR order (cached on the graph), or None for
            "unweighted".

        Examples
        --------
        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [1, 2], "dst": [2, 3],
        ...                                       "w": [0.5, -1.0]}), weight="w")
        >>> device.to_host(g.weights_for(None, name="pagerank")).tolist()
        [0.5, -1.0]
        >>> g.weights_for(False, name="pagerank") is None
        True
        >>> g.weights_for("w", name="sssp", non_negative=True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: sssp: weight column 'w' has 1 edge with a negative ... weight (2->3 = -1); ...
        """
        names = self.weight_names
        if weight is False:
            if required:
                raise ValueError(f"{name}: weight=False, but {name} needs edge weights; pass "
                                 f"weight=None or one of the graph's weight columns {names}")
            return None
        if weight is None or weight is True:
            if not names:
                if required or weight is True:
                    raise ValueError(f"{name}: needs edge weights, but the graph has none; "
                                     "build it with weight=<column>, e.g. "
                                     "Graph.from_edgelist(df, weight='w')")
                return None
            if len(names) > 1:
                raise ValueError(f"{name}: the graph has {len(names)} weight columns {names}; "
                                 "pass weight= one of them (or weight=False to ignore weights)")
            j = 0
        elif isinstance(weight, str):
            if weight not in names:
                import difflib

                close = difflib.get_close_matches(weight, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise ValueError(f"{name}: weight={weight!r} is not a weight column of the graph "
                                 f"(it has {names or 'none'}){hint} Pass weight= one of them, "
                                 "or build the graph with weight=<column>")
            j = names.index(weight)
        else:
            raise TypeError(f"{name}: weight must be None, False or a weight column name, got "
                            f"{type(weight).__name__} {weight!r}")
        w = self.cached(("weights_for", "column", j),
                        lambda: xp.ascontiguousarray(self.edge_weights[:, j]))
        if non_negative:
            bad = self.cached(("weights_for", "negative", j), lambda: self._negative_edges(w))
            if bad.shape[0]:
                count = int(bad.shape[0])
                shown = bad[:3]
                ends = zip(self.describe_vertices(self.edge_sources[shown]),
                           self.describe_vertices(self.out_indices[shown]),
                           device.to_host(w[shown]).tolist())
                examples = ", ".join(f"{u}->{v} = {x:g}" for u, v, x in ends)
                more = ", ..." if count > 3 else ""
                raise ValueError(
                    f"{name}: weight column {names[j]!r} has {count} edge"
                    f"{'s' if count != 1 else ''} with a negative or non-finite weight "
                    f"({examples}{more}); {name} needs non-negative weights: fix or drop those "
                    "edges, or pass weight=False to ignore the weights"
                )
        return w

    def _negative_edges(self, w):
        """CSR positions of edges whose weight is negative, NaN or infinite; an undirected
        graph's edge counts once (its u <= v copy)."""
        bad = ~(w >= 0) | ~xp.isfinite(w)
        if not self.directed:
            bad &= self.edge_sources <= self.out_indices
        return xp.nonzero(bad)[0]

    # ------------------------------------------------------------------ descriptions

    def summary(self) -> dict:
        """Facts about the graph as plain Python values."""
        loops = int((self.edge_sources == self.out_indices).sum()) if self.m else 0
        sides = None
        if self.sides is not None:
            sides = {self.side_names[0]: self._left_count,
                     self.side_names[1]: self.n - self._left_count}
        return {
            "n": self.n,
            "m": self.m,
            "directed": self.directed,
            "multigraph": self.multigraph,
            "weighted": self.edge_weights is not None,
            "weight_names": list(self.weight_names),
            "sides": sides,
            "max_out_degree": int(self.out_degree.max()) if self.n else 0,
            "max_in_degree": int(self.in_degree.max()) if self.n else 0,
            "self_loops": loops,
            "index_dtype": str(self.index_dtype),
            "offset_dtype": str(self.offset_dtype),
            "placement": self.placement,
            "vertex_order": self.vertex_order,
            "edge_bytes": self.edge_bytes(),
            "backend": device.BACKEND,
        }

    def __repr__(self) -> str:
        weights = f", weights={self.weight_names}" if self.weight_names else ""
        sides = f", sides={self.side_names}" if self.side_names else ""
        return (
            f"Graph(n={self.n}, m={self.m}, directed={self.directed}, "
            f"multigraph={self.multigraph}{weights}{sides}, "
            f"index_dtype={self.index_dtype}, offset_dtype={self.offset_dtype}, "
            f"placement={self.placement}, backend={device.BACKEND})"
        )


def _auto_placement(edge_bytes: int, on_device: bool) -> str:
    """"device" when the edge arrays take at most :data:`memory.AUTO_FRACTION` of the device
    memory the library may use (counting their own bytes as usable when they are already
    there), else "host"."""
    counted = on_device and device.BACKEND == "gpu"  # the simulator tracks no usage
    usable = memory.device_available() + (edge_bytes if counted else 0)
    return "device" if edge_bytes <= memory.AUTO_FRACTION * usable else "host"


def _placed(build, placement: str, rows: int, weights) -> "Graph":
    """Build a graph on the device (``build()``), out-of-memory failures named, then place
    its edge arrays.  ``rows`` edge rows (stored both ways already counted) with ``weights``:
    the finished CSR/CSC's index arrays and float32 weights, a lower bound of the build's
    needs, are checked against the budget first."""
    columns = 0 if weights is None else (weights.shape[1] if weights.ndim == 2 else 1)
    need = _edge_bytes_estimate(int(rows), columns)
    with memory.allocating(f"building a graph of {int(rows)} edge rows on the device", need,
                           "build it before setting a lower budget, or use a GPU with more "
                           "memory (graphs are built on the device, then placed)"):
        g = build()
    return g.to(placement)


def _edge_bytes_estimate(rows: int, weight_columns: int, n: int | None = None) -> int:
    """Edge-array bytes of a graph of ``rows`` stored edge rows before merging: two vertex-index
    arrays (``out_indices``, ``in_indices``: :func:`_vertex_dtype` of ``n``; n unknown, before
    the ids are read: int32, as any graph of fewer than 2**31 vertices has), one edge-position
    array (``in_edge_ids``: :func:`_edge_dtype` of ``rows``, int64 from 2**31 rows) and a
    float32 array per weight column."""
    vertex = _vertex_dtype(0 if n is None else int(n)).itemsize
    edge = _edge_dtype(int(rows)).itemsize
    return int(rows) * (2 * vertex + edge + 4 * weight_columns)


def _check_chunk_rows(chunk_rows) -> None:
    if chunk_rows is not None and (isinstance(chunk_rows, (bool, np.bool_))
                                   or not isinstance(chunk_rows, (int, np.integer))
                                   or chunk_rows < 1):
        raise ValueError(f"chunk_rows must be a positive int (rows read per chunk), got "
                         f"{chunk_rows!r}")


def _check_flag(value, arg: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{arg} must be True or False, got {value!r}")
    return bool(value)
