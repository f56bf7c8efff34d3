"""Reduced execution of the traversals (sssp, weakly_connected_components): the
``stop_changed_fraction`` knob of an :class:`~onyx_rapids.approximation.Approximation` on their
rounds of relaxation (docs/execution.md, "Approximation").

The rule is the propagations' (:class:`~onyx_rapids.algorithms._propagate.stops.ApproximateStop`):
a relaxation stops after a round, not its first, that changed fewer than ``fraction * n``
vertices and no more than the round before.  A round's changed vertices are those it put on
the next round's frontier (distance or label lowered; for delta-stepping, below the bucket's
end).  On :func:`onyx_rapids.acc` the run tests it itself (``stop_below``, in the fused kernel
as in the host loop), from the worklist size it reads anyway; a host loop of rounds calls
:meth:`ChangedFraction.stops`.  A stopped relaxation leaves its frontier unoffered: the
distances only overestimate, the labels only split components.

    >>> from onyx_rapids import Approximation
    >>> rule = ChangedFraction(Approximation(stop_changed_fraction=0.1), n=100)
    >>> rule.below, [rule.stops(c) for c in (5, 9, 7)]  # growing at first, then 7 < 10
    (10, [False, False, True])
"""

from __future__ import annotations

import math


class ChangedFraction:
    """One run's ``stop_changed_fraction`` (``approximation`` None or without the knob: off,
    ``below`` 0): the rule, the relaxations it stopped and ``RunInfo.estimate``."""

    def __init__(self, approximation, n: int):
        self.approximation, self.n = approximation, n
        fraction = None if approximation is None else approximation.stop_changed_fraction
        # changed < fraction * n, for a count: changed < ceil(fraction * n)
        self.below = 0 if fraction is None else math.ceil(fraction * n)
        self.before = self.cuts = self.unrelaxed = self.last = 0

    def restart(self):
        """A new relaxation (a bucket, a phase): its first round never stops."""
        self.before = 0

    def stops(self, changed: int) -> bool:
        """After a round (not a relaxation's first) that changed ``changed`` vertices:
        whether the relaxation stops here (then recorded, as :meth:`stopped`)."""
        stop = changed < self.below and changed <= self.before
        self.before = changed
        if stop:
            self.stopped(changed)
        return stop

    def stopped(self, left: int):
        """A relaxation stopped with ``left`` vertices changed and not offered."""
        self.cuts += 1
        self.unrelaxed += left
        self.last = left

    def record(self, info):
        """``info.approximation`` and ``info.estimate`` of an approximate run: ``stopped_by``
        ("stop_changed_fraction" when the knob stopped a relaxation, None when every one ran
        to its end), ``changed_fraction`` (of the vertices the last stopped round changed; 0
        when none stopped), ``rounds`` (``info.iterations``) and ``unrelaxed`` (the vertices
        the stops left with a change not offered, summed)."""
        if self.approximation is None:
            return
        info.approximation = self.approximation.knobs()
        info.estimate = dict(stopped_by="stop_changed_fraction" if self.cuts else None,
                             changed_fraction=self.last / max(self.n, 1),
                             rounds=info.iterations, unrelaxed=self.unrelaxed)
