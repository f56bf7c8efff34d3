"""``propagate``: a propagation's run put together (its rows, stop test, policy and steps) and
handed to the loop (:func:`~.loop.iterate`)."""

from __future__ import annotations

from .._common import RunInfo
from . import policies
from .loop import Run, iterate
from .partial import partial_edges
from .stops import ApproximateStop, Stop


def propagate(g, x, contribution, update, args, *, plan, converged, max_iter, threshold,
              before=None, local=False, case="", policy=None):
    """Iterate from ``x`` (n x k, copied) until ``converged(x_next, x)`` or ``max_iter``.

    ``contribution(f, u, v, e, rows, ..)`` is the edge function (or an ``ops.Gather`` of
    ``rows``); ``update`` the vertex steps
    (:class:`~onyx_rapids.operators.Vertex` with ``aggregate="acc"`` / ``Normalize("acc",
    ..)``) that write ``x_next`` from the aggregate ``acc`` (and return True); ``args``
    what they read besides ``state`` (x), ``x_next``, ``rows`` and ``acc`` (bulk folded pulls
    keep ``acc`` in registers: :data:`~.plan.REGISTERS`).  ``plan``: the run's
    :class:`~.plan.Plan`.
    ``threshold``: how far a feature must move for its vertex to push (change-driven).
    ``before(x)``, if given, runs before the first iteration (e.g. a dangling-mass dot).
    ``local``: a vertex's update reads nothing that changes but its own aggregate (no global
    sum such as PageRank's dangling mass), so a change-driven iteration need only visit the
    vertices its edges reached (:class:`~.steps.Local`).
    ``case``: with the edge function and k, names what ``change_driven="auto"`` learns on the
    graph (:func:`~.policies.auto_memo`); ``policy``: the :class:`~.policies.Auto` a fused
    kernel handed its rows over to.
    An ``approximation`` in ``plan``'s execution adds its stop tests
    (:class:`~.stops.ApproximateStop`: ``threshold`` is the per-vertex tolerance); its
    ``activation_threshold`` replaces ``threshold``, its ``edge_fraction`` below 1 has every
    bulk pull compute that fraction of the in-edges afresh, the others bringing their last
    values (:mod:`.partial`: ``args["weights"]``, if given, holds the edge properties the
    contribution reads by edge id).
    Returns ``(x, RunInfo)``; ``info.directions`` holds each iteration's direction,
    ``info.modes`` its mode (bulk or change-driven); ``info.approximation`` and
    ``info.estimate`` the knobs and measures of an approximate run.
    """
    e, read = plan.execution, 1.0
    knobs = {} if e.approximation is None else e.approximation.knobs()
    threshold = knobs.get("activation_threshold", threshold)  # decoupled from tol
    if knobs.get("edge_fraction", 1.0) < 1.0:
        g, contribution, args, read = partial_edges(g, contribution, args,
                                                    knobs["edge_fraction"], x)
    policy = policy or policies.choose(plan, g, contribution, x.shape[1], case)
    variant = dict(feature_aware=e.feature_aware, change_driven=e.change_driven,
                   fold=plan.fold, fused=False, direction=plan.direction)
    variant.update(policy.variant)
    run = Run(g, x, contribution, args, plan, RunInfo(variant=variant, directions=[], modes=[]),
              threshold=threshold)
    if before is not None:
        before(run.x)
    in_kernel = not plan.folded_push
    approximate = None if e.approximation is None else \
        ApproximateStop(e.approximation, run, in_kernel)
    stop = Stop(converged, run.args, in_kernel=in_kernel, k=run.k, approximate=approximate)
    steps = policy.steps(run, stop, update, plan, local)
    x, info = iterate(run, policy, steps, stop, max_iter)
    if approximate is not None:
        if "edge_fraction" in knobs:
            approximate.estimate["edges_fraction"] = read
        info.approximation, info.estimate = knobs, approximate.estimate
    return x, info
