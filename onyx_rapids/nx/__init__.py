"""onyx_rapids as a NetworkX backend named "onyx" (NetworkX 3.2+).

    >>> import networkx as nx
    >>> nx.pagerank(nx.karate_club_graph(), backend="onyx")      # doctest: +SKIP
    >>> nx.config.backend_priority = ["onyx"]                     # doctest: +SKIP

NetworkX finds the backend through the ``networkx.backends`` / ``networkx.backend_info`` entry
points that ``pip install onyx_rapids`` registers; :mod:`.interface` is what it loads,
:mod:`.convert` the graph type and conversions, :mod:`.algorithms` the functions,
:mod:`.order` NetworkX's breadth-first order.  ``docs/networkx.md`` lists the functions, what
each does not support, and how ``can_run`` / ``should_run`` decide.
"""

from .convert import OnyxGraph, from_networkx, to_networkx
from .interface import SHOULD_RUN_MIN_EDGES, TRAVERSAL_MIN_EDGES, BackendInterface

__all__ = ["BackendInterface", "OnyxGraph", "SHOULD_RUN_MIN_EDGES", "TRAVERSAL_MIN_EDGES",
           "from_networkx", "to_networkx"]
