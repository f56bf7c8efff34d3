"""Brandes' hand-written kernels: the sparse levels of a long search, and the per-edge
dependencies of edge betweenness.

A batch of k sources keeps, per vertex v and source lane f, the hop distance ``dist[v, f]``,
the path count ``sigma[v, f]`` and the dependency ``delta[v, f]`` (n x k each, row-major).

**Sparse levels.**  Once a search is long (past ``DENSE_LEVELS`` of
:mod:`onyx_rapids.algorithms.betweenness_centrality`), its levels run on (vertex, lane) pairs
``p = v * k + f``, the flat index of ``[v, f]`` in the n x k arrays, passed here as 1-D views.
The pairs of a level sit in ``queue[lo:hi]``, a thread each (grid-stride), over v's out-edges:

- :func:`forward_pairs` (level L):  for v -> w with w unreached in lane f, one
  compare-and-swap sets ``dist[w, f] = L + 1`` and its winner appends ``(w, f)`` at the
  queue's tail (``tail[0]``, an atomic counter); then for every w with
  ``dist[w, f] = L + 1``, ``sigma[w, f] += sigma[v, f]`` (a float64 atomic add).
- :func:`backward_pairs` (level L, the next level's ``delta`` final):

      delta[v, f] = sigma[v, f] * sum_{v -> w, dist[w, f] = L + 1} (1 + delta[w, f]) / sigma[w, f]

  a pull written by the pair's own thread only: no atomics.

**Edge dependencies.**  The dependency an edge ``u -> v`` carries from lane f's source is

    c(u, v, f) = sigma[u, f] / sigma[v, f] * (1 + delta[v, f])   where dist[v, f] = dist[u, f] + 1

and 0 elsewhere; the edge's betweenness gets ``sum_f c(u, v, f)``.  The operators of
:mod:`onyx_rapids.operators` reduce an edge's values into one of its vertices (``into[v, f]``);
this result belongs to the edge itself and sums over the lanes, so :func:`edge_dependencies`
is a kernel of its own: one thread an edge (grid-stride), looping over the lanes.
"""

from __future__ import annotations

from numba import cuda, int32

from .disk_cache import persist


@persist
@cuda.jit
def forward_pairs(offsets, indices, queue, lo, hi, tail, lanes, dist, sigma, level, unreached):
    """Level ``level``'s pairs ``queue[lo:hi]`` reach and count the next level (module doc);
    ``dist`` and ``sigma`` are the flat n x ``lanes`` arrays."""
    following = int32(level + 1)
    for i in range(lo + cuda.grid(1), hi, cuda.gridsize(1)):
        p = queue[i]
        v = p // lanes
        f = p - v * lanes
        paths = sigma[p]
        for e in range(offsets[v], offsets[v + 1]):
            q = indices[e] * lanes + f
            d = dist[q]
            if d == unreached:
                if cuda.atomic.cas(dist, q, unreached, following) == unreached:
                    queue[cuda.atomic.add(tail, 0, 1)] = q
                d = following  # set by this thread or another one of this level
            if d == following:
                cuda.atomic.add(sigma, q, paths)


@persist
@cuda.jit
def backward_pairs(offsets, indices, queue, lo, hi, lanes, dist, sigma, delta, level):
    """``delta`` of level ``level``'s pairs ``queue[lo:hi]`` from their successors' (module
    doc); ``dist``, ``sigma`` and ``delta`` are the flat n x ``lanes`` arrays."""
    following = level + 1
    for i in range(lo + cuda.grid(1), hi, cuda.gridsize(1)):
        p = queue[i]
        v = p // lanes
        f = p - v * lanes
        total = 0.0
        for e in range(offsets[v], offsets[v + 1]):
            q = indices[e] * lanes + f
            if dist[q] == following:
                total += (1.0 + delta[q]) / sigma[q]
        delta[p] = sigma[p] * total


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
