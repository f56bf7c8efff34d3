"""One-command benchmark harness (issue 5): our algorithms against the peers a user would pick,
on any graph, into one Parquet / JSON / Markdown report.

    python -m benchmarks run SUITE [--graphs SPEC,...] [--algorithms A,...] [--repeat N]
                                   [--out DIR] [--tag T] [--quick]
    python -m benchmarks list          # suites and graph specs, with one line each

Suites (:data:`SUITES`; ``--algorithms`` picks a subset of a suite's algorithms):

* ``traversal``: bfs, sssp, wcc (``weakly_connected_components``), core_number, k_core,
  pagerank and personalized_pagerank at the library's defaults (pagerank / personalized
  pagerank with alpha 0.85, tol 1e-6, max_iter 100, as cuGraph's reference timings), against
  cuGraph (``cugraph``, RAPIDS' Python API over ``pylibcugraph``) when it imports.  Graphs are
  built in directed mode (benchmarks/graphs.py: rmat and er directed and simple, all weighted).
  bfs, sssp and personalized pagerank start from the vertex of largest out-degree (smallest id
  among ties), the same for every call and for cuGraph; k_core takes k = ceil(max core / 2)
  (max core from the reference core numbers, or ours).  cuGraph runs on a ``cugraph.Graph`` of
  the same edges (benchmarks/traversal.py's ``cugraph_graph``: directed for bfs, sssp and the
  PageRanks, weighted for sssp, transposed for the PageRanks, undirected distinct pairs for wcc,
  core_number and k_core; an undirected graph gives each pair once), built once per kind and
  timed apart.  Default graphs ``rmat:22:16,grid:2048`` (traversal.py's), quick
  ``rmat:5:4,grid:4``; ms is per call.
* ``spmm``: feature_propagation (APPNP), personalized_pagerank and label_propagation (P = 1,
  unweighted, 1% of the vertices labelled) with k features / sources / classes per iteration,
  against CuPy/cuSPARSE SpMM and PyTorch (Geometric) (PyG's APPNP for feature_propagation,
  ``torch.sparse.mm`` otherwise or without PyG) doing the same propagation:
  benchmarks/peers.py's ``Problem``, ``CuSparsePeer`` / ``TorchPeer`` and ``measure`` (under
  the simulator scipy.sparse stands in for cuSPARSE, and says so in its label).  ks 1, 32, 128
  (quick 1, 2), 10 iterations (quick 2); ms is the marginal time of one iteration,
  ``(N-iteration call - 1-iteration call) / (N - 1)``.  label_propagation at k = 1 is trivial
  (every probability is 1, ours stops after one iteration): its one row, ours, reads ``n/a:
  ...``.  Graphs in undirected mode (ablation.py's); default ``rmat:22:16``, quick
  ``rmat:4:4,grid:4``.
* ``ablation``: every algorithm of benchmarks/ablation.py (pagerank, personalized_pagerank,
  label_propagation, feature_propagation, als, belief_propagation, multi_manifold_ranking,
  multimodal_learning) in our 8 variants FA/NFA x CD/NCD x folded/unfolded, through
  ablation.py's ``make_inputs`` and ``measure`` (k 4, PageRank k 1; 10 iterations at tol 1e-12,
  quick 2); as in ablation.py, ALS runs on ratings graphs only and ratings graphs run ALS only
  (the other combinations have one row reading ``n/a: ...``).  "Ours" is the
  reference variant FA/NCD; the other variants take the place of peers.  ms per iteration.
  Default graphs ``rmat:22:16,grid:4096,ratings:1048576:65536:33554432`` (ablation.py's),
  quick ``rmat:3:2`` (half a minute under the simulator, whose feature-aware kernels are slow;
  a ratings graph for ALS, e.g. ``ratings:6:4:12``, adds minutes there).

Graph specs (benchmarks/graphs.py; ``python -m benchmarks list``): ``rmat:SCALE[:EDGE_FACTOR]``,
``er:N:AVG_DEGREE``, ``grid:SIDE``, ``delaunay:N``, ``ratings:USERS:ITEMS:RATINGS``,
``parquet:PATH[:SRC:DST[:WEIGHT]]``.  A bad spec stops the command before anything runs (exit
status 2, the message names the spec).  Each graph is built once per run and every
measurement of it reuses that object.

Measuring: for ours and every peer, one warm-up call (``first_call_ms``: compilation
included), then ``--repeat`` timed calls (default 5 traversal, 3 spmm and ablation; quick 1),
each between device synchronizations (benchmarks/foundation.py's ``_timed``:
``time.perf_counter``); ``ms`` is the median.  A call includes the function's set-up and its
result frame; graph construction (ours and the peers') is outside.

Peers: each is used only when it imports; otherwise its row reads ``skipped: <reason>`` (e.g.
``skipped: cugraph not installed (ModuleNotFoundError: ...)``), the reason is printed when the
run starts and kept in the JSON's ``skipped_peers``.  A peer that raises is a failure.

Checks (of the warm-up results; a failure prints a ``FAILED`` line at once and again at the end,
is recorded in the row's ``check`` column and the JSON's ``failures``, and makes the exit status
1; every file is still written):

* traversal: ours against the peer's result on the same graph, source and run (``check_against``
  names it).  Without a peer, against a CPU oracle when the graph has at most
  :data:`ORACLE_MAX_EDGES` (2e5) stored edges: scipy.sparse.csgraph (bfs: unweighted shortest
  paths; sssp: Dijkstra on the parallel-edge minimum; wcc: weak components), networkx
  (``core_number``; k_core from it) and a float64 power iteration (the PageRanks, to an L1 change
  of 1e-12).  Larger graphs without a peer get the certificate of benchmarks/traversal.py's
  ``certify`` (bfs, sssp, wcc, core_number, pagerank; computed over the edges); what has none of
  these reads ``unchecked: ...``.  Criteria: bfs distances equal (every unreached value, int32
  or int64 max, counts as one); sssp the same vertices reached and distances within rtol 1e-4
  (plus atol 1e-6); wcc the same partition; core numbers equal; k_core the same members;
  pagerank and personalized pagerank L1 difference <= 1e-3 after scaling each to sum 1.
* spmm: ours against each peer (N iterations, same inputs): relative L2 <= 1e-3 (peers.py's
  ``compare``).  Every peer row carries the same check.
* ablation: each variant's result is sane (finite; PageRank, PPR columns, LP / BP rows sum to 1)
  and agrees with FA/NCD (ablation.py's ``AGREE`` metric and tolerance).

Output under ``--out`` (default benchmarks/results), stem
``run-<suite>_<device-slug>_<date>[_<tag>][_quick]`` (the ``run-`` prefix keeps a run of the
``traversal`` or ``ablation`` suite from overwriting the files of ``benchmarks/traversal.py`` or
``benchmarks/ablation.py`` of the same day):

* ``.parquet``: one row per (suite, graph, algorithm, variant, implementation), columns:

  - ``suite``, ``graph`` (the spec), ``graph_kind``, ``algorithm``;
  - ``case``: what the compared rows share (traversal ``default``; spmm ``k=K``; ablation
    ``k=K``): ours, the peers and the speedups are grouped by (graph, algorithm, case);
  - ``variant``: traversal ``default`` (each library's defaults); spmm ``k=K``; ablation
    ``FA/NCD``, ``NFA/CD/fold``, ...;
  - ``implementation``: ``ours``, ``cugraph``, ``cusparse``, ``pyg``; ``role``: ``ours`` (the
    group's reference: ours, or FA/NCD in ablation), ``peer`` (another library) or
    ``variant`` (another variant of ours); ``label``: the implementation with its version;
  - ``k`` (features / sources; None for traversal), ``unit`` (``ms/call`` or ``ms/iteration``),
    ``ms`` (median of the timed calls, in that unit), ``first_call_ms`` (the warm-up call),
    ``repeats`` (timed calls made), ``times_ms`` (each timed call, ms per call; traversal and
    ablation: spmm's ms comes from peers.py's two medians and has none);
  - ``status``: ``ok``, ``error: ...``, ``skipped: <reason>`` or ``n/a: ...``;
  - ``check``: ``ok``, ``FAILED``, ``error`` (the result could not be checked: the call or the
    check raised), ``unchecked: <why>`` or ``-`` (nothing ran); ``check_against`` (the peer,
    oracle or reference variant), ``check_detail`` (metric and value);
  - ``speedup_vs_ours``: ours ms / this row's ms (above 1: this row is faster than ours; 1 on
    ours' row); ``ratio_vs_ours``: this row's ms / ours ms (the Markdown's ratio: above 1 ours
    is faster); ``best_alternative``: True on the fastest passing non-ours row of its group;
  - ``params``: JSON of the row's parameters (source, k, tol, iterations, ...);
  - graph statistics ``graph_n``, ``graph_m`` (stored edges), ``graph_directed``,
    ``graph_weighted``, ``graph_max_degree``, ``graph_params`` (JSON of the spec's fields);
  - run metadata ``device``, ``backend``, ``driver`` (CUDA driver version; None under the
    simulator), ``version_<lib>`` for onyx_rapids, numba, numba_cuda, cupy, cudf, cugraph,
    pylibcugraph, torch, torch_geometric, scipy, networkx (``not installed`` when it does not
    import), ``date``, ``timestamp`` (UTC), ``git_commit``, ``tag``, ``quick``.

* ``.json``: ``suite``, ``argv``, ``date``, ``timestamp``, ``metadata`` (device facts, versions,
  git), ``settings``, ``graphs`` (spec -> statistics of benchmarks/graphs.py), ``rows`` (the
  Parquet's rows without the graph and metadata columns, ``params`` as an object),
  ``details`` (the suite's own records: our traversal rows with their checks,
  peers.py / ablation.py measurement rows), ``skipped_peers``, ``plots``, ``plot_note``,
  ``failures``, ``ok``, ``elapsed_s``.
* ``.md``: the graphs, then ours next to the best peer (ablation: the best other variant) per
  graph, algorithm and case with the ratio peer ms / ours ms and ``**we lose**`` where it is
  below 1, a "Where we lose" list, every row, skipped peers, plots and failures.  Also printed.
* ``_<graph-slug>.png``: per graph, bars of ours and the best peer per algorithm (log scale;
  matplotlib).  Without matplotlib no plot is drawn and ``no plot: matplotlib not installed``
  is printed and recorded (``plot_note``, the Markdown).

Exit status: 0 when every check passed, 1 when one failed (or a call / a graph raised), 2 for
bad arguments.  Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import statistics
import sys
import time
import traceback
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import onyx_rapids as onyx
from onyx_rapids import device

from . import ablation, peers, traversal
from .foundation import (VARIANTS, Bench, _fmt, _free_device_memory, _git, _plain, _timed,
                         output_stem, variant_name, write_report)
from .graphs import KINDS, parse_specs
from .graphs import build as build_graph

ORACLE_MAX_EDGES = 200_000
PAGERANK_ALPHA = traversal.PAGERANK_ALPHA
PAGERANK_TOL = 1e-6
PAGERANK_MAX_ITER = 100
SSSP_RTOL, SSSP_ATOL = 1e-4, 1e-6
CHECK_TOL = 1e-3  # spmm: relative L2 against each peer
VERSION_MODULES = ("onyx_rapids", "numba", "numba_cuda", "cupy", "cudf", "cugraph",
                   "pylibcugraph", "torch", "torch_geometric", "scipy", "networkx")
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Suite:
    name: str
    summary: str
    algorithms: tuple
    graphs: str
    quick_graphs: str
    repeat: int
    undirected: bool  # graph build mode (benchmarks/graphs.py)
    unit: str
    alternative: str  # what the Markdown compares ours with


SUITES = {
    "traversal": Suite(
        "traversal", "bfs, sssp, wcc, core_number, k_core, pagerank, personalized_pagerank at "
        "the defaults, ours vs cuGraph (ms per call)",
        ("bfs", "sssp", "wcc", "core_number", "k_core", "pagerank", "personalized_pagerank"),
        "rmat:22:16,grid:2048", "rmat:5:4,grid:4", 5, False, "ms/call", "best peer"),
    "spmm": Suite(
        "spmm", "feature_propagation, personalized_pagerank, label_propagation with k features "
        "per iteration, ours vs CuPy/cuSPARSE SpMM and PyTorch Geometric (ms per iteration)",
        peers.ALGORITHMS, "rmat:22:16", "rmat:4:4,grid:4", 3, True, "ms/iteration",
        "best peer"),
    "ablation": Suite(
        "ablation", "our FA/NFA x CD/NCD x fold variants of every ONYX algorithm, against the "
        "FA/NCD reference (ms per iteration)",
        ablation.ALGORITHMS, "rmat:22:16,grid:4096,ratings:1048576:65536:33554432",
        "rmat:3:2", 3, True, "ms/iteration", "best other variant"),
}
ALIASES = {"weakly_connected_components": "wcc", "core": "core_number", "ppr":
           "personalized_pagerank", "appnp": "feature_propagation"}
SPMM_KS = {False: (1, 32, 128), True: (1, 2)}
SPMM_ITERATIONS = {False: 10, True: 2}
ABLATION_K = 4
ABLATION_MAX_ITER = {False: 10, True: 2}
ABLATION_TOL = 1e-12

#: traversal: the onyx_rapids function, our result column, and the cuGraph graph it runs on
#: (as benchmarks/traversal.py's SPEC: a source?, the undirected view?, weighted?, transposed?)
TRAVERSAL = {
    **traversal.SPEC,
    "k_core": dict(function="k_core", column="vertex", source=False, undirected=True,
                   weighted=False, transposed=False),
    "pagerank": dict(function="pagerank", column="pagerank", source=False, undirected=False,
                     weighted=False, transposed=True),
    "personalized_pagerank": dict(function="personalized_pagerank", column="ppr_0",
                                  source=True, undirected=False, weighted=False,
                                  transposed=True),
}


# ------------------------------------------------------------------------------ metadata


def _version(module: str) -> str:
    """``module.__version__`` when it imports (the distribution's version if it has none),
    else "not installed"."""
    try:
        mod = importlib.import_module(module)
    except Exception:
        return NOT_INSTALLED
    v = getattr(mod, "__version__", None)
    if v is None:
        try:
            from importlib.metadata import version

            v = version(module.replace("_", "-"))
        except Exception:
            v = "?"
    return str(v)


def versions() -> dict:
    return {name: _version(name) for name in VERSION_MODULES}


def _metadata_columns(report: dict) -> dict:
    meta = report["metadata"]
    dev = meta["device"]
    cols = {"device": dev.get("device"), "backend": dev.get("backend"),
            "driver": dev.get("driver")}
    cols.update({f"version_{name}": v for name, v in meta["versions"].items()})
    cols.update(date=report["date"], timestamp=report["timestamp"],
                git_commit=meta["git"].get("commit"), tag=report["settings"]["tag"],
                quick=report["settings"]["quick"])
    return cols


# ------------------------------------------------------------------------------ runs and rows


class Run:
    """One harness run: the suite, settings, progress log / failures and the rows so far."""

    def __init__(self, suite: Suite, args, bench: Bench):
        self.suite, self.args, self.bench = suite, args, bench
        self.repeat = args.repeat
        self.quick = args.quick
        self.algorithms = args.algorithms
        self.rows: list[dict] = []
        self.details: list[dict] = []
        self.skipped: dict[str, str] = {}
        self.peers = None  # spmm: peers.make_peers' factories
        self.cugraph, self.cugraph_status = None, None

    def row(self, graph: str, algorithm: str, case: str, variant: str, implementation: str,
            role: str, **values) -> dict:
        row = {"suite": self.suite.name, "graph": graph, "algorithm": algorithm, "case": case,
               "variant": variant, "implementation": implementation, "role": role,
               "label": None, "k": None, "unit": self.suite.unit, "ms": None,
               "first_call_ms": None, "repeats": 0, "times_ms": None, "status": "ok",
               "check": "-", "check_against": None, "check_detail": None, "params": None}
        row.update(values)
        self.rows.append(row)
        return row

    def skip_peer(self, name: str, reason: str) -> None:
        if name not in self.skipped:
            self.skipped[name] = reason
            print(f"peer {name} skipped: {reason}", flush=True)


def _time_calls(fn, repeat: int):
    """(warm-up result, warm-up ms, [ms of each of ``repeat`` timed calls])."""
    out, first = _timed(fn)
    times = []
    for _ in range(repeat):
        res, ms = _timed(fn)
        del res
        times.append(ms)
    return out, first, times


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"


def _host(values):
    """A column (pandas / cuDF series, CuPy / NumPy array) as a NumPy array."""
    if hasattr(values, "to_numpy"):
        try:
            return np.asarray(values.to_numpy())
        except Exception:
            pass
    if hasattr(values, "values_host"):
        return np.asarray(values.values_host)
    return np.asarray(device.to_host(values))


# ------------------------------------------------------------------------------ traversal


class OracleUnavailable(Exception):
    """No CPU oracle for this algorithm / graph (the message says why)."""


class TraversalGraph:
    """One graph of the traversal suite: the graph, its source, k_core's k, host edges for the
    oracles and (lazily) the traversal.Family that cuGraph's graphs are built from."""

    def __init__(self, spec, g, stats):
        self.spec, self.g, self.stats = spec, g, stats
        if g.n == 0:
            raise ValueError(f"graph {spec.text} has no vertices")
        out_degree = device.to_host(g.out_degree).astype(np.int64)
        self.source = int(device.to_host(g.vertices)[int(np.argmax(out_degree))])
        self.core_max = None
        self.k = None
        self._host = None
        self._family = None

    def host_edges(self):
        """(src, dst, weight): internal ids (int64) and float64 weights (1.0 unweighted)."""
        if self._host is None:
            g = self.g
            src = device.to_host(g.edge_sources).astype(np.int64)
            dst = device.to_host(g.out_indices).astype(np.int64)
            w = (device.to_host(g.edge_weights[:, 0]).astype(np.float64)
                 if g.edge_weights is not None else np.ones(g.m))
            self._host = (src, dst, w)
        return self._host

    def family(self):
        """The traversal.Family of this graph for traversal.cugraph_graph: its edge list in
        original ids (directed: every stored edge; undirected: each pair once), weights (1.0
        unweighted) and its distinct undirected pairs."""
        if self._family is None:
            xp, g = device.xp, self.g
            s = g.edge_sources.astype(np.int64)
            d = g.out_indices.astype(np.int64)
            w = (g.edge_weights[:, 0] if g.edge_weights is not None
                 else xp.ones(g.m, dtype=np.float32))
            if not g.directed:  # both directions stored: keep each pair once
                keep = s < d
                s, d, w = s[keep], d[keep], w[keep]
            edges = {"src": g.vertices[s], "dst": g.vertices[d],
                     "weight": xp.ascontiguousarray(w), "id_space": None}
            und = g.simple_undirected()
            us, ud = und.edge_sources.astype(np.int64), und.out_indices.astype(np.int64)
            keep = us < ud
            fam = traversal.Family(self.spec.text, g, {"cugraph_build_ms": {}}, edges, None)
            fam._pairs = (und.vertices[us[keep]], und.vertices[ud[keep]])
            self._family = fam
        return self._family

    def k_core_k(self) -> int:
        """k of the k_core measurement: ceil(max core / 2), at least 1."""
        if self.core_max is None:  # core_number was not measured (or failed): ask ours
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    frame = onyx.core_number(self.g)
                self.core_max = int(_host(frame["core_number"]).max())
            except Exception:  # core_number's own row reports it; k_core still runs
                self.core_max = 1
        return max(1, math.ceil(self.core_max / 2))


def ours_call(algorithm: str, tg: TraversalGraph):
    """One call of our ``algorithm`` on the graph (the function looked up now: tests patch)."""
    fn = getattr(onyx, TRAVERSAL[algorithm]["function"])
    g = tg.g
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": the check says
        if algorithm in ("bfs", "sssp"):
            return fn(g, source=tg.source)
        if algorithm == "k_core":
            return fn(g, tg.k)
        if algorithm == "pagerank":
            return fn(g, alpha=PAGERANK_ALPHA, tol=PAGERANK_TOL, max_iter=PAGERANK_MAX_ITER)
        if algorithm == "personalized_pagerank":
            return fn(g, [tg.source], alpha=PAGERANK_ALPHA, tol=PAGERANK_TOL,
                      max_iter=PAGERANK_MAX_ITER)
        return fn(g)


def ours_values(algorithm: str, frame, tg: TraversalGraph):
    """Our result in internal vertex order (a backend array); k_core: the sorted member ids."""
    if algorithm == "k_core":
        return np.unique(_host(frame["vertex"]).astype(np.int64))
    return traversal.result_values(algorithm, frame, tg.g, TRAVERSAL[algorithm]["column"])


def cugraph_call(cg, algorithm: str, G, tg: TraversalGraph):
    if algorithm in traversal.SPEC:
        ns = argparse.Namespace(pagerank_tol=PAGERANK_TOL, pagerank_max_iter=PAGERANK_MAX_ITER)
        return traversal.cugraph_call(cg, algorithm, G, ns, tg.source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if algorithm == "k_core":
            return cg.k_core(G, k=tg.k)
        if algorithm == "personalized_pagerank":
            xp = device.xp
            pers = traversal.edge_frame({"vertex": xp.asarray([tg.source], dtype=np.int64),
                                         "values": xp.asarray([1.0], dtype=np.float32)})
            return cg.pagerank(G, alpha=PAGERANK_ALPHA, personalization=pers, tol=PAGERANK_TOL,
                               max_iter=PAGERANK_MAX_ITER)
    raise ValueError(f"unknown algorithm {algorithm!r}")


def cugraph_values(algorithm: str, result, tg: TraversalGraph):
    """cuGraph's result in our internal vertex order; k_core: the sorted member ids (the
    vertices of the returned k-core subgraph)."""
    if algorithm == "k_core":
        if hasattr(result, "nodes"):  # a cugraph.Graph
            ids = _host(result.nodes())
        else:  # an edge frame
            cols = list(result.columns)[:2]
            ids = np.concatenate([_host(result[c]) for c in cols])
        return np.unique(ids.astype(np.int64))
    name = "pagerank" if algorithm == "personalized_pagerank" else algorithm
    return traversal.cugraph_values(name, result, tg.g)


def cpu_oracle(algorithm: str, tg: TraversalGraph):
    """(reference values, description) from scipy / networkx / a float64 power iteration on
    the host; OracleUnavailable when the graph is too large or a library is missing."""
    g = tg.g
    if g.m > ORACLE_MAX_EDGES:
        raise OracleUnavailable(f"no peer, and {g.m:,} edges are too many for the CPU oracle "
                                f"(<= {ORACLE_MAX_EDGES:,})")
    try:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components, dijkstra
    except Exception as e:
        raise OracleUnavailable(f"no peer, and scipy {NOT_INSTALLED} for the CPU oracle "
                                f"({type(e).__name__})") from None
    n = g.n
    src, dst, w = tg.host_edges()
    s = int(g.to_internal(tg.source))
    if algorithm == "bfs":
        a = csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
        d = dijkstra(a, directed=True, indices=s, unweighted=True)
        return (np.where(np.isfinite(d), d, traversal.UNREACHED_HOPS).astype(np.int64),
                "CPU oracle (scipy.sparse.csgraph, unweighted)")
    if algorithm == "sssp":
        keep = src != dst
        ss, dd, ww = src[keep], dst[keep], w[keep]
        order = np.lexsort((ww, dd, ss))
        ss, dd, ww = ss[order], dd[order], ww[order]
        first = np.ones(len(ss), dtype=bool)
        first[1:] = (ss[1:] != ss[:-1]) | (dd[1:] != dd[:-1])  # lightest of parallel edges
        a = csr_matrix((ww[first], (ss[first], dd[first])), shape=(n, n))
        return dijkstra(a, directed=True, indices=s), "CPU oracle (scipy.sparse.csgraph Dijkstra)"
    if algorithm == "wcc":
        a = csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
        _, labels = connected_components(a, directed=True, connection="weak")
        return labels.astype(np.int64), "CPU oracle (scipy.sparse.csgraph weak components)"
    if algorithm in ("core_number", "k_core"):
        try:
            import networkx as nx
        except Exception as e:
            raise OracleUnavailable(f"no peer, and networkx {NOT_INSTALLED} for the CPU oracle "
                                    f"({type(e).__name__})") from None
        gx = nx.Graph()
        gx.add_nodes_from(range(n))
        keep = src != dst
        gx.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist()))
        core = nx.core_number(gx)
        core = np.array([core[i] for i in range(n)], dtype=np.int64)
        if algorithm == "core_number":
            return core, "CPU oracle (networkx.core_number)"
        ids = device.to_host(g.vertices).astype(np.int64)
        return np.unique(ids[core >= tg.k]), "CPU oracle (networkx.core_number >= k)"
    if algorithm in ("pagerank", "personalized_pagerank"):
        outdeg = np.bincount(src, minlength=n).astype(np.float64)
        inv = np.where(outdeg > 0, 1.0 / np.maximum(outdeg, 1.0), 0.0)
        p = csr_matrix((inv[src], (dst, src)), shape=(n, n))  # parallel edges add up
        if algorithm == "pagerank":
            t = np.full(n, 1.0 / n)
        else:
            t = np.zeros(n)
            t[s] = 1.0
        dangling = outdeg == 0
        x = t.copy()
        for _ in range(100_000):
            nxt = PAGERANK_ALPHA * (p @ x + x[dangling].sum() * t) + (1.0 - PAGERANK_ALPHA) * t
            change = float(np.abs(nxt - x).sum())
            x = nxt
            if change < 1e-12:
                break
        return x, "CPU oracle (float64 power iteration, scipy.sparse)"
    raise OracleUnavailable(f"no CPU oracle for {algorithm}")


def compare(algorithm: str, ours, ref, against: str) -> dict:
    """ours against a reference of the same vertex order (see the module docstring)."""
    xp = device.xp
    if algorithm == "k_core":
        a, b = np.asarray(ours, dtype=np.int64), np.asarray(ref, dtype=np.int64)
        only_ours = int(np.setdiff1d(a, b).size)
        only_ref = int(np.setdiff1d(b, a).size)
        return {"against": against, "metric": "members differ", "value": only_ours + only_ref,
                "members": int(a.size), "reference_members": int(b.size),
                "ok": only_ours == only_ref == 0}
    if int(ours.shape[0]) != int(ref.shape[0]):
        return {"against": against, "metric": "length", "value": int(ref.shape[0]),
                "ok": False, "error": f"{int(ours.shape[0])} values, reference "
                                      f"{int(ref.shape[0])}"}
    if algorithm == "sssp":
        a, b = xp.asarray(ours).astype(np.float64), xp.asarray(ref).astype(np.float64)
        ra = xp.isfinite(a) & (a < traversal.UNREACHED_FLOAT)
        rb = xp.isfinite(b) & (b < traversal.UNREACHED_FLOAT)
        both = ra & rb
        a, b = xp.where(both, a, 0.0), xp.where(both, b, 0.0)
        diff, mag = xp.abs(a - b), xp.abs(b)
        over = int((both & (diff > SSSP_RTOL * mag + SSSP_ATOL)).sum())
        rel = float((diff / xp.maximum(mag, 1e-30))[both].max()) if bool(both.any()) else 0.0
        reach = int((ra != rb).sum())
        return {"against": against, "metric": "max relative error", "value": rel,
                "reach_mismatches": reach, "over_tolerance": over, "rtol": SSSP_RTOL,
                "ok": reach == 0 and over == 0}
    if algorithm == "wcc":
        return traversal.agreement("wcc", ours, ref, against, partition=True)
    if algorithm == "personalized_pagerank":
        return traversal.agreement("pagerank", ours, ref, against)
    return traversal.agreement(algorithm, ours, ref, against)


def _detail(check: dict) -> str:
    """'metric value (other facts)' of a check record."""
    def show(v):
        return _fmt(v, ".3g") if isinstance(v, float) else str(v)

    text = check.get("metric", check.get("kind", ""))
    if check.get("value") is not None:
        text += f" {show(check['value'])}"
    extra = [f"{k} {show(v)}" for k, v in check.items()
             if k not in ("ok", "kind", "against", "metric", "value", "reference")]
    if extra:
        text += " (" + ", ".join(extra) + ")"
    return text.strip()


CERTIFIED = ("bfs", "sssp", "wcc", "core_number", "pagerank")  # traversal.certify knows these


def traversal_section(run: Run, tg: TraversalGraph, algorithm: str) -> None:
    bench, spec = run.bench, TRAVERSAL[algorithm]
    graph = tg.spec.text
    label = f"{algorithm} on {graph}"
    params = {}
    if spec["source"]:
        params["source"] = tg.source
    if algorithm == "k_core":
        tg.k = tg.k_core_k()
        params["k"] = tg.k
    if algorithm in ("pagerank", "personalized_pagerank"):
        params.update(alpha=PAGERANK_ALPHA, tol=PAGERANK_TOL, max_iter=PAGERANK_MAX_ITER)
    detail = {"graph": graph, "algorithm": algorithm, "params": params}
    run.details.append(detail)
    ours = run.row(graph, algorithm, "default", "default", "ours", "ours",
                   label=f"onyx_rapids {onyx.__version__}", params=params)
    bench.log(f"{label}: ours")
    ours_vals = None
    try:
        frame, first, times = _time_calls(lambda: ours_call(algorithm, tg), run.repeat)
        ours.update(first_call_ms=first, times_ms=times, repeats=len(times),
                    ms=statistics.median(times) if times else None)
        ours_vals = ours_values(algorithm, frame, tg)
        del frame
    except Exception as e:
        ours.update(status=f"error: {_error_text(e)}", check="error")
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: ours raised {_error_text(e)}")

    peer = run.row(graph, algorithm, "default", "default", "cugraph", "peer",
                   params=params)
    peer_vals = None
    if run.cugraph is None:
        peer.update(status=f"skipped: {run.cugraph_status}", label="cugraph")
    else:
        peer["label"] = run.cugraph_status
        try:
            fam = tg.family()
            kind = traversal.cugraph_kind(tg, algorithm, TRAVERSAL)
            G = traversal.cugraph_graph(bench, run.cugraph, fam, kind)
            bench.log(f"{label}: {run.cugraph_status}")
            result, first, times = _time_calls(
                lambda: cugraph_call(run.cugraph, algorithm, G, tg), run.repeat)
            peer.update(first_call_ms=first, times_ms=times, repeats=len(times),
                        ms=statistics.median(times) if times else None)
            peer_vals = cugraph_values(algorithm, result, tg)
            del result
            detail["cugraph_build_ms"] = dict(fam.stats["cugraph_build_ms"])
        except Exception as e:
            peer.update(status=f"error: {_error_text(e)}", check="error")
            bench.log(traceback.format_exc())
            bench.fail(f"{label}: cuGraph raised {_error_text(e)}")

    # the reference: the peer, else the CPU oracle, else a certificate
    check, against, why = None, None, None
    if ours_vals is not None:
        try:
            if peer_vals is not None:
                against = run.cugraph_status
                check = compare(algorithm, ours_vals, peer_vals, against)
            else:
                try:
                    ref, against = cpu_oracle(algorithm, tg)
                    if algorithm != "k_core":
                        ref = device.asarray(ref)
                    check = compare(algorithm, ours_vals, ref, against)
                    del ref
                except OracleUnavailable as e:
                    why = str(e)
                    if algorithm in CERTIFIED and (algorithm != "sssp"
                                                   or tg.g.edge_weights is not None):
                        against = "certificate (benchmarks/traversal.py certify)"
                        check = traversal.certify(algorithm, types.SimpleNamespace(g=tg.g),
                                                  ours_vals, tg.source)
        except Exception as e:
            ours.update(check="error")
            detail["check_error"] = _error_text(e)
            bench.log(traceback.format_exc())
            bench.fail(f"{label}: checking the result raised {_error_text(e)}")
            check = None
    if check is not None:
        text = _detail(check)
        status = "ok" if check["ok"] else "FAILED"
        ours.update(check=status, check_against=against, check_detail=text)
        if peer_vals is not None:
            peer.update(check=status, check_against="ours", check_detail=text)
        detail["check"] = check
        if not check["ok"]:
            bench.fail(f"{label}: ours differs from {against}: {text}")
        bench.log(f"{label}: ours {_fmt(ours['ms'])} ms, cuGraph {_fmt(peer['ms'])} ms, "
                  f"check {status} against {against} ({text})")
    elif ours_vals is not None and ours["check"] != "error":
        ours.update(check=f"unchecked: {why or 'no reference'}")
    if algorithm == "core_number" and ours_vals is not None:  # k_core's k
        cores = peer_vals if peer_vals is not None else ours_vals
        tg.core_max = int(device.to_host(cores).max())
    del ours_vals, peer_vals


def run_traversal_graph(run: Run, spec, g, stats) -> None:
    tg = TraversalGraph(spec, g, stats)
    for algorithm in run.algorithms:
        traversal_section(run, tg, algorithm)
    if tg._family is not None:
        stats["cugraph_build_ms"] = dict(tg._family.stats["cugraph_build_ms"])
    del tg
    _free_device_memory()


# ------------------------------------------------------------------------------ spmm


def prepare_spmm(run: Run) -> None:
    run.spmm_args = argparse.Namespace(iterations=SPMM_ITERATIONS[run.quick], repeat=run.repeat,
                                       check_tol=CHECK_TOL, no_pyg=False)
    run.peers = peers.make_peers(run.spmm_args)  # prints "peer NAME skipped: REASON"
    for name, value in run.peers.items():
        if isinstance(value, str):
            run.skipped[name] = value


def run_spmm_graph(run: Run, spec, g, stats) -> None:
    ns = run.spmm_args
    for algorithm in run.algorithms:
        for k in SPMM_KS[run.quick]:
            raw = peers.measure(run.bench, ns, spec.text, g, stats, algorithm, k, run.peers, None)
            run.details.append(raw)
            case = f"k={k}"
            params = {"k": k, "iterations": ns.iterations}
            if "na" in raw:  # label_propagation at k = 1: one row saying why
                run.row(spec.text, algorithm, case, case, "ours", "ours", k=k, status=raw["na"],
                        label=f"onyx_rapids {onyx.__version__}", params=params)
                continue
            ours_cell = raw.get("ours", {})
            ours = run.row(spec.text, algorithm, case, case, "ours", "ours", k=k,
                           label=f"onyx_rapids {onyx.__version__}", repeats=ns.repeat,
                           params={**params, **{key: ours_cell.get(key) for key in (
                               "one_iter_ms", "full_ms", "ran_iterations")}})
            if "error" in ours_cell:
                ours.update(status=f"error: {ours_cell['error']}", check="error")
            else:
                ours.update(ms=ours_cell.get("ms_per_iter"),
                            first_call_ms=ours_cell.get("first_call_ms"))
            agreed, disagreed, compared = [], [], []
            for name, cell in raw.get("peers", {}).items():
                row = run.row(spec.text, algorithm, case, case, name, "peer", k=k,
                              label=cell.get("label") or name, params=dict(params))
                if "skipped" in cell:
                    row["status"] = f"skipped: {cell['skipped']}"
                    continue
                if "error" in cell:
                    row.update(status=f"error: {cell['error']}", check="error")
                    continue
                row.update(ms=cell.get("ms_per_iter"), first_call_ms=cell.get("first_call_ms"),
                           repeats=ns.repeat,
                           params={**params, "one_iter_ms": cell.get("one_iter_ms"),
                                   "full_ms": cell.get("full_ms")})
                c = cell.get("check")
                if c is None:
                    continue
                text = (f"relative L2 {c['rel_l2']:.3g} (tol {c['tol']:g}), max abs "
                        f"{c['max_abs']:.3g}")
                status = "ok" if c["ok"] else "FAILED"
                row.update(check=status, check_against="ours", check_detail=text)
                compared.append(row["label"])
                (agreed if c["ok"] else disagreed).append(f"{row['label']}: {text}")
            if "error" in ours_cell:
                continue
            ran = ours_cell.get("ran_iterations")
            if ran is not None and ran != ns.iterations:
                disagreed.append(f"ours ran {ran} iterations, not {ns.iterations}")
            if disagreed:
                ours.update(check="FAILED", check_detail="; ".join(disagreed + agreed))
            elif agreed:
                ours.update(check="ok", check_detail="; ".join(agreed))
            else:
                ours["check"] = "unchecked: no peer ran"
            ours["check_against"] = ", ".join(compared) or None


# ------------------------------------------------------------------------------ ablation


def prepare_ablation(run: Run) -> None:
    run.ablation_args = argparse.Namespace(tol=ABLATION_TOL, cd_tol=ABLATION_TOL,
                                           max_iter=ABLATION_MAX_ITER[run.quick],
                                           repeat=run.repeat)


def run_ablation_graph(run: Run, spec, g, stats) -> None:
    ns = run.ablation_args
    reference = variant_name(ablation.REFERENCE)
    is_ratings = spec.kind == "ratings"
    context = {}
    if is_ratings:  # users on side 0, items on side 1 (as ablation.build_family)
        context["sides"] = (device.to_host(g.vertices)
                            >= stats["params"]["users"]).astype(np.int8)
    for algorithm in run.algorithms:
        k = 1 if algorithm == "pagerank" else ABLATION_K
        case = f"k={k}"
        if (algorithm == "als") != is_ratings:
            why = ("n/a: als runs on ratings graphs only" if algorithm == "als" else
                   "n/a: ratings graphs run als only (as benchmarks/ablation.py)")
            run.row(spec.text, algorithm, case, reference, "ours", "ours", k=k, status=why,
                    label=f"onyx_rapids {onyx.__version__} {reference}")
            run.bench.log(f"{algorithm} on {spec.text}: {why}")
            continue
        label = f"{algorithm} k={k} on {spec.text}"
        try:
            inputs = ablation.make_inputs(algorithm, g, k, context)
        except Exception as e:
            run.bench.log(traceback.format_exc())
            run.bench.fail(f"{label}: inputs raised {_error_text(e)}")
            run.row(spec.text, algorithm, case, reference, "ours", "ours", k=k,
                    status=f"error: {_error_text(e)}", check="error")
            continue
        raw_rows = ablation.measure(run.bench, ns, spec.text, algorithm, g, inputs, k, VARIANTS)
        del inputs
        run.details.extend(raw_rows)
        for r in raw_rows:
            name = r["variant"]
            row = run.row(spec.text, algorithm, case, name, "ours",
                          "ours" if name == reference else "variant", k=k,
                          label=f"onyx_rapids {onyx.__version__} {name}",
                          params={"k": k, "max_iter": ns.max_iter, "tol": r.get("tol"),
                                  "feature_aware": r["feature_aware"],
                                  "change_driven": r["change_driven"], "fold": r["fold"],
                                  "direction": r.get("direction"),
                                  "iterations": r.get("iterations"),
                                  "median_call_ms": r.get("median_ms")})
            if r.get("skipped"):
                row["status"] = r["skipped"]
                continue
            if r.get("error"):
                row.update(status=f"error: {r['error']}", check="error")
                continue
            row.update(ms=r.get("ms_per_iter"), first_call_ms=r.get("first_call_ms"),
                       times_ms=r.get("times_ms"), repeats=len(r.get("times_ms") or []))
            sane, agree = r.get("check", {}), r.get("agreement", {})
            ok = sane.get("ok") is True and agree.get("ok") is True
            parts = []
            if not sane.get("ok"):
                parts.append(f"result check {sane}")
            if agree.get("metric"):
                parts.append(f"{agree['metric']} {_fmt(agree.get('value'), '.3g')} "
                             f"(tol {agree.get('tol')})")
            elif agree.get("error"):
                parts.append(agree["error"])
            row.update(check="ok" if ok else "FAILED", check_against=agree.get("against"),
                       check_detail="; ".join(parts) or None)
    _free_device_memory()


# ------------------------------------------------------------------------------ suite table

PREPARE = {"traversal": None, "spmm": prepare_spmm, "ablation": prepare_ablation}
PER_GRAPH = {"traversal": run_traversal_graph, "spmm": run_spmm_graph,
             "ablation": run_ablation_graph}


def prepare_traversal(run: Run) -> None:
    run.cugraph, run.cugraph_status = traversal.import_cugraph(named=True)
    if run.cugraph is None:
        run.skip_peer("cugraph", run.cugraph_status)


PREPARE["traversal"] = prepare_traversal


# ------------------------------------------------------------------------------ results


def _group_key(r: dict) -> tuple:
    return (r["graph"], r["algorithm"], r["case"])


def finish_rows(rows: list[dict]) -> None:
    """speedup_vs_ours, ratio_vs_ours and best_alternative of every row (see the docstring)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(_group_key(r), []).append(r)
    for group in groups.values():
        ours = next((r for r in group if r["role"] == "ours"), None)
        base = ours["ms"] if ours is not None and ours["status"] == "ok" else None
        for r in group:
            ok = base and r["ms"] and r["status"] == "ok"
            r["speedup_vs_ours"] = base / r["ms"] if ok else None
            r["ratio_vs_ours"] = r["ms"] / base if ok else None
            r["best_alternative"] = False
        alternatives = [r for r in group if r["role"] != "ours" and r["status"] == "ok"
                        and r["ms"] and r["check"] not in ("FAILED", "error")]
        if alternatives:
            min(alternatives, key=lambda r: r["ms"])["best_alternative"] = True


def comparison(rows: list[dict]) -> list[dict]:
    """One entry per (graph, algorithm, case): ours and the best alternative."""
    out, seen = [], {}
    for r in rows:
        key = _group_key(r)
        if key not in seen:
            seen[key] = {"graph": r["graph"], "algorithm": r["algorithm"], "case": r["case"],
                         "ours": None, "best": None, "alternatives": []}
            out.append(seen[key])
        entry = seen[key]
        if r["role"] == "ours":
            entry["ours"] = r
        else:
            entry["alternatives"].append(r)
            if r["best_alternative"]:
                entry["best"] = r
    return out


def _ms_text(ms) -> str:
    if ms is None:
        return "—"
    return f"{ms:.1f}" if ms >= 100 else f"{ms:.3f}" if ms >= 1 else f"{ms:.3g}"


def _short_status(r) -> str:
    """skipped / error / n/a, without the reason (the rows' table and the JSON have it)."""
    text = r["status"]
    for word in ("skipped", "error", "n/a"):
        if text.startswith(word):
            return word
    return text


def _ms_cell(r) -> str:
    if r is None:
        return "—"
    if r["status"] != "ok":
        return _short_status(r)
    return _ms_text(r["ms"])


def _alt_name(r) -> str:
    if r["implementation"] == "ours":
        return r["variant"]
    return r.get("label") or r["implementation"]


def markdown(report: dict) -> str:
    suite = SUITES[report["suite"]]
    meta, s = report["metadata"], report["settings"]
    dev, ver = meta["device"], meta["versions"]
    alt = suite.alternative
    lines = [
        f"# onyx_rapids benchmark harness: {report['suite']} ({dev.get('device')}, "
        f"{report['date']})", "",
        f"Backend {dev.get('backend')}; driver {dev.get('driver')}; "
        + ", ".join(f"{k} {v}" for k, v in ver.items()) + f"; git {meta['git'].get('commit')} "
        f"(dirty files: {meta['git'].get('dirty_files')}); `python -m benchmarks "
        f"{' '.join(report['argv'])}`", "",
        f"{suite.summary}.  Times in {suite.unit}: median of {s['repeat']} timed calls after a "
        f"warm-up, device synchronized.  ratio = {alt} ms / ours ms (above 1: ours is faster; "
        "below 1: **we lose**).", "",
    ]
    if dev.get("backend") != "gpu":
        lines += ["**No GPU: every kernel ran under the Numba CUDA simulator (and CPU stand-ins "
                  "replace GPU peers), so these times test the harness and mean nothing.**", ""]
    lines += [
        "## Graphs", "",
        "| graph | n | m (stored) | directed | weighted | max degree | generator |",
        "|---|---:|---:|---|---|---:|---|",
    ]
    for spec, st in report["graphs"].items():
        lines.append(f"| {spec} | {st['n']:,} | {st['m']:,} | {st['directed']} | "
                     f"{st['weighted']} | {st['max_degree']:,} | {st.get('generator', '')} |")
    lines += ["", f"## Ours against the {alt}", "",
              f"| graph | algorithm | case | ours {suite.unit} | {alt} | {alt} {suite.unit} | "
              f"ratio ({alt} / ours) | check | |",
              "|---|---|---|---:|---|---:|---:|---|---|"]
    losses, compared = [], 0
    for e in comparison(report["rows"]):
        ours, best = e["ours"], e["best"]
        ratio = best["ratio_vs_ours"] if best is not None else None
        if best is not None:
            name = _alt_name(best)
        elif e["alternatives"]:
            name = "; ".join(f"{_alt_name(r)} {_short_status(r)}" for r in e["alternatives"]
                             if r["status"] != "ok") or "none passed its check"
        else:
            name = "none"
        verdict = ""
        compared += ratio is not None
        if ratio is not None and ratio < 1:
            verdict = "**we lose**"
            losses.append(f"{e['algorithm']} ({e['case']}) on {e['graph']}: {name} "
                          f"{_ms_text(best['ms'])} against ours {_ms_text(ours['ms'])} "
                          f"{suite.unit} ({ratio:.3g}x)")
        check = ours["check"] if ours is not None else "—"
        lines.append(f"| {e['graph']} | {e['algorithm']} | {e['case']} | {_ms_cell(ours)} | "
                     f"{name} | {_ms_cell(best) if best else '—'} | "
                     f"{f'{ratio:.3g}x' if ratio is not None else '—'} | {check} | {verdict} |")
    lines += ["", "## Where we lose", ""]
    if losses:
        lines += [f"- {x}" for x in losses]
    elif compared:
        lines.append(f"Nowhere: ours is at least as fast as the {alt} wherever both ran.")
    else:
        lines.append(f"No comparison: no {alt} ran (see the skipped peers below).")
    lines += ["", "## Every row", "",
              f"| graph | algorithm | case | variant | implementation | {suite.unit} | "
              "first call ms | repeats | status | check | against | detail |",
              "|---|---|---|---|---|---:|---:|---:|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| {r['graph']} | {r['algorithm']} | {r['case']} | {r['variant']} | "
                     f"{r['label'] or r['implementation']} | {_ms_text(r['ms'])} | "
                     f"{_fmt(r['first_call_ms'], '.1f')} | {r['repeats']} | {r['status']} | "
                     f"{r['check']} | {r['check_against'] or ''} | {r['check_detail'] or ''} |")
    lines += ["", "Skipped peers: " + ("; ".join(f"{k}: {v}" for k, v in
                                                 report["skipped_peers"].items()) or "none")]
    if report["plots"]:
        lines += ["", "Plots: " + ", ".join(Path(p).name for p in report["plots"])]
    if report.get("plot_note"):
        lines += ["", report["plot_note"]]
    if report["failures"]:
        lines += ["", "## FAILED", ""] + [f"- {f}" for f in report["failures"]]
    else:
        lines += ["", "All checks passed."]
    return "\n".join(lines) + "\n"


def draw_plots(report: dict, out: Path, stem: str, slugs: dict) -> tuple[list[str], str | None]:
    """Per graph, ours and the best alternative per algorithm (log-scale bars): (paths, note);
    the note says why there is no plot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        return [], f"no plot: matplotlib not installed ({type(e).__name__}: {e})"
    suite = SUITES[report["suite"]]
    entries = comparison(report["rows"])
    paths = []
    for graph in report["graphs"]:
        mine = [e for e in entries if e["graph"] == graph
                and ((e["ours"] and e["ours"]["ms"]) or (e["best"] and e["best"]["ms"]))]
        if not mine:
            continue
        fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(mine) + 2), 4.5))
        x = np.arange(len(mine))
        nan = float("nan")
        ours_ms = [e["ours"]["ms"] if e["ours"] and e["ours"]["ms"] else nan for e in mine]
        best_ms = [e["best"]["ms"] if e["best"] else nan for e in mine]
        ax.bar(x - 0.2, ours_ms, 0.4, label="ours")
        ax.bar(x + 0.2, best_ms, 0.4, label=suite.alternative)
        floor = min(v for v in ours_ms + best_ms if v == v)
        for i, e in enumerate(mine):
            name = _alt_name(e["best"]) if e["best"] else "(none)"
            ax.text(x[i] + 0.2, best_ms[i] if e["best"] else floor, name[:28], rotation=90,
                    ha="center", va="bottom", fontsize=6)
        ax.set_xticks(x)
        ax.set_xticklabels([e["algorithm"] + ("" if e["case"] == "default" else f"\n{e['case']}")
                            for e in mine], rotation=30, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel(suite.unit)
        ax.set_title(f"{report['suite']} on {graph} ({report['metadata']['device'].get('device')})",
                     fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / f"{stem}_{slugs[graph]}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))
    return paths, None


def parquet_rows(report: dict) -> list[dict]:
    meta = _metadata_columns(report)
    out = []
    for r in report["rows"]:
        st = report["graphs"].get(r["graph"], {})
        row = dict(r)
        row["graph_kind"] = st.get("kind")
        row["params"] = json.dumps(r["params"], default=_plain) if r["params"] is not None \
            else None
        row.update(graph_n=st.get("n"), graph_m=st.get("m"), graph_directed=st.get("directed"),
                   graph_weighted=st.get("weighted"), graph_max_degree=st.get("max_degree"),
                   graph_params=json.dumps(st.get("params"), default=_plain))
        row.update(meta)
        out.append(row)
    return out


def write_parquet(rows: list[dict], path: Path) -> None:
    import pandas as pd

    df = pd.DataFrame(rows)
    for col in ("ms", "first_call_ms", "speedup_vs_ours", "ratio_vs_ours"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["k"] = pd.array(df["k"], dtype="Int64")
    df.to_parquet(path, index=False)


# ------------------------------------------------------------------------------ command line


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description="onyx_rapids benchmark harness: ours against the "
                                            "peers a user would pick (see "
                                            "benchmarks/harness.py).")
    sub = p.add_subparsers(dest="command", metavar="{run,list}")
    sub.required = True
    run = sub.add_parser("run", help="run a suite on graphs; write Parquet, JSON, Markdown and "
                                     "plots")
    run.add_argument("suite", choices=list(SUITES), help="the suite")
    run.add_argument("--graphs", help="comma-separated graph specs (python -m benchmarks list); "
                                      "default: the suite's graphs (--quick: tiny ones)")
    run.add_argument("--algorithms", help="comma-separated subset of the suite's algorithms "
                                          "(default all)")
    run.add_argument("--repeat", type=int, help="timed calls per measurement after the warm-up "
                                                "(default per suite: traversal 5, spmm and "
                                                "ablation 3; --quick 1)")
    run.add_argument("--out", default="benchmarks/results", help="output folder "
                                                                 "(default benchmarks/results)")
    run.add_argument("--tag", default="", help="appended to the output file names")
    run.add_argument("--quick", action="store_true",
                     help="tiny graphs and settings, seconds under the CUDA simulator (for "
                          "tests); explicit --graphs / --repeat still win")
    sub.add_parser("list", help="the suites and the graph specs, one line each")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    if args.command != "run":
        return args
    run_p = p._subparsers._group_actions[0].choices["run"]
    suite = SUITES[args.suite]
    if args.repeat is None:
        args.repeat = 1 if args.quick else suite.repeat
    if args.repeat < 1:
        run_p.error(f"--repeat must be >= 1, got {args.repeat}")
    if args.algorithms is None:
        args.algorithms = list(suite.algorithms)
    else:
        chosen = [ALIASES.get(a.strip(), a.strip()) for a in args.algorithms.split(",")
                  if a.strip()]
        unknown = [a for a in chosen if a not in suite.algorithms]
        if unknown or not chosen:
            run_p.error(f"--algorithms: unknown {unknown} for suite {suite.name}; choose from "
                        + ", ".join(suite.algorithms))
        args.algorithms = [a for a in suite.algorithms if a in chosen]
    text = args.graphs if args.graphs is not None else (
        suite.quick_graphs if args.quick else suite.graphs)
    try:
        args.graphs = parse_specs(text)
    except ValueError as e:
        run_p.error(str(e))
    return args


def list_text() -> str:
    lines = ["Suites (python -m benchmarks run SUITE [--graphs SPEC,...] [--algorithms A,...] "
             "[--repeat N] [--out DIR] [--tag T] [--quick]):"]
    width = max(len(n) for n in SUITES)
    for name, s in SUITES.items():
        lines.append(f"  {name:<{width}}  {s.summary}; graphs {s.graphs} (--quick "
                     f"{s.quick_graphs})")
    lines += ["", "Graph specs (--graphs, comma-separated):"]
    width = max(len(syntax) for syntax, _ in KINDS.values())
    for syntax, text in KINDS.values():
        lines.append(f"  {syntax:<{width}}  {text}")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.command == "list":
        print(list_text())
        return 0
    return run_suite(args, list(sys.argv[1:] if argv is None else argv))


def run_suite(args, argv) -> int:
    suite = SUITES[args.suite]
    bench = Bench()
    info = device.info()
    now = datetime.datetime.now(datetime.timezone.utc)
    run = Run(suite, args, bench)
    settings = {"suite": suite.name, "graphs": [s.text for s in args.graphs],
                "algorithms": list(args.algorithms), "repeat": args.repeat,
                "quick": bool(args.quick), "tag": args.tag, "out": str(args.out),
                "graph_mode": "undirected" if suite.undirected else "directed",
                "unit": suite.unit}
    if suite.name == "traversal":
        settings.update(pagerank_alpha=PAGERANK_ALPHA, pagerank_tol=PAGERANK_TOL,
                        pagerank_max_iter=PAGERANK_MAX_ITER, sssp_rtol=SSSP_RTOL,
                        sssp_atol=SSSP_ATOL, pagerank_l1_tol=traversal.PAGERANK_L1_TOL,
                        oracle_max_edges=ORACLE_MAX_EDGES)
    elif suite.name == "spmm":
        settings.update(ks=list(SPMM_KS[args.quick]), iterations=SPMM_ITERATIONS[args.quick],
                        check_tol=CHECK_TOL, appnp_alpha=peers.APPNP_ALPHA,
                        ppr_alpha=peers.PPR_ALPHA, lp_alpha=peers.LP_ALPHA)
    else:
        settings.update(k=ABLATION_K, max_iter=ABLATION_MAX_ITER[args.quick], tol=ABLATION_TOL,
                        variants=[variant_name(v) for v in VARIANTS],
                        reference=variant_name(ablation.REFERENCE),
                        agreement={a: {"metric": m, "tol": t}
                                   for a, (m, t) in ablation.AGREE.items()})
    report = {
        "suite": suite.name, "argv": argv, "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"),
        "metadata": {"device": info, "versions": versions(), "git": _git()},
        "settings": settings, "graphs": {}, "rows": run.rows, "details": run.details,
        "skipped_peers": run.skipped, "plots": [], "plot_note": None,
        "failures": bench.failures,
    }
    bench.log(f"suite {suite.name} on {info.get('device')} ({info.get('backend')}): graphs "
              f"{', '.join(settings['graphs'])}; algorithms {', '.join(args.algorithms)}; "
              f"repeat {args.repeat}")
    PREPARE[suite.name](run)
    slugs = {}
    for spec in args.graphs:
        slug = spec.slug
        while slug in slugs.values():
            slug += "-2"
        slugs[spec.text] = slug
        try:
            g, stats = build_graph(spec, undirected=suite.undirected, bench=bench)
        except Exception as e:
            bench.log(traceback.format_exc())
            bench.fail(f"graph {spec.text}: construction raised {_error_text(e)}")
            continue
        report["graphs"][spec.text] = stats
        try:
            PER_GRAPH[suite.name](run, spec, g, stats)
        except Exception as e:  # a bug of the harness itself: keep what was measured
            bench.log(traceback.format_exc())
            bench.fail(f"graph {spec.text}: the {suite.name} suite raised {_error_text(e)}")
        del g
        _free_device_memory()
    finish_rows(run.rows)

    out, stem = output_stem(args, f"run-{suite.name}", info, report["date"])
    try:
        report["plots"], report["plot_note"] = draw_plots(report, out, stem, slugs)
    except Exception as e:  # a plot is never worth the run
        bench.log(traceback.format_exc())
        report["plots"], report["plot_note"] = [], f"no plot: plotting raised {_error_text(e)}"
    if report["plot_note"]:
        print(report["plot_note"], flush=True)
    for path in report["plots"]:
        bench.log(f"wrote {path}")
    parquet_path = out / f"{stem}.parquet"
    try:
        write_parquet(parquet_rows(report), parquet_path)
        bench.log(f"wrote {parquet_path}")
    except Exception as e:
        bench.log(traceback.format_exc())
        bench.fail(f"writing {parquet_path} raised {_error_text(e)}")
    report["ok"] = not bench.failures
    report["elapsed_s"] = time.perf_counter() - bench.t0
    return write_report(bench, report, out / stem, markdown(report))


if __name__ == "__main__":
    sys.exit(main())
