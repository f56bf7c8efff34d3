"""The stop tests of a propagation and how a run evaluates them.

The default tests (:class:`MaxChangeTest`; PageRank's :class:`L1ChangeTest`) are measured by an
``ops.MaxChange`` step at the end of the iteration's vertex kernel (every step but the folded
push, which calls the test on the rows), so they cost no pass of their own over the n x k rows;
in a local step they measure the visited rows, the only ones that changed.  Any other callable
``converged(x_next, x)`` is called on the rows.  :class:`Stop` is one run's evaluation;
:class:`NoStop` runs a fixed number of iterations.

Reduced execution (an :class:`~onyx_rapids.approximation.Approximation`'s ``stop_*`` knobs)
adds :class:`ApproximateStop` to a run's :class:`Stop`: the run then also stops where that
test passes, and records what it measured.
"""

from __future__ import annotations

import numpy as np

from ... import device, operators as ops, properties as props


class MaxChangeTest:
    """The default stop test (docs/algorithms.md): ``max |x_next - x| <= tol * max(1, max
    |x_next|)``.  A run measures it inside the iteration's vertex kernel (an
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
    A run measures it in the iteration's vertex kernel (``ops.MaxChange`` with ``sums``);
    called as ``test(x_next, x)`` it makes a pass of its own."""

    def __init__(self, tol: float):
        self.tol = float(tol)

    def __call__(self, x_next, x) -> bool:
        return props.l1_change(x_next, x) < self.tol

    def passed(self, sums) -> bool:
        """The test on the per-feature sums an ``ops.MaxChange`` step left in ``sums``."""
        return float(device.to_host(sums).max(initial=0.0)) < self.tol


class Stop:
    """How one run evaluates ``converged``: in the vertex kernel (``steps()`` adds the step,
    ``start()`` zeroes the measures before each iteration) or, for other tests and the folded
    push, by calling it on the rows; ``approximate``: an :class:`ApproximateStop` that may
    stop the run earlier."""

    def __init__(self, converged, args: dict, in_kernel: bool, k: int, approximate=None):
        self.converged, self.approximate = converged, approximate
        self.l1 = isinstance(converged, L1ChangeTest)
        self.in_kernel = in_kernel and (self.l1 or isinstance(converged, MaxChangeTest))
        if self.in_kernel:
            args["stop"] = device.zeros(2, np.float32)
            if self.l1:
                args["l1_change"] = device.zeros(int(k), np.float64)

    def steps(self, steps, moved: bool = False) -> list:
        """``steps`` and the in-kernel tests; ``moved``: it also adds up the out-degrees of the
        rows that moved by more than ``args["threshold"]`` into ``args["moved_edges"]``."""
        steps = list(steps)
        if self.in_kernel:
            extra = dict(moved="moved_edges", threshold="threshold", weight="out_degree") \
                if moved else {}
            if self.l1:
                extra["sums"] = "l1_change"
            steps.append(ops.MaxChange("x_next", "state", "stop", **extra))
        return steps + (self.approximate.steps() if self.approximate else [])

    def start(self, args):
        if self.in_kernel:
            props.fill(args["stop"], 0.0)
            if self.l1:
                props.fill(args["l1_change"], 0.0)
        if "moved_edges" in args:
            props.fill(args["moved_edges"], 0)
        if self.approximate:
            self.approximate.start(args)

    def done(self, run, rows) -> bool:
        """Whether the run stops after the iteration that left ``rows`` (its new rows)."""
        if self.in_kernel:
            if self.l1:
                exact = self.converged.passed(run.args["l1_change"])
            else:
                exact = self.converged.passed(run.args["stop"])
        else:
            exact = self.converged(run.args["x_next"], run.x)
        return self.approximate.done(run, rows, exact) if self.approximate else exact


class ApproximateStop:
    """Reduced execution: besides the exact test, a run stops once fewer than
    ``stop_changed_fraction`` of its n vertices moved by more than the per-vertex tolerance
    (the run's change-driven ``threshold``) plus ``changed_relative`` times their new value
    in an iteration, and no more than in the one before (a propagation spreading from a few
    seeds moves ever more at first), or once the top-``stop_top_k`` set (every vertex at
    least the k-th largest value, per column) moved by at most ``top_k_moves`` members
    (those that entered or those that left, the more) in ``stop_top_k_rounds`` iterations in
    a row.  With an ``edge_fraction`` below 1 (:mod:`.partial`) it turns the windows after
    each iteration (the run keeps the exact fixed point: the exact test stops it).

    The vertices that moved and the L1 change of each feature are measured by an
    ``ops.MaxChange`` step in the iteration's vertex kernel (``in_kernel``; its results are
    read with the stop test's), or, in the folded push (no vertex kernel), by passes over the
    rows.  The top-k set is one selection (a partition) of the rows per iteration, on the
    device.  ``estimate`` holds what the last iteration measured (``RunInfo.estimate``)."""

    def __init__(self, approximation, run, in_kernel: bool):
        g, args = run.g, run.args
        self.approximation, self.in_kernel, self.n = approximation, in_kernel, g.n
        self.top = approximation.stop_top_k
        if self.top is not None and self.top > g.n:
            raise ValueError(f"approximation stop_top_k={self.top} must be at most the graph's "
                             f"{g.n} vertices")
        self.streak, self.changed = 0, 0  # (the first iteration's change is a growth)
        self.partial = (approximation.edge_fraction or 1.0) < 1.0
        self.members = None if self.top is None else self._members(run.x)
        self.estimate = dict(stopped_by=None)
        if in_kernel:
            args.update(approx_max=device.zeros(2, np.float32),
                        approx_moved=device.zeros(1, np.int64),
                        approx_l1=device.zeros(run.k, np.float64),
                        approx_threshold=float(run.threshold),
                        approx_relative=approximation.changed_relative,
                        approx_ones=g.cached(("propagate", "ones"),
                                             lambda: device.full(g.n, 1, np.int32)))

    def steps(self) -> list:
        if not self.in_kernel:
            return []
        return [ops.MaxChange("x_next", "state", "approx_max", moved="approx_moved",
                              threshold="approx_threshold", weight="approx_ones",
                              sums="approx_l1", relative="approx_relative")]

    def start(self, args):
        if self.in_kernel:
            for name in ("approx_moved", "approx_l1"):
                props.fill(args[name], 0)
            props.fill(args["approx_max"], 0.0)

    def done(self, run, rows, exact: bool) -> bool:
        """Whether the run stops (``exact``: the exact test passed), its measures recorded."""
        a, estimate = self.approximation, self.estimate
        changed, l1 = self._measures(run, rows)
        estimate.update(changed_fraction=changed / max(self.n, 1), l1_change=l1)
        stopped = "tol" if exact else None
        if stopped is None and a.stop_changed_fraction is not None \
                and changed < a.stop_changed_fraction * self.n and changed <= self.changed:
            stopped = "stop_changed_fraction"
        self.changed = changed
        if self.partial:
            run.args["edge_turn"] += 1  # the next iteration's windows
        if self.top is not None:
            estimate["top_k_moves"] = moves = self._top_k_moves(rows)
            self.streak = self.streak + 1 if moves <= a.top_k_moves else 0
            if stopped is None and self.streak >= (a.stop_top_k_rounds or 1):
                stopped = "stop_top_k"
        estimate["stopped_by"] = stopped
        return stopped is not None

    def _measures(self, run, rows):
        """(vertices that moved by more than their tolerance, largest L1 change of a
        feature) of the iteration that left ``rows``."""
        if self.in_kernel:
            args = run.args
            return (int(device.to_host(args["approx_moved"])[0]),
                    float(device.to_host(args["approx_l1"]).max(initial=0.0)))
        xp, relative = device.xp, self.approximation.changed_relative
        moved = xp.abs(rows - run.x) > run.threshold + relative * xp.abs(rows)
        return int(moved.any(axis=1).sum()), props.l1_change(rows, run.x)

    def _members(self, rows):
        """n x k booleans: the top-k set of each column of ``rows`` (ties with the k-th
        largest value included)."""
        n = self.n
        return rows >= device.xp.partition(rows, n - self.top, axis=0)[n - self.top]

    def _top_k_moves(self, rows) -> int:
        """How far the top-k set moved since the last iteration (the first: since the run's
        first rows): the members that entered or those that left, the more, in the column
        where it moved most."""
        members, before = self._members(rows), self.members
        entered, left = (members & ~before).sum(axis=0), (before & ~members).sum(axis=0)
        self.members = members
        return int(device.xp.maximum(entered, left).max())


class NoStop:
    """A fixed number of iterations (APPNP's): never done early."""

    in_kernel = False

    def steps(self, steps, moved: bool = False) -> list:
        return list(steps)

    def start(self, args):
        pass

    def done(self, run, rows) -> bool:
        return False


def moved_edges(args) -> int:
    """The out-edges of the rows the last iteration moved by more than the threshold, as its
    stop test (:class:`Stop` with ``moved``) or a local step counted them."""
    return int(device.to_host(args["moved_edges"])[0])
