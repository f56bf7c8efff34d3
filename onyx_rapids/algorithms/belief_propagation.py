"""Sum-product belief propagation (docs/algorithms.md item 6) on an undirected graph.

    m^i_uv = normalize( (b^{i-1}(u) o m^{i-1}_vu^{o-1}) Psi ),
    b^i(v) = normalize( phi(v) o prod_{u in N-(v)} m^i_uv )

Messages live on the directed edges (m x k, CSR order) and each edge knows its reverse.  The
product over in-neighbours is a sum of logs, and the belief is the softmax of
``log phi + sum log m`` shifted by its maximum, so vertices of degree 10^5 stay finite.

Change-driven mode (ONYX 4.2): the sum of log messages stays on the vertices (float64); only
vertices whose belief moved by more than ``tol`` since their last push recompute their
out-messages, each removing the old message from the destination's sum and adding the new one.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ..operators import group_broadcast
from .. import inputs
from ..registry import Input, algorithm
from ._common import PULL_FOLD, RunInfo, finish, pull_fold_direction


@cuda.jit(device=True)
def message(f, u, v, e, belief, msg, msg_next, reverse, potential, potential_row_sum, k,
            lanes):
    back = reverse[e]
    value = 0.0  # (q Psi)_f with q = b(u) / m_vu, Hadamard
    total = 0.0  # the message's normalizer: sum over f of (q Psi)_f = q . rowsum(Psi)
    if lanes != 0:  # the k lanes of the edge: one quotient each, shared by shuffles
        q = belief[u, f] / msg[back, f]
        for j in range(k):
            qj = group_broadcast(q, lanes, f, j)
            value += qj * potential[j, f]
            total += qj * potential_row_sum[j]
    else:  # one thread: every quotient itself
        for j in range(k):
            qj = belief[u, j] / msg[back, j]
            value += qj * potential[j, f]
            total += qj * potential_row_sum[j]
    m = value / total
    msg_next[e, f] = m
    return math.log(m)


@cuda.jit(device=True)
def message_change(f, u, v, e, belief, msg, msg_next, reverse, potential, potential_row_sum,
                   k, lanes):
    old = msg[e, f]
    return message(f, u, v, e, belief, msg, msg_next, reverse, potential, potential_row_sum,
                   k, lanes) - math.log(old)


@cuda.jit(device=True)
def add_prior(f, v, log_aggr, scores, log_prior):
    scores[v, f] = log_aggr[v, f] + log_prior[v, f]
    return True


@cuda.jit(device=True)
def moved(f, v, belief_next, pushed, tol):
    return abs(belief_next[v, f] - pushed[v, f]) > tol


@cuda.jit(device=True)
def commit(f, v, belief_next, pushed):
    pushed[v, f] = belief_next[v, f]
    return True


@algorithm("belief_propagation", summary="loopy belief propagation, k states per vertex",
           graph="undirected",
           inputs=(Input("priors", inputs.POSITIVE_VALUES, help="phi > 0, n x k"),
                   Input("potential", inputs.MATRIX, help="Psi, positive symmetric k x k")),
           columns=("vertex", "belief_{i}"),
           options=dict(feature_aware=None, change_driven=(False, True), fold=None, direction=None,
                        block_size=None),
           defaults=dict(fold=True), refuse=(PULL_FOLD,))
def belief_propagation(g, priors, potential, tol=1e-6, max_iter=100, *, execution,
                       return_info=False):
    """Marginal beliefs of every vertex: ``vertex``, ``belief_0``..``belief_{k-1}``.

    Parameters
    ----------
    g : Graph
        Undirected (every directed edge has its reverse); weights are not used.
    priors : frame or array
        phi > 0: a frame keyed by ``vertex`` (or indexed by vertex), or an n x k array in
        ``Graph.vertices`` order.
    potential : array or DataFrame
        Psi, a positive symmetric k x k matrix shared by all edges.
    tol, max_iter : stop when no belief moves by more than ``tol``, or after ``max_iter``.
    execution : Execution, optional
        Or keywords ``feature_aware``, ``change_driven``, ``fold`` (default True),
        ``direction``, ``block_size``.

    Examples
    --------
    >>> import numpy as np, onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))  # undirected
    >>> priors = np.full((g.n, 2), 0.5, dtype=np.float32); priors[0] = [0.9, 0.1]
    >>> onyx.belief_propagation(g, priors, [[0.9, 0.1], [0.1, 0.9]]).shape
    (34, 3)
    """
    change_driven, fold = execution.change_driven, execution.fold
    feature_aware, block_size = execution.feature_aware, execution.block_size
    direction = pull_fold_direction(execution)
    phi = inputs.POSITIVE_VALUES.normalize(g, priors, "priors")
    k = phi.shape[1]
    psi = inputs.MATRIX.normalize(potential, k, "potential", "priors")
    if bool((phi <= 0).any()):
        raise ValueError("priors must be positive (phi > 0)")
    try:
        reverse = g.reverse_edge
    except ValueError as e:
        raise ValueError(f"belief_propagation needs every edge's reverse: {e}") from e
    xp = device.xp
    log_prior = xp.log(phi)
    belief = phi / phi.sum(axis=1, keepdims=True)
    msg = props.edge_values(g, k, 1.0 / k)
    args = dict(reverse=reverse, k=int(k), log_prior=log_prior, tol=float(tol),
                potential=device.asarray(psi.astype(np.float32)),
                potential_row_sum=device.asarray(psi.sum(axis=1).astype(np.float32)),
                log_aggr=props.vertex_property(g, k, dtype=np.float64 if change_driven
                                               else np.float32),
                scores=props.vertex_property(g, k), belief_next=props.vertex_property(g, k),
                msg_next=props.edge_values(g, k))
    steps = [ops.Vertex(add_prior), ops.Normalize("scores", "belief_next", log=True)]
    if change_driven:
        # the sum of the initial messages 1/k; every vertex starts active (nothing pushed yet)
        in_degree = g.in_degree.astype(np.float64)[:, None]
        args["log_aggr"][...] = in_degree * math.log(1.0 / k)
        args["pushed"] = props.fill(props.copy(belief), -1.0)
        steps += [ops.Vertex(moved), ops.Vertex(commit)]
        edge_fn, active = message_change, None
    else:
        edge_fn, active = message, None
    options = ops.MapOptions(feature_aware=feature_aware, block_size=block_size)
    info = RunInfo(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                             fold=fold, direction=direction))
    for info.iterations in range(1, int(max_iter) + 1):
        if change_driven:
            args["msg_next"][...] = msg  # messages of inactive sources stay as they are
            active_next = frontier.empty(g.n)
        else:
            props.fill(args["log_aggr"], 0.0)
            active_next = None
        call = dict(args, belief=belief, msg=msg)
        if fold:
            ops.foldmap(g, [ops.Edge(edge_fn, "log_aggr")] + steps, call, active_in=active,
                        active_out=active_next, direction="pull", k=k, options=options)
        else:
            ops.edgemap(g, edge_fn, "log_aggr", call, k=k, active_in=active,
                        direction=direction, options=options)
            ops.vertexmap(g, steps, call, k=k, active_out=active_next, options=options)
        done = props.has_converged(args["belief_next"], belief, tol)
        belief, args["belief_next"] = args["belief_next"], belief
        msg, args["msg_next"] = args["msg_next"], msg
        if change_driven:
            active = active_next
            done = done or not frontier.any_active(active)
        if done:
            info.converged = True
            break
    return finish(g, "belief_propagation", {"belief_*": belief}, info, return_info)
