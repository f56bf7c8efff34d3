"""Trimming for strongly connected components (Multistep's first step, Slota et al. 2014),
queue-driven to its end.

A live vertex with no live in-neighbour or no live out-neighbour (self-loops aside) lies on no
cycle through another vertex, so it is a strongly connected component of its own; removing it
may leave a neighbour so, and so on.  ``comp[v] < 0`` marks a live vertex; a removed one gets
``comp[v] = v`` (a component is named by one internal vertex).  ``trim_start`` counts every
vertex's in- and out-neighbours other than itself (``in_live``, ``out_live``; parallel edges
count each) and queues the vertices with a zero count.  A round takes a queue: each removed
vertex decrements the count of each live neighbour along each edge (in-count of its
out-neighbours, out-count of its in-neighbours); a count that reaches zero removes the
neighbour (a compare-and-swap on ``comp``, so one thread removes it, once).  The thread then
goes on from one neighbour it removed, up to ``follow`` vertices in all, and queues the
others for the next round, so a thin chain costs a round per ``follow`` links, while a wide
front (a grid read as a DAG) still advances in parallel.  Every edge is read at most twice
over the whole trimming.  When no round queues anything, the live vertices are exactly those
with a live in- and a live out-neighbour, and their counts are their live degrees.

``trim_round`` is one round (the host reads the next queue's size between launches);
``trim_fused`` runs every round in one persistent cooperative kernel with a grid-wide barrier
after each (SIMD-X's kernel fusion), for the thousands of rounds of a long-diameter graph.
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
def release(offsets, indices, u, comp, live, follow, next_queue, counts, slot):
    """Decrement ``live`` of u's neighbours in this adjacency; remove those that reach zero:
    the first becomes ``follow`` while that is -1 (-2: follow none), the others are queued
    (``next_queue``, ``counts[slot]`` entries).  Returns ``follow``."""
    for e in range(offsets[u], offsets[u + 1]):
        w = indices[e]
        if w != u and comp[w] < 0 and cuda.atomic.sub(live, w, 1) == 1:
            if cuda.atomic.cas(comp, w, int64(-1), int64(w)) == -1:
                if follow == -1:
                    follow = w
                else:
                    next_queue[cuda.atomic.add(counts, slot, 1)] = w
    return follow


@cuda.jit(device=True, inline=True)
def walk(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live, u,
         follow, next_queue, counts, slot):
    """Release removed vertex u, then the one it removed, ``follow`` vertices in all."""
    steps = 1
    while u >= 0:
        nxt = int64(-1) if steps < follow else int64(-2)
        nxt = release(out_offsets, out_indices, u, comp, in_live, nxt, next_queue, counts,
                      slot)
        nxt = release(in_offsets, in_indices, u, comp, out_live, nxt, next_queue, counts,
                      slot)
        u = nxt
        steps += 1


@persist
@cuda.jit
def trim_round(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live,
               queue, size, follow, next_queue, next_count):
    """One round from ``queue[:size]`` (see the module docstring); ``next_count[0]``
    counts the next queue."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, size, stride):
        walk(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live,
             queue[i], follow, next_queue, next_count, 0)


@persist
@cuda.jit
def trim_fused(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live,
               queues, counts, size, follow, out):
    """Every round from ``queues[0, :size]`` in one cooperative kernel.  ``queues`` (2, n):
    round r reads row ``r % 2`` and fills the other; ``counts`` (3,) zeros: round r counts
    into ``counts[(r + 1) % 3]`` and clears ``counts[(r + 2) % 3]``, whose value every thread
    read before round r - 1's barrier.  ``out[0]``: rounds run."""
    grid = cuda.cg.this_grid()
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    r = 0
    while size > 0:
        if tid == 0:
            counts[(r + 2) % 3] = 0
        here = queues[r % 2]
        there = queues[(r + 1) % 2]
        for i in range(tid, size, threads):
            walk(out_offsets, out_indices, in_offsets, in_indices, comp, in_live, out_live,
                 here[i], follow, there, counts, (r + 1) % 3)
        grid.sync()
        r += 1
        size = counts[r % 3]
    if tid == 0:
        out[0] = r
