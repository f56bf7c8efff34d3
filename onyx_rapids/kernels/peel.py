"""Queue-driven peeling for core numbers (SIMD-X's k-core, decrements stopped below k).

``core[v] < 0`` marks a live vertex.  At level ``k`` the live vertices of degree below ``k`` are
peeled into a queue (``peel_below``: ``core = k - 1``); each round (``peel_round``) one warp per
queued vertex decrements its live neighbours' degrees, and the one decrement that takes a
neighbour from ``k`` to ``k - 1`` peels it into the next queue, so every vertex is queued once
and no round scans the whole graph.  A level ends when a round queues nobody; the next level
is one above the smallest live degree (``min_live_degree``), so empty levels cost nothing.

The host can drive the rounds (a launch and a count read per round), or ``peel_fused`` runs
them all in one cooperative kernel (SIMD-X's kernel fusion): a 2048 x 2048 grid peels in 2047
rounds, where launches and reads would cost more than the work.
"""

from __future__ import annotations

from numba import cuda

from .disk_cache import persist

WARP = 32


@persist
@cuda.jit
def min_live_degree(degree, core, out):
    """``out[0] = min(out[0], degree[v])`` over the live vertices."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    best = out[0]
    for v in range(start, core.shape[0], stride):
        if core[v] < 0 and degree[v] < best:
            best = degree[v]
    cuda.atomic.min(out, 0, best)


@persist
@cuda.jit
def peel_below(degree, core, k, queue, count):
    """Peel every live vertex of degree below ``k`` into ``queue`` (``count[0]`` entries)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, core.shape[0], stride):
        if core[v] < 0 and degree[v] < k:
            core[v] = k - 1
            queue[cuda.atomic.add(count, 0, 1)] = v


@persist
@cuda.jit
def peel_round(offsets, indices, queue, size, degree, core, k, next_queue, next_count):
    """Decrement the live neighbours of ``queue[:size]``; queue those that fall below ``k``."""
    lane = cuda.threadIdx.x % WARP
    warp = cuda.grid(1) // WARP
    warps = cuda.gridsize(1) // WARP
    for i in range(warp, size, warps):
        u = queue[i]
        for p in range(offsets[u] + lane, offsets[u + 1], WARP):
            w = indices[p]
            if core[w] < 0 and cuda.atomic.sub(degree, w, 1) == k:
                core[w] = k - 1  # only this decrement saw k: w is queued once
                next_queue[cuda.atomic.add(next_count, 0, 1)] = w


BIG = 2**31 - 1


@persist
@cuda.jit
def peel_fused(offsets, indices, degree, core, queues, counts, lows, k_min, out):
    """Every level and round of the peeling in one persistent (cooperative) kernel, with a
    grid-wide barrier after each scan and round.

    ``queues`` (2, n): round r reads row ``r % 2`` and fills the other; ``counts`` (3,) zeros:
    fill r counts into ``counts[(r + 1) % 3]`` and clears ``counts[(r + 2) % 3]``, whose value
    every thread read before fill r - 1's barrier; ``lows`` (2,) starts at ``BIG``: level L
    takes the smallest live degree in ``lows[L % 2]`` and resets the other.  ``out``: rounds
    that peeled something, levels that peeled something."""
    grid = cuda.cg.this_grid()
    n = core.shape[0]
    tid = cuda.grid(1)
    threads = cuda.gridsize(1)
    lane = cuda.threadIdx.x % WARP
    warp = tid // WARP
    warps = threads // WARP
    k = k_min
    r = 0
    level = 0
    rounds = 0
    levels = 0
    while True:
        if level > 0:  # skip the levels nobody is under
            best = BIG
            for v in range(tid, n, threads):
                if core[v] < 0 and degree[v] < best:
                    best = degree[v]
            cuda.atomic.min(lows, level % 2, best)
            grid.sync()
            low = lows[level % 2]
            if tid == 0:
                lows[(level + 1) % 2] = BIG
            if low == BIG:
                break  # nobody is live
            if low + 1 > k:
                k = low + 1
        if tid == 0:
            counts[(r + 2) % 3] = 0
        for v in range(tid, n, threads):  # the level's first peel: a scan
            if core[v] < 0 and degree[v] < k:
                core[v] = k - 1
                queues[(r + 1) % 2, cuda.atomic.add(counts, (r + 1) % 3, 1)] = v
        grid.sync()
        r += 1
        size = counts[r % 3]
        if size > 0:
            levels += 1
        while size > 0:
            rounds += 1
            if tid == 0:
                counts[(r + 2) % 3] = 0
            here = r % 2
            there = (r + 1) % 2
            slot = (r + 1) % 3
            for i in range(warp, size, warps):
                u = queues[here, i]
                for p in range(offsets[u] + lane, offsets[u + 1], WARP):
                    w = indices[p]
                    if core[w] < 0 and cuda.atomic.sub(degree, w, 1) == k:
                        core[w] = k - 1
                        queues[there, cuda.atomic.add(counts, slot, 1)] = w
            grid.sync()
            r += 1
            size = counts[r % 3]
        level += 1
    if tid == 0:
        out[0] = rounds
        out[1] = levels
