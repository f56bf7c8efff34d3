"""Breadth-first layers in NetworkX's visiting order, on the host CSR of an OnyxGraph.

NetworkX visits the parents of a layer in the order they were found and, for each, its
neighbours in adjacency order; a vertex belongs to the first parent that reaches it.  That
order depends on the adjacency order of the NetworkX graph, which the device graph does not
keep (it sorts each row by destination), so it is computed here on the CSR that
:func:`onyx_rapids.nx.convert.from_networkx` kept in NetworkX's order: one vectorized pass
over the edges leaving each layer (the edges in layer order, the first occurrence of each
new vertex kept).
"""

from __future__ import annotations

import numpy as np


def _edges_leaving(offsets, layer):
    """CSR positions of the edges of ``layer``'s vertices, in layer then adjacency order, and
    the layer vertex each comes from."""
    begin = offsets[layer]
    counts = offsets[layer + 1] - begin
    total = int(counts.sum())
    shift = np.repeat(begin - (np.cumsum(counts) - counts), counts)
    return shift + np.arange(total, dtype=np.int64), np.repeat(layer, counts)


def layers(offsets, indices, first, *, depth_limit=None, allowed=None):
    """Yield ``(vertices, parents, positions)`` per layer, in NetworkX's order: each vertex's
    discovering parent and the CSR position of the edge it came by (-1 for layer 0).

    ``first`` is layer 0 (vertex indices, in order); ``depth_limit`` stops after that many
    layers beyond it; ``allowed`` (a boolean per CSR position, optional) keeps only those
    edges (the tight edges of a shortest-path tree).

    >>> import numpy as np
    >>> offsets, indices = np.array([0, 2, 3, 4, 4]), np.array([2, 1, 3, 3])
    >>> [(v.tolist(), p.tolist()) for v, p, _ in layers(offsets, indices, np.array([0]))]
    [([0], [-1]), ([2, 1], [0, 0]), ([3], [2])]
    """
    n = offsets.shape[0] - 1
    seen = np.zeros(n, dtype=bool)
    layer = np.asarray(first, dtype=np.int64)
    seen[layer] = True
    none = np.full(layer.shape[0], -1, dtype=np.int64)
    yield layer, none, none
    depth = 0
    while layer.size and (depth_limit is None or depth < depth_limit):
        pos, parent = _edges_leaving(offsets, layer)
        child = indices[pos]
        keep = ~seen[child] if allowed is None else ~seen[child] & allowed[pos]
        child, parent, pos = child[keep], parent[keep], pos[keep]
        _, first_at = np.unique(child, return_index=True)
        first_at.sort()
        layer, parent, pos = child[first_at], parent[first_at], pos[first_at]
        seen[layer] = True
        depth += 1
        if layer.size:
            yield layer, parent, pos
