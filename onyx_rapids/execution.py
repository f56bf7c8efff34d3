"""How an algorithm runs, as one validated value: :class:`Execution`.

An algorithm's mathematical parameters (``alpha``, ``tol``, ``sources``, ...) say *what* it
computes; an :class:`Execution` says *how*: ONYX's feature-aware lanes, change-driven
iterations and kernel folding, SIMD-X's push/pull direction, fused persistent kernels and
worklist filters, launch geometry, how kernels read edges (EMOGI), approximation knobs
(:class:`~onyx_rapids.approximation.Approximation`) and autotuning (``tuning``).  Every public
algorithm takes ``execution=`` and, as a thin convenience, the same fields as keyword arguments
(which override ``execution``'s)::

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

from .approximation import Approximation

__all__ = ["Execution", "OPTIONS", "DIRECTIONS", "FILTERS", "EDGE_ACCESS", "TUNING"]

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


def _change_driven(name, value):
    if value == "auto":
        return value
    try:
        return _bool(name, value)
    except ValueError:
        raise ValueError(f"{name} must be True, False or 'auto', got {value!r}") from None


def _fraction(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.floating)) \
            or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _block_size(name, value):
    if value is None:
        return None
    if not _is_int(value) or value < 32 or value % 32 or value > 1024:
        raise ValueError(f"{name} must be None or a multiple of 32 in [32, 1024], got {value!r}")
    return int(value)


def _width(name, value):
    if value is None:
        return None
    if not _is_int(value) or value not in (1, 2, 4):
        raise ValueError(f"{name} (features per thread) must be None, 1, 2 or 4, got {value!r}")
    return int(value)


def _threshold(name, value):
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} (bin entries per thread) must be a positive integer, got "
                         f"{value!r}")
    return int(value)


#: The values of ``tuning`` besides None and a :class:`~onyx_rapids.tuning_model.Model`.
TUNING = ("auto", "search")


def _tuning(name, value):
    if value is None or (isinstance(value, str) and value in TUNING):
        return value  # every Execution checks this: no import on the common path
    from .tuning_model import Model

    if isinstance(value, Model):
        return value
    raise ValueError(f"{name} must be None, 'auto', 'search' or an onyx_rapids.tuning_model."
                     f"Model, got {value!r}")


def _approximation(name, value):
    if value is not None and not isinstance(value, Approximation):
        raise ValueError(f"{name} must be an onyx_rapids.Approximation or None (exact), got "
                         f"{value!r}")
    return value


#: Each option's check, in the order they run: ``check(name, value)`` returns the value
#: normalized, or raises ValueError naming the option, its legal values and the value.
_CHECKS = {
    "feature_aware": _bool,
    "change_driven": _change_driven,
    "fold": lambda name, value: _bool(name, value, optional=True),
    "fused": lambda name, value: _bool(name, value, optional=True),
    "direction": lambda name, value: _choice(name, value, DIRECTIONS, optional=True),
    "filter": lambda name, value: _choice(name, value, FILTERS),
    "edge_access": lambda name, value: _choice(name, value, EDGE_ACCESS, optional=True),
    "pull_fraction": _fraction,
    "block_size": _block_size,
    "width": _width,
    "threshold": _threshold,
    "approximation": _approximation,
    "tuning": _tuning,
}


def checked_options(**values) -> dict:
    """``values`` (options of :class:`Execution`'s names) checked with its messages, in its
    order, and normalized; options values of operators (``acc.AccOptions``) check theirs
    here."""
    return {name: check(name, values[name]) for name, check in _CHECKS.items()
            if name in values}


def options_of(cls, execution: "Execution", **overrides):
    """An options dataclass ``cls`` (``operators.MapOptions``, ``acc.AccOptions``) with the
    fields an :class:`Execution` also has copied from ``execution``, then ``overrides``."""
    shared = {f.name: getattr(execution, f.name) for f in dataclasses.fields(cls)
              if f.name in OPTIONS}
    return cls(**dict(shared, **overrides))


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
    approximation : Approximation or None, default None
        Approximation knobs (:class:`~onyx_rapids.approximation.Approximation`; each
        algorithm supports those its registry entry declares); None: the exact run.
    tuning : {"auto", "search"}, Model or None, default None
        Input-sensitive autotuning (:mod:`onyx_rapids.tuning`): ``"auto"`` runs the
        configuration (execution options, and sssp's ``delta`` / weakly connected components'
        ``method``) the tuning model predicts fastest for this graph's attributes;
        ``"search"`` times the model's top 3 on the graph's first call and keeps the fastest
        for the graph's later calls; a :class:`~onyx_rapids.tuning_model.Model` is ``"auto"``
        with that model instead of the default one
        (:func:`~onyx_rapids.tuning_model.default_model_path`).  Options set explicitly always
        win over the tuner; without a model for this device it runs the defaults with a
        warning.  The choice is reported in ``info.tuning``.  None: no tuning.

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
    approximation: Approximation | None = None
    tuning: object = None

    def __post_init__(self):
        for name, value in checked_options(**vars(self)).items():
            object.__setattr__(self, name, value)

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
