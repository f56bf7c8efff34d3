"""NetworkX's ``networkx.backend_info`` entry point for the "onyx" backend, kept apart from
:mod:`onyx_rapids` so that ``import networkx`` reads this metadata without importing the GPU
library (as nx-cugraph's ``_nx_cugraph`` and graphblas-algorithms' ``_nx_graphblas`` do).

:data:`FUNCTIONS` is the one list of what the backend implements: :mod:`onyx_rapids.nx.interface`
exposes exactly these names, and NetworkX adds each entry's text to the function's docstring
under "Backends".
"""

_EXACT = "Runs on the GPU through onyx_rapids; returns what NetworkX returns."
_ORDER = ("The traversal runs on the GPU; NetworkX's visiting order is rebuilt on the host "
          "from its levels (one vectorized pass over each level's edges).")
_DIJKSTRA = ("Distances run on the GPU (float32 delta-stepping), then are made exact on the "
             "host in the weights' own type along the tight-edge tree, so they equal NetworkX's. "
             "The dict is ordered by distance, ties in graph order. A callable `weight` or "
             "negative weights run NetworkX's own code.")
_COMPONENTS = "Components by the GPU union-find; yielded as NetworkX yields them."

#: name -> NetworkX's per-function backend docs ("additional_docs") and what is not supported.
FUNCTIONS = {
    "pagerank": {
        "additional_docs": (
            "Power iteration on the GPU in float32 with NetworkX's stop test (L1 change "
            "< N * tol) and its dangling rule. `nstart`, `dangling`, negative personalization "
            "values or weights, and alpha outside (0, 1) run NetworkX's own code."),
        "unsupported": ("nstart", "dangling"),
    },
    "bfs_edges": {"additional_docs": _ORDER + " `sort_neighbors` and `reverse=True` on a "
                  "directed graph run NetworkX's own code.",
                  "unsupported": ("sort_neighbors", "reverse (directed graphs)")},
    "bfs_tree": {"additional_docs": _ORDER + " `sort_neighbors` and `reverse=True` on a "
                 "directed graph run NetworkX's own code.",
                 "unsupported": ("sort_neighbors", "reverse (directed graphs)")},
    "bfs_layers": {"additional_docs": _ORDER, "unsupported": ()},
    "single_source_shortest_path_length": {
        "additional_docs": "Levels from the GPU bfs; the dict is ordered by distance, ties in "
                           "graph order.",
        "unsupported": ()},
    "single_source_dijkstra_path_length": {"additional_docs": _DIJKSTRA,
                                           "unsupported": ("weight as a callable",)},
    "dijkstra_path_length": {"additional_docs": _DIJKSTRA,
                             "unsupported": ("weight as a callable",)},
    "multi_source_dijkstra_path_length": {"additional_docs": _DIJKSTRA,
                                          "unsupported": ("weight as a callable",)},
    "connected_components": {"additional_docs": _COMPONENTS, "unsupported": ()},
    "weakly_connected_components": {"additional_docs": _COMPONENTS, "unsupported": ()},
    "number_connected_components": {"additional_docs": _COMPONENTS, "unsupported": ()},
    "number_weakly_connected_components": {"additional_docs": _COMPONENTS, "unsupported": ()},
    "is_connected": {"additional_docs": _COMPONENTS, "unsupported": ()},
    "is_weakly_connected": {"additional_docs": _COMPONENTS, "unsupported": ()},
    "core_number": {
        "additional_docs": ("Peeling on the GPU. A directed graph with a pair of opposite edges "
                            "(NetworkX counts both) runs NetworkX's own code."),
        "unsupported": ("directed graphs with reciprocal edges",)},
    "k_core": {
        "additional_docs": ("Core numbers on the GPU; returns the induced subgraph of the "
                            "NetworkX graph, attributes included. A given `core_number` "
                            "runs NetworkX's own code (there is nothing left to compute)."),
        "unsupported": ("core_number", "directed graphs with reciprocal edges")},
}


def get_info():
    """The dict NetworkX's ``networkx.backend_info`` entry point returns for "onyx"."""
    return {
        "backend_name": "onyx",
        "project": "onyx_rapids",
        "package": "onyx_rapids",
        "url": None,  # no public repository yet; docs/networkx.md in the source tree
        "short_summary": "GPU graph algorithms (Numba CUDA, RAPIDS) behind NetworkX's API.",
        "default_config": {},
        "functions": {
            name: {"additional_docs": entry["additional_docs"]
                   + ("" if not entry["unsupported"] else
                      "\nNot supported (NetworkX's own code runs): "
                      + ", ".join(entry["unsupported"]) + "."),
                   "additional_parameters": {}}
            for name, entry in FUNCTIONS.items()
        },
    }
