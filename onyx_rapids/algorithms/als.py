"""Alternating least squares for collaborative filtering (ALGORITHMS.md item 5).

    sc(v) = sum_{u in N-(v)} w(u,v) lf(u),   IC(v) = sum_{u in N-(v)} lf(u) lf(u)^T  (k x k)
    lf_new(v) = (IC(v) + lambda I)^{-1} sc(v)

One iteration updates side 0 from side 1, then side 1 from the new side 0.  The edge step
gathers the k*k + k normal-equation features of a vertex (IC row-major, then sc) in one
property, an outer product computed one entry per thread; the collaborative ``Solve`` step
factors IC + lambda I by Cholesky across those same threads.  A side's vertices only read the
other side, so each half-step updates ``lf`` in place.

Change-driven mode (ONYX 4.2, Figure 4.2): IC and sc stay on the vertices (float64) and a
source whose factors moved by more than ``tol`` since its last push adds
``lf lf^T - pushed pushed^T`` and ``w (lf - pushed)``; the others are skipped.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ..operators import MAX_GROUP
from ._common import Info, finish, resolve_pull_fold

#: the k*k + k threads of one vertex's normal equations must fit one block
MAX_K = 31
assert MAX_K * MAX_K + MAX_K <= MAX_GROUP


@cuda.jit(device=True)
def normal_equations(f, u, v, e, lf, ratings, k):
    kk = k * k
    if f < kk:
        return lf[u, f // k] * lf[u, f % k]
    return ratings[e, 0] * lf[u, f - kk]


@cuda.jit(device=True)
def normal_equation_changes(f, u, v, e, lf, pushed, ratings, k):
    kk = k * k
    if f < kk:
        a = f // k
        b = f % k
        return lf[u, a] * lf[u, b] - pushed[u, a] * pushed[u, b]
    return ratings[e, 0] * (lf[u, f - kk] - pushed[u, f - kk])


@cuda.jit(device=True)
def moved(f, v, lf, pushed, tol, k):
    # runs over the k*k + k features of the solve; the factors are the first k
    return f < k and abs(lf[v, f] - pushed[v, f]) > tol


@cuda.jit(device=True)
def commit(f, v, lf, pushed):
    pushed[v, f] = lf[v, f]
    return True


@cuda.jit(device=True)
def on_target_side(f, v, side, target):
    return side[v, 0] == target


def bipartite_sides(g):
    """0/1 per vertex: each component 2-coloured from its lowest internal id (on side 0).

    Runs on the host (SciPy breadth-first order); raises ValueError if ``g`` is not bipartite.
    """
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    src = device.to_host(g.edge_sources).astype(np.int64)
    dst = device.to_host(g.out_indices).astype(np.int64)
    if (src == dst).any():
        raise ValueError("als needs a bipartite graph; this one has a self-loop")
    und = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(g.n, g.n))
    und = (und + und.T).tocsr()
    count, labels = csgraph.connected_components(und, directed=False)
    side = np.zeros(g.n, dtype=np.int8)
    roots = np.unique(labels, return_index=True)[1]  # lowest id of each component
    for root in roots:
        order, pred = csgraph.breadth_first_order(und, root, directed=False)
        for v in order[1:]:
            side[v] = 1 - side[pred[v]]
    if (side[src] == side[dst]).any():
        raise ValueError("als needs a bipartite graph; this one has an odd cycle")
    return side


def als(g, k, lam=0.1, iterations=10, init=None, seed=0, sides=None, *, tol=1e-6,
        feature_aware=True, change_driven=False, fold=True, direction="auto", block_size=None,
        return_info=False):
    """Latent factors of every vertex: ``vertex``, ``side``, ``lf_0``..``lf_{k-1}``.

    Ratings are the graph's first edge-weight column; ``sides`` is a 0/1 array in
    ``Graph.vertices`` order (found by 2-colouring when omitted); ``init`` is lf^0 (n x k), else
    ``numpy.random.default_rng(seed).random((n, k), dtype=float32)``.

    Example::

        >>> als(Graph.from_edgelist(ratings, "user", "item", weight="stars", directed=False), 8)   # doctest: +SKIP
    """
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_K:
        raise ValueError(f"k must be an integer in [1, {MAX_K}], got {k!r}")
    if not lam > 0:
        raise ValueError(f"lam must be positive, got {lam!r}")
    if int(iterations) != iterations or iterations < 0:
        raise ValueError(f"iterations must be a non-negative integer, got {iterations!r}")
    if g.edge_weights is None:
        raise ValueError("als needs ratings: build the graph with weight=<rating column>")
    direction = resolve_pull_fold(direction, change_driven, fold, "als")
    side = bipartite_sides(g) if sides is None else np.asarray(device.to_host(sides)).ravel()
    if side.shape != (g.n,) or not np.isin(side, (0, 1)).all():
        raise ValueError(f"sides must hold 0 or 1 for each of the {g.n} vertices")
    if init is None:
        init = np.random.default_rng(seed).random((g.n, k), dtype=np.float32)
    lf = props.copy(g.vertex_property(init, name="init"))
    if lf.shape[1] != k:
        raise ValueError(f"init must have k={k} columns, got {lf.shape[1]}")
    on_side = [frontier.from_vertices(g.n, np.flatnonzero(side == s)) for s in (0, 1)]
    K = k * k + k
    args = dict(lf=lf, ratings=g.edge_weights[:, :1], k=int(k), lam=float(lam), tol=float(tol),
                stats=props.vertex_property(g, K, dtype=np.float64 if change_driven
                                            else np.float32),
                side=props.column(side, np.int32))
    opts = dict(k=K, feature_aware=feature_aware, block_size=block_size)
    if change_driven:
        # pushed = 0: the first push of every vertex sends its whole contribution
        args["pushed"] = props.vertex_property(g, k)
        moved_on = [on_side[0].copy(), on_side[1].copy()]
    solve = [ops.Vertex(on_target_side), ops.Solve("stats", "lf", ridge="lam")]
    if change_driven:
        edge_fn, solve = normal_equation_changes, solve + [ops.Vertex(moved)]
    else:
        edge_fn = normal_equations
    info = Info(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                             fold=fold, direction=direction))
    for info.iterations in range(1, int(iterations) + 1):
        for target in (0, 1):  # side 0 from side 1, then side 1 from the new side 0
            call = dict(args, target=target)
            if change_driven:
                sources, moved_next = moved_on[1 - target], frontier.empty(g.n)
            else:
                props.fill(args["stats"], 0.0)
                sources, moved_next = on_side[1 - target], None
            if fold:
                # the pull fold visits every vertex: on_target_side stops the other side
                ops.foldmap(g, [ops.Edge(edge_fn, "stats")] + solve, call, active_in=sources,
                            active_out=moved_next, direction="pull", **opts)
            else:
                ops.edgemap(g, edge_fn, "stats", call, active_in=sources, direction=direction,
                            **opts)
                ops.vertexmap(g, solve, call, active_in=on_side[target], active_out=moved_next,
                              **opts)
            if change_driven:  # the sources' changes are in: they are pushed now
                ops.vertexmap(g, commit, args, k=k, active_in=sources,
                              feature_aware=feature_aware, block_size=block_size)
                moved_on[target] = moved_next
    info.converged = True  # a fixed number of iterations, as Spark's and implicit's ALS
    return finish(g, "als", {"side": device.asarray(side.astype(np.int8)), "lf_*": lf}, info,
                  return_info)
