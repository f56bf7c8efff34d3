"""Trimming for strongly connected components (Multistep's first step, Slota et al. 2014),
queue-driven to its end.

A live vertex with no live in-neighbour or no live out-neighbour (self-loops aside) lies on no
cycle through another vertex, so it is a strongly connected component of its own; removing it
may leave a neighbour so, and so on.  ``comp[v] < 0`` marks a live vertex; a removed one gets
``comp[v] = v`` (a component is named by one internal vertex).  ``trim_start`` counts every
vertex's in- and out-neighbours other than itself (``in_live``, ``out_live``: the degrees less
the self-loops, :func:`drop_self_loops`; parallel edges count each) and queues the vertices
with a zero count.  A round takes a queue: each removed
vertex decrements the count of each live neighbour along each edge (in-count of its
out-neighbours, out-count of its in-neighbours); a count that reaches zero removes the
neighbour (a compare-and-swap on ``comp``, so one thread removes it, once).  The thread then
goes on from one neighbour it removed, up to ``follow`` vertices in all, and queues the
others for the next round, so a thin chain costs a round per ``follow`` links, while a wide
front (a grid read as a DAG) still advances in parallel.  Every edge is read at most twice
over the whole trimming.  When no round queues anything, the live vertices are exactly those
with a live in- and a live out-neighbour, and their counts are their live degrees.

Vertices settled by another step (a component found by forward-backward or coloring) leave
their live neighbours through :func:`unlink`, an edge-parallel pass whose removals start the
next rounds.

``trim_round`` is one round (the host reads the next queue's size between launches);
``trim_fused`` runs every round in one persistent cooperative kernel with a grid-wide barrier
after each (SIMD-X's kernel fusion), for the thousands of rounds of a long-diameter graph.
"""

from __future__ import annotations

from numba import cuda, int64

from .disk_cache import persist


@persist
@cuda.jit
def drop_self_loops(sources, targets, in_live, out_live):
    """A self-loop v -> v is neither a live in- nor a live out-neighbour of v: one thread an
    edge takes it off both counts (``in_live`` and ``out_live`` start at the degrees)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for e in range(start, targets.shape[0], stride):
        v = sources[e]
        if targets[e] == v:
            cuda.atomic.sub(in_live, v, 1)
            cuda.atomic.sub(out_live, v, 1)


@persist
@cuda.jit
def trim_start(comp, in_live, out_live, queue, count):
    """Remove and queue every live vertex with no live neighbour on a side."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, comp.shape[0], stride):
        if comp[v] < 0 and (out_live[v] == 0 or in_live[v] == 0):
            comp[v] = v
            queue[cuda.atomic.add(count, 0, 1)] = v


@cuda.jit(device=True, inline=True)
def removes(w, live, comp):
    """Live w loses a neighbour on the side ``live`` counts; whether that removed it (its
    count reached zero, and the compare-and-swap on ``comp`` was this thread's: once)."""
    if cuda.atomic.sub(live, w, 1) == 1:
        return cuda.atomic.cas(comp, w, int64(-1), int64(w)) == -1
    return False


@persist
@cuda.jit
def unlink(sources, targets, fresh, comp, in_live, out_live, queue, count):
    """Every edge between a vertex just settled (``fresh``) and a live one, a thread an edge:
    the live end loses it (its in-count for u -> w with u fresh, its out-count for u -> w
    with w fresh) and is removed and queued at zero.  An edge-parallel pass, so a settled hub's
    thousands of edges are not one thread's loop."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for e in range(start, targets.shape[0], stride):
        u = sources[e]
        w = targets[e]
        if u != w:
            if fresh[u] and comp[w] < 0 and removes(w, in_live, comp):
                queue[cuda.atomic.add(count, 0, 1)] = w
            if fresh[w] and comp[u] < 0 and removes(u, out_live, comp):
                queue[cuda.atomic.add(count, 0, 1)] = u


@cuda.jit(device=True, inline=True)
def release(offsets, indices, u, comp, live, follow, next_queue, counts, slot):
    """Decrement ``live`` of u's neighbours in this adjacency; remove those that reach zero:
    the first becomes ``follow`` while that is -1 (-2: follow none), the others are queued
    (``next_queue``, ``counts[slot]`` entries).  Returns ``follow``."""
    for e in range(offsets[u], offsets[u + 1]):
        w = indices[e]
        if w != u and comp[w] < 0 and removes(w, live, comp):
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
