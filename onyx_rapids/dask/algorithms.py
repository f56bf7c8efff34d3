"""The distributed algorithms: each partition runs the single-GPU operators (``foldmap`` /
``edgemap``, with the single-GPU algorithms' own device functions) on its local graph, and
:func:`onyx_rapids.dask.run.iterate` exchanges the ghost rows between iterations.

Each algorithm is a ``start`` / ``step`` pair run on the workers and a ``reduce`` of the
partitions' partial sums on the client, with the math, defaults, stop tests and result columns
of its single-GPU namesake (``docs/algorithms.md``).  Each is declared in :data:`ALGORITHMS`
(as the single-GPU ones are in :mod:`onyx_rapids.registry`; ``onyx-rapids list --dask`` shows
them): its inputs, columns and the execution options it takes, as ``execution=`` (an
:class:`~onyx_rapids.Execution`) or keywords, validated once.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import cuda

from .. import device, frontier, inputs, io, operators as ops, properties as props
from ..algorithms import bfs as _bfs
from ..algorithms import feature_propagation as _fp
from ..algorithms import label_propagation as _lp
from ..algorithms import pagerank as _pr
from ..registry import Input, algorithm
from .run import State, iterate, outbox, receive, slices

#: name -> :class:`onyx_rapids.registry.Algorithm` of every distributed algorithm.
ALGORITHMS: dict = {}

_CHANGE_DRIVEN = dict(change_driven=(False, True))

UNREACHED = _bfs.UNREACHED
NOT_A_SOURCE = -3  # a source owned by another partition: no local vertex matches it


class _Rows:
    """What :func:`onyx_rapids.io.to_frame` reads of a graph: a partition's own vertices."""

    sides = None

    def __init__(self, part):
        self.vertices = device.asarray(part.own_ids)
        self.n = part.n_own


def _frame(part, columns):
    return io.to_frame(_Rows(part), columns)


def _own(part, x):
    return x[:part.n_own]


def _step_rows(part, state, inbox):
    """The partition's rows with the ghost rows of ``inbox`` written in (a copy)."""
    x = state.x.copy()
    receive(part, x, inbox)
    return x


def _send(part, x_next, state, pushed, threshold, change_driven):
    own = _own(part, x_next)
    if change_driven:
        pushed = pushed.copy()
        return outbox(part, own, pushed, threshold) + (pushed,)
    return outbox(part, own) + (None,)


# ----------------------------------------------------------------- PageRank, personalized

def _pr_start(part, given):
    xp, g = device.xp, part.graph
    k = given["k"]
    w = given["weight"]
    outw = part.out_degree if w is None else part.out_weights[:, w]
    consts = dict(inv_out_weight=props.inverse_or_zero(outw.reshape(-1, 1)),
                  alpha=given["alpha"], uniform=1.0 / given["n"],
                  personalization=device.zeros((1, 1), np.float32))
    if w is not None:
        consts["weights"] = xp.ascontiguousarray(g.edge_weights[:, w].reshape(-1, 1))
    sources = np.asarray(given["sources"], dtype=np.int64)
    if sources[0] == _pr.UNIFORM:
        x = props.vertex_property(g, 1, 1.0 / given["n"])
        local = sources
    else:
        x = props.vertex_property(g, k)
        own = (sources >= part.lo) & (sources < part.hi)
        local = np.where(own, sources - part.lo, NOT_A_SOURCE)
        x[device.asarray(local[own]), device.asarray(np.flatnonzero(own))] = 1.0
    consts["sources"] = device.asarray(local)
    dangling = (outw[:part.n_own] == 0).astype(np.float64)
    box, sent = outbox(part, _own(part, x))
    pushed = _own(part, x).copy() if given["change_driven"] else None
    return State(x, box, _pr_partial(dangling, _own(part, x), None, sent), consts=consts,
                 dangling=dangling, pushed=pushed, given=given)


def _pr_partial(dangling, new, old, sent):
    xp = device.xp
    mass = device.to_host(xp.dot(dangling, new.astype(np.float64)))
    l1 = None if old is None else device.to_host(
        abs(new.astype(np.float64) - old.astype(np.float64)).sum(axis=0))
    return dict(dangling=mass, l1=l1, sent=sent)


def _pr_step(part, state, shared, inbox):
    g, given = part.graph, state.given
    k = given["k"]
    x = _step_rows(part, state, inbox)
    call = dict(state.consts, rows=x, state=x, x_next=props.vertex_property(g, k),
                dangling=device.asarray(shared["dangling"].astype(np.float32)))
    edge = _pr.share if given["weight"] is None else _pr.weighted_share
    ops.foldmap(g, [dataclasses.replace(edge, store=False),
                    ops.Vertex(_pr.update, aggregate="acc")], call, direction="pull", k=k)
    x_next = call["x_next"]
    x_next[part.n_own:] = x[part.n_own:]
    box, sent, pushed = _send(part, x_next, state, state.pushed, given["tol"] / given["n"],
                              given["change_driven"])
    partial = _pr_partial(state.dangling, _own(part, x_next), _own(part, x), sent)
    return State(x_next, box, partial, consts=state.consts, dangling=state.dangling,
                 pushed=pushed, given=given)


def _pr_reduce(tol):
    def reduce(partials):
        shared = dict(dangling=sum(p["dangling"] for p in partials))
        if partials[0]["l1"] is None:
            return shared, False
        return shared, float(sum(p["l1"] for p in partials).max()) < tol
    return reduce


def _pr_frame(column):
    def frame(part, state):
        x = _own(part, state.x)
        return _frame(part, {column: x[:, 0] if column == "pagerank" else x})
    return frame


def _weight_index(graph, weight):
    """The weight column a PageRank uses: None (unweighted) or its index."""
    if weight is False or not graph.weight_names:
        if weight not in (None, False):
            raise ValueError(f"weight={weight!r}: this graph has no edge weights")
        return None
    if weight is None:
        return 0
    if weight not in graph.weight_names:
        raise ValueError(f"weight={weight!r}: not a weight column of this graph "
                         f"({graph.weight_names})")
    return graph.weight_names.index(weight)


@algorithm("pagerank", summary="PageRank of every vertex, the graph partitioned over workers",
           columns=("vertex", "pagerank"), weights="used", options=_CHANGE_DRIVEN,
           into=ALGORITHMS)
def pagerank(graph, alpha=0.85, tol=1e-6, max_iter=100, *, weight=None, execution,
             return_info=False, progress=None, transport=None):
    """PageRank of every vertex, as :func:`onyx_rapids.pagerank` (same math, defaults and stop
    test): a dask DataFrame of ``vertex``, ``pagerank``.

    ``change_driven=True`` sends a partition's rows to the others only when they moved by more
    than ``tol / n`` since last sent (the ghost rows then lag by less than that).
    ``progress(iteration, seconds)``, if given, is called after each iteration.

    Example::

        >>> pr = odask.pagerank(g).compute()                       # doctest: +SKIP
    """
    return _pagerank(graph, "pagerank", np.array([_pr.UNIFORM]), alpha, tol, max_iter, weight,
                     execution.change_driven, return_info, progress, transport)


@algorithm("personalized_pagerank", summary="PageRank personalized to each of k sources, the "
           "graph partitioned over workers",
           inputs=(Input("sources", inputs.VERTICES, help="one teleport vertex per column"),),
           columns=("vertex", "ppr_{i}"), weights="used", options=_CHANGE_DRIVEN,
           into=ALGORITHMS)
def personalized_pagerank(graph, sources, alpha=0.85, tol=1e-6, max_iter=100, *, weight=None,
                          execution, return_info=False, progress=None, transport=None):
    """PageRank personalized to each of ``sources`` (k vertex ids, all at once), as
    :func:`onyx_rapids.personalized_pagerank`: ``vertex``, ``ppr_0``..``ppr_{k-1}``."""
    ids = graph.to_internal(np.atleast_1d(np.asarray(sources)), "sources")
    if ids.size == 0:
        raise ValueError("sources: give at least one vertex")
    return _pagerank(graph, "personalized_pagerank", ids, alpha, tol, max_iter, weight,
                     execution.change_driven, return_info, progress, transport)


def _pagerank(graph, name, sources, alpha, tol, max_iter, weight, change_driven, return_info,
              progress, transport):
    given = dict(k=int(sources.size), weight=_weight_index(graph, weight), alpha=float(alpha),
                 n=graph.n, sources=sources, tol=float(tol), change_driven=bool(change_driven))
    column = "pagerank" if name == "pagerank" else "ppr_*"
    frame, info = iterate(graph, name, _pr_start, _pr_step, _pr_reduce(tol), _pr_frame(column),
                          [given] * graph.npartitions, max_iter=max_iter,
                          variant=dict(change_driven=bool(change_driven)), progress=progress,
                          transport=transport)
    return _finish(name, frame, info, return_info)


def _finish(name, frame, info, return_info):
    if not info.converged:
        import warnings

        warnings.warn(f"{name} did not converge in {info.iterations} iterations; raise "
                      "max_iter or tol for a converged result", RuntimeWarning, stacklevel=3)
    return (frame, info) if return_info else frame


# ----------------------------------------------------------------- label propagation

def _lp_start(part, given):
    xp, g = device.xp, part.graph
    if "pairs" in given:  # (ids, classes) of the labelled vertices: this range's rows built here
        ids, classes = given["pairs"]
        own = (ids >= part.lo) & (ids < part.hi)
        lp0_own, labelled_own = inputs.one_hot_labels(
            xp, part.n_own, device.asarray(ids[own] - part.lo),
            device.asarray(classes[own]), given["k"])
    else:
        lp0_own, labelled_own = given["lp0"], given["labelled"]
    K = lp0_own.shape[1]
    lp0 = props.vertex_property(g, K)
    lp0[:part.n_own] = device.asarray(lp0_own)
    clamped = xp.zeros((g.n, 1), dtype=np.float32)
    clamped[:part.n_own, 0] = device.asarray(labelled_own & given["clamp"])
    consts = dict(k=given["k"], alpha=given["alpha"], lp0=lp0, clamped=clamped,
                  prob=props.vertex_property(g, K))
    if given["weights"] is not None:
        consts["weights"] = xp.ascontiguousarray(g.edge_weights[:, given["weights"]])
    x = props.copy(lp0)
    box, sent = outbox(part, _own(part, x))
    pushed = _own(part, x).copy() if given["change_driven"] else None
    return State(x, box, dict(sent=sent, change=None), consts=consts, pushed=pushed,
                 given=given)


def _lp_step(part, state, shared, inbox):
    g, given = part.graph, state.given
    k = given["k"]
    x = _step_rows(part, state, inbox)
    K = x.shape[1]
    call = dict(state.consts, rows=x, state=x, x_next=props.vertex_property(g, K))
    edge = _lp.label if given["weights"] is None else (
        _lp.single_weighted_label if K == k else ops.Edge(_lp.weighted_label, "acc"))
    ops.foldmap(g, [dataclasses.replace(edge, store=False), ops.Normalize("acc", "prob", k),
                    ops.Vertex(_lp.mix),
                    ops.Normalize("x_next", None, k), ops.Vertex(_lp.keep_labelled)],
                call, direction="pull", k=K)
    x_next = call["x_next"]
    x_next[part.n_own:] = x[part.n_own:]
    box, sent, pushed = _send(part, x_next, state, state.pushed, given["tol"],
                              given["change_driven"])
    new, old = _own(part, x_next), _own(part, x)
    change = float(abs(new - old).max()) if new.size else 0.0  # CuPy's max has no initial
    size = float(abs(new).max()) if new.size else 0.0
    return State(x_next, box, dict(sent=sent, change=(change, size)), consts=state.consts,
                 pushed=pushed, given=given)


def _lp_reduce(tol):
    def reduce(partials):
        if partials[0]["change"] is None:
            return None, False
        change = max(p["change"][0] for p in partials)
        size = max(p["change"][1] for p in partials)
        return None, change <= tol * max(1.0, size)
    return reduce


def _lp_frame(part, state):
    x = _own(part, state.x)
    columns = {"lp_*": x}
    if state.given["partitions"] == 1:
        columns["label"] = x.argmax(axis=1).astype(np.int32)
    return _frame(part, columns)


@algorithm("label_propagation", summary="class probabilities spread from labelled vertices, "
           "the graph partitioned over workers",
           inputs=(Input("labels", inputs.LABELS, help="frame of vertex, label (or label_0..)"),
                   Input("k", inputs.CLASSES, help="classes per partition")),
           columns=("vertex", "lp_{i}", "label"), weights="used", options=_CHANGE_DRIVEN,
           params=dict(clamp=inputs.FLAG), into=ALGORITHMS)
def label_propagation(graph, labels, k, alpha=0.85, clamp=True, tol=1e-6, max_iter=100, *,
                      weight=None, execution, return_info=False, progress=None,
                      transport=None):
    """Class probabilities spread from labelled vertices, as
    :func:`onyx_rapids.label_propagation`: ``vertex``, ``lp_0``.. and ``label`` (P = 1).

    ``labels``: a pandas frame of ``vertex`` and ``label`` (or ``label_0``.. for P partitions of
    k classes), or a full n x P*k lp^0 array in ``graph.vertices`` order.
    ``change_driven=True`` sends only rows that moved by more than ``tol``."""
    lp0, labelled, P = inputs.LABELS.on_partitions(graph, labels, k)
    change_driven = execution.change_driven
    weights = _lp_weights(graph, weight, P)
    base = dict(k=int(k), alpha=float(alpha), clamp=bool(clamp), tol=float(tol),
                weights=weights, change_driven=bool(change_driven), partitions=P)
    if lp0 is None:  # a frame: only the labelled (id, classes) pairs travel
        given = [dict(base, pairs=labelled)] * graph.npartitions
    else:
        lp_slices, mask_slices = slices(graph, lp0), slices(graph, labelled)
        given = [dict(base, lp0=a, labelled=b) for a, b in zip(lp_slices, mask_slices)]
    frame, info = iterate(graph, "label_propagation", _lp_start, _lp_step,
                          _lp_reduce(tol), _lp_frame, given, max_iter=max_iter,
                          variant=dict(change_driven=bool(change_driven)), progress=progress,
                          transport=transport)
    return _finish("label_propagation", frame, info, return_info)


def _lp_weights(graph, weight, P):
    """The weight column indices a label propagation reads (one per partition) or None."""
    if weight is False or not graph.weight_names:
        if weight not in (None, False):
            raise ValueError(f"weight={weight!r}: this graph has no edge weights")
        return None
    names = graph.weight_names if weight is None else (
        [weight] if isinstance(weight, str) else list(weight))
    if len(names) != P:
        raise ValueError(f"label_propagation with {P} partition(s) needs {P} edge weight "
                         f"column(s); got {len(names)} ({names}); pass weight=[...] naming "
                         f"{P}, or weight=False")
    missing = [w for w in names if w not in graph.weight_names]
    if missing:
        raise ValueError(f"weight={missing[0]!r}: not a weight column of this graph "
                         f"({graph.weight_names})")
    return [graph.weight_names.index(w) for w in names]


# ----------------------------------------------------------------- feature propagation

def _fp_start(part, given):
    g = part.graph
    features = device.asarray(given["features"]).astype(np.float32)
    k = features.shape[1]
    x = props.vertex_property(g, k)
    x[:part.n_own] = features
    degree = device.xp.ones(g.n, dtype=np.float64)  # ghosts' rows are the owners' to scale
    degree[:part.n_own] += g.in_degree[:part.n_own]  # A + I on the simple undirected view
    s = props.column(1.0 / device.xp.sqrt(degree))
    y = x * s
    box, sent = outbox(part, _own(part, y))
    consts = dict(x=x, alpha=given["alpha"], inv_sqrt_degree=s)
    return State(y, box, dict(sent=sent), h=x, consts=consts, given=given)


def _fp_step(part, state, shared, inbox):
    g = part.graph
    y = _step_rows(part, state, inbox)
    k = y.shape[1]
    call = dict(state.consts, y=y,
                h_next=props.vertex_property(g, k), y_next=props.vertex_property(g, k))
    ops.foldmap(g, [dataclasses.replace(_fp.scaled_neighbour, store=False),
                    ops.Vertex(_fp.teleport_mix, aggregate="acc")], call, direction="pull", k=k)
    y_next = call["y_next"]
    y_next[part.n_own:] = y[part.n_own:]
    box, sent = outbox(part, _own(part, y_next))
    return State(y_next, box, dict(sent=sent), h=call["h_next"], consts=state.consts,
                 given=state.given)


def _fp_frame(part, state):
    return _frame(part, {"h_*": _own(part, state.h)})


def _never(partials):
    return None, False


@algorithm("feature_propagation", summary="APPNP feature propagation, fixed iterations, the "
           "graph partitioned over workers",
           inputs=(Input("features", inputs.VALUES, help="X, n x k"),),
           columns=("vertex", "h_{i}"), options={}, params=dict(alpha=inputs.Float(0, 1)),
           into=ALGORITHMS)
def feature_propagation(graph, features, alpha=0.1, iterations=10, *, execution,
                        return_info=False, progress=None, transport=None):
    """APPNP propagation of ``features`` over the simple undirected view, as
    :func:`onyx_rapids.feature_propagation`: ``vertex``, ``h_0``..``h_{k-1}``.

    ``features``: an n x k array in ``graph.vertices`` order, or a pandas frame of ``vertex``
    and k value columns (every vertex once)."""
    x = inputs.VALUES.on_partitions(graph, features, "features")
    view = graph.simple_undirected()
    given = [dict(features=f, alpha=float(alpha)) for f in slices(view, x)]
    frame, info = iterate(view, "feature_propagation", _fp_start, _fp_step, _never, _fp_frame,
                          given, max_iter=int(iterations), variant=dict(), progress=progress,
                          transport=transport)
    info.converged = True  # a fixed number of iterations, as APPNP
    return (frame, info) if return_info else frame


# ----------------------------------------------------------------- bfs, components

@cuda.jit(device=True)
def smaller_label(f, u, v, e, label):
    return label[u, f]


@cuda.jit(device=True)
def parent_offer(f, u, v, e, distance, unreached):
    d = distance[u, 0]
    if d != unreached and d + 1 == distance[v, 0]:
        return u
    return unreached


def _min_start(part, x, changed_own):
    """A min-propagation's start state: ``x`` (n_local x k), sending its changed rows."""
    pushed = _own(part, x).copy()
    pushed[changed_own] = -1  # differs from every row that starts set: sent at the start
    box, sent = outbox(part, _own(part, x), pushed)
    return box, sent, pushed


def _min_step(part, state, inbox, fn, name, args):
    """One round of ``x(v) = min(x(v), min_u fn(u))`` over the in-edges of the vertices the
    rows that changed last round reach; only the rows that changed are sent."""
    g = part.graph
    x = _step_rows(part, state, inbox)
    active = device.xp.zeros(g.n, dtype=bool)
    active[:part.n_own] = state.changed
    for q, payload in inbox.items():
        a, b = part.recv[q]
        if isinstance(payload, tuple):
            active[a + payload[0]] = True
        elif payload is not None:  # a whole block (most of it moved)
            active[a:b] = True
    out = frontier.empty(g.n)
    ops.edgemap(g, fn, name, dict(args, **{name: x}), reduce="min", k=x.shape[1],
                active_in=frontier.from_mask(active), active_out=out, direction="pull")
    changed = frontier.to_mask(out, g.n)[:part.n_own]
    pushed = state.pushed.copy()
    box, sent = outbox(part, _own(part, x), pushed)
    partial = dict(sent=sent, changed=int(changed.sum()))
    return x, box, partial, changed, pushed


def _bfs_start(part, given):
    xp, g = device.xp, part.graph
    sources = given["sources"]
    x = props.vertex_property(g, sources.size, fill=UNREACHED, dtype=np.int32)
    own = (sources >= part.lo) & (sources < part.hi)
    x[device.asarray(sources[own] - part.lo), device.asarray(np.flatnonzero(own))] = 0
    changed = xp.zeros(part.n_own, dtype=bool)
    changed[device.asarray(sources[own] - part.lo)] = True
    box, sent, pushed = _min_start(part, x, changed)
    return State(x, box, dict(sent=sent, changed=int(changed.sum())), changed=changed,
                 pushed=pushed, given=given)


def _bfs_step(part, state, shared, inbox):
    x, box, partial, changed, pushed = _min_step(part, state, inbox, _bfs.offer, "distance",
                                                 dict(unreached=UNREACHED))
    return State(x, box, partial, changed=changed, pushed=pushed, given=state.given)


def _nothing_changed(partials):
    return None, sum(p["changed"] for p in partials) == 0


def _bfs_frame(part, state):
    g, x = part.graph, state.x
    if state.given["sources"].size > 1:
        return _frame(part, {"distance_*": _own(part, x)})
    parent = props.vertex_property(g, 1, fill=UNREACHED, dtype=np.int32)
    ops.edgemap(g, parent_offer, "parent", dict(parent=parent, distance=x, unreached=UNREACHED),
                reduce="min", k=1, direction="pull")
    local = _own(part, parent)[:, 0]
    valid = local != UNREACHED
    ids = device.asarray(np.concatenate([part.own_ids, part.ghost_ids]))
    return _frame(part, {"distance": _own(part, x)[:, 0],
                         "predecessor": (ids[device.xp.where(valid, local, 0)], valid)})


@algorithm("bfs", summary="hop distances from one or k sources, the graph partitioned over "
           "workers",
           inputs=(Input("source", inputs.VERTEX, required=False, help="one start vertex"),
                   Input("sources", inputs.VERTICES, required=False,
                         help="k start vertices at once")),
           columns=("vertex", "distance", "predecessor"), options={}, into=ALGORITHMS)
def bfs(graph, source=None, sources=None, *, execution, return_info=False, progress=None,
        transport=None):
    """Hop distances from ``source`` (``vertex``, ``distance``, ``predecessor``) or from each of
    ``sources`` at once (``vertex``, ``distance_0``..), as :func:`onyx_rapids.bfs`: unreachable
    vertices get 2^31 - 1, a missing predecessor is null.  Each round relaxes the in-edges of
    the vertices the last round's changed rows reach; only changed rows are exchanged."""
    if (source is None) == (sources is None):
        raise ValueError("bfs: give source (one vertex) or sources (a list), not both or none")
    starts = [source] if sources is None else list(np.atleast_1d(np.asarray(sources)))
    name = "source" if sources is None else "sources"
    ids = graph.to_internal(np.asarray(starts), name)
    if ids.size == 0:
        raise ValueError("sources: give at least one vertex")
    given = dict(sources=ids)
    frame, info = iterate(graph, "bfs", _bfs_start, _bfs_step, _nothing_changed, _bfs_frame,
                          [given] * graph.npartitions, max_iter=graph.n + 1, variant=dict(),
                          progress=progress, transport=transport)
    return (frame, info) if return_info else frame


def _wcc_start(part, given):
    ids = np.concatenate([np.arange(part.lo, part.hi), part.ghosts]).astype(given["dtype"])
    x = device.asarray(ids).reshape(-1, 1)
    changed = device.xp.ones(part.n_own, dtype=bool)
    box, sent, pushed = _min_start(part, x, changed)
    return State(x, box, dict(sent=sent, changed=part.n_own), changed=changed,
                 pushed=pushed, given=given)


def _wcc_step(part, state, shared, inbox):
    x, box, partial, changed, pushed = _min_step(part, state, inbox, smaller_label, "label",
                                                 {})
    return State(x, box, partial, changed=changed, pushed=pushed, given=state.given)


def _wcc_frame(part, state):
    labels = device.to_host(_own(part, state.x)[:, 0]).astype(np.int64)
    vertices = state.given["vertices"]
    return _frame(part, {"labels": device.asarray(vertices[labels])})


@algorithm("weakly_connected_components", summary="the component of every vertex by min-label "
           "propagation, the graph partitioned over workers", columns=("vertex", "labels"),
           options={}, into=ALGORITHMS)
def weakly_connected_components(graph, *, execution, return_info=False, progress=None,
                                transport=None):
    """The component of every vertex as :func:`onyx_rapids.weakly_connected_components`:
    ``vertex``, ``labels`` (the smallest original id of the component), by min-label
    propagation over the simple undirected view (a round per hop of the longest shortest path
    it needs, fewer where partitions relax in place)."""
    view = graph.simple_undirected()
    vertices = graph.client.scatter(graph.vertices, broadcast=True, hash=False)
    dtype = np.int32 if graph.n < 2**31 else np.int64
    given = dict(vertices=vertices, dtype=dtype)
    frame, info = iterate(view, "weakly_connected_components", _wcc_start, _wcc_step,
                          _nothing_changed, _wcc_frame, [given] * view.npartitions,
                          max_iter=graph.n + 1, variant=dict(), progress=progress,
                          transport=transport)
    return (frame, info) if return_info else frame
