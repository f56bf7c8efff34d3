"""Multi-manifold ranking (docs/algorithms.md, item 7).

    waggr(v) = sum_{u in N-(v)} w(u,v) o mm^{i-1}(u)      haggr(v) = (sum_{u in N-(v)} w(u,v))^{o-1}
    mm^i(v) = alpha * waggr(v) o haggr(v) + (1 - alpha) * mm^0(v)

w holds k positive values per edge; haggr is computed once; a vertex with no in-neighbours keeps
only the second term.
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
def edge_weight(f, u, v, e, weights):
    return weights[e, f]


@cuda.jit(device=True)
def weighted_rank(f, u, v, e, rows, weights):
    return weights[e, f] * rows[u, f]


@cuda.jit(device=True)
def rank_update(f, v, acc, x_next, x0, inv_weight_sum, alpha):
    x_next[v, f] = alpha * acc * inv_weight_sum[v, f] + (1.0 - alpha) * x0[v, f]
    return True


@algorithm("multi_manifold_ranking", summary="ranking on k manifolds (k weight columns)",
           inputs=(Input("init", inputs.VALUES, help="mm^0, n x k"),),
           columns=("vertex", "mmr_{i}"), weights="required",
           options=dict(feature_aware=None, change_driven=None, fold=None, direction=None,
                        pull_fraction=None, block_size=None, width=None,
                        edge_access=None),
           defaults=dict(fold=False), refuse=(AUTO_DIRECTION,))
def multi_manifold_ranking(g, init, alpha=0.85, tol=1e-6, max_iter=100, *, weights=None,
                           execution, return_info=False):
    """Rank every vertex on k manifolds: ``vertex``, ``mmr_0``..``mmr_{k-1}``.

    Parameters
    ----------
    g : Graph
    init : frame or array
        mm^0: a frame keyed by ``vertex`` (or indexed by vertex), or an n x k array in
        ``Graph.vertices`` order.
    alpha : float in (0, 1), default 0.85
    tol, max_iter : stop rule as :func:`label_propagation`
    weights : array, optional
        m x k positive edge weights in CSR order, one column per manifold; default: the
        graph's weight columns (``weight=[...]`` at construction).
    execution : Execution, optional
        Or keywords ``feature_aware``, ``change_driven``, ``fold`` (default False),
        ``direction``, ``pull_fraction``, ``block_size``, ``width``, ``edge_access``.

    Examples
    --------
    >>> import numpy as np, onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("les_miserables"), weight="weight")
    >>> onyx.multi_manifold_ranking(g, np.eye(g.n, 1, dtype=np.float32)).shape
    (77, 2)
    """
    mm0 = inputs.VALUES.normalize(g, init, "init")
    k = mm0.shape[1]
    w = g.edge_weights if weights is None else g.edge_property(weights, name="weights")
    if w is None or w.shape[1] != k:
        raise ValueError(f"multi_manifold_ranking needs {k} edge weight column(s), one per "
                         f"feature of init; got {None if w is None else w.shape[1]}")
    if bool((w <= 0).any()) or not bool(device.xp.isfinite(w).all()):
        raise ValueError("multi_manifold_ranking needs positive edge weights")
    weight_sum = props.vertex_property(g, k)
    ops.edgemap(g, edge_weight, "weight_sum", dict(weights=w, weight_sum=weight_sum),
                direction="pull", options=ops.MapOptions(feature_aware=execution.feature_aware,
                                                         block_size=execution.block_size))
    xp = device.xp
    inverse = xp.where(weight_sum > 0, 1.0 / xp.where(weight_sum > 0, weight_sum, 1.0), 0.0)
    args = dict(weights=w, alpha=float(alpha), inv_weight_sum=inverse.astype(np.float32),
                x0=mm0)
    update = [ops.Vertex(rank_update, aggregate="acc")]
    mm, info = propagate(g, mm0, weighted_rank, update, args,
                         plan=Plan.of(execution), converged=max_change_test(tol),
                         max_iter=max_iter, threshold=tol)
    return finish(g, "multi_manifold_ranking", {"mmr_*": mm}, info, return_info)
