"""Multimodal learning (ALGORITHMS.md item 8).

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
from ._common import check_common, finish
from ._propagate import propagate


@cuda.jit(device=True)
def modality_weight(f, u, v, e, weights):
    return weights[e, f]


@cuda.jit(device=True)
def mixed_mode(f, u, v, e, rows, mixed_weight):
    return mixed_weight[e, 0] * rows[u, f]


@cuda.jit(device=True)
def mode_update(f, v, acc, x_next, x0, keep):
    x_next[v, f] = acc[v, f] + keep * x0[v, f]
    return True


def multimodal_learning(g, init, alphas=None, tol=1e-6, max_iter=100, *, weights=None,
                        feature_aware=True, change_driven=False, fold=False, direction="auto",
                        block_size=None, return_info=False):
    """``vertex``, ``mml_0``..``mml_{k-1}`` from mmode^0 = ``init`` and J-modality weights.

    Example::

        >>> multimodal_learning(g, np.eye(g.n, 3, dtype=np.float32), alphas=[0.5, 0.3])   # doctest: +SKIP
    """
    check_common(tol, max_iter)
    mmode0 = g.vertex_property(init, name="init")
    w = g.edge_weights if weights is None else g.edge_property(weights, name="weights")
    if w is None:
        raise ValueError("multimodal_learning needs edge weights, one column per modality")
    J = w.shape[1]
    if bool((w < 0).any()):
        raise ValueError("multimodal_learning needs non-negative edge weights")
    a = np.full(J, 0.8 / J) if alphas is None else np.asarray(alphas, dtype=np.float64).ravel()
    if a.shape != (J,) or (a < 0).any() or a.sum() >= 1:
        raise ValueError(f"alphas must be {J} non-negative values (one per weight column) "
                         f"summing to less than 1, got {alphas!r}")
    in_sums = props.vertex_property(g, J)
    ops.edgemap(g, modality_weight, "in_sums", dict(weights=w, in_sums=in_sums),
                direction="pull", feature_aware=feature_aware, block_size=block_size)
    xp = device.xp
    totals = in_sums[g.out_indices]  # each CSR edge's destination totals
    normalized = xp.where(totals > 0, w / xp.where(totals > 0, totals, 1.0), 0.0)
    mixed = props.column(normalized @ xp.asarray(a), np.float32)
    args = dict(mixed_weight=mixed, keep=float(1.0 - a.sum()))
    mm, info = propagate(g, mmode0, mixed_mode, mode_update, args, tol=tol, max_iter=max_iter,
                         change_driven=change_driven, fold=fold, direction=direction,
                         feature_aware=feature_aware, block_size=block_size)
    return finish(g, "multimodal_learning", {"mml_*": mm}, info, return_info)
