"""Strongly connected components (docs/algorithms.md): trimming, forward-backward from a
pivot, then coloring (Slota, Rajamanickam and Madduri's Multistep, IPDPS 2014; Hong et al.,
SC 2013).

u and v share a component when u reaches v and v reaches u.  Every vertex starts *live*; each
step below settles some live vertices into components and the next works on the rest:

1. **Trim** (:mod:`onyx_rapids.kernels.scc`): a live vertex with no live in-neighbour or no
   live out-neighbour (self-loops aside) is a component of its own, and removing it may leave
   a neighbour so; queue-driven to the end (a chain walked by one thread), which leaves no
   DAG-like part to the coloring, where it would cost a round per vertex of a chain.
2. **Forward-backward from a pivot**, the live vertex of largest live in-degree x out-degree
   (on a power-law or a road-like graph, a vertex of the giant component): the vertices the pivot
   reaches (forward), and among those the ones that reach it (backward, on the reverse
   graph), are the pivot's component.
3. **Coloring**, repeated until no vertex is live: every live vertex takes the largest id of
   a live vertex that reaches it,

       color(v) = v,   color(v) = max(color(v), max_{u -> v, u and v live} color(u)),

   so every vertex of a component has the color of the component's largest reacher; a vertex
   whose color is its own id is a *root*, and the vertices of color r that reach r (backward
   from every root at once, within its color) are r's component.  Each round settles at
   least the component of the largest live id.

After steps 2 and 3 settle vertices, trimming starts again from them (their live neighbours
lose them), so a DAG-like part that hung on a settled component does not wait for the
coloring.

Every reachability and propagation is a run of the Active-Compute-Combine engine
(:func:`onyx_rapids.acc`): change-driven (only vertices that moved offer), push / pull per
iteration as ``direction`` says, with the engine's ``filter`` / ``fused`` / ``edge_access``
options; a fused run keeps all the hops of a long-diameter graph in one persistent kernel
(``fused`` also runs the trimming rounds in one).
Backward runs go over the reverse graph, whose out-edges are the graph's in-edges (its CSC).
``jump_every`` adds pointer jumping to the coloring: after that many rounds every color jumps
to its color's color (color(v) <- color(color(v))) until none moves, which is valid because a
color is always a live vertex that reaches v, and the color of that vertex reaches it too.
Components are named by their smallest original id
(:func:`~onyx_rapids.algorithms.connected_components.smallest_ids`).

Approximation (Graprox's knobs, docs/execution.md): ``stop_changed_fraction`` ends the coloring
after a round, not the first, that settled (with the trimming after it) fewer than that
fraction of the vertices and no more than the round before (:mod:`._reduced`); every vertex
still live is then a component of its own, so the labels only split components.  (Giving
each its color's group instead would cost another forward propagation and could put together
vertices of different components; splitting costs nothing and never does.)
``merge_similarity`` runs on the graph of merged similar neighbours, its edges the graph's
directions (:func:`._merged.strong_components`): a group is connected but not always strongly
connected, so its members may come out wrongly together, never wrongly apart.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, frontier, inputs, memory, operators as ops
from ..acc import AccOptions, acc
from ..graph import Graph
from ..kernels import scc as kernels
from ..registry import algorithm
from . import _merged
from ._common import Info, finish
from ._reduced import ChangedFraction
from .connected_components import smallest_ids

#: Vertices one thread removes in a row in a trimming round (a chain's next link goes on in
#: the same thread, up to this many; the rest wait for the next round).
TRIM_FOLLOW = 4
#: Edge positions written per pass when the reverse graph's edge ids are built in host memory.
REVERSE_BLOCK = 1 << 26
NAME = "strongly_connected_components"
ACC_COUNTS = ("iterations", "push", "pull", "ballot")


@cuda.jit(device=True)
def offer_color(u, v, e, state, comp):
    if comp[v] < 0:
        return state[u]
    return -1  # v is settled: nothing it could take


@cuda.jit(device=True)
def cannot_rise(v, state, comp, top):
    return comp[v] >= 0 or state[v] >= top[0]


@cuda.jit(device=True)
def offer_same_color(u, v, e, state, color):
    return 1 if color[v] == color[u] else 0


@cuda.jit(device=True)
def reached_or_other(v, state, color):
    return state[v] != 0 or color[v] < 0


@algorithm(
    NAME, summary="component labels (smallest original id) by trimming, forward-backward "
                  "and coloring",
    columns=("vertex", "labels"), graph="directed",
    options=dict(direction=None, pull_fraction=None, filter=None, threshold=None, fused=None,
                 block_size=None, edge_access=None),
    defaults=dict(direction="auto", fused=True), iterative=True,
    params=dict(jump_every=inputs.Int(1, optional=True)),
    approximation=dict(stop_changed_fraction=None, merge_similarity=None))
def strongly_connected_components(g, *, jump_every=None, execution, return_info=False):
    """Component label of every vertex of a directed graph: ``vertex``, ``labels`` (the
    smallest original id of the vertex's strongly connected component).

    Parameters
    ----------
    g : Graph
        A directed graph (``directed=True``); an undirected one is refused: its strongly
        connected components are its connected components
        (:func:`~onyx_rapids.weakly_connected_components`).  Self-loops and parallel edges
        change nothing; weights are ignored.  Edges placed on the host are read zero-copy.
    jump_every : int, optional
        Coloring rounds between pointer-jumping passes (color(v) <- color(color(v))); None
        (default): the coloring propagates to its end without jumping.
    execution : Execution, optional
        How to run (also as keywords): ``direction`` ("auto"), ``pull_fraction``,
        ``filter``, ``threshold``, ``fused`` (True: the trimming rounds, and each
        reachability and propagation, are one persistent kernel each), ``block_size`` and
        ``edge_access``, as for :func:`onyx_rapids.acc`; ``approximation``: an
        :class:`~onyx_rapids.Approximation` with ``stop_changed_fraction`` stops the coloring
        once a round settled fewer than that fraction of the vertices, and no more than the
        round before, leaving every vertex still live a component of its own (reduced
        execution: a component may come out split, never merged with another);
        ``merge_similarity`` runs on the graph of merged similar neighbours, directions kept
        (a component may come out merged with another where a group is not strongly
        connected, never split; exact where every group is, e.g. on a graph whose every edge
        is stored both ways).
    return_info : bool
        Also return a RunInfo: ``iterations`` (of the engine, all runs together),
        ``trim_rounds``, ``trimmed`` (vertices the trimming settled), ``pivot_component``
        (the size of the pivot's component), ``coloring_rounds``, ``phases`` (engine runs),
        ``jumps`` and the engine's ``push_iterations`` / ``pull_iterations`` /
        ``ballot_iterations``; the knobs and ``estimate`` of an approximate run
        (``stopped_by``, ``rounds`` = ``iterations``, ``unrelaxed``: the vertices a stop
        left live, each now alone; ``merged_vertices``, ``merged_edges``,
        ``merge_build_ms``).

    Returns
    -------
    DataFrame
        ``vertex``, ``labels`` (cuGraph's columns; cuGraph's labels are arbitrary component
        ids, ours the smallest member id).

    Examples
    --------
    >>> import pandas as pd
    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 4]}),
    ...                              directed=True)
    >>> df = onyx.strongly_connected_components(g)
    >>> dict(zip(df["vertex"].tolist(), df["labels"].tolist()))
    {1: 1, 2: 1, 3: 1, 4: 4}
    """
    if not g.directed:
        raise ValueError(f"{NAME}: the graph is undirected, where the strongly connected "
                         "components are the connected components: call "
                         "weakly_connected_components(g), or build the graph with "
                         "directed=True to read each edge one way")
    if _merged.knob(execution) is not None:
        return _merged.strong_components(g, strongly_connected_components, execution,
                                         return_info, smallest_ids, jump_every=jump_every)
    run = _Run(g, AccOptions.of(execution), jump_every,
               ChangedFraction(execution.approximation, g.n))
    comp = run.components()
    info = Info(iterations=run.totals["iterations"], converged=True, directions=run.directions,
                variant=dict(direction=execution.direction, filter=execution.filter,
                             fused=bool(execution.fused), push_iterations=run.totals["push"],
                             pull_iterations=run.totals["pull"],
                             ballot_iterations=run.totals["ballot"], **run.facts))
    run.reduced.record(info)
    labels = smallest_ids(g, comp, smallest_root=False)
    return finish(g, NAME, {"labels": labels}, info, return_info)


class _Run:
    """One call's state: ``comp`` (int64, n; -1 while live, else an internal vertex naming the
    component), the trimming's live degrees and queues, the engine's counts, the facts of each
    step, the ``stop_changed_fraction`` rule (``reduced``; default off)."""

    def __init__(self, g, options: AccOptions, jump_every, reduced=None):
        self.g, self.options, self.jump_every = g, options, jump_every
        self.reduced = reduced or ChangedFraction(None, g.n)  # None: the exact rounds
        self.block = device.block_threads(options.block_size, 256, simulator_default=32)
        self.comp = device.full(g.n, -1, np.int64)
        self.ids = device.xp.arange(g.n, dtype=np.int64)
        self.totals = dict.fromkeys(ACC_COUNTS, 0)
        self.directions: list = []
        self.facts = dict(trim_rounds=0, trimmed=0, pivot_component=0, coloring_rounds=0,
                          phases=0, jumps=0)

    def components(self):
        """``comp`` with every vertex settled: trim, the pivot's component, coloring rounds
        (until none is live, or ``reduced`` stops them: the live vertices left alone)."""
        self.trim()
        live = self.comp < 0
        if bool(live.any()):
            self.pivot(live)
        settled = None  # by the last coloring round
        while bool((live := self.comp < 0).any()):
            if settled is not None and self.reduced.stops(settled):
                self.comp[live] = self.ids[live]
                self.reduced.unrelaxed = int(live.sum())  # left alone, not the round's count
                break
            settled = self.coloring(live)
        return self.comp

    def trim(self):
        """Settle every vertex trimming reaches (:mod:`onyx_rapids.kernels.scc`), counting
        the live in- and out-degrees that the pivot and later trimming use."""
        g, xp = self.g, device.xp
        self.in_live = g.in_degree.astype(np.int32)
        self.out_live = g.out_degree.astype(np.int32)
        self.queues = xp.empty((2, g.n), dtype=np.int32)
        self.counts = device.zeros(3, np.int64)
        self.edges = (g.out_offsets, g.out_indices, g.in_offsets, g.in_indices, self.comp,
                      self.in_live, self.out_live)
        count = self.counts[:1]
        if g.m:
            ops.launch_kernel("scc drop_self_loops", kernels.drop_self_loops,
                              self._grid(g.m), self.block, g.edge_sources, g.out_indices,
                              self.in_live, self.out_live)
        ops.launch_kernel("scc trim_start", kernels.trim_start, self._grid(g.n), self.block,
                          self.comp, self.in_live, self.out_live, self.queues[0], count)
        self.facts["trim_rounds"] += 1
        self._trim_rounds(int(device.to_host(count)[0]))
        self.facts["trimmed"] += int((self.comp >= 0).sum())

    def release(self, settled):
        """Trim again from the vertices just ``settled`` (a mask): their live neighbours lose
        them (:func:`~onyx_rapids.kernels.scc.unlink`, a thread an edge), and those left with
        no live in- or out-neighbour settle too.  Nothing to do once no vertex is live."""
        g = self.g
        before = int((self.comp >= 0).sum())
        if before == g.n:
            return
        count = self.counts[:1]
        count.fill(0)
        ops.launch_kernel("scc unlink", kernels.unlink, self._grid(g.m), self.block,
                          g.edge_sources, g.out_indices, settled, self.comp, self.in_live,
                          self.out_live, self.queues[0], count)
        self._trim_rounds(int(device.to_host(count)[0]))
        self.facts["trimmed"] += int((self.comp >= 0).sum()) - before

    def _trim_rounds(self, size):
        """Trimming rounds from the ``size`` vertices of ``queues[0]`` until none queues more:
        one persistent kernel (``fused``) or a launch and a count read per round."""
        follow = np.int64(TRIM_FOLLOW)
        if not size:
            return
        self.counts.fill(0)
        if self.options.fused:
            out = device.zeros(1, np.int64)
            call = self.edges + (self.queues, self.counts, np.int64(size), follow, out)
            grid = 1
            if not device.is_simulator():
                grid = min(device.multiprocessor_count() * (2048 // self.block),
                           device.cooperative_blocks(kernels.trim_fused, call, self.block))
            ops.launch_kernel("scc trim_fused", kernels.trim_fused, grid, self.block, *call)
            self.facts["trim_rounds"] += int(device.to_host(out)[0])
            return
        count, here = self.counts[:1], 0
        while size:
            count.fill(0)
            ops.launch_kernel("scc trim_round", kernels.trim_round, self._grid(size),
                              self.block, *self.edges, self.queues[here], np.int64(size),
                              follow, self.queues[1 - here], count)
            here = 1 - here
            size = int(device.to_host(count)[0])
            self.facts["trim_rounds"] += 1

    def _grid(self, items):
        return device.stride_grid(items, self.block, 8)

    def pivot(self, live):
        """Settle the component of the live vertex of largest live in-degree x out-degree."""
        xp = device.xp
        score = self.in_live.astype(np.int64) * self.out_live.astype(np.int64)
        pivot = int(xp.argmax(xp.where(live, score, -1)))
        n = self.g.n
        color = device.full(n, -1, np.int64)
        color[pivot] = pivot
        start = frontier.from_vertices(n, [pivot])
        self.forward(color, top=pivot, active_in=start, same_offers=True)
        self.facts["pivot_component"] = self.backward(color, start, same_offers=True)

    def coloring(self, live) -> int:
        """One coloring round: colors forward, then every root's component backward; returns
        how many vertices it settled (the roots' components and the trimming after them)."""
        self.facts["coloring_rounds"] += 1
        ids = self.ids
        color = device.xp.where(live, ids, -1)
        top = int(ids[live][-1])  # the largest live id: no color rises above it
        while True:
            run = self.forward(color, top=top, active_in=frontier.from_mask(live),
                               same_offers=False, max_iter=self.jump_every)
            jumped = self.jump(color)
            if run.converged and not jumped:
                break
        trimmed = self.facts["trimmed"]
        took = self.backward(color, frontier.from_mask(live & (color == ids)), same_offers=False)
        return took + self.facts["trimmed"] - trimmed

    def forward(self, color, *, top, active_in, same_offers, max_iter=None):
        """Colors along the out-edges of live vertices, in place (max-combine)."""
        return self._acc(self.g, color, offer_color, settled=cannot_rise,
                         args=dict(comp=self.comp, top=device.full(1, top, np.int64)),
                         active_in=active_in,
                         same_offers=same_offers, max_iter=max_iter)

    def backward(self, color, roots, *, same_offers) -> int:
        """Settle the vertices that reach a root within the root's color (the reverse graph's
        out-edges), then trim from them; returns how many the roots took."""
        mask = frontier.to_mask(roots, self.g.n)
        state = mask.astype(np.int32)
        self._acc(reverse(self.g), state, offer_same_color, settled=reached_or_other,
                  args=dict(color=color), active_in=roots, same_offers=same_offers)
        settled = state != 0
        self.comp[settled] = color[settled]
        self.release(settled)
        return int(settled.sum())

    def jump(self, color) -> bool:
        """color <- color[color] over colored vertices until none moves; whether any did."""
        if self.jump_every is None:
            return False
        xp, jumped = device.xp, False
        while True:
            further = xp.where(color >= 0, color[xp.maximum(color, 0)], color)
            if not bool((further != color).any()):
                return jumped
            color[...] = further
            jumped = True
            self.facts["jumps"] += 1

    def _acc(self, graph, state, compute, *, settled, args, active_in, same_offers,
             max_iter=None):
        run = acc(graph, state, compute, combine="max", settled=settled, args=args,
                  active_in=active_in, same_offers=same_offers, max_iter=max_iter,
                  options=self.options)
        for key in ACC_COUNTS:
            self.totals[key] += getattr(run, key)
        self.directions.extend(run.directions)
        self.facts["phases"] += 1
        return run


def reverse(g) -> Graph:
    """The reverse graph of directed ``g`` (every edge u -> v as v -> u): its CSR is ``g``'s
    CSC and its CSC ``g``'s CSR, with the reverse's CSR position of each of its CSC entries as
    ``in_edge_ids``; same vertices, ids and placement.  Cached on ``g``."""
    def build():
        m, dtype = g.m, g.offset_dtype
        xp = device.xp
        position = memory.host_empty(m, dtype) if g.placement == "host" \
            else device.empty(m, dtype)
        for a in range(0, m, REVERSE_BLOCK):  # entry j of g's CSC is the reverse's edge j
            b = min(a + REVERSE_BLOCK, m)
            position[g.in_edge_ids[a:b]] = xp.arange(a, b, dtype=dtype)
        return Graph(vertices=g.vertices, out_offsets=g.in_offsets, out_indices=g.in_indices,
                     in_offsets=g.out_offsets, in_indices=g.out_indices,
                     in_edge_ids=position, out_degree=g.in_degree, in_degree=g.out_degree,
                     directed=True, multigraph=g.multigraph, placement=g.placement,
                     vertex_order=g.vertex_order, labels=g.id_map.labels)
    return g.cached((NAME, "reverse"), build)
