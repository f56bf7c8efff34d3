"""Approximate processing as one validated value: :class:`Approximation` (Graprox's knobs).

An algorithm's ``tol`` and ``max_iter`` say when its exact run stops; an ``Approximation``
trades accuracy for speed with explicit knobs, given as ``Execution(approximation=...)`` or
the ``approximation=`` keyword of every algorithm.  None (the default) is the exact run, with
today's results bit for bit.  Each knob defaults to None (off) and is checked here for its
legal range; which knobs an algorithm supports is declared in its registry entry
(:mod:`onyx_rapids.registry`), which refuses the others in one place::

    >>> import onyx_rapids as onyx
    >>> onyx.Approximation(stop_changed_fraction=0.01).knobs()
    {'stop_changed_fraction': 0.01}
    >>> onyx.Approximation(stop_top_k=10, stop_top_k_moves=0.5).knobs()
    {'stop_top_k': 10, 'stop_top_k_moves': 0.5}
    >>> onyx.Approximation(stop_changed_fraction=2)
    Traceback (most recent call last):
    ...
    ValueError: stop_changed_fraction must be a number in (0, 1), got 2

Reduced execution (the iterative propagations: :mod:`onyx_rapids.algorithms._propagate`)
stops an iteration early, besides the exact test, on an online criterion: the fraction of
vertices that still move, or the stability of the top-k set.  ``docs/execution.md``
("Approximation") describes every knob.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .inputs import Float, Int

__all__ = ["Approximation", "FIELDS", "KNOBS", "RANGES", "knob_of"]

#: Each knob's legal values (the checks of :class:`Approximation`, which a registry entry may
#: narrow).  ``stop_top_k_moves`` is an integer below ``stop_top_k`` or a fraction of it,
#: checked by :meth:`Approximation.__post_init__`.
RANGES = {
    "stop_changed_fraction": Float(0, 1, low_open=True, high_open=True),
    "stop_top_k": Int(1),
    "stop_top_k_rounds": Int(1),
}

#: The knobs an algorithm declares, with the fields that refine each (given only with it).
KNOBS = {
    "stop_changed_fraction": (),
    "stop_top_k": ("stop_top_k_moves", "stop_top_k_rounds"),
}


def knob_of(field: str) -> str:
    """The knob a field of :class:`Approximation` belongs to (``stop_top_k_moves`` ->
    ``stop_top_k``)."""
    return next(knob for knob, refines in KNOBS.items() if field == knob or field in refines)


@dataclass(frozen=True, repr=False)
class Approximation:
    """Approximation knobs; every field None is off (see the module docstring).

    Parameters
    ----------
    stop_changed_fraction : float in (0, 1) or None
        Reduced execution: stop once, in an iteration, fewer than this fraction of the
        vertices moved by more than the algorithm's per-vertex tolerance (its change-driven
        threshold: ``tol / n`` for PageRank, ``tol`` for label propagation), and no more than
        in the iteration before (so not in the first, nor while a propagation from a few
        seeds still spreads).  Below ``1 / n`` it stops only where no vertex moved: the exact
        test's end.
    stop_top_k : int >= 1 or None
        Reduced execution: stop once the set of the ``stop_top_k`` vertices of largest value
        (every vertex tied with the k-th is a member; per column for k sources) changed by at
        most ``stop_top_k_moves`` members from one iteration to the next, in
        ``stop_top_k_rounds`` iterations in a row.  At most the graph's vertex count.
    stop_top_k_moves : int in [0, stop_top_k) or float in [0, 1), default None (0)
        Members that may enter the top-k set in an iteration that counts as stable: an
        integer is a count, a float a fraction of ``stop_top_k`` (rounded down).
    stop_top_k_rounds : int >= 1, default None (1)
        Stable iterations in a row before the run stops; a value of at least ``max_iter``
        never stops early (the exact end of the knob).

    Examples
    --------
    >>> Approximation(stop_top_k_moves=2)
    Traceback (most recent call last):
    ...
    ValueError: stop_top_k_moves refines stop_top_k: give stop_top_k too, got stop_top_k_moves=2
    """

    stop_changed_fraction: float | None = None
    stop_top_k: int | None = None
    stop_top_k_moves: int | float | None = None
    stop_top_k_rounds: int | None = None

    def __post_init__(self):
        for name, kind in RANGES.items():
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, kind.check(value, name))
        for knob, refines in KNOBS.items():
            for name in refines:
                if getattr(self, name) is not None and getattr(self, knob) is None:
                    raise ValueError(f"{name} refines {knob}: give {knob} too, got "
                                     f"{name}={getattr(self, name)!r}")
        if self.stop_top_k_moves is not None:
            object.__setattr__(self, "stop_top_k_moves", self._moves(self.stop_top_k_moves))

    def _moves(self, value):
        """``stop_top_k_moves`` checked: an integer count below ``stop_top_k`` (kept an
        int), or a float fraction in [0, 1)."""
        if isinstance(value, float):
            return Float(0, 1, high_open=True).check(value, "stop_top_k_moves")
        return Int(0, self.stop_top_k - 1).check(value, "stop_top_k_moves")

    @property
    def top_k_moves(self) -> int:
        """The members that may enter the top-k set in a stable iteration (a count)."""
        moves = self.stop_top_k_moves or 0
        return int(moves * self.stop_top_k) if isinstance(moves, float) else moves

    def knobs(self) -> dict:
        """The fields that are on (not None), as a dict (``RunInfo.approximation``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None}

    def __repr__(self):  # the knobs that are on (as messages show it)
        return f"Approximation({', '.join(f'{k}={v!r}' for k, v in self.knobs().items())})"


#: The fields of :class:`Approximation` (the knobs and the fields that refine them).
FIELDS = tuple(f.name for f in dataclasses.fields(Approximation))
