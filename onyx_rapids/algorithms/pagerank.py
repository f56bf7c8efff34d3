"""PageRank (ALGORITHMS.md item 1).

    pr^i(v) = (1 - alpha) / n + alpha * ( sum_{u in N-(v)} pr^{i-1}(u) w(u,v) / outw(u) + D / n )

with D the rank of the dangling vertices.  Change-driven mode is PageRank-Delta (ONYX 4.2):
``acc(v)`` keeps the sum over in-neighbours of their last *pushed* rank share; a vertex pushes
the change since its last push only when it exceeds ``tol / n`` (PageRank's ``tol`` bounds the
L1 change of the whole vector), so the unpushed remainder stays below that bound.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import frontier, operators as ops, properties as props
from ._common import Info, check_common, finish, resolve_direction


@cuda.jit(device=True)
def share(f, u, v, e, rank, inv_out_weight):
    return rank[u, f] * inv_out_weight[u, 0]


@cuda.jit(device=True)
def weighted_share(f, u, v, e, rank, inv_out_weight, weights):
    return rank[u, f] * weights[e, 0] * inv_out_weight[u, 0]


@cuda.jit(device=True)
def update(f, v, acc, rank_next, teleport, alpha, dangling):
    rank_next[v, f] = teleport + alpha * (acc[v, f] + dangling[0])
    acc[v, f] = 0.0
    return True


@cuda.jit(device=True)
def update_delta(f, v, acc, rank_next, pushed, delta_next, teleport, alpha, dangling, eps):
    r = teleport + alpha * (acc[v, f] + dangling[0])
    rank_next[v, f] = r
    change = r - pushed[v, f]
    if abs(change) > eps:
        delta_next[v, f] = change
        pushed[v, f] = r
        return True
    return False


def pagerank(g, alpha=0.85, tol=1e-6, max_iter=100, weighted=False, *, feature_aware=True,
             change_driven=False, fold=False, direction="auto", block_size=None,
             return_info=False):
    """PageRank of every vertex; a frame of ``vertex``, ``pagerank``.

    Example::

        >>> g = Graph.from_edgelist(datasets.load_edges("karate"), "src", "dst", directed=False)
        >>> pagerank(g)["pagerank"].sum()   # doctest: +SKIP
        1.0
    """
    check_common(tol, max_iter, alpha)
    direction = resolve_direction(direction, change_driven)
    if weighted and g.edge_weights is None:
        raise ValueError("weighted=True needs a graph built with weight=...")
    n = g.n
    weights = g.edge_weights[:, :1] if weighted else None
    outw = props.out_weight_sums(g, None if weights is None else weights[:, 0])
    edge_fn = weighted_share if weighted else share
    dangling_weight = (outw == 0).astype(np.float64) / n

    rank = props.vertex_property(g, 1, 1.0 / n)
    args = dict(
        inv_out_weight=props.inverse_or_zero(outw),
        # change-driven: float64, so small changes still register on large aggregates
        acc=props.vertex_property(g, 1, dtype=np.float64 if change_driven else np.float32),
        rank_next=props.vertex_property(g, 1), teleport=(1.0 - alpha) / n, alpha=float(alpha),
        dangling=props.scalar(),
    )
    if weighted:
        args["weights"] = weights
    opts = dict(k=1, feature_aware=feature_aware, block_size=block_size)
    if change_driven:
        # everything is pushed once at the start: pushed = rank, delta = rank
        args.update(pushed=props.copy(rank), delta_next=props.vertex_property(g, 1),
                    eps=float(tol) / n)
        delta, active, step = props.copy(rank), frontier.full(n), update_delta
    else:
        delta, active, step = None, None, update
    push_fold = fold and direction == "push"
    if push_fold:
        # the folded push kernel runs [update v, push v's new share]: prime the first aggregate
        ops.edgemap(g, edge_fn, "acc", dict(args, rank=rank), direction="push", **opts)
        acc_spare = props.fill(props.copy(args["acc"]), 0.0)

    info = Info(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                             fold=fold, direction=direction))
    for info.iterations in range(1, int(max_iter) + 1):
        props.dot_into(args["dangling"], rank, dangling_weight)
        active_next = frontier.empty(n) if change_driven else None
        if push_fold:
            # pushes land in the next aggregate, which starts as this one (CD) or zero (bulk)
            if change_driven:
                acc_spare[...] = args["acc"]
            call = dict(args, acc_next=acc_spare,
                        rank=args["delta_next"] if change_driven else args["rank_next"])
            ops.foldmap(g, [ops.Vertex(step), ops.Edge(edge_fn, "acc_next")], call,
                        active_out=active_next, direction="push", **opts)
            args["acc"], acc_spare = acc_spare, args["acc"]
        else:
            call = dict(args, rank=delta if change_driven else rank)
            if fold:
                ops.foldmap(g, [ops.Edge(edge_fn, "acc"), ops.Vertex(step)], call,
                            active_in=active, active_out=active_next, direction="pull", **opts)
            else:
                ops.edgemap(g, edge_fn, "acc", call, active_in=active, direction=direction,
                            **opts)
                ops.vertexmap(g, step, call, active_out=active_next, **opts)
        change = props.l1_change(args["rank_next"], rank)
        rank, args["rank_next"] = args["rank_next"], rank
        if change_driven:
            delta, args["delta_next"] = args["delta_next"], delta
            active = active_next
        if change < tol:
            info.converged = True
            break
    return finish(g, "pagerank", {"pagerank": rank[:, 0]}, info, return_info)
