"""Graph attributes: a few dozen numbers that describe a graph, for choosing how to run on it.

:func:`attributes` (``g.attributes()``, cached on the graph) computes them on the device in a
handful of passes (one kernel over the edges, a histogram of each degree array, two BFS
sweeps, one sampled wedge check) and returns a dict of plain Python values (int, float, str,
bool, list or None), JSON-serializable as it is.  It is step 1 of input-sensitive autotuning
(issue 38): the features that a tuner's models read.  A value that is undefined for the graph
(the skew of constant degrees, the density of a one-vertex graph, the assortativity of a graph
without edges, ...) is ``None``, never NaN.

Degrees are the stored ones (``g.out_degree``, ``g.in_degree``): an undirected edge u-v is
stored as u->v and v->u and counts once at each end, a self-loop is stored once and counts once;
a multigraph's parallel edges each count.

Keys
----
``version``
    The version of this set of keys and definitions (1).
``n``, ``m``
    Vertices; stored edges (an undirected edge counts twice, a self-loop once).
``edges``
    Edges as the user counts them: ``m`` for a directed graph, ``(m + self_loops) / 2`` for an
    undirected one (each edge once).
``kind``
    ``"bipartite"`` (built by :meth:`~onyx_rapids.graph.Graph.from_bipartite`), else
    ``"directed"`` or ``"undirected"``.
``multigraph``, ``weighted``
    ``g.multigraph``; whether the graph has edge weights.
``density``
    ``edges`` over the possible edges: ``n (n - 1)`` directed, ``n (n - 1) / 2`` undirected,
    ``left_n * right_n`` bipartite (None where that is 0).
``volume``
    The sum of the (out-)degrees: ``m`` (KONECT's volume, the study's most important feature).
``self_loops``
    Stored edges u->u.
``isolated_share``
    Share of vertices with no edge at all (in or out).
``zero_in_share``, ``zero_out_share``
    Share of vertices with in-degree 0 (sources, isolated vertices included), out-degree 0.
``out_degree_*``, ``in_degree_*``
    Statistics of the out- and in-degrees over all n vertices (equal for an undirected graph):
    ``mean``, ``max``, ``std`` (population, ddof 0), ``skew`` (population Fisher-Pearson,
    ``E[(d - mean)^3] / std^3``; None when std is 0), ``gini`` (the Gini coefficient, 0 for
    equal degrees, towards 1 when few vertices own every edge; None without edges), ``p50``,
    ``p90``, ``p99`` (percentiles, linear interpolation as ``numpy.percentile``),
    ``top1_share`` (the share of the edge ends owned by the ``ceil(n / 100)`` vertices of
    largest degree; None without edges), ``balanced_inequality`` (KONECT's balanced inequality
    ratio: the share P of edge ends owned by the top 1 - P of the vertices; 0.5 for equal
    degrees, towards 1 for skewed ones; computed as ``max_k min(E_k, 1 - k / n)`` where E_k is
    the share owned by the k vertices of largest degree; None without edges).
``left_n``, ``right_n``, ``left_degree_mean``, ``left_degree_max``, ``right_degree_mean``,
``right_degree_max``
    The two sides of a bipartite graph (None for other graphs).
``degree_assortativity``
    The Pearson correlation, over the stored edges u->v, of the out-degree of u and the
    in-degree of v (for an undirected graph the degree at each end, over both directions of
    every edge), as ``networkx.degree_assortativity_coefficient`` computes for the same graph
    (NetworkX counts a self-loop twice in a degree; here once).  None when either side's degrees
    are constant or there are no edges.
``diameter_estimate``, ``diameter_sweeps``, ``reached_share``
    A lower bound on the diameter of the simple undirected view
    (:meth:`~onyx_rapids.graph.Graph.simple_undirected`; directions dropped): the largest
    finite BFS level found by ``sweeps`` BFS runs (double sweep: from the vertex of largest
    degree, then from the farthest vertex the previous sweep reached, the smallest index among
    ties), and the number of sweeps run (0 for a graph without edges, whose estimate is 0).
    Exact on trees and grids; on other graphs usually within a few levels of the diameter of
    the component of the largest-degree vertex, whose share of the vertices is
    ``reached_share`` (the share the first sweep reached).
``wedges``
    The exact number of wedges (paths of length 2, u-v-w with u != w) of the simple undirected
    view, ``sum_v C(d_v, 2)``.
``transitivity_estimate``, ``average_clustering_estimate``, ``clustering_samples``,
``clustering_exact``
    The share of closed wedges (``networkx.transitivity``: 3 triangles / wedges) and the mean
    local clustering coefficient (``networkx.average_clustering``, vertices of degree < 2
    counting 0) of the simple undirected view, from ``samples`` wedges drawn uniformly (seeded:
    a vertex with probability proportional to ``C(d, 2)``, two distinct neighbours uniformly;
    closure checked by binary search in the sorted CSR row); the mean clustering is the
    importance-weighted mean ``wedges / n * mean(closed / C(d_v, 2))``.  When the graph has at
    most ``samples`` wedges, every wedge is checked once and both are exact
    (``clustering_exact``); ``clustering_samples`` is the number of wedges checked.  The standard
    error of the sampled transitivity is at most ``0.5 / sqrt(samples)`` (0.002 at the
    default 65,536).  None for a graph without wedges.
``weight_mean``, ``weight_std``, ``weight_min``, ``weight_max``
    Of the first weight column over the stored edges (None when unweighted).

Example, on Zachary's karate club (34 members, 78 friendships; diameter 5)::

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> a = g.attributes()
    >>> a["n"], a["m"], a["edges"], a["kind"], a["weighted"], a["out_degree_max"]
    (34, 156, 78, 'undirected', False, 17)
    >>> a["diameter_estimate"], a["diameter_sweeps"], a["wedges"], a["clustering_exact"]
    (5, 2, 528, True)
    >>> round(a["transitivity_estimate"], 4), round(a["degree_assortativity"], 4)
    (0.2557, -0.4756)
    >>> a is g.attributes()  # cached on the graph
    True
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import device

__all__ = ["attributes", "VERSION", "DEFAULT_SAMPLES", "DEFAULT_SWEEPS", "STRUCTURAL",
           "QUICK_VERTICES", "QUICK_EDGES"]

#: The version of the keys and their definitions (a tuner's training table records it).
VERSION = 1
#: Wedges checked for the clustering estimates (at most 0.002 standard error).
DEFAULT_SAMPLES = 1 << 16
#: BFS sweeps of the diameter estimate (the double sweep).
DEFAULT_SWEEPS = 2

#: ``quick=True``: the vertices and the stored edges of the stratified samples.
QUICK_VERTICES = 1 << 13
QUICK_EDGES = 1 << 15

_PERCENTILES = (50, 90, 99)
#: The keys computed on the simple undirected view (BFS sweeps, wedges): the costly part,
#: None with ``structure=False``.
STRUCTURAL = ("diameter_estimate", "diameter_sweeps", "reached_share", "wedges",
              "transitivity_estimate", "average_clustering_estimate", "clustering_samples",
              "clustering_exact")


def attributes(g, *, samples: int = DEFAULT_SAMPLES, seed: int = 0,
               sweeps: int = DEFAULT_SWEEPS, structure: bool = True,
               quick: bool = False) -> dict:
    """The attributes of graph ``g`` (see the module docstring for every key), computed now;
    :meth:`onyx_rapids.graph.Graph.attributes` caches them on the graph.

    ``samples`` wedges are checked for the clustering estimates (all of them when the graph has
    no more), drawn with NumPy's generator seeded by ``seed``; ``sweeps`` BFS runs estimate
    the diameter (2: the double sweep).  ``structure=False`` leaves the :data:`STRUCTURAL`
    keys None: no simple undirected view is built and no BFS runs (degree statistics,
    assortativity and weights only: reductions over the graph's own arrays).

    ``quick=True`` (what a tuned call reads, issue 38: one small kernel and one transfer)
    implies ``structure=False`` and estimates from stratified samples what depends on every
    vertex or edge: the degree statistics (``mean`` and ``max`` stay exact), the zero and
    isolated shares from :data:`QUICK_VERTICES` vertices (every ``n / QUICK_VERTICES``-th,
    the same ones for both degree arrays), ``self_loops`` (hence ``edges`` and ``density``),
    the assortativity and the weight statistics from :data:`QUICK_EDGES` stored edges; exact
    where the graph has no more vertices or edges than that."""
    if quick:
        return _quick(g)
    samples, sweeps = int(samples), int(sweeps)
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if sweeps < 1:
        raise ValueError(f"sweeps must be at least 1, got {sweeps}")
    xp = device.xp
    n, m = g.n, g.m
    loops, assortativity, weight_stats = _edge_pass(g)
    bipartite = g.sides is not None
    left = g.id_map.left_count if bipartite else None
    counts = _edge_counts(g, loops, left)
    out: dict = {"version": VERSION, "n": n, "m": m, "edges": counts["edges"]}
    out["kind"] = "bipartite" if bipartite else ("directed" if g.directed else "undirected")
    out["multigraph"] = g.multigraph
    out["weighted"] = g.edge_weights is not None
    out.update(counts)

    # vertex shares: one transfer
    if n:
        shares = xp.stack([((g.out_degree == 0) & (g.in_degree == 0)).sum(),
                           (g.in_degree == 0).sum(), (g.out_degree == 0).sum()])
        isolated, zero_in, zero_out = (int(v) for v in device.to_host(shares))
        out["isolated_share"] = isolated / n
        out["zero_in_share"], out["zero_out_share"] = zero_in / n, zero_out / n
    else:
        out["isolated_share"] = out["zero_in_share"] = out["zero_out_share"] = None

    stats_out = _degree_stats(g.out_degree)
    stats_in = stats_out if g.in_degree is g.out_degree else _degree_stats(g.in_degree)
    for name, stats in (("out", stats_out), ("in", stats_in)):
        for key, value in stats.items():
            out[f"{name}_degree_{key}"] = value

    out.update(_sides(g, left))

    out["degree_assortativity"] = assortativity

    if structure:
        simple = _simple_view(g, loops)
        out.update(_diameter(simple, sweeps))
        out.update(wedge_estimate(simple, samples=samples, seed=seed))
    else:
        out.update(dict.fromkeys(STRUCTURAL))
    out.update(weight_stats)
    return out


def _edge_counts(g, loops: int, left) -> dict:
    """``edges``, ``density``, ``volume`` and ``self_loops`` of ``g`` with ``loops``
    self-loops (``left``: a bipartite graph's left side's vertex count, else None)."""
    n, m = g.n, g.m
    edges = m if g.directed else (m + loops) // 2
    if left is not None:
        possible = left * (n - left)
    else:
        possible = n * (n - 1) if g.directed else n * (n - 1) // 2
    return {"edges": edges, "density": edges / possible if possible else None, "volume": m,
            "self_loops": loops}


def _sides(g, left) -> dict:
    """``left_n``, ``right_n`` and each side's degree mean and max (None unless ``g`` is
    bipartite, ``left`` its left side's vertex count)."""
    out = {f"{side}_{key}": None for side in ("left", "right")
           for key in ("n", "degree_mean", "degree_max")}
    if left is None:
        return out
    xp = device.xp
    for side, d in (("left", g.out_degree[:left]), ("right", g.out_degree[left:])):
        count = int(d.shape[0])
        out[f"{side}_n"] = count
        if count:
            total, top = (int(v) for v in device.to_host(xp.stack(
                [d.sum(dtype=np.int64), d.max().astype(np.int64)])))
            out[f"{side}_degree_mean"] = total / count
            out[f"{side}_degree_max"] = top
    return out


# ---------------------------------------------------------------------------------- quick

def _quick(g) -> dict:
    """``attributes(g, quick=True)``: the degree part from stratified samples (see
    :func:`attributes`; the middle vertex and edge of equal strata), gathered on the device
    (:func:`_quick_samples`) and summarized on the host."""
    n, m = g.n, g.m
    bipartite = g.sides is not None
    weighted = g.edge_weights is not None
    out: dict = {"version": VERSION, "n": n, "m": m}
    out["kind"] = "bipartite" if bipartite else ("directed" if g.directed else "undirected")
    out["multigraph"] = g.multigraph
    out["weighted"] = weighted
    s_v, s_e = min(n, QUICK_VERTICES), min(m, QUICK_EDGES)
    left = g.id_map.left_count if bipartite else None
    if n == 0:
        out.update(_edge_counts(g, 0, left))
        out["isolated_share"] = out["zero_in_share"] = out["zero_out_share"] = None
        for name in ("out", "in"):
            out.update({f"{name}_degree_{key}": None for key in _SAMPLE_KEYS})
        out.update(_sides(g, left))
        out.update({"degree_assortativity": None, **dict.fromkeys(STRUCTURAL),
                    **dict.fromkeys(_WEIGHT_KEYS)})
        return out
    from .kernels import edge_stats as es

    degrees, total, low, high = _quick_samples(g, s_v, s_e)
    s = high.copy()  # each slot combined over the blocks as the kernel's tree combines it
    minima = [es.W_MIN, es.X_MIN, es.Y_MIN]
    sums = [*range(es.LOOPS + 1), es.ISOLATED, es.ZERO_IN, es.ZERO_OUT]
    s[minima], s[sums] = low[minima], total[sums]
    loops = int(round(s[es.LOOPS] / s_e * m)) if s_e else 0  # from the sampled edges
    out.update(_edge_counts(g, loops, left))
    out["isolated_share"] = float(s[es.ISOLATED] / s_v)
    out["zero_in_share"] = float(s[es.ZERO_IN] / s_v)
    out["zero_out_share"] = float(s[es.ZERO_OUT] / s_v)
    same = g.in_degree is g.out_degree  # undirected: one array's statistics serve both
    stats = _sample_stats(degrees[:1] if same else degrees, n, m,
                          (s[es.TOP_OUT], s[es.TOP_IN]))
    for name, sample in (("out", stats[0]), ("in", stats[0] if same else stats[1])):
        out.update({f"{name}_degree_{key}": value for key, value in sample.items()})
    out.update(_sides(g, left))  # exact: two slices' sums and maxima
    assortativity, weight_stats = _from_moments(s, s_e, weighted and s_e > 0,
                                                float(s[es.W_SHIFT]))
    out["degree_assortativity"] = assortativity
    out.update(dict.fromkeys(STRUCTURAL))
    out.update(weight_stats)
    return out


def _quick_samples(g, s_v: int, s_e: int) -> tuple:
    """(sampled out- and in-degrees as a (2, s_v) host array, then the slots of
    :func:`onyx_rapids.kernels.edge_stats.quick_sample` summed, smallest and largest over its
    blocks): one kernel, one transfer (n > 0)."""
    from . import operators as ops
    from .kernels import edge_stats as es

    weights = g.edge_weights if g.edge_weights is not None else _no_weights()
    blocks = device.stride_grid(max(g.n, s_v, s_e), es.BLOCK, 1)
    samples = _buffer(2 * s_v + blocks * es.QUICK_SLOTS)  # the kernel writes every entry
    ops.launch_kernel("attributes quick_sample", es.quick_sample, blocks, es.BLOCK,
                      g.out_offsets, g.out_indices, g.out_degree, g.in_degree, weights,
                      np.int64(s_v), np.int64(s_e), samples)
    host = device.to_host(samples)  # the one transfer
    parts = host[2 * s_v:].reshape(blocks, es.QUICK_SLOTS)
    return (host[:2 * s_v].reshape(2, s_v), parts.sum(axis=0), parts.min(axis=0),
            parts.max(axis=0))


_BUFFERS = threading.local()


def _buffer(size: int):
    """A float64 device array of ``size`` entries for the quick kernel's output, kept per
    thread, device and size (allocating one a call costs more than the kernel through RMM's
    CuPy allocator, as a process that has imported cuDF has; docs/performance.md)."""
    arrays = getattr(_BUFFERS, "arrays", None)
    if arrays is None:
        arrays = _BUFFERS.arrays = {}
    key = (device.BACKEND, device.xp.cuda.runtime.getDevice() if device.BACKEND == "gpu"
           else 0, size)
    a = arrays.get(key)
    if a is None:
        if len(arrays) >= 8:
            arrays.clear()
        a = arrays[key] = device.empty(size, np.float64)
    return a


_NO_WEIGHTS: dict = {}


def _no_weights():
    """A (0, 1) float32 device array: the kernels' ``weights`` of an unweighted graph."""
    if device.BACKEND not in _NO_WEIGHTS:
        _NO_WEIGHTS[device.BACKEND] = device.zeros((0, 1), np.float32)
    return _NO_WEIGHTS[device.BACKEND]


def _from_moments(s, count: int, weighted: bool, shift_w: float) -> tuple:
    """(degree assortativity, weight statistics) from the slots ``s`` of
    :mod:`onyx_rapids.kernels.edge_stats` over ``count`` edges (x and y shifted by one value
    each, w by ``shift_w``): the Pearson correlation of x and y, None where either is
    constant; the weights' mean, population std, min and max (None unless ``weighted``)."""
    from .kernels import edge_stats as es

    assortativity = None
    if count and s[es.X_MIN] < s[es.X_MAX] and s[es.Y_MIN] < s[es.Y_MAX]:
        sxx = s[es.SXX] - s[es.SX] * s[es.SX] / count
        syy = s[es.SYY] - s[es.SY] * s[es.SY] / count
        sxy = s[es.SXY] - s[es.SX] * s[es.SY] / count
        if sxx > 0 and syy > 0:
            assortativity = float(min(max(sxy / math.sqrt(sxx * syy), -1.0), 1.0))
    weight_stats = dict.fromkeys(_WEIGHT_KEYS)
    if weighted:
        mean = s[es.SW] / count
        var = s[es.SWW] / count - mean * mean
        weight_stats = {"weight_mean": float(shift_w + mean),
                        "weight_std": math.sqrt(max(float(var), 0.0)),
                        "weight_min": float(s[es.W_MIN]), "weight_max": float(s[es.W_MAX])}
    return assortativity, weight_stats


_SAMPLE_KEYS = ["mean", "max", "std", "skew", "gini"] + [f"p{q}" for q in _PERCENTILES] \
    + ["top1_share", "balanced_inequality"]


def _sample_stats(samples: np.ndarray, n: int, total: int, tops) -> list:
    """The degree statistics of :func:`_degree_stats` (a dict per row) from host samples of
    degree arrays (a row each, every degree when a row has all n): ``mean`` (``total / n``)
    and ``max`` (``tops``, a row's each) exact, the others those of the sample, the rows
    sorted at once (a dozen vector operations: on an H200 host each NumPy call costs ~10 us,
    and ``percentile`` and ``power`` took most of the quick attributes' time)."""
    d = np.sort(samples, axis=1)
    k, s = d.shape
    mass = d.sum(axis=1)
    dev = d - (mass / s)[:, None]
    dev2 = dev * dev
    std = np.sqrt(np.maximum(dev2.sum(axis=1) / s, 0.0))
    third = np.einsum("ij,ij->i", dev2, dev) / s
    pos = np.array(_PERCENTILES, dtype=np.float64) / 100.0 * (s - 1)  # numpy's linear rule
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, s - 1)
    percentiles = d[:, lo] + (d[:, hi] - d[:, lo]) * (pos - lo)
    ranks = np.arange(1, s + 1, dtype=np.float64)
    safe = np.where(mass > 0, mass, 1.0)  # rows without edges: their values are not used
    gini = 2.0 * (d @ ranks) / (s * safe) - (s + 1.0) / s
    largest = np.cumsum(d[:, ::-1], axis=1)  # the k largest degrees' sum, k = 1..s
    largest /= safe[:, None]  # ... and their share
    balanced = np.minimum(largest, 1.0 - ranks / s).max(axis=1)
    out = []
    for r in range(k):
        sd = float(std[r])
        stats = {"mean": total / n, "max": int(round(float(tops[r]))), "std": sd,
                 "skew": float(third[r]) / sd ** 3 if sd > 0 else None}
        edges = mass[r] > 0
        stats["gini"] = float(gini[r]) if edges else None
        stats.update({f"p{q}": float(v) for q, v in zip(_PERCENTILES, percentiles[r])})
        stats["top1_share"] = float(largest[r, -(-s // 100) - 1]) if edges else None
        stats["balanced_inequality"] = float(balanced[r]) if edges else None
        out.append({key: stats[key] for key in _SAMPLE_KEYS})
    return out


# ---------------------------------------------------------------------------------- degrees

def _degree_stats(degree) -> dict:
    """mean, max, std, skew, gini, p50/p90/p99, top1_share, balanced_inequality of one degree
    array (see the module docstring), from its histogram (one ``bincount``, then arrays of
    max-degree + 1 entries instead of a sort of n values) and one transfer.  Exact: the
    sorted degrees are the histogram's runs, and every statistic is a sum over them."""
    keys = ["mean", "max", "std", "skew", "gini"] + [f"p{q}" for q in _PERCENTILES] \
        + ["top1_share", "balanced_inequality"]
    n = int(degree.shape[0])
    if n == 0:
        return dict.fromkeys(keys)
    xp = device.xp
    count = xp.bincount(degree)  # count[j]: vertices of degree j; the last entry is the max
    value = xp.arange(count.shape[0], dtype=np.float64)
    c = count.astype(np.float64)
    upto = xp.cumsum(count)  # vertices of degree <= j: the sorted run of j ends there
    before = (upto - count).astype(np.float64)  # ... and starts after these
    mass = xp.cumsum(value * c)  # the degree sum of the vertices of degree <= j
    total = mass[-1]
    mean = total / n
    dev = value - mean
    var = (c * dev * dev).sum() / n
    third = (c * dev * dev * dev).sum() / n
    safe_total = xp.where(total > 0, total, 1.0)
    # gini: ranks 1..n over the ascending degrees; run j holds ranks before+1 .. upto
    rank_sum = (value * c * (before + 1.0 + upto) * 0.5).sum()
    gini = 2.0 * rank_sum / (n * safe_total) - (n + 1.0) / n
    values = [total, value[-1], var, third, gini]
    positions = []
    for q in _PERCENTILES:  # numpy.percentile's linear rule, on the sorted degrees
        pos = q / 100.0 * (n - 1)
        lo = int(math.floor(pos))
        positions += [lo, min(lo + 1, n - 1)]
    # the degree at sorted index k: the first run ending past k
    at = xp.searchsorted(upto, xp.asarray(positions, dtype=upto.dtype), side="right")
    at = at.astype(np.float64)
    for i, q in enumerate(_PERCENTILES):
        pos = q / 100.0 * (n - 1)
        values.append(at[2 * i] + (at[2 * i + 1] - at[2 * i]) * (pos - math.floor(pos)))
    # top1_share: the ceil(n / 100) largest degrees, total less the n - top smallest
    top = -(-n // 100)
    rest = n - top  # the sum of the `rest` smallest: whole runs below run j, part of run j
    j = xp.searchsorted(upto, xp.asarray([rest], dtype=upto.dtype), side="left")
    j = xp.minimum(j, count.shape[0] - 1)
    smallest = (mass[j] - value[j] * c[j]) + value[j] * (rest - before[j])
    values.append(((total - smallest) / safe_total)[0])
    # balanced inequality: max over k of min(E_k, 1 - k / n), E_k the share of the k largest.
    # Descending, run j holds k = above+1 .. above+c_j (above: vertices of larger degree),
    # where E_k = (mass_above + (k - above) j) / total rises and 1 - k / n falls: the best k
    # of a run is the integer next to where they cross, clipped to the run.
    above = n - upto.astype(np.float64)
    mass_above = total - mass
    cross = (1.0 - (mass_above - above * value) / safe_total) / (value / safe_total + 1.0 / n)
    best = xp.zeros(1, dtype=np.float64)
    for k in (xp.floor(cross), xp.ceil(cross)):
        k = xp.clip(k, above + 1.0, above + c)
        share = xp.minimum((mass_above + (k - above) * value) / safe_total, 1.0 - k / n)
        best = xp.maximum(best, xp.where(c > 0, share, 0.0).max())
    values.append(best[0])
    host = device.to_host(xp.stack([xp.asarray(v, dtype=np.float64) for v in values]))
    total, top_degree, var, third, gini = (float(v) for v in host[:5])
    std = math.sqrt(max(var, 0.0))
    stats = {"mean": total / n, "max": int(round(top_degree)), "std": std,
             "skew": third / std ** 3 if std > 0 else None,
             "gini": gini if total > 0 else None}
    for i, q in enumerate(_PERCENTILES):
        stats[f"p{q}"] = float(host[5 + i])
    stats["top1_share"] = float(host[5 + len(_PERCENTILES)]) if total > 0 else None
    stats["balanced_inequality"] = float(host[6 + len(_PERCENTILES)]) if total > 0 else None
    return stats


_WEIGHT_KEYS = ("weight_mean", "weight_std", "weight_min", "weight_max")


def _edge_pass(g) -> tuple:
    """(self-loops, degree assortativity, weight statistics) from one pass over the stored
    edges (:func:`onyx_rapids.kernels.edge_stats.edge_moments`).  The assortativity is the
    Pearson correlation of (out-degree of the source, in-degree of the target) over the
    edges, None where either side is constant or there are no edges; the weights' mean,
    population std, min and max are over the first weight column (None when unweighted)."""
    if g.m == 0:
        return 0, None, dict.fromkeys(_WEIGHT_KEYS)
    from . import operators as ops
    from .kernels import edge_stats as es

    xp = device.xp
    weighted = g.edge_weights is not None
    weights = g.edge_weights if weighted else xp.zeros((0, 1), dtype=np.float32)
    mean_degree = xp.full(2, g.m / g.n, dtype=np.float64)
    first = weights[:1, 0].astype(np.float64) if weighted else xp.zeros(1, dtype=np.float64)
    shift = xp.concatenate([mean_degree, first])  # on the device: no transfer before the pass
    out = es.start_values(xp)
    ops.launch_kernel("attributes edge_moments", es.edge_moments,
                      device.stride_grid(g.m, es.BLOCK, 4), es.BLOCK, g.edge_sources,
                      g.out_indices, g.out_degree, g.in_degree, weights, shift, out)
    s = device.to_host(xp.concatenate([out, shift[2:]]))  # the one transfer
    count = int(s[es.LOOPS])
    assortativity, weight_stats = _from_moments(s, g.m, weighted, float(s[-1]))
    return count, assortativity, weight_stats


def _simple_view(g, loops: int):
    """The simple undirected view; the graph itself when it is one already (undirected, not a
    multigraph, no self-loops: its adjacency is the view's), which saves building a copy."""
    if not g.directed and not g.multigraph and loops == 0:
        return g
    return g.simple_undirected()


def _bfs_levels(s, source: int):
    """Hop distances (int32, UNREACHED where none) from internal vertex ``source`` of ``s``,
    by the BFS engine (:func:`onyx_rapids.acc`) that ``onyx_rapids.bfs`` runs: its defaults
    (the fused kernel, direction auto) on a GPU; plain pushes under the simulator, whose
    simulated persistent kernel costs more there."""
    from . import frontier, properties
    from .acc import AccOptions, acc
    from .algorithms.bfs import UNREACHED, hop, reached

    distance = properties.vertex_property(s, 1, fill=UNREACHED, dtype=np.int32)[:, 0]
    distance[source] = 0
    options = AccOptions(direction="push") if device.is_simulator() \
        else AccOptions(direction="auto", fused=True)
    acc(s, distance, hop, combine="min", settled=reached,
        active_in=frontier.from_vertices(s.n, [source]), same_offers=True, options=options)
    return distance, UNREACHED


def _diameter(s, sweeps: int) -> dict:
    """``diameter_estimate``, ``diameter_sweeps``, ``reached_share`` by BFS sweeps on the simple
    undirected graph ``s``."""
    if s.n == 0:
        return {"diameter_estimate": None, "diameter_sweeps": 0, "reached_share": None}
    xp = device.xp
    if s.m == 0:
        return {"diameter_estimate": 0, "diameter_sweeps": 0, "reached_share": 1 / s.n}
    source = int(xp.argmax(s.out_degree))
    best, reached_share, run = 0, None, 0
    for run in range(1, sweeps + 1):
        distance, unreached = _bfs_levels(s, source)
        level = xp.where(distance == unreached, -1, distance)
        far = xp.argmax(level)
        counts = xp.stack([level[far].astype(np.int64), far.astype(np.int64),
                           (level >= 0).sum().astype(np.int64)])
        depth, far, seen = (int(v) for v in device.to_host(counts))
        if reached_share is None:
            reached_share = seen / s.n
        best = max(best, depth)
        if far == source:
            break
        source = far
    return {"diameter_estimate": best, "diameter_sweeps": run, "reached_share": reached_share}


# ---------------------------------------------------------------------------------- wedges

def _pair(k, xp):
    """The k-th pair (i, j), i < j, in the order (0,1), (0,2), (1,2), (0,3), ...: j the
    largest with C(j, 2) <= k, i = k - C(j, 2) (float square root, then corrected)."""
    kf = k.astype(np.float64)
    j = xp.floor((1.0 + xp.sqrt(1.0 + 8.0 * kf)) / 2.0).astype(np.int64)
    j = xp.where(j * (j - 1) // 2 > k, j - 1, j)
    j = xp.where((j + 1) * j // 2 <= k, j + 1, j)
    return k - j * (j - 1) // 2, j


def wedge_estimate(s, *, samples: int = DEFAULT_SAMPLES, seed: int = 0) -> dict:
    """``wedges``, ``transitivity_estimate``, ``average_clustering_estimate``,
    ``clustering_samples`` and ``clustering_exact`` of a simple undirected graph ``s`` (the
    module docstring defines them): every wedge when there are at most ``samples``, else
    ``samples`` wedges drawn uniformly with NumPy's generator seeded by ``seed`` (drawn on
    the host, the same on every backend, and copied to the device)."""
    xp = device.xp
    n = s.n
    none = {"wedges": 0, "transitivity_estimate": None, "average_clustering_estimate": None,
            "clustering_samples": 0, "clustering_exact": True}
    if n == 0 or s.m == 0:
        return none
    d = s.out_degree.astype(np.int64)
    per_vertex = d * (d - 1) // 2
    ends = xp.cumsum(per_vertex)  # wedges of vertices 0..v
    total = int(ends[-1])
    if total == 0:
        return none
    exact = total <= samples
    if exact:
        w = xp.arange(total, dtype=np.int64)
    else:
        draws = np.random.default_rng(seed).integers(0, total, size=samples, dtype=np.int64)
        w = device.asarray(draws)
    v = xp.searchsorted(ends, w, side="right")  # the wedge's centre
    i, j = _pair(w - (ends[v] - per_vertex[v]), xp)
    offsets = s.out_offsets.astype(np.int64)
    start = offsets[v]
    a = s.out_indices[start + i].astype(np.int64)
    b = s.out_indices[start + j]
    # closure: is b in a's sorted row? a fixed number of bisection steps for every wedge
    lo, hi = offsets[a], offsets[a + 1]
    end = hi
    steps = int(math.ceil(math.log2(int(s.out_degree.max()) + 1))) + 1
    last = s.m - 1
    for _ in range(steps):
        mid = (lo + hi) // 2
        go = s.out_indices[xp.minimum(mid, last)] < b
        go &= lo < hi
        lo = xp.where(go, mid + 1, lo)
        hi = xp.where(go, hi, mid)
    closed = (lo < end) & (s.out_indices[xp.minimum(lo, last)] == b)
    weight = closed / per_vertex[v].astype(np.float64)  # closed / C(d_v, 2)
    host = device.to_host(xp.stack([closed.mean(dtype=np.float64), weight.mean()]))
    checked = int(w.shape[0])
    return {"wedges": total, "transitivity_estimate": float(host[0]),
            "average_clustering_estimate": float(host[1]) * total / n,
            "clustering_samples": checked, "clustering_exact": exact}
