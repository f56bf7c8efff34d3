"""Multi-manifold ranking (ALGORITHMS.md item 7).

    waggr(v) = sum_{u in N-(v)} w(u,v) o mm^{i-1}(u)      haggr(v) = (sum_{u in N-(v)} w(u,v))^{o-1}
    mm^i(v) = alpha * waggr(v) o haggr(v) + (1 - alpha) * mm^0(v)

w holds k positive values per edge; haggr is computed once; a vertex with no in-neighbours keeps
only the second term.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, operators as ops, properties as props
from ._common import check_common, finish
from ._propagate import propagate


@cuda.jit(device=True)
def edge_weight(f, u, v, e, weights):
    return weights[e, f]


@cuda.jit(device=True)
def weighted_rank(f, u, v, e, rows, weights):
    return weights[e, f] * rows[u, f]


@cuda.jit(device=True)
def rank_update(f, v, acc, x_next, x0, inv_weight_sum, alpha):
    x_next[v, f] = alpha * acc[v, f] * inv_weight_sum[v, f] + (1.0 - alpha) * x0[v, f]
    return True


def multi_manifold_ranking(g, init, alpha=0.85, tol=1e-6, max_iter=100, *, weights=None,
                           feature_aware=True, change_driven=False, fold=False,
                           direction="auto", block_size=None, return_info=False):
    """Rank every vertex on k manifolds: ``vertex``, ``mmr_0``..``mmr_{k-1}``.

    ``init`` is mm^0 (a frame keyed by ``vertex`` or an n x k array); the k positive edge
    weights per edge come from the graph (``weight=[...]`` at construction) or ``weights``
    (an m x k array in CSR order).

    Example::

        >>> multi_manifold_ranking(g, np.eye(g.n, 2, dtype=np.float32))   # doctest: +SKIP
    """
    check_common(tol, max_iter, alpha)
    mm0 = g.vertex_property(init, name="init")
    k = mm0.shape[1]
    w = g.edge_weights if weights is None else g.edge_property(weights, name="weights")
    if w is None or w.shape[1] != k:
        raise ValueError(f"multi_manifold_ranking needs {k} edge weight column(s), one per "
                         f"feature of init; got {None if w is None else w.shape[1]}")
    if bool((w <= 0).any()):
        raise ValueError("multi_manifold_ranking needs positive edge weights")
    weight_sum = props.vertex_property(g, k)
    ops.edgemap(g, edge_weight, "weight_sum", dict(weights=w, weight_sum=weight_sum),
                direction="pull", feature_aware=feature_aware, block_size=block_size)
    xp = device.xp
    inverse = xp.where(weight_sum > 0, 1.0 / xp.where(weight_sum > 0, weight_sum, 1.0), 0.0)
    args = dict(weights=w, alpha=float(alpha), inv_weight_sum=inverse.astype(np.float32))
    mm, info = propagate(g, mm0, weighted_rank, rank_update, args, tol=tol, max_iter=max_iter,
                         change_driven=change_driven, fold=fold, direction=direction,
                         feature_aware=feature_aware, block_size=block_size)
    return finish(g, "multi_manifold_ranking", {"mmr_*": mm}, info, return_info)
