"""The algorithms the benchmarks know, their inputs, result columns and variant matrices: read
from the library's registry (``onyx_rapids.registry.ALGORITHMS``), never kept here.

:func:`algorithms` is the one place the list comes from.  While an algorithm is not yet
declared in the registry (the registry lands module by module), its entry is derived from the
function's signature (options: the ``Execution`` fields it takes as keywords; inputs: its
parameters) with the result columns of :data:`_COLUMNS`; ``source`` says which.
"""

from __future__ import annotations

import inspect
import itertools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

import onyx_rapids as onyx
from onyx_rapids import device

NAMES = ("pagerank", "personalized_pagerank", "label_propagation", "feature_propagation", "als",
         "belief_propagation", "multi_manifold_ranking", "multimodal_learning", "bfs", "sssp",
         "weakly_connected_components", "core_number", "k_core")
_COLUMNS = {"pagerank": ("vertex", "pagerank"), "personalized_pagerank": ("vertex", "ppr_{i}"),
            "label_propagation": ("vertex", "lp_{i}"), "feature_propagation": ("vertex", "h_{i}"),
            "als": ("vertex", "lf_{i}"), "belief_propagation": ("vertex", "belief_{i}"),
            "multi_manifold_ranking": ("vertex", "mmr_{i}"),
            "multimodal_learning": ("vertex", "mml_{i}"),
            "bfs": ("vertex", "distance", "predecessor"),
            "sssp": ("vertex", "distance", "predecessor"),
            "weakly_connected_components": ("vertex", "labels"),
            "core_number": ("vertex", "core_number"), "k_core": ("vertex",)}
_OPTIONS = ("feature_aware", "change_driven", "fold", "direction", "pull_fraction", "fused",
            "block_size", "filter", "threshold")
_AXES = {"feature_aware": (True, False), "change_driven": (False, True), "fold": (False, True),
         "direction": ("pull", "push"), "filter": ("jit", "ballot", "online"),
         "fused": (False, True)}
ALIASES = {"wcc": "weakly_connected_components", "ppr": "personalized_pagerank",
           "core": "core_number", "appnp": "feature_propagation", "lp": "label_propagation"}
INPUT_SEED = 1


@dataclass
class Entry:
    name: str
    columns: tuple
    options: dict
    inputs: tuple  # (name, kind, required)
    iterative: bool
    graph: str = "any"  # "any" | "undirected" | "bipartite"
    spec: object = None  # the registry's Algorithm, when declared there
    source: str = "registry"

    @property
    def function(self):
        return getattr(onyx, self.name)  # looked up per call: tests patch the library

    def variants(self) -> list[dict]:
        """Every supported combination of the variant axes (the registry's ``variants()``)."""
        if self.spec is not None:
            return [dict(v) for v in self.spec.variants()]
        axes = [a for a in _AXES if a in self.options]
        return [dict(zip(axes, c)) for c in itertools.product(*(_AXES[a] for a in axes))]

    def value_columns(self, k: int = 1) -> list[str]:
        """The result's value columns (``{i}`` expanded for i < k), vertex and predecessor
        left out."""
        templated = [c for c in self.columns if "{i}" in c]
        if templated:  # per-feature columns only (not lp's argmax "label", als's "side")
            return [c.format(i=i) for c in templated for i in range(k)]
        return [c for c in self.columns if c not in ("vertex", "predecessor")]

    def input_names(self) -> set:
        return {i[0] for i in self.inputs}


def _from_signature(name: str) -> Entry:
    params = inspect.signature(getattr(onyx, name)).parameters
    options = {p: None for p in params if p in _OPTIONS}
    inputs = tuple((p, "", q.default is inspect.Parameter.empty) for p, q in params.items()
                   if p != "g" and p not in _OPTIONS and q.kind != q.VAR_KEYWORD)
    return Entry(name, _COLUMNS[name], options, inputs, "max_iter" in params
                 or "iterations" in params, "bipartite" if name == "als" else "any", None,
                 "signature")


def algorithms() -> dict[str, Entry]:
    """name -> :class:`Entry` of every public algorithm, the registry's declaration first."""
    try:
        from onyx_rapids.registry import ALGORITHMS as declared
    except ImportError:
        declared = {}
    out = {}
    for name, spec in declared.items():
        out[name] = Entry(name, tuple(spec.columns), dict(spec.options),
                          tuple((i.name, i.kind, i.required) for i in spec.inputs),
                          bool(spec.iterative), spec.graph, spec)
    for name in NAMES:
        if name not in out and hasattr(onyx, name):
            out[name] = _from_signature(name)
    return out


def get(name: str) -> Entry:
    table = algorithms()
    name = ALIASES.get(name, name)
    if name not in table:
        raise ValueError(f"unknown algorithm {name!r}; choose from {', '.join(table)}")
    return table[name]


def variant_name(options: dict) -> str:
    """``FA/NCD/fold/pull``-style name of an options dict ("default" when empty)."""
    words = {"feature_aware": ("FA", "NFA"), "change_driven": ("CD", "NCD"),
             "fold": ("fold", "unfold"), "fused": ("fused", "unfused")}
    parts = []
    for key in ("feature_aware", "change_driven", "fold", "filter", "fused", "direction"):
        if key in options and options[key] is not None:
            v = options[key]
            parts.append(words[key][0 if v else 1] if key in words else str(v))
    parts += [f"{k}={v}" for k, v in options.items() if k not in
              ("feature_aware", "change_driven", "fold", "filter", "fused", "direction")]
    return "/".join(parts) or "default"


def parse_options(text: str) -> dict:
    """``"width=4/fold=true"`` -> ``{"width": 4, "fold": True}`` (ints, booleans, None, else
    the string), the inverse of :func:`variant_name`'s ``name=value`` parts."""
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


def id_order(g) -> np.ndarray:
    """Internal positions of the vertices in ascending id order (host): random inputs are
    drawn over it, so that a graph and its :meth:`~onyx_rapids.Graph.reorder` get the same
    vertices and values."""
    return device.to_host(g.id_order())


def in_internal_order(g, rows: np.ndarray) -> np.ndarray:
    """``rows`` given in ascending id order, put in the graph's internal order."""
    out = np.empty_like(rows)
    out[id_order(g)] = rows
    return out


def lp_labels(g, k: int, seed: int = INPUT_SEED, fraction: float = 0.01) -> pd.DataFrame:
    """``vertex``, ``label``: a fixed random 1% of the vertices, each with a class in [0, k)."""
    rng = np.random.default_rng(seed)
    count = max(1, int(round(g.n * fraction)))
    idx = id_order(g)[np.sort(rng.choice(g.n, size=count, replace=False))]
    return pd.DataFrame({"vertex": device.to_host(g.vertices)[idx].astype(np.int64),
                         "label": rng.integers(0, k, size=count, dtype=np.int64)})


def top_vertex(g) -> int:
    """The vertex of largest out-degree (smallest id among ties), as an original id."""
    degree, ids = device.to_host(g.out_degree), device.to_host(g.vertices)
    return int(ids[degree == degree.max()].min()) if g.n else 0


def with_out_edges(g) -> np.ndarray:
    """Internal positions, in ascending id order, of the vertices with out-edges (every
    vertex when none has)."""
    order = id_order(g)
    degree = device.to_host(g.out_degree)[order]
    return order[degree > 0] if (degree > 0).any() else order


def make_inputs(entry: Entry, g, k: int, context: dict | None = None) -> dict:
    """Fixed random inputs (seeded, on the device) of every input the algorithm requires, by
    name (then by kind); ``context`` may hold ``sides`` (ratings graphs), ``source``,
    ``sources``, ``k_core_k``."""
    context = context or {}
    rng = np.random.default_rng([INPUT_SEED, NAMES.index(entry.name)
                                 if entry.name in NAMES else 99, k])
    n, m = g.n, g.m
    dev = lambda a: device.asarray(np.ascontiguousarray(a, dtype=np.float32))  # noqa: E731
    out = {}
    for name, kind, required in entry.inputs:
        if name in context:
            out[name] = context[name]
        elif kind == "vertex" and "sources" not in context:  # bfs / sssp: one source
            out[name] = top_vertex(g)
        elif not required:
            continue
        elif name == "sources" or kind == "vertices":
            cand = with_out_edges(g)
            idx = rng.choice(cand, size=k, replace=len(cand) < k)
            out[name] = device.to_host(g.vertices)[idx].astype(np.int64)
        elif name == "labels" or kind == "labels":
            out[name] = lp_labels(g, k)
        elif name == "k" and entry.name == "k_core":
            out[name] = context.get("k_core_k", 1)
        elif name == "k" or (kind == "int" and required):
            out[name] = k
        elif name == "priors":
            out[name] = dev(in_internal_order(g, 0.5 + rng.random((n, k), dtype=np.float32)))
        elif name == "potential" or kind == "matrix":
            out[name] = np.full((k, k), 0.1) + 0.8 * np.eye(k)
        elif name in ("features", "init") or kind == "vertex_values":
            out[name] = dev(in_internal_order(g, rng.random((n, k), dtype=np.float32)))
        elif name == "weights" and entry.name in ("multi_manifold_ranking",
                                                  "multimodal_learning"):
            cols = k if entry.name == "multi_manifold_ranking" else 2
            out[name] = dev(0.1 + 0.9 * rng.random((m, cols), dtype=np.float32))
        else:
            raise ValueError(f"{entry.name}: no benchmark input for required {name!r} "
                             f"(kind {kind!r})")
    if entry.name in ("multi_manifold_ranking", "multimodal_learning") and "weights" not in out:
        cols = k if entry.name == "multi_manifold_ranking" else 2
        out["weights"] = dev(0.1 + 0.9 * rng.random((m, cols), dtype=np.float32))
    if entry.name == "als" and "sides" in context:
        out["sides"] = context["sides"]
    return out


def unweighted(entry: Entry) -> dict:
    """The keyword that makes the algorithm ignore the graph's weights (``weight=False``, or
    the older ``weighted=False``), or {} when it has neither."""
    params = _parameters(entry.function)
    return {"weight": False} if "weight" in params else (
        {"weighted": False} if "weighted" in params else {})


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def call(entry: Entry, g, inputs: dict, *, iterations=None, tol=None, info=True, **options):
    """One call: (frame, facts dict).  ``iterations`` goes to ``max_iter`` or ``iterations``
    (whichever the function has), ``tol`` where it has one; RuntimeWarnings are silenced."""
    fn = entry.function
    params = _parameters(fn)
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
        out = fn(g, **kw)
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
