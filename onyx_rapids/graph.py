"""Graph: a graph held as CSR (out-edges) and CSC (in-edges) on the device.

A :class:`Graph` is built once, by one of its ``from_*`` constructors, and never modified after.
The constructors hold no construction logic: each calls its builder in
:mod:`onyx_rapids.construction` (which reads the input through :mod:`onyx_rapids.io` and builds
on the device or, for graphs larger than the device, in chunks into host memory) and takes the
finished buffers (:meth:`Graph.from_buffers`).  The renumbering map and the lookups by original
id are :class:`onyx_rapids.ids.VertexIds` (``g.id_map``).

Edge lists are undirected by default, as cuGraph's ``Graph()`` and NetworkX's
``from_pandas_edgelist``: ``from_edgelist`` and ``from_parquet`` store each row u-v both ways
unless ``directed=True`` (the default before 0.2; ``docs/changes.md``). ``from_csr`` follows
``scipy.sparse.csgraph`` and reads its input as directed unless ``directed=False``;
``from_cugraph`` takes the direction of the cuGraph graph; ``from_bipartite`` is undirected.

Simple graphs by default, as cuGraph's ``Graph`` and NetworkX's ``Graph``/``DiGraph``: parallel
edges are merged into one that keeps the weights of the FIRST occurrence in input row order,
each self-loop is kept once, and an undirected edge listed as u-v and v-u (or twice) is one edge,
stored as u->v and v->u. ``multigraph=True`` keeps every input row as an edge (``g.multigraph``
says which).

Layout (:mod:`onyx_rapids.construction.layout`): arrays of vertex indices (values in [0, n):
``out_indices``, ``in_indices``, the edge sources) are ``index_dtype``, int32 while n fits in
int32, int64 beyond; arrays of edge positions or counts (values in [0, m]: the offsets,
``in_edge_ids``, ``reverse_edge``) are ``offset_dtype``, int32 while m fits in int32, int64
beyond. So a graph of more than 2**31 edges on fewer than 2**31 vertices (R-MAT scale 26: 2.4e9
edges, 39.5M vertices) keeps 4-byte vertex indices beside 8-byte offsets.

* ``vertices`` (n, int64): original ids in internal order, which is ascending id order (for a
  bipartite graph: the left side ascending, then the right side ascending; see ``sides``), or
  the order :meth:`Graph.reorder` chose (``vertex_order`` says which); for a graph built from
  labels (strings, any hashable) their codes, the labels being ``id_map.labels.values[code]``
  (``id_map.original()`` gives the original ids of any graph in internal order);
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

from . import device, io, memory
from .construction import device as device_build
from .construction import host as host_build
from .construction import sources
from .construction.layout import auto_placement, edge_rows
from .device import xp
from .ids import VertexIds

__all__ = ["Graph"]

#: Internal vertex orders (:meth:`Graph.reorder`): ascending original id, descending degree.
VERTEX_ORDERS = ("id", "degree", "bfs")


class Graph:
    """An undirected (stored both ways) or directed graph in CSR and CSC form on the device.

    Simple by default (``multigraph=False``); edge lists undirected by default
    (``directed=False``, as cuGraph and NetworkX); see the module docstring. Build one with
    :meth:`from_edgelist`, :meth:`from_parquet`, :meth:`from_csr`, :meth:`from_cugraph`,
    :meth:`from_bipartite` or :meth:`from_networkx`; the initializer only gathers finished
    buffers (the keyword arguments below, which :class:`onyx_rapids.construction.layout.Buffers` holds;
    ``edge_sources``, when the build has them, seeds the derived data).
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
        edge_sources=None,
        labels=None,
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
        #: The renumbering map: lookups from original ids, descriptions in original ids.
        self.id_map = VertexIds(vertices, sides, self.side_names, vertex_order,
                                self.index_dtype, labels)
        # Reverse pairing fixed at construction (an undirected edge's two copies); not derived
        # data, so clear_cache() keeps it.
        self._reverse_edge = reverse_edge
        self._cache: dict = {} if edge_sources is None else {"edge_sources": edge_sources}

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_edgelist(
        cls,
        df,
        source="src",
        destination="dst",
        weight=None,
        directed: bool = False,
        vertices=None,
        multigraph: bool = False,
        placement: str = "auto",
        chunk_rows: int | None = None,
        duplicates: str | None = None,
    ) -> "Graph":
        """A graph from an edge frame: a pandas or cuDF DataFrame, or a pyarrow Table.

        Parameters
        ----------
        df : pandas.DataFrame, cudf.DataFrame or pyarrow.Table
            One row per edge.
        source, destination : str
            Vertex-id columns, renumbered to 0..n-1: integers (any integer dtype, negative and
            int64 ids allowed), in ascending order; or labels, as cuGraph renumbers them:
            strings (pandas ``object``/``string``, pyarrow ``string``/``large_string``, cuDF
            strings), bytes, categoricals and dictionary-encoded columns (their values), any
            hashable objects, in ascending label order when they sort (else in order of first
            appearance).  A graph of labels keeps them: result frames' ``vertex`` column (and
            ids in other columns, such as ``predecessor``) hold the labels, lookups
            (``source=`` of bfs, :meth:`to_internal`, per-vertex frames) take them, and
            ``g.id_map.labels`` holds them (``g.vertices`` holds their codes).  When one of
            the two columns holds labels, the other's integers are labels too.  Floats and
            booleans are refused.
        weight : None, str or list of str
            Weight column(s), one float32 column each in ``edge_weights[:, j]``.
        directed : bool
            Undirected by default (cuGraph/NetworkX convention): each row u-v is the edge u-v,
            stored in both directions (u->v and v->u).  Pass ``directed=True`` for a directed
            graph (each row the edge u->v only; the default before 0.2).
        vertices : array-like of ids, optional
            Ids that may have no edges (isolated vertices); labels too.
        multigraph : bool
            False (the default, as cuGraph's ``Graph``): rows with the same (source,
            destination) -- for ``directed=False`` the same unordered pair, in either order --
            are one edge, whose weights ``duplicates`` chooses; a self-loop is kept once.
            True keeps every row as an edge.
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
        duplicates : {"first", "last", "min", "sum", "error"}, optional
            The weights of an edge that several rows name, column by column: the first
            row's (the default), the last row's (NetworkX's rule), the smallest, the sum (of
            every such row, also rows that agree: counts; a self-loop row counted once), or,
            when the rows' weights differ, a ValueError naming the pairs.  Left out, it is
            "first", and a ``UserWarning`` says how many pairs' rows disagreed; rows that
            agree merge silently under every rule
            (:mod:`onyx_rapids.construction.duplicates`).

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"src": [10, 10, -3, 10], "dst": [-3, 7, 7, 7],
        ...                    "w": [0.5, 1.0, 2.0, 9.0]})
        >>> u = Graph.from_edgelist(df, weight="w", vertices=[99])  # undirected by default
        >>> u.directed, u.n, u.m  # three edges, each stored both ways
        (False, 4, 6)
        >>> g = Graph.from_edgelist(df, weight="w", vertices=[99], directed=True,
        ...                         duplicates="first")
        >>> g.n, g.m, device.to_host(g.vertices).tolist()
        (4, 3, [-3, 7, 10, 99])
        >>> device.to_host(g.out_offsets).tolist(), device.to_host(g.out_indices).tolist()
        ([0, 1, 1, 3, 3], [1, 0, 1])
        >>> device.to_host(g.edge_weights[:, 0]).tolist()  # 10->7 keeps its first weight
        [2.0, 0.5, 1.0]
        >>> h = Graph.from_edgelist(df, weight="w", directed=True, duplicates="sum")
        >>> device.to_host(h.edge_weights[:, 0]).tolist()  # 10->7: 1.0 + 9.0
        [2.0, 0.5, 10.0]
        >>> Graph.from_edgelist(df, directed=True, multigraph=True).m
        4
        >>> names = pd.DataFrame({"src": ["ann", "bob"], "dst": ["bob", "cy"]})
        >>> s = Graph.from_edgelist(names, directed=True)
        >>> s.id_map.labels.values.tolist(), s.to_internal("cy")
        (['ann', 'bob', 'cy'], 2)
        """
        return cls.from_buffers(*sources.edgelist(
            df, source, destination, weight, directed=directed, vertices=vertices,
            multigraph=multigraph, placement=placement, chunk_rows=chunk_rows,
            duplicates=duplicates))

    @classmethod
    def from_parquet(
        cls,
        path,
        source="src",
        destination="dst",
        weight=None,
        directed: bool = False,
        vertices=None,
        multigraph: bool = False,
        placement: str = "auto",
        chunk_rows: int | None = None,
        duplicates: str | None = None,
    ) -> "Graph":
        """A graph from a Parquet file (or a directory of them), reading only the named columns.

        The arguments mean what they mean in :meth:`from_edgelist` (undirected by default,
        cuGraph/NetworkX convention: pass ``directed=True`` for a directed graph; simple graph
        unless ``multigraph=True``; integer or label ids, such as string columns, plain or
        dictionary-encoded; ``duplicates``).  With ``placement="device"`` the file is read whole
        (``cudf.read_parquet`` on a GPU with cuDF, ``pyarrow.parquet`` otherwise) and built on
        the device.  With ``placement="host"`` it is read in chunks of ``chunk_rows`` rows
        (default: what a quarter of the available device memory holds, at most 2**27) straight
        into host-placed arrays (:mod:`onyx_rapids.construction.host`), so the edge list is
        never whole on the device: device memory peaks at about 160 bytes per chunk row plus 40
        bytes per vertex, pinned host memory at the finished graph's edge arrays (per row read,
        a directed graph's two vertex indices and one edge position, an undirected graph's one
        of each for each of its two stored directions; 4 bytes each, 8 for vertex indices from
        2**31 vertices and for edge positions from 2**31 edges; plus 4 bytes per weight column),
        plus one chunk as read by pyarrow.  The file is read three times.  An undirected
        multigraph is built on the device and then moved.  ``"auto"`` estimates the graph's edge
        bytes from the file's row count and builds it the host way when they exceed half the
        device memory available.  Progress lines of the chunked build go to the
        ``onyx_rapids.host_build`` logger (level INFO).  Label ids stream too: the first pass
        gathers their distinct values on the host (a hash table of the labels, about the size
        of the vertex labels themselves), and each chunk's labels are looked up there.

        >>> g = Graph.from_parquet("edges.parquet", source="u", destination="v",
        ...                        weight="rating")  # undirected  # doctest: +SKIP
        >>> web = Graph.from_parquet("web/", placement="host", directed=True)  # doctest: +SKIP
        """
        return cls.from_buffers(*sources.parquet(
            path, source, destination, weight, directed=directed, vertices=vertices,
            multigraph=multigraph, placement=placement, chunk_rows=chunk_rows,
            duplicates=duplicates))

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
        Directed by default, as ``scipy.sparse.csgraph`` reads a matrix (unlike the edge-list
        constructors, which are undirected by default): entry (u, v) is the edge u->v.
        ``directed=False`` expects the symmetric structure of an undirected graph (each u->v
        has a v->u of the same weight) and stores it as given. Repeated (row, column) entries
        are one edge keeping the first entry's weights, unless ``multigraph=True``.

        ``placement`` as in :meth:`from_edgelist`:

        * ``"device"``: the arrays are copied to the device and the graph is built there
          whole (peak about 40 bytes per entry), and kept there.
        * ``"host"`` with host input (NumPy arrays, lists, pandas Series, a SciPy matrix):
          built in chunks straight into pinned host arrays
          (:mod:`onyx_rapids.construction.host`), so a CSR larger than the device loads.  The
          input is read three times where it lies: once to check it, on the host in blocks of
          ``chunk_rows`` entries (the device build's checks and error messages, nothing copied
          to the device), then twice ``chunk_rows`` entries at a time (each entry's row found in
          the offsets, its index and weights moved to the device) for the passes of the host
          build.  ``directed=False`` input is stored as given; its symmetry is checked and its
          reverse pairing found in blocks of vertices.  Device memory peaks at one chunk (about
          160 bytes per chunk row) plus about 40 bytes per vertex; pinned host memory at the
          finished graph's edge arrays: per entry two vertex indices and one edge position (4
          bytes each; 8 for vertex indices from 2**31 vertices and for edge positions from 2**31
          edges), 4 bytes per weight column, and for ``directed=False`` one more edge position
          (the reverse pairing); the caller's input stays where it is.  The graph equals
          ``from_csr(..., placement="device").to("host")`` (the same arrays, dtypes and order).
          CuPy input is on the device already: it is built there, then its edge arrays move
          to the host.
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
        return cls.from_buffers(*sources.csr(
            offsets, indices, weights, directed=directed, multigraph=multigraph,
            placement=placement, chunk_rows=chunk_rows))

    @classmethod
    def from_cugraph(cls, G, multigraph: bool = False, placement: str = "auto",
                     chunk_rows: int | None = None) -> "Graph":
        """A graph from a single-GPU ``cugraph.Graph``, read on the device (no host round trip).

        Reads the edge list ``G`` keeps in original ids (``G.view_edge_list()``, a device
        frame) and its vertex list (isolated vertices included).  Directed or undirected as
        ``G`` is (``G.is_directed()``; there is no ``directed`` argument); undirected edges are
        stored both ways as in :meth:`from_edgelist`. cuGraph's ``Graph`` has no parallel edges; pass
        ``multigraph=True`` to keep those of a ``cugraph.MultiGraph`` (else they are merged).
        The weight column is named ``G.weight_column`` (or ``"weight"``).

        ``placement`` as in :meth:`from_edgelist`: ``"device"`` builds the graph whole on the
        device beside ``G`` (peak about 40 bytes per stored edge row) and keeps it there.
        ``"host"`` builds it as :meth:`from_edgelist` does with ``placement="host"``: the
        edge frame, on the device already, is read in slices of ``chunk_rows`` rows (three
        times) and the CSR/CSC filled in pinned host memory, never the whole graph on the
        device (in place of the device build's ``from_ids``): device memory peaks at
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
        return cls.from_buffers(*sources.cugraph(G, multigraph=multigraph, placement=placement,
                                                 chunk_rows=chunk_rows))

    @classmethod
    def from_bipartite(cls, df, left, right, weight=None, multigraph: bool = False,
                       placement: str = "auto", duplicates: str | None = None) -> "Graph":
        """An undirected bipartite graph (users and items, say) whose two sides have separate
        id namespaces: user 5 and item 5 are two vertices.

        Parameters
        ----------
        df : pandas.DataFrame, cudf.DataFrame or pyarrow.Table
            One row per edge (a rating, say).
        left, right : str
            The id columns of the two sides (integers or labels such as strings, as in
            :meth:`from_edgelist`; a label on one side makes both sides' ids labels); their
            names become ``g.side_names``.
        weight : None, str or list of str
            Weight column(s), as in :meth:`from_edgelist`.
        multigraph : bool
            False (the default): rows with the same (left, right) pair are one edge, its
            weights chosen by ``duplicates``. True keeps every row.
        placement : {"auto", "device", "host"}
            Where the edge arrays live, as in :meth:`from_edgelist`.
        duplicates : {"first", "last", "min", "sum", "error"}, optional
            As in :meth:`from_edgelist`.

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
        return cls.from_buffers(*sources.bipartite(df, left, right, weight,
                                                   multigraph=multigraph, placement=placement,
                                                   duplicates=duplicates))

    @classmethod
    def from_networkx(cls, G, weight="weight", placement: str = "auto",
                      duplicates: str | None = None) -> "Graph":
        """A graph from a NetworkX graph, keyed by its node labels.

        Parameters
        ----------
        G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            Directed when ``G.is_directed()``; every node is a vertex (isolated ones too).
            Nodes that are all ints keep integer ids (as :meth:`from_edgelist` renumbers
            them); any other hashable labels (strings, tuples, mixed types) are renumbered
            as :meth:`from_edgelist` renumbers labels, and result frames, lookups and
            messages use the labels themselves.
        weight : str or None
            The edge attribute read as the weight column (named after it), NetworkX's
            default ``"weight"``.  When no edge has it the graph is unweighted; an edge
            lacking it where others have it weighs 1.0, as NetworkX's algorithms read a
            missing weight; a value that is not a number is a TypeError naming the edge.
            None: unweighted.
        placement : {"auto", "device", "host"}
            Where the edge arrays live, as in :meth:`from_edgelist` (built on the device).
        duplicates : {"first", "last", "min", "sum", "error"}, optional
            As in :meth:`from_edgelist`; a NetworkX graph has no duplicate pairs, so this
            matters only for a multigraph's parallel edges, which are kept: a
            ``MultiGraph``/``MultiDiGraph`` becomes a graph with ``multigraph=True``, each
            parallel edge with its own weight.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph()
        >>> G.add_edge("ann", "bob", weight=2.0)
        >>> G.add_edge("bob", "cy", weight=0.5)
        >>> G.add_node("dee")  # isolated
        >>> g = Graph.from_networkx(G)
        >>> g.n, g.m, g.directed, g.weight_names
        (4, 4, False, ['weight'])
        >>> g.id_map.labels.values.tolist(), g.to_internal("cy")
        (['ann', 'bob', 'cy', 'dee'], 2)
        >>> from onyx_rapids import io
        >>> io.to_edge_frame(g)["src"].tolist()  # doctest: +SKIP
        ['ann', 'bob', 'bob', 'cy']
        """
        return cls.from_buffers(*sources.networkx(G, weight, placement=placement,
                                                  duplicates=duplicates))

    @classmethod
    def from_buffers(cls, buffers, placement: str | None = None) -> "Graph":
        """A graph of finished buffers (:class:`onyx_rapids.construction.layout.Buffers`, what
        every builder of :mod:`onyx_rapids.construction` returns), its edge arrays then moved
        to ``placement`` (:meth:`to`; None: left where they are)."""
        g = cls(**buffers.arguments())
        return g if placement is None else g.to(placement)

    # ------------------------------------------------------------------ derived graphs

    def reorder(self, order: str = "degree") -> "Graph":
        """This graph with its internal vertex numbering permuted for memory locality; the same
        vertices and edges, results still in original ids.

        ``order="degree"``: descending total degree (in + out; ties keep the current order),
        so the rows that most edges gather (the hubs') share cache lines and stay in L2.  On a
        skewed graph whose ids carry no locality (R-MAT's are permuted) this speeds up every
        gather of a propagation; ``benchmarks/NOTES.md`` has the measurements.  Result frames
        list the vertices in the new internal order; look vertices up by id (``vertex``
        column, :meth:`to_internal`), never by position.  A positional vertex or edge
        property array of the old graph does not fit the new one.  ``order="bfs"``:
        breadth-first from the vertex of largest degree, each level's vertices by their
        earliest parent's place (Graffix's BFS-level renumbering, Cuthill and McKee's order),
        so neighbours get nearby numbers and a warp's lanes read nearby rows; unreached
        vertices last, by descending degree; a few array steps per level of the search.
        ``order="id"`` gives back ascending id order.  Costs one sort of the edges, as
        building the graph did.

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
        return Graph.from_buffers(device_build.reordered(self, order, self._reverse_edge))

    def simple_undirected(self) -> "Graph":
        """The simple undirected view: directions dropped, parallel edges merged, self-loops
        removed, every vertex kept in the same internal order (the graph of APPNP's A and of
        core numbers); ``sides`` carry over. Cached.  A host-placed graph's view is built in
        blocks into host memory (never O(m) on the device).

        >>> import pandas as pd
        >>> Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 2], "dst": [2, 1, 2]})
        ...                     ).simple_undirected().m
        2
        """
        build = host_build if self.placement == "host" else device_build
        return self.cached("simple_undirected",
                           lambda: Graph.from_buffers(build.simple_undirected(self)))

    # ------------------------------------------------------------------ placement

    #: The per-edge arrays that placement moves (the per-vertex ones stay on the device).
    EDGE_ARRAYS = ("out_indices", "in_indices", "in_edge_ids", "edge_weights", "_reverse_edge")

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
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}), directed=True)
        >>> h = g.to("host")
        >>> h.placement, h.m, device.to_host(h.out_indices).tolist()
        ('host', 2, [1, 2])
        """
        placement = memory.check_placement(placement)
        if placement == "auto":
            placement = auto_placement(self.edge_bytes(), on_device=self.placement == "device")
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
                     vertex_order=self.vertex_order, labels=self.id_map.labels)

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
            reverse, missing = device_build.pair_reverse(self.edge_sources, self.out_indices,
                                                         self.n, self.offset_dtype)
            if missing is not None:
                raise ValueError(
                    f"reverse_edge_index: {self._describe_edges(missing)} have no reverse edge; "
                    "build the graph with directed=False, or add the reverse edges"
                )
            return reverse

        return self.cached("reverse_edge", build)

    # ------------------------------------------------------------------ lookups by id

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
        code = self.side_code(side, "side")
        labels = self.id_map.labels is not None
        return self.id_map.to_internal(io.read_vertex_ids(ids, "ids", labels=labels), code)

    def side_code(self, side, arg: str = "side"):
        """0 (left) or 1 (right) for a side of a bipartite graph, given by its name (e.g.
        ``"user"``), ``"left"``/``"right"`` or 0/1; None for a non-bipartite graph given None.

        Raises ValueError naming ``arg`` when a bipartite graph gets no side, a non-bipartite
        graph gets one, or the side is unknown."""
        return self.id_map.side_code(side, arg)

    def id_order(self):
        """Internal positions of the vertices in ascending original-id order (a backend
        array): ``arange(n)`` unless the graph was reordered (:meth:`reorder`).  Inputs drawn
        per vertex in this order land on the same ids whatever the internal order."""
        return self.id_map.id_order()

    def describe_vertices(self, internal) -> list:
        """Original ids of internal vertices as strings for messages: ``'5'``, or for a
        bipartite graph ``'user 5'`` (side name, id)."""
        return self.id_map.describe(internal)

    def _describe_edges(self, positions, total: int | None = None) -> str:
        """'3 edges (a->b, ...)' in original ids, for error messages: the first of the CSR
        ``positions`` and their number (``total``: how many there are in all, when
        ``positions`` holds only the first ones)."""
        return self.id_map.describe_edges(self.out_offsets, self.out_indices, positions, total)

    # ------------------------------------------------------------------ properties and weights

    def vertex_property(self, values, columns=None, name: str = "values"):
        """An n x k float32 C-contiguous array in internal vertex order.

        Parameters
        ----------
        values : DataFrame, Series, dict or array-like
            Aligned by vertex id, never by position, when it is a pandas/cuDF object or a dict:
            a DataFrame (or pyarrow Table) with a ``vertex`` column (else a ``node`` column)
            is keyed by it (for a bipartite graph by ``side`` and ``vertex``); a pandas/cuDF
            DataFrame without one, or a Series, is keyed by its index (a (side, vertex)
            MultiIndex for a bipartite graph; a default RangeIndex is refused); a dict by its
            keys (``(side, id)`` for a bipartite graph). Every vertex needs exactly one row; ids not in the graph are refused. The
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
        if io.is_keyed(values):
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
        ...                                       "w": [0.5, -1.0]}), weight="w", directed=True)
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
            left = self.id_map.left_count
            sides = {self.side_names[0]: left, self.side_names[1]: self.n - left}
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

    def attributes(self, *, samples: int | None = None, seed: int = 0,
                   structure: bool = True, quick: bool = False) -> dict:
        """Attributes that describe the graph (n, m, density, kind, degree statistics, degree
        assortativity, a diameter estimate, wedges and sampled clustering, ...) as a dict of
        plain Python values, for choosing how to run on it (issue 38); every key is defined in
        :mod:`onyx_rapids.attributes`, which computes them on the device.

        Cached (:meth:`cached`): the first call per (``samples``, ``seed``) computes them,
        later calls return the same dict (do not modify it).  ``samples`` wedges (default
        :data:`onyx_rapids.attributes.DEFAULT_SAMPLES`) drawn with ``seed`` estimate the
        clustering, exactly when the graph has no more wedges than that.  ``structure=False``
        skips the costly keys (:data:`onyx_rapids.attributes.STRUCTURAL`: BFS sweeps and
        wedges on the simple undirected view), which are then None; a full dict already
        cached serves it too.  ``quick=True``: the degree part estimated from stratified
        samples of the vertices and edges (what a tuned call reads; cached apart).

        >>> import pandas as pd
        >>> g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0]}))
        >>> a = g.attributes()
        >>> a["kind"], a["edges"], a["diameter_estimate"], a["transitivity_estimate"]
        ('undirected', 3, 1, 1.0)
        >>> a is g.attributes()
        True
        """
        from . import attributes as graph_attributes

        if samples is None:
            samples = graph_attributes.DEFAULT_SAMPLES
        samples, seed = int(samples), int(seed)
        if quick:
            return self.cached(("attributes", "quick"),
                               lambda: graph_attributes.attributes(self, quick=True))
        full = ("attributes", samples, seed)
        if not structure:
            cached = self._cache.get(full)
            if cached is not None:
                return {**cached, **dict.fromkeys(graph_attributes.STRUCTURAL)}
            return self.cached(("attributes", "degrees"), lambda: graph_attributes.attributes(
                self, samples=samples, seed=seed, structure=False))
        return self.cached(full,
                           lambda: graph_attributes.attributes(self, samples=samples, seed=seed))

    def __repr__(self) -> str:
        weights = f", weights={self.weight_names}" if self.weight_names else ""
        sides = f", sides={self.side_names}" if self.side_names else ""
        return (
            f"Graph(n={self.n}, m={self.m}, directed={self.directed}, "
            f"multigraph={self.multigraph}{weights}{sides}, "
            f"index_dtype={self.index_dtype}, offset_dtype={self.offset_dtype}, "
            f"placement={self.placement}, backend={device.BACKEND})"
        )
