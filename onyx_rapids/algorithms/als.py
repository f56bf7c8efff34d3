"""Alternating least squares for collaborative filtering (docs/algorithms.md item 5).

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
from .. import inputs
from ..registry import Input, algorithm
from ._common import PULL_FOLD, RunInfo, finish, pull_fold_direction

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
    """0/1 per vertex: the graph's own sides (:meth:`Graph.from_bipartite`), else each
    component 2-coloured from its lowest internal id (on side 0).

    Runs on the host (SciPy breadth-first order); raises ValueError if ``g`` is not bipartite.
    """
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    if getattr(g, "sides", None) is not None:
        return device.to_host(g.sides).astype(np.int8)

    src = device.to_host(g.edge_sources).astype(np.int64)
    dst = device.to_host(g.out_indices).astype(np.int64)
    if (src == dst).any():
        raise ValueError("als needs a bipartite graph; this one has a self-loop")
    und = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(g.n, g.n))
    und = (und + und.T).tocsr()
    count, labels = csgraph.connected_components(und, directed=False)
    side = np.zeros(g.n, dtype=np.int8)
    by_id = device.to_host(g.id_order())  # internal order need not be id order (reorder)
    first = np.unique(labels[by_id], return_index=True)[1]
    roots = by_id[first]  # the lowest id of each component
    for root in roots:
        order, pred = csgraph.breadth_first_order(und, root, directed=False)
        for v in order[1:]:
            side[v] = 1 - side[pred[v]]
    if (side[src] == side[dst]).any():
        raise ValueError("als needs a bipartite graph; this one has an odd cycle")
    return side


@algorithm("als", summary="alternating least squares latent factors of a ratings graph",
           graph="bipartite",
           inputs=(Input("k", inputs.Count(1, MAX_K), help="latent factors per vertex"),
                   Input("init", inputs.VALUES, required=False, help="lf^0, n x k"),
                   Input("sides", inputs.SIDES, required=False, help="0/1 per vertex")),
           columns=("side", "vertex", "lf_{i}"), weights="required",
           options=dict(feature_aware=None, change_driven=(False, True), fold=None, direction=None,
                        block_size=None),
           defaults=dict(fold=True), refuse=(PULL_FOLD,),
           params=dict(lam=inputs.Float(0, low_open=True), seed=inputs.Int(0, optional=True)))
def als(g, k, lam=0.1, iterations=10, init=None, seed=0, sides=None, *, tol=1e-6,
        weight=None, execution, return_info=False):
    """Latent factors of every vertex of a ratings graph: ``side``, ``vertex``,
    ``lf_0``..``lf_{k-1}`` (``side`` holds the side names of a graph from
    :meth:`Graph.from_bipartite`, else 0/1).

    Parameters
    ----------
    g : Graph
        An undirected bipartite graph whose edge weights are the ratings: build it with
        ``Graph.from_bipartite(ratings, "user", "item", weight="rating")`` (user and item ids
        never collide), or ``Graph.from_edgelist(..., directed=False)`` with disjoint ids.
    k : int in [1, MAX_K] (31)
    lam : float > 0, default 0.1
        Ridge regularization.
    iterations : int, default 10
        Alternations (side 0 from side 1, then side 1 from side 0), run in full.
    init : frame or array, optional
        lf^0 keyed by vertex (n x k); default ``numpy.random.default_rng(seed).random``.
    sides : frame, Series or array, optional
        0/1 per vertex (frame keyed by ``vertex``, Series indexed by vertex, or an array in
        ``Graph.vertices`` order); default: the graph's sides, or a 2-colouring.  Every edge
        must join side 0 and side 1.
    tol : float, default 1e-6
        ``converged`` in the run info is True when the last alternation moved no factor by
        more than ``tol`` (relative to max(1, max |lf|)).
    weight : None or str
        The ratings column (None: the graph's only weight column).
    execution : Execution, optional
        Or keywords ``feature_aware``, ``change_driven``, ``fold`` (default True),
        ``direction``, ``block_size``.

    Examples
    --------
    >>> import pandas as pd, onyx_rapids as onyx
    >>> ratings = pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 2], "stars": [5.0, 3.0, 4.0]})
    >>> g = onyx.Graph.from_bipartite(ratings, "user", "item", weight="stars")
    >>> onyx.als(g, 2).shape
    (4, 4)
    """
    if g.directed:
        raise ValueError("g: als needs an undirected bipartite graph (a directed ratings graph "
                         "gives one side no in-edges, hence zero factors); build it with "
                         "Graph.from_bipartite(ratings, 'user', 'item', weight='rating')")
    if g.edge_weights is None:
        raise ValueError("g: als needs ratings; build the graph with weight=<rating column>")
    ratings = g.weights_for(weight, name="als", required=True).reshape(-1, 1)
    change_driven, fold = execution.change_driven, execution.fold
    feature_aware, block_size = execution.feature_aware, execution.block_size
    direction = pull_fold_direction(execution)
    side = bipartite_sides(g) if sides is None else inputs.SIDES.normalize(g, sides, "sides")
    if init is None:  # rows in id order: a reordered graph gets the same values per id
        drawn = np.random.default_rng(seed).random((g.n, k), dtype=np.float32)
        init = np.empty_like(drawn)
        init[device.to_host(g.id_order())] = drawn
    lf = props.copy(inputs.VALUES.normalize(g, init, "init"))
    if lf.shape[1] != k:
        raise ValueError(f"init must have k={k} columns, got {lf.shape[1]}")
    on_side = [frontier.from_vertices(g.n, np.flatnonzero(side == s)) for s in (0, 1)]
    K = k * k + k
    args = dict(lf=lf, ratings=ratings, k=int(k), lam=float(lam), tol=float(tol),
                stats=props.vertex_property(g, K, dtype=np.float64 if change_driven
                                            else np.float32),
                side=props.column(side, np.int32))
    options = ops.MapOptions(feature_aware=feature_aware, block_size=block_size)
    if change_driven:
        # pushed = 0: the first push of every vertex sends its whole contribution
        args["pushed"] = props.vertex_property(g, k)
        moved_on = [on_side[0].copy(), on_side[1].copy()]
    solve = [ops.Vertex(on_target_side), ops.Solve("stats", "lf", ridge="lam")]
    if change_driven:
        edge_fn, solve = normal_equation_changes, solve + [ops.Vertex(moved)]
    else:
        edge_fn = normal_equations
    info = RunInfo(variant=dict(feature_aware=feature_aware, change_driven=change_driven,
                                fold=fold, direction=direction))
    info.converged = iterations == 0
    for info.iterations in range(1, int(iterations) + 1):
        before = props.copy(lf)
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
                            active_out=moved_next, direction="pull", k=K, options=options)
            else:
                ops.edgemap(g, edge_fn, "stats", call, k=K, active_in=sources,
                            direction=direction, options=options)
                ops.vertexmap(g, solve, call, k=K, active_in=on_side[target],
                              active_out=moved_next, options=options)
            if change_driven:  # the sources' changes are in: they are pushed now
                ops.vertexmap(g, commit, args, k=k, active_in=sources, options=options)
                moved_on[target] = moved_next
        info.converged = props.has_converged(lf, before, tol)
    columns = {"lf_*": lf}
    if getattr(g, "sides", None) is None:
        columns = {"side": device.asarray(side.astype(np.int8)), **columns}
    # a fixed number of alternations, as Spark's and implicit's ALS: no warning
    df = finish(g, "als", columns, info, False, warn=False)
    df = df[["side", "vertex"] + [c for c in df.columns if c not in ("side", "vertex")]]
    return (df, info) if return_info else df

