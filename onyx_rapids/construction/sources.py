"""One builder per kind of input, behind the ``Graph.from_*`` constructors: edge frames
(:func:`edgelist`, :func:`frame`), Parquet files (:func:`parquet`), CSR arrays and sparse
matrices (:func:`csr`), cuGraph graphs (:func:`cugraph`), bipartite frames (:func:`bipartite`) and
NetworkX graphs (:func:`networkx`).

Each checks its arguments, reads its input through :mod:`onyx_rapids.io` (which validates it
whole, so a graph is never half built from bad input), chooses the build and returns ``(buffers,
placement)``: the finished :class:`~onyx_rapids.construction.layout.Buffers` and where
``Graph.from_buffers`` places the edge arrays after.  The device build
(:mod:`~onyx_rapids.construction.device`) holds the whole edge list on the device, out-of-memory
failures named; the host build (:mod:`~onyx_rapids.construction.host`) reads the input in chunks
into pinned host memory, for ``placement="host"``, and for ``"auto"`` when the finished edge
arrays would not fit the device.
"""

from __future__ import annotations

import numpy as np

from .. import ids, io, memory
from . import device as device_build
from .duplicates import check_duplicates
from . import host as host_build
from .layout import auto_placement, edge_bytes_estimate


def edgelist(df, source, destination, weight, *, directed, vertices, multigraph, placement,
             chunk_rows, duplicates=None):
    """``Graph.from_edgelist``: its arguments checked, then :func:`frame`."""
    io.require_frame(df, "df")
    directed, multigraph, placement = _check_common(source, destination, weight, directed,
                                                    multigraph, placement, chunk_rows)
    return frame(df, source, destination, weight, directed=directed, multigraph=multigraph,
                 vertices=vertices, placement=placement, chunk_rows=chunk_rows,
                 duplicates=check_duplicates(duplicates))


def _check_common(source, destination, weight, directed, multigraph, placement, chunk_rows,
                  arg_names=("source", "destination")):
    """The arguments every edge-list constructor takes, checked before any data is read:
    ``(directed, multigraph, placement)`` as bools and a placement; TypeError or ValueError
    naming the argument."""
    io.pair_id_columns(source, destination, arg_names)
    io.weight_column_names(weight)
    directed = _check_flag(directed, "directed")
    multigraph = _check_flag(multigraph, "multigraph")
    placement = memory.check_placement(placement)
    _check_chunk_rows(chunk_rows)
    return directed, multigraph, placement


def frame(df, source, destination, weight, *, directed: bool, multigraph: bool, vertices,
          placement: str, chunk_rows, weight_names=None, duplicates=None):
    """The build of an edge frame (``Graph.from_edgelist``, and ``Graph.from_cugraph``, whose
    edge list is a cuDF frame) from checked arguments: in chunks straight into host arrays
    for ``"host"`` (and ``"auto"`` when the finished edge arrays would not fit the device),
    else whole on the device.  ``weight_names`` (one per weight column) names the weight
    columns in the graph instead of their frame names; ``duplicates`` as
    :mod:`~onyx_rapids.construction.duplicates` says."""
    if placement == "auto":  # in chunks only when not even the finished arrays fit
        columns = len(io.weight_column_names(weight))
        rows = io.frame_rows(df) * (1 if directed else 2)
        if edge_bytes_estimate(rows, columns) > memory.device_available():
            placement = "host"
    if placement == "host" and (directed or not multigraph):
        return host_build.from_frame(df, source, destination, weight, directed=directed,
                                     multigraph=multigraph, vertices=vertices,
                                     chunk_rows=chunk_rows, weight_names=weight_names,
                                     duplicates=duplicates), "host"
    src, dst, weights, names = io.read_edgelist(df, source, destination, weight, labels=True)
    if weight_names is not None:
        names = list(weight_names)
    return _from_ids(src, dst, weights, names, directed=directed, multigraph=multigraph,
                     vertices=vertices, placement=placement, duplicates=duplicates)


def parquet(path, source, destination, weight, *, directed, vertices, multigraph, placement,
            chunk_rows, duplicates=None):
    """``Graph.from_parquet``: read in chunks into host arrays for ``"host"`` (and ``"auto"``
    when the file's rows would make edge arrays larger than half the device memory
    available), else read whole and built on the device."""
    directed, multigraph, placement = _check_common(source, destination, weight, directed,
                                                    multigraph, placement, chunk_rows)
    duplicates = check_duplicates(duplicates)
    if placement == "auto":
        path, columns = io.parquet_edge_columns(path, source, destination, weight)
        rows = io.parquet_row_count(path) * (1 if directed else 2)
        estimate = edge_bytes_estimate(rows, len(columns) - 2)
        if auto_placement(estimate, on_device=False) == "host":
            placement = "host"
    if placement == "host" and (directed or not multigraph):
        return host_build.from_parquet(path, source, destination, weight, directed=directed,
                                       multigraph=multigraph, vertices=vertices,
                                       chunk_rows=chunk_rows, duplicates=duplicates), "host"
    table = io.read_parquet_edges(path, source, destination, weight)
    src, dst, weights, names = io.read_edgelist(table, source, destination, weight,
                                                labels=True)
    return _from_ids(src, dst, weights, names, directed=directed, multigraph=multigraph,
                     vertices=vertices, placement=placement, duplicates=duplicates)


def _from_ids(src, dst, weights, names, *, directed, multigraph, vertices, placement,
              duplicates=None):
    """The device build of checked original ids (integers, or labels), ``vertices`` (ids that
    may have no edges) read here."""
    extra = None if vertices is None else io.read_extra_vertices(vertices)
    return _on_device(lambda: device_build.from_ids(src, dst, weights, names, directed=directed,
                                                    multigraph=multigraph,
                                                    extra_vertices=extra,
                                                    duplicates=duplicates),
                      placement, src.shape[0] * (1 if directed else 2), weights)


def csr(offsets, indices, weights, *, directed, multigraph, placement, chunk_rows):
    """``Graph.from_csr``: host input in chunks into host arrays for ``"host"`` (and
    ``"auto"`` when the finished edge arrays would not fit the device), else the arrays
    copied to the device and built there."""
    directed = _check_flag(directed, "directed")
    multigraph = _check_flag(multigraph, "multigraph")
    placement = memory.check_placement(placement)
    _check_chunk_rows(chunk_rows)
    offsets, indices, weights = io.csr_inputs(offsets, indices, weights)
    if placement != "device" and not io.csr_on_device(offsets, indices, weights):
        if placement == "auto":  # in chunks only when not even the finished arrays fit
            size = io.csr_size(offsets, indices, weights)
            if size is not None and edge_bytes_estimate(size[1], size[2], max(size[0], 0)) \
                    > memory.device_available():
                placement = "host"
        if placement == "host":
            return host_build.from_csr(offsets, indices, weights, directed=directed,
                                       multigraph=multigraph, chunk_rows=chunk_rows), "host"
    offsets, indices, weights, names = io.read_csr(offsets, indices, weights)
    return _on_device(lambda: device_build.from_csr(offsets, indices, weights, names,
                                                    directed=directed, multigraph=multigraph),
                      placement, int(indices.shape[0]), weights)


def cugraph(G, *, multigraph, placement, chunk_rows):
    """``Graph.from_cugraph``: the edge frame ``G`` keeps (on the device) built as
    :func:`frame` builds one, its vertex list and weight name as cuGraph gives them (a
    cuGraph graph has no parallel edges to merge, unless it is a MultiGraph: those keep the
    first row's weights, silently)."""
    multigraph = _check_flag(multigraph, "multigraph")
    placement = memory.check_placement(placement)
    _check_chunk_rows(chunk_rows)
    edges, source, destination, weight, names, directed, extra = io.cugraph_edges(G)
    return frame(edges, source, destination, weight, directed=directed, multigraph=multigraph,
                 vertices=extra, placement=placement, chunk_rows=chunk_rows,
                 weight_names=names, duplicates="first")


def bipartite(df, left, right, weight, *, multigraph, placement, duplicates=None):
    """``Graph.from_bipartite``: built on the device, each side renumbered on its own (labels
    such as strings too)."""
    io.require_frame(df, "df")
    io.check_column_name(left, "left")  # a side is named by its one id column
    io.check_column_name(right, "right")
    _directed, multigraph, placement = _check_common(left, right, weight, True, multigraph,
                                                     placement, None, ("left", "right"))
    duplicates = check_duplicates(duplicates)
    if left == right:
        raise ValueError(f"left and right name the same column {left!r}; pass the two id "
                         "columns of the two sides (e.g. left='user', right='item')")
    lids, rids, weights, names = io.read_edgelist(df, left, right, weight,
                                                  arg_names=("left", "right"), labels=True)
    if ids.is_labels(lids) != ids.is_labels(rids):  # each side keeps its own kind of id
        lids, rids = ids.as_labels(lids), ids.as_labels(rids)
    return _on_device(lambda: device_build.from_bipartite(lids, rids, weights, names,
                                                          multigraph=multigraph,
                                                          side_names=(left, right),
                                                          duplicates=duplicates),
                      placement, 2 * lids.shape[0], weights)


def networkx(G, weight, *, placement, duplicates=None):
    """``Graph.from_networkx``: G's edges and nodes read (:func:`onyx_rapids.io.read_networkx`)
    and built on the device, keyed by G's node labels; a multigraph keeps its parallel
    edges (``multigraph=True``)."""
    placement = memory.check_placement(placement)
    duplicates = check_duplicates(duplicates)
    src, dst, weights, names, directed, multigraph, nodes = io.read_networkx(G, weight)
    if not nodes.shape[0]:
        raise ValueError("G has no nodes; a graph needs at least one vertex")
    return _from_ids(src, dst, weights, names, directed=directed, multigraph=multigraph,
                     vertices=nodes, placement=placement, duplicates=duplicates)


def _on_device(build, placement: str, rows: int, weights):
    """``(build(), placement)``: the device build, its out-of-memory failures named.  ``rows``
    edge rows (stored both ways already counted) with ``weights``: the finished CSR/CSC's
    index arrays and float32 weights, a lower bound of the build's needs, are checked against
    the budget first."""
    columns = 0 if weights is None else (weights.shape[1] if weights.ndim == 2 else 1)
    need = edge_bytes_estimate(int(rows), columns)
    with memory.allocating(f"building a graph of {int(rows)} edge rows on the device", need,
                           "build it before setting a lower budget, or use a GPU with more "
                           "memory (graphs are built on the device, then placed)"):
        return build(), placement


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
