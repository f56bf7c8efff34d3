"""Suites ``traversal`` and ``multisource`` (directed-mode graphs).

traversal: each algorithm cuGraph also has, at the library defaults (the PageRanks alpha 0.85,
tol 1e-6, max_iter 100, unweighted), ms per call; on a weighted graph also PageRank with its
weights (case ``weighted``, cuGraph's default there); bfs, sssp and personalized PageRank from
the vertex of largest out-degree, bfs and sssp also from a seeded random vertex with out-edges
(case ``random source``); k_core at k = ceil(max core / 2); PageRank with a
``personalization`` frame of the hub alone (case ``personalization``, cuGraph's form of a
NetworkX ``personalization`` dict; against ``cugraph.pagerank(personalization=)``).  bfs
also against the seeds' own programs from the same root (suites/seeds.py: SIMD-X's on a
symmetric graph, EMOGI's in device memory).  Each result is checked against cuGraph's
on the same graph; without cuGraph against a CPU oracle (scipy / networkx / a float64 power
iteration) up to :data:`ORACLE_MAX_EDGES` stored edges, else against a certificate computed
over the edges.  bfs / sssp predecessors (a null or -1: none) must be a tight in-neighbour.
strongly_connected_components, minimum_spanning_tree and betweenness_centrality (k sources,
``--ks``, default 256) run on the versions of the graph they need (a directed version of a
grid, an undirected weighted one of R-MAT): suites/structure.py says which and how each is
checked.

A full run (not ``--quick``) adds case ``first call (fresh process)`` per algorithm
(:func:`first_calls`): a new Python process times its first call with an empty on-disk kernel
cache, then another with the cache the first left (``ONYX_RAPIDS_CACHE_DIR``), each checked
against a warm call.

multisource: bfs / sssp from k sources at once (one k-column call) against k single-source
calls of ours and k calls of cuGraph; every column checked against the single-source run and
cuGraph's.  Sources: drawn (seeded) among the max(1024, 4k) largest out-degrees.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from onyx_rapids import device
from onyx_rapids.inputs import top_vertex, with_out_edges

from .. import catalog, graphs
from ..catalog import call, make_inputs
from ..common import (ORACLE_MAX_EDGES, UNREACHED_FLOAT, UNREACHED_HOPS, compare, free_memory,
                      host, median, ordered, predecessors, timed)
from ..peers.cugraph import frame as device_frame
from . import structure
from .seeds import SeedFiles, seed_rows

PAGERANK = dict(alpha=0.85, tol=1e-6, max_iter=100)
SSSP_RTOL = 1e-4
METRIC = {"bfs": ("hops", 0.0), "sssp": ("distance", SSSP_RTOL),
          "weakly_connected_components": ("partition", 0.0), "core_number": ("exact", 0.0),
          "k_core": ("members", 0.0), "pagerank": ("normalized_l1", 1e-3),
          "personalized_pagerank": ("normalized_l1", 1e-3)}


def algorithms():
    """Registry algorithms that the cuGraph peer also runs."""
    from ..peers.cugraph import KINDS
    return tuple(a for a in catalog.algorithms() if a in KINDS)


def multi_algorithms():
    """Registry algorithms taking one ``source`` or k ``sources`` (bfs, sssp)."""
    return tuple(a for a, e in catalog.algorithms().items()
                 if {"source", "sources"} <= e.input_names())


def _bincount(values, n: int):
    """``bincount`` of vertex indices over n slots (zeros for no values)."""
    if values.shape[0] == 0:
        return device.xp.zeros(n, dtype=np.int64)
    return device.xp.bincount(values, minlength=n)


def _ours(entry, g, inputs, weighted=False):
    extra = PAGERANK if entry.name in ("pagerank", "personalized_pagerank") else {}
    kw = {k: v for k, v in extra.items() if k != "max_iter"}
    if extra and not weighted:  # as the unweighted cuGraph graph and the oracle
        kw.update(catalog.unweighted(entry))
    return call(entry, g, inputs, iterations=extra.get("max_iter"), info=False, **kw)[0]


def _values(name, frame, g):
    if name == "k_core":
        return graphs.unique(host(frame["vertex"]).astype(np.int64))
    col = {"pagerank": "pagerank", "personalized_pagerank": "ppr_0"}.get(name)
    return ordered(frame, g, col or catalog.get(name).value_columns(1)[0])


# ------------------------------------------------------------------------------ references


def _host_edges(g):
    w = (device.to_host(g.edge_weights[:, 0]).astype(np.float64) if g.edge_weights is not None
         else np.ones(g.m))
    return (device.to_host(g.edge_sources).astype(np.int64),
            device.to_host(g.out_indices).astype(np.int64), w)


def oracle(name, g, source, k=None, weighted=False):
    """(reference in our order, description) on the host; ValueError when unavailable.
    ``weighted``: PageRank with the graph's weights."""
    if g.m > ORACLE_MAX_EDGES:
        raise ValueError(f"{g.m:,} edges are too many for the CPU oracle")
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components, dijkstra
    n = g.n
    src, dst, w = _host_edges(g)
    s = int(g.to_internal(source))
    ones = csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    if name == "bfs":
        d = dijkstra(ones, indices=s, unweighted=True)
        return np.where(np.isfinite(d), d, UNREACHED_HOPS).astype(np.int64), "scipy bfs"
    if name == "sssp":
        order = np.lexsort((w, dst, src))  # the lightest of parallel edges
        ss, dd, ww = src[order], dst[order], w[order]
        first = np.r_[True, (ss[1:] != ss[:-1]) | (dd[1:] != dd[:-1])] & (ss != dd)
        a = csr_matrix((ww[first], (ss[first], dd[first])), shape=(n, n))
        return dijkstra(a, indices=s), "scipy Dijkstra"
    if name == "weakly_connected_components":
        return connected_components(ones, connection="weak")[1], "scipy weak components"
    if name in ("core_number", "k_core"):
        import networkx as nx
        gx = nx.Graph()
        gx.add_nodes_from(range(n))
        gx.add_edges_from(zip(src[src != dst].tolist(), dst[src != dst].tolist()))
        core = nx.core_number(gx)
        core = np.array([core[i] for i in range(n)], dtype=np.int64)
        if name == "core_number":
            return core, "networkx core_number"
        ids = device.to_host(g.vertices).astype(np.int64)
        return graphs.unique(ids[core >= k]), "networkx core_number >= k"
    w = w if weighted else np.ones(len(src))
    outdeg = np.bincount(src, weights=w, minlength=n)
    p = csr_matrix((w / np.where(outdeg > 0, outdeg, 1.0)[src], (dst, src)), shape=(n, n))
    t = np.full(n, 1.0 / n) if name == "pagerank" else np.eye(1, n, s).ravel()
    x, a = t.copy(), PAGERANK["alpha"]
    for _ in range(100_000):
        nxt = a * (p @ x + x[outdeg == 0].sum() * t) + (1 - a) * t
        x, change = nxt, np.abs(nxt - x).sum()
        if change < 1e-12:
            break
    return x, "float64 power iteration"


def certificate(name, g, values, source) -> dict:
    """A proof over the edges: bfs / sssp distances tight and consistent, wcc labels constant
    along edges, core numbers the h-index fixpoint, PageRank finite and summing to 1."""
    xp, out = device.xp, {"against": "certificate", "metric": "violations"}
    src, dst = g.edge_sources, g.out_indices
    if name in ("bfs", "sssp"):
        s = int(g.to_internal(source))
        if name == "bfs":
            d = xp.minimum(values.astype(np.int64), UNREACHED_HOPS)
            reached, w, slack = d != UNREACHED_HOPS, 1, 0
        else:
            d = values.astype(np.float64)
            reached = xp.isfinite(d) & (d < UNREACHED_FLOAT)
            w = g.edge_weights[:, 0].astype(np.float64)
            slack = 1e-5 * xp.abs(xp.where(reached[dst], d[dst], 0.0)) + 1e-6
        du, dv = d[src], d[dst]
        bad = reached[src] & (~reached[dst] | (dv > du + w + slack))
        tight = reached[src] & reached[dst] & (xp.abs(du + w - dv) <= slack)
        has = xp.zeros(g.n, dtype=bool)
        has[dst[tight]] = True
        orphans = reached & ~has
        orphans[s] = False
        value = int(bad.sum()) + int(orphans.sum()) + int(d[s] != 0)
    elif name == "weakly_connected_components":
        lab = values.astype(np.int64)
        value = int((lab[src] != lab[dst]).sum())
    elif name == "core_number":
        und = g.simple_undirected()
        c = values.astype(np.int64)
        s_, t_ = und.edge_sources, und.out_indices
        value = int((_bincount(s_[c[t_] >= c[s_]], g.n) < c).sum()) + int(
            (_bincount(s_[c[t_] > c[s_]], g.n) > c).sum())
    else:  # pagerank
        x = values.astype(np.float64)
        value = int(not bool(xp.isfinite(x).all())) + int((x < 0).sum()) + int(
            abs(float(x.sum()) - 1.0) > 1e-3)
    return {**out, "value": value, "ok": value == 0}


def predecessor_check(name, frame, g, dist, source) -> dict | None:
    """Every reached vertex but the source has a predecessor p with an edge p -> v and
    d(p) + 1 = d(v) (bfs) / d(p) < d(v) (sssp); the others have none (null or -1)."""
    pred = predecessors(frame, g)
    if pred is None:
        return None
    xp = device.xp
    d = dist.astype(np.float64)
    reached = d < (UNREACHED_HOPS if name == "bfs" else UNREACHED_FLOAT)
    s = int(g.to_internal(source))
    want = reached.copy()
    want[s] = False
    has = pred >= 0
    keys = xp.sort(g.edge_sources.astype(np.int64) * g.n + g.out_indices.astype(np.int64))
    v = xp.nonzero(want & has)[0]
    p = pred[v]
    k = p * g.n + v
    pos = xp.minimum(xp.searchsorted(keys, k), max(keys.shape[0] - 1, 0))
    edge = keys[pos] == k if keys.shape[0] else xp.zeros(k.shape[0], dtype=bool)
    step = (d[p] + 1 == d[v]) if name == "bfs" else (d[p] < d[v])
    value = int((want != has).sum()) + int((~(edge & step)).sum())
    return {"against": "distances", "metric": "bad predecessors", "value": value,
            "ok": value == 0}


# ------------------------------------------------------------------------------ suites


def personalization(g, source):
    """PageRank's ``personalization`` as a cuGraph user passes it: a frame (cuDF on a GPU) of
    one vertex and its value."""
    return device_frame({"vertex": device.xp.asarray([source], dtype=np.int64),
                         "values": device.xp.asarray([1.0], dtype=np.float32)})


def random_source(g) -> int:
    """A seeded random vertex with out-edges (an original id)."""
    ids = with_out_edges(g)
    pick = ids[np.random.default_rng(7).integers(ids.size)] if ids.size else 0
    return int(device.to_host(g.vertices)[pick])


def measure(run, spec, g, stats) -> None:
    graph = spec.text
    mod, label = run.peer("cugraph")
    cgraphs = mod.Graphs(g) if mod is not None else None
    hub = top_vertex(g)
    core_max = None
    seeds = SeedFiles(run, g) if "bfs" in run.algorithms else None
    cases = [(name, "default") for name in run.algorithms if name not in structure.ALGORITHMS]
    if "pagerank" in run.algorithms:
        cases.insert(cases.index(("pagerank", "default")) + 1, ("pagerank", "personalization"))
    if "pagerank" in run.algorithms and g.edge_weights is not None:
        cases.insert(cases.index(("pagerank", "default")) + 1, ("pagerank", "weighted"))
    for name in ("sssp", "bfs"):
        if name in run.algorithms:
            cases.insert(cases.index((name, "default")) + 1, (name, "random source"))
    for name, case in cases:
        entry = catalog.get(name)
        weighted, personal = case == "weighted", case == "personalization"
        source = random_source(g) if case == "random source" else hub
        tag = f"{name}{'' if case == 'default' else ' ' + case} on {graph}"
        context = {"source": source}
        if "source" not in entry.input_names():
            context = {"sources": [source]}
        params = {"source": source} if {"source", "sources"} & entry.input_names() else {}
        if name == "k_core":
            if core_max is None:
                core_max = int(host(_ours(catalog.get("core_number"), g, {})["core_number"])
                               .max()) if g.n else 1
            context["k"] = params["k"] = max(1, math.ceil(core_max / 2))
        if name in ("pagerank", "personalized_pagerank"):
            params.update(PAGERANK)
        inputs = make_inputs(entry, g, 1, context)
        if personal:  # cuGraph's form: a frame of one vertex and its value
            params["personalization"] = source
            inputs = {"personalization": personalization(g, source)}
        ours = run.row(graph, name, case, "default", "ours", "ours", params=params)
        run.log(f"{tag}: ours")
        frame = run.timed(ours, lambda: _ours(entry, g, inputs, weighted))
        mine = None
        if frame is not None:
            try:
                mine = _values(name, frame, g)
                if name in ("bfs", "sssp"):
                    c = predecessor_check(name, frame, g, mine, source)
                    if c is not None and not c["ok"]:
                        run.check(ours, c, tag)
            except Exception as e:
                run.error(ours, e, "reading / checking its result")
        del frame
        peer = run.row(graph, name, case, "default", "cugraph", "peer", label=label,
                       params=params)
        peer_name = ("pagerank_weighted" if weighted else "personalized_pagerank" if personal
                     else name)
        ref, against = None, None
        if mod is None:
            peer["status"] = f"skipped: {label}"
        else:
            try:
                G = cgraphs.get(peer_name)
                res = run.timed(peer, lambda: mod.run(peer_name, G, source=source,
                                                      k=params.get("k"), **PAGERANK),
                                what="cugraph")
                if res is not None:
                    ref, against = mod.values(peer_name, res, g), label
            except Exception as e:
                run.error(peer, e, "cugraph")
        if name == "bfs" and mine is not None:
            seed_rows(run, graph, g, case, source, mine, seeds)
        if mine is None or ours["check"] == "FAILED":
            continue
        metric, tol = METRIC[name]
        try:
            if ref is None:
                try:
                    ref, against = oracle(peer_name.replace("pagerank_weighted", "pagerank"),
                                          g, source, params.get("k"), weighted)
                    if name != "k_core":
                        ref = device.asarray(ref)
                except (ValueError, ImportError) as e:
                    if name == "k_core" or (name == "sssp" and g.edge_weights is None):
                        ours["check"] = f"unchecked: {e}"
                        continue
                    run.check(ours, certificate(name, g, mine, source), tag)
                    continue
            run.check([ours] + ([peer] if peer["status"] == "ok" else []),
                      compare(metric, mine, ref, against=against, tol=tol), tag)
            if name == "core_number":
                core_max = int(device.to_host(ref).max()) if g.n else 1
        except Exception as e:
            run.error(ours, e, "the check")
    versions_ms = structure.measure(run, graph, g, (mod, label), cgraphs)
    if cgraphs is not None:
        stats["cugraph_build_ms"] = {**cgraphs.build_ms, **versions_ms}
    if seeds is not None:
        seeds.close()
    if run.first_calls:
        first_calls(run, spec, g, hub)
    free_memory()


def _source_set(g, k: int):
    rng = np.random.default_rng([0, 202, k])
    degree = device.to_host(g.out_degree).astype(np.int64)
    ids = device.to_host(g.vertices)
    pool = np.lexsort((ids, -degree))[:max(1, min(int((degree > 0).sum()) or g.n,
                                                  max(1024, 4 * k)))]  # ties by id
    idx = pool[rng.choice(len(pool), size=k, replace=len(pool) < k)]
    return device.to_host(g.vertices)[idx].astype(np.int64)


def measure_multi(run, spec, g, stats) -> None:
    graph = spec.text
    mod, label = run.peer("cugraph")
    cgraphs = mod.Graphs(g) if mod is not None else None
    for name in run.algorithms:
        entry = catalog.get(name)
        metric, tol = METRIC[name]
        for k in run.ks:
            case, tag = f"k={k}", f"{name} k={k} sources on {graph}"
            sources = _source_set(g, k)
            params = {"k": k, "sources": sources.tolist()}
            at_once = run.row(graph, name, case, "at once", "ours", "ours", k=k, params=params)
            run.log(f"{tag}: at once, ours separately, cuGraph separately")
            frame = run.timed(at_once, lambda: call(entry, g, {"sources": sources}, info=False)[0])
            separate = run.row(graph, name, case, "k separate", "ours", "variant", k=k,
                               params=params)
            single = lambda s: call(entry, g, {"source": int(s)}, info=False)[0]  # noqa: E731
            run.timed(separate, lambda: [single(s) for s in sources][-1])
            peer = run.row(graph, name, case, "k separate", "cugraph", "peer", k=k, label=label,
                           params=params)
            G = None
            if mod is None:
                peer["status"] = f"skipped: {label}"
            else:
                try:
                    G = cgraphs.get(name)
                    run.timed(peer, lambda: [mod.run(name, G, source=s) for s in sources][-1],
                              what="cugraph")
                except Exception as e:
                    run.error(peer, e, "cugraph")
                    G = None
            if frame is None or separate["status"] != "ok":
                continue
            try:
                worst = {"against": "single-source runs", "metric": f"columns differing "
                         f"({metric})", "value": 0, "ok": True}
                worst_cg = dict(worst, against=label)
                for f, s in enumerate(sources):
                    col = ordered(frame, g, f"distance_{f}")
                    mine = _values(name, single(s), g)
                    if not compare(metric, col, mine, against="", tol=tol)["ok"]:
                        worst.update(value=worst["value"] + 1, ok=False)
                    if G is not None and peer["status"] == "ok":
                        ref = mod.values(name, mod.run(name, G, source=s), g)
                        if not compare(metric, col, ref, against="", tol=tol)["ok"]:
                            worst_cg.update(value=worst_cg["value"] + 1, ok=False)
                run.check([at_once, separate], worst, tag)
                if G is not None and peer["status"] == "ok":
                    run.check(peer, worst_cg, tag)
            except Exception as e:
                run.error(at_once, e, "the check")
            del frame
            free_memory()


# ------------------------------------------------------------------------------ first calls

FIRST_CALL = "first call (fresh process)"
_MARK = "FIRST-CALL-RECORD "
# the fresh process: first_call_child(SPEC, NAME, SOURCE, REPEAT, K), its record on one line
_CHILD = ("import json, sys; from benchmarks.suites.traversal import _MARK, first_call_child; "
          "a = sys.argv[1:]; print(_MARK + json.dumps(first_call_child(a[0], a[1], int(a[2]), "
          "int(a[3]), int(a[4])), default=float), flush=True)")


def _context(entry, g, source) -> tuple[dict, dict]:
    """(make_inputs context, params) of ``entry`` from ``source`` as :func:`measure` calls it
    (k_core at k = ceil(max core / 2), computed untimed)."""
    context = {"source": source} if "source" in entry.input_names() else {"sources": [source]}
    params = {"source": source} if {"source", "sources"} & entry.input_names() else {}
    if entry.name == "k_core":
        core = host(_ours(catalog.get("core_number"), g, {})["core_number"])
        context["k"] = params["k"] = max(1, math.ceil(int(core.max()) / 2)) if g.n else 1
    if entry.name in ("pagerank", "personalized_pagerank"):
        params.update(PAGERANK)
    return context, params


def _first_call_parts(name: str, g, source: int, k: int):
    """(call, read, agree) of ``name`` as :func:`measure` runs it (structure.parts')."""
    if name in structure.ALGORITHMS:
        return structure.parts(name, g, k)
    entry = catalog.get(name)
    context, _ = _context(entry, g, source)
    inputs = make_inputs(entry, g, 1, context)
    metric, tol = METRIC[name]
    return (lambda: _ours(entry, g, inputs), lambda frame: _values(name, frame, g),
            lambda a, b, against: compare(metric, a, b, against=against, tol=tol))


def first_call_child(spec_text: str, name: str, source: int, repeat: int,
                     k: int = structure.DEFAULT_K) -> dict:
    """In a fresh process: build the graph (untimed), time the first call of ``name`` and
    ``repeat`` warm ones, and check the first result against a warm one (``k``:
    betweenness_centrality's sources)."""
    g = graphs.build(spec_text, undirected=False)[0]
    call, read, agree = _first_call_parts(name, g, source, k)
    first_result, first = timed(call)
    warm = [timed(call)[1] for _ in range(repeat)]
    check = agree(read(first_result), read(call()), "a warm call in the process")
    return {"first_ms": first, "warm_ms": warm, "check": check}


def _child(spec, name, source, repeat, cache_dir, k) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "ONYX_RAPIDS_CACHE"}
    env["ONYX_RAPIDS_CACHE_DIR"] = str(cache_dir)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-c", _CHILD, spec.text, name, str(int(source)),
                           str(repeat), str(k)], capture_output=True, text=True, env=env,
                          cwd=root, timeout=3600)
    line = next((x for x in proc.stdout.splitlines() if x.startswith(_MARK)), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"the fresh process exited {proc.returncode}: "
                           f"{(proc.stdout + proc.stderr)[-600:]}")
    return json.loads(line[len(_MARK):])


def first_calls(run, spec, g, source) -> None:
    """Case ``first call (fresh process)`` of every algorithm (betweenness_centrality from
    the first of ``--ks`` sources): a new Python process builds the
    graph and times its first call, with an empty on-disk kernel cache (variant ``empty
    cache``, the group's reference) and again with the cache that run left
    (``warm cache``), ``ONYX_RAPIDS_CACHE_DIR`` a new folder per algorithm; params: the warm
    median in that process and the first call's excess over it."""
    for name in run.algorithms:
        folder = Path(tempfile.mkdtemp(prefix="onyx_cache_"))
        try:
            for variant in ("empty cache", "warm cache"):
                row = run.row(spec.text, name, FIRST_CALL, variant, "ours",
                              "ours" if variant == "empty cache" else "variant",
                              params={"source": source, "cache": variant})
                run.log(f"{name} on {spec.text}: first call in a fresh process, {variant}")
                try:
                    rec = _child(spec, name, source, run.repeat, folder,
                                 (run.ks or (structure.DEFAULT_K,))[0])
                except Exception as e:
                    run.error(row, e, "the fresh process")
                    continue
                warm = median(rec["warm_ms"])
                row.update(ms=rec["first_ms"], first_call_ms=rec["first_ms"],
                           times_ms=[rec["first_ms"]], repeats=1)
                row["params"].update(warm_ms=warm, beyond_warm_ms=rec["first_ms"] - warm,
                                     cache_files=sum(1 for p in folder.rglob("*")
                                                     if p.is_file()))
                run.check(row, rec["check"], f"{name} first call ({variant}) on {spec.text}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
