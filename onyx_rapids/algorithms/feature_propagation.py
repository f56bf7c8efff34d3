"""Feature propagation, APPNP (docs/algorithms.md).

    H^0 = X,   H^i = (1 - alpha) A_hat H^{i-1} + alpha X,   A_hat = D^-1/2 (A + I) D^-1/2

over the simple undirected graph (directions dropped, parallel edges once, self-loops dropped),
D the degree of A + I (PyG's gcn_norm), a fixed number of iterations.  The rows are kept
scaled as well, ``y = D^-1/2 H``, so that the edge step brings y(u) (one gather per edge and
feature, not two); the vertex step scales the sum by 1 / sqrt(d_v), adds the self-loop term
h(v) / d_v and the teleport, and writes both h and y of the next iteration.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, inputs, operators as ops, properties as props
from ..kernels import pagerank as fused_kernel
from ..execution import EDGE_ACCESS
from ..registry import Input, Refuse, algorithm
from ._common import PULL_FOLD, RunInfo, finish
from ._propagate import Bulk, NoStop, Plan, Run, fused_choice, iterate


scaled_neighbour = ops.Gather("y", "acc")  # y[u] = D^-1/2 h[u]: the edge brings y[u, f]


@cuda.jit(device=True)
def teleport_mix(f, v, acc, y, h_next, y_next, x, inv_sqrt_degree, alpha):
    s = inv_sqrt_degree[v, 0]
    h = (1.0 - alpha) * s * (acc + y[v, f]) + alpha * x[v, f]  # y[v]: the self-loop
    h_next[v, f] = h
    y_next[v, f] = h * s
    return True


@algorithm("feature_propagation", summary="APPNP feature propagation, fixed iterations",
           inputs=(Input("features", inputs.VALUES, help="X, n x k"),),
           columns=("vertex", "h_{i}"),
           options=dict(feature_aware=None, fold=None, direction=None, block_size=None,
                        width=None, fused=None, edge_access=None),
           defaults=dict(fold=True),
           refuse=(PULL_FOLD,
                   Refuse(dict(fused=True, fold=False), "the fused kernel is one folded kernel"),
                   Refuse(dict(fused=True, edge_access=EDGE_ACCESS),
                                     "the fused kernel chooses its own edge reads")),
           params=dict(alpha=inputs.Float(0, 1)))
def feature_propagation(g, features, alpha=0.1, iterations=10, *, execution,
                        return_info=False):
    """APPNP propagation of ``features``: ``vertex``, ``h_0``..``h_{k-1}``.

    Parameters
    ----------
    g : Graph
        Propagates over its simple undirected view (weights are not used).
    features : frame or array
        X: a frame keyed by ``vertex`` (or indexed by vertex), or an n x k array in
        ``Graph.vertices`` order.
    alpha : float in [0, 1], default 0.1
        Teleport (restart) weight.
    iterations : int, default 10
    execution : Execution, optional
        Or keywords ``feature_aware``, ``fold`` (default True), ``direction``,
        ``block_size``, ``width``, ``fused`` (default: with one feature column, every
        iteration in one launch of PageRank's fused kernel, its in-degree bins and heavy
        vertex chunks; more columns, or ``edge_access`` given, run the generated folded
        kernel), ``edge_access`` (see :class:`~onyx_rapids.Execution`).

    Examples
    --------
    >>> import numpy as np, onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))  # undirected
    >>> X = np.random.default_rng(0).random((g.n, 4), dtype=np.float32)
    >>> onyx.feature_propagation(g, X).shape
    (34, 5)
    """
    plan = Plan.of(execution)
    x = inputs.VALUES.normalize(g, features, "features")
    k = x.shape[1]
    simple = g.simple_undirected()
    degree = device.xp.diff(simple.out_offsets).astype(np.float64) + 1.0  # A + I
    inv_sqrt_degree = props.column(1.0 / device.xp.sqrt(degree))
    if fused_choice("feature_propagation", simple, plan, width=k, nbytes=simple.m * 4,
                    too_wide="the fused kernel propagates one feature column; these "
                    f"features have {k}"):
        h = _fused(simple, x, inv_sqrt_degree, alpha, int(iterations), execution)
        info = RunInfo(iterations=int(iterations), converged=True,
                       variant=dict(feature_aware=execution.feature_aware, fold=True,
                                    fused=True, direction="pull"))
        return finish(g, "feature_propagation", {"h_*": h}, info, return_info)
    h, info = _iterate(simple, x, inv_sqrt_degree, alpha, int(iterations), plan)
    return finish(g, "feature_propagation", {"h_*": h}, info, return_info)


def _iterate(simple, x, inv_sqrt_degree, alpha, iterations, plan):
    """The iterations through the propagation loop: bulk pulls (or pushes), every one of
    them (a fixed number, as APPNP: converged)."""
    k = x.shape[1]
    args = dict(x=x, alpha=float(alpha), y=x * inv_sqrt_degree,
                y_next=props.vertex_property(simple, k), inv_sqrt_degree=inv_sqrt_degree)
    info = RunInfo(variant=dict(feature_aware=plan.execution.feature_aware, fold=plan.fold,
                                direction=plan.direction))
    run = Run(simple, x, scaled_neighbour, args, plan, info, writes="h_next",
              pairs=(("y", "y_next"),))
    policy, stop = Bulk(), NoStop()
    steps = policy.steps(run, stop, [ops.Vertex(teleport_mix, aggregate="acc")], plan)
    h, info = iterate(run, policy, steps, stop, iterations)
    info.converged = True
    return h, info


def _fused(simple, x, inv_sqrt_degree, alpha, iterations, execution):
    """Every APPNP iteration in one launch of the fused kernel (its ``APPNP`` step): the rows
    ``h`` and ``y = h / sqrt(d)`` kept as its ranks and shares; an n x 1 result."""
    xp = device.xp
    s = xp.ascontiguousarray(inv_sqrt_degree[:, 0])
    ranks = xp.empty((2, simple.n), dtype=np.float32)
    ranks[0] = x[:, 0]
    order = fused_kernel.gather_order(simple)  # the shares in degree order where hubs gather
    ys = xp.empty((2, simple.n), dtype=np.float32)
    if order is None:
        ys[0] = ranks[0] * s
    else:
        ys[0, order[0]] = ranks[0] * s
    if iterations:
        work, indices, _ = fused_kernel.resident(simple)
        done, _, _ = fused_kernel.run(
            simple, work, s, device.zeros(1, np.float32), ranks, ys, indices=indices,
            alpha=1.0 - alpha, source=fused_kernel.APPNP, teleport=ranks[0].copy(),
            dangling=0.0, tol=-1.0, max_iter=iterations, threshold=0.0, switch_edges=-1.0,
            block_size=execution.block_size, order=order)
        assert done == iterations, (done, iterations)
    return ranks[iterations % 2].reshape(-1, 1)
