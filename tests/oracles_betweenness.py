"""Float64 reference (test oracle) of betweenness centrality, vertex and edge
(docs/algorithms.md, "betweenness_centrality"), written from the formula alone:

    bc(v) = sum over ordered pairs (s, t), s in S, s != v != t, of sigma_st(v) / sigma_st

over a given source list S (every vertex, or k of them), shortest paths counted by hops; the
edge version counts the paths through an edge (always with their ends).  Each source's pair
sums come from a plain queue BFS and the pair-dependency recursion (Brandes), in Python floats.
The raw sums are then scaled as NetworkX 3.6 does (its ``_rescale``), written out here from
the number of pairs: normalized divides by the ordered (source, target) pairs a vertex can lie
between, unnormalized extrapolates the K sources to all N and halves an undirected graph's
pairs; sampled sources without endpoints scale a source by the K - 1 other sources.

Inputs are internal ids 0..n-1: ``src`` / ``dst`` arrays of the edges u -> v (an undirected
graph gives each edge once or both ways; parallel edges and self-loops change nothing).  No
code is shared with the package; ``test_betweenness_centrality.py`` checks this oracle against
NetworkX's ``betweenness_centrality`` and ``edge_betweenness_centrality``.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np


def neighbours(n, src, dst, directed):
    """The out-neighbour sets of a simple graph (both ways when undirected)."""
    out = [set() for _ in range(n)]
    for u, v in zip(np.asarray(src).tolist(), np.asarray(dst).tolist()):
        out[u].add(v)
        if not directed:
            out[v].add(u)
    return [sorted(x) for x in out]


def _one_source(adj, s):
    """(vertices in BFS order, predecessors, sigma, reached count) from ``s``."""
    n = len(adj)
    dist, sigma, preds = [-1] * n, [0.0] * n, [[] for _ in range(n)]
    dist[s], sigma[s] = 0, 1.0
    order, queue = [], deque([s])
    while queue:
        u = queue.popleft()
        order.append(u)
        for w in adj[u]:
            if dist[w] < 0:
                dist[w] = dist[u] + 1
                queue.append(w)
            if dist[w] == dist[u] + 1:
                sigma[w] += sigma[u]
                preds[w].append(u)
    return order, preds, sigma


def raw_sums(adj, sources):
    """(vertex sums without endpoints, with endpoints, arc sums {(u, v): value})."""
    n = len(adj)
    plain, ends, arcs = np.zeros(n), np.zeros(n), {}
    for s in sources:
        order, preds, sigma = _one_source(adj, s)
        delta = [0.0] * n
        ends[s] += len(order) - 1
        for w in reversed(order):
            for u in preds[w]:
                c = sigma[u] / sigma[w] * (1.0 + delta[w])
                arcs[(u, w)] = arcs.get((u, w), 0.0) + c
                delta[u] += c
            if w != s:
                plain[w] += delta[w]
                ends[w] += delta[w] + 1
    return plain, ends, arcs


def _pairs(n, count, every, directed, normalized, endpoints):
    """(factor of a source, factor of another vertex): see the module docstring."""
    N = n if endpoints else n - 1
    if N < 2:
        return 1.0, 1.0
    K = N if every else count
    ways = 1 if directed else 2
    if normalized:
        other = 1.0 / (K * (N - 1))  # the pairs (s in S, t != s) a vertex can lie between
        source = other if every or endpoints else \
            (1.0 / ((K - 1) * (N - 1)) if K > 1 else math.nan)
    else:
        other = N / (K * ways)  # K sources extrapolated to N, unordered pairs once
        source = other if every or endpoints else \
            (N / ((K - 1) * ways) if K > 1 else math.nan)
    return source, other


def betweenness(n, src, dst, *, directed, sources=None, normalized=True, endpoints=False):
    """Vertex betweenness (float64, n) over ``sources`` (None: every vertex)."""
    adj = neighbours(n, src, dst, directed)
    every = sources is None
    sources = list(range(n)) if every else [int(s) for s in sources]
    plain, ends, _ = raw_sums(adj, sources)
    raw = ends if endpoints else plain
    source, other = _pairs(n, len(sources), every, directed, normalized, endpoints)
    scale = np.full(n, other)
    scale[sources] = source
    return raw * scale


def edge_betweenness(n, src, dst, *, directed, sources=None, normalized=True):
    """Edge betweenness {(u, v): value}: every arc of a directed graph, every undirected edge
    once as (min, max), its value over both directions."""
    adj = neighbours(n, src, dst, directed)
    every = sources is None
    sources = list(range(n)) if every else [int(s) for s in sources]
    _, _, arcs = raw_sums(adj, sources)
    factor, _ = _pairs(n, len(sources), every, directed, normalized, endpoints=True)
    out = {}
    for u in range(n):
        for v in adj[u]:
            key = (u, v) if directed else (min(u, v), max(u, v))
            if directed or u <= v:
                out[key] = out.get(key, 0.0) + arcs.get((u, v), 0.0)
            if not directed and u < v:
                out[key] += arcs.get((v, u), 0.0)
    return {key: value * factor for key, value in out.items()}
