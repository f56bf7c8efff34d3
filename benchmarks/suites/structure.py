"""The traversal suite's rows of strongly_connected_components, minimum_spanning_tree and
betweenness_centrality (issue 36): each on the version of the graph it needs, timed against
cuGraph on the same version, and checked against cuGraph's result in the same run.

Versions (benchmarks/graphs.py): strongly_connected_components on the graph when directed
(rmat, er; case ``directed``), else on its directed version (grid, road: each street one-way
with probability :data:`benchmarks.graphs.ONE_WAY`; case ``directed version``);
minimum_spanning_tree on the graph when undirected (grid, road, with their uniform weights;
case ``weighted``), else on its undirected weighted version (rmat, er: each pair once, new
uniform weights; case ``undirected weighted version``); betweenness_centrality on the graph
itself, unweighted, from k sources (case ``k=K``, the suite's ``--ks``, default 256): drawn
uniformly without replacement among the vertices (seeded, listed in the row's params), the
same list given to both sides -- ours as ``sources=``, cuGraph's as ``k=[ids]`` -- with
``normalized=True``.

Checks: strongly connected components as a partition (the same grouping; labels may
differ); the spanning forest's total weight within :data:`MST_RTOL` of the reference's and the
same number of edges, and ours also certified over the graph (:func:`forest_violations`: each
edge a graph edge with its weight, listed once, no cycle, no graph edge between two of its
trees) with ``RunInfo``'s ``total_weight`` equal to its edges' sum; betweenness every value
within :data:`BC_RTOL` (relative) of the reference.  cuGraph's normalized betweenness from k
given sources divides a vertex's dependency sum by k (n - 2), a source's by (k - 1) (n - 2)
(:func:`benchmarks.peers.cugraph.bc_scale`), and ours is held to that.  Without cuGraph the
references are CPU oracles (SciPy's strong components and minimum spanning tree) up to
:data:`benchmarks.common.ORACLE_MAX_EDGES` stored edges; beyond, a row says ``unchecked`` (a
spanning forest still certified).  Betweenness is not checked against cuGraph's values (on
R-MAT 22 the two disagreed, and a peer is not a reference): ours and cuGraph's are each
checked against a float64 Brandes over the same sources, NetworkX's up to
:data:`BC_ORACLE_WORK` (k x m), beyond it :func:`brandes_products` (sparse products, on the
GPU when there is one).
"""

from __future__ import annotations

from time import perf_counter as timer

import numpy as np

from onyx_rapids import device

from .. import catalog, graphs
from ..common import (ORACLE_MAX_EDGES, column, compare, error_text, free_memory,
                      ordered, out_of_memory, timed)
from ..peers.cugraph import bc_scale, forest

ALGORITHMS = ("strongly_connected_components", "minimum_spanning_tree",
              "betweenness_centrality")
DEFAULT_K = 256
MST_RTOL = 1e-6
BC_RTOL = 1e-4
#: Sources per pass of :func:`brandes_products` (its n x chunk float64 blocks)
PRODUCT_CHUNK = 32
#: ... where our search's levels x n pass :data:`LONG_WORK` (a large grid or road network:
#: every level is a product over the n x chunk blocks)
LONG_CHUNK = 4  # at least 2: a source alone is divided by k - 1 = 0
LONG_WORK = 2e9
#: Sources of the timing probe of cuGraph's betweenness under ``--peer-limit``
PROBE_SOURCES = 4
#: Seconds the float64 products reference may take over every source (else the first chunk)
REFERENCE_BUDGET_S = 60.0
BRANDES_LABEL = "networkx Brandes over the sources, cuGraph's scaling"
PRODUCTS_LABEL = "float64 Brandes by sparse products over the sources, cuGraph's scaling"
BC_ORACLE_WORK = 20_000_000  # k x stored edges of NetworkX's Brandes (seconds on a CPU)
_VERSION = {"strongly_connected_components": "directed version",
            "minimum_spanning_tree": "undirected weighted version"}


def bc_sources(g, k: int) -> np.ndarray:
    """``min(k, n)`` distinct vertex ids of ``g`` drawn uniformly (seeded by k), ascending."""
    ids = device.to_host(g.vertices).astype(np.int64)
    pick = np.random.default_rng([36, k]).choice(ids.size, size=min(k, ids.size), replace=False)
    return np.sort(ids[pick])


class Versions:
    """The versions of one graph the algorithms need and their cuGraph graphs, each built
    once (``build_ms`` of the versions' cuGraph graphs, by version and kind)."""

    def __init__(self, g, mod=None, cgraphs=None):
        self.g, self.mod, self.build_ms = g, mod, {}
        self.views = {"graph": g}
        self.cgraphs = {"graph": cgraphs} if cgraphs is not None else {}

    def version(self, name: str) -> str:
        """'graph' when the algorithm runs on the graph itself, else its version's name."""
        wanted = _VERSION.get(name)
        if wanted is None or (wanted == "directed version") == self.g.directed:
            return "graph"
        return wanted

    def view(self, name: str):
        key = self.version(name)
        if key not in self.views:
            make = graphs.directed_version if key == "directed version" else \
                graphs.undirected_weighted
            self.views[key] = make(self.g)
        return self.views[key]

    def cugraph(self, name: str):
        key = self.version(name)
        if key not in self.cgraphs:
            self.cgraphs[key] = self.mod.Graphs(self.view(name))
        G = self.cgraphs[key].get(name)
        if key != "graph":
            self.build_ms.update({f"{key}: {kind}": ms
                                  for kind, ms in self.cgraphs[key].build_ms.items()})
        return G


def case_of(name: str, versions: Versions, k=None) -> str:
    if name == "betweenness_centrality":
        return f"k={k}"
    if versions.version(name) != "graph":
        return versions.version(name)
    return "directed" if name == "strongly_connected_components" else "weighted"


# ------------------------------------------------------------------------------ ours


def call_ours(entry, view, sources=None):
    """One call of ours: (frame, RunInfo facts); BC from ``sources``."""
    if entry.name == "betweenness_centrality":
        return catalog.call(entry, view, {"sources": sources}, normalized=True)
    return catalog.call(entry, view, {})


#: RunInfo facts a row keeps (how the run went: rounds, phases, batches), scalars only
RUN_FACTS = ("iterations", "trim_rounds", "trimmed", "pivot_component", "coloring_rounds",
             "phases", "jumps", "push_iterations", "pull_iterations", "components",
             "lanes", "batches")


def run_facts(facts: dict) -> dict:
    """The :data:`RUN_FACTS` of a call's RunInfo (its ``variant`` included)."""
    merged = {**facts, **(facts.get("variant") or {})}
    return {key: merged[key] for key in RUN_FACTS if isinstance(merged.get(key), (int, float))}


def read_ours(name: str, result, view):
    """Our result (:func:`call_ours`' pair) as the checks compare it: labels / betweenness in
    the view's internal order; the spanning forest's :func:`~benchmarks.peers.cugraph.forest` with
    ``info_total_weight`` and ``violations`` (:func:`forest_violations`, plus rows listed
    twice)."""
    frame, facts = result
    if name == "strongly_connected_components":
        return ordered(frame, view, "labels")
    if name == "betweenness_centrality":
        return ordered(frame, view, "betweenness_centrality")
    if facts.get("total_weight") is None:
        raise ValueError(f"RunInfo has no total_weight (its keys: {sorted(facts)})")
    f = forest(column(frame, "src"), column(frame, "dst"), column(frame, "weight"))
    f["violations"] = forest_violations(view, f) + (len(frame) - f["edges"])
    f["info_total_weight"] = float(facts["total_weight"])
    return f


def forest_violations(view, f: dict) -> int:
    """0 for a spanning forest of ``view``'s edges, else a count of faults: forest edges that
    are no edge of the view or carry another weight, edges closing a cycle (more than n minus
    its trees), and view edges joining two of its trees."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    xp, n = device.xp, view.n
    fs = xp.asarray(device.asarray(view.to_internal(f["src"]))).astype(np.int64)
    fd = xp.asarray(device.asarray(view.to_internal(f["dst"]))).astype(np.int64)
    trees, label = connected_components(csr_matrix(
        (np.ones(f["edges"]), (device.to_host(fs), device.to_host(fd))), shape=(n, n)),
        directed=False)
    label = device.asarray(label)
    joins = int((label[view.edge_sources] != label[view.out_indices]).sum()) // (
        1 if view.directed else 2)  # an undirected edge is stored both ways
    keys = view.edge_sources.astype(np.int64) * n + view.out_indices.astype(np.int64)
    order = xp.argsort(keys)
    want = fs * n + fd
    pos = xp.minimum(xp.searchsorted(keys[order], want), max(view.m - 1, 0))
    w = (view.edge_weights[:, 0] if view.edge_weights is not None
         else xp.ones(view.m, dtype=np.float32))
    have = (keys[order][pos] == want) & (
        w[order][pos] == device.asarray(f["weight"]).astype(np.float32)) if view.m else \
        xp.zeros(f["edges"], dtype=bool)
    return int((~have).sum()) + max(0, f["edges"] - (n - trees)) + joins


# ------------------------------------------------------------------------------ references


def agree(name: str, mine, ref, against: str) -> dict:
    """The check record of ours (:func:`read_ours`) against a reference in the same form."""
    if name == "strongly_connected_components":
        return compare("partition", mine, ref, against=against)
    if name == "betweenness_centrality":
        return _agree_betweenness(mine, ref, against)
    total = ref["total_weight"]
    rel = abs(mine["total_weight"] - total) / max(abs(total), 1e-300)
    info = abs(mine["info_total_weight"] - mine["total_weight"]) / max(abs(total), 1e-300)
    return {"against": against, "metric": "total weight rel. difference", "value": rel,
            "tol": MST_RTOL, "edges": mine["edges"], "reference_edges": ref["edges"],
            "total_weight": mine["total_weight"], "info_total_weight_rel": info,
            "forest_violations": mine["violations"],
            "edges_not_in_reference": _edges_not_in(mine, ref),
            "ok": bool(rel <= MST_RTOL and info <= MST_RTOL and mine["violations"] == 0
                       and mine["edges"] == ref["edges"])}


def _agree_betweenness(mine, ref, against: str) -> dict:
    """Every value within :data:`BC_RTOL` of the reference's, where the reference's is finite;
    where it is not (path counts past float64's range: a 2048 x 2048 grid has C(4094, 2047),
    about 1e1231, shortest corner-to-corner paths, so every float64 Brandes gives inf / NaN
    there), ours must not be finite either, and the record counts those vertices."""
    xp = device.xp
    a, b = (xp.asarray(x, dtype=np.float64) for x in (mine, ref))
    fa, fb = xp.isfinite(a), xp.isfinite(b)
    out = compare("rel_max", xp.where(fb, a, 0.0), xp.where(fb, b, 0.0), against=against,
                  tol=BC_RTOL)
    differ, gone = int((fa != fb).sum()), int((~fb).sum())
    if not gone:
        return out
    out.update(not_finite=gone, finite_mismatches=differ, ok=out["ok"] and not differ)
    return out


def _edges_not_in(mine: dict, ref: dict) -> int:
    """How many of our forest's edges the reference's lacks (ties of equal weights may pick
    other edges; with distinct weights the forest is unique and this is 0)."""
    if not mine["edges"] or not ref["edges"]:
        return mine["edges"]
    low = min(int(mine["src"].min()), int(ref["src"].min()))  # src is each pair's smaller id
    span = max(int(mine["dst"].max()), int(ref["dst"].max())) - low + 1
    key = lambda f: (f["src"] - low) * span + (f["dst"] - low)  # noqa: E731
    theirs = np.sort(key(ref))
    a = key(mine)
    return int((theirs[np.minimum(np.searchsorted(theirs, a), theirs.size - 1)] != a).sum())


def oracle(name: str, view, sources=None):
    """(reference in :func:`read_ours`'s form, description) on the host; ValueError when the
    graph is too large for it."""
    work = view.m * (len(sources) if name == "betweenness_centrality" else 1)
    limit = BC_ORACLE_WORK if name == "betweenness_centrality" else ORACLE_MAX_EDGES
    if work > limit:
        raise ValueError(f"{work:,} {'source x edges' if sources is not None else 'edges'} "
                         f"are too many for the CPU oracle (limit {limit:,})")
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

    n, ids = view.n, device.to_host(view.vertices).astype(np.int64)
    s = device.to_host(view.edge_sources).astype(np.int64)
    d = device.to_host(view.out_indices).astype(np.int64)
    if name == "strongly_connected_components":
        a = csr_matrix((np.ones(s.size), (s, d)), shape=(n, n))
        return connected_components(a, connection="strong")[1], "scipy strong components"
    if name == "minimum_spanning_tree":
        w = (device.to_host(view.edge_weights[:, 0]).astype(np.float64)
             if view.edge_weights is not None else np.ones(s.size))
        t = minimum_spanning_tree(csr_matrix((w, (s, d)), shape=(n, n))).tocoo()
        return forest(ids[t.row], ids[t.col], t.data), "scipy minimum_spanning_tree"
    return _brandes(view, s, d, sources), BRANDES_LABEL


def _brandes(view, s, d, sources):
    """NetworkX's betweenness dependency sums from ``sources`` (``betweenness_centrality_subset``
    to every vertex, unnormalized; its halving on undirected graphs undone), divided as
    cuGraph divides them."""
    import networkx as nx

    n = view.n
    if n < 3:
        raise ValueError(f"normalized betweenness needs n >= 3 vertices (n = {n})")
    G = nx.DiGraph() if view.directed else nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    inner = np.asarray(device.to_host(device.asarray(view.to_internal(sources)))).astype(
        np.int64)
    raw = nx.betweenness_centrality_subset(G, inner.tolist(), list(range(n)),
                                           normalized=False)
    sums = np.array([raw[v] for v in range(n)]) * (1.0 if view.directed else 2.0)
    nonsource, source = bc_scale(n, sources)
    divisor = np.full(n, nonsource)
    divisor[inner] = source
    return device.asarray(sums / divisor)




def brandes_products(view, sources, chunk=None, budget_s=None):
    """``(values, used)``: betweenness from the sources ``used`` as :func:`_brandes` gives it
    (cuGraph's scaling for that many sources), computed in float64 by sparse matrix products,
    ``chunk`` (:data:`PRODUCT_CHUNK`) sources a pass (cuSPARSE on a GPU, SciPy on the host): per level L,
    ``sigma_{L+1} = A^T (sigma on level L)`` on the vertices not yet reached, then backward
    ``delta_L = sigma_L * A ((1 + delta_{L+1}) / sigma_{L+1})``; ``bc(v)`` sums ``delta`` over
    the sources other than v.  Written from Brandes' formulas, sharing no code with ours, for
    graphs where NetworkX's Brandes is too slow.  ``used`` is every source, or only the first
    chunk's when ``budget_s`` is given and the first pass's time says the others would pass it
    (a long-diameter graph takes a product per level)."""
    xp, n, chunk = device.xp, view.n, chunk or PRODUCT_CHUNK
    if n < 3:
        raise ValueError(f"normalized betweenness needs n >= 3 vertices (n = {n})")
    a, at = _adjacency(view)
    sources = np.asarray(sources)
    sums = xp.zeros(n, dtype=np.float64)
    used = sources
    for first in range(0, sources.shape[0], chunk):
        began = timer()
        sums += _dependency_sums(a, at, view, sources[first:first + chunk])
        passes = -(-sources.shape[0] // chunk)
        if first == 0 and budget_s is not None and passes > 1:
            device.synchronize()
            if (timer() - began) * passes > budget_s:
                used = sources[:chunk]
                break
    inner = xp.asarray(device.asarray(view.to_internal(used))).astype(np.int64).reshape(-1)
    nonsource, source = bc_scale(n, used)
    divisor = xp.full(n, nonsource, dtype=np.float64)
    divisor[inner] = source
    return sums / divisor, used


def _adjacency(view):
    """``(A, A^T)``: the view's adjacency as float64 CSR matrices (CuPy's on a GPU)."""
    xp, n = device.xp, view.n
    if device.BACKEND == "gpu":
        from cupyx.scipy import sparse
    else:
        from scipy import sparse
    src, dst = (xp.asarray(device.asarray(e)).astype(np.int64)
                for e in (view.edge_sources, view.out_indices))
    a = sparse.csr_matrix((xp.ones(src.shape[0], dtype=np.float64), (src, dst)), shape=(n, n))
    return a, a.T.tocsr()


def _dependency_sums(a, at, view, sources):
    """Sum over ``sources`` of Brandes' dependencies delta(s, v) (0 for v = s), float64."""
    xp, n = device.xp, view.n
    starts = xp.asarray(device.asarray(view.to_internal(sources))).astype(np.int64).reshape(-1)
    cols = xp.arange(starts.shape[0])
    dist = xp.full((n, starts.shape[0]), -1, dtype=np.int32)
    sigma = xp.zeros((n, starts.shape[0]), dtype=np.float64)
    dist[starts, cols], sigma[starts, cols] = 0, 1.0
    level = 0
    while True:
        offer = at @ xp.where(dist == level, sigma, 0.0)
        new = (dist < 0) & (offer > 0)
        if not bool(new.any()):
            break
        dist[new], sigma[new] = level + 1, offer[new]
        level += 1
    delta = xp.zeros_like(sigma)
    for lvl in range(level - 1, -1, -1):
        pull = a @ xp.where(dist == lvl + 1, (1.0 + delta) / xp.where(sigma > 0, sigma, 1.0),
                            0.0)
        here = dist == lvl
        delta[here] = (sigma * pull)[here]
    delta[starts, cols] = 0.0  # a source's own dependency is not its betweenness
    return delta.sum(axis=1)


# ------------------------------------------------------------------------------ the rows


def measure(run, graph: str, g, peer, cgraphs) -> dict:
    """The rows of every algorithm of :data:`ALGORITHMS` in ``run.algorithms`` on ``g``;
    returns the cuGraph build times of the versions it made ({} without cuGraph)."""
    mod, label = peer
    versions = Versions(g, mod, cgraphs)
    for name in (a for a in ALGORITHMS if a in run.algorithms):
        for k in (run.ks or (DEFAULT_K,)) if name == "betweenness_centrality" else (None,):
            _case(run, graph, name, versions, peer, k)
            free_memory()
    return versions.build_ms


def _case(run, graph, name, versions, peer, k) -> None:
    mod, label = peer
    entry, view = catalog.get(name), versions.view(name)
    params = {"version": versions.version(name), "n": view.n, "m": view.m}
    sources = None
    if name == "betweenness_centrality":  # k = n at most
        sources = bc_sources(view, k)
        params.update(k=int(sources.size), k_asked=k, sources=sources.tolist(),
                      normalized=True, sources_drawn="uniform among the vertices, seeded")
        k = int(sources.size)
    case = case_of(name, versions, k)
    tag = f"{name} ({case}) on {graph}"
    ours = run.row(graph, name, case, "default", "ours", "ours", k=k, params=params)
    peer_row = run.row(graph, name, case, "default", "cugraph", "peer", label=label, k=k,
                       params=params)
    if sources is not None and sources.size < 2:
        for row in (ours, peer_row):
            row["status"] = "n/a: k < 2 sources (cuGraph divides a source's value by k - 1)"
        return
    run.log(f"{tag}: ours")
    result = run.timed(ours, lambda: call_ours(entry, view, sources))
    mine = None
    if result is not None:
        ours["params"] = {**ours["params"], "run_facts": run_facts(result[1])}
        try:
            mine = read_ours(name, result, view)
        except Exception as e:
            run.error(ours, e, "reading its result")
    del result
    ref, against = _peer(run, peer_row, name, versions, view, sources, peer)
    if mine is None:
        return
    try:
        if name == "betweenness_centrality":
            _check_betweenness(run, ours, peer_row, mine, ref, view, sources, tag)
            return
        if ref is None:
            try:
                ref, against = oracle(name, view, sources)
            except (ValueError, ImportError) as e:
                _unchecked(run, ours, name, mine, e, tag)
                return
        run.check([ours] + ([peer_row] if peer_row["status"] == "ok" else []),
                  agree(name, mine, ref, against), tag)
    except Exception as e:
        run.error(ours, e, "the check")


def _peer(run, row, name, versions, view, sources, peer):
    """Time cuGraph's call into ``row``; (its result in our form, its label) or (None, None)."""
    mod, label = peer
    if mod is None:
        row["status"] = f"skipped: {label}"
        return None, None
    try:
        G = versions.cugraph(name)
        if _too_long(run, row, mod, name, G, sources):
            return None, None
        run.log(f"{name} on {row['graph']}: cuGraph")
        out = run.timed(row, lambda: mod.run(name, G, k=sources), what="cugraph")
        if out is not None:
            return mod.values(name, out, view), label
    except Exception as e:
        run.error(row, e, "cugraph")
    return None, None


def _too_long(run, row, mod, name, G, sources) -> bool:
    """Whether cuGraph's betweenness would pass ``--peer-limit`` (then the row says so and is
    not run): one call from the first :data:`PROBE_SOURCES` sources, scaled to all of them and
    to the run's calls (warm-up and repeats; the probe's one-time costs make it an upper
    estimate).  cuGraph walks the graph once per source: on a long-diameter graph 256 sources
    can take many minutes."""
    limit = run.peer_limit_s
    if name != "betweenness_centrality" or not limit or len(sources) <= PROBE_SOURCES:
        return False
    probe = sources[:PROBE_SOURCES]
    _, ms = timed(lambda: mod.run(name, G, k=probe))
    estimate = ms / 1e3 * len(sources) / len(probe) * (run.repeat + 1)
    row["params"] = {**(row["params"] or {}), "probe_ms": ms, "estimated_s": estimate}
    if estimate <= limit:
        return False
    row["status"] = (f"not run: estimated {estimate:.0f} s for its {run.repeat + 1} calls from "
                     f"{len(sources)} sources ({ms / 1e3:.2f} s from {len(probe)}) > "
                     f"--peer-limit {limit:g} s")
    return True


def _check_betweenness(run, ours, peer_row, mine, theirs, view, sources, tag) -> None:
    """Ours, and cuGraph's values, each against a float64 Brandes (NetworkX's on small graphs,
    :func:`brandes_products` beyond), so that a disagreement (R-MAT 22, issue 36's first run)
    says which side is wrong.  Where the products over every source would pass
    :data:`REFERENCE_BUDGET_S`, the reference covers the first chunk's sources
    (:data:`PRODUCT_CHUNK`, or :data:`LONG_CHUNK` where our levels x n pass
    :data:`LONG_WORK`) and ours is called again (untimed) from those; cuGraph's row then stays
    unchecked.  Without memory for a float64 reference ours is checked against cuGraph's."""
    name = "betweenness_centrality"
    try:
        ref, against = oracle(name, view, sources)
        used = sources
    except ValueError:
        try:
            levels = (ours["params"] or {}).get("run_facts", {}).get("iterations", 0)
            chunk = LONG_CHUNK if levels * view.n > LONG_WORK else PRODUCT_CHUNK
            ref, used = brandes_products(view, sources, chunk=chunk,
                                         budget_s=REFERENCE_BUDGET_S)
            against = PRODUCTS_LABEL
        except Exception as e:  # noqa: BLE001  (only running out of memory is expected)
            if not out_of_memory(e):
                raise
            ref, used, against = None, None, f"no float64 reference ({error_text(e)})"
            free_memory()
    if ref is None:
        if theirs is None:
            _unchecked(run, ours, name, mine, against, tag)
        else:
            run.check([ours, peer_row], agree(name, mine, theirs, peer_row["label"]), tag)
        return
    if len(used) < len(sources):
        against = (f"{against} (the first {len(used)} of the {len(sources)} sources, against "
                   f"a separate call of ours from them: all would pass "
                   f"{REFERENCE_BUDGET_S:g} s)")
        mine = read_ours(name, call_ours(catalog.get(name), view, used), view)
        if theirs is not None:
            peer_row["check"] = f"unchecked: {against}"
        theirs = None
    run.check(ours, agree(name, mine, ref, against), tag)
    if theirs is not None:
        run.check(peer_row, agree(name, theirs, ref, against), f"{tag}: cuGraph's values")


def _unchecked(run, ours, name, mine, why, tag) -> None:
    """No reference: a spanning forest is still certified; the row says what was not checked."""
    if name == "minimum_spanning_tree" and mine["violations"]:
        run.check(ours, {"against": "the graph's edges", "metric": "forest violations",
                         "value": mine["violations"], "ok": False}, tag)
        return
    ours["check"] = f"unchecked: {why}" + ("; a spanning forest of the graph's edges"
                                           if name == "minimum_spanning_tree" else "")


# ------------------------------------------------------------------------------ first calls


def parts(name: str, g, k: int = DEFAULT_K):
    """(call, read, agree) of ``name`` on its version of ``g`` as :func:`measure` runs it, for
    the traversal suite's first-call rows: ``call()`` -> a result, ``read(result)`` -> values,
    ``agree(a, b, against)`` -> a check record."""
    versions = Versions(g)
    entry, view = catalog.get(name), versions.view(name)
    sources = bc_sources(view, k) if name == "betweenness_centrality" else None
    return (lambda: call_ours(entry, view, sources), lambda r: read_ours(name, r, view),
            lambda a, b, against: agree(name, a, b, against))
