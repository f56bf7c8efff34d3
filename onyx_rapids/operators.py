"""The programming model users see: ``vertexmap``, ``edgemap`` and ``foldmap`` (ONYX Figure 4.1).

User functions are Numba CUDA device functions working on **one feature** ``f`` of a property
(``f`` first, as in ONYX).  Their remaining parameters are looked up **by name** in the ``args``
mapping given to the operator (arrays and scalars; :mod:`onyx_rapids.binding`)::

    from numba import cuda
    from onyx_rapids import operators as ops

    @cuda.jit(device=True)
    def contribution(f, u, v, e, rank, inv_out_degree):   # edge function: a value
        return rank[u, f] * inv_out_degree[u, 0]

    @cuda.jit(device=True)
    def update(f, v, acc, rank_next, alpha, base):      # vertex function: changed?
        rank_next[v, f] = base + alpha * acc             # acc: the value acc[v, f]
        return True

    args = dict(rank=rank, inv_out_degree=inv, acc=acc, rank_next=nxt, alpha=0.85, base=0.15 / n)
    ops.edgemap(g, contribution, into="acc", args=args)              # acc[v] += sum over in-edges
    ops.vertexmap(g, ops.Vertex(update, aggregate="acc"), args=args, k=1)
    ops.foldmap(g, [ops.Edge(contribution, "acc", store=False),     # the same, one kernel,
                    ops.Vertex(update, aggregate="acc")],          # acc kept in registers
                args=args, k=1, direction="pull")

Semantics:

* ``edgemap``: for every edge ``u -> v`` whose source is active and every feature ``f < k``,
  ``into[v, f] = reduce(into[v, f], fn(f, u, v, e, ...))``; ``e`` is the CSR position of the
  edge (edge properties are stored in CSR order).  ``direction="push"`` walks out-edges with
  atomics and ONYX's feature-aware load balancing; ``"pull"`` walks in-edges (CSC) of every
  vertex and reduces without atomics.  A destination is activated in ``active_out`` when it
  received a contribution (sum) or its value improved (min, max).
* ``vertexmap``: runs vertex functions in order on every active vertex; a function runs on a
  vertex only when the previous one returned True for some feature of it (progress), and the
  vertex is activated when the last one does (``any_feature_updated``).
* ``foldmap``: a mix of :class:`Edge`, :class:`Vertex`, :class:`Normalize`, :class:`Solve`
  and :class:`MaxChange` steps in one generated kernel (ONYX Chapter 6), with ordering, progress and activation as
  above.  In ``pull`` direction edge steps must come first (a vertex's aggregate is complete
  once its group has walked its in-edges); in ``push`` direction vertex steps must come first (their
  results decide which sources push).  Other orders would read aggregates that other warps are
  still writing, and raise ``ValueError``.
* ``options`` (:class:`MapOptions`, the same from call to call) say how a kernel maps and
  launches: ``feature_aware=True`` maps consecutive threads to consecutive features
  (``next_pow2(k)`` threads per property; ``32 / T`` properties per warp up to ``k = 32``,
  several warps above); ``False`` uses one thread per vertex looping over the features.

Active sets are uint32 bit-vectors (:mod:`onyx_rapids.frontier`); ``active_in=None`` means all
vertices.  Generated kernels are cached by (functions, steps, k, mapping, direction, launch
options, argument names and dtypes): a second call with the same inputs compiles nothing.
"""

from __future__ import annotations

import dataclasses
import math
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from . import device, profiling, streaming
from .binding import (device_function, parameters, passed_once, prepare_args, py_func,
                      reads_argument)
from .execution import EDGE_ACCESS, _choice, options_of
from .kernels import codegen
from .kernels.collective import group_broadcast  # noqa: F401  (for functions taking `lanes`)

REDUCTIONS = ("sum", "min", "max")
DIRECTIONS = ("push", "pull")
MAX_GROUP = 1024


@dataclass(frozen=True)
class Edge:
    """An edge step: ``into[v, f] = reduce(into[v, f], fn(f, u, v, e, ...))``.

    ``store=False`` (pull foldmaps): the aggregate ``reduce_u fn(f, u, v, e, ...)`` is never
    written to memory; it stays in the registers of the threads that pulled it, and the
    vertex steps of the same kernel read it as a value (:class:`Vertex` with ``aggregate``, or
    a :class:`Normalize` whose source is ``into``).  ``into`` then only names it: no n x k
    array is allocated, zeroed, added to or read back (ONYX's folding without the
    intermediate property; an array of that name in ``args`` is neither read nor written).
    The aggregate is float32; the in-edges of heavy vertices go through a small scratch of
    their rows, kept on the graph.  Example::

        ops.foldmap(g, [ops.Edge(contribution, "acc", store=False),
                        ops.Vertex(update, aggregate="acc")], args, k=k)
    """

    fn: object
    into: str
    reduce: str = "sum"
    store: bool = True


@dataclass(frozen=True)
class Gather:
    """An edge step that gathers rows: ``into[v, f] += rows[u, f] * weight(u, v, e, ...)``
    over the in-edges ``u -> v`` (SpMM with a weight function): ``weight`` is a device
    function of the edge, the same for every feature (None: 1), called once per edge.

    It computes what ``Edge(fn, into)`` with ``fn(f, u, v, e, ..) = rows[u, f] * weight(u, v,
    e, ..)`` computes, but the kernel knows the feature loads: a thread that owns 2 or 4
    features of a float32, C-contiguous ``rows`` (``width``) loads them in one 8- or 16-byte
    load instead of one load each.  ``store`` as :class:`Edge`.  Example (PageRank's
    pull)::

        @cuda.jit(device=True)
        def out_share(u, v, e, inv_out_degree):
            return inv_out_degree[u, 0]

        ops.foldmap(g, [ops.Gather("rank", "acc", out_share, store=False),
                        ops.Vertex(update, aggregate="acc")], args, k=k)
    """

    rows: str
    into: str
    weight: object = None
    store: bool = True
    reduce: str = "sum"


@dataclass(frozen=True)
class Vertex:
    """A vertex step: ``fn(f, v, ...) -> bool`` (True: the vertex changed / goes on).

    ``aggregate`` names a parameter of ``fn`` that receives the value ``aggregate[v, f]`` (a
    number) instead of the array: the register aggregate of an ``Edge(.., store=False)`` of
    the same foldmap, or an array in ``args`` (read for the function).  So one update
    function serves a folded kernel and an edgemap followed by a vertexmap::

        @cuda.jit(device=True)
        def update(f, v, acc, rank_next, alpha, base):
            rank_next[v, f] = base + alpha * acc
            return True

        ops.Vertex(update, aggregate="acc")
    """

    fn: object
    aggregate: str | None = None


@dataclass(frozen=True)
class Normalize:
    """Collaborative L1 normalization: ``into[v, seg] = source[v, seg] / sum(source[v, seg])``.

    ``segment`` features at a time (default: the whole row of ``k``); a zero segment stays as
    it is.  ``into`` defaults to ``source`` (in place).  With ``log=True`` the source holds
    logarithms and ``into`` gets their softmax per segment, shifted by the segment's maximum so
    that very negative logs (products of many messages) neither underflow nor overflow.
    """

    source: str
    into: str | None = None
    segment: int | None = None
    log: bool = False  # source holds logs: into = softmax per segment (max-shifted)


@dataclass(frozen=True)
class MaxChange:
    """The stop test's measure in the same kernel: ``into[0] = max(into[0], |new[v, f] -
    old[v, f]|)`` and ``into[1] = max(into[1], |new[v, f]|)`` over every vertex the kernel
    visits (whatever its progress flag) and every feature ``f < k``; a NaN counts as infinity.

    ``into`` names a float32 device array of 2 that the caller zeroes before the launch; the
    maxima are kept in registers through the kernel and combined once per warp (a warp
    maximum, then an atomic), so the test costs no pass of its own.  Pull foldmaps and
    vertexmaps only (a push's vertices are visited by whichever warp takes them).  Example::

        stop = device.zeros(2, np.float32)
        ops.vertexmap(g, [ops.Vertex(update), ops.MaxChange("x_next", "x", "stop")],
                      dict(args, stop=stop), k=k)
        change, size = device.to_host(stop)   # converged: change <= tol * max(1, size)

    With ``moved`` (and ``threshold``, ``weight``), the same pass also counts the rows that
    moved: ``moved`` names an int64 device array of 1 (the caller zeroes it) that gets the sum
    of ``weight[v]`` (an integer device array of n, say the out-degrees) over the visited
    vertices with some ``|new[v, f] - old[v, f]| > threshold`` (``threshold`` names a number in
    args; a NaN counts as moved): the out-edges a change-driven step would push.  With
    ``relative`` (a number in args) too, a feature moved when ``|new - old| > threshold +
    relative * |new|``.

    With ``sums``, the same pass also adds up the L1 change of each feature: ``sums`` names a
    float64 device array of k (the caller zeroes it) that gets ``sum_v |new[v, f] - old[v, f]|``
    (in float64) over the visited vertices; a NaN makes it infinite.  PageRank's stop test
    (``max_f sums[f] < tol``) reads it.

    A vertexmap given ``active_in`` visits only its active vertices, so the measures cover
    those; a foldmap visits every vertex.
    """

    new: str
    old: str
    into: str
    moved: str = ""
    threshold: str = ""
    weight: str = ""
    sums: str = ""
    relative: str = ""


@dataclass(frozen=True)
class Solve:
    """Collaborative small SPD solve: ``into[v, :d] = (A + ridge I)^{-1} b``.

    Row ``v`` of ``source`` holds ``A`` (``d x d``, row-major, symmetric positive
    semi-definite) then ``b`` (``d`` values), so the step's ``k`` must be ``d*d + d``;
    ``ridge`` names a positive scalar in ``args``.  Cholesky in float64.  Feature-aware, each
    thread of the property holds one entry and the factorization runs in ``d`` rounds of warp
    shuffles (``k <= 32``) or of shared memory (above); not feature-aware, one thread solves.
    A vertex whose progress flag is off (see ``foldmap``) is left as it is.
    """

    source: str
    into: str
    ridge: str


@dataclass(frozen=True)
class MapOptions:
    """How a foldmap / edgemap / vertexmap kernel maps and launches (what stays the same from
    call to call; the features ``k``, active sets and direction are the call's own keywords).

    ``feature_aware``: one thread per feature (``next_pow2(k / width)`` threads per property)
    or, False, one thread per vertex looping over its features.  ``block_size``: threads per
    block (None: the kernel's default).  ``width`` (1, 2, 4; None chooses from k): features
    per thread of a feature-aware pull (see :mod:`onyx_rapids.kernels.codegen`).
    ``edge_access`` (pull kernels): ``"merged"`` has the lanes of a vertex load runs of
    consecutive in-edges in one load and shuffle them round (EMOGI's merged access; it needs
    the warp mapping, k / width <= 32), ``"aligned"`` starts those runs at 128-byte
    boundaries, ``"degree"`` / ``"naive"`` have each feature group load each in-edge it takes;
    None: ``"aligned"`` when the graph's edges are placed on the host and the warp mapping
    gives a property several lanes, else ``"degree"``.  Push kernels already hand a warp's
    edges to its lanes in runs; a vertexmap checks it and, with no edges to read, changes
    nothing (so one options value serves an algorithm's edge and vertex kernels).
    ``max_blocks``: the most blocks a launch takes (None: 16 per multiprocessor).
    ``scratch=N`` gives every feature group (every thread when not feature-aware) ``N``
    float32 of shared memory, alive for the whole kernel: functions that take a parameter
    named ``scratch`` receive it, so one step can leave values for the next (ONYX 6.2.1).

    The operators check the values when they plan a launch.  ``MapOptions.of(execution)``
    takes the fields an :class:`~onyx_rapids.execution.Execution` has::

        opts = ops.MapOptions.of(execution)       # or ops.MapOptions(feature_aware=False)
        ops.foldmap(g, steps, args, k=k, options=opts)
    """

    feature_aware: bool = True
    block_size: int | None = None
    width: int | None = None
    edge_access: str | None = None
    max_blocks: int | None = None
    scratch: int = 0

    @classmethod
    def of(cls, execution, **overrides) -> "MapOptions":
        """The options of ``execution`` (its fields of these names), then ``overrides``."""
        return options_of(cls, execution, **overrides)



def next_pow2(x: int) -> int:
    return 1 << max(0, int(x) - 1).bit_length()


class _KernelCache:
    """A bounded LRU cache of generated kernels, with hit/miss counts (tests read them)."""

    def __init__(self, size: int = 256):
        self.size = size
        self.entries: OrderedDict = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key, make):
        if key in self.entries:
            self.hits += 1
            self.entries.move_to_end(key)
            return self.entries[key]
        self.misses += 1
        value = make()
        self.entries[key] = value
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value

    def clear(self):
        self.entries.clear()
        self.hits = self.misses = 0


KERNEL_CACHE = _KernelCache()


def kernel_cache_info() -> dict:
    return {"hits": KERNEL_CACHE.hits, "misses": KERNEL_CACHE.misses, "size": len(KERNEL_CACHE.entries)}


class _KernelTimes:
    """Per-kernel wall time, recorded only inside :func:`profile_kernels` (it synchronizes the
    device around every launch, which a normal run must not pay)."""

    def __init__(self):
        self.enabled = False
        self.entries: dict = {}  # KernelSpec -> [launches, seconds]

    def add(self, spec, seconds: float):
        entry = self.entries.setdefault(spec, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds


KERNEL_TIMES = _KernelTimes()


@contextmanager
def profile_kernels():
    """Time every generated-kernel launch inside the block; yields ``{spec: (launches, ms)}``,
    filled when the block ends.

    Example::

        >>> with profile_kernels() as times:          # doctest: +SKIP
        ...     onyx.pagerank(g)
        >>> sorted(times.values(), key=lambda t: -t[1])[0]   # doctest: +SKIP
        (31, 212.4)
    """
    result: dict = {}
    previous, KERNEL_TIMES.enabled, KERNEL_TIMES.entries = (KERNEL_TIMES.entries,
                                                           True, {})
    try:
        yield result
    finally:
        device.synchronize()
        result.update({spec: (n, s * 1e3) for spec, (n, s) in KERNEL_TIMES.entries.items()})
        KERNEL_TIMES.enabled, KERNEL_TIMES.entries = False, previous


def _check_bits(bits, n: int, name: str):
    if bits is None:
        return
    words = (n + 31) // 32
    if not device.is_device_array(bits) or bits.dtype != np.uint32 or bits.shape != (words,):
        raise ValueError(
            f"{name} must be a uint32 bit-vector of {words} words (see onyx_rapids.frontier), "
            f"got {getattr(bits, 'dtype', type(bits).__name__)} {getattr(bits, 'shape', '')}"
        )


def _check_prop(args: dict, name: str, k: int, role: str, rows: int):
    if name not in args:
        raise ValueError(f"{role} {name!r} is not in args (args has {sorted(args)})")
    a = args[name]
    if not device.is_device_array(a) or a.ndim != 2 or a.shape[0] != rows or a.shape[1] < k:
        raise ValueError(
            f"{role} {name!r} must be a {rows} x {k} (or wider) device array, "
            f"got {getattr(a, 'shape', type(a).__name__)}"
        )


def _check_moved(args: dict, s: "MaxChange", n: int):
    """MaxChange's moved count: an int64 array of 1, a number, an integer array of n."""
    out, weight = args.get(s.moved), args.get(s.weight)
    if not device.is_device_array(out) or out.dtype != np.int64 or out.shape != (1,):
        raise ValueError(f"MaxChange moved {s.moved!r} must name an int64 device array of 1 in "
                         f"args, got {getattr(out, 'dtype', type(out).__name__)} "
                         f"{getattr(out, 'shape', '')}")
    numbers = [("threshold", s.threshold)] + ([("relative", s.relative)] if s.relative else [])
    for role, name in numbers:
        value = args.get(name)
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise ValueError(f"MaxChange {role} {name!r} must name a number in args, got "
                             f"{type(value).__name__}")
    if (not device.is_device_array(weight) or weight.shape != (n,)
            or np.dtype(weight.dtype).kind not in "iu"):
        raise ValueError(f"MaxChange weight {s.weight!r} must name an integer device array of "
                         f"n = {n} in args, got {getattr(weight, 'dtype', type(weight).__name__)}"
                         f" {getattr(weight, 'shape', '')}")


def _edge_output(args: dict, s, k: int, n: int, role: str) -> str:
    """The dtype (str) of an Edge / Gather step's aggregate: its array's, checked, when it is
    stored; float32 when it stays in registers."""
    if not s.store:
        return np.dtype(np.float32).str
    _check_prop(args, s.into, k, role, n)
    return np.dtype(args[s.into].dtype).str


@dataclass(frozen=True)
class _Checked:
    """What :func:`_check_steps` found valid: the steps as code-generation specs."""

    k: int
    direction: str  # "pull" for vertex steps only (no edges to walk)
    args: dict = dataclasses.field(compare=False)
    specs: tuple  # of codegen.StepSpec
    functions: tuple  # the device function of each step (None: built-in)
    dtypes: tuple  # (name, dtype str) of edge outputs and normalized sources, sorted
    has_edges: bool


@dataclass(frozen=True)
class _Plan:
    """Everything a foldmap launch is made of except the arrays: the kernel (its spec and
    functions, the kernel cache's key) and the launch geometry.  Equal plans run the same
    compiled kernel the same way."""

    spec: codegen.KernelSpec
    functions: tuple
    grid: int
    max_blocks: int
    per_vertex: int = 1  # threads a vertex takes (a streamed partition's grid is sized by it)
    streamed: bool = False  # host-placed in-edges streamed through device memory (streaming)

    @property
    def key(self):
        return (self.spec, self.functions)


def _check_steps(g, steps, args, *, k, direction, scratch, active_in, active_out) -> _Checked:
    """Validate a foldmap call (ValueError / TypeError naming what is wrong and the fix)."""
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k (features per property) must be a positive integer, got {k!r}")
    k = int(k)
    _choice("direction", direction, DIRECTIONS)
    steps = list(steps)
    if not steps:
        raise ValueError("steps must hold at least one Edge, Vertex, Normalize or Solve step")
    args = _check_args(args, scratch)
    _check_bits(active_in, g.n, "active_in")
    _check_bits(active_out, g.n, "active_out")
    direction, has_edges = _check_order(steps, direction)
    # register aggregates (Edge store=False): their names, which no array in args backs
    registers = {s.into for s in steps if isinstance(s, (Edge, Gather)) and not s.store}
    if registers and direction != "pull":
        raise ValueError("Edge store=False keeps the aggregate in the registers of the pull "
                         "that reduced it: it needs direction='pull'")
    if registers:
        args = {name: value for name, value in args.items() if name not in registers}
    fold = _Fold(args=args, k=k, n=g.n, registers=registers)
    specs, functions = [], []
    for s in steps:
        check = next(check for kind, check in _STEP_CHECKS if isinstance(s, kind))
        spec, fn = check(s, fold)
        _check_names(spec, fn, fold, scratch)
        specs.append(spec)
        functions.append(fn)
    unread = sorted(registers - fold.read)
    if unread:
        raise ValueError(f"Edge store=False aggregate(s) {unread} are read by no Vertex("
                         "aggregate=...) or Normalize step of this foldmap: their sums would be "
                         "lost (store them, or read them in a vertex step)")
    return _Checked(k=k, direction=direction, args=args, specs=tuple(specs),
                    functions=tuple(functions), dtypes=tuple(sorted(fold.dtypes.items())),
                    has_edges=has_edges)


def _check_args(args, scratch) -> dict:
    """``args`` prepared (:func:`~onyx_rapids.binding.prepare_args`), without the names the
    kernels keep for themselves; ``scratch`` a number of floats."""
    args = prepare_args(args, reserved=codegen.FIXED_PARAMS)
    if "scratch" in args:
        raise ValueError("args key 'scratch' is reserved: pass options=MapOptions(scratch=N) "
                         "to get shared memory")
    if "lanes" in args:
        raise ValueError("args key 'lanes' is reserved: functions that take it get the lanes "
                         "of their property's features")
    if "heavy_row" in args:
        raise ValueError("args key 'heavy_row' is reserved: the kernels of register "
                         "aggregates (Edge store=False) use it")
    if not isinstance(scratch, (int, np.integer)) or scratch < 0:
        raise ValueError(f"scratch must be a non-negative number of floats, got {scratch!r}")
    return args


def _check_order(steps, direction: str) -> tuple[str, bool]:
    """``(direction, has_edges)`` of legal steps in a legal order (see foldmap): a fold of
    vertex steps only is a pull (no edges to walk)."""
    for s in steps:
        if not isinstance(s, (Edge, Gather, Vertex, Normalize, Solve, MaxChange)):
            raise TypeError(f"steps must be Edge, Gather, Vertex, Normalize, Solve or "
                            f"MaxChange, got {type(s).__name__}")
    kinds = ["edge" if isinstance(s, (Edge, Gather)) else "vertex" for s in steps]
    if "edge" not in kinds:
        return "pull", False
    first_vertex = kinds.index("vertex") if "vertex" in kinds else len(kinds)
    last_edge = len(kinds) - 1 - kinds[::-1].index("edge")
    if direction == "pull" and last_edge > first_vertex:
        raise ValueError(
            "illegal fold in pull direction: edge steps must come before vertex steps "
            "(a vertex step would read aggregates other warps are still pulling); "
            "split the steps into two foldmap calls"
        )
    if direction == "push" and first_vertex < len(kinds) and first_vertex > kinds.index("edge"):
        raise ValueError(
            "illegal fold in push direction: vertex steps must come before edge steps "
            "(a vertex step would read aggregates other warps are still pushing into); "
            "use direction='pull' or split the steps into two foldmap calls"
        )
    if direction == "push" and any(isinstance(s, MaxChange) for s in steps):
        raise ValueError("MaxChange runs in pull foldmaps and vertexmaps (a push visits its "
                         "vertices through whichever warp takes them); measure the change "
                         "in a vertexmap or with properties.has_converged")
    return direction, True


@dataclass
class _Fold:
    """What the step checks share: the call's ``args``, ``k`` and ``n``, the names of its
    register aggregates, and what they find: the register aggregates some step reads, the
    dtypes of the edge outputs and normalized sources."""

    args: dict
    k: int
    n: int
    registers: set
    read: set = dataclasses.field(default_factory=set)
    dtypes: dict = dataclasses.field(default_factory=dict)


def _edge_step(s: Edge, fold: _Fold):
    if s.reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be one of {REDUCTIONS}, got {s.reduce!r}")
    fn = device_function(s.fn, "an edge function")
    params = parameters(fn, ("f", "u", "v", "e"), "edge function")
    fold.dtypes[s.into] = _edge_output(fold.args, s, fold.k, fold.n, "Edge output")
    return codegen.StepSpec("edge", params=params, into=s.into, reduce=s.reduce,
                            reads_edge=reads_argument(fn, 3), store=bool(s.store)), fn


def _gather_step(s: Gather, fold: _Fold):
    if s.reduce != "sum":
        raise ValueError(f"Gather sums its rows; reduce={s.reduce!r} needs an Edge step")
    params, reads_edge, fn = (), False, None
    if s.weight is not None:
        fn = device_function(s.weight, "a weight function")
        params = parameters(fn, ("u", "v", "e"), "weight function")
        reads_edge = reads_argument(fn, 2)
    if s.rows in fold.registers:
        raise ValueError(f"Gather rows {s.rows!r} is a register aggregate: only a "
                         "Vertex(aggregate=...) or a Normalize of the same fold reads it")
    _check_prop(fold.args, s.rows, fold.k, "Gather rows", fold.n)
    fold.dtypes[s.into] = _edge_output(fold.args, s, fold.k, fold.n, "Gather output")
    return codegen.StepSpec("edge", params=params, into=s.into, source=s.rows,
                            reads_edge=reads_edge, store=bool(s.store), gather=True), fn


def _vertex_step(s: Vertex, fold: _Fold):
    fn = device_function(s.fn, "a vertex function")
    params = parameters(fn, ("f", "v"), "vertex function")
    aggregate = s.aggregate or ""
    if aggregate:
        if aggregate not in params:
            raise ValueError(f"Vertex aggregate={aggregate!r}: "
                             f"{py_func(fn).__name__} has no parameter of that name "
                             f"(it takes {params})")
        if aggregate in fold.registers:
            fold.read.add(aggregate)
        else:
            _check_prop(fold.args, aggregate, fold.k, "Vertex aggregate", fold.n)
    return codegen.StepSpec("vertex", params=params, aggregate=aggregate), fn


def _max_change_step(s: MaxChange, fold: _Fold):
    args, k = fold.args, fold.k
    _check_prop(args, s.new, k, "MaxChange new", fold.n)
    _check_prop(args, s.old, k, "MaxChange old", fold.n)
    out = args.get(s.into)
    if (not device.is_device_array(out) or out.dtype != np.float32
            or out.shape != (2,)):
        raise ValueError(f"MaxChange into {s.into!r} must name a float32 device array "
                         f"of 2 in args, got "
                         f"{getattr(out, 'dtype', type(out).__name__)} "
                         f"{getattr(out, 'shape', '')}")
    if s.moved:
        _check_moved(args, s, fold.n)
    if s.sums:
        sums = args.get(s.sums)
        if (not device.is_device_array(sums) or sums.dtype != np.float64
                or sums.shape != (k,)):
            raise ValueError(f"MaxChange sums {s.sums!r} must name a float64 device "
                             f"array of k = {k} in args, got "
                             f"{getattr(sums, 'dtype', type(sums).__name__)} "
                             f"{getattr(sums, 'shape', '')}")
    return codegen.StepSpec("maxchange", into=s.into, source=s.new, other=s.old,
                            moved=s.moved, threshold=s.threshold, weight=s.weight,
                            sums=s.sums, relative=s.relative), None


def _solve_step(s: Solve, fold: _Fold):
    k = fold.k
    d = int(round((math.sqrt(1 + 4 * k) - 1) / 2))
    if d * d + d != k:
        raise ValueError(f"Solve needs k = d*d + d (A then b per row), got k={k}")
    _check_prop(fold.args, s.source, k, "Solve source", fold.n)
    _check_prop(fold.args, s.into, d, "Solve destination", fold.n)
    if not isinstance(fold.args.get(s.ridge), np.floating):
        raise ValueError(f"Solve ridge {s.ridge!r} must name a float scalar in args")
    return codegen.StepSpec("solve", params=(s.ridge,), into=s.into, source=s.source,
                            order=d), None


def _normalize_step(s: Normalize, fold: _Fold):
    k = fold.k
    into = s.into or s.source
    segment = k if s.segment is None else int(s.segment)
    if segment < 1 or k % segment:
        raise ValueError(f"Normalize segment must divide k={k}, got {s.segment!r}")
    if into in fold.registers:
        raise ValueError(f"Normalize into={into!r}: {into!r} is the register aggregate "
                         "of an Edge(store=False) step, which nothing can write")
    if s.source in fold.registers:  # normalizes the register aggregate into `into`
        fold.read.add(s.source)
    else:
        _check_prop(fold.args, s.source, k, "Normalize source", fold.n)
        fold.dtypes[s.source] = np.dtype(fold.args[s.source].dtype).str
    _check_prop(fold.args, into, k, "Normalize destination", fold.n)
    return codegen.StepSpec("normalize", into=into, source=s.source, segment=segment,
                            log=bool(s.log)), None


#: Each step kind's check: the step as a code-generation spec, and its device function.
_STEP_CHECKS = ((Edge, _edge_step), (Gather, _gather_step), (Vertex, _vertex_step),
                (MaxChange, _max_change_step), (Solve, _solve_step), (Normalize, _normalize_step))


def _check_names(spec, fn, fold: _Fold, scratch):
    """The names a step reads: no register aggregate but where one may be read (a Vertex's
    ``aggregate``, a Normalize's source), and every parameter of its function in ``args``."""
    for name in spec.params + tuple(x for x in (spec.into, spec.source, spec.other)
                                    if x and spec.kind != "edge"
                                    and not (spec.kind == "normalize" and x == spec.source)):
        # (a Gather's rows were refused above when they name a register aggregate)
        if name in fold.registers and name != spec.aggregate:
            raise ValueError(
                f"{name!r} is the register aggregate of an Edge(store=False) step: only "
                "a Vertex(aggregate=...) parameter or a Normalize source can read it, "
                "and nothing can write it")
    for name in spec.params:
        if (name == "scratch" and scratch) or name == "lanes" or name == spec.aggregate:
            continue
        if name not in fold.args:
            raise ValueError(
                f"{py_func(fn).__name__} takes {name!r}, which is not in args "
                f"(args has {sorted(fold.args)})"
            )


def _used(specs) -> set:
    """The names of ``args`` that the steps read or write: the kernel takes only those."""
    used = set()
    for s in specs:
        used.update(s.params)
        used.update(name for name in (s.into, s.source, s.other, s.moved, s.threshold,
                                      s.weight, s.sums, s.relative) if name)
    return used


def _plan(g, checked: _Checked, options: MapOptions, *, all_active: bool,
          has_active_out: bool) -> _Plan:
    """The kernel spec and launch geometry of a checked call (no launch; the graph's
    heavy-vertex chunks, and the heavy rows' scratch of register aggregates, which it adds to
    ``checked.args``, are built once and cached on it)."""
    n, k, direction, args = g.n, checked.k, checked.direction, checked.args
    scratch, edge_access = options.scratch, options.edge_access
    block = device.block_threads(options.block_size, 128, simulator_default=64)
    width = _width(checked, options.feature_aware, options.width)
    group, mapping, block = _mapping(k // width, options.feature_aware, block)
    coop = 1
    if mapping == "warp" and direction == "pull" and checked.has_edges:
        # several groups of a warp share a vertex's in-edges, about one edge per group
        coop = min(32 // group, COOP_MAX, next_pow2(max(1, g.m // max(g.n, 1))))
    heavy, chunk = _heavy_split(g, checked, mapping, group, coop, block)
    registers = _heavy_registers(g, checked, heavy) if heavy else False
    # an array bound to several names is passed once and aliased inside the kernel (the
    # simulator copies each array argument separately, which would split the aliases)
    used = _used(checked.specs) | ({"heavy_row"} if registers else set())
    names, aliases = passed_once(args, sorted(used & set(args)))  # each array costs a launch
    if scratch and (block // group) * scratch * 4 > 48 * 1024:
        raise ValueError(
            f"scratch={scratch} floats for each of {block // group} groups of a block exceeds "
            "48 KiB of shared memory; lower scratch or block_size"
        )
    streamed = streaming.applies(g, direction=direction, has_edges=checked.has_edges,
                                 all_active=all_active, edge_access=edge_access) \
        and streaming.stream_for(g, _reads_edges(checked.specs)) is not None
    runs, align = _edge_runs(g, edge_access, mapping, direction, checked.has_edges, group,
                             coop, streamed)
    steps = tuple(
        dataclasses.replace(s, vector=width if VECTOR_GATHER and width > 1 and mapping != "nfa"
                            and direction == "pull" and _vector_rows(args[s.source], width)
                            else 0) if s.gather else s for s in checked.specs)
    spec = codegen.KernelSpec(
        steps=steps,
        direction=direction,
        mapping=mapping,
        k=k,
        group=group,
        coop=coop,
        block_size=block,
        scratch=int(scratch),
        all_active=all_active,
        has_active_out=has_active_out,
        arg_names=tuple(names),
        aliases=tuple(aliases),
        dtypes=checked.dtypes,
        heavy=heavy,
        chunk=chunk,
        width=width,
        runs=runs,
        align=align,
    )
    per_vertex = group * coop if mapping == "warp" else 1 if mapping == "nfa" else group
    threads = -(-n // 32) * 32 if mapping == "warp" and direction == "push" else n * per_vertex
    max_blocks = options.max_blocks
    if max_blocks is None:
        max_blocks = 2 if device.is_simulator() else device.multiprocessor_count() * 16
    return _Plan(spec=spec, functions=checked.functions,
                 grid=device.grid_size(threads, block, max_blocks), max_blocks=int(max_blocks),
                 per_vertex=per_vertex, streamed=streamed)


def _mapping(slots: int, feature_aware: bool, block: int) -> tuple[int, str, int]:
    """``(group, mapping, block)``: the threads of a property's ``slots`` feature slots and the
    thread mapping they make (warp, block; nfa: one thread a vertex), the block they fit in."""
    if not feature_aware:
        return 1, "nfa", block
    group = next_pow2(slots)
    if group > MAX_GROUP:
        raise ValueError(f"feature_aware supports k <= {MAX_GROUP}; use feature_aware=False")
    return group, "warp" if group <= 32 else "block", max(block, group)


def _heavy_split(g, checked: _Checked, mapping: str, group: int, coop: int,
                 block: int) -> tuple[int, int]:
    """``(heavy, chunk)`` of a pull's feature-aware load balancing: a vertex whose in-edges
    would keep its unit busy for more than HEAVY_ROUNDS rounds, and that has more than
    HEAVY_MEAN times the mean in-degree, is split into chunks of ``chunk`` edges over whole
    blocks (the chunk kernel); (0, 0) where no vertex is, or the kernel cannot split."""
    if (checked.direction != "pull" or not checked.has_edges or mapping == "nfa"
            or any({"lanes", "scratch"} & set(s.params) for s in checked.specs
                   if s.kind == "edge")):
        return 0, 0
    heavy = max(HEAVY_ROUNDS * coop, math.ceil(HEAVY_MEAN * g.m / max(g.n, 1)))
    # a chunk's groups end with k atomics each: give them about 4 edges per atomic
    chunk = max(CHUNK_ROUNDS, 4 * checked.k) * (block // group)
    if _heavy_chunks(g, heavy, chunk) is None:
        return 0, 0
    return heavy, chunk


def _heavy_registers(g, checked: _Checked, heavy: int) -> bool:
    """Whether the fold has register aggregates; if so the chunk kernel sums the heavy
    vertices into rows of a scratch: ``heavy_row`` and each aggregate's scratch go into
    ``checked.args``."""
    registers = [s for s in checked.specs if s.kind == "edge" and not s.store]
    if registers:
        rows, count = _heavy_rows(g, heavy)
        checked.args["heavy_row"] = rows
        for s in registers:
            checked.args[s.into] = _register_scratch(g, heavy, checked.k, s.reduce, count)
    return bool(registers)


def _reads_edges(specs) -> bool:
    """Whether an edge step of the kernel reads its edge id (so the edge ids are streamed)."""
    return any(s.reads_edge for s in specs if s.kind == "edge")


def _edge_runs(g, edge_access, mapping: str, direction: str, has_edges: bool, group: int,
               coop: int, streamed: bool = False):
    """``(runs, align)`` of a pull kernel's in-edge reads for ``edge_access`` (see MapOptions):
    merged runs of ``group * coop`` edges for "merged", aligned to 128 bytes (or the run, if
    shorter) for "aligned"; when None, aligned runs for edges read from the host (placed
    there and not ``streamed``) if a property has several lanes (with one, the groups of a
    vertex already read consecutive edges, and the runs' bookkeeping cost more than it saved:
    docs/performance.md)."""
    _choice("edge_access", edge_access, EDGE_ACCESS, optional=True)
    if edge_access is None:
        host = getattr(g, "placement", "device") == "host" and not streamed
        edge_access = "aligned" if host and mapping == "warp" and group > 1 else "degree"
    if edge_access in ("degree", "naive") or direction != "pull" or not has_edges:
        return False, 0
    if mapping != "warp":
        raise ValueError(f"edge_access={edge_access!r} reads a vertex's in-edges in runs over "
                         f"one warp's lanes: it needs feature_aware=True and k / width <= 32")
    if edge_access == "merged":
        return True, 0
    return True, min(group * coop, 128 // np.dtype(g.in_indices.dtype).itemsize)


def _timed(spec, launch):
    """Run ``launch()``, timing it into KERNEL_TIMES inside :func:`profile_kernels`."""
    if not KERNEL_TIMES.enabled and not profiling.active():
        launch()
        return
    seconds = profiling.timed_launch(launch)  # also the profiled call's (onyx_rapids.profiling)
    if KERNEL_TIMES.enabled:
        KERNEL_TIMES.add(spec, seconds)


def launch_kernel(name: str, kernel, grid, block, *args) -> None:
    """Launch a hand-written kernel (ACC's, fused PageRank's, peeling's, union-find's) on
    ``args``, timed as ``name`` inside :func:`profile_kernels` like the generated ones."""
    _timed(name, lambda: kernel[device.launch_config(grid, block)](*device.kernel_args(args)))


def _launch(g, plan: _Plan, args: dict, active_in, active_out):
    """Compile (once, through the kernel cache) and launch a plan on its arrays."""
    spec, functions = plan.spec, plan.functions
    kernel, _ = KERNEL_CACHE.get(plan.key, lambda: codegen.build(spec, functions))
    if spec.direction == "pull":
        offsets, indices, edge_ids = g.in_offsets, g.in_indices, g.in_edge_ids
    else:
        offsets, indices, edge_ids = g.out_offsets, g.out_indices, g.out_indices
    dummy = _dummy_bits()
    bits = (dummy if active_in is None else active_in,
            dummy if active_out is None else active_out)
    arrays = tuple(args[name] for name in spec.arg_names)
    block = spec.block_size
    if spec.heavy:
        chunk_spec = dataclasses.replace(spec, chunk_kernel=True)
        chunk_kernel, _ = KERNEL_CACHE.get((chunk_spec, functions),
                                           lambda: codegen.build(chunk_spec, functions))
        owners, starts = _heavy_chunks(g, spec.heavy, spec.chunk)

    def run(first, end, indices, edge_ids, chunks, grid):
        fixed = (np.int64(end), np.int64(first), offsets, indices, edge_ids) + bits
        if chunks is not None and chunks[1] > chunks[0]:
            # the heavy vertices' chunks first: the main kernel's vertex steps read them
            c0, c1 = chunks
            blocks = min(c1 - c0, plan.max_blocks)
            _timed(chunk_spec, lambda: chunk_kernel[device.launch_config(blocks, block)](
                *device.kernel_args(fixed + (owners[c0:c1], starts[c0:c1]) + arrays)))
        _timed(spec, lambda: kernel[device.launch_config(grid, block)](
            *device.kernel_args(fixed + arrays)))

    if not plan.streamed:
        run(0, g.n, indices, edge_ids, (0, int(owners.shape[0])) if spec.heavy else None,
            plan.grid)
        return
    # a partition of destination vertices at a time, its in-edges in device memory
    owned = g.cached(("operators", "pull_chunk_owners", spec.heavy, spec.chunk),
                     lambda: device.to_host(owners)) if spec.heavy else None
    for first, end, streamed in streaming.stream_for(g, _reads_edges(spec.steps)).windows():
        chunks = None if owned is None else (int(np.searchsorted(owned, first)),
                                             int(np.searchsorted(owned, end)))
        run(first, end, streamed[0], streamed[1] if len(streamed) > 1 else edge_ids, chunks,
            device.grid_size((end - first) * plan.per_vertex, block, plan.max_blocks))


def foldmap(g, steps, args=None, *, k: int, active_in=None, active_out=None,
            direction: str = "pull", options: MapOptions = MapOptions()):
    """Run ``steps`` (Edge / Vertex / Normalize / Solve / MaxChange) as one generated kernel; see
    the module doc; ``options`` (:class:`MapOptions`) say how it maps and launches.

    A user function that takes a parameter named ``scratch`` receives the shared memory of
    ``options.scratch``.  One that takes a parameter named ``lanes`` receives, feature-aware
    with ``k <= 32``, the uint32 mask of the warp lanes that hold features ``0..k-1`` of its
    property and call it together, so it can share values among them with
    :func:`onyx_rapids.kernels.collective.group_broadcast` (ONYX's collaborative operations);
    it receives 0 when the features are not spread over one warp (one thread per vertex, or
    groups wider than a warp, or several features per thread) and must then compute alone.

    Returns ``active_out``.
    """
    checked = _check_steps(g, steps, args, k=k, direction=direction, scratch=options.scratch,
                           active_in=active_in, active_out=active_out)
    plan = _plan(g, checked, options, all_active=active_in is None,
                 has_active_out=active_out is not None)
    _launch(g, plan, checked.args, active_in, active_out)
    return active_out


WIDTHS = (1, 2, 4)


def _width(checked: _Checked, feature_aware: bool, requested) -> int:
    """Features per thread: ``requested`` where the kernel allows it, else the choice from k
    (the most that divide k and the segments from k = 32 on, else one).  A push,
    a kernel whose functions take ``lanes`` or ``scratch``, or one with a solve step runs one
    feature per thread; more need k and every normalize segment to be multiples of it."""
    k = checked.k
    if requested is not None and requested not in WIDTHS:
        raise ValueError(f"width must be None, 1, 2 or 4, got {requested!r}")
    if not feature_aware or checked.direction != "pull" or any(
            s.kind == "solve" or {"lanes", "scratch"} & set(s.params) for s in checked.specs):
        return 1
    legal = [w for w in WIDTHS if k % w == 0 and all(
        s.segment % w == 0 for s in checked.specs if s.kind == "normalize")]
    if requested is not None:
        if requested not in legal:
            raise ValueError(f"width={requested}: k={k} and every normalize segment must be "
                             f"multiples of it; widths possible here: {legal}")
        return requested
    # measured on rmat scale 22 (docs/performance.md): at k = 32 and 128 four features a
    # thread beat one and two on the edge kernels; below k = 32 not yet measured
    return legal[-1] if k >= 32 else 1


#: A Gather step's thread loads its ``width`` features of a row in one vector load (where
#: the rows allow it, :func:`_vector_rows`); False loads each (the ablation).
VECTOR_GATHER = True

COOP_MAX = 8  # pull, warp mapping: at most this many groups share one vertex's in-edges
# (8 with HEAVY_ROUNDS 32 beat 32 with 256 on rmat scale 22, k = 1: docs/performance.md)
HEAVY_ROUNDS = 32  # pull: in-edge rounds of a vertex's unit from which it is split in chunks
CHUNK_ROUNDS = 32  # a chunk of a heavy vertex gives each group of its block this many edges
HEAVY_MEAN = 4  # pull: and from this many times the mean in-degree: at k >= 64 (one group a
# vertex) the 32-round rule sent most of a graph's edges through the chunk kernel's atomics,
# where they pay more than the imbalance they remove (docs/performance.md)


def _heavy_chunks(g, heavy: int, chunk: int):
    """(chunk_vertex, chunk_start) of the in-edges of the vertices of in-degree >= ``heavy``,
    ``chunk`` edges each; None when there are none.  Cached on the graph (Graph.cached)."""

    def build():
        xp = device.xp
        degree = xp.diff(g.in_offsets)
        vertices = device.to_host(xp.flatnonzero(degree >= heavy)).astype(np.int64)
        if vertices.size == 0:
            return None
        first = device.to_host(g.in_offsets[vertices]).astype(np.int64)
        count = -(-device.to_host(degree[vertices]).astype(np.int64) // chunk)
        owner = np.repeat(vertices, count)
        within = np.arange(owner.size) - np.repeat(np.cumsum(count) - count, count)
        start = np.repeat(first, count) + within * chunk
        return (device.asarray(owner.astype(g.in_indices.dtype)),
                device.asarray(start.astype(g.in_offsets.dtype)))

    return g.cached(("operators", "pull_chunks", int(heavy), int(chunk)), build)


def _vector_rows(a, width: int) -> bool:
    """Whether a thread may load ``width`` consecutive features of ``a``'s rows in one vector
    load: C-contiguous float32 rows a multiple of ``width`` wide, data aligned to it."""
    if np.dtype(a.dtype) != np.float32 or a.ndim != 2 or a.shape[1] % width:
        return False
    face = getattr(a, "__cuda_array_interface__", None) or a.__array_interface__
    contiguous = face.get("strides") is None or tuple(face["strides"]) == (4 * a.shape[1], 4)
    return contiguous and face["data"][0] % (4 * width) == 0


def _heavy_rows(g, heavy: int):
    """(row, count): ``row[v]`` (int32, n) numbers the vertices of in-degree >= ``heavy``
    0..count-1 (-1 elsewhere): their rows of a register aggregate's scratch."""

    def build():
        xp = device.xp
        heavy_mask = xp.diff(g.in_offsets) >= heavy
        rows = xp.cumsum(heavy_mask, dtype=np.int64) - 1
        return (xp.where(heavy_mask, rows, -1).astype(np.int32),
                int(heavy_mask.sum()))

    return g.cached(("operators", "heavy_rows", int(heavy)), build)


def _register_scratch(g, heavy: int, k: int, reduce: str, count: int):
    """The scratch (count x k float32, filled with the reduction's identity) in which the
    chunk kernel reduces the heavy vertices' in-edges of a register aggregate; the main
    kernel resets every row it reads, so one scratch serves every launch on the graph."""
    ident = codegen.identity(reduce, np.float32)
    return g.cached(("operators", "register_scratch", int(heavy), int(k), reduce),
                    lambda: device.xp.full((count, k), ident, dtype=np.float32))


_DUMMY = {}


def _dummy_bits():
    if "bits" not in _DUMMY:
        _DUMMY["bits"] = device.zeros(1, np.uint32)
    return _DUMMY["bits"]


def edgemap(g, fn, into: str, args=None, *, reduce: str = "sum", k: int | None = None,
            active_in=None, active_out=None, direction: str = "push",
            options: MapOptions = MapOptions()):
    """``into[v, f] = reduce(into[v, f], fn(f, u, v, e, ...))`` over edges with active sources.

    ``k`` defaults to the width of ``args[into]``; ``options`` as in :func:`foldmap`.
    Returns ``active_out``.
    """
    if k is None:
        target = (args or {}).get(into)
        if target is None:
            raise ValueError(f"into={into!r} is not in args")
        k = target.shape[1] if getattr(target, "ndim", 0) == 2 else 0
    return foldmap(g, [Edge(fn, into, reduce)], args, k=k, active_in=active_in,
                   active_out=active_out, direction=direction, options=options)


def vertexmap(g, fns, args=None, *, k: int, active_in=None, active_out=None,
              options: MapOptions = MapOptions()):
    """Run one vertex function, or a list of Vertex/Normalize/Solve/MaxChange steps, on the
    active vertices; ``options`` as in :func:`foldmap`."""
    steps = fns if isinstance(fns, (list, tuple)) else [fns]
    steps = [s if isinstance(s, (Vertex, Normalize, Solve, MaxChange)) else Vertex(s)
             for s in steps]
    return foldmap(g, steps, args, k=k, active_in=active_in, active_out=active_out,
                   direction="pull", options=options)


def normalize(g, name: str, args, *, k: int, segment: int | None = None, into=None,
              active_in=None, active_out=None, options: MapOptions = MapOptions()):
    """Collaborative L1 normalization of the rows of ``args[name]`` (see :class:`Normalize`)."""
    return vertexmap(g, [Normalize(name, into, segment)], args, k=k, active_in=active_in,
                     active_out=active_out, options=options)
