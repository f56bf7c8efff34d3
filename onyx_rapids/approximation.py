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
vertices that still move (relative to their value), or the stability of the top-k set.
Partial edge processing (``edge_fraction``) has every iteration compute a rotating fraction of
each vertex's in-edges afresh.  ``activation_threshold`` decouples the change-driven mode's
activation from ``tol``.  ``merge_similarity`` runs on a graph of merged similar neighbours
(:mod:`onyx_rapids.algorithms._merged`).  ``source_fraction`` runs betweenness from fewer
sources.  ``degree_normalization`` adds two-hop edges to even out a warp's degrees (Graffix,
:mod:`onyx_rapids.algorithms._normalized`).  ``shared_clustering`` iterates the blocks of
well-clustered vertices in shared memory between PageRank's pulls (Graffix,
:mod:`onyx_rapids.algorithms._shared`).  ``docs/execution.md`` ("Approximation") describes
every knob.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .inputs import Float, Int

__all__ = ["Approximation", "CHANGED_RELATIVE", "FIELDS", "KNOBS", "RANGES", "knob_of"]

#: ``stop_changed_relative`` when not given: a vertex moved when its change exceeds a
#: thousandth of its value (far above float32's rounding, so float32 and float64 runs count
#: alike; on PageRank the count collapses once the L1 error is about a tenth of it).
CHANGED_RELATIVE = 1e-3

#: Each knob's legal values (the checks of :class:`Approximation`, which a registry entry may
#: narrow).  ``stop_top_k_moves`` is an integer below ``stop_top_k`` or a fraction of it,
#: checked by :meth:`Approximation.__post_init__`.
RANGES = {
    "stop_changed_fraction": Float(0, 1, low_open=True, high_open=True),
    "stop_changed_relative": Float(0, 1, low_open=True, high_open=True),
    "stop_top_k": Int(1),
    "stop_top_k_rounds": Int(1),
    "activation_threshold": Float(0, low_open=True),
    "edge_fraction": Float(0, 1, low_open=True),
    "merge_similarity": Float(0, 1, low_open=True),
    "source_fraction": Float(0, 1, low_open=True),
    "degree_normalization": Float(0, 1, low_open=True),
    "replicate_threshold": Float(0, 1, low_open=True),
    "replicate_sync": Int(1),
    "shared_clustering": Float(0, 1),
    "shared_rounds": Int(1),
}

#: The knobs an algorithm declares, with the fields that refine each (given only with it).
KNOBS = {
    "stop_changed_fraction": ("stop_changed_relative",),
    "stop_top_k": ("stop_top_k_moves", "stop_top_k_rounds"),
    "activation_threshold": (),
    "edge_fraction": (),
    "merge_similarity": (),
    "source_fraction": (),
    "degree_normalization": (),
    "replicate_threshold": ("replicate_sync",),
    "shared_clustering": ("shared_rounds",),
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
        vertices moved, and no more than in the iteration before (so not in the first, nor
        while a propagation from a few seeds still spreads).  A vertex moved when some
        feature changed by more than the algorithm's per-vertex tolerance (its change-driven
        threshold: ``tol / n`` for PageRank, ``tol`` for label propagation) plus
        ``stop_changed_relative`` times its new value.  Below ``1 / n`` it stops only where no
        vertex moved.
    stop_changed_relative : float in (0, 1), default None (:data:`CHANGED_RELATIVE`)
        The relative part of a vertex's tolerance (above); a tiny value leaves the absolute
        per-vertex tolerance alone, so with ``stop_changed_fraction`` below ``1 / n`` the
        run stops where the exact test does.
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
    activation_threshold : float > 0 or None
        Change-driven iterations (``change_driven=True`` or ``"auto"``): a vertex pushes
        once some feature moved by more than this since its last push, instead of the
        algorithm's threshold derived from ``tol`` (``tol / n`` for PageRank, ``tol`` for
        label propagation); larger values leave fewer vertices active.  Refused in bulk runs.
    edge_fraction : float in (0, 1] or None
        Partial edge processing: after the first iteration every bulk pull computes
        ``ceil(edge_fraction * d)`` of a vertex's d in-edges afresh, a window that rotates so
        that each in-edge is recomputed within ``ceil(1 / edge_fraction)`` iterations, and
        the others bring the value they brought when last computed (kept per edge and
        feature, m x k values on the device): the exact fixed point, reached in more,
        cheaper iterations (the exact test stops the run).  1 is the exact run.  Bulk
        pulls only.
    merge_similarity : float in (0, 1] or None
        Approximate graph representation: merge every two adjacent vertices whose closed
        neighbourhoods have a Jaccard similarity of at least this (chains of such pairs make
        one group), run on the graph of the groups (built once per graph and cached) and give
        every vertex its group's value (:mod:`onyx_rapids.algorithms._merged`).  Smaller
        merges more.  1 merges true twins only (equal closed neighbourhoods): PageRank on a
        simple undirected unweighted graph stays exact, weakly connected components are exact
        at every value.
    source_fraction : float in (0, 1] or None
        Sampled searches (betweenness): run the searches of ``ceil(source_fraction * s)`` of
        the call's s sources (at least 2) and extrapolate as for that many sampled sources:
        the first of its ``k`` sampled or given ``sources``, or, with every vertex a source,
        that many drawn by its ``seed`` (Brandes and Pich's estimate).  1 is the exact run.
    degree_normalization : float in (0, 1] or None
        Graffix's degree normalization: every vertex of degree d > 0 whose warp's (32
        consecutive vertices') largest degree is D gets up to ``floor(t D) - d`` extra edges
        to vertices two hops away, and the algorithm runs on that graph (built once per graph
        and cached; :mod:`onyx_rapids.algorithms._normalized`).  Not an exact end: even at 1
        the added edges change the result.
    replicate_threshold : float in (0, 1] or None
        Graffix's vertex replication (PageRank): in BFS order cut into chunks of 32, a vertex
        with ``e >= 2`` of its ``d`` out-edges into another chunk, ``e / d`` at least this,
        gets a replica there, which those edges read, updated from it every
        ``replicate_sync`` iterations (:mod:`onyx_rapids.algorithms._replicated`; layout
        built once per graph and cached).  Smaller replicates more.
    replicate_sync : int >= 1, default None (1)
        Iterations between the replicas' updates: 1 is the exact PageRank (up to float
        rounding), larger values leave the replicas stale in between.
    shared_clustering : float in [0, 1] or None
        Graffix's shared-memory processing of well-connected subgraphs (PageRank): the
        vertices whose local clustering coefficient is at least this, in breadth-first order,
        make blocks of 64 (built once per graph and cached), and after every pull over all
        vertices each block runs ``shared_rounds - 1`` more rounds on its internal edges in
        shared memory (:mod:`onyx_rapids.algorithms._shared`).  The exact fixed point: ``tol``
        decides the accuracy; the rounds may save pulls.
    shared_rounds : int >= 1, default None (4)
        The rounds per outer iteration of ``shared_clustering`` (the pull's one included);
        1 runs the plain Jacobi loop.

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
    stop_changed_relative: float | None = None
    activation_threshold: float | None = None
    edge_fraction: float | None = None
    merge_similarity: float | None = None
    source_fraction: float | None = None
    degree_normalization: float | None = None
    replicate_threshold: float | None = None
    replicate_sync: int | None = None
    shared_clustering: float | None = None
    shared_rounds: int | None = None

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

    @property
    def changed_relative(self) -> float:
        """The relative tolerance of ``stop_changed_fraction`` (its default when not given)."""
        return CHANGED_RELATIVE if self.stop_changed_relative is None \
            else self.stop_changed_relative

    def knobs(self) -> dict:
        """The fields that are on (not None), as a dict (``RunInfo.approximation``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None}

    def __repr__(self):  # the knobs that are on (as messages show it)
        return f"Approximation({', '.join(f'{k}={v!r}' for k, v in self.knobs().items())})"


#: The fields of :class:`Approximation` (the knobs and the fields that refine them).
FIELDS = tuple(f.name for f in dataclasses.fields(Approximation))
