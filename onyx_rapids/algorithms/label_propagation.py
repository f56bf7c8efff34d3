"""Label propagation (ALGORITHMS.md item 4), P partitions of k classes each.

    aggr_p(v) = sum_{u in N-(v)} w_p(u,v) lp^{i-1}(u)_p
    lp^i(v)_p = normalize( alpha * normalize(aggr_p(v)) + (1 - alpha) * lp^{i-1}(v)_p )

with labelled vertices clamped to lp^0.  Change-driven mode keeps ``aggr`` on the vertices and
adjusts it by the changes pushed from vertices whose row moved by more than ``tol`` since their
last push (ONYX 4.2).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, io, operators as ops, properties as props
from ._common import Info, check_common, finish, resolve_direction


@cuda.jit(device=True)
def weighted_label(f, u, v, e, rows, weights, k):
    return weights[e, f // k] * rows[u, f]


@cuda.jit(device=True)
def mix(f, v, prob, lp, lp_next, alpha):
    lp_next[v, f] = alpha * prob[v, f] + (1.0 - alpha) * lp[v, f]
    return True


@cuda.jit(device=True)
def settle(f, v, lp_next, lp0, clamped, reference, threshold):
    if clamped[v, 0] != 0:
        lp_next[v, f] = lp0[v, f]
    return abs(lp_next[v, f] - reference[v, f]) > threshold


@cuda.jit(device=True)
def commit(f, v, lp_next, pushed, delta_next):
    delta_next[v, f] = lp_next[v, f] - pushed[v, f]
    pushed[v, f] = lp_next[v, f]
    return True


def _initial_labels(g, labels, k):
    """lp^0 (n x P*k) and the labelled mask from a vertex/label frame or a full array."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k (classes per partition) must be a positive integer, got {k!r}")
    xp = device.xp
    if io.is_frame(labels):
        names = io.label_columns(labels)
        ids, classes = io.read_vertex_frame(g, labels, names, name="labels", complete=False,
                                            dtype=np.int64)
        if classes.size and (int(classes.min()) < 0 or int(classes.max()) >= k):
            raise ValueError(f"labels must be integer classes in [0, {k}), got values from "
                             f"{int(classes.min())} to {int(classes.max())}")
        P = len(names)
        lp0 = xp.full((g.n, P * k), 1.0 / k, dtype=np.float32)
        lp0[ids] = 0.0
        for p in range(P):
            lp0[ids, p * k + classes[:, p]] = 1.0
        labelled = xp.zeros(g.n, dtype=bool)
        labelled[ids] = True
        return lp0, labelled, P
    lp0 = g.vertex_property(labels, name="labels")
    if lp0.shape[1] % k:
        raise ValueError(f"labels has {lp0.shape[1]} columns, not a multiple of k={k}")
    P = lp0.shape[1] // k
    if bool((lp0 < 0).any()):
        raise ValueError("labels (lp^0) must be non-negative")
    rows = lp0.reshape(g.n, P, k)
    one_hot = ((rows == 1).sum(axis=2) == 1) & ((rows == 0).sum(axis=2) == k - 1)
    return lp0, one_hot.all(axis=1), P


def label_propagation(g, labels, k, alpha=0.85, clamp=True, tol=1e-6, max_iter=100, *,
                      feature_aware=True, change_driven=False, fold=False, direction="auto",
                      block_size=None, return_info=False):
    """Class probabilities of every vertex: ``vertex``, ``lp_0``.. and ``label`` (P = 1).

    ``labels``: a frame of ``vertex`` and ``label`` (or ``label_0``.. for P partitions), or a full
    n x P*k lp^0 (rows that are one-hot in every partition count as labelled).

    Example::

        >>> seeds = pd.DataFrame({"vertex": [0, 33], "label": [0, 1]})
        >>> label_propagation(g, seeds, k=2)["label"]   # doctest: +SKIP
    """
    check_common(tol, max_iter, alpha)
    direction = resolve_direction(direction, change_driven)
    lp0, labelled, P = _initial_labels(g, labels, k)
    K = P * k
    if g.edge_weights is None:
        weights = device.full((max(g.m, 1), P), 1.0, np.float32)
    elif g.edge_weights.shape[1] != P:
        raise ValueError(f"label_propagation with {P} partition(s) needs {P} edge weight "
                         f"column(s); the graph has {g.edge_weights.shape[1]} ({g.weight_names})")
    else:
        weights = g.edge_weights
    clamped = props.column(labelled & bool(clamp))
    lp = props.copy(lp0)
    # a change-driven aggregate is adjusted by many small changes: float32 would drop those
    # reaching high in-degree vertices (their aggregate's ulp outgrows the changes), so keep it
    # in float64
    aggr_dtype = np.float64 if change_driven else np.float32
    args = dict(weights=weights, k=int(k), alpha=float(alpha), lp0=lp0, clamped=clamped,
                aggr=props.vertex_property(g, K, dtype=aggr_dtype),
                prob=props.vertex_property(g, K),
                lp_next=props.vertex_property(g, K))
    update = [ops.Normalize("aggr", "prob", k), ops.Vertex(mix), ops.Normalize("lp_next", None, k),
              ops.Vertex(settle)]
    if change_driven:
        args.update(pushed=props.copy(lp), delta_next=props.vertex_property(g, K),
                    threshold=float(tol))
        update.append(ops.Vertex(commit))
        delta, active = props.copy(lp), frontier.full(g.n)
    else:
        args["threshold"] = -1.0  # bulk: every vertex goes on and pushes
        delta = active = None
    opts = dict(k=K, feature_aware=feature_aware, block_size=block_size)
    push_fold = fold and direction == "push"
    if push_fold:  # the folded push kernel reads a complete aggregate: prime it
        ops.edgemap(g, weighted_label, "aggr", dict(args, rows=lp), direction="push", **opts)
        aggr_spare = props.vertex_property(g, K, dtype=aggr_dtype)

    info = Info(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                             fold=fold, direction=direction))
    for info.iterations in range(1, int(max_iter) + 1):
        active_next = frontier.empty(g.n) if change_driven else None
        call = dict(args, lp=lp, reference=args["pushed"] if change_driven else lp)
        if push_fold:
            # [update v, push v's new row] in one kernel; pushes land in the next aggregate,
            # which starts as this one (CD) or zero (bulk)
            if change_driven:
                aggr_spare[...] = args["aggr"]
            else:
                props.fill(aggr_spare, 0.0)
            call.update(aggr_next=aggr_spare,
                        rows=args["delta_next"] if change_driven else args["lp_next"])
            ops.foldmap(g, update + [ops.Edge(weighted_label, "aggr_next")], call,
                        active_out=active_next, direction="push", **opts)
            args["aggr"], aggr_spare = aggr_spare, args["aggr"]
        else:
            if not change_driven:
                props.fill(args["aggr"], 0.0)
            call["rows"] = delta if change_driven else lp
            if fold:
                ops.foldmap(g, [ops.Edge(weighted_label, "aggr")] + update, call,
                            active_in=active, active_out=active_next, direction="pull", **opts)
            else:
                ops.edgemap(g, weighted_label, "aggr", call, active_in=active,
                            direction=direction, **opts)
                ops.vertexmap(g, update, call, active_out=active_next, **opts)
        done = props.has_converged(args["lp_next"], lp, tol)
        lp, args["lp_next"] = args["lp_next"], lp
        if change_driven:
            delta, args["delta_next"] = args["delta_next"], delta
            active = active_next
        if done or (change_driven and not frontier.any_active(active)):
            info.converged = True
            break
    columns = {"lp_*": lp}
    if P == 1:
        columns["label"] = lp.argmax(axis=1).astype(np.int32)
    return finish(g, "label_propagation", columns, info, return_info)
