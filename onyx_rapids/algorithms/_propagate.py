"""The aggregate-then-update iteration every propagation shares (PageRank, personalized
PageRank, label propagation, MMR, MML), in all its execution variants.

Each iteration aggregates an edge contribution over the in-edges of every vertex into ``acc``
and then updates every vertex from its aggregate:

    acc(v) = sum_{u in N-(v)} contribution(u, v, e; rows),   x_next(v) = update(acc(v), x(v), ..)

In bulk mode ``rows`` is ``x`` and ``acc`` starts at zero each iteration (folded, it is never
stored: the update reads it from the pull's registers, :data:`REGISTERS`).  In change-driven mode
(ONYX 4.2) ``acc`` is kept on the vertices in float64 (many small changes would vanish in
float32) and adjusted by ``rows = delta``, the change of the vertices whose row moved by more
than ``threshold`` since they last pushed; only those vertices are active.

``change_driven="auto"`` chooses the mode each iteration by the rule of push-pull switching
(SIMD-X): while the vertices that moved by more than ``threshold`` in the last iteration own
more than ``pull_fraction`` of the out-edges, iterate in bulk (pull); below, push their changes
(change-driven).  A switch to change-driven takes the last bulk aggregate as its float64
``acc`` (it holds the rows that iteration read; folded bulk pulls keep their sums in
registers, so the switch sums those rows once more), so no iteration is repeated; a switch back
drops the change-driven state.  The rule counts edges, not time, and a change-driven iteration
also pays its frontier's bookkeeping: so each iteration is timed (the stop test synchronizes
anyway), once :data:`SLOW_ITERATIONS` change-driven iterations on the graph took longer on average
than its bulk ones (or one four times as long) the run switches back (:func:`judge`; an
iteration that built a kernel, which numba compiles at its first launch, is not counted), and
the graph remembers
(:func:`auto_memo`, per edge function, k and case) that change-driven does not pay there, so later
runs stay bulk.
``info.modes`` records each iteration's mode.

Local propagations (``local=True``: a vertex's update reads nothing that changes but its own
aggregate, as PageRank's without dangling vertices) run change-driven iterations over the
vertices the push reached (:data:`LOCAL`): the push marks its destinations, the vertex step
visits only those, writes their rows in place and counts the next frontier's out-edges in the
same kernel (an ``ops.MaxChange`` with ``moved`` against the pushed rows), so an iteration costs
its frontier, not n.  Otherwise every change-driven vertex step visits all n vertices.

The default stop tests (:class:`MaxChangeTest`; PageRank's :class:`L1ChangeTest`) are measured
by an ``ops.MaxChange`` step at the end of the iteration's vertex kernel (every variant but the
folded push, which calls the test on the rows), so they cost no pass of their own over the n x
k rows; in a local step they measure the visited rows, the only ones that changed.

Execution: ``fold`` runs the edge and vertex steps as one generated kernel per iteration (pull:
[aggregate, update]; push: [update, push the new row], primed by one push); ``direction``
``"auto"`` pulls bulk iterations and, change-driven and unfolded, chooses push or pull each
iteration from the active vertices' out-edges against ``pull_fraction`` of all edges (SIMD-X).
Under ``change_driven="auto"``, ``fold`` applies to the bulk iterations and the change-driven
ones push unfolded.  The contract is in ``docs/algorithms.md``; the options in
``docs/execution.md``.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from numba import cuda

from .. import device, frontier, operators as ops, properties as props
from ._common import RunInfo, choose_direction

BULK, CHANGE_DRIVEN = "bulk", "change-driven"  # the modes ``info.modes`` records

#: Run change-driven iterations of ``local`` propagations over the vertices their push reached
#: only (the push marks its destinations; the vertex step visits those, updates the rows in
#: place and counts the next frontier's out-edges in the same kernel), instead of a vertex
#: step over all n.  False: every change-driven iteration visits every vertex (the ablation).
LOCAL = True

#: Keep the aggregate of bulk folded pulls in registers (``ops.Edge(.., store=False)``): the
#: update reads each vertex's sums where the pull left them, so an iteration neither zeroes,
#: adds to nor re-reads an n x k aggregate.  False stores it (the ablation).
REGISTERS = True

#: Change-driven iterations (on a graph, across runs) whose mean time ``change_driven="auto"``
#: compares with the bulk iterations' before it may go back to bulk for good (:func:`judge`).
SLOW_ITERATIONS = 3


@cuda.jit(device=True)
def moved(f, v, x_next, pushed, threshold):
    return abs(x_next[v, f] - pushed[v, f]) > threshold


@cuda.jit(device=True)
def commit(f, v, x_next, pushed, delta_next):
    delta_next[v, f] = x_next[v, f] - pushed[v, f]
    pushed[v, f] = x_next[v, f]
    return True


@cuda.jit(device=True)
def commit_flagged(f, v, x_next, pushed, delta_next, moved_any):
    moved_any[0] = 1  # every writer stores the same value
    return commit(f, v, x_next, pushed, delta_next)


@cuda.jit(device=True)
def keep(f, v, x_next, state):
    state[v, f] = x_next[v, f]  # a local step updates the rows in place (see LOCAL)
    return True


class MaxChangeTest:
    """The default stop test (docs/algorithms.md): ``max |x_next - x| <= tol * max(1, max
    |x_next|)``.  :func:`propagate` measures it inside the iteration's vertex kernel (an
    :class:`~onyx_rapids.operators.MaxChange` step after the update, so the test costs no pass
    over the n x k rows of its own); called as ``test(x_next, x)`` it makes that pass."""

    def __init__(self, tol: float):
        self.tol = float(tol)

    def __call__(self, x_next, x) -> bool:
        return props.has_converged(x_next, x, self.tol)

    def passed(self, stop) -> bool:
        """The test on the two maxima an ``ops.MaxChange`` step left in ``stop``."""
        change, size = (float(v) for v in device.to_host(stop))
        return change <= self.tol * max(1.0, size)


def max_change_test(tol) -> MaxChangeTest:
    return MaxChangeTest(tol)


class L1ChangeTest:
    """PageRank's stop test (cuGraph's): ``max_f sum_v |x_next - x| < tol``, in float64.
    :func:`propagate` measures it in the iteration's vertex kernel (``ops.MaxChange`` with
    ``sums``); called as ``test(x_next, x)`` it makes a pass of its own."""

    def __init__(self, tol: float):
        self.tol = float(tol)

    def __call__(self, x_next, x) -> bool:
        return props.l1_change(x_next, x) < self.tol

    def passed(self, sums) -> bool:
        """The test on the per-feature sums an ``ops.MaxChange`` step left in ``sums``."""
        return float(device.to_host(sums).max(initial=0.0)) < self.tol


class _StopTest:
    """How one run evaluates ``converged``: in the vertex kernel (``steps()`` adds the step,
    ``start()`` zeroes the measures before each iteration) or, for other tests and the folded
    push, by calling it on the rows."""

    def __init__(self, converged, args: dict, in_kernel: bool, k: int):
        self.converged = converged
        self.l1 = isinstance(converged, L1ChangeTest)
        self.in_kernel = in_kernel and (self.l1 or isinstance(converged, MaxChangeTest))
        if self.in_kernel:
            args["stop"] = device.zeros(2, np.float32)
            if self.l1:
                args["l1_change"] = device.zeros(int(k), np.float64)

    def steps(self, steps, moved: bool = False) -> list:
        """``steps`` and the in-kernel test; ``moved``: it also adds up the out-degrees of the
        rows that moved by more than ``args["threshold"]`` into ``args["moved_edges"]``."""
        if not self.in_kernel:
            return list(steps)
        extra = dict(moved="moved_edges", threshold="threshold", weight="out_degree") \
            if moved else {}
        if self.l1:
            extra["sums"] = "l1_change"
        return list(steps) + [ops.MaxChange("x_next", "state", "stop", **extra)]

    def start(self, args):
        if self.in_kernel:
            props.fill(args["stop"], 0.0)
            if self.l1:
                props.fill(args["l1_change"], 0.0)
        if "moved_edges" in args:
            props.fill(args["moved_edges"], 0)

    def done(self, args, x) -> bool:
        if self.in_kernel:
            if self.l1:
                return self.converged.passed(args["l1_change"])
            return self.converged.passed(args["stop"])
        return self.converged(args["x_next"], x)


def bulk_pull_fold(execution) -> bool:
    """The propagations' default ``fold``: folded when the iterations are bulk and pull (one
    launch fewer per iteration, and the aggregate kept in registers: :data:`REGISTERS`)."""
    return execution.change_driven is not True and execution.direction in (None, "auto", "pull")


def plan(execution, *, default_fold):
    """(fold, direction) of a run (of its bulk iterations under ``change_driven="auto"``):
    ``direction`` is "push", "pull" or "auto" (chosen per iteration; only change-driven
    unfolded runs)."""
    cd = execution.change_driven is True
    fold = default_fold if execution.fold is None else execution.fold
    direction = execution.direction or "auto"
    if direction == "auto":
        if fold or not cd:
            direction = "push" if (cd and fold) else "pull"
    return fold, direction


def _watch():
    """Counts the out-edges of the rows that will push (moved from what they last pushed by
    more than the threshold) into ``moved_edges``; its maxima (``watch``) are not read."""
    return ops.MaxChange("x_next", "pushed", "watch", moved="moved_edges",
                         threshold="threshold", weight="out_degree")


#: On the GPU, replay a local change-driven step's device work as a CUDA graph (:class:`_Replay`).
REPLAY = True


class _Replay:
    """A local change-driven step's device work (clearing the bit-vectors and the stop test's
    sums, the push, the vertex kernel) recorded once as a CUDA graph and replayed: one graph
    launch in place of the operators' argument checks and parsing and two kernel launches,
    which cost a k = 1 step far more host time than its kernels take.  A step
    runs as it is the first time its key is seen (its kernels get built), is captured on a
    stream of its own the second time, and replayed from then on; the key names what the
    launches read (the arrays that trade places every step, the direction).  The simulator
    (or ``REPLAY = False``) runs every step as it is.  ``run`` says whether the step was one
    of those first two."""

    replays = 0  # graph launches in this process (tests read it)

    def __init__(self, on: bool = True):
        self.on = on and REPLAY and device.BACKEND == "gpu"
        self.graphs, self.seen, self.stream = {}, set(), None

    def run(self, key, step) -> bool:
        if not self.on:
            step()
            return False
        graph = self.graphs.get(key)
        fresh = graph is None
        if graph is None:
            if key not in self.seen:
                self.seen.add(key)
                step()
                return True
            if self.stream is None:
                self.stream = device.xp.cuda.Stream()
            device.synchronize()  # the work queued on the default stream comes first
            with self.stream:
                self.stream.begin_capture()
                try:
                    step()
                finally:
                    graph = self.stream.end_capture()
            self.graphs[key] = graph
        graph.launch(self.stream)
        self.stream.synchronize()
        _Replay.replays += 1
        return fresh


def _local_setup(g, args, stop, update):
    """A local change-driven run's arrays, vertex steps ([update, watch, moved, commit, the
    stop test, keep]) and its two bit-vectors (the push's destinations, a spare frontier)."""
    args.update(out_degree=g.out_degree, moved_edges=device.zeros(1, np.int64),
                watch=device.zeros(2, np.float32))
    steps = stop.steps(list(update) + [_watch(), ops.Vertex(moved), ops.Vertex(commit)])
    return steps + [ops.Vertex(keep)], frontier.empty(g.n), frontier.empty(g.n)


def propagate(g, x, contribution, update, args, *, execution, converged, max_iter,
              threshold, default_fold=False, before=None, local=False, case=""):
    """Iterate from ``x`` (n x k, copied) until ``converged(x_next, x)`` or ``max_iter``.

    ``contribution(f, u, v, e, rows, ..)`` is the edge function (or an ``ops.Gather`` of
    ``rows``); ``update`` the vertex steps
    (:class:`~onyx_rapids.operators.Vertex` with ``aggregate="acc"`` / ``Normalize("acc",
    ..)``) that write ``x_next`` from the aggregate ``acc`` (and return True); ``args``
    what they read besides ``state`` (x), ``x_next``, ``rows`` and ``acc`` (bulk folded pulls
    keep ``acc`` in registers: :data:`REGISTERS`).
    ``threshold``: how far a feature must move for its vertex to push (change-driven).
    ``before(x)``, if given, runs before the first iteration (e.g. a dangling-mass dot).
    ``local``: a vertex's update reads nothing that changes but its own aggregate (no global
    sum such as PageRank's dangling mass), so a change-driven iteration need only visit the
    vertices its edges reached (see :data:`LOCAL`).
    ``case``: with the edge function and k, names what ``change_driven="auto"`` learns on the
    graph (:func:`auto_memo`).
    Returns ``(x, RunInfo)``; ``info.directions`` holds each iteration's direction,
    ``info.modes`` its mode (bulk or change-driven).
    """
    if execution.change_driven == "auto":
        return _auto(g, x, contribution, update, args, execution=execution,
                     converged=converged, max_iter=max_iter, threshold=threshold,
                     default_fold=default_fold, before=before, local=local, case=case)
    fold, direction = plan(execution, default_fold=default_fold)
    cd = execution.change_driven
    k = x.shape[1]
    acc_dtype = np.float64 if cd else np.float32
    x = props.copy(x)
    # bulk folded pulls keep each vertex's aggregate in registers (no n x k array)
    registers = REGISTERS and fold and not cd and direction == "pull"
    args = dict(args, x_next=props.vertex_property(g, k))
    if not registers:
        args["acc"] = props.vertex_property(g, k, dtype=acc_dtype)
    steps = list(update)
    push_fold = fold and direction == "push"
    if cd:
        args.update(pushed=props.copy(x), delta_next=props.vertex_property(g, k),
                    threshold=float(threshold))
        steps += [ops.Vertex(moved), ops.Vertex(commit)]
        delta, active = props.copy(x), frontier.full(g.n)  # the first push sends everything
        if push_fold:
            # the folded push marks no frontier (marking every pushed edge's destination cost
            # several times the kernel on rmat: benchmarks/NOTES.md, "Below ONYX's ranges"):
            # a flag set by the moved vertices tells when to stop
            args["moved_any"] = device.xp.zeros(1, dtype=np.int32)
            steps[-1] = ops.Vertex(commit_flagged)
    else:
        delta = active = None
    stop = _StopTest(converged, args, in_kernel=not push_fold, k=k)
    local = bool(local and LOCAL and cd and not fold and stop.in_kernel)
    if local:  # the vertex step visits the vertices the edges reached, updating x in place
        steps, touched, spare_bits = _local_setup(g, args, stop, update)
        out_edges = g.m  # of the active vertices: the first push sends every row
    else:
        steps = stop.steps(steps)
    opts = dict(k=k, feature_aware=execution.feature_aware, block_size=execution.block_size,
                width=execution.width, edge_access=execution.edge_access)
    if before is not None:
        before(x)
    if push_fold:  # the folded push kernel reads a complete aggregate: prime it
        ops.foldmap(g, [edge(contribution, "acc")], dict(args, state=x, rows=x), direction="push",
                    **opts)
        spare = props.vertex_property(g, k, dtype=acc_dtype)

    info = RunInfo(variant=dict(feature_aware=execution.feature_aware, change_driven=cd,
                                fold=fold, fused=False, direction=direction), directions=[],
                   modes=[])
    replay = _Replay()
    for info.iterations in range(1, int(max_iter) + 1):
        if local:
            way = direction if direction != "auto" else \
                ("pull" if out_edges > execution.pull_fraction * g.m else "push")
        else:
            way = choose_direction(g, active, direction, execution.pull_fraction)
        info.directions.append(way)
        info.modes.append(CHANGE_DRIVEN if cd else BULK)
        if local:
            active_next = spare_bits  # cleared by the step
        else:
            active_next = frontier.empty(g.n) if cd and not push_fold else None
            stop.start(args)
        call = dict(args, state=x)
        if local:
            call["rows"] = delta
            # every vertex is visited in the first step (a start that is no fixed point of the
            # update moves vertices no edge reaches, of in-degree 0, too) and while the
            # frontier owns more than pull_fraction of the edges (marking the destinations of
            # most edges costs more than visiting every vertex)
            everyone = info.iterations == 1 or out_edges > execution.pull_fraction * g.m

            def step(call=call, active=active, active_next=active_next, everyone=everyone,
                     way=way):
                stop.start(args)
                frontier.clear(active_next)
                reached = None if everyone else frontier.clear(touched)
                ops.foldmap(g, [edge(contribution, "acc")], call, active_in=active,
                            active_out=reached, direction=way, **opts)
                ops.vertexmap(g, steps, call, active_in=reached, active_out=active_next,
                              **opts)

            if everyone:
                step()
            else:
                replay.run((id(x), id(delta), id(active), id(active_next), way), step)
            done = stop.done(args, x)
            delta, args["delta_next"] = args["delta_next"], delta
            spare_bits, active = active, active_next
            out_edges = moved_edges(args)
            if done or out_edges == 0:  # nothing left to push: no row can change again
                info.converged = True
                break
            continue
        if push_fold:
            # [update v, push v's new row or change] into the next aggregate, which starts as
            # this one (change-driven) or zero (bulk)
            if cd:
                spare[...] = args["acc"]
                args["moved_any"][0] = 0
            else:
                props.fill(spare, 0.0)
            call.update(acc_next=spare, rows=args["delta_next"] if cd else args["x_next"])
            ops.foldmap(g, steps + [edge(contribution, "acc_next")], call,
                        direction="push", **opts)
            args["acc"], spare = spare, args["acc"]
        else:
            if not cd and not registers:
                props.fill(args["acc"], 0.0)
            call["rows"] = delta if cd else x
            if fold:
                ops.foldmap(g, [edge(contribution, "acc", store=not registers)] + steps,
                            call, active_in=active, active_out=active_next, direction="pull",
                            **opts)
            else:
                ops.foldmap(g, [edge(contribution, "acc")], call, active_in=active, direction=way,
                            **opts)
                ops.vertexmap(g, steps, call, active_out=active_next, **opts)
        done = stop.done(args, x)
        x, args["x_next"] = args["x_next"], x
        if cd:
            delta, args["delta_next"] = args["delta_next"], delta
            active = active_next
            idle = (int(args["moved_any"][0]) == 0 if push_fold
                    else not frontier.any_active(active))
        else:
            idle = False
        if done or idle:
            info.converged = True
            break
    return x, info


def _auto(g, x, contribution, update, args, *, execution, converged, max_iter, threshold,
          default_fold, before, local, case):
    """``change_driven="auto"`` (see the module doc): bulk pulling iterations while the moved
    vertices own more than ``pull_fraction`` of the out-edges, change-driven pushes below.
    On a graph where change-driven was measured not to pay (:func:`auto_memo`), the run is
    the bulk one, nothing watched."""
    memo = auto_memo(g, contribution, x.shape[1], case)
    if memo.get("bulk only"):
        x, info = propagate(g, x, contribution, update, args,
                            execution=execution.replace(change_driven=False),
                            converged=converged, max_iter=max_iter, threshold=threshold,
                            default_fold=default_fold, before=before, local=local)
        info.variant["change_driven"] = "auto"
        return x, info
    fold, _ = plan(execution, default_fold=default_fold)
    k = x.shape[1]
    limit = execution.pull_fraction * g.m
    x = props.copy(x)
    args = dict(args, x_next=props.vertex_property(g, k), threshold=float(threshold),
                delta_next=props.vertex_property(g, k), out_degree=g.out_degree,
                moved_edges=device.zeros(1, np.int64))
    opts = dict(k=k, feature_aware=execution.feature_aware, block_size=execution.block_size,
                width=execution.width, edge_access=execution.edge_access)
    # bulk folded pulls keep their sums in registers (REGISTERS); a switch to change-driven
    # then sums the rows its iteration read once more, into bulk_acc (float32), for cd_acc
    registers = REGISTERS and fold
    bulk_acc = None if registers else props.vertex_property(g, k)
    cd_acc = None  # the change-driven iterations' float64 adjusted sums
    stop = _StopTest(converged, args, in_kernel=True, k=k)
    bulk_steps = stop.steps(update, moved=True)  # the test counts the movers' out-edges
    local = bool(local and LOCAL and stop.in_kernel)
    if local:  # change-driven: visit the vertices the push reached, update x in place
        cd_steps, touched, spare_bits = _local_setup(g, args, stop, update)
    else:
        cd_steps = stop.steps(list(update) + [ops.Vertex(moved), ops.Vertex(commit)])
    if before is not None:
        before(x)
    info = RunInfo(variant=dict(feature_aware=execution.feature_aware, change_driven="auto",
                                fold=fold, fused=False, direction="auto"), directions=[],
                   modes=[])
    mode, delta, active = BULK, None, None
    switch_cost = 0.0  # seconds the last switch to change-driven took, charged to its iteration
    replay = _Replay()
    for info.iterations in range(1, int(max_iter) + 1):
        if mode == CHANGE_DRIVEN and (moved_edges(args) if local else
                                      _out_edges(g, frontier.to_mask(active, g.n))) > limit:
            mode = BULK  # the change-driven state is dropped: bulk recomputes every sum
        info.modes.append(mode)
        idle, started, compiled = False, time.perf_counter(), ops.KERNEL_CACHE.misses
        if not (local and mode == CHANGE_DRIVEN):
            stop.start(args)
        if mode == BULK:
            info.directions.append("pull")
            call = dict(args, state=x, rows=x)
            if not registers:
                call["acc"] = props.fill(bulk_acc, 0.0)
            if fold:
                ops.foldmap(g, [edge(contribution, "acc", store=not registers)] + bulk_steps,
                            call, direction="pull", **opts)
            else:
                ops.foldmap(g, [edge(contribution, "acc")], call, direction="pull", **opts)
                ops.vertexmap(g, bulk_steps, call, **opts)
            x_next = args["x_next"]
            done = stop.done(args, x)
            if ops.KERNEL_CACHE.misses == compiled:
                record_bulk(memo, time.perf_counter() - started)
            switching = time.perf_counter()
            movers = None if done or memo.get("bulk only") else \
                _movers(g, stop, args, x_next, x, threshold, limit)
            if movers is not None:
                # change-driven from here: the sums of this iteration's rows x are pushed, so
                # x is what every vertex pushed except the movers, which push their change next
                mode = CHANGE_DRIVEN
                if cd_acc is None:
                    cd_acc = props.vertex_property(g, k, dtype=np.float64)
                    args["pushed"], delta = props.vertex_property(g, k), props.vertex_property(g, k)
                if registers:  # the sums stayed in registers: take them again from x
                    bulk_acc = props.vertex_property(g, k) if bulk_acc is None else \
                        props.fill(bulk_acc, 0.0)
                    ops.foldmap(g, [edge(contribution, "acc")], dict(call, acc=bulk_acc),
                                direction="pull", **opts)
                cd_acc[...] = bulk_acc
                props.commit_rows(x_next, x, movers, args["pushed"], args["delta_next"])
                delta, args["delta_next"] = args["delta_next"], delta
                active = frontier.from_mask(movers)
                switch_cost += time.perf_counter() - switching  # change-driven's, not bulk's
        else:
            info.directions.append("push")
            call = dict(args, acc=cd_acc, state=x, rows=delta)
            if local:
                active_next = spare_bits

                def step(call=call, active=active, active_next=active_next):
                    stop.start(args)
                    frontier.clear(active_next)
                    ops.foldmap(g, [edge(contribution, "acc")], call, active_in=active,
                                active_out=frontier.clear(touched), direction="push", **opts)
                    ops.vertexmap(g, cd_steps, call, active_in=touched,
                                  active_out=active_next, **opts)

                replay.run((id(x), id(delta), id(active), id(active_next)), step)
            else:
                active_next = frontier.empty(g.n)
                ops.foldmap(g, [edge(contribution, "acc")], call, active_in=active,
                            direction="push", **opts)
                ops.vertexmap(g, cd_steps, call, active_out=active_next, **opts)
            done = stop.done(args, x)
            delta, args["delta_next"] = args["delta_next"], delta
            if local:
                spare_bits, active = active, active_next
                idle = moved_edges(args) == 0  # nothing left to push: no row changes again
            else:
                active = active_next
                idle = not frontier.any_active(active)
            # (an iteration that built a kernel, compiled at its first launch, is not judged;
            # a step's first run and its recording as a CUDA graph are: they are what
            # change-driven costs on top of the replays)
            # (so is the switch to change-driven: finding the movers and committing their rows)
            if ops.KERNEL_CACHE.misses == compiled:
                seconds, switch_cost = time.perf_counter() - started + switch_cost, 0.0
                if judge(memo, seconds):
                    mode = BULK  # change-driven does not pay here
        if not (local and info.modes[-1] == CHANGE_DRIVEN):  # a local step kept x in place
            x, args["x_next"] = args["x_next"], x
        if done or idle:
            info.converged = True
            break
    seldom(memo, info.modes.count(CHANGE_DRIVEN), len(info.modes))
    return x, info


def _movers(g, stop, args, x_next, x, threshold, limit):
    """n booleans, the rows that moved by more than ``threshold``, when they own at most
    ``limit`` out-edges; else None.  With the test in the kernel, its count of their
    out-edges decides first, and the rows are compared only at a switch."""
    if stop.in_kernel:
        if moved_edges(args) > limit:
            return None
        return props.moved_rows(x_next, x, threshold)
    movers = props.moved_rows(x_next, x, threshold)
    return movers if _out_edges(g, movers) <= limit else None


def record_bulk(memo: dict, seconds: float, iterations: int = 1) -> None:
    """Add bulk iterations' time to what ``memo`` (the graph's) knows of them (PageRank's
    fused kernel adds its launch, all its iterations)."""
    total, count = memo.get("bulk", (0.0, 0))
    memo["bulk"] = (total + seconds, count + int(iterations))


def judge(memo: dict, seconds: float) -> bool:
    """Whether change-driven does not pay on this graph, after a change-driven iteration of
    ``seconds``: once :data:`SLOW_ITERATIONS` of them (over all runs on the graph, so a graph
    where a run has one change-driven iteration is caught too) take longer on average than
    the bulk iterations recorded with :func:`record_bulk`, or one takes four times as long, it
    sets ``memo["bulk only"]``.  Means, not single iterations: a pause of the host in one
    iteration must not make a graph bulk-only for good."""
    bulk_total, bulk_count = memo.get("bulk", (0.0, 0))
    if not bulk_count:
        return bool(memo.get("bulk only"))
    bulk = bulk_total / bulk_count
    total, count = memo.get("change-driven", (0.0, 0))
    total, count = total + seconds, count + 1
    memo["change-driven"] = (total, count)
    if seconds > 4 * bulk or (count >= SLOW_ITERATIONS and total > count * bulk):
        memo["bulk only"] = True
    return bool(memo.get("bulk only"))


#: Watched runs on a graph (per edge function, k and case) with change-driven iterations in under
#: :data:`SELDOM` of their iterations that ``change_driven="auto"`` allows before it stops
#: watching there (:func:`seldom`).
SELDOM_RUNS = 2
SELDOM = 0.1


def seldom(memo: dict, change_driven: int, iterations: int) -> bool:
    """Count a watched run that spent ``change_driven`` of its ``iterations`` change-driven.
    Watching costs every bulk iteration (the movers' out-edges are counted and read back;
    docs/performance.md), and a change-driven iteration
    saves at most a bulk one, so a run with change-driven iterations in under :data:`SELDOM`
    of its iterations cannot win that back; after :data:`SELDOM_RUNS` such runs
    ``memo["bulk only"]`` is set and later runs are the bulk ones."""
    if iterations and change_driven < SELDOM * iterations:
        memo["seldom"] = memo.get("seldom", 0) + 1
        if memo["seldom"] >= SELDOM_RUNS:
            memo["bulk only"] = True
    return bool(memo.get("bulk only"))


def judge_continuation(memo: dict, seconds: float, iterations: int) -> bool:
    """Whether change-driven does not pay on this graph, after a run that a fused bulk kernel
    handed over to :func:`propagate` at its switch took ``seconds`` for ``iterations`` more:
    its set-up, its first bulk iteration, the switch and the change-driven iterations are
    all what watching for the switch cost, so when they took longer than as many bulk
    iterations (:func:`record_bulk`) it sets ``memo["bulk only"]``."""
    bulk_total, bulk_count = memo.get("bulk", (0.0, 0))
    if bulk_count and iterations and seconds > iterations * bulk_total / bulk_count:
        memo["bulk only"] = True
    return bool(memo.get("bulk only"))


def moved_edges(args) -> int:
    """The out-edges of the rows the last bulk iteration moved by more than the threshold, as
    its stop test counted them (:class:`_StopTest` with ``moved``)."""
    return int(device.to_host(args["moved_edges"])[0])


def edge(contribution, into: str, store: bool = True):
    """The edge step of ``contribution`` into ``into``: an ``ops.Edge`` of an edge function,
    or the ``ops.Gather`` given, aimed at ``into``."""
    if isinstance(contribution, ops.Gather):
        return dataclasses.replace(contribution, into=into, store=store)
    return ops.Edge(contribution, into, store=store)


def _name(contribution) -> str:
    if isinstance(contribution, ops.Gather):
        weight = contribution.weight
        return f"gather {contribution.rows} " + (
            getattr(weight, "py_func", weight).__name__ if weight is not None else "")
    return getattr(contribution, "py_func", contribution).__name__


def auto_memo(g, contribution, k: int, case: str = "") -> dict:
    """What ``change_driven="auto"`` learnt on ``g`` for this edge function, k and ``case``
    (what else changes how a run moves, e.g. PageRank's uniform teleport against one
    source's): ``{"bulk only": True}`` once change-driven was measured not to pay."""
    name = _name(contribution)
    return g.cached(("propagate", "auto", name, int(k), case), dict)


def _out_edges(g, mask) -> int:
    """The out-edges of the vertices where ``mask`` (n booleans) is True."""
    return int(g.out_degree[mask].sum(dtype=np.int64))
