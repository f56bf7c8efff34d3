"""onyx_rapids: feature-aware graph processing on the GPU, as a plugin layer on RAPIDS.

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_parquet("edges.parquet", "src", "dst")        # doctest: +SKIP
    >>> onyx.pagerank(g, change_driven=True)                             # doctest: +SKIP

Every algorithm is declared in :data:`ALGORITHMS` (:mod:`onyx_rapids.registry`) and takes its
execution options as one :class:`Execution` (or as keywords); ``docs/`` holds the contract.

The backend (a CUDA GPU through CuPy + numba.cuda, or the Numba CUDA simulator on the CPU) is
chosen at import; see :mod:`onyx_rapids.device`.
"""

from . import device  # first: it decides NUMBA_ENABLE_CUDASIM before numba.cuda is imported
from . import memory
from . import datasets, frontier, operators, properties, registry
from .acc import AccOptions, AccResult, acc
from .algorithms.als import als
from .algorithms.belief_propagation import belief_propagation
from .algorithms.betweenness_centrality import betweenness_centrality, edge_betweenness_centrality
from .algorithms.bfs import bfs
from .algorithms.connected_components import weakly_connected_components
from .algorithms.core_number import core_number, k_core
from .algorithms.feature_propagation import feature_propagation
from .algorithms.label_propagation import label_propagation
from .algorithms.minimum_spanning_tree import minimum_spanning_tree
from .algorithms.multi_manifold_ranking import multi_manifold_ranking
from .algorithms.multimodal_learning import multimodal_learning
from .algorithms.pagerank import pagerank, personalized_pagerank
from .algorithms.sssp import sssp
from .algorithms.strongly_connected_components import strongly_connected_components
from .algorithms._common import RunInfo
from .approximation import Approximation
from .execution import Execution
from .graph import Graph
from .operators import (Edge, Gather, MapOptions, Normalize, Solve, Vertex, edgemap, foldmap,
                        vertexmap)
from . import tuning  # after the algorithms: its space reads their registry entries

__version__ = "0.2.0"

#: Every public algorithm's declaration (function, inputs, columns, execution options), by name.
ALGORITHMS = registry.ALGORITHMS

__all__ = [
    "ALGORITHMS", "AccOptions", "Approximation", "AccResult", "Edge", "Execution", "Gather", "MapOptions", "RunInfo", "memory", "registry", "acc", "als", "belief_propagation", "betweenness_centrality", "bfs", "core_number", "Graph", "k_core", "Normalize", "Solve", "Vertex", "datasets", "device", "edge_betweenness_centrality", "edgemap",
    "feature_propagation", "foldmap", "frontier", "label_propagation", "minimum_spanning_tree", "multi_manifold_ranking", "multimodal_learning", "operators",
    "pagerank",
    "personalized_pagerank", "properties", "sssp", "strongly_connected_components", "tuning", "vertexmap", "weakly_connected_components",
]
