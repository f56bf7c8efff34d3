"""Betweenness centrality of vertices and edges (docs/algorithms.md, "betweenness_centrality"),
by Brandes' algorithm run for many sources at once.

    bc(v) = sum_{s != v != t} sigma_st(v) / sigma_st      (shortest paths by hops)

Per source s, Brandes: a breadth-first search counts the shortest paths ``sigma(s, v)``, then
the dependencies are accumulated level by level, farthest first,

    delta(s, v) = sum_{v -> w, d(s, w) = d(s, v) + 1} sigma(s, v) / sigma(s, w) (1 + delta(s, w))

and ``bc(v) = sum_{s != v} delta(s, v)``.  Here a batch of k sources runs as k *lanes* of
n x k properties, the way the k-source bfs runs (:mod:`.bfs`): hop distances ``dist`` (int32),
path counts ``sigma`` and dependencies ``delta`` (float64: path counts overflow integers and
lose float32's precision).  The forward phase is one level-synchronous search over the union
frontier, each edge map offering ``sigma[u, f]`` along the edges that reach a lane's next level
(:func:`count_paths`, a sum) and a vertex map settling the vertices a lane reached
(:func:`settle`); the backward phase walks the levels down on the transposed graph, each
vertex pulling (or receiving pushed) the dependencies of its successors one level further
(:func:`dependency`).  Each level keeps the frontier of the forward phase (a bit-vector), and
the backward phase takes the forward phase's push / pull choice of the same pair of levels.

Long searches (a grid, a road network): with the lanes out of phase, a vertex is in the union
frontier at up to k levels and each time all its k lanes are read, ~n k^2 reads in all
instead of Brandes' n k.  So a search still going at level ``DENSE_LEVELS`` goes on
*sparse*: a queue of the (vertex, lane) pairs of each level, a thread per pair, one
compare-and-swap per pair reached (:mod:`onyx_rapids.kernels.brandes`, ``forward_pairs``);
the queue holds the pairs in level order, each level's start kept on the host (one count
read a level, as the dense levels' frontier test).  The backward phase runs those levels
down on the same pairs (``backward_pairs``, a pull over the out-edges), then the dense levels
as above.  ``direction`` only chooses for the dense levels.

Edge betweenness sums each edge's dependency over the lanes with one kernel of its own
(:mod:`onyx_rapids.kernels.brandes`: an edge's result belongs to the edge, which the operators'
vertex reductions cannot express).

Batches: ``MAX_LANES`` sources at most (the feature-aware mapping's largest group), fewer when
the batch's three properties and the sparse levels' queue (``LANE_BYTES``, 28 bytes a vertex
a lane) would take more than ``MEMORY_FRACTION`` of the device memory the library may use;
every batch gets the same number of lanes (the last one padded with empty lanes), so one set of kernels serves them all.

Scaling follows NetworkX 3.6's ``_rescale``, which cuGraph's C++ follows too (see
:func:`rescale_factors`).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
from numba import cuda

from .. import device, frontier, inputs, io, memory, operators as ops, properties as props
from ..graph import Graph
from ..kernels import brandes
from ..registry import Input, algorithm
from ._common import Info, choose_direction, finish
from .bfs import UNREACHED

#: Most sources in one batch (lanes of the n x k properties): the feature-aware mapping's
#: largest group.  Tests lower it to run several batches.
MAX_LANES = ops.MAX_GROUP
#: A batch's properties take at most this fraction of :func:`onyx_rapids.memory.device_available`.
MEMORY_FRACTION = 0.5
#: Per vertex and lane: dist (int32), sigma and delta (float64), the sparse levels' queue
#: of (vertex, lane) pairs (int64).
LANE_BYTES = 4 + 8 + 8 + 8
#: Levels the forward phase runs dense (the union frontier, every lane of an active vertex);
#: a search still going at this level is a long one (lanes out of phase would read each
#: vertex's k lanes at up to k levels) and goes on as (vertex, lane) pairs.  At least 1;
#: tests lower it to run the sparse levels on small graphs.
DENSE_LEVELS = 32


@cuda.jit(device=True)
def count_paths(f, u, v, e, dist, sigma, level, unreached):
    """The paths u gives v in lane f: ``sigma[u, f]`` when u is at ``level`` and v not reached."""
    if dist[u, f] == level and dist[v, f] == unreached:
        return sigma[u, f]
    return 0.0


@cuda.jit(device=True)
def settle(f, v, dist, sigma, level, unreached):
    """v joins lane f's next level when paths reached it there."""
    if dist[v, f] == unreached and sigma[v, f] > 0.0:
        dist[v, f] = level + 1
        return True
    return False


@cuda.jit(device=True)
def dependency(f, w, v, e, dist, sigma, delta, level):
    """On the transposed graph (edge w -> v for v -> w): what successor w, one level further,
    gives v at ``level``: ``sigma[v] / sigma[w] * (1 + delta[w])``."""
    if dist[v, f] == level and dist[w, f] == level + 1:
        return sigma[v, f] / sigma[w, f] * (1.0 + delta[w, f])
    return 0.0


class SampleSize(inputs.Count):
    """``k``: how many sources to sample (a list of vertices is ``sources=`` here)."""

    def check(self, value, arg):
        if isinstance(value, (list, tuple, np.ndarray)) or io.is_series(value) \
                or io.is_frame(value):
            raise ValueError(f"{arg} is a number of sampled sources; give a list of vertices "
                             "(cuGraph's k=list) as sources= instead")
        return super().check(value, arg)

    def default(self, ctx, name, chosen):
        """The command line's ``--k``, at most the graph's vertex count (``--k 64`` on the
        34 vertices of karate samples them all: the exact betweenness); the Python call
        refuses a k above n, as NetworkX and cuGraph do."""
        return None if ctx.k is None else min(ctx.k, ctx.g.n)


K_INPUT = Input("k", SampleSize(1, optional=True, meaning="sources sampled"), required=False,
                help="sources sampled uniformly (seeded by --param seed=S; at most n)")
SOURCES_INPUT = Input("sources", inputs.VERTICES, required=False,
                      help="the sources of the paths counted (default: every vertex)")
PARAMS = dict(normalized=inputs.FLAG, endpoints=inputs.FLAG, seed=inputs.Int(0, optional=True))
OPTIONS = dict(direction=None, pull_fraction=None, feature_aware=None, block_size=None)


def sample_sources(g, k: int, seed=None):
    """The ``k`` sources ``betweenness_centrality(g, k=k, seed=seed)`` uses, as original ids
    (labels on a labelled graph; ``(side, id)`` pairs on a bipartite one): drawn without
    replacement by ``numpy.random.default_rng(seed).choice(n, k, replace=False)`` over the
    vertices in ascending id order (so a reordered graph draws the same ones).  Give them to
    cuGraph as its ``k=list`` to run both on the same sources.

    >>> import pandas as pd, onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 3]}))
    >>> len(sample_sources(g, 2, seed=7))
    2
    """
    internal = _sample(g, _checked_k(g, k), seed)
    ids = g.id_map.original(internal)
    if g.sides is None:
        return ids
    sides = device.to_host(g.sides)[internal]
    return [(g.side_names[s], i) for s, i in zip(sides.tolist(), ids.tolist())]


def _sample(g, k: int, seed) -> np.ndarray:
    """Internal ids of ``k`` sources drawn as :func:`sample_sources` says."""
    order = inputs.id_order(g)
    return order[np.random.default_rng(seed).choice(g.n, size=k, replace=False)].astype(np.int64)


def _checked_k(g, k) -> int:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= g.n:
        raise ValueError(f"k={k!r}: sample at least 1 and at most the graph's {g.n} vertices "
                         "(k=None uses every vertex)")
    return int(k)


def _sources(g, k, seed, sources):
    """``(internal ids of the sources, every)``: sampled (``k``), given (``sources``) or every
    vertex (``every`` True); ValueError naming what is wrong."""
    if k is not None and sources is not None:
        raise ValueError(f"give k (sources sampled) or sources (a list), not both (k={k!r})")
    if seed is not None and k is None:
        raise ValueError(f"seed={seed!r} seeds the sampling of k sources; without k it would "
                         "be ignored: pass k, or drop seed")
    if sources is not None:
        if io.is_series(sources):  # a pandas or cuDF Series of ids (cuGraph's k=Series)
            sources = (sources.to_pandas() if hasattr(sources, "to_pandas") else sources).tolist()
        chosen = inputs.starts(g, None, sources)
        unique, counts = np.unique(chosen, return_counts=True)
        if (counts > 1).any():
            twice = g.id_map.describe(unique[counts > 1][:5])
            raise ValueError(f"sources name vertices more than once ({', '.join(twice)}); each "
                             "source counts its paths once: pass distinct vertices")
        return chosen, False
    if k is not None:
        return _sample(g, _checked_k(g, k), seed), False
    return np.arange(g.n, dtype=np.int64), True


def rescale_factors(n: int, count: int, every: bool, *, normalized: bool, directed: bool,
                    endpoints: bool) -> tuple[float, float]:
    """``(for a source, for any other vertex)``: the factors of the raw sums, as NetworkX 3.6's
    ``_rescale`` (cuGraph's C++ scales the same way).  With ``N = n`` (endpoints) or ``n - 1``
    and ``K = N`` (every vertex a source) or the number of sources: normalized divides by the
    ``K (N - 1)`` ordered pairs, else ``N / K`` extrapolates to all sources and an undirected
    graph halves (each pair counted both ways).  Sampled sources without endpoints: a source
    counts ``K - 1`` other sources (NaN when K = 1).  ``N < 2``: no scaling.

    The undirected 3-path counts the middle vertex on the ordered pairs (0, 2) and (2, 0),
    a raw 2, normalized by the 2 pairs it can lie between:

    >>> rescale_factors(3, 3, True, normalized=True, directed=False, endpoints=False)
    (0.5, 0.5)
    """
    N = n if endpoints else n - 1
    if N < 2:
        return 1.0, 1.0
    K = N if every else count
    halve = 1 if directed else 2
    if every or endpoints:
        scale = 1 / (K * (N - 1)) if normalized else N / (K * halve)
        return scale, scale
    if normalized:
        return (1 / ((K - 1) * (N - 1)) if K > 1 else math.nan), 1 / (K * (N - 1))
    return (N / ((K - 1) * halve) if K > 1 else math.nan), N / (K * halve)


def _transposed(g):
    """``g`` with every edge reversed (the backward phase walks successors): ``g`` itself when
    undirected, else a Graph on ``g``'s arrays with CSR and CSC swapped, cached on ``g``."""
    if not g.directed:
        return g

    def build():
        xp = device.xp
        inverse = xp.empty_like(g.in_edge_ids)  # CSR position (of the reversed graph) of each
        inverse[g.in_edge_ids] = xp.arange(g.m, dtype=g.in_edge_ids.dtype)  # CSC entry
        if g.placement == "host":
            inverse = memory.to_host_placed(inverse)
        return Graph(vertices=g.vertices, out_offsets=g.in_offsets, out_indices=g.in_indices,
                     in_offsets=g.out_offsets, in_indices=g.out_indices, in_edge_ids=inverse,
                     out_degree=g.in_degree, in_degree=g.out_degree, directed=True,
                     sides=g.sides, side_names=g.side_names, placement=g.placement,
                     vertex_order=g.vertex_order, labels=g.id_map.labels)

    return g.cached(("betweenness", "transposed"), build)


def _lanes(g, count: int) -> tuple[int, int]:
    """``(lanes, batches)``: ``count`` sources in batches of equal lanes (see the module doc)."""
    room = int(memory.device_available() * MEMORY_FRACTION) // max(g.n * LANE_BYTES, 1)
    batches = math.ceil(count / min(MAX_LANES, max(1, room), count))
    return math.ceil(count / batches), batches


class SparseLevels(NamedTuple):
    """The levels ``first`` on of a long search as (vertex, lane) pairs ``p = v * lanes + f``:
    level ``first + i``'s pairs are ``queue[offsets[i]:offsets[i + 1]]`` (the last two
    offsets are equal: the level that reached nothing more)."""

    queue: object
    offsets: list
    first: int

    @property
    def count(self) -> int:
        """Levels run sparse (one launch each)."""
        return len(self.offsets) - 2


def _flat(a):
    """The row-major n x lanes array ``a`` as a 1-D view: entry ``[v, f]`` at ``v * lanes + f``."""
    assert a.flags.c_contiguous, "(vertex, lane) pair indices need row-major n x lanes arrays"
    return a.reshape(-1)


def _pair_grid(items, block):
    return device.stride_grid(items, block, 8)


def _forward(g, dist, sigma, lanes, starts, execution, options, info):
    """The k-lane search: ``dist`` and ``sigma`` filled.  Returns the frontier of each dense
    level (and of level ``DENSE_LEVELS`` when the search went on), the direction each dense
    level's edges went, and the :class:`SparseLevels` past ``DENSE_LEVELS`` (None if none)."""
    args = dict(dist=dist, sigma=sigma, unreached=UNREACHED)
    active = frontier.from_vertices(g.n, starts)
    levels, ways, sparse = [], [], None
    while frontier.any_active(active):
        levels.append(active)
        if len(levels) > DENSE_LEVELS:
            sparse = _sparse_forward(g, dist, sigma, lanes, DENSE_LEVELS, execution)
            break
        way = choose_direction(g, active, execution.direction, execution.pull_fraction)
        ways.append(way)
        args["level"] = np.int32(len(levels) - 1)
        if way == "push":
            reached = ops.edgemap(g, count_paths, "sigma", args, k=lanes, active_in=active,
                                  active_out=frontier.empty(g.n), options=options)
            active = ops.vertexmap(g, ops.Vertex(settle), args, k=lanes, active_in=reached,
                                   active_out=frontier.empty(g.n), options=options)
        else:
            active = ops.foldmap(g, [ops.Edge(count_paths, "sigma"), ops.Vertex(settle)], args,
                                 k=lanes, active_in=active, active_out=frontier.empty(g.n),
                                 options=options)
    run_sparse = ["sparse"] * (sparse.count if sparse else 0)
    info.iterations += len(ways) + len(run_sparse)
    info.directions.extend(ways + run_sparse)
    info.variant["sparse_levels"] += len(run_sparse)
    return levels, ways, sparse


def _sparse_forward(g, dist, sigma, lanes, first, execution) -> SparseLevels:
    """Levels ``first`` on, a launch of :func:`~onyx_rapids.kernels.brandes.forward_pairs`
    each, from the pairs at ``first`` (where ``dist`` is ``first``), until one reaches nothing;
    one read of the queue's tail a level."""
    flat_dist, flat_sigma = _flat(dist), _flat(sigma)
    start = device.xp.flatnonzero(flat_dist == first)
    queue = _flat(props.vertex_property(g, lanes, fill=-1, dtype=np.int64))  # room for all
    queue[:start.shape[0]] = start
    tail = device.full(1, start.shape[0], np.int64)
    offsets = [0, int(start.shape[0])]
    block = device.block_threads(execution.block_size, 256)
    level = first
    while offsets[-1] > offsets[-2]:
        lo, hi = offsets[-2:]
        ops.launch_kernel("brandes forward_pairs", brandes.forward_pairs,
                          _pair_grid(hi - lo, block), block, g.out_offsets, g.out_indices,
                          queue, np.int64(lo), np.int64(hi), tail, np.int64(lanes), flat_dist,
                          flat_sigma, np.int32(level), np.int32(UNREACHED))
        offsets.append(int(device.to_host(tail)[0]))
        level += 1
    return SparseLevels(queue, offsets, first)


def _sparse_backward(g, dist, sigma, delta, lanes, sparse, execution):
    """``delta`` of the sparse levels, the last but one down to ``sparse.first``: a launch of
    :func:`~onyx_rapids.kernels.brandes.backward_pairs` each (the last level keeps 0)."""
    flat = (_flat(dist), _flat(sigma), _flat(delta))
    block = device.block_threads(execution.block_size, 256)
    offsets = sparse.offsets
    for i in range(sparse.count - 2, -1, -1):
        lo, hi = offsets[i], offsets[i + 1]
        ops.launch_kernel("brandes backward_pairs", brandes.backward_pairs,
                          _pair_grid(hi - lo, block), block, g.out_offsets, g.out_indices,
                          sparse.queue, np.int64(lo), np.int64(hi), np.int64(lanes), *flat,
                          np.int32(sparse.first + i))


def _backward(g, dist, sigma, lanes, forward, execution, options):
    """``delta`` of every lane: the sparse levels' (if any), then the dense levels
    ``len(levels) - 2`` down to 1 (a source keeps 0)."""
    levels, ways, sparse = forward
    delta = props.vertex_property(g, lanes, fill=0.0, dtype=np.float64)
    if sparse is not None:
        _sparse_backward(g, dist, sigma, delta, lanes, sparse, execution)
    args = dict(dist=dist, sigma=sigma, delta=delta)
    reverse = _transposed(g)
    for level in range(len(levels) - 2, 0, -1):
        args["level"] = np.int32(level)
        ops.edgemap(reverse, dependency, "delta", args, k=lanes, active_in=levels[level + 1],
                    direction=ways[level], options=options)
    return delta


def _batches(g, starts, execution, info):
    """Brandes on ``starts`` (internal ids), a batch at a time: yields ``(lane sources, dist,
    sigma, delta)``, a lane's source -1 where the batch is padded."""
    if starts.size == 0:  # a graph without vertices
        return
    lanes, batches = _lanes(g, starts.size)
    info.variant.update(sources=int(starts.size), lanes=lanes, batches=batches)
    options = ops.MapOptions(feature_aware=execution.feature_aware,
                             block_size=execution.block_size)
    padded = np.full(lanes * batches, -1, dtype=np.int64)
    padded[:starts.size] = starts
    for batch in padded.reshape(batches, lanes):
        real = np.flatnonzero(batch >= 0)
        dist = props.vertex_property(g, lanes, fill=UNREACHED, dtype=np.int32)
        sigma = props.vertex_property(g, lanes, fill=0.0, dtype=np.float64)
        at = (device.asarray(batch[real]), device.asarray(real))
        dist[at], sigma[at] = 0, 1.0
        forward = _forward(g, dist, sigma, lanes, batch[real], execution, options, info)
        yield batch, dist, sigma, _backward(g, dist, sigma, lanes, forward, execution, options)


class WeightNotBuilt(NotImplementedError, ValueError):
    """``weight=`` given: weighted betweenness is not built (a NotImplementedError, as
    cuGraph's, and a ValueError, the library's refusal of an argument)."""


def _check_graph(g, name: str, weight):
    if weight is not None:
        raise WeightNotBuilt(
            f"{name}: weight={weight!r}: weighted betweenness (shortest paths by weight, in "
            "Dijkstra order) is not built yet; pass weight=None to count paths by hops (the "
            "graph's edge weights are then not used)")
    if g.multigraph:
        raise ValueError(f"{name}: the graph keeps parallel edges (multigraph=True), which "
                         "cuGraph counts as distinct paths and NetworkX as one; build it with "
                         "multigraph=False")


def _start(g, name, k, seed, sources, weight, execution):
    _check_graph(g, name, weight)
    drawn = execution.approximation is not None and k is None and sources is None
    starts, every = _sources(g, k, None if drawn else seed, sources)  # (seed: _fewer's draw)
    info = Info(converged=True, directions=[],
                variant=dict(feature_aware=execution.feature_aware,
                             direction=execution.direction, sparse_levels=0))
    if execution.approximation is not None:
        starts, every = _fewer(g, starts, every, execution.approximation, seed, info)
    return starts, every, info


def _fewer(g, starts, every, approximation, seed, info):
    """The sources of a ``source_fraction`` run (:class:`~onyx_rapids.Approximation`):
    ``ceil(fraction * s)`` of the s sources, at least 2 (one source has no other to scale
    by): the first of the sampled or given ones (a sample's first are a sample), or drawn
    by ``seed`` where every vertex was a source.  ``info`` records the knob and the counts."""
    fraction = approximation.source_fraction
    count = min(starts.size, max(2, math.ceil(fraction * starts.size)))
    info.approximation = approximation.knobs()
    info.estimate = dict(sources=int(count), exact_sources=int(starts.size))
    if count == starts.size:
        return starts, every
    return (_sample(g, count, seed) if every else starts[:count]), False


@algorithm("betweenness_centrality",
           summary="shortest-path betweenness of every vertex (Brandes, many sources at once)",
           inputs=(K_INPUT, SOURCES_INPUT), columns=("vertex", "betweenness_centrality"),
           options=OPTIONS, defaults=dict(direction="auto"),
           params=PARAMS, iterative=True, approximation=dict(source_fraction=None))
def betweenness_centrality(g, k=None, normalized=True, endpoints=False, seed=None,
                           sources=None, weight=None, *, execution, return_info=False):
    """Betweenness of every vertex: ``vertex``, ``betweenness_centrality`` (float64), as
    NetworkX's and cuGraph's ``betweenness_centrality``.

    Parameters
    ----------
    g : Graph
        Directed or undirected, simple (``multigraph=False``); paths are counted by hops.
    k : int, optional
        Sample ``k`` sources (1 <= k <= n; :func:`sample_sources` says how); the sums are
        extrapolated to all sources.  None (default): every vertex is a source.
    normalized : bool
        Divide by the number of (source, target) pairs (see :func:`rescale_factors`).
    endpoints : bool
        Count a path's two ends among the vertices it passes.
    seed : int, optional
        Seeds the sampling of ``k`` sources (None: a fresh draw each call); only with ``k``
        (or an ``approximation`` with ``source_fraction``, which draws its sources with it).
    sources : list (or Series) of vertex ids, optional
        The sources themselves (cuGraph's ``k=list``), scaled as ``k`` sampled ones; not with
        ``k``.
    weight : None
        Weighted betweenness is not built: anything but None raises NotImplementedError.
    execution : Execution, optional
        ``direction`` ("auto": push while the frontier's edges are under ``pull_fraction`` of
        all edges), ``pull_fraction`` and ``feature_aware`` (True: a thread per source lane)
        choose for the dense levels (the first ``DENSE_LEVELS`` of a search; the later ones
        run as (vertex, lane) pairs); ``block_size`` for all.
    return_info : bool
        Also return a RunInfo: ``iterations`` (search levels over all batches),
        ``directions`` (per level: "push", "pull", or "sparse" past ``DENSE_LEVELS``),
        ``sparse_levels`` (how many of them were sparse), ``sources``, ``lanes`` and
        ``batches``.

    With ``k`` (or ``sources``) and ``endpoints=False`` a source is scaled by the other
    ``k - 1`` sources, so with ``k=1`` its value is NaN (as NetworkX's).

    Example::

        >>> bc = betweenness_centrality(g, k=64, seed=1)             # doctest: +SKIP
        >>> bc.nlargest(3, "betweenness_centrality")                  # doctest: +SKIP
    """
    name = "betweenness_centrality"
    starts, every, info = _start(g, name, k, seed, sources, weight, execution)
    xp = device.xp
    bc = xp.zeros(g.n, dtype=np.float64)
    for batch, dist, _sigma, delta in _batches(g, starts, execution, info):
        bc += delta.sum(axis=1)
        if endpoints:  # every target t != s on the path, and the source itself once per t
            reached = dist != UNREACHED
            bc += reached.sum(axis=1)
            real = np.flatnonzero(batch >= 0)
            bc[device.asarray(batch[real])] += reached[:, device.asarray(real)].sum(axis=0) - 2
    source, other = rescale_factors(g.n, starts.size, every, normalized=normalized,
                                    directed=g.directed, endpoints=endpoints)
    scale = xp.full(g.n, other, dtype=np.float64)
    scale[device.asarray(starts)] = source
    warn_not_finite(bc, name, "vertices")
    return finish(g, name, {"betweenness_centrality": bc * scale}, info, return_info)


@algorithm("edge_betweenness_centrality",
           summary="shortest-path betweenness of every edge (Brandes, many sources at once)",
           inputs=(K_INPUT, SOURCES_INPUT), columns=("src", "dst", "betweenness_centrality"),
           options=OPTIONS, defaults=dict(direction="auto"),
           params={name: kind for name, kind in PARAMS.items() if name != "endpoints"},
           iterative=True, approximation=dict(source_fraction=None))
def edge_betweenness_centrality(g, k=None, normalized=True, seed=None, sources=None,
                                weight=None, *, execution, return_info=False):
    """Betweenness of every edge: ``src``, ``dst``, ``betweenness_centrality`` (float64) in
    original ids, as NetworkX's and cuGraph's ``edge_betweenness_centrality``: a directed
    graph's edges in CSR order; an undirected graph's each once with ``src <= dst`` (as
    cuGraph's; labels: in their codes' order; bipartite: ``src`` on the left side), its value
    summed over both directions.

    Parameters as :func:`betweenness_centrality` (no ``endpoints``: an edge's paths always
    count their ends); normalized divides by the ``K (n - 1)`` ordered pairs.

    Example::

        >>> ebc = edge_betweenness_centrality(g, k=64, seed=1)        # doctest: +SKIP
        >>> ebc.nlargest(3, "betweenness_centrality")                 # doctest: +SKIP
    """
    name = "edge_betweenness_centrality"
    starts, every, info = _start(g, name, k, seed, sources, weight, execution)
    xp = device.xp
    ebc = xp.zeros(g.m, dtype=np.float64)
    block = device.block_threads(execution.block_size, 256)
    grid = device.grid_size(g.m, block, None if device.is_simulator()
                            else device.multiprocessor_count() * 8)
    for _batch, dist, sigma, delta in _batches(g, starts, execution, info):
        if g.m:
            ops.launch_kernel("brandes edge_dependencies", brandes.edge_dependencies, grid,
                              block, g.edge_sources, g.out_indices, dist, sigma, delta,
                              np.int32(UNREACHED), ebc)
    scale, _ = rescale_factors(g.n, starts.size, every, normalized=normalized,
                               directed=g.directed, endpoints=True)
    warn_not_finite(ebc, name, "edges")
    return _edge_frame(g, ebc * scale, info, return_info)


def warn_not_finite(values, name: str, what: str) -> None:
    """A RuntimeWarning when some values are inf or NaN: shortest-path counts past float64's
    range (about 1.8e308; a 2048 x 2048 grid has about 1e1231 shortest paths between opposite
    corners), where every float64 Brandes, NetworkX's and cuGraph's too, overflows."""
    bad = int((~device.xp.isfinite(values)).sum())
    if bad:
        warnings.warn(f"{name}: {bad} of {values.shape[0]} {what} have no finite value: "
                      "shortest-path counts passed float64's range (long lattice-like paths, "
                      "as in large grids); their values are inf or NaN", RuntimeWarning,
                      stacklevel=3)


def _edge_frame(g, values, info, return_info):
    """The result frame of edge values (CSR order): an undirected graph's edges once, from
    the end of the smaller id (of the smaller label code; on a bipartite graph the left side)."""
    keep = None
    if not g.directed and g.m:
        values = values + values[g.reverse_edge]  # (a self-loop is its own reverse: 0 + 0)
        rank = g.vertices if g.sides is None else device.xp.arange(g.n)
        keep = device.to_host(device.xp.flatnonzero(rank[g.edge_sources]
                                                    <= rank[g.out_indices]))
    df = io.to_edge_frame(g, {"betweenness_centrality": values})
    df = df[["src", "dst", "betweenness_centrality"]]
    if keep is not None:
        df = df.iloc[keep].reset_index(drop=True)
    try:
        df.attrs.update(info.as_dict())
    except AttributeError:  # frames without attrs (older cuDF)
        pass
    return (df, info) if return_info else df
