"""Graph specs of the benchmark harness (``python -m benchmarks run SUITE --graphs SPEC,...``):
parse a spec, build the :class:`onyx_rapids.Graph` it names once, with its statistics.

Specs (:data:`KINDS` holds the syntax and a one-line description of each):

* ``rmat:SCALE[:EDGE_FACTOR]``: Graph500 R-MAT (``onyx_rapids.datasets.rmat``, a=0.57,
  b=c=0.19, permuted, seed 0), 2**SCALE ids, EDGE_FACTOR (default 16) x 2**SCALE raw edges:
  the generator and parameters of benchmarks/traversal.py, ablation.py and peers.py.
* ``er:N:AVG_DEGREE``: Erdos-Renyi G(n, m), seeded: m distinct edges drawn uniformly among the
  pairs of distinct vertices of ``0..N-1`` (no self-loops, no duplicates), m chosen so that the
  stored edges per vertex are AVG_DEGREE (``m = round(N * AVG_DEGREE)`` directed edges;
  undirected: ``round(N * AVG_DEGREE / 2)`` pairs, each stored both ways).
* ``grid:SIDE``: SIDE x SIDE 4-neighbour grid (``datasets.grid_2d``): traversal.py's road
  family.
* ``delaunay:N``: N points uniform in the unit square (seeded), joined by the edges of their
  Delaunay triangulation (``scipy.spatial.Delaunay``): undirected, planar, road-like (degree
  ~6, diameter ~sqrt(N)); the weight of an edge is its Euclidean length.
* ``ratings:USERS:ITEMS:RATINGS``: the bipartite ratings graph of benchmarks/ablation.py
  (:func:`benchmarks.ablation.bipartite_ratings`: users uniform, item popularity skewed,
  ratings 1..5 as the weight ``rating``; user ids ``0..USERS-1``, items after them); ALS runs
  on it.
* ``parquet:PATH[:SRC:DST[:WEIGHT]]``: a user's Parquet edge list (a file or a directory of
  them) through ``onyx_rapids.Graph.from_parquet``, columns SRC and DST (default ``src``,
  ``dst``) and the optional weight column.  The path may itself contain ``:`` (the longest
  existing prefix is the path).

Two build modes (``build(spec, undirected=...)``), so that each suite measures the graph its
own benchmark measures:

* ``undirected=False`` (the traversal suite; benchmarks/traversal.py's graphs): rmat and er
  stay DIRECTED; rmat drops self-loops and duplicate edges as traversal.py does (cuGraph's Graph
  assumes a simple graph); grid, delaunay and ratings are undirected.  Every graph is weighted
  (sssp): rmat and er float32 uniform in [0.1, 1) (traversal.py's stream), grid
  ``grid_2d(weighted=True)``, delaunay the edge lengths, ratings the ratings, parquet the WEIGHT
  column when given (unweighted otherwise: sssp then counts 1.0 per edge).  Vertices are the
  ids with an edge (cuGraph's graphs have no isolated vertices, so ours have none either).
* ``undirected=True`` (the spmm and ablation suites; benchmarks/ablation.py's graphs): rmat,
  grid and ratings are built by :func:`benchmarks.ablation.build_family` itself (raw R-MAT
  edges symmetrized, every one of the 2**SCALE ids a vertex; unweighted rmat and grid); er is
  the undirected G(n, m) on all N ids and delaunay its triangulation, both unweighted; parquet
  is read with ``directed=False`` (each row stored both ways), weighted when WEIGHT is given.

Everything is generated with NumPy on the host and handed to the library as a pandas edge
frame (``Graph.from_edgelist``), as the other benchmarks do; construction is timed apart
(``build_ms``) and never part of a measurement.

Statistics (:func:`graph_stats`, one dict per graph): ``spec``, ``kind``, ``params`` (the
parsed spec fields), ``generator`` (a description), ``seed``, ``n``, ``m`` (stored edges: both
directions of an undirected edge), ``directed``, ``weighted``, ``max_out_degree``,
``max_in_degree``, ``max_degree`` (out-degree for an undirected graph, out + in for a directed
one), ``mean_degree`` (m / n), ``isolated_vertices``, ``self_loops``, ``index_dtype``,
``input_edges`` (edges handed to the library), ``generate_s`` and ``build_ms``.

Bad specs raise ValueError naming the spec and what is wrong (:func:`parse_spec`).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from onyx_rapids import datasets, device
from onyx_rapids.graph import Graph

#: kind -> (syntax, one-line description); the order of ``python -m benchmarks list``
KINDS = {
    "rmat": ("rmat:SCALE[:EDGE_FACTOR]",
             "Graph500 R-MAT (a=0.57, b=c=0.19, permuted, seed 0), 2**SCALE ids, EDGE_FACTOR "
             "(default 16) edges per id; directed and simple for traversal, symmetrized for "
             "spmm/ablation"),
    "er": ("er:N:AVG_DEGREE",
           "Erdos-Renyi G(n, m), seeded, no self-loops or duplicates, m so that stored edges per "
           "vertex = AVG_DEGREE; directed for traversal, undirected for spmm/ablation"),
    "grid": ("grid:SIDE",
             "SIDE x SIDE 4-neighbour grid, undirected (traversal.py's road family)"),
    "delaunay": ("delaunay:N",
                 "Delaunay triangulation of N seeded random points in the unit square: "
                 "undirected, planar, road-like; weights = edge lengths (needs scipy)"),
    "ratings": ("ratings:USERS:ITEMS:RATINGS",
                "bipartite user-item ratings graph of benchmarks/ablation.py (skewed item "
                "popularity, ratings 1..5 as weights), undirected; ALS runs on it"),
    "parquet": ("parquet:PATH[:SRC:DST[:WEIGHT]]",
                "your Parquet edge list via Graph.from_parquet (columns default src, dst; "
                "optional weight column)"),
}

SEED = 0  # every generator's seed (the other benchmarks' default --seed)
WEIGHT_LOW = 0.1
MAX_RMAT_SCALE = 31


@dataclass(frozen=True)
class GraphSpec:
    """A parsed spec: its text, kind and fields (``params``)."""

    text: str
    kind: str
    params: dict = field(default_factory=dict, hash=False, compare=False)

    @property
    def slug(self) -> str:
        """A file-name-safe label (``rmat-22-16``, ``parquet-edges``)."""
        if self.kind == "parquet":
            stem = os.path.splitext(os.path.basename(os.path.normpath(self.params["path"])))[0]
            parts = ["parquet", stem or "edges"]
        else:
            parts = [self.kind] + [_number_text(v) for v in self.params.values()]
        text = "-".join(str(p) for p in parts).lower()
        return "".join(c if c.isalnum() or c in "-." else "-" for c in text).strip("-")


def _number_text(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


# ------------------------------------------------------------------------------ parsing


def _bad(text: str, what: str) -> ValueError:
    return ValueError(f"graph spec {text!r}: {what}")


def _int(text: str, value: str, name: str, minimum: int, maximum: int | None = None) -> int:
    try:
        v = int(value.strip())
    except ValueError:
        raise _bad(text, f"{name} must be an integer, got {value!r}") from None
    if v < minimum or (maximum is not None and v > maximum):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise _bad(text, f"{name} must be {bound}, got {v}")
    return v


def _parquet_params(text: str, body: str) -> dict:
    if not body:
        raise _bad(text, "expected parquet:PATH[:SRC:DST[:WEIGHT]] (no PATH given)")
    parts = body.split(":")
    # the path may contain ':' itself: take the longest existing prefix that leaves 0, 2 or 3
    # column fields
    chosen = None
    for fields in (0, 2, 3):
        if fields < len(parts) and os.path.exists(":".join(parts[:len(parts) - fields])):
            chosen = fields
            break
    if chosen is None:
        fields = len(parts) - 1
        if fields not in (0, 2, 3):
            raise _bad(text, "expected parquet:PATH[:SRC:DST[:WEIGHT]] (give both SRC and DST, "
                             "or neither)")
        path = parts[0]
        raise _bad(text, f"no such Parquet file or directory: {path!r}")
    path = ":".join(parts[:len(parts) - chosen])
    columns = parts[len(parts) - chosen:]
    src, dst = (columns[0], columns[1]) if chosen else ("src", "dst")
    weight = columns[2] if chosen == 3 else None
    for name, value in (("SRC", src), ("DST", dst), ("WEIGHT", weight)):
        if value is not None and not value.strip():
            raise _bad(text, f"empty {name} column name")
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        schema = (ds.dataset(path, format="parquet").schema if os.path.isdir(path)
                  else pq.read_schema(path))
    except (pa.ArrowException, OSError) as e:
        raise _bad(text, f"{path!r} is not a readable Parquet file ({e})") from None
    names = list(schema.names)
    for role, col in (("SRC", src), ("DST", dst), ("WEIGHT", weight)):
        if col is not None and col not in names:
            raise _bad(text, f"{path!r} has no {role} column {col!r} (its columns: "
                             f"{', '.join(names)})")
    return {"path": path, "src": src, "dst": dst, "weight": weight}


def parse_spec(text) -> GraphSpec:
    """A :class:`GraphSpec` from ``KIND:FIELD[:FIELD...]`` (see the module docstring); a
    ValueError naming the spec and what is wrong otherwise.  A parquet spec's file must exist
    and have the named columns (its schema is read; the data are not).

    >>> parse_spec("rmat:10").params
    {'scale': 10, 'edge_factor': 16}
    >>> parse_spec("er:100:2.5").params
    {'n': 100, 'avg_degree': 2.5}
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"graph spec {text!r}: empty; expected one of "
                         + ", ".join(s for s, _ in KINDS.values()))
    text = text.strip()
    kind, _, body = text.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise _bad(text, f"unknown kind {kind!r}; choose from {', '.join(KINDS)}")
    syntax = KINDS[kind][0]
    if kind == "parquet":
        return GraphSpec(text, kind, _parquet_params(text, body))
    fields = body.split(":") if body else []
    if kind == "rmat":
        if len(fields) not in (1, 2):
            raise _bad(text, f"expected {syntax}")
        scale = _int(text, fields[0], "SCALE", 1, MAX_RMAT_SCALE)
        ef = _int(text, fields[1], "EDGE_FACTOR", 1) if len(fields) == 2 else 16
        params = {"scale": scale, "edge_factor": ef}
    elif kind == "er":
        if len(fields) != 2:
            raise _bad(text, f"expected {syntax}")
        n = _int(text, fields[0], "N", 2)
        try:
            d = float(fields[1])
        except ValueError:
            raise _bad(text, f"AVG_DEGREE must be a number, got {fields[1]!r}") from None
        if not (d > 0 and math.isfinite(d)):
            raise _bad(text, f"AVG_DEGREE must be positive, got {fields[1]!r}")
        if d > n - 1:
            raise _bad(text, f"AVG_DEGREE {d:g} exceeds N - 1 = {n - 1} (a simple graph on N "
                             "vertices has at most N - 1 neighbours per vertex)")
        params = {"n": n, "avg_degree": int(d) if d == int(d) else d}
    elif kind == "grid":
        if len(fields) != 1:
            raise _bad(text, f"expected {syntax}")
        params = {"side": _int(text, fields[0], "SIDE", 2, 46340)}
    elif kind == "delaunay":
        if len(fields) != 1:
            raise _bad(text, f"expected {syntax}")
        params = {"n": _int(text, fields[0], "N", 3)}
    else:  # ratings
        if len(fields) != 3:
            raise _bad(text, f"expected {syntax}")
        users = _int(text, fields[0], "USERS", 1)
        items = _int(text, fields[1], "ITEMS", 1)
        ratings = _int(text, fields[2], "RATINGS", 1)
        if ratings > users * items:
            raise _bad(text, f"RATINGS {ratings} exceeds USERS x ITEMS = {users * items} "
                             "(distinct user-item pairs)")
        params = {"users": users, "items": items, "ratings": ratings}
    return GraphSpec(text, kind, params)


def parse_specs(text: str) -> list[GraphSpec]:
    """Comma-separated specs (duplicates dropped, order kept)."""
    specs, seen = [], set()
    for part in str(text).split(","):
        if not part.strip():
            continue
        spec = parse_spec(part)
        if spec.text not in seen:
            seen.add(spec.text)
            specs.append(spec)
    if not specs:
        raise ValueError(f"--graphs {text!r}: no graph spec given")
    return specs


# ------------------------------------------------------------------------------ generators


def uniform_weights(m: int, seed: int = SEED) -> np.ndarray:
    """float32 weights uniform in [0.1, 1): benchmarks/traversal.py's weight stream."""
    from .traversal import _uniform_weights

    return _uniform_weights(m, seed)


def rmat_simple_edges(scale: int, edge_factor: int, seed: int = SEED):
    """(src, dst, raw edge count, self-loops dropped): the R-MAT edges of traversal.py's rmat
    family, self-loops and duplicates dropped, sorted by (src, dst)."""
    df = datasets.rmat(scale, edge_factor, seed=seed)
    src, dst = df["src"].to_numpy(), df["dst"].to_numpy()
    raw = len(df)
    del df
    keep = src != dst
    loops = int(raw - keep.sum())
    span = np.int64(1) << np.int64(scale)
    keys = np.unique(src[keep] * span + dst[keep])
    return keys // span, keys % span, raw, loops


def er_edges(n: int, m: int, *, directed: bool, seed: int = SEED):
    """``m`` distinct pairs of distinct vertices of ``0..n-1``, uniform (G(n, m)): ordered
    pairs when ``directed``, else unordered ones as (low, high).  Drawn with replacement,
    duplicates dropped and topped up from further draws (the first m distinct draws: a uniform
    m-subset), returned in draw order."""
    pairs = n * (n - 1) if directed else n * (n - 1) // 2
    if m > pairs:
        raise ValueError(f"m={m} exceeds the {pairs} possible pairs")
    rng = np.random.default_rng([seed, 7])
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < m:
        draw = int((m - len(keys)) * 1.1) + 16
        u = rng.integers(0, n, size=draw, dtype=np.int64)
        v = rng.integers(0, n - 1, size=draw, dtype=np.int64)
        v += v >= u  # uniform over the other n - 1 vertices
        if not directed:
            u, v = np.minimum(u, v), np.maximum(u, v)
        keys = np.concatenate([keys, u * n + v])
        _, first = np.unique(keys, return_index=True)
        keys = keys[np.sort(first)]
    keys = keys[:m]
    return keys // n, keys % n


def delaunay_edges(n: int, seed: int = SEED):
    """(src, dst, length): the undirected edges (src < dst) of the Delaunay triangulation of
    ``n`` points uniform in the unit square, with their Euclidean lengths (float32)."""
    try:
        from scipy.spatial import Delaunay
    except Exception as e:
        raise ValueError(f"delaunay graphs need scipy ({type(e).__name__}: {e})") from None
    points = np.random.default_rng([seed, 11]).random((n, 2))
    tri = Delaunay(points).simplices.astype(np.int64)
    a = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 0]])
    b = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 2]])
    low, high = np.minimum(a, b), np.maximum(a, b)
    keys = np.unique(low * n + high)
    src, dst = keys // n, keys % n
    length = np.sqrt(((points[src] - points[dst]) ** 2).sum(axis=1)).astype(np.float32)
    return src, dst, length


# ------------------------------------------------------------------------------ building


def graph_stats(g, spec: GraphSpec, extra: dict) -> dict:
    """The statistics of a built graph (see the module docstring)."""
    summary = g.summary()
    out_degree = device.to_host(g.out_degree).astype(np.int64)
    in_degree = device.to_host(g.in_degree).astype(np.int64)
    degree = out_degree + in_degree if g.directed else out_degree
    both = out_degree + in_degree
    return {"spec": spec.text, "kind": spec.kind, "params": dict(spec.params), **extra,
            "n": int(g.n), "m": int(g.m), "directed": bool(g.directed),
            "weighted": g.edge_weights is not None,
            "max_out_degree": int(summary["max_out_degree"]),
            "max_in_degree": int(summary["max_in_degree"]),
            "max_degree": int(degree.max()) if g.n else 0,
            "mean_degree": float(g.m / g.n) if g.n else 0.0,
            "isolated_vertices": int((both == 0).sum()),
            "self_loops": int(summary["self_loops"]), "index_dtype": summary["index_dtype"]}


class _Quiet:
    """The ``bench`` that benchmarks/ablation.py's build_family logs to, when none is given."""

    def log(self, msg: str) -> None:
        pass


def _from_frame(columns: dict, *, weight, directed, vertices=None):
    return Graph.from_edgelist(pd.DataFrame(columns), "src", "dst", weight=weight,
                               directed=directed, vertices=vertices)


def build(spec, *, undirected: bool = False, bench=None):
    """(graph, statistics) of ``spec`` (a :class:`GraphSpec` or its text) in the given mode
    (see the module docstring); ``bench`` (a foundation.Bench) receives progress lines."""
    from .foundation import _timed

    if not isinstance(spec, GraphSpec):
        spec = parse_spec(spec)
    log = bench.log if bench is not None else (lambda msg: None)
    p, kind = spec.params, spec.kind
    log(f"graph {spec.text}: generating ({'undirected' if undirected else 'directed'} mode)")
    t = time.perf_counter()
    extra = {"seed": SEED, "mode": "undirected" if undirected else "directed"}

    if undirected and kind in ("rmat", "grid", "ratings"):  # ablation.py's graphs, as built there
        import argparse

        from .ablation import build_family

        ns = argparse.Namespace(scale=p.get("scale", 1), edge_factor=p.get("edge_factor", 1),
                                grid_side=p.get("side", 1), users=p.get("users", 1),
                                items=p.get("items", 1), ratings=p.get("ratings", 1), seed=SEED)
        g, fam_stats, _ = build_family(bench or _Quiet(), ns, kind)
        extra.update(generator=fam_stats["generator"] + " (benchmarks/ablation.py)",
                     input_edges=fam_stats["input_edges"], generate_s=fam_stats["generate_s"],
                     build_ms=fam_stats["build_ms"])
        return g, graph_stats(g, spec, extra)

    weight, directed, vertices = "weight", True, None
    if kind == "rmat":  # directed mode (undirected mode: ablation's build_family above)
        src, dst, raw, loops = rmat_simple_edges(p["scale"], p["edge_factor"])
        columns = {"src": src, "dst": dst, "weight": uniform_weights(len(src))}
        extra.update(generator="rmat (Graph500: a=0.57, b=0.19, c=0.19, permuted); self-loops "
                               "and duplicate edges dropped; directed (benchmarks/traversal.py)",
                     raw_edges=raw, self_loops_dropped=loops,
                     duplicates_dropped=raw - loops - len(src))
    elif kind == "er":
        n, d = p["n"], float(p["avg_degree"])
        directed = not undirected
        m = max(1, round(n * d)) if directed else max(1, round(n * d / 2))
        src, dst = er_edges(n, m, directed=directed)
        columns = {"src": src, "dst": dst}
        if directed:
            columns["weight"] = uniform_weights(m)
        else:  # every id a vertex, as ablation.py's graphs
            weight, vertices = None, np.arange(n, dtype=np.int64)
        extra.update(generator=f"Erdos-Renyi G(n, m), {'directed' if directed else 'undirected'}"
                               ", no self-loops or duplicates", edges_drawn=m)
    elif kind == "grid":  # directed mode: traversal.py's road family
        side = p["side"]
        df = datasets.grid_2d(side, side, weighted=True, seed=SEED)
        columns = {c: df[c].to_numpy() for c in df.columns}
        directed = False
        extra.update(generator="grid_2d (4-neighbour, road-like), undirected, weights uniform "
                               "[0.1, 1) (benchmarks/traversal.py's road family)",
                     diameter_hops=2 * (side - 1))
    elif kind == "delaunay":
        src, dst, length = delaunay_edges(p["n"])
        columns = {"src": src, "dst": dst}
        if undirected:
            weight = None
        else:
            columns["weight"] = length
        directed = False
        extra.update(generator="Delaunay triangulation of uniform random points in the unit "
                               "square (scipy.spatial.Delaunay), undirected"
                               + ("" if undirected else ", weights = Euclidean lengths"))
    elif kind == "ratings":  # directed mode (undirected mode: ablation's build_family above)
        from .ablation import bipartite_ratings

        df = bipartite_ratings(p["users"], p["items"], p["ratings"], seed=SEED)
        columns = {c: df[c].to_numpy() for c in df.columns}
        weight, directed = "rating", False
        extra.update(generator="bipartite_ratings of benchmarks/ablation.py (users uniform, item "
                               "popularity ~ u**2, ratings 1..5), undirected")
    else:  # parquet
        directed = not undirected
        gen_s = time.perf_counter() - t
        try:
            g, build_ms = _timed(lambda: Graph.from_parquet(
                p["path"], source=p["src"], destination=p["dst"], weight=p["weight"],
                directed=directed))
        except (OSError, ValueError, TypeError) as e:
            raise _bad(spec.text, f"{type(e).__name__}: {e}") from e
        loops = int(g.summary()["self_loops"])
        extra.update(generator=f"Parquet edge list {p['path']} (Graph.from_parquet, "
                               f"{'directed' if directed else 'directed=False'})",
                     input_edges=g.m if directed else (g.m + loops) // 2, generate_s=gen_s,
                     build_ms=build_ms)
        log(f"graph {spec.text}: n={g.n:,} m={g.m:,} in {build_ms / 1e3:.2f} s")
        return g, graph_stats(g, spec, extra)

    gen_s = time.perf_counter() - t
    edges = len(columns["src"])
    g, build_ms = _timed(lambda: _from_frame(columns, weight=weight, directed=directed,
                                             vertices=vertices))
    del columns
    extra.update(input_edges=edges, generate_s=gen_s, build_ms=build_ms)
    log(f"graph {spec.text}: n={g.n:,} m={g.m:,} ({'directed' if g.directed else 'undirected'})"
        f", built in {build_ms / 1e3:.2f} s")
    return g, graph_stats(g, spec, extra)
