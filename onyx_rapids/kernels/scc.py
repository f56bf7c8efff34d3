"""Trimming for strongly connected components (Multistep's first step, Slota et al. 2014),
queue-driven to its end.

A live vertex with no live in-neighbour or no live out-neighbour (self-loops aside) lies on no
cycle through another vertex, so it is a strongly connected component of its own; removing it
may leave a neighbour so, and so on.  ``comp[v] < 0`` marks a live vertex; a removed one gets
``comp[v] = v`` (a component is named by one internal vertex).  ``trim_start`` counts every
vertex's in- and out-neighbours other than itself (``in_live``, ``out_live``; parallel edges
count each) and queues the vertices with a zero count.  ``trim_round`` takes a queue: each
removed vertex decrements the count of each live neighbour along each edge (in-count of its
out-neighbours, out-count of its in-neighbours); a count that reaches zero removes the
neighbour (a compare-and-swap on ``comp``, so one thread removes it, once).  The thread then
follows one of the neighbours it removed itself and queues the others for the next round, so a
chain (a path of a DAG, a dead end of a road network) is walked by one thread in one round
instead of a round per link.  Every edge is read at most twice over the whole trimming.  When
no round queues anything, the live vertices are exactly those with a live in- and a live
out-neighbour, and their counts are their live degrees.
"""

from __future__ import annotations

from numba import cuda, int64

from .disk_cache import persist


@cuda.jit(device=True, inline=True)
def others(offsets, indices, v):
    """Entries of v's adjacency (CSR or CSC) that are not v itself."""
    count = 0
    for e in range(offsets[v], offsets[v + 1]):
        if indices[e] != v:
            count += 1
    return count


@persist
@cuda.jit
def trim_start(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live,
               queue, count):
    """Count every vertex's neighbours; remove and queue those with none on a side."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, comp.shape[0], stride):
        outs = others(out_offsets, out_indices, v)
        ins = others(in_offsets, in_indices, v)
        out_live[v] = outs
        in_live[v] = ins
        if outs == 0 or ins == 0:
            comp[v] = v
            queue[cuda.atomic.add(count, 0, 1)] = v


@cuda.jit(device=True, inline=True)
def release(offsets, indices, u, comp, live, follow, next_queue, next_count):
    """Decrement ``live`` of u's neighbours in this adjacency; remove those that reach zero:
    the first becomes ``follow`` (when it is still -1), the others are queued.  Returns
    ``follow``."""
    for e in range(offsets[u], offsets[u + 1]):
        w = indices[e]
        if w != u and comp[w] < 0 and cuda.atomic.sub(live, w, 1) == 1:
            if cuda.atomic.cas(comp, w, int64(-1), int64(w)) == -1:
                if follow < 0:
                    follow = w
                else:
                    next_queue[cuda.atomic.add(next_count, 0, 1)] = w
    return follow


@persist
@cuda.jit
def trim_round(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live,
               queue, size, next_queue, next_count):
    """Release the neighbours of every vertex of ``queue[:size]``, following chains (see the
    module docstring)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, size, stride):
        u = queue[i]
        while u >= 0:
            follow = release(out_offsets, out_indices, u, comp, in_live, -1, next_queue,
                             next_count)
            follow = release(in_offsets, in_indices, u, comp, out_live, follow, next_queue,
                             next_count)
            u = follow
