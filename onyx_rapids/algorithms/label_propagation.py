"""Label propagation (docs/algorithms.md), P partitions of k classes each.

    aggr_p(v) = sum_{u in N-(v)} w_p(u,v) lp^{i-1}(u)_p
    lp^i(v)_p = normalize( alpha * normalize(aggr_p(v)) + (1 - alpha) * lp^{i-1}(v)_p )

with labelled vertices clamped to lp^0; the weights w_p are the graph's edge weights (one column
per partition, non-negative) or 1.  The iteration, in every execution variant, is the shared
propagation driver (:mod:`onyx_rapids.algorithms._propagate`).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, operators as ops, properties as props
from .. import inputs
from ..registry import Input, algorithm
from ._common import AUTO_DIRECTION, finish
from ._propagate import KNOB_RULES, Plan, max_change_test, propagate


@cuda.jit(device=True)
def weighted_label(f, u, v, e, rows, weights, k):
    return weights[e, f // k] * rows[u, f]


@cuda.jit(device=True)
def edge_weight(u, v, e, weights):
    return weights[e, 0]


# what an edge u -> v brings with one partition: rows[u, f], times w(u, v) when weighted
label = ops.Gather("rows", "acc")
single_weighted_label = ops.Gather("rows", "acc", edge_weight)


@cuda.jit(device=True)
def mix(f, v, prob, state, x_next, alpha):
    x_next[v, f] = alpha * prob[v, f] + (1.0 - alpha) * state[v, f]
    return True


@cuda.jit(device=True)
def keep_labelled(f, v, x_next, lp0, clamped):
    if clamped[v, 0] != 0:
        x_next[v, f] = lp0[v, f]
    return True


@algorithm("label_propagation", summary="class probabilities spread from labelled vertices",
           inputs=(Input("labels", inputs.LABELS, help="frame of vertex, label (or label_0..)"),
                   Input("k", inputs.CLASSES, help="classes per partition")),
           columns=("vertex", "lp_{i}", "label"), weights="used",
           options=dict(feature_aware=None, change_driven=None, fold=None, direction=None,
                        pull_fraction=None, block_size=None, width=None,
                        edge_access=None),
           refuse=(AUTO_DIRECTION, *KNOB_RULES), params=dict(clamp=inputs.FLAG),
           approximation=dict(stop_changed_fraction=None, activation_threshold=None,
                              edge_fraction=None))
def label_propagation(g, labels, k, alpha=0.85, clamp=True, tol=1e-6, max_iter=100, *,
                      weight=None, execution, return_info=False):
    """Class probabilities of every vertex: ``vertex``, ``lp_0``.. and ``label`` (P = 1).

    Parameters
    ----------
    g : Graph
    labels : frame or array
        A frame of ``vertex`` and ``label`` (or ``label_0``.. for P partitions; a Series
        indexed by vertex also works), classes in [0, k); or a full n x P*k lp^0 array in
        ``Graph.vertices`` order (rows one-hot in every partition count as labelled).
    k : int
        Classes per partition.
    alpha : float in (0, 1), default 0.85
    clamp : bool, default True
        Keep labelled vertices at their label.
    tol, max_iter : stop when no probability moves by more than ``tol`` (relative to 1), or
        after ``max_iter`` iterations.
    weight : None, str, list of str or False
        Edge weights, one non-negative column per partition: None uses the graph's (when it
        has any), names pick columns, False ignores them (every weight 1).
    execution : Execution, optional
        Or keywords ``feature_aware``, ``change_driven``, ``fold`` (default: folded when bulk),
        ``direction``, ``pull_fraction``, ``block_size``, ``width``, ``edge_access``, and
        ``approximation``: an :class:`~onyx_rapids.Approximation` with
        ``stop_changed_fraction`` stops once fewer vertices than that fraction have a
        probability that moved by more than ``tol`` plus ``stop_changed_relative`` times
        its value (reduced execution); ``activation_threshold`` replaces ``tol`` as the
        change-driven threshold.
    return_info : bool

    Examples
    --------
    >>> import onyx_rapids as onyx, pandas as pd
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))  # undirected
    >>> seeds = pd.DataFrame({"vertex": [0, 33], "label": [0, 1]})
    >>> onyx.label_propagation(g, seeds, k=2)["label"].tolist()[:3]
    [0, 0, 0]
    """
    lp0, labelled, P = inputs.LABELS.normalize(g, labels, k)
    K = P * k
    weights = _partition_weights(g, weight, P)
    args = dict(k=int(k), alpha=float(alpha), lp0=lp0,
                clamped=props.column(labelled & bool(clamp)), prob=props.vertex_property(g, K))
    update = [ops.Normalize("acc", "prob", k), ops.Vertex(mix),
              ops.Normalize("x_next", None, k), ops.Vertex(keep_labelled)]
    if weights is not None:
        args["weights"] = weights
    contribution = label if weights is None else (
        single_weighted_label if P == 1 else weighted_label)
    lp, info = propagate(g, lp0, contribution, update, args, plan=Plan.of(execution),
                         converged=max_change_test(tol), max_iter=max_iter, threshold=tol)
    columns = {"lp_*": lp}
    if P == 1:
        columns["label"] = lp.argmax(axis=1).astype(np.int32)
    return finish(g, "label_propagation", columns, info, return_info)


def _partition_weights(g, weight, P):
    """m x P non-negative weights: the graph's (or the named) columns, or None (every weight
    1: the edge function then reads no weight)."""
    if weight is False or g.edge_weights is None:
        if weight not in (None, False):
            raise ValueError(f"weight={weight!r}: this graph has no edge weights")
        return None
    names = [weight] if isinstance(weight, str) else (g.weight_names if weight is None
                                                      else list(weight))
    if len(names) != P:
        raise ValueError(f"label_propagation with {P} partition(s) needs {P} edge weight "
                         f"column(s); got {len(names)} ({names}); pass weight=[...] naming "
                         f"{P}, or weight=False")
    columns = [g.weights_for(name, name="label_propagation", non_negative=True)
               for name in names]
    return device.xp.ascontiguousarray(device.xp.stack(columns, axis=1))
