"""RAPIDS cuGraph as a peer: a ``cugraph.Graph`` of the same edges as ours (built once per
kind, its build time recorded), the calls, and their results in our vertex order.

Kinds (directed, weighted, transposed): bfs directed; sssp directed and weighted; the PageRanks
directed and transposed; wcc, core_number and k_core undirected (each distinct pair once, no
self-loops).  On an undirected graph of ours every kind is undirected (each pair once).
"""

from __future__ import annotations

import warnings

import numpy as np

from onyx_rapids import device

from ..common import by_vertex, column, host, timed
from ..graphs import unique

#: algorithm -> (undirected view?, weighted?, transposed?)
KINDS = {"bfs": (False, False, False), "sssp": (False, True, False),
         "weakly_connected_components": (True, False, False), "core_number": (True, False, False),
         "k_core": (True, False, False), "pagerank": (False, False, True),
         "personalized_pagerank": (False, False, True)}
#: cases measured besides the algorithms' own: weighted PageRank (cuGraph's default on a graph
#: built with weights)
WEIGHTED = {"pagerank_weighted": (False, True, True)}
RESULT = {"bfs": "distance", "sssp": "distance", "weakly_connected_components": "labels",
          "core_number": "core_number", "pagerank": "pagerank",
          "personalized_pagerank": "pagerank", "pagerank_weighted": "pagerank"}


def _module():
    import cugraph
    return cugraph


def available() -> str:
    return f"cugraph {getattr(_module(), '__version__', '?')}"


def frame(columns: dict):
    """cuDF on a GPU when it imports (no host copy), pandas otherwise."""
    if device.BACKEND == "gpu":
        try:
            import cudf
            xp = device.xp  # host columns are copied to the device (cupy.ascontiguousarray
            # refuses NumPy arrays)
            return cudf.DataFrame({k: xp.ascontiguousarray(xp.asarray(v))
                                   for k, v in columns.items()})
        except ImportError:
            pass
    import pandas as pd
    return pd.DataFrame({k: device.to_host(v) for k, v in columns.items()})


def edges(g, undirected_view: bool = False) -> dict:
    """Our edge list in original ids: every stored edge of a directed graph; each pair once of
    an undirected one (or of the undirected view, self-loops dropped, weights dropped)."""
    xp = device.xp
    if undirected_view and g.directed:
        g = g.simple_undirected()
    s, d = g.edge_sources.astype(np.int64), g.out_indices.astype(np.int64)
    w = g.edge_weights[:, 0] if g.edge_weights is not None else xp.ones(g.m, dtype=np.float32)
    if not g.directed:
        keep = s < d if undirected_view else s <= d
        s, d, w = s[keep], d[keep], w[keep]
    return {"src": g.vertices[s], "dst": g.vertices[d], "weight": xp.ascontiguousarray(w)}


class Graphs:
    """The cuGraph graphs of one of our graphs, built on first use, ``build_ms`` per kind."""

    def __init__(self, g):
        self.g, self.cache, self.build_ms = g, {}, {}

    def kind(self, algorithm: str) -> tuple:
        view, weighted, transposed = {**KINDS, **WEIGHTED}[algorithm]
        return (bool(self.g.directed and not view), weighted, transposed)

    def get(self, algorithm: str):
        kind = self.kind(algorithm)
        if kind not in self.cache:
            directed, weighted, transposed = kind
            cols = edges(self.g, undirected_view={**KINDS, **WEIGHTED}[algorithm][0])
            if not weighted:
                cols.pop("weight")
            df = frame(cols)
            G = _module().Graph(directed=directed)
            kw = dict(source="src", destination="dst", renumber=True)
            if weighted:
                kw["edge_attr"] = "weight"
            if transposed:
                kw["store_transposed"] = True
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _, ms = timed(lambda: G.from_cudf_edgelist(df, **kw))
            name = ("directed" if directed else "undirected") + ("/weighted" if weighted
                                                                 else "") + (
                "/transposed" if transposed else "")
            self.build_ms[name] = ms
            self.cache[kind] = G
        return self.cache[kind]


def run(algorithm: str, G, *, source=None, k=None, alpha=0.85, tol=1e-6, max_iter=100):
    """One cuGraph call of ``algorithm``."""
    cg = _module()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if algorithm == "bfs":
            return cg.bfs(G, start=int(source))
        if algorithm == "sssp":
            return cg.sssp(G, source=int(source))
        if algorithm == "weakly_connected_components":
            return cg.weakly_connected_components(G)
        if algorithm == "core_number":
            return cg.core_number(G)
        if algorithm == "k_core":
            return cg.k_core(G, k=k)
        if algorithm in ("pagerank", "pagerank_weighted"):  # the graph's kind says which
            return cg.pagerank(G, alpha=alpha, tol=tol, max_iter=max_iter)
        if algorithm == "personalized_pagerank":
            xp = device.xp
            pers = frame({"vertex": xp.asarray([source], dtype=np.int64),
                          "values": xp.asarray([1.0], dtype=np.float32)})
            return cg.pagerank(G, alpha=alpha, personalization=pers, tol=tol,
                               max_iter=max_iter)
    raise ValueError(f"cugraph peer: no call for {algorithm!r}")


def values(algorithm: str, result, g):
    """cuGraph's result in our internal vertex order; k_core: the sorted member ids."""
    if algorithm == "k_core":
        if hasattr(result, "nodes"):  # a cugraph.Graph
            ids = host(result.nodes())
        else:  # an edge frame
            ids = np.concatenate([host(result[c]) for c in list(result.columns)[:2]])
        return unique(ids.astype(np.int64))
    return by_vertex(column(result, "vertex"), column(result, RESULT[algorithm]), g,
                     "cuGraph's result")
