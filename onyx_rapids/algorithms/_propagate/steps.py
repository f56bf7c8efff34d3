"""The steps of a propagation: one iteration each, over a :class:`~.loop.Run`'s rows.

- :class:`Sweep`: the edge step aggregates ``rows`` over the in-edges into ``acc``, the vertex
  steps update every vertex (bulk: ``rows`` is x, ``acc`` restarts at zero, folded pulls keep
  it in registers) or the active ones (change-driven: ``rows`` is the change since a vertex
  last pushed, ``acc`` kept in float64 and adjusted);
- :class:`FoldedPush`: [update v, push v's new row (bulk) or change (change-driven)] as one
  kernel into the next aggregate, primed by one push;
- :class:`Local`: a change-driven step of a local propagation, over the vertices its push
  reached, updating the rows in place, its device work replayed as a CUDA graph
  (:class:`_Replay`).

A step's ``run(run, stop)`` does one iteration (the stop test's measures included) and returns
whether nothing is left to push; ``swaps`` says whether the loop then swaps x and x_next.
Change-driven steps start either from the run's first rows (``begin``: every row pushes) or
from a bulk iteration (``enter``: its aggregate and the rows that moved, under "auto").
"""

from __future__ import annotations

import dataclasses

import numpy as np
from numba import cuda

from ... import device, frontier, operators as ops, properties as props
from .._common import choose_direction
from . import stops


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
    state[v, f] = x_next[v, f]  # a local step updates the rows in place
    return True


def edge(contribution, into: str, store: bool = True):
    """The edge step of ``contribution`` into ``into``: an ``ops.Edge`` of an edge function,
    or the ``ops.Gather`` given, aimed at ``into``."""
    if isinstance(contribution, ops.Gather):
        return dataclasses.replace(contribution, into=into, store=store)
    return ops.Edge(contribution, into, store=store)


def bulk_step(run, stop, update, plan, *, watch=False):
    """The bulk iteration of ``plan``; ``watch``: its stop test counts the out-edges of the
    rows that moved by more than the threshold (``change_driven="auto"``)."""
    if plan.folded_push:
        return FoldedPush(run, stop.steps(update), change_driven=False)
    return Sweep(run, stop.steps(update, moved=watch), fold=plan.fold,
                 direction=plan.direction, registers=plan.registers, change_driven=False)


def change_driven_step(run, stop, update, *, fold, direction, local):
    """The change-driven iteration: [update, moved, commit] on the active vertices, folded
    or not; ``local`` visits only what the push reached."""
    if local:
        return Local(run, stop, update, direction)
    steps = list(update) + [ops.Vertex(moved), ops.Vertex(commit)]
    if fold and direction == "push":
        # the folded push marks no frontier (marking every pushed edge's destination cost
        # several times the kernel on rmat: benchmarks/NOTES.md, "Below ONYX's ranges"):
        # a flag set by the moved vertices tells when to stop
        steps[-1] = ops.Vertex(commit_flagged)
        return FoldedPush(run, stop.steps(steps), change_driven=True)
    return Sweep(run, stop.steps(steps), fold=fold, direction=direction, registers=False,
                 change_driven=True)


class _ChangeDriven:
    """The state a change-driven step keeps: the float64 aggregate (``acc``), what every
    vertex last pushed (``args["pushed"]``), the run's ``delta`` and frontier."""

    acc = None

    def begin(self, run):
        """Start from the run's rows: every row pushes itself onto a zero aggregate."""
        self.acc = props.vertex_property(run.g, run.k, dtype=np.float64)
        run.args["pushed"], run.delta = props.copy(run.x), props.copy(run.x)
        run.active = frontier.full(run.g.n)

    def enter(self, run, sums, movers):
        """Go on from a bulk iteration: its aggregate ``sums`` (of the rows x it read) is what
        every vertex pushed, but the ``movers`` (n booleans), which push their change next."""
        g, k, args = run.g, run.k, run.args
        if self.acc is None:
            self.acc = props.vertex_property(g, k, dtype=np.float64)
            args["pushed"], run.delta = props.vertex_property(g, k), props.vertex_property(g, k)
        self.acc[...] = sums
        props.commit_rows(args["x_next"], run.x, movers, args["pushed"], args["delta_next"])
        run.delta, args["delta_next"] = args["delta_next"], run.delta
        run.active = frontier.from_mask(movers)

    def next_delta(self, run):
        run.delta, run.args["delta_next"] = run.args["delta_next"], run.delta


class Sweep(_ChangeDriven):
    """Aggregate, then update: one folded pull, or an edge step and a vertex step."""

    swaps = True

    def __init__(self, run, steps, *, fold, direction, registers, change_driven):
        self.steps, self.fold, self.direction = steps, fold, direction
        self.registers, self.cd = registers, change_driven
        if not (change_driven or registers):
            self.acc = props.vertex_property(run.g, run.k)

    def run(self, run, stop) -> bool:
        g, args, cd = run.g, run.args, self.cd
        active = run.active if cd else None
        way = choose_direction(g, active, self.direction, run.pull_fraction) if cd \
            else self.direction
        run.note(way)
        active_next = frontier.empty(g.n) if cd else None
        stop.start(args)
        call = dict(args, state=run.x, rows=run.delta if cd else run.x)
        if cd or not self.registers:
            call["acc"] = self.acc if cd else props.fill(self.acc, 0.0)
        if self.fold:
            ops.foldmap(g, [edge(run.contribution, "acc", store=not self.registers)] + self.steps,
                        call, active_in=active, active_out=active_next, direction="pull",
                        k=run.k, options=run.options)
        else:
            ops.foldmap(g, [edge(run.contribution, "acc")], call, active_in=active,
                        direction=way, k=run.k, options=run.options)
            ops.vertexmap(g, self.steps, call, k=run.k, active_out=active_next,
                          options=run.options)
        if not cd:
            return False
        self.next_delta(run)
        run.active = active_next
        return not frontier.any_active(run.active)

    def sums(self, run):
        """The aggregate of the rows x this bulk step last read (a folded pull left its sums
        in registers: they are summed once more)."""
        if self.registers:
            self.acc = props.vertex_property(run.g, run.k) if self.acc is None else \
                props.fill(self.acc, 0.0)
            call = dict(run.args, state=run.x, rows=run.x, acc=self.acc)
            ops.foldmap(run.g, [edge(run.contribution, "acc")], call, direction="pull",
                        k=run.k, options=run.options)
        return self.acc


class FoldedPush(_ChangeDriven):
    """[update v, push v's new row or change] into the next aggregate, which starts as this
    one (change-driven) or zero (bulk); primed by one push of the first rows (the folded
    push reads a complete aggregate).  Its stop test is called on the rows."""

    swaps = True

    def __init__(self, run, steps, *, change_driven):
        self.steps, self.cd = steps, change_driven
        dtype = np.float64 if change_driven else np.float32
        if change_driven:
            run.args["moved_any"] = device.xp.zeros(1, dtype=np.int32)
        self.acc = props.vertex_property(run.g, run.k, dtype=dtype)
        ops.foldmap(run.g, [edge(run.contribution, "acc")],
                    dict(run.args, state=run.x, rows=run.x, acc=self.acc), direction="push",
                    k=run.k, options=run.options)
        self.spare = props.vertex_property(run.g, run.k, dtype=dtype)

    def begin(self, run):
        acc = self.acc
        super().begin(run)
        self.acc = acc  # the primed aggregate

    def run(self, run, stop) -> bool:
        g, args, cd = run.g, run.args, self.cd
        run.note("push")
        stop.start(args)
        call = dict(args, state=run.x, acc=self.acc)
        if cd:
            self.spare[...] = self.acc
            args["moved_any"][0] = 0
        else:
            props.fill(self.spare, 0.0)
        call.update(acc_next=self.spare, rows=args["delta_next"] if cd else args["x_next"])
        ops.foldmap(g, self.steps + [edge(run.contribution, "acc_next")], call,
                    direction="push", k=run.k, options=run.options)
        self.acc, self.spare = self.spare, self.acc
        if not cd:
            return False
        self.next_delta(run)
        run.active = None
        return int(args["moved_any"][0]) == 0


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


class Local(_ChangeDriven):
    """A local propagation's change-driven step (a vertex's update reads nothing that
    changes but its own aggregate): the push marks its destinations, the vertex step visits
    only those, writes their rows in place and counts the next frontier's out-edges in the
    same kernel (an ``ops.MaxChange`` with ``moved`` against the pushed rows), so an
    iteration costs its frontier, not n.  Every vertex is visited in the first step of a run
    (a start that is no fixed point of the update moves vertices no edge reaches, of
    in-degree 0, too) and while the frontier owns more than ``pull_fraction`` of the edges
    (marking the destinations of most edges costs more than visiting every vertex)."""

    swaps = False

    def __init__(self, run, stop, update, direction):
        run.args.update(out_degree=run.g.out_degree, moved_edges=device.zeros(1, np.int64),
                        watch=device.zeros(2, np.float32))
        watch = ops.MaxChange("x_next", "pushed", "watch", moved="moved_edges",
                              threshold="threshold", weight="out_degree")
        steps = stop.steps(list(update) + [watch, ops.Vertex(moved), ops.Vertex(commit)])
        self.steps = steps + [ops.Vertex(keep)]
        self.touched, self.spare = frontier.empty(run.g.n), frontier.empty(run.g.n)
        self.direction, self.replay = direction, _Replay()
        self.out_edges, self.first = run.g.m, True  # the first push sends every row

    def enter(self, run, sums, movers):
        super().enter(run, sums, movers)
        self.first, self.out_edges = False, 0  # the movers own at most pull_fraction

    def run(self, run, stop) -> bool:
        g, args = run.g, run.args
        wide = self.out_edges > run.pull_fraction * g.m
        way = self.direction if self.direction != "auto" else ("pull" if wide else "push")
        run.note(way)
        everyone, self.first = self.first or wide, False
        active, active_next = run.active, self.spare  # cleared by the step
        call = dict(args, acc=self.acc, state=run.x, rows=run.delta)

        def step():
            stop.start(args)
            frontier.clear(active_next)
            reached = None if everyone else frontier.clear(self.touched)
            ops.foldmap(g, [edge(run.contribution, "acc")], call, active_in=active,
                        active_out=reached, direction=way, k=run.k, options=run.options)
            ops.vertexmap(g, self.steps, call, active_in=reached, active_out=active_next,
                          k=run.k, options=run.options)

        if everyone:
            step()
        else:
            self.replay.run((id(run.x), id(run.delta), id(active), id(active_next), way), step)
        self.next_delta(run)
        self.spare, run.active = active, active_next
        self.out_edges = stops.moved_edges(args)
        return self.out_edges == 0  # nothing left to push: no row can change again
