"""The stop tests of a propagation and how a run evaluates them.

The default tests (:class:`MaxChangeTest`; PageRank's :class:`L1ChangeTest`) are measured by an
``ops.MaxChange`` step at the end of the iteration's vertex kernel (every step but the folded
push, which calls the test on the rows), so they cost no pass of their own over the n x k rows;
in a local step they measure the visited rows, the only ones that changed.  Any other callable
``converged(x_next, x)`` is called on the rows.  :class:`Stop` is one run's evaluation;
:class:`NoStop` runs a fixed number of iterations.
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

    def done(self, run) -> bool:
        if self.in_kernel:
            if self.l1:
                return self.converged.passed(run.args["l1_change"])
            return self.converged.passed(run.args["stop"])
        return self.converged(run.args["x_next"], run.x)


class NoStop:
    """A fixed number of iterations (APPNP's): never done early."""

    in_kernel = False

    def steps(self, steps, moved: bool = False) -> list:
        return list(steps)

    def start(self, args):
        pass

    def done(self, run) -> bool:
        return False


def moved_edges(args) -> int:
    """The out-edges of the rows the last iteration moved by more than the threshold, as its
    stop test (:class:`Stop` with ``moved``) or a local step counted them."""
    return int(device.to_host(args["moved_edges"])[0])
