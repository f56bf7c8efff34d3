"""The NetworkX functions the "onyx" backend implements, with NetworkX's signatures, defaults,
return types and exceptions, on an :class:`~onyx_rapids.nx.convert.OnyxGraph`.

Each maps onto the library's public algorithms (:func:`onyx_rapids.pagerank`,
:func:`onyx_rapids.bfs`, :func:`onyx_rapids.sssp`, :func:`onyx_rapids.weakly_connected_components`,
:func:`onyx_rapids.core_number`).  Where the inputs ask for something the library cannot give
exactly (a ``dangling`` vector, negative weights, ...) the function raises
``NotImplementedError`` with the reason: NetworkX's dispatcher then runs its own code (or, when
``backend="onyx"`` was given, reports the reason).  Argument-only refusals are also answered
earlier by ``can_run`` (:mod:`onyx_rapids.nx.interface`).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import device
from .convert import OnyxGraph, from_networkx
from .order import layers

#: The smallest ``tol`` pagerank runs with: the library's ranks are float32, whose resolution
#: (2**-23 relative) bounds how small an iteration's change can get; a smaller NetworkX ``tol``
#: would never be met (NetworkX, in float64, would stop), so it is raised to this.
PAGERANK_MIN_TOL = 2.0 ** -23

#: Sources per library sssp call of a multi-source Dijkstra (each is a distance column).
SSSP_SOURCES_PER_CALL = 32


def _nx():
    import networkx as nx
    return nx


def _as_onyx(G, weight=None) -> OnyxGraph:
    """``G`` itself, or a NetworkX graph converted (carrying ``weight``)."""
    if isinstance(G, OnyxGraph):
        return G
    return from_networkx(G, weight=weight if isinstance(weight, str) else None)


def _column(frame, name) -> np.ndarray:
    return device.to_host(frame[name].to_numpy() if hasattr(frame[name], "to_numpy")
                          else frame[name].values)


def _weights(og: OnyxGraph, weight) -> np.ndarray | None:
    """The host values of edge attribute ``weight`` (None: unweighted), refusing what the
    library cannot run (NotImplementedError: NetworkX runs its own code)."""
    if weight is None:
        return None
    if weight not in og.weights:
        raise NotImplementedError(
            f"the OnyxGraph carries no numeric edge attribute {weight!r} (it carries "
            f"{sorted(og.weights)}); convert with onyx_rapids.nx.from_networkx(G, "
            f"weight={weight!r})")
    w = og.weights[weight]
    bad = og._cached(("bad weights", weight), lambda: int(np.count_nonzero(
        ~np.isfinite(w) | (w < 0))) if w.dtype.kind == "f" else int(np.count_nonzero(w < 0)))
    if bad:
        raise NotImplementedError(f"{bad} edges have a negative, NaN or infinite {weight!r}; "
                                  "the library needs finite non-negative weights")
    return w


def _by_node(og: OnyxGraph, values) -> dict:
    return dict(zip(og.nodes, values.tolist()))


# ---------------------------------------------------------------------------- pagerank

def _teleport(og: OnyxGraph, personalization) -> dict | None:
    """NetworkX's ``personalization`` ({node: value}; nodes not in the graph ignored, as
    NetworkX ignores them) as the library's dict keyed by vertex, the nodes of value 0 left
    out: one node (the usual call) is then a one-key dict, which the library runs as
    personalized PageRank from that vertex (no n-vector)."""
    if personalization is None:
        return None
    t = {}
    for label, value in personalization.items():
        i = og.index.get(label)
        if i is not None and value != 0:
            t[i] = float(value)
    values = np.fromiter(t.values(), dtype=np.float64, count=len(t))
    if (values < 0).any() or not np.isfinite(values).all():
        raise NotImplementedError("personalization has negative or non-finite values")
    if values.sum() == 0:
        raise ZeroDivisionError("personalization values sum to 0")
    return t


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-06, nstart=None,
             weight="weight", dangling=None):
    """NetworkX's ``pagerank`` on the GPU: a dict of node -> rank (float).

    The stop test is NetworkX's (L1 change of an iteration < ``N * tol``), so the library runs
    with ``tol=N * max(tol, PAGERANK_MIN_TOL)`` (float32's resolution); not converged within
    ``max_iter`` raises ``PowerIterationFailedConvergence``.  Dangling mass follows the personalization (NetworkX's
    default); a ``dangling`` dict or an ``nstart`` raises NotImplementedError.

    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> pr = pagerank(from_networkx(nx.path_graph(3)))
    >>> sorted(pr), round(sum(pr.values()), 4)
    ([0, 1, 2], 1.0)
    """
    from .. import pagerank as onyx_pagerank
    nx = _nx()
    og = _as_onyx(G, weight)
    n = len(og)
    if n == 0:
        return {}
    if nstart is not None or dangling is not None:
        raise NotImplementedError("nstart and dangling are not supported (the library starts "
                                  "from, and sends dangling mass to, the teleport vector)")
    if not 0 < alpha < 1:
        raise NotImplementedError(f"alpha={alpha!r}: the library needs 0 < alpha < 1")
    if max_iter < 1 or not tol > 0:
        raise nx.PowerIterationFailedConvergence(max_iter)
    w = _weights(og, weight)
    teleport = _teleport(og, personalization)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # not converged: raised below
        frame, info = onyx_pagerank(og.graph, alpha, n * max(tol, PAGERANK_MIN_TOL),
                                    int(max_iter),
                                    weight=False if w is None else og.weight_column(weight),
                                    personalization=teleport, return_info=True)
    if not info.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return _by_node(og, _column(frame, "pagerank").astype(np.float64))


# ---------------------------------------------------------------------------- traversal

def _missing(og: OnyxGraph, node) -> Exception:
    """NetworkX's error for a source that is not in the graph (``G.neighbors``' wording)."""
    kind = "digraph" if og.directed else "graph"
    return _nx().NetworkXError(f"The node {node} is not in the {kind}.")


def _check_bfs_options(og: OnyxGraph, reverse, sort_neighbors):
    if sort_neighbors is not None:
        raise NotImplementedError("sort_neighbors is not supported")
    if reverse and og.directed:
        raise NotImplementedError("reverse=True on a directed graph is not supported")


def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    """NetworkX's ``bfs_edges``: a generator of (parent, child) in NetworkX's order.

    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> list(bfs_edges(from_networkx(nx.path_graph(4)), 2))
    [(2, 1), (2, 3), (1, 0)]
    """
    og = _as_onyx(G)
    _check_bfs_options(og, reverse, sort_neighbors)
    if source not in og:
        raise _missing(og, source)
    limit = len(og) if depth_limit is None else depth_limit
    nodes = og.nodes
    for layer, parent, _ in layers(og.offsets, og.indices, [og.index[source]],
                                   depth_limit=max(limit, 0)):
        if parent[0] >= 0:
            yield from ((nodes[p], nodes[c]) for p, c in zip(parent.tolist(), layer.tolist()))


def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    """NetworkX's ``bfs_tree``: a ``networkx.DiGraph`` of the breadth-first tree."""
    T = _nx().DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, reverse=reverse, depth_limit=depth_limit,
                               sort_neighbors=sort_neighbors))
    return T


def bfs_layers(G, sources):
    """NetworkX's ``bfs_layers``: a generator of lists of nodes, one per layer.

    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> list(bfs_layers(from_networkx(nx.path_graph(4)), [0, 3]))
    [[0, 3], [1, 2]]
    """
    og = _as_onyx(G)
    if sources in og:
        sources = [sources]
    first = list(set(sources))  # NetworkX's layer 0 is ``list(visited)``, in set order
    for node in first:
        if node not in og:
            raise _nx().NetworkXError(f"The node {node} is not in the graph.")
    nodes = og.nodes
    for layer, _, _ in layers(og.offsets, og.indices, [og.index[v] for v in first]):
        yield [nodes[i] for i in layer.tolist()]


def _ordered(og: OnyxGraph, keep: np.ndarray, dist: np.ndarray) -> dict:
    """{node: distance} of the kept vertices, by distance, ties in graph order."""
    kept = np.flatnonzero(keep)
    kept = kept[np.argsort(dist[kept], kind="stable")]
    nodes = og.nodes
    return dict(zip((nodes[i] for i in kept.tolist()), dist[kept].tolist()))


def single_source_shortest_path_length(G, source, cutoff=None):
    """NetworkX's ``single_source_shortest_path_length``: {node: hops} from the GPU bfs.

    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> single_source_shortest_path_length(from_networkx(nx.path_graph(4)), 1, cutoff=1)
    {1: 0, 0: 1, 2: 1}
    """
    from .. import bfs
    og = _as_onyx(G)
    if source not in og:
        raise _nx().NodeNotFound(f"Source {source} is not in G")
    frame = bfs(og.graph, source=og.index[source])
    dist = _column(frame, "distance").astype(np.int64)
    keep = dist < np.iinfo(np.int32).max
    if cutoff is not None:  # NetworkX expands level L + 1 while cutoff > L
        keep &= (dist == 0) | (cutoff > dist - 1)
    return _ordered(og, keep, dist)


# ---------------------------------------------------------------------------- dijkstra

def _float32_distances(og: OnyxGraph, starts: list, column) -> np.ndarray:
    """Distances from the nearest of ``starts`` (float32, inf where unreachable): the
    library's sssp on weight ``column``, or its bfs when ``column`` is None (unit weights)."""
    from .. import bfs, sssp
    best = np.full(len(og), np.inf, dtype=np.float32)
    for at in range(0, len(starts), SSSP_SOURCES_PER_CALL):
        chunk = starts[at:at + SSSP_SOURCES_PER_CALL]
        # one start takes the single-source engine (delta-stepping / frontier, fused), much
        # faster on long-diameter graphs than a one-column multi-source run
        given = dict(source=chunk[0]) if len(chunk) == 1 else dict(sources=chunk)
        if column is None:
            frame = bfs(og.graph, **given)
        else:
            frame = sssp(og.graph, weight=column, **given)
        for f in range(len(chunk)):
            d = _column(frame, "distance" if len(chunk) == 1 else f"distance_{f}")
            if column is None:
                d = np.where(d == np.iinfo(np.int32).max, np.inf, d).astype(np.float32)
            np.minimum(best, d, out=best)
    return best


def _tight_parents(og: OnyxGraph, starts: list, w32: np.ndarray, d32: np.ndarray):
    """``(parent, edge)`` of every vertex in a tree of edges tight in the float32 result (-1:
    none; the starts are roots): an in-edge from a strictly nearer vertex where there is one
    (such parents form no cycle), else one from an equally near vertex."""
    src, dst = og.edge_sources(), og.indices
    d_src = d32[src]
    tight = np.isfinite(d_src) & (d_src + w32 == d32[dst])
    parent = np.full(len(og), -1, dtype=np.int64)
    edge = np.full(len(og), -1, dtype=np.int64)
    for chosen in (tight & (d_src == d32[dst]), tight & (d_src < d32[dst])):  # strict last
        pos = np.flatnonzero(chosen)
        parent[dst[pos]], edge[dst[pos]] = src[pos], pos
    parent[starts], edge[starts] = -1, -1
    return parent, edge


def _depths(parent: np.ndarray, starts: list):
    """Hops from each vertex up its parent chain to a start (pointer doubling: log n rounds
    of array work), -1 where the chain ends elsewhere or loops."""
    n = parent.shape[0]
    up, depth = parent.copy(), (parent >= 0).astype(np.int64)  # hops from v to up[v]
    top = np.where(parent >= 0, -1, np.arange(n))  # the root, once up[v] is -1
    for _ in range(max(n, 2).bit_length() + 1):
        climbing = np.flatnonzero(up >= 0)
        if climbing.size == 0:
            break
        above = up[climbing]
        depth[climbing] += depth[above]
        top[climbing] = top[above]
        up[climbing] = up[above]
    rooted = np.zeros(n, dtype=bool)
    rooted[starts] = True
    return np.where((up < 0) & (top >= 0) & rooted[np.maximum(top, 0)], depth, -1)


def _exact(og: OnyxGraph, starts: list, w: np.ndarray, d32: np.ndarray):
    """NetworkX's distances, exact in ``w``'s type: sums along a tree of the edges tight in
    the library's float32 result, parents before children (NetworkX's order of addition),
    one vectorized step per depth; then relaxed over every edge until nothing improves
    (float32 near-ties).  Returns (distance, reached)."""
    src, dst = og.edge_sources(), og.indices
    parent, edge = _tight_parents(og, starts, w.astype(np.float32), d32)
    depth = _depths(parent, starts)
    dist = np.zeros(len(og), dtype=w.dtype)
    reached = depth >= 0
    order = np.flatnonzero(depth > 0)
    order = order[np.argsort(depth[order], kind="stable")]
    bounds = np.flatnonzero(np.diff(depth[order])) + 1
    for level in np.split(order, bounds) if order.size else ():
        dist[level] = dist[parent[level]] + w[edge[level]]
    top = np.inf if w.dtype.kind == "f" else np.iinfo(w.dtype).max
    while True:
        cand = dist[src] + w
        better = reached[src] & (~reached[dst] | (cand < dist[dst]))
        if not better.any():
            return dist, reached
        dist = np.where(reached, dist, top)
        np.minimum.at(dist, dst[better], cand[better])
        reached[dst[better]] = True


def _dijkstra(og: OnyxGraph, sources: list, cutoff, weight) -> dict:
    w = _weights(og, weight)
    if w is None:
        w = np.ones(og.indices.shape[0], dtype=np.int64)
    starts = list(dict.fromkeys(og.index[s] for s in sources))
    d32 = _float32_distances(og, starts, og.weight_column(weight) if weight in og.weights
                             else None)
    dist, reached = _exact(og, starts, w, d32)
    if cutoff is not None:
        reached &= dist <= cutoff
    result = _ordered(og, reached, dist)
    for s in starts:  # NetworkX's sources hold the int 0
        result[og.nodes[s]] = 0
    return result


def _check_sources(og: OnyxGraph, sources):
    for s in sources:
        if s not in og:
            raise _nx().NodeNotFound(f"Node {s} not found in graph")


def multi_source_dijkstra_path_length(G, sources, cutoff=None, weight="weight"):
    """NetworkX's ``multi_source_dijkstra_path_length``: {node: distance to the nearest
    source}, values exact in the weights' type (ints stay ints).

    >>> import networkx as nx
    >>> from onyx_rapids.nx import from_networkx
    >>> G = nx.Graph([(0, 1, {"weight": 2}), (1, 2, {"weight": 3})])
    >>> multi_source_dijkstra_path_length(from_networkx(G), {0, 2})
    {0: 0, 2: 0, 1: 2}
    """
    og = _as_onyx(G, weight)
    if not sources:
        raise ValueError("sources must not be empty")
    sources = list(sources)
    _check_sources(og, sources)
    return _dijkstra(og, sources, cutoff, weight)


def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight"):
    """NetworkX's ``single_source_dijkstra_path_length`` (see
    :func:`multi_source_dijkstra_path_length`)."""
    return multi_source_dijkstra_path_length(G, {source}, cutoff=cutoff, weight=weight)


def dijkstra_path_length(G, source, target, weight="weight"):
    """NetworkX's ``dijkstra_path_length``: the distance from ``source`` to ``target``;
    ``NodeNotFound`` for a missing source, ``NetworkXNoPath`` when it is not reachable."""
    nx = _nx()
    og = _as_onyx(G, weight)
    if source not in og:
        raise nx.NodeNotFound(f"Node {source} not found in graph")
    if source == target:
        return 0
    length = _dijkstra(og, [source], None, weight)
    try:
        return length[target]
    except (KeyError, TypeError) as err:
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}") from err


# ---------------------------------------------------------------------------- components

def _component_labels(og: OnyxGraph) -> np.ndarray:
    """Per vertex, the smallest vertex of its component (the library's labels)."""
    def build():
        from .. import weakly_connected_components
        if len(og) == 0:
            return np.zeros(0, dtype=np.int64)
        return _column(weakly_connected_components(og.graph), "labels").astype(np.int64)
    return og._cached("components", build)


def _components(og: OnyxGraph):
    labels = _component_labels(og)
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    nodes = og.nodes
    for part in np.split(order, cuts) if order.size else ():
        yield {nodes[i] for i in part.tolist()}


def _require(og: OnyxGraph, directed: bool):
    if og.directed != directed:
        raise _nx().NetworkXNotImplemented(
            f"not implemented for {'undirected' if directed else 'directed'} type")


def connected_components(G):
    """NetworkX's ``connected_components`` (undirected): a generator of node sets, in the
    order of their first node in the graph."""
    og = _as_onyx(G)
    _require(og, directed=False)
    yield from _components(og)


def weakly_connected_components(G):
    """NetworkX's ``weakly_connected_components`` (directed): a generator of node sets."""
    og = _as_onyx(G)
    _require(og, directed=True)
    yield from _components(og)


def _count(og: OnyxGraph) -> int:
    return int(np.unique(_component_labels(og)).size)


def number_connected_components(G):
    og = _as_onyx(G)
    _require(og, directed=False)
    return _count(og)


def number_weakly_connected_components(G):
    og = _as_onyx(G)
    _require(og, directed=True)
    return _count(og)


def _connected(og: OnyxGraph) -> bool:
    if len(og) == 0:
        raise _nx().NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    return _count(og) == 1


def is_connected(G):
    og = _as_onyx(G)
    _require(og, directed=False)
    return _connected(og)


def is_weakly_connected(G):
    og = _as_onyx(G)
    _require(og, directed=True)
    return _connected(og)


# ---------------------------------------------------------------------------- cores

def _core_numbers(og: OnyxGraph) -> np.ndarray:
    nx = _nx()
    if og.multigraph:
        raise nx.NetworkXNotImplemented("not implemented for multigraph type")
    if og.self_loops():
        raise nx.NetworkXNotImplemented(
            "Input graph has self loops which is not permitted; "
            "Consider using G.remove_edges_from(nx.selfloop_edges(G)).")
    if og.directed and og.has_reciprocal_edges():
        raise NotImplementedError("a directed graph with opposite edges u->v, v->u: NetworkX "
                                  "counts both in the degree, the library one")

    def build():
        from .. import core_number as onyx_core_number
        if len(og) == 0:
            return np.zeros(0, dtype=np.int64)
        return _column(onyx_core_number(og.graph), "core_number").astype(np.int64)
    return og._cached("cores", build)


def core_number(G):
    """NetworkX's ``core_number``: {node: core number} (ints)."""
    return _by_node(og := _as_onyx(G), _core_numbers(og))


def k_core(G, k=None, core_number=None):
    """NetworkX's ``k_core``: the subgraph of the NetworkX graph induced by the nodes of core
    number >= ``k`` (default: the largest), attributes included, as NetworkX returns it."""
    if core_number is not None:
        raise NotImplementedError("a given core_number leaves nothing to compute")
    og = _as_onyx(G)
    cores = _core_numbers(og)
    if k is None:
        k = max(cores.tolist())  # an empty graph raises ValueError, as NetworkX's max()
    source = og.source if og.source is not None else og.to_networkx()
    members = [og.nodes[i] for i in np.flatnonzero(cores >= k).tolist()]
    return source.subgraph(members).copy()
