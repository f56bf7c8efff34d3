"""Duplicate rows of a simple graph: the weights that rows naming the same edge merge into.

A simple graph (``multigraph=False``) keeps one edge per (source, destination) pair (for an
undirected graph per unordered pair), so rows that repeat a pair are merged.  When their
weights agree nothing is lost and nothing is said.  When they disagree, ``duplicates`` chooses
the edge's weights, column by column:

* ``"first"``: the first such row's (in input row order; the default, as before, and as
  cuGraph's ``Graph`` keeps one of them);
* ``"last"``: the last row's (NetworkX's rule: ``nx.from_pandas_edgelist`` overwrites);
* ``"min"``: the smallest (the shortest parallel road, for sssp);
* ``"sum"``: the sum (counts, capacities), also of rows that agree; a self-loop row counts
  once;
* ``"error"``: a ValueError naming the pairs.

Left at its default (None, which is ``"first"``), a :class:`UserWarning` names how many pairs
disagreed, a few of them, and this option.  Both builds call :func:`merge_weights` on each
run of equal keys (rows sorted stably by pair, so a run lists its rows in input order) and
:func:`report` once with what they found.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ..device import xp
from ..messages import listing

#: The values ``duplicates=`` takes (None: "first", with a warning when weights disagree).
DUPLICATES = ("first", "last", "min", "sum", "error")


def check_duplicates(value):
    """``value`` checked: None or one of :data:`DUPLICATES`; ValueError naming the argument."""
    if value is None or (isinstance(value, str) and value in DUPLICATES):
        return value
    raise ValueError(f"duplicates={value!r}: choose one of "
                     f"{', '.join(map(repr, DUPLICATES))} (how rows naming the same edge merge "
                     "their weights), or leave it out for 'first' with a warning when they "
                     "disagree")


def merge_weights(weights, order, head, mode, skip=None):
    """The weights of each run of rows: ``(merged, disagreeing)``.

    ``weights`` (rows, c) in input row order; ``order`` the rows in sorted order (runs of
    equal pairs, each in input row order), ``head`` True at the first of each of the k runs.
    ``merged`` (k, c) float32 per ``mode`` (module docstring); ``disagreeing`` the run
    numbers (ascending) whose rows' weights are not all equal.  Only rows that repeat a pair
    are compared, so a graph with few duplicates pays for few; "min" and "sum" read every row
    in sorted order when there is something to merge.  ``skip`` (sorted order) marks rows that
    ``"sum"`` leaves out (the second copy of a self-loop that an undirected build stores
    twice)."""
    starts = xp.flatnonzero(head)
    repeats = xp.flatnonzero(~head)  # sorted positions of rows that repeat the previous pair
    differ = xp.any(weights[order[repeats]] != weights[order[repeats - 1]], axis=1)
    disagreeing = xp.unique(xp.searchsorted(starts, repeats[differ], side="right") - 1)
    if mode in (None, "first", "error") or (mode != "sum" and not disagreeing.shape[0]):
        # (rows that agree: any rule but "sum" is "first")
        return weights[order[starts]].astype(np.float32, copy=False), disagreeing
    r = int(order.shape[0])
    ends = xp.concatenate([starts[1:], xp.array([r], dtype=starts.dtype)]) - 1
    if mode == "last":
        return weights[order[ends]].astype(np.float32, copy=False), disagreeing
    ordered = weights[order].astype(np.float64)
    if mode == "min":
        run = xp.cumsum(head, dtype=np.int64) - 1
        merged = xp.empty((int(starts.shape[0]), int(ordered.shape[1])), dtype=np.float32)
        for j in range(int(ordered.shape[1])):
            by = xp.lexsort(xp.stack([ordered[:, j], run.astype(np.float64)]))
            merged[:, j] = ordered[by, j][starts]
        return merged, disagreeing
    if skip is not None:
        ordered[skip] = 0
    total = xp.zeros((r + 1, int(ordered.shape[1])), dtype=np.float64)
    xp.cumsum(ordered, axis=0, out=total[1:])
    sums = total[ends + 1] - total[starts]
    with np.errstate(over="ignore"):
        merged = sums.astype(np.float32)
    if not bool(xp.isfinite(merged).all()):
        raise ValueError("duplicates='sum': the summed weights of some duplicate rows exceed "
                         "the float32 range; rescale the weights")
    return merged, disagreeing


def report(count: int, examples: list, mode, directed: bool) -> None:
    """Say that ``count`` pairs merged rows whose weights disagree (``examples``: the first
    few pairs, described): a ValueError for ``"error"``, a UserWarning for the default (None),
    nothing for a chosen rule."""
    if not count or mode not in (None, "error"):
        return
    kind = "(source, destination) pair" if directed else "vertex pair"
    what = (f"{count} {kind}{'s' if count != 1 else ''} "
            f"({listing(examples, count)}) appear{'s' if count == 1 else ''} in several rows "
            "whose weights differ")
    if mode == "error":
        raise ValueError(f"duplicates='error': {what}; merge or drop those rows, or pass "
                         "duplicates='first', 'last', 'min' or 'sum' to choose the weights, or "
                         "multigraph=True to keep every row")
    warnings.warn(f"{what}; each such edge kept the first row's weights (duplicates='first', "
                  "the default). Pass duplicates='last' (NetworkX's rule), 'min', 'sum' or "
                  "'error' to choose, duplicates='first' to keep this silently, or "
                  "multigraph=True to keep every row", UserWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside onyx_rapids (the user's call that built
    the graph), counted from :func:`report`."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2  # report's caller is level 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level
