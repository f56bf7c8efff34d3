"""Brandes' per-edge dependencies, summed over a batch's source lanes (edge betweenness).

Once a batch of k sources has its hop distances ``dist``, path counts ``sigma`` and
dependencies ``delta`` (n x k each, one lane per source), the dependency an edge ``u -> v``
carries from the source of lane ``f`` is

    c(u, v, f) = sigma[u, f] / sigma[v, f] * (1 + delta[v, f])   where dist[v, f] = dist[u, f] + 1

and 0 elsewhere; the edge's betweenness gets ``sum_f c(u, v, f)``.  The operators of
:mod:`onyx_rapids.operators` reduce an edge's values into one of its vertices (``into[v, f]``);
this result belongs to the edge itself and sums over the lanes, so it is a kernel of its own:
one thread an edge (grid-stride), looping over the lanes.
"""

from __future__ import annotations

from numba import cuda

from .disk_cache import persist


@persist
@cuda.jit
def edge_dependencies(sources, targets, dist, sigma, delta, unreached, out):
    """``out[e] += sum_f c(sources[e], targets[e], f)`` over the lanes of ``dist`` (see the
    module docstring); ``unreached`` marks a vertex the lane's source does not reach."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    lanes = dist.shape[1]
    for e in range(start, out.shape[0], stride):
        u = sources[e]
        v = targets[e]
        total = 0.0
        for f in range(lanes):
            du = dist[u, f]
            if du != unreached and dist[v, f] == du + 1:
                total += sigma[u, f] / sigma[v, f] * (1.0 + delta[v, f])
        out[e] += total
