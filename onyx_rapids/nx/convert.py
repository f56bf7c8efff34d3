"""NetworkX graphs to and from the backend's graph type, :class:`OnyxGraph`.

A NetworkX graph is read straight from its adjacency dicts into CSR arrays (one
``numpy.fromiter`` over the neighbours, one over the edge weights; no per-edge Python object
is kept) in NetworkX's own order: row i is the i-th node of ``list(G)``, its entries in
``G._adj[node]`` (``G._succ`` for a directed graph) order.  Those host arrays stay in the
:class:`OnyxGraph` (the traversals rebuild NetworkX's visiting order from them) and build the
:class:`onyx_rapids.Graph` the algorithms run on, with ``directed=`` taken from
``G.is_directed()`` and, for a multigraph, every parallel edge kept (so PageRank sums parallel
weights and shortest paths take the smallest, as NetworkX does).
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter, methodcaller

import numpy as np

__all__ = ["OnyxGraph", "from_networkx", "to_networkx"]


class OnyxGraph:
    """The "onyx" backend's graph: an :class:`onyx_rapids.Graph` and the node labels.

    ``nodes[i]`` is the label (any hashable) of vertex i, ``index[label]`` its vertex;
    ``offsets`` / ``indices`` are the CSR in NetworkX's adjacency order (host int64 arrays);
    ``weights[attr]`` the values of an edge attribute in that order (int64 when every value
    is an int, else float64), for the attributes converted.  ``graph`` is the device graph,
    whose weight columns hold those attributes (float32; :meth:`weight_column` names them).
    ``source`` is the NetworkX graph it was converted from (``k_core`` returns its subgraph,
    attributes included): like NetworkX's conversion cache, an OnyxGraph is a snapshot, valid
    while that graph is not modified.

    Examples
    --------
    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> G = nx.Graph([("a", "b", {"weight": 2.0}), ("b", "c", {"weight": 1.5})])
    >>> og = from_networkx(G)
    >>> og.nodes, og.graph.n, og.graph.m, og.is_directed()
    (['a', 'b', 'c'], 3, 4, False)
    """

    __networkx_backend__ = "onyx"

    def __init__(self, *, nodes, offsets, indices, weights, directed, multigraph, source=None,
                 graph_attrs=None, index=None):
        self.nodes = nodes
        self.index = index if index is not None else {label: i for i, label in enumerate(nodes)}
        self.offsets = offsets
        self.indices = indices
        self.weights = weights
        self.directed = bool(directed)
        self.multigraph = bool(multigraph)
        self.source = source
        self.graph_attrs = dict(graph_attrs or {})
        self.__networkx_cache__ = {}
        self._graph = None
        self._derived = {}

    # --------------------------------------------------------- what NetworkX asks of a graph
    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # unhashable, as NetworkX's ``node in G``
            return False

    def __iter__(self):
        return iter(self.nodes)

    def number_of_nodes(self) -> int:
        return len(self.nodes)

    def number_of_edges(self) -> int:
        """NetworkX's count: an undirected edge once, a self-loop once."""
        m = int(self.indices.shape[0])
        if self.directed:
            return m
        loops = self.self_loops()
        return (m - loops) // 2 + loops

    def __repr__(self) -> str:
        kind = ("Multi" if self.multigraph else "") + ("DiGraph" if self.directed else "Graph")
        return (f"OnyxGraph({kind}, {len(self.nodes)} nodes, {self.number_of_edges()} edges, "
                f"weights={sorted(self.weights)})")

    # ------------------------------------------------------------------ derived data
    @property
    def graph(self):
        """The :class:`onyx_rapids.Graph` (built on first use, then kept)."""
        if self._graph is None:
            from .. import Graph
            weights = {self.weight_column(name): w.astype(np.float32)
                       for name, w in self.weights.items()}
            self._graph = Graph.from_csr(self.offsets, self.indices, weights or None,
                                         directed=self.directed, multigraph=self.multigraph)
        return self._graph

    def weight_column(self, attr) -> str:
        """The device graph's column of edge attribute ``attr`` (attribute names may be any
        hashable; the library's columns are strings): ``"w0"``, ``"w1"``, ... in order."""
        return f"w{list(self.weights).index(attr)}"

    def edge_sources(self) -> np.ndarray:
        """The row of every CSR entry (host int64)."""
        return self._cached("sources", lambda: np.repeat(
            np.arange(len(self.nodes), dtype=np.int64), np.diff(self.offsets)))

    def self_loops(self) -> int:
        return self._cached("loops", lambda: int(np.count_nonzero(
            self.edge_sources() == self.indices)))

    def has_reciprocal_edges(self) -> bool:
        """Whether some u -> v (u != v) of a directed graph also has v -> u."""
        def build():
            src, dst = self.edge_sources(), self.indices
            keep = src != dst
            n = max(len(self.nodes), 1)
            keys = src[keep] * n + dst[keep]
            return bool(np.isin(dst[keep] * n + src[keep], keys).any())
        return self._cached("reciprocal", build)

    def _cached(self, key, build):
        if key not in self._derived:
            self._derived[key] = build()
        return self._derived[key]

    def to_networkx(self):
        """A new NetworkX graph of the same kind, nodes, edges and converted weights."""
        return to_networkx(self)


def _edge_attributes(edge_attrs, weight):
    """{attribute: default} of the edge attributes to convert."""
    attrs = dict(edge_attrs or {})
    if weight is not None and weight not in attrs:
        attrs[weight] = 1
    return attrs


def _edge_dicts(G):
    """The attribute dict of every stored edge, in adjacency order (C-level iteration)."""
    per_neighbour = chain.from_iterable(map(dict.values, G._adj.values()))
    if G.is_multigraph():  # one dict per key of each neighbour
        return chain.from_iterable(map(dict.values, per_neighbour))
    return per_neighbour


def _weight_values(G, attr, default, m):
    """The attribute of every edge in adjacency order: int64 when all are ints, else float64;
    None when some value is not a real number (those calls run NetworkX's own code)."""
    if not m:
        return np.zeros(0, dtype=np.int64)
    first = next(iter(_edge_dicts(G))).get(attr, default)
    if type(first) is float:  # the common case, read at C speed: every edge has a float
        try:
            return np.fromiter(map(itemgetter(attr), _edge_dicts(G)), np.float64, m)
        except (KeyError, TypeError, ValueError):  # missing or odd values: the general path
            pass
    values = np.array(list(map(methodcaller("get", attr, default), _edge_dicts(G))))
    if values.dtype.kind in "bi":
        return values.astype(np.int64)
    if values.dtype.kind in "uf":
        return values.astype(np.float64)
    return None


def _integer_labels(nodes):
    """The node labels as an int64 array when every one is a Python int (not bool), else None."""
    if not all(type(label) is int for label in nodes):
        return None
    try:
        return np.fromiter(nodes, np.int64, len(nodes))
    except OverflowError:
        return None


def _positions(labels, raw):
    """The index in ``labels`` (distinct int64) of each of ``raw``, vectorized."""
    n = len(labels)
    if n and labels.min() >= 0 and labels.max() < 4 * n + 1024:  # a lookup table
        table = np.empty(int(labels.max()) + 1, dtype=np.int64)
        table[labels] = np.arange(n)
        return table[raw]
    order = np.argsort(labels, kind="stable")
    return order[np.searchsorted(labels, raw, sorter=order)]


def _targets(G, nodes, index, m):
    """The destination vertex (int64) of every stored edge, in adjacency order."""
    adj = G._adj
    if G.is_multigraph():  # a neighbour once per parallel edge
        labels = (v for nbrs in adj.values() for v, keyed in nbrs.items()
                  for _ in range(len(keyed)))
    else:
        labels = chain.from_iterable(adj.values())
    ints = _integer_labels(nodes)
    if ints is None:
        return np.fromiter(map(index.__getitem__, labels), np.int64, m)
    raw = np.fromiter(labels, np.int64, m)
    if np.array_equal(ints, np.arange(len(nodes))):  # labels 0..n-1 in order: their own indices
        return raw
    return _positions(ints, raw)


def from_networkx(G, weight="weight", *, edge_attrs=None, keep_source=True) -> OnyxGraph:
    """Convert a NetworkX graph to an :class:`OnyxGraph` ("onyx" backend graph).

    Parameters
    ----------
    G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
        Node labels of any hashable type; the vertex order is ``list(G)``.
    weight : str or None, default "weight"
        The edge attribute to carry as a weight (edges without it weigh 1, as NetworkX
        reads them); None converts no weights.
    edge_attrs : dict, optional
        More ``{attribute: default}`` edge attributes to carry (NetworkX's dispatcher passes
        the ones a call needs).
    keep_source : bool, default True
        Keep a reference to ``G`` (``k_core`` returns its subgraph with attributes).

    Attributes whose values are not all real numbers are not carried: a call that needs
    them runs NetworkX's own code.

    Examples
    --------
    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> og = from_networkx(nx.path_graph(4))
    >>> og.offsets.tolist(), og.indices.tolist()
    ([0, 1, 3, 5, 6], [1, 0, 2, 1, 3, 2])
    """
    import networkx as nx
    if not isinstance(G, nx.Graph):
        raise TypeError(f"from_networkx(G): G must be a NetworkX graph, got "
                        f"{type(G).__name__}; fix: pass a networkx.Graph / DiGraph / "
                        "MultiGraph / MultiDiGraph")
    nodes = list(G)
    index = {label: i for i, label in enumerate(nodes)}
    n = len(nodes)
    if G.is_multigraph():
        degree = np.fromiter((sum(map(len, nbrs.values())) for nbrs in G._adj.values()),
                             np.int64, n)
    else:
        degree = np.fromiter(map(len, G._adj.values()), np.int64, n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=offsets[1:])
    m = int(offsets[-1])
    indices = _targets(G, nodes, index, m)
    weights = {}
    for attr, default in _edge_attributes(edge_attrs, weight).items():
        values = _weight_values(G, attr, default, m)
        if values is not None:
            weights[attr] = values
    return OnyxGraph(nodes=nodes, offsets=offsets, indices=indices, weights=weights,
                     directed=G.is_directed(), multigraph=G.is_multigraph(),
                     source=G if keep_source else None, graph_attrs=G.graph, index=index)


def to_networkx(og: OnyxGraph):
    """A NetworkX graph of ``og``'s kind with its nodes, edges and carried weights."""
    import networkx as nx
    cls = {(False, False): nx.Graph, (True, False): nx.DiGraph,
           (False, True): nx.MultiGraph, (True, True): nx.MultiDiGraph}
    G = cls[(og.directed, og.multigraph)]()
    G.graph.update(og.graph_attrs)
    G.add_nodes_from(og.nodes)
    src, dst = og.edge_sources().tolist(), og.indices.tolist()
    names = list(og.weights)
    columns = [og.weights[a].tolist() for a in names]
    labels = og.nodes
    # an undirected edge is stored both ways (a self-loop once): add the copy with u <= v
    rows = range(len(src)) if og.directed else np.flatnonzero(
        og.edge_sources() <= og.indices).tolist()
    G.add_edges_from((labels[src[i]], labels[dst[i]], {a: c[i] for a, c in zip(names, columns)})
                     for i in rows)
    return G

