"""PageRank and personalized PageRank (ALGORITHMS.md items 1 and 2), one iteration for both.

    x^i_f(v) = alpha * ( sum_{u in N-(v)} x^{i-1}_f(u) w(u,v) / outw(u) + D_f t_f(v) )
               + (1 - alpha) t_f(v)

with D_f the mass of feature f on dangling vertices and t_f the teleport vector: uniform 1/n for
PageRank (k = 1), e_{s_f} for the PageRank personalized to source s_f (k sources at once, one
n x k property).  Change-driven mode is PageRank-Delta (ONYX 4.2): ``acc(v)`` keeps the sum over
in-neighbours of their last *pushed* share; a vertex pushes the change since its last push only
when some feature moved by more than ``tol / n`` (``tol`` bounds a feature's L1 change), so the
unpushed remainder stays below that bound.

Direction (SIMD-X's push-pull PageRank, the Ligra rule): change-driven with ``direction="auto"``,
each iteration pushes when the active vertices' out-edges are at most ``pull_fraction`` (0.3) of
all edges and pulls above (0: pull whenever the active vertices have an out-edge; 1: always
push).  Pushing walks the active vertices' out-edges with atomics; pulling walks every vertex's
in-edges, takes contributions from active sources only and needs no atomics.  The first
iteration (every vertex active) pulls, the later ones push once few vertices still move.
Bulk iterations (``change_driven=False``) always pull under ``"auto"``: every vertex is active,
so the rule would always choose pull.  ``"push"`` and ``"pull"`` force one direction.  Folded
kernels have a fixed direction, so with ``fold=True`` ``"auto"`` means the folded push kernel
(change-driven) or the folded pull kernel (bulk), as before, and ignores ``pull_fraction``.
``return_info=True`` reports the direction of each iteration as ``directions``.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ..kernels import pagerank as fused_kernel
from ._common import (Info, check_common, check_traversal_options, choose_direction, finish,
                      resolve_direction)


@cuda.jit(device=True)
def share(f, u, v, e, rank, inv_out_weight):
    return rank[u, f] * inv_out_weight[u, 0]


@cuda.jit(device=True)
def weighted_share(f, u, v, e, rank, inv_out_weight, weights):
    return rank[u, f] * weights[e, 0] * inv_out_weight[u, 0]


@cuda.jit(device=True)
def teleport(f, v, sources, uniform):
    if sources[f] < 0:
        return uniform
    return 1.0 if v == sources[f] else 0.0


@cuda.jit(device=True)
def update(f, v, acc, rank_next, alpha, dangling, sources, uniform):
    t = teleport(f, v, sources, uniform)
    rank_next[v, f] = alpha * (acc[v, f] + dangling[f] * t) + (1.0 - alpha) * t
    acc[v, f] = 0.0
    return True


@cuda.jit(device=True)
def update_changed(f, v, acc, rank_next, pushed, alpha, dangling, sources, uniform, eps):
    t = teleport(f, v, sources, uniform)
    rank_next[v, f] = alpha * (acc[v, f] + dangling[f] * t) + (1.0 - alpha) * t
    return abs(rank_next[v, f] - pushed[v, f]) > eps


@cuda.jit(device=True)
def commit(f, v, rank_next, pushed, delta_next):
    delta_next[v, f] = rank_next[v, f] - pushed[v, f]
    pushed[v, f] = rank_next[v, f]
    return True


def pagerank(g, alpha=0.85, tol=1e-6, max_iter=100, weighted=False, *, feature_aware=True,
             change_driven=False, fold=None, direction="auto", pull_fraction=0.3,
             fused=None, block_size=None, return_info=False):
    """PageRank of every vertex; a frame of ``vertex``, ``pagerank``.

    ``fold``: one kernel per iteration (edge and vertex steps folded) or two; ``None`` (the
    default) folds bulk iterations that pull (one launch fewer, 30 against 42 ms on rmat scale
    22, H100) and leaves change-driven ones unfolded.
    ``direction``: ``"push"``, ``"pull"`` or ``"auto"``; with ``change_driven=True`` (unfolded)
    ``"auto"`` pushes an iteration when the active vertices' out-edges are at most
    ``pull_fraction`` (in [0, 1]) of all edges and pulls it otherwise; bulk iterations pull, and
    folded runs keep their kernel's direction (see the module doc).  The info (``return_info``,
    ``df.attrs``) holds ``direction`` (``"auto"`` when chosen per iteration) and
    ``directions``, the one each iteration used.
    ``fused``: run every iteration in one persistent kernel (:mod:`onyx_rapids.kernels.pagerank`:
    degree-binned pull, the convergence test on the device, no launch or read per iteration).
    ``None`` (the default) fuses bulk, unweighted, pulling runs (``fold`` not False); ``True``
    with other options raises ValueError; ``False`` runs one operator launch per iteration.

    Example::

        >>> g = Graph.from_edgelist(datasets.load_edges("karate"), "src", "dst", directed=False)
        >>> pagerank(g)["pagerank"].sum()   # doctest: +SKIP
        1.0
    """
    if _use_fused(g, fused, change_driven=change_driven, weighted=weighted, fold=fold,
                  direction=direction):
        check_common(tol, max_iter, alpha)
        check_traversal_options(direction, pull_fraction)
        rank, info = _fused(g, -1, float(alpha), float(tol), int(max_iter), feature_aware,
                            block_size)
        return finish(g, "pagerank", {"pagerank": rank}, info, return_info)
    sources = device.full(1, -1, np.int64)
    rank, info = _iterate(g, sources, alpha, tol, max_iter, weighted, feature_aware,
                          change_driven, fold, direction, pull_fraction, block_size)
    return finish(g, "pagerank", {"pagerank": rank[:, 0]}, info, return_info)


def personalized_pagerank(g, sources, alpha=0.85, tol=1e-6, max_iter=100, *,
                          feature_aware=True, change_driven=False, fold=None,
                          direction="auto", pull_fraction=0.3, fused=None, block_size=None,
                          return_info=False):
    """PageRank personalized to each of ``sources`` (original ids), all k at once.

    Returns ``vertex``, ``ppr_0``..``ppr_{k-1}``: column f is personalized to ``sources[f]``.
    ``direction`` and ``pull_fraction`` as :func:`pagerank` (change-driven, a vertex is active
    while any of its k features moves).  ``fused`` as :func:`pagerank`, for one source (k = 1)
    only: ``None`` fuses a bulk pulling run from one source.

    Example::

        >>> personalized_pagerank(g, sources=[0, 33])[["ppr_0", "ppr_1"]].sum()   # doctest: +SKIP
    """
    ids = device.to_host(g.to_internal(np.asarray(sources).ravel()))
    if ids.size == 0:
        raise ValueError("sources must name at least one vertex")
    if _use_fused(g, fused, change_driven=change_driven, fold=fold, direction=direction,
                  sources=ids.size):
        check_common(tol, max_iter, alpha)
        check_traversal_options(direction, pull_fraction)
        rank, info = _fused(g, int(ids[0]), float(alpha), float(tol), int(max_iter),
                            feature_aware, block_size)
        return finish(g, "personalized_pagerank", {"ppr_*": rank[:, None]}, info, return_info)
    internal = device.asarray(np.asarray(ids, dtype=np.int64))
    rank, info = _iterate(g, internal, alpha, tol, max_iter, False, feature_aware,
                          change_driven, fold, direction, pull_fraction, block_size)
    return finish(g, "personalized_pagerank", {"ppr_*": rank}, info, return_info)


def _use_fused(g, fused, *, change_driven=False, weighted=False, fold=None, direction="auto",
               sources=1) -> bool:
    """Whether to run :func:`_fused`: ``fused`` as given (True with an option it cannot
    honour is a ValueError naming the option), or, when None, whenever it can."""
    conflicts = [name for name, bad in (("change_driven=True", change_driven),
                                        ("weighted=True", weighted),
                                        ("fold=False", fold is False),
                                        (f"direction={direction!r}", direction == "push"),
                                        (f"{sources} sources (it runs one)", sources != 1))
                 if bad]
    if fused is None:
        return not conflicts and g.m > 0
    if fused and conflicts:
        raise ValueError("fused=True runs bulk, unweighted pull iterations from one teleport "
                         f"vector; it cannot be combined with {', '.join(conflicts)}")
    return bool(fused)


def _fused(g, source, alpha, tol, max_iter, feature_aware, block_size):
    """Every iteration in :func:`onyx_rapids.kernels.pagerank.pagerank_fused` (one launch);
    ``source`` (internal id) personalizes the teleport, -1 keeps it uniform."""
    xp, n = device.xp, g.n
    work = fused_kernel.pull_work(g)
    if source < 0:
        ranks = xp.full((2, n), 1.0 / n, dtype=np.float32)
        dangling = work["dangling"] / n
    else:
        ranks = xp.zeros((2, n), dtype=np.float32)
        ranks[0, source] = 1.0
        dangling = float(device.to_host(work["inv_out"][source:source + 1])[0] == 0)
    ys = xp.empty((2, n), dtype=np.float32)
    ys[0] = ranks[0] * work["inv_out"]
    heavy = max(1, work["heavy"])
    out = xp.zeros(2, dtype=np.int64)
    call = (g.in_offsets, g.in_indices, work["order"], work["bin_start"], work["bin_units"],
            work["chunk_start"], work["chunk_slot"], work["slot_vertex"], work["slot_chunks"],
            xp.zeros(heavy, dtype=np.float64), xp.zeros(heavy, dtype=np.int32),
            work["inv_out"], ranks, ys, xp.zeros((3, 2), dtype=np.float64), np.float64(alpha),
            np.float64(1.0 / n), np.int64(source), np.float64(dangling), np.float64(tol),
            np.int64(max_iter), np.int64(work["chunk"]), np.int64(work["chunks"]), out)
    kernel = fused_kernel.pagerank_fused
    block = device.block_threads(block_size, 256)
    grid = 1
    if not device.is_simulator():
        grid = min(device.multiprocessor_count() * (2048 // block),
                   device.cooperative_blocks(kernel, call, block))
    kernel[grid, block](*device.kernel_args(call))
    iterations, converged = (int(x) for x in device.to_host(out))
    info = Info(iterations=iterations, converged=bool(converged),
                variant=dict(feature_aware=feature_aware, change_driven=False, fold=True,
                             fused=True, direction="pull"),
                directions=["pull"] * iterations)
    return ranks[iterations % 2], info


def _iterate(g, sources, alpha, tol, max_iter, weighted, feature_aware, change_driven, fold,
             direction, pull_fraction, block_size):
    check_common(tol, max_iter, alpha)
    check_traversal_options("auto" if direction is None else direction, pull_fraction)
    if fold is None:  # bulk iterations that pull: folded
        fold = not change_driven and direction in (None, "auto", "pull")
    if change_driven and not fold and direction in (None, "auto"):
        direction = "auto"  # choose_direction picks each iteration's from the active vertices
    else:
        direction = resolve_direction(direction, change_driven)
    if weighted and g.edge_weights is None:
        raise ValueError("weighted=True needs a graph built with weight=...")
    n, k = g.n, int(sources.shape[0])
    weights = g.edge_weights[:, :1] if weighted else None
    outw = props.out_weight_sums(g, None if weights is None else weights[:, 0])
    edge_fn = weighted_share if weighted else share
    dangling_mask = (outw == 0).astype(np.float64)

    if int(sources[0]) < 0:
        rank = props.vertex_property(g, 1, 1.0 / n)
    else:
        rank = props.vertex_property(g, k)
        rank[sources, device.xp.arange(k)] = 1.0
    # change-driven: the aggregate is adjusted by many small changes; float64 keeps them
    acc_dtype = np.float64 if change_driven else np.float32
    args = dict(inv_out_weight=props.inverse_or_zero(outw), alpha=float(alpha),
                acc=props.vertex_property(g, k, dtype=acc_dtype),
                rank_next=props.vertex_property(g, k), dangling=props.vector(k),
                sources=sources, uniform=1.0 / n)
    if weighted:
        args["weights"] = weights
    opts = dict(k=k, feature_aware=feature_aware, block_size=block_size)
    if change_driven:
        # everything is pushed once at the start: pushed = rank, delta = rank
        args.update(pushed=props.copy(rank), delta_next=props.vertex_property(g, k),
                    eps=float(tol) / n)
        delta, active = props.copy(rank), frontier.full(n)
        steps = [ops.Vertex(update_changed), ops.Vertex(commit)]
    else:
        delta, active = None, None
        steps = [ops.Vertex(update)]
    push_fold = fold and direction == "push"
    if push_fold:
        # the folded push kernel runs [update v, push v's new share]: prime the first aggregate
        ops.edgemap(g, edge_fn, "acc", dict(args, rank=rank), direction="push", **opts)
        acc_spare = props.fill(props.copy(args["acc"]), 0.0)

    props.dot_into(args["dangling"], dangling_mask, rank)
    info = Info(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                             fold=fold, fused=False, direction=direction), directions=[])
    for info.iterations in range(1, int(max_iter) + 1):
        way = choose_direction(g, active, direction, pull_fraction)  # "auto": change-driven
        info.directions.append(way)
        active_next = frontier.empty(n) if change_driven and not push_fold else None
        if push_fold:
            # pushes land in the next aggregate, which starts as this one (CD) or zero (bulk)
            if change_driven:
                acc_spare[...] = args["acc"]
            call = dict(args, acc_next=acc_spare,
                        rank=args["delta_next"] if change_driven else args["rank_next"])
            # no active_out: every vertex runs the folded kernel's vertex steps, and marking
            # the destination of every pushed edge cost 4.5x the kernel on rmat
            ops.foldmap(g, steps + [ops.Edge(edge_fn, "acc_next")], call,
                        direction="push", **opts)
            args["acc"], acc_spare = acc_spare, args["acc"]  # bulk: update zeroed the old one
        else:
            call = dict(args, rank=delta if change_driven else rank)
            if fold:
                ops.foldmap(g, [ops.Edge(edge_fn, "acc")] + steps, call, active_in=active,
                            active_out=active_next, direction="pull", **opts)
            else:
                # pull (change-driven): every vertex's in-edges, from active sources only
                ops.edgemap(g, edge_fn, "acc", call, active_in=active, direction=way, **opts)
                ops.vertexmap(g, steps, call, active_out=active_next, **opts)
        # the stop test, and the next iteration's dangling mass, in one pass
        change = props.l1_change_and_dot(args["rank_next"], rank, dangling_mask,
                                         args["dangling"])
        rank, args["rank_next"] = args["rank_next"], rank
        if change_driven:
            delta, args["delta_next"] = args["delta_next"], delta
            active = active_next
        if change < tol:
            info.converged = True
            break
    return rank, info
