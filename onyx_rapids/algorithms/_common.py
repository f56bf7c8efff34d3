"""What every algorithm shares: option checks, the iteration record and the result frame."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from .. import device, frontier, io, profiling
from ..registry import CHANGED, Refuse


@dataclass(eq=False)  # Mapping's __eq__: a RunInfo equals the dict of its facts
class RunInfo(Mapping):
    """Facts of one run: ``iterations``, ``converged``, the execution options it used and
    per-iteration choices (``directions``, where recorded).

    ``modes`` ("bulk" / "change-driven" of each iteration) where the mode can change.
    ``timings`` (seconds of ``setup``, ``kernels``, ``result``, ``compile`` and ``total``) when
    the call was profiled (``ONYX_RAPIDS_PROFILE=1``, :mod:`onyx_rapids.profiling`).
    ``approximation``: the knobs of an approximate run (``Approximation.knobs()``), and
    ``estimate`` what it measured of its last iteration: ``stopped_by`` (the knob that
    stopped it, ``"tol"`` for the exact test, None otherwise: ``max_iter``, or a
    change-driven run with nothing left to push), ``changed_fraction``
    (of the vertices that moved by more than the per-vertex tolerance), ``l1_change``
    (``max_f sum_v |x_next - x|``; bulk PageRank's L1 error is at most ``alpha / (1 -
    alpha)`` times it) and ``top_k_moves`` (with ``stop_top_k``); both None on exact runs.

    Returned by every algorithm with ``return_info=True`` as ``(frame, info)``; it reads as
    attributes (``info.iterations``) and as a mapping (``info["iterations"]``, ``dict(info)``).
    A copy also goes to the frame's ``attrs``, which is only a convenience: pandas ``merge``
    and many cuDF operations drop it.
    """

    iterations: int = 0
    converged: bool = False
    variant: dict = field(default_factory=dict)
    directions: list | None = None  # "push" / "pull" of each iteration, where recorded
    modes: list | None = None  # "bulk" / "change-driven" of each iteration, where recorded
    # seconds of setup / kernels / result / compile / total, with ONYX_RAPIDS_PROFILE=1
    # (onyx_rapids.profiling); None otherwise
    timings: dict | None = None
    approximation: dict | None = None  # the knobs of an approximate run
    estimate: dict | None = None  # what an approximate run measured of its last iteration

    def as_dict(self):
        facts = {"iterations": self.iterations, "converged": self.converged, **self.variant}
        if self.directions is not None:
            facts["directions"] = list(self.directions)
        if self.modes is not None:
            facts["modes"] = list(self.modes)
        if self.timings is not None:
            facts["timings"] = dict(self.timings)
        if self.approximation is not None:
            facts.update(approximation=dict(self.approximation), estimate=dict(self.estimate))
        return facts

    def __getitem__(self, key):
        return self.as_dict()[key]

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self):
        return len(self.as_dict())

    def __getattr__(self, name):  # the variant's facts read as attributes too
        variant = self.__dict__.get("variant", {})
        if name in variant:
            return variant[name]
        raise AttributeError(name)


Info = RunInfo


def pull_fold_direction(execution):
    """Direction of an algorithm whose folded kernel pulls (its registry entry refuses
    ``fold=True`` with ``direction="push"``): "auto" pulls folded and bulk iterations and
    pushes change-driven unfolded ones."""
    direction = execution.direction or "auto"
    if direction != "auto":
        return direction
    return "pull" if execution.fold or not execution.change_driven else "push"


AUTO_DIRECTION = Refuse(dict(change_driven="auto", direction=("push", "pull")),
                        "it sets each iteration's direction (bulk iterations pull, "
                        "change-driven ones push); leave direction unset or 'auto'")

PULL_FOLD = Refuse(dict(fold=True, direction="push"),
                   "its folded kernel pulls; pass direction='pull', or fold=False to push")

#: bfs and sssp: the options of one variant refused on the other.  One source runs on the
#: Active-Compute-Combine engine (filter, threshold, fused, edge_access); k sources run as
#: one k-feature property through edgemap (feature_aware).
STARTS = tuple(
    Refuse({option: CHANGED}, "k sources run as one k-feature property through edgemap; "
           "filter, threshold, fused and edge_access tune the one-source engine (acc): give "
           "source= to use them", inputs=dict(sources=True), variant="from k sources (sources=)")
    for option in ("filter", "threshold", "fused", "edge_access")
) + (Refuse(dict(feature_aware=CHANGED), "one source runs on the Active-Compute-Combine engine, "
            "a lane per vertex; feature_aware maps the lanes of k sources (sources=)",
            inputs=dict(sources=False), variant="from one source"),)


def choose_direction(g, active, direction, pull_fraction):
    """'auto': push while the active vertices' out-edges are at most ``pull_fraction`` of all
    edges, pull above (Ligra / SIMD-X)."""
    if direction != "auto":
        return direction
    touched = int(g.out_degree[frontier.to_mask(active, g.n)].sum())
    return "pull" if touched > pull_fraction * g.m else "push"


def cached_build(g, key, build):
    """(``g.cached(key, build)``, the milliseconds this call spent building it: 0 when the
    graph's cache held it): a derived graph or layout built once per graph, its build time
    reported apart from the run (the device synchronized around it)."""
    built = []

    def timed():
        device.synchronize()
        started = time.perf_counter()
        value = build()
        device.synchronize()
        built.append((time.perf_counter() - started) * 1e3)
        return value

    return g.cached(key, timed), built[0] if built else 0.0


def finish(g, name, columns, info: RunInfo, return_info: bool, warn: bool = True,
           pairs=None):
    """The result frame (per vertex; per vertex pair where ``pairs`` gives the internal
    ``(sources, destinations)`` of its rows, :func:`onyx_rapids.io.to_pair_frame`) with the run
    facts in its ``attrs``, and ``info`` too when ``return_info``."""
    if warn and not info.converged:
        warnings.warn(
            f"{name} did not converge in {info.iterations} iterations; "
            "raise max_iter or tol for a converged result",
            RuntimeWarning,
            stacklevel=3,
        )
    with profiling.result():
        df = io.to_frame(g, columns) if pairs is None else io.to_pair_frame(g, *pairs, columns)
    info.timings = profiling.timings()
    try:
        df.attrs.update(info.as_dict())
    except AttributeError:  # frames without attrs (older cuDF): return_info=True still works
        pass
    return (df, info) if return_info else df
