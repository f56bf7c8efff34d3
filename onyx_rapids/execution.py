"""How an algorithm runs, as one validated value: :class:`Execution`.

An algorithm's mathematical parameters (``alpha``, ``tol``, ``sources``, ...) say *what* it
computes; an :class:`Execution` says *how*: ONYX's feature-aware lanes, change-driven
iterations and kernel folding, SIMD-X's push/pull direction, fused persistent kernels and
worklist filters, launch geometry, how kernels read edges (EMOGI), and (reserved for the work
that follows) approximation knobs and autotuning.  Every public algorithm takes ``execution=`` and, as a thin
convenience, the same fields as keyword arguments (which override ``execution``'s)::

    >>> import onyx_rapids as onyx
    >>> fast = onyx.Execution(change_driven=True, direction="push")
    >>> fast.replace(feature_aware=False).feature_aware
    False

Options are validated once, here; which options an algorithm supports, and which combinations
it refuses, is declared once, in :mod:`onyx_rapids.registry`.  ``docs/execution.md`` describes
every option.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

__all__ = ["Execution", "OPTIONS", "DIRECTIONS", "FILTERS", "EDGE_ACCESS"]

DIRECTIONS = ("push", "pull", "auto")
FILTERS = ("jit", "online", "ballot")
EDGE_ACCESS = ("degree", "naive", "merged", "aligned")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _bool(name, value, *, optional=False):
    if optional and value is None:
        return None
    if not isinstance(value, (bool, np.bool_)):
        allowed = "True, False or None" if optional else "True or False"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return bool(value)


def _choice(name, value, legal, *, optional=False):
    if optional and value is None:
        return None
    if value not in legal:
        shown = ", ".join(repr(x) for x in legal) + (" or None" if optional else "")
        raise ValueError(f"{name} must be one of {shown}, got {value!r}")
    return value


@dataclass(frozen=True)
class Execution:
    """Execution options shared by every algorithm (each supports a subset; see the registry).

    Parameters
    ----------
    feature_aware : bool, default True
        ONYX's k threads per property (one lane per feature); False runs one thread per vertex
        over all its features.
    change_driven : bool or "auto", default False
        ONYX's change-driven iterations: only vertices whose value moved push their change;
        False recomputes every vertex each iteration (bulk); "auto" chooses each iteration by
        the push-pull rule: bulk while the vertices that moved own more than
        ``pull_fraction`` of the out-edges, change-driven below (``info.modes`` records it).
    fold : bool or None, default None
        Fold an iteration's edge and vertex steps into one generated kernel.  None: the
        algorithm's own default.
    direction : {"push", "pull", "auto"} or None, default None
        Push along out-edges with atomics, pull along in-edges without, or choose each iteration
        from the active vertices' out-edges against ``pull_fraction`` of all edges (SIMD-X).
        None: the algorithm's own default.
    pull_fraction : float in [0, 1], default 0.3
        The push/pull switch point of ``direction="auto"``.
    fused : bool or None, default None
        Run every iteration in one persistent kernel with grid-wide barriers.  None: the
        algorithm's own default (fused where it can be).
    block_size : int or None, default None
        Threads per block, a multiple of 32 in [32, 1024]; None: the kernel's default.
    width : {1, 2, 4} or None, default None
        Feature-aware pull kernels: consecutive features per thread (k / width threads per
        property, as many loads in flight per edge).  None: chosen from k (the widest that
        divides k from k = 32 on, else one).  Push kernels run one feature per thread.
    filter : {"jit", "online", "ballot"}, default "jit"
        SIMD-X's worklist construction for traversals (just-in-time choice, thread bins, or a
        ballot scan).
    threshold : int, default 64
        Bin entries per thread before the online filter overflows to the ballot scan.
    edge_access : {"degree", "naive", "merged", "aligned"} or None, default None
        How traversal kernels read a worklist vertex's edges: by out-degree class, a thread /
        a warp / a block per vertex (``"degree"``, SIMD-X); a thread per vertex (``"naive"``);
        a warp per vertex, lanes reading consecutive edges (``"merged"``, EMOGI); or merged
        with each warp's first read moved down to a 128-byte boundary (``"aligned"``, EMOGI's
        best for zero-copy reads).  None: ``"aligned"`` on a graph whose edges are placed on
        the host (:mod:`onyx_rapids.memory`), ``"degree"`` on the device.  The propagations'
        pull kernels (pagerank's unfused path, personalized_pagerank, feature_propagation,
        label_propagation, MMR, MML) read in-edges the same way: ``"merged"`` / ``"aligned"``
        have a vertex's lanes load runs of consecutive in-edges and shuffle them round (the
        warp mapping: k / width <= 32), ``"degree"`` / ``"naive"`` have each feature group
        load each edge it takes (the host default at one lane a property, k = 1); given, it
        keeps those algorithms off the fused kernels.  Left None on a host-placed graph, a
        pull over every vertex copies the in-edges to the device for the call instead of
        reading them zero-copy (:mod:`onyx_rapids.streaming`); given, it reads them zero-copy.
    approximation, tuning : None
        Reserved for approximation knobs and the autotuner; must be None today.

    Examples
    --------
    >>> Execution(direction="sideways")
    Traceback (most recent call last):
    ...
    ValueError: direction must be one of 'push', 'pull', 'auto' or None, got 'sideways'
    """

    feature_aware: bool = True
    change_driven: bool | str = False
    fold: bool | None = None
    direction: str | None = None
    pull_fraction: float = 0.3
    fused: bool | None = None
    block_size: int | None = None
    width: int | None = None
    filter: str = "jit"
    threshold: int = 64
    edge_access: str | None = None
    approximation: object = None
    tuning: object = None

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "feature_aware", _bool("feature_aware", self.feature_aware))
        if self.change_driven != "auto":
            try:
                set_(self, "change_driven", _bool("change_driven", self.change_driven))
            except ValueError:
                raise ValueError(f"change_driven must be True, False or 'auto', got "
                                 f"{self.change_driven!r}") from None
        set_(self, "fold", _bool("fold", self.fold, optional=True))
        set_(self, "fused", _bool("fused", self.fused, optional=True))
        _choice("direction", self.direction, DIRECTIONS, optional=True)
        _choice("filter", self.filter, FILTERS)
        _choice("edge_access", self.edge_access, EDGE_ACCESS, optional=True)
        fraction = self.pull_fraction
        if isinstance(fraction, (bool, np.bool_)) or not isinstance(fraction, (int, float,
                                                                               np.floating)) \
                or not 0.0 <= float(fraction) <= 1.0:
            raise ValueError(f"pull_fraction must be a number in [0, 1], got {fraction!r}")
        set_(self, "pull_fraction", float(fraction))
        block = self.block_size
        if block is not None:
            if not _is_int(block) or block < 32 or block % 32 or block > 1024:
                raise ValueError(f"block_size must be None or a multiple of 32 in [32, 1024], "
                                 f"got {block!r}")
            set_(self, "block_size", int(block))
        if self.width is not None:
            if not _is_int(self.width) or self.width not in (1, 2, 4):
                raise ValueError(f"width (features per thread) must be None, 1, 2 or 4, got "
                                 f"{self.width!r}")
            set_(self, "width", int(self.width))
        if not _is_int(self.threshold) or self.threshold < 1:
            raise ValueError(f"threshold (bin entries per thread) must be a positive integer, "
                             f"got {self.threshold!r}")
        set_(self, "threshold", int(self.threshold))
        for name in ("approximation", "tuning"):
            if getattr(self, name) is not None:
                raise ValueError(f"{name} is reserved for upcoming work and must be None, got "
                                 f"{getattr(self, name)!r}")

    def replace(self, **options) -> "Execution":
        """A copy with ``options`` changed (validated; unknown names raise TypeError)."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise TypeError(f"unknown execution option(s) {', '.join(unknown)}; the options are "
                            f"{', '.join(OPTIONS)}")
        return dataclasses.replace(self, **options)

    def changed(self) -> dict:
        """The options that differ from the defaults, as a dict."""
        return {name: getattr(self, name) for name in OPTIONS
                if getattr(self, name) != _DEFAULTS[name]}

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in OPTIONS}


OPTIONS = tuple(f.name for f in dataclasses.fields(Execution))
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Execution)}
