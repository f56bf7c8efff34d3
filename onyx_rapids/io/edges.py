"""Edge lists in: an edge frame (pandas / cuDF DataFrame, pyarrow Table) validated into id and
weight arrays (:func:`read_edgelist`), and the edge list a cuGraph graph keeps
(:func:`cugraph_edges`, :func:`read_cugraph`), and the edges and nodes of a NetworkX graph
(:func:`read_networkx`).  cuGraph and NetworkX are imported only when one is read.
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..device import xp
from ..ids import as_labels, is_labels
from .arrays import read_vertex_ids
from .columns import finite_float32, id_column, numeric_column
from .frames import (column_names, num_rows, pair_id_columns, require_column, require_frame,
                     weight_column_names)


def read_edgelist(df, source="src", destination="dst", weight=None, *,
                  arg_names=("source", "destination"), where="the edge list", row_offset=0,
                  labels=False):
    """Validate an edge frame; return (src int64, dst int64, weights (m, w) float32 | None, names).

    ``df`` is a pandas or cuDF DataFrame or a pyarrow Table; the ids are the original ones.
    ``labels``: id columns that are not integers (strings, categoricals, objects) are read as
    labels, host object arrays (:func:`onyx_rapids.ids.is_labels`); when one of the two is,
    both are (integers then labels too).  Without ``labels`` they are refused.
    ``arg_names`` are the names error messages give the two id arguments (``("left",
    "right")`` for :meth:`~onyx_rapids.graph.Graph.from_bipartite`); ``where`` names the
    edge list and ``row_offset`` is the row number of ``df``'s first row in it (a chunk of a
    larger file), for the messages.
    """
    kind = require_frame(df, "df")
    src_arg, dst_arg = arg_names
    sources, destinations = pair_id_columns(source, destination, arg_names)
    if len(sources) > 1 and not labels:
        raise TypeError(f"{src_arg}={source!r}: multi-column ids are taken where a graph is "
                        "built (Graph.from_edgelist); pass one integer id column")
    names = weight_column_names(weight)
    columns = column_names(df, kind)
    for col in sources:
        require_column(columns, col, src_arg, where)
    for col in destinations:
        require_column(columns, col, dst_arg, where)
    for name in names:
        require_column(columns, name, "weight", where)
    if num_rows(df, kind) == 0:
        raise ValueError("df: the edge list is empty (0 rows); a graph needs at least one edge "
                         "(for a graph without edges use Graph.from_csr)")
    src = _ids(df, kind, sources, src_arg, where, row_offset, labels)
    dst = _ids(df, kind, destinations, dst_arg, where, row_offset, labels)
    if is_labels(src) or is_labels(dst):
        src, dst = as_labels(src), as_labels(dst)
    weights = None
    if names:
        cols = [numeric_column(df, kind, name, "weight", where, row_offset) for name in names]
        weights = xp.ascontiguousarray(xp.stack(cols, axis=1))
    return src, dst, weights, [str(name) for name in names]


def _ids(df, kind: str, names: list, arg: str, where: str, row_offset: int, labels: bool):
    """The ids of one id column (:func:`id_column`), or of several: each row's tuple of their
    values, a label (host object array)."""
    if len(names) == 1:
        return id_column(df, kind, names[0], arg, where, row_offset, labels=labels)
    parts = [as_labels(id_column(df, kind, name, arg, where, row_offset, labels=True))
             for name in names]
    out = np.empty(parts[0].shape[0], dtype=object)
    out[:] = list(zip(*parts))
    return out


def cugraph_edges(G):
    """Check a single-GPU cugraph.Graph and name what to read from it.

    Returns ``(edges, source, destination, weight, names, directed, vertices)``: the edge
    list ``G`` keeps in original ids (``G.view_edge_list()``, a cuDF frame on the device;
    each undirected edge once), its source, destination and weight column names (``weight``
    None when ``G`` is unweighted), the weight names the graph takes (``[G.weight_column or
    "weight"]``, or []), whether ``G`` is directed, and its vertex ids (an int64 backend
    array, isolated vertices included) or None.  :func:`read_cugraph` reads the columns whole;
    ``Graph.from_cugraph(placement="host")`` reads the frame in chunks.
    """
    try:
        import cugraph
    except Exception as e:
        raise ImportError(f"Graph.from_cugraph needs cuGraph, which did not import ({e})") from e
    if not isinstance(G, cugraph.Graph):
        raise TypeError(f"G must be a cugraph.Graph, got {type(G).__module__}."
                        f"{type(G).__name__}; for edge frames use Graph.from_edgelist")
    if getattr(G, "is_multi_gpu", lambda: False)():
        raise ValueError("G is a multi-GPU (dask) cuGraph graph; build a single-GPU "
                         "cugraph.Graph, or read its edge list with Graph.from_edgelist")
    if G.is_renumbered():
        raise TypeError("G has non-integer or multi-column vertex ids (cuGraph renumbered them "
                        "in Python), which Graph.from_cugraph does not read; pass its edge list "
                        "to Graph.from_edgelist (G.view_edge_list(), labels such as strings "
                        "are renumbered there)")
    if not hasattr(G, "decompress_to_edgelist"):
        raise ImportError("this cuGraph version lacks Graph.decompress_to_edgelist; upgrade "
                          "cuGraph, or pass G.view_edge_list() to Graph.from_edgelist")
    directed = bool(G.is_directed())
    weighted = bool(G.is_weighted())
    # The edge list G keeps in original ids, each undirected edge once (a device frame). Not
    # decompress_to_edgelist(): after a cuGraph algorithm that wants transposed storage (such
    # as pagerank) it returns the edges reversed, with nothing on G saying so (seen with
    # cuGraph 26.10).
    edges = G.view_edge_list()
    columns = list(edges.columns)
    weight = columns[2] if weighted and len(columns) > 2 else None
    names = [] if weight is None else [str(getattr(G, "weight_column", None) or "weight")]
    vertices = None
    if hasattr(G, "extract_vertex_list"):
        vertices = read_vertex_ids(G.extract_vertex_list(return_unrenumbered_vertices=True),
                                   "G.extract_vertex_list()")
    return edges, columns[0], columns[1], weight, names, directed, vertices


def read_cugraph(G):
    """Edges and vertices of a single-GPU cugraph.Graph in original ids, on the device.

    Returns (src int64, dst int64, weights (m, 1) float32 | None, names, directed, vertices);
    undirected edges come once each (the caller stores both directions).  The checks are
    :func:`cugraph_edges`'.
    """
    edges, source, destination, weight, names, directed, vertices = cugraph_edges(G)
    src, dst, weights, _ = read_edgelist(edges, source, destination, weight)
    return src, dst, weights, names, directed, vertices


def read_networkx(G, weight="weight"):
    """The edges and nodes of a NetworkX graph, for ``Graph.from_networkx``.

    Returns ``(src, dst, weights (m, 1) float32 | None, names, directed, multigraph, nodes)``:
    the ends of each edge (each undirected edge once, parallel edges of a multigraph each),
    as int64 backend arrays when every node is an int (not a bool), else as labels (host
    object arrays, :func:`onyx_rapids.ids.is_labels`); ``nodes`` all of G's nodes alike
    (isolated ones included).  ``weight``: the edge attribute read as the weight column
    (named after it), None for none; when no edge has it the graph is unweighted, and an edge
    lacking it where others have it weighs 1.0, as NetworkX's algorithms read a missing
    weight.  TypeError names a non-numeric weight's edge.
    """
    import networkx as nx

    if not isinstance(G, nx.Graph):
        raise TypeError(f"G must be a networkx Graph, DiGraph, MultiGraph or MultiDiGraph, got "
                        f"{type(G).__module__}.{type(G).__name__}; for edge frames use "
                        "Graph.from_edgelist")
    if weight is not None and (isinstance(weight, (bool, np.bool_)) or not isinstance(weight, str)
                               and not np.isscalar(weight)):
        raise TypeError(f"weight={weight!r}: pass the name of the edge attribute that holds the "
                        "weights (NetworkX's default is 'weight'), or weight=None")
    nodes = list(G.nodes)
    integer = all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                  and -(1 << 63) <= v < (1 << 63) for v in nodes)
    edges = list(G.edges(data=weight, default=None)) if weight is not None else \
        [(u, v, None) for u, v in G.edges()]

    def ids(values):
        if integer:
            return device.asarray(np.fromiter(values, dtype=np.int64, count=len(values)))
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out

    src = ids([e[0] for e in edges])
    dst = ids([e[1] for e in edges])
    weights, names = None, []
    given = [e[2] for e in edges]
    if weight is not None and any(w is not None for w in given):
        values = np.empty(len(given), dtype=np.float64)
        for i, (u, v, w) in enumerate(edges):
            if w is None:
                values[i] = 1.0
                continue
            if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, float, np.number)):
                raise TypeError(f"weight={weight!r}: edge ({u!r}, {v!r}) has {weight}={w!r}, "
                                "which is not a number; fix that attribute, or pass another "
                                "weight= (None: unweighted)")
            values[i] = float(w)
        weights = finite_float32(device.asarray(values), f"weight={weight!r}")[:, None]
        names = [str(weight)]
    return (src, dst, weights, names, bool(G.is_directed()), bool(G.is_multigraph()),
            ids(nodes))
