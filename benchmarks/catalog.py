"""The algorithms the benchmarks know, their inputs, result columns and variant matrices: read
from the library's registry (``onyx_rapids.registry.ALGORITHMS``), never kept here.

:func:`algorithms` is the one place the list comes from; an :class:`Entry` is a declaration
seen from the benchmarks (its value columns, its call), and :func:`make_inputs` draws the
declared inputs through their kinds (:mod:`onyx_rapids.inputs`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

import onyx_rapids as onyx
from onyx_rapids import device, inputs as kinds, registry

ALIASES = {"wcc": "weakly_connected_components", "ppr": "personalized_pagerank",
           "core": "core_number", "appnp": "feature_propagation", "lp": "label_propagation"}
# The random stream of each algorithm's inputs (its index here): fixed, so that the inputs
# stay those of the committed results whatever order the registry declares them in.
_STREAMS = ("pagerank", "personalized_pagerank", "label_propagation", "feature_propagation",
            "als", "belief_propagation", "multi_manifold_ranking", "multimodal_learning", "bfs",
            "sssp", "weakly_connected_components", "core_number", "k_core")
# Columns of the m x c edge weights generated for the algorithms that take them as a
# parameter ("k": one per feature)
_EDGE_WEIGHTS = {"multi_manifold_ranking": "k", "multimodal_learning": 2}


@dataclass(frozen=True)
class Entry:
    """An algorithm's registry declaration (``spec``) as the benchmarks use it."""

    spec: registry.Algorithm

    name = property(lambda self: self.spec.name)
    columns = property(lambda self: tuple(self.spec.columns))
    options = property(lambda self: dict(self.spec.options))
    inputs = property(lambda self: self.spec.inputs)
    iterative = property(lambda self: bool(self.spec.iterative))
    graph = property(lambda self: self.spec.graph)

    @property
    def function(self):
        return getattr(onyx, self.name)  # looked up per call: tests patch the library

    def variants(self) -> list[dict]:
        """Every supported combination of the variant axes (the registry's ``variants()``)."""
        return [dict(v) for v in self.spec.variants()]

    def value_columns(self, k: int = 1) -> list[str]:
        """The result's value columns (``{i}`` expanded for i < k), vertex and predecessor
        left out."""
        templated = [c for c in self.columns if "{i}" in c]
        if templated:  # per-feature columns only (not lp's argmax "label", als's "side")
            return [c.format(i=i) for c in templated for i in range(k)]
        return [c for c in self.columns if c not in ("vertex", "predecessor")]

    def input_names(self) -> set:
        return {i.name for i in self.inputs}


def algorithms() -> dict[str, Entry]:
    """name -> :class:`Entry` of every public algorithm, in the registry's order."""
    return {name: Entry(spec) for name, spec in registry.ALGORITHMS.items()}


def get(name: str) -> Entry:
    table = algorithms()
    name = ALIASES.get(name, name)
    if name not in table:
        raise ValueError(f"unknown algorithm {name!r}; choose from {', '.join(table)}")
    return table[name]


def parse_options(text: str) -> dict:
    """``"width=4/fold=true"`` -> ``{"width": 4, "fold": True}`` (ints, booleans, None, else
    the string), the inverse of :func:`onyx_rapids.registry.variant_name`'s ``name=value`` parts."""
    out = {}
    for part in text.split("/"):
        name, sep, value = part.partition("=")
        if not sep or not name:
            raise ValueError(f"variant {text!r}: expected name=value parts joined by '/'")
        low = value.strip().lower()
        out[name.strip()] = (int(low) if low.lstrip("-").isdigit() else
                             {"true": True, "false": False, "none": None}.get(low, value.strip()))
    return out


# ------------------------------------------------------------------------------ inputs, calls


def make_inputs(entry: Entry, g, k: int, context: dict | None = None) -> dict:
    """Fixed random inputs (seeded, on the device) of every input the algorithm requires, by
    name (:func:`onyx_rapids.inputs.generate`); ``context`` may give any of them (``sides``
    of a ratings graph, ``source``, ``sources``, k_core's ``k``)."""
    stream = _STREAMS.index(entry.name) if entry.name in _STREAMS else 99
    rng = np.random.default_rng([kinds.SEED, stream, k])
    out = kinds.generate(entry.spec, g, k, rng, context or {})
    if entry.name in _EDGE_WEIGHTS:
        cols = k if _EDGE_WEIGHTS[entry.name] == "k" else _EDGE_WEIGHTS[entry.name]
        drawn = 0.1 + 0.9 * rng.random((g.m, cols), dtype=np.float32)
        out["weights"] = device.asarray(np.ascontiguousarray(drawn, dtype=np.float32))
    return out


def unweighted(entry: Entry) -> dict:
    """The keyword that makes the algorithm ignore the graph's weights (``weight=False``), or
    {} when it has none."""
    return {"weight": False} if "weight" in entry.spec.params else {}


def call(entry: Entry, g, inputs: dict, *, iterations=None, tol=None, info=True, **options):
    """One call: (frame, facts dict).  ``iterations`` goes to ``max_iter`` or ``iterations``
    (whichever the algorithm has), ``tol`` where it has one; RuntimeWarnings are silenced."""
    params = entry.spec.params
    kw = dict(inputs)
    key = next((p for p in ("max_iter", "iterations") if p in params), None)
    if iterations is not None and key:
        kw[key] = iterations
    if tol is not None and "tol" in params:
        kw["tol"] = tol
    kw.update(options)
    if info:
        kw["return_info"] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = entry.function(g, **kw)
    if info and isinstance(out, tuple):
        facts = out[1]
        return out[0], dict(facts) if isinstance(facts, Mapping) else dict(vars(facts))
    return out, {}


def result_matrix(entry: Entry, frame, k: int):
    """The value columns as an n x c float64 backend array (frame order)."""
    from .common import column

    names = entry.value_columns(k)
    missing = [c for c in names if c not in list(frame.columns)]
    if missing:
        raise KeyError(f"{entry.name} result lacks columns {missing} (has "
                       f"{list(frame.columns)})")
    return device.xp.stack([column(frame, c).astype(np.float64) for c in names], axis=1)


#: the sums a result must have (common.sane) and its agreement metric and tolerance
SUMS = {"pagerank": "total", "personalized_pagerank": "columns", "label_propagation": "rows",
        "belief_propagation": "rows"}
AGREE = {"pagerank": ("normalized_l1", 1e-3), "personalized_pagerank": ("normalized_l1", 1e-3),
         "label_propagation": ("max_abs", 1e-3), "belief_propagation": ("max_abs", 1e-3),
         "als": ("rel_l2", 1e-2)}


def agreement_metric(name: str) -> tuple:
    return AGREE.get(name, ("rel_l2", 1e-3))
