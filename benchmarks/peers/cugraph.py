"""RAPIDS cuGraph as a peer: a ``cugraph.Graph`` of the same edges as ours (built once per
kind, its build time recorded), the calls, and their results in our vertex order.

Kinds (directed, weighted, transposed): bfs directed; sssp directed and weighted; the PageRanks
directed and transposed; wcc, core_number and k_core undirected (each distinct pair once, no
self-loops); strongly_connected_components and betweenness_centrality as the graph (unweighted:
cuGraph's BC ignores weights); minimum_spanning_tree weighted, on an undirected graph (the
suite passes the versions of benchmarks.graphs).  On an undirected graph of ours every kind is
undirected (each pair once).

Calls as cuGraph 26.10 documents them: ``strongly_connected_components(G)``,
``minimum_spanning_tree(G, weight="weight")`` (a Graph: :func:`values` reads its edge list)
and ``betweenness_centrality(G, k=[source ids], normalized=True)`` (an explicit list: the
sources themselves, no sampling of cuGraph's; its scaling is :func:`bc_scale`'s).
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
         "personalized_pagerank": (False, False, True),
         "strongly_connected_components": (False, False, False),
         "minimum_spanning_tree": (False, True, False),
         "betweenness_centrality": (False, False, False)}
#: cases measured besides the algorithms' own: weighted PageRank (cuGraph's default on a graph
#: built with weights)
WEIGHTED = {"pagerank_weighted": (False, True, True)}
RESULT = {"bfs": "distance", "sssp": "distance", "weakly_connected_components": "labels",
          "core_number": "core_number", "pagerank": "pagerank",
          "personalized_pagerank": "pagerank", "pagerank_weighted": "pagerank",
          "strongly_connected_components": "labels",
          "betweenness_centrality": "betweenness_centrality"}


#: Algorithms cuGraph 26.10 runs only on 32-bit edge offsets, which its graphs take from 32-bit
#: vertex ids: minimum_spanning_tree (a legacy routine behind the C API, cpp/src/c_api/
#: legacy_mst.cpp, refuses other edge types with CUGRAPH_UNSUPPORTED_TYPE_COMBINATION).
INT32_IDS = frozenset({"minimum_spanning_tree"})


def int32_ids(cols: dict) -> dict:
    """``src`` / ``dst`` as int32 (ValueError when an id does not fit)."""
    xp = device.xp
    out = {}
    for name in ("src", "dst"):
        ids = xp.asarray(cols[name])
        if ids.size and (int(ids.max()) >= 2**31 or int(ids.min()) < -2**31):
            raise ValueError(f"cugraph peer: {name} ids do not fit int32, which cuGraph's "
                             "minimum_spanning_tree needs")
        out[name] = ids.astype(np.int32)
    return out


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
        narrow = algorithm in INT32_IDS
        kind = self.kind(algorithm) + ((("int32 ids",) if narrow else ()))
        if kind not in self.cache:
            directed, weighted, transposed = kind[:3]
            cols = edges(self.g, undirected_view={**KINDS, **WEIGHTED}[algorithm][0])
            if not weighted:
                cols.pop("weight")
            if narrow:
                cols = {**cols, **int32_ids(cols)}
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
    """One cuGraph call of ``algorithm`` (``k``: k_core's k, or betweenness_centrality's
    source ids)."""
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
        if algorithm == "strongly_connected_components":
            return cg.strongly_connected_components(G)
        if algorithm == "minimum_spanning_tree":
            return cg.minimum_spanning_tree(G, weight="weight")
        if algorithm == "betweenness_centrality":
            return cg.betweenness_centrality(G, k=[int(s) for s in k], normalized=True)
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
    """cuGraph's result in our internal vertex order; k_core: the sorted member ids;
    minimum_spanning_tree: :func:`forest` of its edge list."""
    if algorithm == "minimum_spanning_tree":  # a Graph of the src, dst, weight frame
        edges = result.view_edge_list()
        names = list(edges.columns)
        weight = getattr(result, "weight_column", None) or "weight"
        if not {"src", "dst", weight} <= set(names):
            raise ValueError(f"cuGraph's spanning tree edge list has columns {names}, not "
                             f"src, dst, {weight}")
        return forest(column(edges, "src"), column(edges, "dst"), column(edges, weight))
    if algorithm == "k_core":
        if hasattr(result, "nodes"):  # a cugraph.Graph
            ids = host(result.nodes())
        else:  # an edge frame
            ids = np.concatenate([host(result[c]) for c in list(result.columns)[:2]])
        return unique(ids.astype(np.int64))
    return by_vertex(column(result, "vertex"), column(result, RESULT[algorithm]), g,
                     "cuGraph's result")


def forest(src, dst, weight) -> dict:
    """A spanning forest's facts from its edge list (original ids; each edge once, or both
    ways as some edge lists give an undirected graph's): ``edges``, ``total_weight``
    (float64 sum), and the host arrays ``src``, ``dst``, ``weight`` with each edge once."""
    s, d = host(src).astype(np.int64), host(dst).astype(np.int64)
    w = host(weight).astype(np.float64)
    lo, hi = np.minimum(s, d), np.maximum(s, d)
    order = np.lexsort((w, hi, lo))
    lo, hi, w = lo[order], hi[order], w[order]
    first = np.r_[True, (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])] if lo.size else lo.astype(
        bool)
    return {"edges": int(first.sum()), "total_weight": float(w[first].sum()),
            "src": lo[first], "dst": hi[first], "weight": w[first]}


def bc_scale(n: int, sources):
    """cuGraph 26.10's divisor of a vertex's Brandes dependency sum over ``sources`` for
    ``normalized=True, endpoints=False`` (cpp/src/centrality/betweenness_centrality_impl.cuh):
    ``k (n - 2)`` for a vertex that is not a source and ``(k - 1) (n - 2)`` for a source (a
    source's own traversal cannot pass through it), ``k (n - 2)`` for every vertex when
    k = n - 1; the same for directed and undirected graphs (an undirected pair is counted from
    both ends when every vertex is a source, which the documented 2 / ((n-1)(n-2)) halves).
    Returns ``(nonsource divisor, source divisor)``.  NetworkX 3.6's ``_rescale`` divides
    sampled sums the same way except at k = n - 1 (sources by (k - 1) (n - 2) there too); its
    releases before 3.6 divided every vertex by ``k (n - 1) (n - 2) / n``.

    >>> bc_scale(10, range(4))
    (32.0, 24.0)
    """
    k = len(sources)
    if k == n - 1:
        return float(k * (n - 2)), float(k * (n - 2))
    return float(k * (n - 2)), float((k - 1) * (n - 2))
