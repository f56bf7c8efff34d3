"""The aggregate-then-update iteration every propagation shares (PageRank, personalized
PageRank, label propagation, MMR, MML, feature propagation), in all its execution variants.

Each iteration aggregates an edge contribution over the in-edges of every vertex into ``acc``
and then updates every vertex from its aggregate:

    acc(v) = sum_{u in N-(v)} contribution(u, v, e; rows),   x_next(v) = update(acc(v), x(v), ..)

In bulk mode ``rows`` is ``x`` and ``acc`` starts at zero each iteration (folded, it is never
stored: the update reads it from the pull's registers).  In change-driven mode (ONYX 4.2)
``acc`` is kept on the vertices in float64 (many small changes would vanish in float32) and
adjusted by ``rows = delta``, the change of the vertices whose row moved by more than
``threshold`` since they last pushed; only those vertices are active.  ``info.modes`` records
each iteration's mode.

The package, after Gunrock essentials' enactor and its PageRank:

- :mod:`.plan`: the run's ``Execution`` resolved once (fold, direction, registers, local);
- :mod:`.loop`: the loop and the run's state;
- :mod:`.steps`: the bulk pull or push (folded or not), the change-driven and local steps;
- :mod:`.stops`: the stop tests, measured in the vertex kernel where they can be, and the
  reduced execution of an ``Approximation`` (:class:`~.stops.ApproximateStop`);
- :mod:`.partial`: partial edge processing (an ``Approximation``'s ``edge_fraction``);
- :mod:`.policies`: ``Bulk``, ``ChangeDriven`` and ``Auto`` (``change_driven="auto"``, the
  push-pull switch and what it learns per graph);
- :mod:`.engines`: whether a run goes to the fused kernel instead;
- :mod:`.driver`: :func:`propagate`, a run put together.

Execution: ``fold`` runs the edge and vertex steps as one generated kernel per iteration (pull:
[aggregate, update]; push: [update, push the new row], primed by one push); ``direction``
``"auto"`` pulls bulk iterations and, change-driven and unfolded, chooses push or pull each
iteration from the active vertices' out-edges against ``pull_fraction`` of all edges (SIMD-X).
Under ``change_driven="auto"``, ``fold`` applies to the bulk iterations and the change-driven
ones push unfolded.  The contract is in ``docs/algorithms.md``; the options in
``docs/execution.md``.
"""

from .driver import propagate
from .engines import fused_choice
from .loop import Run, iterate
from .plan import KNOB_RULES, Plan
from .policies import (SELDOM_RUNS, SLOW_ITERATIONS, Auto, Bulk, auto_memo, judge,
                       judge_continuation, record_bulk, seldom)
from .steps import _Replay
from .stops import L1ChangeTest, MaxChangeTest, NoStop, max_change_test, moved_edges

__all__ = ["propagate", "fused_choice", "Run", "iterate", "KNOB_RULES", "Plan", "SELDOM_RUNS",
           "SLOW_ITERATIONS", "Auto", "Bulk", "auto_memo", "judge", "judge_continuation",
           "record_bulk", "seldom", "_Replay", "L1ChangeTest", "MaxChangeTest", "NoStop",
           "max_change_test", "moved_edges"]
