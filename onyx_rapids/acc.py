"""SIMD-X's Active-Compute-Combine model as one operator: :func:`acc`.

The user gives device functions on a per-vertex ``state`` (a 1-D device array).  As for
``edgemap`` and ``foldmap``, a function's parameters after the fixed ones are looked up **by
name** in the ``args`` mapping (arrays and scalars)::

    active(v, state, ...)        -> bool   # may v take part (default: every updated vertex)
    compute(u, v, e, state, ...) -> value  # what u offers v along edge e (CSR position)
    combine = "min" | "max"                 # associative, commutative; "max" on 0/1 is a vote

and :func:`acc` iterates to a fixed point: every iteration, the vertices whose state improved in
the last one offer ``compute`` along their out-edges and each head keeps ``combine`` of its own
state and the offers.  Push applies the combine with atomics, pull without (a vertex reduces its
in-edges in registers); ``settled(v, state, ...)`` (optional) says a vertex can no longer
improve, so pull skips it (BFS: already reached).  The run starts from ``active_in`` (a uint32
bit-vector of :mod:`onyx_rapids.frontier`, as for ``edgemap``; None: every vertex).

Just-in-time task management (SIMD-X Section 4): the next worklist comes from thread-private
bins filled as vertices improve (``filter="online"``), from a ballot scan of the frontier
bit-vector (``"ballot"``: sorted, duplicate-free), or from the bins unless one overflowed its
``threshold`` entries and the ballot scan otherwise (``"jit"``, the default).  Worklist vertices
are split by out-degree into small / medium / large lists run by a thread / a warp / a block.
``direction="auto"`` pulls while the frontier's out-edges exceed ``pull_fraction`` of all
edges and pushes otherwise, deciding again every iteration (Ligra / SIMD-X).  ``fused=True`` runs
the whole traversal as one persistent cooperative kernel with grid-wide barriers (its grid is
sized from the kernel's measured occupancy, so every block is resident and the barrier cannot
deadlock) instead of several launches and host decisions per iteration.  These options are
one :class:`AccOptions` value; they mean what the :class:`~onyx_rapids.execution.Execution`
fields of the same names mean, and are checked with its messages.

Example (BFS hop counts from vertex 0)::

    from numba import cuda
    import onyx_rapids as onyx

    @cuda.jit(device=True)
    def hop(u, v, e, dist):
        return dist[u] + 1

    dist = cupy.full(g.n, 2**31 - 1, dtype="int32"); dist[0] = 0
    run = onyx.acc(g, dist, hop, combine="min",
                   active_in=onyx.frontier.from_vertices(g.n, [0]),
                   options=onyx.AccOptions(direction="push"))
    run.iterations, run.converged

A function that needs more than the state names it (``def relax(u, v, e, dist, weight):
return dist[u] + weight[e]`` with ``args={"weight": w}``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import cuda

from . import device, frontier as fr, memory
from .binding import (bind_to_slots, device_function, parameters, passed_once, prepare_args,
                      py_func)
from .execution import checked_options, options_of
from .kernels import acc as kacc
from .kernels.codegen import identity
from .operators import KERNEL_CACHE, launch_kernel, next_pow2

FILTERS = {"jit": kacc.JIT, "online": kacc.ONLINE, "ballot": kacc.BALLOT}
DIRECTIONS = {"auto": kacc.AUTO, "push": kacc.PUSH, "pull": kacc.PULL}
TRACE_ROWS = 1 << 16  # per-iteration trace kept for the first iterations
COMPUTE_HEAD = ("u", "v", "e", "state")
ALIGN_BYTES = 128  # EMOGI's aligned access: a warp's first read starts on this boundary
NO_CLASS = 1 << 62  # a degree no vertex reaches: "naive" puts every vertex in the thread class
VERTEX_HEAD = ("v", "state")


@cuda.jit(device=True)
def always(v, state):
    return True


@cuda.jit(device=True)
def never(v, state):
    return False


@dataclass(frozen=True)
class AccOptions:
    """How :func:`acc` runs: one value, checked once (with
    :class:`~onyx_rapids.execution.Execution`'s messages) where it is made.

    ``direction``, ``pull_fraction``, ``filter``, ``threshold``, ``fused``, ``block_size`` and
    ``edge_access`` are the :class:`~onyx_rapids.execution.Execution` options of those names
    (``direction=None`` is "auto", ``fused=None`` False).  ``edge_access`` overrides the
    degree classes: "naive" gives every worklist vertex a thread, "merged" and "aligned" a
    warp (a block from ``large_degree`` on), "aligned" with 128-byte-aligned first reads, and
    pulls then take a warp per vertex; None: "aligned" on a host-placed graph, else "degree"
    (the classes).  ``medium_degree`` / ``large_degree`` are the out-degrees from which a
    worklist vertex gets a warp / a block.  ``AccOptions.of(execution)`` takes the fields an
    Execution has::

        onyx.acc(g, dist, hop, options=onyx.AccOptions.of(execution, fused=True))
    """

    direction: str = "auto"
    pull_fraction: float = 0.3
    filter: str = "jit"
    threshold: int = 64
    fused: bool = False
    block_size: int | None = None
    edge_access: str | None = None
    medium_degree: int = 32
    large_degree: int = 1024

    def __post_init__(self):
        shared = checked_options(direction=self.direction, pull_fraction=self.pull_fraction,
                                 filter=self.filter, threshold=self.threshold,
                                 fused=self.fused, block_size=self.block_size,
                                 edge_access=self.edge_access)
        shared["direction"] = shared["direction"] or "auto"
        shared["fused"] = bool(shared["fused"])
        medium, large = self.medium_degree, self.large_degree
        if not 1 <= int(medium) <= int(large):
            raise ValueError(f"need 1 <= medium_degree <= large_degree, got {medium}, {large}")
        shared.update(medium_degree=int(medium), large_degree=int(large))
        for name, value in shared.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, execution, **overrides) -> "AccOptions":
        """The options of ``execution`` (its fields of these names), then ``overrides``."""
        return options_of(cls, execution, **overrides)


@dataclass(frozen=True)
class AccResult:
    """How a run of :func:`acc` went.

    Attributes
    ----------
    iterations : int
        Iterations run.
    converged : bool
        True when the last iteration left nothing to do (False: ``max_iter`` stopped it).
    push, pull : int
        Iterations run each way.
    online, ballot : int
        Iterations whose next worklist came from the thread bins / from the ballot scan.
    fused : bool
        Whether the run was one persistent kernel.
    grid : int
        Blocks launched.
    trace : numpy.ndarray
        Per iteration (the first 65536): pulled (0/1), ballot (0/1), worklist size, worklist
        out-edges.
    left : int
        Vertices on the worklist when the run ended (improved in its last iteration, not yet
        offered): 0 when it converged.
    stopped : bool
        Whether ``stop_below`` ended it (see :func:`acc`).
    """

    iterations: int
    converged: bool
    push: int
    pull: int
    online: int
    ballot: int
    fused: bool
    grid: int
    trace: np.ndarray = field(repr=False, compare=False)
    left: int = 0
    stopped: bool = False

    @property
    def directions(self) -> list:
        """"push" / "pull" of each traced iteration."""
        return ["pull" if row else "push" for row in self.trace[:, kacc.T_PULL]]

    def as_dict(self) -> dict:
        """The counts as a dict (without the trace)."""
        return dict(iterations=self.iterations, converged=self.converged, push=self.push,
                    pull=self.pull, online=self.online, ballot=self.ballot, fused=self.fused,
                    grid=self.grid)


def _check(g, state, combine, max_iter):
    if combine not in ("min", "max"):
        raise ValueError(f"combine must be 'min' or 'max' (a vote is 'max' on 0/1), got "
                         f"{combine!r}")
    if max_iter is not None and (isinstance(max_iter, bool)
                                 or not isinstance(max_iter, (int, np.integer)) or max_iter < 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not device.is_device_array(state) or getattr(state, "ndim", 0) != 1 \
            or state.shape[0] != g.n:
        raise ValueError(f"state must be a 1-D device array of length n = {g.n}, got "
                         f"{getattr(state, 'shape', type(state).__name__)}")
    if np.dtype(state.dtype) not in (np.dtype(np.int32), np.dtype(np.int64),
                                     np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"state must be int32, int64, float32 or float64, got {state.dtype}")


def _bind_all(functions, state, args):
    """The user functions bound to their ``args`` by name (see
    :func:`~onyx_rapids.binding.bind_to_slots`), and the tuple of values the kernels pass
    through: ``args``' values in name order, each distinct array once
    (:func:`~onyx_rapids.binding.passed_once`), the state itself never (a parameter bound to it
    reads the kernels' ``state``)."""
    names = [name for name in sorted(args) if args[name] is not state]
    kept, aliases = passed_once(args, names)
    slot = {name: i for i, name in enumerate(kept)}
    slot.update((name, slot[twin]) for name, twin in aliases)
    where = {name: f"aux[{slot[name]}]" if name in slot else "state" for name in args}
    bound = []
    for what, fn, head in functions:
        fn = device_function(fn, what)
        extras = parameters(fn, head, what)
        missing = [name for name in extras if name not in where]
        if missing:
            raise ValueError(f"{what} {py_func(fn).__name__} takes "
                             f"{', '.join(map(repr, missing))}, which args does not hold (args "
                             f"has {sorted(args)}); pass args={{name: value, ...}}")
        bound.append(bind_to_slots(fn, head, tuple(where[name] for name in extras)))
    values = tuple(args[name] for name in kept)
    return bound, values if values else (device.zeros(1, np.int32),)


def _grid(block):
    if device.is_simulator():
        return 1  # a cooperative grid has one block there
    return device.multiprocessor_count() * (2048 // block)


def acc(g, state, compute, *, combine="min", active=None, settled=None, args=None,
        active_in=None, max_iter=None, parent=None, same_offers=False, stop_below=0,
        options: AccOptions = AccOptions()) -> AccResult:
    """Run Active-Compute-Combine from ``active_in`` (a bit-vector; None: every vertex) until
    no state improves; ``state`` is updated in place.  Returns an :class:`AccResult`.

    See the module docstring for the model.  ``args`` (a dict of name -> device array or
    scalar) gives ``compute``, ``active`` and ``settled`` the parameters they name after the
    fixed ones.  ``options`` (:class:`AccOptions`) say how it runs.  ``parent`` (an int32 or
    int64 device array of length n) receives, for every vertex that improved, a u whose offer
    improved it: a valid parent when every improving offer of one iteration is the same value
    (BFS levels), not in general (a later, smaller offer may lose the race to write it).
    ``same_offers=True`` promises that every offer made in one iteration is the same value
    (BFS levels: ``state[u] + 1`` over a frontier of one level), so a pull stops reading a
    vertex's in-edges at the first offer (Beamer's bottom-up early exit); a wrong promise
    gives wrong results, so leave it False for anything else.
    ``stop_below`` (reduced execution, :mod:`onyx_rapids.algorithms._reduced`) ends the run
    after an iteration, not the first, that left fewer than ``stop_below`` vertices on the
    worklist and no more than the iteration before (``AccResult.stopped``); 0: never."""
    _check(g, state, combine, max_iter)
    if active_in is not None and (getattr(active_in, "shape", None) != (fr.words(g.n),)
                                  or np.dtype(active_in.dtype) != np.uint32):
        raise ValueError(f"active_in must be a uint32 bit-vector of {fr.words(g.n)} words "
                         "(onyx_rapids.frontier), or None for every vertex")
    n, m = g.n, g.m
    args = prepare_args(args)
    (compute, active, settled), aux = _bind_all(
        [("compute", compute, COMPUTE_HEAD),
         ("active", always if active is None else active, VERTEX_HEAD),
         ("settled", never if settled is None else settled, VERTEX_HEAD)], state, args)
    if parent is not None and (not device.is_device_array(parent)
                               or getattr(parent, "shape", None) != (n,)
                               or np.dtype(parent.dtype) not in (np.int32, np.int64)):
        raise ValueError(f"parent must be an int32 or int64 device array of length n = {n}")
    track = parent is not None
    if parent is None:
        parent = device.zeros(1, np.int32)
    max_iter = int(max_iter) if max_iter is not None else n + 1
    kernels, block = _kernels(g, (compute, active, settled), combine, options, track=track,
                              same_offers=same_offers)
    grid = _grid(block)
    threshold = options.threshold

    ws = _Workspace.take(g, grid, block, threshold)
    try:
        return _run(g, state, aux, kernels, grid, block, threshold, ws, combine=combine,
                    active_in=active_in, max_iter=max_iter, parent=parent, options=options,
                    stop_below=np.int64(stop_below))
    finally:
        ws.give_back(g)


class _Workspace:
    """The arrays of one :func:`acc` run on a graph besides the state: frontier bit-vectors,
    worklists, thread bins and counters, sized for the largest grid.  Kept on the graph
    (:meth:`~onyx_rapids.graph.Graph.cached`) between runs, so a traversal allocates nothing
    of size n per call: a run takes one from the graph's pool (a new one when a concurrent
    run holds them all) and gives it back (not on a host-placed graph; ``g.clear_cache()``
    frees them).  Only what a run reads before writing is cleared
    (:meth:`reset`); the worklists and bins are filled before they are read."""

    HEAD_TRACE = 64  # trace rows read back with the counters in one copy

    def __init__(self, n: int, grid: int, block: int, threshold: int):
        self.key = (grid, block, threshold)
        words, head = fr.words(n), 1 + 3 * kacc.NC + TRACE_ROWS * kacc.NT
        memory.reserve(f"a traversal workspace of {n} vertices",
                       8 * words + 24 * max(n, 1) + 8 * head + 4 * grid * block * (threshold + 1)
                       + 24 * grid,
                       "the frontiers and worklists of a traversal live on the device: raise "
                       "the budget")
        self.bits = device.zeros((2, fr.words(n)), np.uint32)
        self.queues = device.empty((2, 3, max(n, 1)), np.int32)
        # one int64 buffer: done (1), the counters (3 x NC), the trace (TRACE_ROWS x NT), so
        # that one copy reads the outcome back
        self.head = device.zeros(1 + 3 * kacc.NC + TRACE_ROWS * kacc.NT, np.int64)
        self.bins = device.empty(grid * block * threshold, np.int32)
        self.binc = device.zeros(grid * block, np.int32)
        self.bcount = device.zeros(3 * grid, np.int64)
        self.idents: dict = {}

    @classmethod
    def take(cls, g, grid: int, block: int, threshold: int) -> "_Workspace":
        pool = g.cached(("acc", "workspaces", grid, block, threshold), list)
        try:
            return pool.pop()
        except IndexError:
            return cls(g.n, grid, block, threshold)

    def give_back(self, g):
        """Back to the graph's pool, except on a host-placed graph (placed there because
        device memory is short: its runs free their workspace)."""
        if g.placement != "host":
            g.cached(("acc", "workspaces") + self.key, list).append(self)

    def ident(self, combine: str, dtype):
        """The combine's identity in ``dtype`` as a device array of one (made once)."""
        key = (combine, np.dtype(dtype).str)
        if key not in self.idents:
            self.idents[key] = device.asarray(np.array([identity(combine, dtype)]))
        return self.idents[key]

    def reset(self, active_in, n: int):
        """Clear what a run reads before it writes: the frontiers (row 0 from ``active_in``),
        done and the counters, the bin counts."""
        if active_in is None:
            self.bits[0] = fr.full(n)
        else:
            self.bits[0] = active_in
        self.bits[1].fill(0)
        self.head[:1 + 3 * kacc.NC].fill(0)
        self.binc.fill(0)
        self.bcount.fill(0)

    def done(self):
        return self.head[:1]

    def ctr(self):
        return self.head[1:1 + 3 * kacc.NC].reshape(3, kacc.NC)

    def trace(self, rows: int):
        return self.head[1 + 3 * kacc.NC:].reshape(TRACE_ROWS, kacc.NT)[:rows]

    def outcome(self):
        """A fused run's ``(iterations, counters, trace rows)`` read back: one copy of done,
        the counters and the first :attr:`HEAD_TRACE` trace rows, a second only for a longer
        trace."""
        first = 1 + 3 * kacc.NC
        head = device.to_host(self.head[:first + self.HEAD_TRACE * kacc.NT])
        iterations = int(head[0])
        ctr = head[1:first].reshape(3, kacc.NC)
        rows = min(iterations, TRACE_ROWS)
        if rows <= self.HEAD_TRACE:
            trace = head[first:first + rows * kacc.NT].reshape(rows, kacc.NT)
        else:
            trace = device.to_host(self.trace(rows))
        return iterations, ctr, trace


def _run(g, state, aux, kernels, grid, block, threshold, ws, *, combine, active_in, max_iter,
         parent, options, stop_below):
    """One :func:`acc` run on workspace ``ws`` (:class:`_Workspace`)."""
    n, m = g.n, g.m
    ws.reset(active_in, n)
    ident = ws.ident(combine, state.dtype)
    bits, queues, ctr = ws.bits, ws.queues, ws.ctr()
    trace = ws.trace(min(max_iter, TRACE_ROWS))
    fmode, dmode = FILTERS[options.filter], DIRECTIONS[options.direction]
    pull_edges = np.int64(float(options.pull_fraction) * m)
    off, idx = g.out_offsets, g.out_indices
    in_off, in_idx, in_eid = g.in_offsets, g.in_indices, g.in_edge_ids

    fused = options.fused

    def buffers(blocks):
        return (ws.bins[:blocks * block * threshold], ws.binc[:blocks * block],
                ws.bcount[:3 * blocks].reshape(3, blocks))

    def fused_args(blocks):
        return (np.int64(n), state, aux, ident, off, idx, in_off, in_idx, in_eid, queues,
                ctr, bits) + buffers(blocks) + (trace, np.int64(max_iter), pull_edges,
                                                np.int32(dmode), np.int32(fmode), ws.done(),
                                                parent, stop_below)

    if fused:
        grid = min(grid, device.cooperative_blocks(kernels["fused"], fused_args(grid), block))
    bins, binc, bcount = buffers(grid)

    # the first worklist: a ballot scan of the starting frontier (iteration -1 fills row 0)
    it0 = np.int64(-1)
    _launch(kernels["ballot_count"], grid, block, np.int64(n), state, aux, off, bits, bcount,
            ctr, it0)
    _launch(kernels["ballot_write"], grid, block, np.int64(n), state, aux, off, bits, bcount,
            queues, binc, it0)
    if fused:
        _launch(kernels["fused"], grid, block, *fused_args(grid))
        iterations, counters, rows = ws.outcome()
    else:
        iterations, rows = _host_loop(kernels, grid, block, n, m, state, aux, ident, g,
                                      queues, ctr, bits, bins, binc, bcount, max_iter,
                                      pull_edges, dmode, fmode, parent, stop_below)
        counters = device.to_host(ctr)
    pulled = int(rows[:, kacc.T_PULL].sum()) if len(rows) else 0
    ballots = int(rows[:, kacc.T_BALLOT].sum()) if len(rows) else 0
    row = counters[iterations % 3]
    left = int(row[kacc.C_SMALL] + row[kacc.C_MEDIUM] + row[kacc.C_LARGE])
    return AccResult(iterations=iterations, converged=left == 0,
                     push=iterations - pulled, pull=pulled, online=iterations - ballots,
                     ballot=ballots, fused=bool(fused), grid=int(grid), trace=rows, left=left,
                     stopped=left > 0 and iterations < max_iter)


def _kernels(g, functions, combine, options: AccOptions, *, track: bool, same_offers: bool):
    """``(kernels, block)``: a run's kernels (built once, through the kernel cache) and their
    block size; ``options.edge_access`` decides the degree classes and the edge reads."""
    edge_access = options.edge_access
    if edge_access is None:
        edge_access = "aligned" if g.placement == "host" else "degree"
    block = device.block_threads(options.block_size, 256, simulator_default=32)
    group = min(32, next_pow2(max(1, round(g.m / max(g.n, 1)))))
    medium_degree, large_degree, align = options.medium_degree, options.large_degree, 0
    if edge_access == "naive":
        medium_degree = large_degree = NO_CLASS
    elif edge_access in ("merged", "aligned"):
        medium_degree, group = 1, 32
        if edge_access == "aligned":
            # in edges: 128 bytes of the vertex-index arrays (out/in_indices, index_dtype);
            # in_edge_ids and the weights, no narrower, then start on 128-byte boundaries too
            align = ALIGN_BYTES // np.dtype(g.index_dtype).itemsize
    compute, active, settled = functions
    threshold = options.threshold
    key = ("acc", compute, active, settled, combine, group, threshold, medium_degree,
           large_degree, block, track, align, bool(same_offers))
    return KERNEL_CACHE.get(key, lambda: kacc.build(
        compute, active, settled, combine, group=group, threshold=threshold,
        medium_degree=medium_degree, large_degree=large_degree, block=block,
        track_parent=track, align=align, first_offer=bool(same_offers))), block


def _launch(kernel, grid, block, *args):
    name = getattr(getattr(kernel, "py_func", None), "__name__", "kernel")
    launch_kernel(f"acc {name}", kernel, grid, block, *args)


def _host_loop(kernels, grid, block, n, m, state, aux, ident, g, queues, ctr, bits, bins, binc,
               bcount, max_iter, pull_edges, dmode, fmode, parent, stop_below):
    rows = []
    off, idx = g.out_offsets, g.out_indices
    n64 = np.int64(n)
    fm = np.int32(fmode)
    it = before = 0
    while it < max_iter:
        row = device.to_host(ctr[it % 3])
        size = int(row[kacc.C_SMALL] + row[kacc.C_MEDIUM] + row[kacc.C_LARGE])
        if size == 0:
            break
        if it > 0:  # stop_below, as the fused kernel tests it
            if size < stop_below and size <= before:
                break
            before = size
        edges = int(row[kacc.C_EDGES])
        pull = dmode == kacc.PULL or (dmode == kacc.AUTO and edges > pull_edges)
        ctr[(it + 1) % 3] = 0
        i = np.int64(it)
        if pull:
            _launch(kernels["pull"], grid, block, n64, state, aux, ident, g.in_offsets,
                    g.in_indices, g.in_edge_ids, off, queues, ctr, bits, bins, binc, i, fm,
                    parent)
        else:
            _launch(kernels["push"], grid, block, state, aux, off, idx, queues, ctr, bits, bins,
                    binc, i, fm, parent)
        ballot = fmode == kacc.BALLOT or int(ctr[(it + 1) % 3, kacc.C_OVERFLOW]) != 0
        if ballot:
            _launch(kernels["ballot_count"], grid, block, n64, state, aux, off, bits, bcount,
                    ctr, i)
            _launch(kernels["ballot_write"], grid, block, n64, state, aux, off, bits, bcount,
                    queues, binc, i)
        else:
            _launch(kernels["gather"], grid, block, off, queues, ctr, bins, binc, i)
        _launch(kernels["clear"], grid, block, bits, i)
        rows.append((int(pull), int(ballot), size, edges))
        it += 1
    return it, np.array(rows, dtype=np.int64).reshape(-1, kacc.NT)
