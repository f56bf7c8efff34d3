"""The "onyx" NetworkX backend: the object NetworkX's ``networkx.backends`` entry point loads.

NetworkX (3.2+) calls, on :class:`BackendInterface`:

* ``can_run(name, args, kwargs)``: True, or a string saying why the arguments ask for
  something the library cannot compute exactly (NetworkX then runs its own code, or reports
  the reason when ``backend="onyx"`` was given).  Refusals that depend on the graph's data
  (negative weights, self-loops where NetworkX's definition differs) are raised by the
  function itself as ``NotImplementedError``, which the dispatcher treats the same way.
* ``should_run(name, args, kwargs)``: whether converting is worth it when NetworkX picks the
  backend on its own (``nx.config.backend_priority``): False, with the reason, for NetworkX
  graphs of fewer than :func:`min_edges` edges (measured per kind of function), and for
  Dijkstra on sparse long-diameter graphs (:data:`DIJKSTRA_MIN_DENSITY`).  ``backend="onyx"`` skips it.
* ``convert_from_nx`` / ``convert_to_nx``; NetworkX caches the converted graph in
  ``G.__networkx_cache__`` (``nx.config.cache_converted_graphs``), keyed by the edge
  attributes the call needed.
* every function of :data:`_onyx_rapids_nx.FUNCTIONS`, as an attribute.
"""

from __future__ import annotations

import inspect

from _onyx_rapids_nx import FUNCTIONS

from . import algorithms
from .convert import OnyxGraph, from_networkx, to_networkx

#: Below this many edges a NetworkX graph stays on NetworkX unless the backend is asked for
#: by name (``backend="onyx"``): converting and launching kernels cost more than NetworkX's own
#: run on small graphs.  Measured end to end, conversion included (``python -m benchmarks run
#: networkx``, H200, 2026-11-27): pagerank and core_number win at 100k edges (2.3-5.9x on
#: R-MAT and grid graphs) and lose at 5-10k (0.4-0.8x) ...
SHOULD_RUN_MIN_EDGES = 50_000
#: ... while the traversals, shortest paths and components, whose NetworkX code is one cheap
#: pass, are 0.5-1.1x at 100k edges and win or tie at 1M (0.97-2.95x; Dijkstra on grids
#: excepted, docs/networkx.md).
TRAVERSAL_MIN_EDGES = 500_000
TRAVERSALS = frozenset({
    "bfs_edges", "bfs_tree", "bfs_layers", "single_source_shortest_path_length",
    "single_source_dijkstra_path_length", "dijkstra_path_length",
    "multi_source_dijkstra_path_length", "connected_components", "number_connected_components",
    "is_connected", "weakly_connected_components", "number_weakly_connected_components",
    "is_weakly_connected"})

#: Dijkstra on sparse, long-diameter graphs (grids, road networks: fewer than this many edges
#: per node) runs one GPU step per weight band and loses to NetworkX's heap even at 1M edges
#: (0.13-0.14x on grid:224 and grid:707, H200, 2026-11-27, docs/networkx.md), while it wins on
#: R-MAT (2.3x end to end at 1M edges): below this density the run stays on NetworkX.
DIJKSTRA_MIN_DENSITY = 4.0
DIJKSTRA = frozenset({"single_source_dijkstra_path_length", "dijkstra_path_length",
                      "multi_source_dijkstra_path_length"})


def min_edges(name: str) -> int:
    """The edge count from which :meth:`BackendInterface.should_run` converts for ``name``."""
    return TRAVERSAL_MIN_EDGES if name in TRAVERSALS else SHOULD_RUN_MIN_EDGES


def _refuse_pagerank(a):
    if a["nstart"] is not None:
        return "nstart is not supported (the library starts from the teleport vector)"
    if a["dangling"] is not None:
        return "dangling is not supported (dangling mass follows the teleport vector)"
    if not 0 < a["alpha"] < 1:
        return f"alpha={a['alpha']!r}: the library needs 0 < alpha < 1"
    p = a["personalization"]
    if p is not None and any(not v >= 0 for v in p.values()):
        return "personalization has negative or NaN values"
    return None


def _refuse_bfs(a):
    if a["sort_neighbors"] is not None:
        return "sort_neighbors is not supported"
    if a["reverse"] and a["G"].is_directed():
        return "reverse=True on a directed graph is not supported"
    return None


def _refuse_callable_weight(a):
    if callable(a["weight"]):
        return "a callable weight is not supported (give an edge attribute name)"
    return None


def _refuse_k_core(a):
    if a["core_number"] is not None:
        return "a given core_number leaves nothing to compute"
    return None


_REFUSALS = {
    "pagerank": _refuse_pagerank,
    "bfs_edges": _refuse_bfs,
    "bfs_tree": _refuse_bfs,
    "single_source_dijkstra_path_length": _refuse_callable_weight,
    "dijkstra_path_length": _refuse_callable_weight,
    "multi_source_dijkstra_path_length": _refuse_callable_weight,
    "k_core": _refuse_k_core,
}


class BackendInterface:
    """NetworkX's view of the "onyx" backend (see the module docstring).

    >>> import networkx as nx
    >>> G = nx.karate_club_graph()
    >>> pr = nx.pagerank(G, backend="onyx")                       # doctest: +SKIP
    >>> BackendInterface.can_run("pagerank", (G,), {"nstart": {0: 1}})
    'nstart is not supported (the library starts from the teleport vector)'
    """

    @staticmethod
    def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                        graph_name=None):
        """An :class:`OnyxGraph` of ``G`` carrying the numeric ``edge_attrs`` ({attr:
        default}).  Node attributes and ``preserve_*`` are not carried: the functions that
        need them (``k_core``) read them from ``G`` itself."""
        if isinstance(G, OnyxGraph):
            return G
        return from_networkx(G, weight=None, edge_attrs=edge_attrs)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """A NetworkX graph for an :class:`OnyxGraph`; any other result unchanged."""
        if isinstance(obj, OnyxGraph):
            return to_networkx(obj)
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or the reason the library cannot run ``name`` with these arguments."""
        func = getattr(algorithms, name, None)
        if name not in FUNCTIONS or func is None:
            return f"{name} is not implemented by the onyx backend"
        try:
            bound = inspect.signature(func).bind(*args, **kwargs)
        except TypeError as exc:  # NetworkX's own code raises the same TypeError
            return f"arguments do not match {name}'s signature: {exc}"
        bound.apply_defaults()
        refuse = _REFUSALS.get(name)
        try:
            reason = refuse(bound.arguments) if refuse is not None else None
        except (TypeError, ValueError, AttributeError) as exc:  # NetworkX reports bad input
            return f"cannot check the arguments of {name}: {exc}"
        return True if reason is None else reason

    @staticmethod
    def should_run(name, args, kwargs):
        """False (with the reason) for NetworkX graphs of fewer than :func:`min_edges`, and
        for Dijkstra on graphs of fewer than :data:`DIJKSTRA_MIN_DENSITY` edges per node."""
        G = args[0] if args else kwargs.get("G")
        if isinstance(G, OnyxGraph) or G is None:
            return True
        m, least = G.number_of_edges(), min_edges(name)
        if m < least:
            limit = "TRAVERSAL_MIN_EDGES" if name in TRAVERSALS else "SHOULD_RUN_MIN_EDGES"
            return (f"{m} edges: below {limit} ({least}) for {name}, where NetworkX's own "
                    "code is faster than converting")
        if name in DIJKSTRA and m < DIJKSTRA_MIN_DENSITY * G.number_of_nodes():
            return (f"{m} edges on {G.number_of_nodes()} nodes: fewer than "
                    f"DIJKSTRA_MIN_DENSITY ({DIJKSTRA_MIN_DENSITY:g}) per node, a long-diameter "
                    "graph where NetworkX's Dijkstra is faster")
        return True


for _name in FUNCTIONS:
    setattr(BackendInterface, _name, staticmethod(getattr(algorithms, _name)))
del _name
