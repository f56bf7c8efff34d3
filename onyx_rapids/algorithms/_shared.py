"""Graffix's shared-memory iteration of well-connected subgraphs (knob ``shared_clustering``
of :class:`~onyx_rapids.approximation.Approximation`, refined by ``shared_rounds``), for
PageRank with the uniform teleport.

Well connected: the local clustering coefficient of a vertex u of degree d in the simple
undirected view (directions dropped, self-loops and parallel edges removed),

    LCC(u) = triangles(u) / (d (d - 1) / 2)        (0 when d < 2),

is at least the threshold t (a thread per edge intersects the two sorted adjacency lists,
:func:`common_neighbours`).  Membership is per vertex: the vertices with LCC >= t, in
breadth-first order (:func:`~onyx_rapids.construction.device.bfs_order`, so that nearby
members are neighbours), are cut into blocks of ``BLOCK`` = 64 consecutive members; a block
keeps its members' internal in-edges (both ends in the block) as a small CSC of local ids
0..63 with each edge's share ``w(v, u) / outw(v)``.  The structure is built once per graph,
threshold and weight column and cached on the graph.

Each outer iteration is one Jacobi pull over every vertex, as :func:`onyx_rapids.pagerank`
iterates (float32 ranks, the dangling mass D spread by the teleport 1/n):

    x'(u) = base(u) + alpha inside(u),
    base(u) = (1 - alpha) / n + alpha (D / n + sum_{v -> u outside u's block} x(v) w / outw(v))

and then ``shared_rounds - 1`` local rounds, a thread block per block with its members'
ranks in shared memory: ``x(u) = base(u) + alpha sum_{v -> u inside} x(v) w / outw(v)``, base
kept from the pull; the ranks are then scaled to sum 1.  A block-asynchronous iteration with
PageRank's fixed point (the scaling keeps it: it sums to 1): the run stops when the pull's L1
change (the residual, as the exact run's test) is below ``tol``, so ``tol`` decides the
accuracy and the local rounds may save outer iterations.  The local rounds move mass in and
out of the blocks, and the error along the fixed point that this leaves decays only at the
block iteration's slowest rate; the scaling removes it (without it karate took 45 pulls
instead of 30 with every round count).  Where the residual is dominated by modes between
blocks or outside them (a path's oscillation, clusters weakly joined), the rounds save
little or nothing, and where a block's boundary is most of its edges they cost pulls: a
float64 NumPy model of this iteration on a 100,000-point Delaunay mesh (median LCC 0.4)
needs 24 pulls at 1 round and 27-35 at 2-8, and on R-MAT (median LCC 0) the blocks hold
under 2% of the edges and the pulls stay 19-20; 8 cliques of 6 in a ring (the tests'
graph) go from 50 pulls to 14 at 4 rounds.  ``RunInfo.estimate``:
``shared_blocks``, ``shared_vertices``, ``shared_edges`` (internal in-edges), ``shared_build_ms``
(this call's, 0 when cached), ``outer_iterations`` and ``l1_change`` (the last pull's).

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> knob = onyx.Approximation(shared_clustering=0.5, shared_rounds=4)
    >>> df, info = onyx.pagerank(g, tol=1e-6, approximation=knob, return_info=True)
    >>> info.estimate["shared_blocks"], info.estimate["shared_vertices"]
    (1, 20)
    >>> bool(abs(df["pagerank"] - onyx.pagerank(g, tol=1e-6)["pagerank"]).max() < 1e-5)
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, float64

from .. import device, operators as ops, properties as props
from ..construction import device as device_build
from ..kernels.disk_cache import persist
from ..registry import CHANGED, Refuse
from ._common import RunInfo, cached_build, finish

__all__ = ["BLOCK", "RULES", "Blocks", "blocks", "clustering", "knob", "pagerank"]

BLOCK = 64  # members of a block: a thread each, their ranks in shared memory

#: The options the shared loop has no use for (it runs its own bulk pulls).
RULES = (
    Refuse(dict(change_driven=(True, "auto"), approximation=CHANGED),
           "shared_clustering runs bulk pulls; leave change_driven False",
           knobs=("shared_clustering",)),
    Refuse(dict(direction="push", approximation=CHANGED),
           "shared_clustering pulls; leave direction unset or 'pull'",
           knobs=("shared_clustering",)),
    *(Refuse(dict(approximation=CHANGED), f"shared_clustering runs its own loop, without {other}",
             knobs=("shared_clustering", other))
      for other in ("stop_changed_fraction", "stop_top_k", "activation_threshold",
                    "edge_fraction", "replicate_threshold")),
)


def knob(execution) -> float | None:
    """The ``shared_clustering`` of ``execution`` (None: off)."""
    a = execution.approximation
    return None if a is None else a.shared_clustering


@persist
@cuda.jit
def common_neighbours(offsets, indices, sources, common):
    """common[e]: the common neighbours of the ends of edge u -> v (u < v; 0 otherwise) of a
    sorted symmetric CSR: each of the shorter list's entries sought in the longer one by
    bisection (min(d) log(max(d)) steps, so a hub's edges stay cheap)."""
    for e in range(cuda.grid(1), indices.shape[0], cuda.gridsize(1)):
        u, v = sources[e], indices[e]
        c = 0
        if u < v:
            if offsets[u + 1] - offsets[u] > offsets[v + 1] - offsets[v]:
                u, v = v, u
            for i in range(offsets[u], offsets[u + 1]):
                lo, hi = offsets[v], offsets[v + 1]
                while lo < hi:
                    mid = (lo + hi) // 2
                    if indices[mid] < indices[i]:
                        lo = mid + 1
                    else:
                        hi = mid
                c += lo < offsets[v + 1] and indices[lo] == indices[i]
        common[e] = c


def clustering(und):
    """Each vertex's local clustering coefficient (float64) in the simple undirected view
    ``und``: 2 triangles / (d (d - 1))."""
    xp = device.xp
    common = xp.zeros(und.m, np.int64)
    if und.m:
        block = device.block_threads(None, 256)
        ops.launch_kernel("shared common_neighbours", common_neighbours,
                          device.stride_grid(und.m, block, 16), block, und.out_offsets,
                          und.out_indices, und.edge_sources, common)
    ends = xp.concatenate([und.edge_sources, und.out_indices]).astype(np.int64)
    triangles = xp.bincount(ends, weights=xp.concatenate([common, common]).astype(np.float64),
                            minlength=und.n) / 2  # a triangle at u: via both its other ends
    d = xp.diff(und.out_offsets).astype(np.float64)
    return xp.where(d > 1, 2 * triangles / xp.maximum(d * (d - 1), 1), 0.0)


@dataclass(frozen=True)
class Blocks:
    """The well-connected blocks: ``members`` (internal ids, block b's at ``starts[b]`` to
    ``starts[b + 1]``), ``block`` (each vertex's block, -1 for none), the internal in-edges of
    member i at ``offsets[i]`` to ``offsets[i + 1]`` of ``local`` (the source's place in its
    block) and ``share`` (``w / outw`` of the source, float32), the per-edge shares of every
    in-edge (``g``'s CSC order) and ``dangling`` (the vertices of no out-weight)."""

    members: object
    starts: object
    block: object
    offsets: object
    local: object
    share: object
    in_share: object
    dangling: object

    @property
    def count(self) -> int:
        return int(self.starts.shape[0]) - 1


def _build(g, threshold: float, weights, size: int) -> Blocks:
    xp = device.xp
    und = g.simple_undirected()
    order = device_build.bfs_order(und)
    members = order[clustering(und)[order] >= threshold]  # in breadth-first order
    k = int(members.shape[0])
    place = xp.full(g.n, -1, np.int64)
    place[members] = xp.arange(k)
    block = xp.where(place >= 0, place // size, -1)
    # every in-edge v -> u (CSC order) with its share w(v, u) / outw(v)
    src = g.in_indices.astype(np.int64)
    dst = xp.repeat(xp.arange(g.n), xp.diff(g.in_offsets).astype(np.int64))
    outw = props.out_weight_sums(g, weights)
    inv_out = props.inverse_or_zero(outw, np.float64)[:, 0]
    w = 1.0 if weights is None else weights[g.in_edge_ids].astype(np.float64)
    in_share = (w * inv_out[src]).astype(props.FLOAT)
    inside = xp.flatnonzero((block[dst] >= 0) & (block[src] == block[dst]))
    inside = inside[xp.argsort(place[dst[inside]], kind="stable")]  # by member
    offsets = xp.searchsorted(place[dst[inside]], xp.arange(k + 1))
    starts = xp.concatenate([xp.arange(0, k, size), xp.full(1, k)])
    return Blocks(members, starts, block, offsets, (place[src[inside]] % size).astype(np.int32),
                  in_share[inside], in_share, outw == 0)


def blocks(g, threshold: float, weights=None, weight_key=None, size: int = BLOCK):
    """The well-connected blocks of ``g`` at ``threshold`` (``size`` members each, at most
    :data:`BLOCK`), from the graph's cache, and this call's build milliseconds."""
    if not 1 <= size <= BLOCK:
        raise ValueError(f"size must be in [1, {BLOCK}], got {size}")
    return cached_build(g, ("shared_clustering", float(threshold), weight_key, size),
                        lambda: _build(g, threshold, weights, size))


@persist
@cuda.jit
def pull(offsets, indices, in_share, block, x, new, base, alpha, teleport):
    """One Jacobi pull, a thread per vertex u: ``new[u]`` and ``base[u]`` (its value without
    the in-edges from its own block); ``teleport`` = (1 - alpha) / n + alpha D / n."""
    for u in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        outside, inside = float64(0.0), float64(0.0)
        for p in range(offsets[u], offsets[u + 1]):
            v = indices[p]
            y = float64(x[v]) * in_share[p]
            if block[u] >= 0 and block[v] == block[u]:
                inside += y
            else:
                outside += y
        base[u] = teleport + alpha * outside
        new[u] = base[u] + alpha * inside


@persist
@cuda.jit
def local_rounds(members, starts, offsets, local, share, x, base, alpha, rounds):
    """``rounds`` Jacobi rounds inside each block (a thread block each, a thread per member,
    the members' ranks in shared memory), then the ranks written back to ``x``."""
    xs = cuda.shared.array(BLOCK, float32)
    b, i = cuda.blockIdx.x, cuda.threadIdx.x
    at = starts[b] + i
    here = at < starts[b + 1]
    if here:
        xs[i] = x[members[at]]
    cuda.syncthreads()
    for _ in range(rounds):
        value = float64(0.0)
        if here:
            value = base[members[at]]
            for p in range(offsets[at], offsets[at + 1]):
                value += alpha * float64(xs[local[p]]) * share[p]
        cuda.syncthreads()  # every member read before any writes
        if here:
            xs[i] = value
        cuda.syncthreads()
    if here:
        x[members[at]] = xs[i]


def pagerank(g, execution, return_info, *, weights, weight_key, personalization, alpha, tol,
             max_iter):
    """:func:`onyx_rapids.pagerank` with ``shared_clustering`` (the module docstring)."""
    a = execution.approximation
    if personalization is not None:
        raise ValueError(f"pagerank: shared_clustering={a.shared_clustering!r} runs with the "
                         "uniform teleport only; drop personalization= or the knob")
    if g.placement == "host":
        raise ValueError("pagerank: shared_clustering iterates on the device; g's edges are in "
                         "host memory (g.to('device') first)")
    s, build_ms = blocks(g, a.shared_clustering, weights, weight_key)
    x, l1, iterations = _iterate(g, s, alpha, tol, max_iter, a.shared_rounds or 4,
                                 execution.block_size)
    info = RunInfo(iterations=iterations, converged=l1 < tol,
                   variant=dict(change_driven=False, direction="pull", fused=False),
                   approximation=a.knobs(),
                   estimate=dict(shared_blocks=s.count, shared_vertices=int(s.members.shape[0]),
                                 shared_edges=int(s.local.shape[0]), shared_build_ms=build_ms,
                                 outer_iterations=iterations, l1_change=l1))
    return finish(g, "pagerank", {"pagerank": x}, info, return_info)


def _iterate(g, s: Blocks, alpha, tol, max_iter, rounds, block_size):
    """The outer iterations from the uniform start: (ranks, the last L1 change, iterations)."""
    xp, n = device.xp, g.n
    x, new, base = (xp.full(n, 1.0 / n, props.FLOAT) for _ in range(3))
    threads = device.block_threads(block_size, 256)
    grid = device.stride_grid(n, threads, 16)
    l1, i = float("inf"), 0
    while i < max_iter and l1 >= tol:
        i += 1
        mass = float(x[s.dangling].astype(np.float64).sum())
        teleport = (1.0 - alpha) / n + alpha * mass / n
        ops.launch_kernel("shared pull", pull, grid, threads, g.in_offsets, g.in_indices,
                          s.in_share, s.block, x, new, base, np.float64(alpha),
                          np.float64(teleport))
        l1 = float(xp.abs(new.astype(np.float64) - x).sum())
        if rounds > 1 and s.count:
            ops.launch_kernel("shared local_rounds", local_rounds, s.count, BLOCK, s.members,
                              s.starts, s.offsets, s.local, s.share, new, base,
                              np.float64(alpha), np.int64(rounds - 1))
            new /= new.sum(dtype=np.float64)  # the fixed point's mass: 1
        x, new = new, x
    return x, l1, i
