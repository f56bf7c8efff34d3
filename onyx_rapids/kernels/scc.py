"""Trimming for strongly connected components (Multistep's first step, Slota et al. 2014).

A live vertex with no live in-neighbour or no live out-neighbour (self-loops aside) lies on no
cycle through another vertex, so it is a strongly connected component of its own.  ``trim``
removes such vertices in place: ``comp[v] = v`` (a component is named by one internal vertex;
``comp[v] < 0`` means live).  A thread per vertex looks for one live in-neighbour and one live
out-neighbour and stops at the first of each, so a round reads few edges of most vertices.
Removals of one round are seen by the threads that read later in the same round; that only
removes more in this round, never a vertex that does not qualify, since a removed vertex is
a component of its own whatever the order.  Rounds repeat until one removes little
(the caller decides); ``count[0]`` gains the vertices a round removed.
"""

from __future__ import annotations

from numba import cuda

from .disk_cache import persist


@cuda.jit(device=True, inline=True)
def has_live_neighbour(offsets, indices, v, comp):
    """Whether v has a live neighbour other than itself in this adjacency (CSR or CSC)."""
    for e in range(offsets[v], offsets[v + 1]):
        u = indices[e]
        if u != v and comp[u] < 0:
            return True
    return False


@persist
@cuda.jit
def trim(out_offsets, out_indices, in_offsets, in_indices, comp, count):
    """One trimming round over every live vertex (see the module docstring)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, comp.shape[0], stride):
        if comp[v] >= 0:
            continue
        if not has_live_neighbour(out_offsets, out_indices, v, comp) \
                or not has_live_neighbour(in_offsets, in_indices, v, comp):
            comp[v] = v
            cuda.atomic.add(count, 0, 1)
