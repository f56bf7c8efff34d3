"""What every algorithm shares: option checks, the iteration record and the result frame."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import device, frontier, io


@dataclass
class Info:
    """Convergence facts of a run (also stored in the result frame's ``attrs``)."""

    iterations: int = 0
    converged: bool = False
    variant: dict = field(default_factory=dict)
    directions: list | None = None  # "push" / "pull" of each iteration, where recorded

    def as_dict(self):
        facts = {"iterations": self.iterations, "converged": self.converged, **self.variant}
        if self.directions is not None:
            facts["directions"] = list(self.directions)
        return facts


def acc_variant(run: dict, direction, filter) -> dict:
    """The variant record of a run of :func:`onyx_rapids.acc`: options and how it went."""
    return dict(direction=direction, filter=filter, fused=run["fused"],
                push_iterations=run["push"], pull_iterations=run["pull"],
                ballot_iterations=run["ballot"])


def traversal_starts(g, source, sources):
    """Internal ids (host int64) of ``source`` (one vertex) or ``sources`` (a list): exactly
    one of them, naming vertices of ``g`` (ValueError naming the argument otherwise)."""
    if (source is None) == (sources is None):
        raise ValueError("give exactly one of source (one vertex) or sources (a list)")
    named = np.atleast_1d(np.asarray(source if sources is None else sources))
    if named.size == 0:
        raise ValueError("sources must name at least one vertex")
    try:
        return device.to_host(g.to_internal(named.ravel())).astype(np.int64)
    except ValueError as e:
        raise ValueError(f"{'source' if sources is None else 'sources'}: {e}") from e


def check_common(tol, max_iter, alpha=None):
    if not (tol > 0):
        raise ValueError(f"tol must be positive, got {tol!r}")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if alpha is not None and not (0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def resolve_direction(direction, change_driven):
    if direction in (None, "auto"):
        # bulk iterations pull (atomic-free); change-driven ones push from the few active vertices
        return "push" if change_driven else "pull"
    if direction not in ("push", "pull"):
        raise ValueError(f"direction must be 'push', 'pull' or 'auto', got {direction!r}")
    return direction


def resolve_pull_fold(direction, change_driven, fold, name):
    """Direction for algorithms whose folded kernel exists only in pull form."""
    if fold and direction in (None, "auto"):
        return "pull"
    direction = resolve_direction(direction, change_driven)
    if fold and direction == "push":
        raise ValueError(f"{name}: fold=True runs its steps as one pull kernel; pass "
                         "direction='pull', or fold=False to push")
    return direction


def check_traversal_options(direction, pull_fraction):
    if direction not in ("auto", "push", "pull"):
        raise ValueError(f"direction must be 'push', 'pull' or 'auto', got {direction!r}")
    if not 0 <= pull_fraction <= 1:
        raise ValueError(f"pull_fraction must be in [0, 1], got {pull_fraction!r}")


def choose_direction(g, active, direction, pull_fraction):
    """'auto': push while the active vertices' out-edges are at most ``pull_fraction`` of all
    edges, pull above (Ligra / SIMD-X)."""
    if direction != "auto":
        return direction
    touched = int(g.out_degree[frontier.to_mask(active, g.n)].sum())
    return "pull" if touched > pull_fraction * g.m else "push"


def finish(g, name, columns, info: Info, return_info: bool):
    if not info.converged:
        warnings.warn(
            f"{name} did not converge in {info.iterations} iterations; "
            "raise max_iter or tol for a converged result",
            RuntimeWarning,
            stacklevel=3,
        )
    df = io.to_frame(g, columns)
    try:
        df.attrs.update(info.as_dict())
    except AttributeError:  # frames without attrs (older cuDF): return_info=True still works
        pass
    return (df, info.as_dict()) if return_info else df
