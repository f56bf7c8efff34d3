"""PageRank and personalized PageRank, one iteration for both (docs/algorithms.md):

    x^i_f(v) = alpha * ( sum_{u in N-(v)} x^{i-1}_f(u) w(u,v) / outw(u) + D_f t_f(v) )
               + (1 - alpha) t_f(v)

with D_f the mass of feature f on dangling vertices (no out-weight) and t_f the teleport vector:
uniform 1/n for PageRank, a user's ``personalization`` distribution (cuGraph's argument), or
e_{s_f} for the PageRank personalized to source s_f (k sources at once, one n x k property).
Iterations stop when every feature's L1 change is below ``tol`` (cuGraph's rule).

Change-driven mode is PageRank-Delta (ONYX 4.2): a vertex pushes the change since its last
push only when some feature moved by more than ``tol / n``, so the unpushed remainder stays
below ``tol``.  Bulk pulling runs with one teleport (uniform, a distribution or one source),
weighted or not, go to the fused persistent kernel (:mod:`onyx_rapids.kernels.pagerank`)
unless ``fused=False``.  A ``personalization`` of one vertex (a one-key dict such as NetworkX's,
a one-row frame or Series: decided on the rows read, not on the form) is that vertex's one-hot
teleport and runs as personalized PageRank from it (no n-vector to read, normalize or keep).
"""

from __future__ import annotations

import time

import numpy as np
from numba import cuda

from .. import device, inputs, operators as ops, properties as props
from ..kernels import pagerank as fused_kernel
from ..execution import EDGE_ACCESS
from ..registry import CHANGED, Input, Refuse, algorithm
from . import _merged, _normalized, _replicated, _shared
from ._common import AUTO_DIRECTION, RunInfo, finish
from ._propagate import (KNOB_RULES, Auto, L1ChangeTest, Plan, fused_choice,
                         propagate)

# sources[f] codes of the teleport kinds besides a source (the fused kernel's codes too)
UNIFORM, PERSONALIZED = fused_kernel.UNIFORM, fused_kernel.VECTOR


@cuda.jit(device=True)
def out_share(u, v, e, inv_out_weight):
    return inv_out_weight[u, 0]


@cuda.jit(device=True)
def weighted_out_share(u, v, e, inv_out_weight, weights):
    return weights[e, 0] * inv_out_weight[u, 0]


# what an edge u -> v brings: rows[u, f] / outw(u), times w(u, v) on a weighted graph
share = ops.Gather("rows", "acc", out_share)
weighted_share = ops.Gather("rows", "acc", weighted_out_share)


@cuda.jit(device=True)
def teleport(f, v, sources, uniform, personalization):
    if sources[f] == -1:
        return uniform
    if sources[f] == -2:
        return personalization[v, 0]
    return 1.0 if v == sources[f] else 0.0


@cuda.jit(device=True)
def update(f, v, acc, x_next, alpha, dangling, sources, uniform, personalization):
    t = teleport(f, v, sources, uniform, personalization)  # acc: the in-neighbours' shares
    x_next[v, f] = alpha * (acc + dangling[f] * t) + (1.0 - alpha) * t
    return True


_OPTIONS = dict(feature_aware=None, change_driven=None, fold=None, direction=None,
                pull_fraction=None, fused=None, block_size=None, width=None,
                edge_access=None)
_REFUSE = (AUTO_DIRECTION,
           Refuse(dict(fused=True, change_driven=True), "the fused kernel runs bulk iterations"),
           Refuse(dict(fused=True, fold=False), "the fused kernel is one folded kernel"),
           Refuse(dict(fused=True, direction="push"), "the fused kernel pulls"),
           Refuse(dict(fused=True, width=2), "the fused kernel runs one feature"),
           Refuse(dict(fused=True, width=4), "the fused kernel runs one feature"),
           Refuse(dict(fused=True, edge_access=EDGE_ACCESS),
                  "the fused kernel chooses its own edge reads (a lane an in-edge on the host)"),
           Refuse(dict(fused=True, approximation=CHANGED),
                  "the fused kernel runs exact iterations (the exact stop test, the "
                  "threshold tol / n); leave fused unset"),
           *KNOB_RULES)
#: docs/execution.md, "Approximation": the per-vertex tolerance (and change-driven threshold
#: unless ``activation_threshold`` replaces it) is tol / n
_APPROXIMATION = dict(stop_changed_fraction=None, stop_top_k=None, activation_threshold=None,
                      edge_fraction=None, merge_similarity=None, degree_normalization=None)


@algorithm("pagerank", summary="PageRank of every vertex (cuGraph/NetworkX conventions)",
           inputs=(Input("personalization", inputs.DISTRIBUTION, required=False,
                         help="teleport distribution (cuGraph's personalization)"),),
           columns=("vertex", "pagerank"), weights="used", options=_OPTIONS,
           refuse=_REFUSE + _replicated.RULES + _shared.RULES,
           approximation=dict(_APPROXIMATION, replicate_threshold=None,
                              shared_clustering=None))
def pagerank(g, alpha=0.85, tol=1e-6, max_iter=100, *, weight=None, personalization=None,
             execution, return_info=False):
    """PageRank of every vertex: a frame of ``vertex``, ``pagerank``.

    Parameters
    ----------
    g : Graph
    alpha : float in (0, 1), default 0.85
        Damping factor.
    tol : float, default 1e-6
        Stop when the L1 change of an iteration is below ``tol``.
    max_iter : int, default 100
    weight : None, str or False, default None
        Edge weights: None uses the graph's weight column when it has one (as cuGraph and
        NetworkX do), a name picks one of several, False ignores them.  Weights must be
        finite and non-negative.
    personalization : frame, Series, dict or array, optional
        Teleport distribution (cuGraph's argument): a frame of ``vertex`` (or ``node``) and
        one value column, a Series indexed by vertex, a dict ``{vertex: value}`` (NetworkX's
        form), or an n-array in ``Graph.vertices`` order; non-negative, normalized to sum 1;
        vertices left out get 0.  One vertex (a one-key dict, a one-row frame or Series, or
        rows where only one value is positive) is the teleport to that vertex: the run is
        :func:`personalized_pagerank`'s from it, with the same result.
    execution : Execution, optional
        Or its options as keywords: ``feature_aware``, ``change_driven``, ``fold``
        (default: folded when bulk), ``direction`` ("auto": bulk pulls; change-driven chooses
        per iteration against ``pull_fraction``), ``fused`` (default: the fused kernel when
        the run is bulk and pulls, and ``edge_access`` is not given), ``block_size``, ``width``,
        ``edge_access`` (unfused runs; see :class:`~onyx_rapids.Execution`), and
        ``approximation``: an :class:`~onyx_rapids.Approximation` with
        ``stop_changed_fraction`` (the per-vertex tolerance is ``tol / n`` plus
        ``stop_changed_relative`` times the rank) and / or ``stop_top_k`` stops earlier
        (reduced execution, unfused); ``activation_threshold`` replaces ``tol / n`` as the
        change-driven threshold.
    return_info : bool
        Also return the :class:`RunInfo` (iterations, converged, directions, options; the
        knobs and ``estimate`` of an approximate run).

    Examples
    --------
    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))  # undirected
    >>> round(float(onyx.pagerank(g)["pagerank"].sum()), 4)
    1.0
    """
    weights = g.weights_for(weight, name="pagerank", non_negative=True)
    if _merged.knob(execution) is not None:
        return _merged.pagerank(g, pagerank, execution, return_info, weights=weights,
                                weight_key=_weight_key(g, weight, weights),
                                personalization=personalization, alpha=alpha, tol=tol,
                                max_iter=max_iter)
    if _normalized.knob(execution) is not None:
        return _normalized.run(g, "pagerank", pagerank, execution, return_info,
                               lambda frame: ["pagerank"], weights=weights,
                               weight_key=_weight_key(g, weight, weights), weight=None,
                               personalization=personalization, alpha=alpha, tol=tol,
                               max_iter=max_iter)
    if _replicated.knob(execution) is not None:
        return _replicated.pagerank(g, execution, return_info, weights=weights,
                                    weight_key=_weight_key(g, weight, weights), alpha=alpha,
                                    tol=tol, max_iter=max_iter)
    if _shared.knob(execution) is not None:
        return _shared.pagerank(g, execution, return_info, weights=weights,
                                weight_key=_weight_key(g, weight, weights),
                                personalization=personalization, alpha=alpha, tol=tol,
                                max_iter=max_iter)
    teleport_column, teleport = None, UNIFORM
    if personalization is not None:
        # one vertex (whatever form named it) is personalized_pagerank's one-hot teleport:
        # its engine, no n-vector
        vertex, teleport_column = inputs.DISTRIBUTION.teleport(g, personalization,
                                                              "personalization")
        teleport = PERSONALIZED if vertex is None else vertex
    plan = Plan.of(execution)
    if _fused_choice("pagerank", g, plan):
        rank, info = _fused(g, teleport, alpha, tol, max_iter, plan, weights=weights,
                            weight_key=_weight_key(g, weight, weights),
                            teleport_column=teleport_column)
        return finish(g, "pagerank", {"pagerank": rank}, info, return_info)
    rank, info = _iterate(g, device.full(1, teleport, np.int64), alpha, tol, max_iter, weights,
                          teleport_column, plan)
    return finish(g, "pagerank", {"pagerank": rank[:, 0]}, info, return_info)


@algorithm("personalized_pagerank",
           summary="PageRank personalized to each of k sources, all at once",
           inputs=(Input("sources", inputs.VERTICES, help="one teleport vertex per column"),),
           columns=("vertex", "ppr_{i}"), weights="used", options=_OPTIONS, refuse=_REFUSE,
           approximation=_APPROXIMATION)
def personalized_pagerank(g, sources, alpha=0.85, tol=1e-6, max_iter=100, *, weight=None,
                          execution, return_info=False):
    """PageRank personalized to each of ``sources`` (vertex ids), all k at once.

    Returns ``vertex``, ``ppr_0``..``ppr_{k-1}``: column f teleports to ``sources[f]``.
    Parameters as :func:`pagerank`; change-driven, a vertex is active while any of its k
    features moves; ``fused`` (the default when possible) needs one source.

    Examples
    --------
    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))  # undirected
    >>> ppr = onyx.personalized_pagerank(g, sources=[0, 33])
    >>> [round(float(ppr[c].sum()), 4) for c in ("ppr_0", "ppr_1")]
    [1.0, 1.0]
    """
    weights = g.weights_for(weight, name="personalized_pagerank", non_negative=True)
    if _merged.knob(execution) is not None:
        return _merged.personalized_pagerank(
            g, personalized_pagerank, execution, return_info, weights=weights,
            weight_key=_weight_key(g, weight, weights), sources=sources, alpha=alpha, tol=tol,
            max_iter=max_iter)
    if _normalized.knob(execution) is not None:
        return _normalized.run(
            g, "personalized_pagerank", personalized_pagerank, execution, return_info,
            lambda frame: [c for c in frame.columns if c.startswith("ppr_")], weights=weights,
            weight_key=_weight_key(g, weight, weights), weight=None, sources=sources,
            alpha=alpha, tol=tol, max_iter=max_iter)
    ids = inputs.starts(g, None, sources)
    plan = Plan.of(execution)
    if _fused_choice("personalized_pagerank", g, plan, sources=ids.size):
        rank, info = _fused(g, int(ids[0]), alpha, tol, max_iter, plan, weights=weights,
                            weight_key=_weight_key(g, weight, weights))
        return finish(g, "personalized_pagerank", {"ppr_*": rank[:, None]}, info, return_info)
    rank, info = _iterate(g, device.asarray(ids), alpha, tol, max_iter, weights, None, plan)
    return finish(g, "personalized_pagerank", {"ppr_*": rank}, info, return_info)


def _fused_choice(name, g, plan, *, sources=1):
    """Whether the run goes to the fused kernel (:func:`~._propagate.fused_choice`): one
    teleport source or distribution, its CSC (and weights) the edges it reads."""
    nbytes = g.m * (np.dtype(g.in_indices.dtype).itemsize + (4 if g.weight_names else 0))
    return fused_choice(name, g, plan, width=sources, nbytes=nbytes,
                        too_wide="the fused kernel runs one teleport source or distribution; "
                        f"it cannot run {sources} sources")


def _weight_key(g, weight, weights):
    """The name of the weight column in use (None when unweighted): the key of what the fused
    kernel derives from it."""
    if weights is None:
        return None
    return weight if isinstance(weight, str) else g.weight_names[0]


def _no_dangling_mass(g, dangling_mask, sources, rank) -> bool:
    """Whether the dangling mass stays 0 through the run: there is no dangling vertex, or the
    teleports go to source vertices only and every dangling vertex is isolated from the walk
    (no in-edge, not a source: its rank starts at 0 and its teleport is 0)."""
    dangling = dangling_mask != 0
    if not bool(dangling.any()):
        return True
    if int(sources.min()) < 0:  # a uniform or vector teleport reaches the dangling vertices
        return False
    return not bool((g.in_degree[dangling] != 0).any()) and not bool(dangling[sources].any()) \
        and not bool(rank[dangling].any())


def _fused(g, source, alpha, tol, max_iter, plan, *, weights=None, weight_key=None,
           teleport_column=None):
    """Every iteration in one launch of the fused kernel (:mod:`onyx_rapids.kernels.pagerank`);
    ``source`` (internal id) personalizes the teleport to one vertex, UNIFORM keeps it uniform,
    PERSONALIZED reads ``teleport_column``; ``weights`` (CSR order, cached under
    ``weight_key``) weight the gathers.  Under ``change_driven="auto"`` the kernel stops once
    the moving vertices own at most ``pull_fraction`` of the out-edges and :func:`_iterate`
    goes on from its ranks under the same policy, to which the launch is reported."""
    xp, n, execution = device.xp, g.n, plan.execution
    inv_out, in_weights = g.cached(("pagerank", "fused shares", weight_key),
                                   lambda: _fused_shares(g, weights))
    work, indices, copied = fused_kernel.resident(g, in_weights if weights is not None
                                                  else None)
    in_weights = in_weights if copied is None else copied
    if source == UNIFORM:
        ranks = xp.full((2, n), 1.0 / n, dtype=np.float32)
    elif source == PERSONALIZED:
        ranks = xp.empty((2, n), dtype=np.float32)
        ranks[0] = teleport_column[:, 0]
    else:
        ranks = xp.zeros((2, n), dtype=np.float32)
        ranks[0, source] = 1.0
    dangling = _start_dangling(g, weight_key, inv_out, ranks[0], source)
    order = fused_kernel.gather_order(g)  # the shares in degree order where hubs gather
    if order is not None and weights is not None:
        in_weights = g.cached(("pagerank", "fused weights in gather order", weight_key),
                              lambda: in_weights[order[2]])
    ys = xp.empty((2, n), dtype=np.float32)
    if order is None:
        ys[0] = ranks[0] * inv_out
    else:
        ys[0, order[0]] = ranks[0] * inv_out
    teleport = (teleport_column[:, 0] if source == PERSONALIZED
                else xp.zeros(1, dtype=np.float32))
    auto = execution.change_driven == "auto"
    # the kernel watches for the switch unless change-driven was measured not to pay here
    policy = Auto.on(g, weighted_share if weights is not None else share, 1, _case(source)) \
        if auto else None
    watch = auto and policy.watching
    started = time.perf_counter()
    iterations, converged, switched = fused_kernel.run(
        g, work, inv_out, in_weights, ranks, ys, alpha=alpha, source=source, teleport=teleport,
        dangling=dangling, tol=tol, max_iter=max_iter, threshold=tol / n,
        switch_edges=execution.pull_fraction * g.m if watch else -1.0,
        block_size=execution.block_size, weighted=weights is not None, order=order,
        indices=indices)
    if watch:
        policy.fused_ran(started, iterations, switched)
    info = RunInfo(iterations=iterations, converged=bool(converged),
                   variant=dict(feature_aware=execution.feature_aware,
                                change_driven="auto" if auto else False, fold=True, fused=True,
                                direction="auto" if auto else "pull"),
                   directions=["pull"] * iterations, modes=["bulk"] * iterations)
    rank = ranks[iterations % 2]
    if switched and iterations < max_iter:
        more, rest = _iterate(g, device.full(1, source, np.int64), alpha, tol,
                              max_iter - iterations, weights, teleport_column, plan,
                              start=rank.reshape(-1, 1), policy=policy)
        rank = more[:, 0]
        info.iterations += rest.iterations
        info.converged = rest.converged
        info.directions += rest.directions
        info.modes += rest.modes
    return rank, info


def _case(source) -> str:
    """What ``change_driven="auto"`` learns under on a graph besides the edge function and k
    (:func:`~onyx_rapids.algorithms._propagate.auto_memo`): a uniform teleport moves every
    vertex from the start, a source's spreads from it, so they learn apart."""
    return {UNIFORM: "uniform", PERSONALIZED: "personalized"}.get(int(source), "sources")


def _start_dangling(g, weight_key, inv_out, rank, source):
    """The rank mass on dangling vertices at the start: their count / n from a uniform start
    (the count cached with the shares), the source's whole mass or none from one source."""
    if source == UNIFORM:
        count = g.cached(("pagerank", "dangling count", weight_key),
                         lambda: int((inv_out == 0).sum()))
        return count / g.n
    if source == PERSONALIZED:
        return float((rank.astype(np.float64) * (inv_out == 0)).sum())
    return 1.0 if float(inv_out[source]) == 0 else 0.0


def _fused_shares(g, weights):
    """``1 / outw`` (0 on dangling vertices) as an (n,) float32 array, and the weights in CSC
    order (a placeholder when unweighted), for the fused kernel."""
    inv_out = device.xp.ascontiguousarray(
        props.inverse_or_zero(props.out_weight_sums(g, weights))[:, 0])
    if weights is None:
        return inv_out, device.zeros(1, np.float32)
    return inv_out, device.xp.ascontiguousarray(weights[g.in_edge_ids]).astype(np.float32)


def _iterate(g, sources, alpha, tol, max_iter, weights, teleport_column, plan, *,
             start=None, policy=None):
    """The generic iteration (:func:`propagate`) from the teleport vectors, or from ``start``
    (n x k) under ``policy`` (the one a fused kernel handed over to)."""
    n, k = g.n, int(sources.shape[0])
    outw = props.out_weight_sums(g, weights)
    dangling_mask = (outw == 0).astype(np.float64)
    if start is not None:
        rank = start
    elif int(sources[0]) == UNIFORM:
        rank = props.vertex_property(g, 1, 1.0 / n)
    elif int(sources[0]) == PERSONALIZED:
        rank = props.copy(teleport_column)
    else:
        rank = props.vertex_property(g, k)
        rank[sources, device.xp.arange(k)] = 1.0
    args = dict(inv_out_weight=props.inverse_or_zero(outw), alpha=float(alpha),
                dangling=props.vector(k), sources=sources, uniform=1.0 / n,
                personalization=device.zeros((1, 1), np.float32) if teleport_column is None
                else teleport_column)
    edge_fn = share
    if weights is not None:
        args["weights"] = weights.reshape(-1, 1)
        edge_fn = weighted_share
    dangling = args["dangling"]
    common = dict(plan=plan, max_iter=max_iter, threshold=float(tol) / n,
                  case=_case(int(sources[0])), policy=policy)
    if _no_dangling_mass(g, dangling_mask, sources, rank):
        # a vertex's rank reads only its own aggregate, so the stop test runs in the vertex
        # kernel and change-driven steps visit only what their push reached
        return propagate(g, rank, edge_fn, [ops.Vertex(update, aggregate="acc")], args, **common,
                         converged=L1ChangeTest(tol), local=True)
    return propagate(
        g, rank, edge_fn, [ops.Vertex(update, aggregate="acc")], args, **common,
        before=lambda x: props.dot_into(dangling, dangling_mask, x),
        # the stop test and the next iteration's dangling mass in one pass
        converged=lambda new, old: props.l1_change_and_dot(new, old, dangling_mask,
                                                           dangling) < tol)
