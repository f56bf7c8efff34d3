"""The aggregate-then-update iteration shared by the ranking algorithms (MMR, MML).

Each iteration aggregates an edge contribution over the in-edges of every vertex into ``acc``
and then updates every vertex from its aggregate:

    acc(v) = sum_{u in N-(v)} contribution(u, v, e; rows),   x_next(v) = update(acc(v), x(v), ..)

In bulk (NCD) mode ``rows`` is ``x`` and ``acc`` starts at zero each iteration.  In change-driven
mode (ONYX 4.2) ``acc`` is kept on the vertices in float64 and adjusted by ``rows = delta``, the
change of the vertices whose row moved by more than ``tol`` since their last push.  Every
FA/CD/fold/direction combination runs through the same operators.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ._common import Info, check_common, resolve_direction


@cuda.jit(device=True)
def moved(f, v, x_next, pushed, tol):
    return abs(x_next[v, f] - pushed[v, f]) > tol


@cuda.jit(device=True)
def commit(f, v, x_next, pushed, delta_next):
    delta_next[v, f] = x_next[v, f] - pushed[v, f]
    pushed[v, f] = x_next[v, f]
    return True


@cuda.jit(device=True)
def commit_flagged(f, v, x_next, pushed, delta_next, moved_any):
    moved_any[0] = 1  # every writer stores the same value
    return commit(f, v, x_next, pushed, delta_next)


def propagate(g, x0, contribution, update, args, *, tol, max_iter, change_driven, fold,
              direction, feature_aware, block_size):
    """Iterate to convergence; returns (x, Info).  ``args`` holds what the functions read."""
    check_common(tol, max_iter)
    direction = resolve_direction(direction, change_driven)
    k = x0.shape[1]
    acc_dtype = np.float64 if change_driven else np.float32
    x = props.copy(x0)
    args = dict(args, x0=x0, tol=float(tol), acc=props.vertex_property(g, k, dtype=acc_dtype),
                x_next=props.vertex_property(g, k))
    if change_driven:
        args.update(pushed=props.copy(x), delta_next=props.vertex_property(g, k))
        steps = [ops.Vertex(update), ops.Vertex(moved), ops.Vertex(commit)]
        delta, active = props.copy(x), frontier.full(g.n)  # the first push sends everything
    else:
        steps = [ops.Vertex(update)]  # returns True: in a push fold every vertex pushes
        delta = active = None
    opts = dict(k=k, feature_aware=feature_aware, block_size=block_size)
    push_fold = fold and direction == "push"
    if push_fold and change_driven:
        # the folded push marks no frontier (marking every pushed edge's destination cost
        # 4.5x the kernel on rmat): a flag set by the moved vertices tells when to stop
        args["moved_any"] = device.xp.zeros(1, dtype=np.int32)
        steps[-1] = ops.Vertex(commit_flagged)
    if push_fold:  # the folded push kernel reads a complete aggregate: prime it
        ops.edgemap(g, contribution, "acc", dict(args, x=x, rows=x), direction="push", **opts)
        spare = props.vertex_property(g, k, dtype=acc_dtype)

    info = Info(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                             fold=fold, direction=direction))
    for info.iterations in range(1, int(max_iter) + 1):
        active_next = frontier.empty(g.n) if change_driven and not push_fold else None
        call = dict(args, x=x)
        if push_fold:
            # [update v, push v's new row or change] into the next aggregate
            if change_driven:
                spare[...] = args["acc"]
            else:
                props.fill(spare, 0.0)
            call.update(acc_next=spare,
                        rows=args["delta_next"] if change_driven else args["x_next"])
            if change_driven:
                args["moved_any"][0] = 0
            ops.foldmap(g, steps + [ops.Edge(contribution, "acc_next")], call,
                        direction="push", **opts)
            args["acc"], spare = spare, args["acc"]
        else:
            if not change_driven:
                props.fill(args["acc"], 0.0)
            call["rows"] = delta if change_driven else x
            if fold:
                ops.foldmap(g, [ops.Edge(contribution, "acc")] + steps, call, active_in=active,
                            active_out=active_next, direction="pull", **opts)
            else:
                ops.edgemap(g, contribution, "acc", call, active_in=active,
                            direction=direction, **opts)
                ops.vertexmap(g, steps, call, active_out=active_next, **opts)
        done = props.has_converged(args["x_next"], x, tol)
        x, args["x_next"] = args["x_next"], x
        if change_driven:
            delta, args["delta_next"] = args["delta_next"], delta
            active = active_next
        if push_fold and change_driven:
            idle = int(args["moved_any"][0]) == 0
        else:
            idle = change_driven and not frontier.any_active(active)
        if done or idle:
            info.converged = True
            break
    return x, info
