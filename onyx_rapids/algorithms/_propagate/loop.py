"""The propagation loop (Gunrock's enactor): each iteration the policy names a mode, that
mode's step runs, the stop test decides and the policy learns from it.

    mode = policy.mode(run);  steps[mode].run(run, stop);  stop.done(run, ..);  policy.record(..)

:class:`Run` is the state the steps share: the rows ``x`` (n x k) and the next rows
``args["x_next"]`` (other double buffers in ``pairs``), the arrays the steps read, the change
since the last push (``delta``) and the active vertices (``active``) of change-driven steps, and
the :class:`~onyx_rapids.algorithms._common.RunInfo` record.
"""

from __future__ import annotations

from ... import properties as props


class Run:
    """One run's rows and what its steps read; ``writes`` names the buffer the update writes
    (swapped with ``x`` after each iteration, with the ``pairs`` of ``args`` names)."""

    def __init__(self, g, x, contribution, args, plan, info, *, threshold=0.0,
                 writes="x_next", pairs=()):
        self.g, self.contribution, self.info, self.threshold = g, contribution, info, threshold
        self.k = x.shape[1]
        self.x = props.copy(x)
        self.args = dict(args, **{writes: props.vertex_property(g, self.k)})
        self.writes, self.pairs = writes, pairs
        self.options = plan.options
        self.pull_fraction = plan.execution.pull_fraction
        self.delta = self.active = None

    def note(self, way):
        """Record an iteration's direction (where the run records them)."""
        if self.info.directions is not None:
            self.info.directions.append(way)

    def swap(self):
        args = self.args
        self.x, args[self.writes] = args[self.writes], self.x
        for a, b in self.pairs:
            args[a], args[b] = args[b], args[a]


def iterate(run, policy, steps, stop, max_iter):
    """Iterate until ``stop`` is done, nothing is left to push, or ``max_iter``; returns
    ``(x, info)``."""
    info = run.info
    for info.iterations in range(1, int(max_iter) + 1):
        mode = policy.mode(run)
        if info.modes is not None:
            info.modes.append(mode)
        step = steps[mode]
        idle = step.run(run, stop)
        done = stop.done(run, run.args[run.writes] if step.swaps else run.x)
        policy.record(run, mode, done)
        if step.swaps:  # (a local step updated x in place)
            run.swap()
        if done or idle:
            info.converged = True
            break
    policy.finish(run)
    return run.x, info
