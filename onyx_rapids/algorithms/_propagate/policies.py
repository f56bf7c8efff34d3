"""Which step each iteration of a propagation runs: :class:`Bulk`, :class:`ChangeDriven`, or
:class:`Auto`, which chooses by the rule of push-pull switching (SIMD-X) and learns per graph
whether change-driven pays.

``change_driven="auto"``: while the vertices that moved by more than ``threshold`` in the last
iteration own more than ``pull_fraction`` of the out-edges, iterate in bulk (pull); below, push
their changes (change-driven).  A switch to change-driven takes the last bulk aggregate as its
float64 ``acc`` (it holds the rows that iteration read; folded bulk pulls keep their sums in
registers, so the switch sums those rows once more), so no iteration is repeated; a switch back
drops the change-driven state.  The rule counts edges, not time, and a change-driven iteration
also pays its frontier's bookkeeping: so each iteration is timed (the stop test synchronizes
anyway), once :data:`SLOW_ITERATIONS` change-driven iterations on the graph took longer on
average than its bulk ones (or one four times as long) the run switches back (:func:`judge`;
an iteration that built a kernel, which numba compiles at its first launch, is not counted),
and the graph remembers (:func:`auto_memo`, per edge function, k and case) that change-driven
does not pay there, so later runs stay bulk (:func:`choose` gives them :class:`Bulk`).
PageRank's fused kernel, which watches for the switch itself, reports its launch through
:meth:`Auto.fused_ran` and hands its ranks over to a run under the same policy.
"""

from __future__ import annotations

import time

import numpy as np

from ... import device, frontier, operators as ops, properties as props
from . import stops
from .steps import bulk_step, change_driven_step

BULK, CHANGE_DRIVEN = "bulk", "change-driven"  # the modes ``info.modes`` records

#: Change-driven iterations (on a graph, across runs) whose mean time ``change_driven="auto"``
#: compares with the bulk iterations' before it may go back to bulk for good (:func:`judge`).
SLOW_ITERATIONS = 3

#: Watched runs on a graph (per edge function, k and case) with change-driven iterations in under
#: :data:`SELDOM` of their iterations that ``change_driven="auto"`` allows before it stops
#: watching there (:func:`seldom`).
SELDOM_RUNS = 2
SELDOM = 0.1


class Bulk:
    """Every iteration bulk.  A policy gives the steps it runs by mode (``steps``), names
    each iteration's mode (``mode``), learns from its outcome (``record``) and from the
    whole run (``finish``); ``variant`` overrides facts of the run's record."""

    variant: dict = {}

    def steps(self, run, stop, update, plan, local=False) -> dict:
        return {BULK: bulk_step(run, stop, update, plan)}

    def mode(self, run) -> str:
        return BULK

    def record(self, run, mode, done):
        pass

    def finish(self, run):
        pass


class ChangeDriven(Bulk):
    """Every iteration change-driven (PageRank-Delta, ONYX 4.2): the first pushes every row."""

    def steps(self, run, stop, update, plan, local=False):
        run.args.update(delta_next=props.vertex_property(run.g, run.k),
                        threshold=float(run.threshold))
        step = change_driven_step(run, stop, update, fold=plan.fold, direction=plan.direction,
                                  local=not plan.fold and plan.local(local, stop.in_kernel))
        step.begin(run)
        return {CHANGE_DRIVEN: step}

    def mode(self, run):
        return CHANGE_DRIVEN


class Auto:
    """``change_driven="auto"`` on a graph where it may pay (see the module doc); it owns
    what it learns there (``memo``: :func:`auto_memo`) and judges every iteration."""

    variant = {"direction": "auto"}

    def __init__(self, memo: dict):
        self.memo, self.current, self.switch_cost = memo, BULK, 0.0
        self.handed_over = None  # (clock, kernels built) when a fused kernel handed over

    @classmethod
    def on(cls, g, contribution, k: int, case: str = "") -> "Auto":
        return cls(auto_memo(g, contribution, k, case))

    @property
    def watching(self) -> bool:
        """Whether runs watch for the switch (else they are bulk: change-driven did not pay)."""
        return not self.memo.get("bulk only")

    def steps(self, run, stop, update, plan, local=False):
        g, args = run.g, run.args
        args.update(threshold=float(run.threshold), delta_next=props.vertex_property(g, run.k),
                    out_degree=g.out_degree, moved_edges=device.zeros(1, np.int64))
        self.limit, self.stop = plan.execution.pull_fraction * g.m, stop
        self.local = plan.local(local, stop.in_kernel)  # change-driven: push, unfolded
        self.by_mode = {BULK: bulk_step(run, stop, update, plan, watch=True),
                        CHANGE_DRIVEN: change_driven_step(run, stop, update, fold=False,
                                                          direction="push", local=self.local)}
        return self.by_mode

    def mode(self, run):
        if self.current == CHANGE_DRIVEN and self._front(run) > self.limit:
            self.current = BULK  # the change-driven state is dropped: bulk recomputes every sum
        self.started, self.compiled = time.perf_counter(), ops.KERNEL_CACHE.misses
        return self.current

    def _front(self, run) -> int:
        """The out-edges of the vertices that push next."""
        if self.local:
            return stops.moved_edges(run.args)
        return _out_edges(run.g, frontier.to_mask(run.active, run.g.n))

    def record(self, run, mode, done):
        built = ops.KERNEL_CACHE.misses != self.compiled  # (not judged: numba compiled)
        if mode == CHANGE_DRIVEN:
            # (a step's first run and its recording as a CUDA graph are judged: they are what
            # change-driven costs on top of the replays; so is the switch to change-driven)
            if not built:
                seconds = time.perf_counter() - self.started + self.switch_cost
                self.switch_cost = 0.0
                if judge(self.memo, seconds):
                    self.current = BULK  # change-driven does not pay here
            return
        if not built:
            record_bulk(self.memo, time.perf_counter() - self.started)
        switching = time.perf_counter()
        movers = None if done or self.memo.get("bulk only") else self._movers(run)
        if movers is not None:
            # change-driven from here: the sums of this iteration's rows x are pushed, so x is
            # what every vertex pushed except the movers, which push their change next
            self.current = CHANGE_DRIVEN
            self.by_mode[CHANGE_DRIVEN].enter(run, self.by_mode[BULK].sums(run), movers)
            self.switch_cost += time.perf_counter() - switching  # change-driven's, not bulk's

    def _movers(self, run):
        """n booleans, the rows that moved by more than the threshold, when they own at most
        ``limit`` out-edges; else None.  With the test in the kernel, its count of their
        out-edges decides first, and the rows are compared only at a switch."""
        x_next, x = run.args["x_next"], run.x
        if self.stop.in_kernel:
            if stops.moved_edges(run.args) > self.limit:
                return None
            return props.moved_rows(x_next, x, run.threshold)
        movers = props.moved_rows(x_next, x, run.threshold)
        return movers if _out_edges(run.g, movers) <= self.limit else None

    def finish(self, run):
        modes = run.info.modes
        seldom(self.memo, modes.count(CHANGE_DRIVEN), len(modes))
        if self.handed_over is None:
            return
        began, compiled = self.handed_over
        if ops.KERNEL_CACHE.misses == compiled:  # (a run that built kernels is not judged)
            device.synchronize()
            judge_continuation(self.memo, time.perf_counter() - began, run.info.iterations)

    def fused_ran(self, started: float, iterations: int, switched: bool) -> None:
        """What a fused bulk kernel that watched for the switch reports, after its launch
        (begun at ``started``, ``iterations`` long): its time is bulk time (not the first
        launch on the graph: it may compile the kernel); a run it hands over to
        (``switched``) is then judged whole (:func:`judge_continuation`), one that did not
        switch counts as seldom (:func:`seldom`)."""
        memo = self.memo
        if memo.get("fused launches"):
            record_bulk(memo, time.perf_counter() - started, iterations)
        memo["fused launches"] = memo.get("fused launches", 0) + 1
        if not switched:
            seldom(memo, 0, iterations)
        else:
            self.handed_over = (time.perf_counter(), ops.KERNEL_CACHE.misses)


def choose(plan, g, contribution, k: int, case: str):
    """The policy of a run: :class:`Auto` under ``change_driven="auto"`` unless the graph
    learnt that change-driven does not pay for this edge function, k and ``case`` (then
    :class:`Bulk`, nothing watched)."""
    if plan.change_driven == "auto":
        auto = Auto.on(g, contribution, k, case)
        return auto if auto.watching else Bulk()
    return ChangeDriven() if plan.change_driven else Bulk()


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


def seldom(memo: dict, change_driven: int, iterations: int) -> bool:
    """Count a watched run that spent ``change_driven`` of its ``iterations`` change-driven.
    Watching costs every bulk iteration (the movers' out-edges are counted and read back),
    and a change-driven iteration saves at most a bulk one, so a run with change-driven
    iterations in under :data:`SELDOM` of its iterations cannot win that back; after
    :data:`SELDOM_RUNS` such runs ``memo["bulk only"]`` is set and later runs are the bulk
    ones."""
    if iterations and change_driven < SELDOM * iterations:
        memo["seldom"] = memo.get("seldom", 0) + 1
        if memo["seldom"] >= SELDOM_RUNS:
            memo["bulk only"] = True
    return bool(memo.get("bulk only"))


def judge_continuation(memo: dict, seconds: float, iterations: int) -> bool:
    """Whether change-driven does not pay on this graph, after a run that a fused bulk kernel
    handed over to at its switch took ``seconds`` for ``iterations`` more: its set-up, its
    first bulk iteration, the switch and the change-driven iterations are all what watching
    for the switch cost, so when they took longer than as many bulk iterations
    (:func:`record_bulk`) it sets ``memo["bulk only"]``."""
    bulk_total, bulk_count = memo.get("bulk", (0.0, 0))
    if bulk_count and iterations and seconds > iterations * bulk_total / bulk_count:
        memo["bulk only"] = True
    return bool(memo.get("bulk only"))


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
