"""Suite ``networkx``: the functions the ``onyx`` NetworkX backend implements, called through
NetworkX's own dispatch as a NetworkX user calls them, on ``networkx.Graph`` objects.

Graphs (undirected ``nx.Graph``, float ``weight`` attribute on every edge): a social-like family,
R-MAT (``rmat:SCALE:EDGE_FACTOR``, directed-mode edges of :mod:`benchmarks.graphs`, each pair
once) and a road-like family, the 4-neighbour grid with uniform random weights in [0.1, 1)
(``grid:SIDE``); ``--sizes 1e4,1e5,1e6,1e7`` picks the specs whose graphs have about that many
edges (:func:`specs_for_sizes`; the real n and m are in the results).  Converting the edge list
to ``nx.Graph`` is not measured.

Per graph, the conversion (algorithm ``from_networkx``): ``onyx_rapids.nx.from_networkx(G)``
against graphblas-algorithms' ``ga.Graph.from_networkx(G)``.  Per function (:data:`FUNCTIONS`),
from the vertex of largest degree where it takes a source, with NetworkX's defaults otherwise:

* case ``end to end``: ``nx.f(G, backend="onyx")`` on a ``G`` whose conversion cache
  (``G.__networkx_cache__``) is emptied before every call, so each call converts; against
  NetworkX itself (``backend="networkx"``) and ``backend="graphblas"`` the same way;
* case ``converted graph``: ``nx.f(H)`` on the backend graph converted once above, against
  NetworkX (the same measurement as in ``end to end``: NetworkX converts nothing) and
  graphblas-algorithms on its converted graph.

Generators (``bfs_edges``, ``connected_components``) are consumed inside the timed call.  Every
result is checked against NetworkX's in the same run (:func:`check`: PageRank within 1e-3 in L1,
Dijkstra distances to float32 rounding of the path, the rest exact; ``bfs_edges`` as a BFS tree
whose depths are NetworkX's distances).  Above ``--nx-max-edges`` NetworkX is not run (its
cells read "not run"; nothing is extrapolated) and graphblas-algorithms' result is the
reference where it has the function; a result with no reference is marked unchecked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from onyx_rapids import device

from .. import graphs
from ..common import compare, error_text, free_memory, timed

FUNCTIONS = ("pagerank", "bfs_edges", "single_source_shortest_path_length",
             "single_source_dijkstra_path_length", "connected_components", "core_number")
SOURCED = {"bfs_edges", "single_source_shortest_path_length",
           "single_source_dijkstra_path_length"}
GENERATORS = {"bfs_edges", "connected_components"}
PAGERANK_L1 = 1e-3
DIJKSTRA_RTOL = 1e-5
FAMILIES = ("social", "road")
EDGE_FACTOR = 16


def algorithms():
    return FUNCTIONS


# ------------------------------------------------------------------------------ graphs


def specs_for_sizes(sizes) -> str:
    """The graph specs of about ``m`` undirected edges for each size: R-MAT of scale
    round(log2(m / 16)) (edge factor 16) and the grid of side round(sqrt(m / 2)).

    >>> specs_for_sizes([1e4, 1e6])
    'rmat:9:16,grid:71,rmat:16:16,grid:707'
    """
    out = []
    for m in sizes:
        m = float(m)
        if not math.isfinite(m) or m < 64:
            raise ValueError(f"--sizes: each size is an edge count >= 64, got {m:g}")
        out += [f"rmat:{max(2, round(math.log2(m / EDGE_FACTOR)))}:{EDGE_FACTOR}",
                f"grid:{max(2, round(math.sqrt(m / 2)))}"]
    return ",".join(out)


def parse_sizes(text: str) -> list[float]:
    """``"1e4,1e5"`` -> [10000.0, 100000.0]; ValueError naming the bad part."""
    try:
        sizes = [float(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--sizes {text!r}: expected comma-separated edge counts such as "
                         "1e4,1e5") from None
    if not sizes:
        raise ValueError(f"--sizes {text!r}: no size given")
    return sizes


def nx_graph(spec):
    """(``nx.Graph`` of ``spec`` with a float ``weight`` on every edge, facts)."""
    import networkx as nx

    if not isinstance(spec, graphs.GraphSpec):
        spec = graphs.parse_spec(spec)
    if spec.kind not in ("rmat", "grid", "road", "er"):
        raise ValueError(f"graph spec {spec.text!r}: suite networkx takes rmat, er, grid or "
                         f"road graphs")
    cols, _, facts = graphs.edge_frame(spec, undirected=False)
    src, dst = cols["src"].tolist(), cols["dst"].tolist()
    weight = cols["weight"].astype(np.float64).tolist()
    G = nx.Graph()
    G.add_weighted_edges_from(zip(src, dst, weight))
    family = "social" if spec.kind in ("rmat", "er") else "road"
    return G, {**facts, "family": family, "input_edges": len(src)}


def prepare(spec, *, undirected=True, log=None):
    """(``nx.Graph``, statistics) for the harness (the build is timed, not a measurement)."""
    log = log or (lambda msg: None)
    log(f"graph {spec.text}: building the networkx.Graph")
    (G, facts), ms = timed(lambda: nx_graph(spec))
    degree = max((d for _, d in G.degree()), default=0)
    log(f"graph {spec.text}: n={G.number_of_nodes():,} m={G.number_of_edges():,} built in "
        f"{ms / 1e3:.2f} s")
    return G, {"spec": spec.text, "kind": spec.kind, "params": dict(spec.params), **facts,
               "n": G.number_of_nodes(), "m": G.number_of_edges(), "directed": False,
               "weighted": True, "max_degree": int(degree), "build_ms": ms}


def hub(G):
    """The node of largest degree (the smallest such label)."""
    return max(G.degree(), key=lambda nd: (nd[1], -nd[0]))[0]


# ------------------------------------------------------------------------------ checks


def _array(values: dict, index: dict, fill):
    out = np.full(len(index), fill, dtype=np.float64)
    for node, value in values.items():
        out[index[node]] = value
    return out


def _missing_or_extra(got: dict, ref: dict, against: str, metric: str):
    extra, missing = len(got.keys() - ref.keys()), len(ref.keys() - got.keys())
    if extra or missing:
        return {"against": against, "metric": metric, "value": extra + missing,
                "ok": False, "error": f"{missing} nodes missing, {extra} not in the reference"}
    return None


def _labels(components, index):
    out = np.full(len(index), -1, dtype=np.int64)
    for i, comp in enumerate(components):
        for node in comp:
            out[index[node]] = i
    return out


def _tree_violations(edges, depth: dict, source) -> int:
    """Edges of ``bfs_edges`` that are not a BFS tree with these depths (every reached node
    once, from a node already reached one level up), plus nodes of ``depth`` it misses."""
    seen, bad = {source}, 0
    for u, v in edges:
        if u not in seen or v in seen or depth.get(v) != depth.get(u, -2) + 1:
            bad += 1
        seen.add(v)
    return bad + len(depth.keys() - seen)


def check(name: str, got, ref, G, *, against: str, source=None) -> dict:
    """``got`` (a result of ``name``) against ``ref`` (NetworkX's, or another backend's): a
    check record as :func:`benchmarks.common.compare` makes."""
    index = {node: i for i, node in enumerate(G)}
    if name == "bfs_edges":
        depth = {source: 0}
        for u, v in ref:
            depth[v] = depth[u] + 1
        value = _tree_violations(got, depth, source)
        return {"against": against, "metric": "BFS tree violations", "value": value,
                "ok": value == 0}
    if name == "connected_components":
        a, b = _labels(got, index), _labels(ref, index)
        if (a < 0).any():
            return {"against": against, "metric": "partition", "ok": False,
                    "value": int((a < 0).sum()), "error": "nodes in no component"}
        return compare("partition", device.asarray(a), device.asarray(b), against=against)
    bad = _missing_or_extra(got, ref, against, "keys")
    if bad:
        return bad
    a, b = (device.asarray(_array(d, index, 0.0)) for d in (got, ref))  # same keys
    if name == "pagerank":
        return compare("l1", a, b, against=against, tol=PAGERANK_L1)
    if name == "single_source_dijkstra_path_length":
        low = min((w for _, _, w in G.edges(data="weight", default=1.0)), default=1.0)
        return compare("distance", a, b, against=against, tol=DIJKSTRA_RTOL, min_weight=low)
    return compare("exact", a, b, against=against)


# ------------------------------------------------------------------------------ backends


def _installed() -> set:
    """The backend names NetworkX lists (its ``networkx.backends`` entry points)."""
    try:
        from networkx.utils.backends import backends
    except ImportError:
        return set()
    return set(backends)


def _functions(name: str) -> frozenset | None:
    """The functions backend ``name``'s ``backend_info`` lists (None when it has none)."""
    from importlib.metadata import entry_points

    info = next((e.load()() for e in entry_points(group="networkx.backend_info")
                 if e.name == name), None)
    return frozenset(info.get("functions", ())) if info else None


@dataclass
class Backend:
    """A NetworkX backend as the suite uses it: its dispatch ``name``, ``convert(G)``, a
    label, the functions it implements (None: all of the suite's) and, when it cannot run,
    ``why`` (its rows are skipped with that reason)."""

    name: str
    label: str
    convert: object = None
    functions: frozenset | None = None
    why: str | None = None

    def implements(self, function: str) -> bool:
        return self.functions is None or function in self.functions


def onyx_backend() -> Backend:
    """``onyx_rapids.nx`` (backend ``onyx``), converting with ``from_networkx``."""
    import onyx_rapids

    out = Backend("onyx", f"onyx_rapids {onyx_rapids.__version__} (backend='onyx')")
    try:
        from onyx_rapids import nx as onyx_nx
    except Exception as e:
        out.why = f"onyx_rapids.nx does not import ({error_text(e)})"
        return out
    if "onyx" not in _installed():
        out.why = "NetworkX does not list the backend 'onyx' (pip install -e . registers it)"
    out.functions = _functions("onyx")
    out.convert = lambda G: onyx_nx.from_networkx(G, weight="weight")
    return out


def graphblas_backend() -> Backend:
    """graphblas-algorithms (backend ``graphblas``), converting with
    ``ga.Graph.from_networkx``; the functions its ``backend_info`` lists."""
    out = Backend("graphblas", "graphblas-algorithms")
    try:
        import graphblas_algorithms as ga
        from importlib.metadata import version
    except Exception as e:
        out.why = f"graphblas-algorithms not installed ({error_text(e)})"
        return out
    out.label = f"graphblas-algorithms {version('graphblas-algorithms')}"
    if "graphblas" not in _installed():
        out.why = "NetworkX does not list the backend 'graphblas'"
    out.functions = _functions("graphblas")
    out.convert = lambda G: ga.Graph.from_networkx(G, weight="weight")
    return out


def _call(name, G, source, **kw):
    """``nx.<name>(G, ...)`` as a user writes it; a generator consumed into a list."""
    import networkx as nx

    fn = getattr(nx, name)
    out = fn(G, source, **kw) if name in SOURCED else fn(G, **kw)
    return list(out) if name in GENERATORS else out


def _fresh(name, G, source, backend):
    """One end-to-end call on ``G`` with its conversion cache emptied first."""
    cache = getattr(G, "__networkx_cache__", None)
    if cache is not None:
        cache.clear()
    return _call(name, G, source, backend=backend)


# ------------------------------------------------------------------------------ the suite


def _backends(run) -> dict:
    """{"onyx": .., "graphblas": ..} of the run (loaded once), skips recorded."""
    if getattr(run, "nx_backends", None) is None:
        run.nx_backends = {"onyx": onyx_backend(), "graphblas": graphblas_backend()}
        for who, b in run.nx_backends.items():
            if b.why:
                run.skip(who, b.why)
    return run.nx_backends


def _role(who):
    return "ours" if who == "onyx" else "peer"


def _convert(run, graph, G, who, b: Backend):
    row = run.row(graph, "from_networkx", "conversion", who, who, _role(who), label=b.label)
    if b.why:
        row["status"] = f"skipped: {b.why}"
        return None
    return run.timed(row, lambda: b.convert(G), what=f"{who} from_networkx")


def _networkx_rows(run, graph, name, G, source, limit):
    """NetworkX's own call (timed once, shown in both cases); its result or None."""
    rows = [run.row(graph, name, case, "networkx", "networkx", "peer", label="NetworkX")
            for case in ("end to end", "converted graph")]
    if limit is not None and G.number_of_edges() > limit:
        for r in rows:
            r["status"] = f"not run: {G.number_of_edges():,} edges > --nx-max-edges {limit:,}"
        return None
    out = run.timed(rows[0], lambda: _call(name, G, source, backend="networkx"),
                    what="networkx")
    rows[1].update({k: rows[0][k] for k in ("status", "check", "ms", "first_call_ms",
                                            "times_ms", "repeats")})
    return out


def _backend_rows(run, graph, name, G, H, source, who, b: Backend) -> list:
    """[(end-to-end row, its result), (converted-graph row, its result)] of one backend."""
    rows = [run.row(graph, name, case, who, who, _role(who), label=b.label)
            for case in ("end to end", "converted graph")]
    why = (b.why or (None if b.implements(name) else f"{b.label} does not implement it")
           or (None if H is not None else "its conversion failed"))
    if why:
        status = f"{'n/a' if b.why is None and H is not None else 'skipped'}: {why}"
        for r in rows:
            r["status"] = status
        return [(r, None) for r in rows]
    got = run.timed(rows[0], lambda: _fresh(name, G, source, b.name), what=f"{who} end to end")
    got_h = run.timed(rows[1], lambda: _call(name, H, source), what=f"{who} on its graph")
    return [(rows[0], got), (rows[1], got_h)]


def _check_rows(run, pairs, name, ref, against, G, source, graph) -> None:
    for row, got in pairs:
        if got is None or row["status"] != "ok":
            continue
        if ref is None:
            row["check"] = "unchecked: no reference (NetworkX not run, no other backend)"
        elif got is ref:
            row["check"] = "reference"
        else:
            try:
                run.check(row, check(name, got, ref, G, against=against, source=source),
                          f"{name} ({row['case']}, {row['variant']}) on {graph}")
            except Exception as e:
                run.error(row, e, "the check")


def measure(run, spec, G, stats) -> None:
    graph, backends = spec.text, _backends(run)
    limit = getattr(run, "nx_max_edges", None)
    source = hub(G) if G.number_of_nodes() else None
    stats["source"] = source
    run.log(f"{graph}: conversions")
    converted = {who: _convert(run, graph, G, who, b) for who, b in backends.items()}
    for name in run.algorithms:
        run.log(f"{name} on {graph}: networkx, graphblas, onyx")
        ref, against = _networkx_rows(run, graph, name, G, source, limit), "NetworkX"
        results = {who: _backend_rows(run, graph, name, G, converted[who], source, who, b)
                   for who, b in backends.items() if who != "onyx"}
        if ref is None and results["graphblas"][0][1] is not None:
            ref, against = results["graphblas"][0][1], backends["graphblas"].label
        results["onyx"] = _backend_rows(run, graph, name, G, converted["onyx"], source, "onyx",
                                        backends["onyx"])
        for pairs in results.values():
            _check_rows(run, pairs, name, ref, against, G, source, graph)
        del ref, results
    del converted
    free_memory()
