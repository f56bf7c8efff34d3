"""Multimodal learning (docs/algorithms.md).

    AGGR(v) = sum_{u in N-(v)} w(u,v)^T mmode^{i-1}(u)     (J x k; w(u,v) holds J modalities)
    mmode^i(v) = alpha . AGGR(v) + (1 - sum_j alpha_j) mmode^0(v)

Each modality's weights are normalized over the in-edges of every vertex (a vertex whose
in-weights of modality j are all zero gets 0 from it).  Since alpha . AGGR(v) =
sum_u (sum_j alpha_j w_j(u,v)) mmode(u), the edge step folds the J modalities into one value.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, operators as ops, properties as props
from .. import inputs
from ..registry import Input, algorithm
from ._common import AUTO_DIRECTION, finish
from ._propagate import Plan, max_change_test, propagate


@cuda.jit(device=True)
def modality_weight(f, u, v, e, weights):
    return weights[e, f]


@cuda.jit(device=True)
def mixed_edge_weight(u, v, e, mixed_weight):
    return mixed_weight[e, 0]


mixed_mode = ops.Gather("rows", "acc", mixed_edge_weight)  # rows[u, f] * mixed(u, v)


@cuda.jit(device=True)
def mode_update(f, v, acc, x_next, x0, keep):
    x_next[v, f] = acc + keep * x0[v, f]
    return True


@algorithm("multimodal_learning", summary="features spread over J weighted modalities",
           inputs=(Input("init", inputs.VALUES, help="mmode^0, n x k"),),
           columns=("vertex", "mml_{i}"), weights="required",
           options=dict(feature_aware=None, change_driven=None, fold=None, direction=None,
                        pull_fraction=None, block_size=None, width=None,
                        edge_access=None),
           defaults=dict(fold=False), refuse=(AUTO_DIRECTION,))
def multimodal_learning(g, init, alphas=None, tol=1e-6, max_iter=100, *, weights=None,
                        execution, return_info=False):
    """``vertex``, ``mml_0``..``mml_{k-1}`` from mmode^0 = ``init`` and J-modality weights.

    Parameters
    ----------
    g : Graph
    init : frame or array
        mmode^0: a frame keyed by ``vertex`` (or indexed by vertex), or an n x k array in
        ``Graph.vertices`` order.
    alphas : J non-negative floats summing to less than 1, default 0.8 / J each
    tol, max_iter : stop rule as :func:`label_propagation`
    weights : array, optional
        m x J non-negative modality weights in CSR order; default: the graph's weight columns.
    execution : Execution, optional
        Or keywords ``feature_aware``, ``change_driven``, ``fold`` (default False),
        ``direction``, ``pull_fraction``, ``block_size``, ``width``, ``edge_access``.

    Examples
    --------
    >>> import numpy as np, onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("les_miserables"), weight="weight")
    >>> onyx.multimodal_learning(g, np.eye(g.n, 3, dtype=np.float32)).shape
    (77, 4)
    """
    mmode0 = inputs.VALUES.normalize(g, init, "init")
    w = g.edge_weights if weights is None else g.edge_property(weights, name="weights")
    if w is None:
        raise ValueError("multimodal_learning needs edge weights, one column per modality")
    J = w.shape[1]
    if not bool(device.xp.isfinite(w).all()) or bool((w < 0).any()):
        raise ValueError("weights: multimodal_learning needs finite, non-negative edge "
                         "weights")
    a = np.full(J, 0.8 / J) if alphas is None else np.asarray(alphas, dtype=np.float64).ravel()
    if a.shape != (J,) or (a < 0).any() or a.sum() >= 1:
        raise ValueError(f"alphas must be {J} non-negative values (one per weight column) "
                         f"summing to less than 1, got {alphas!r}")
    in_sums = props.vertex_property(g, J)
    ops.edgemap(g, modality_weight, "in_sums", dict(weights=w, in_sums=in_sums),
                direction="pull", options=ops.MapOptions(feature_aware=execution.feature_aware,
                                                         block_size=execution.block_size))
    xp = device.xp
    totals = in_sums[g.out_indices]  # each CSR edge's destination totals
    normalized = xp.where(totals > 0, w / xp.where(totals > 0, totals, 1.0), 0.0)
    mixed = props.column(normalized @ xp.asarray(a), np.float32)
    args = dict(mixed_weight=mixed, keep=float(1.0 - a.sum()), x0=mmode0)
    update = [ops.Vertex(mode_update, aggregate="acc")]
    mm, info = propagate(g, mmode0, mixed_mode, update, args,
                         plan=Plan.of(execution), converged=max_change_test(tol),
                         max_iter=max_iter, threshold=tol)
    return finish(g, "multimodal_learning", {"mml_*": mm}, info, return_info)
