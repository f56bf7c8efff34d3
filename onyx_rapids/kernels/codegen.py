"""Generation of the folded map kernels (ONYX Chapter 6) from named templates.

One generated kernel runs an ordered list of steps on every vertex of the graph:

* ``edge`` steps: a per-feature edge function ``fn(f, u, v, e, ...)`` whose values are reduced
  (sum, min or max) into ``into[v, f]``;
* ``vertex`` steps: a per-feature vertex function ``fn(f, v, ...) -> bool``;
* ``normalize`` steps: the collaborative L1 normalization of a property row, per segment;
* ``solve`` steps: the collaborative Cholesky solve of the small SPD system a row holds;
* ``maxchange`` steps: the stop test's two maxima, ``max |new - old|`` and ``max |new|`` over
  the kernel's vertices, kept in registers through the vertex loop and combined at the end
  (a warp maximum, then one atomic per warp into ``into[0]``, ``into[1]``).

Two shapes are legal (checked in :mod:`onyx_rapids.operators`):

* **pull**: edge steps first, then vertex steps. One feature group per destination ``v`` walks
  the in-edges (CSC) and reduces in registers, atomic-free, then runs the vertex steps on ``v``
  at once, since ``v``'s aggregate is complete.
* **push**: vertex steps first, then edge steps. The vertex steps decide (progress rule) which
  sources push; their out-edges are spread over the warp with ONYX's two-phase load balancing:
  a warp scan of the selected degrees, one binary search per edge (per-edge phase), then the
  edge and its features handed to the lanes through shuffles (per-feature phase).  Reductions
  use atomics.

Three thread mappings share each shape:

* ``warp``: feature-aware, group width ``T = next_pow2(k) <= 32``, ``32 / T`` properties per warp,
  collaborative operations through warp intrinsics;
* ``block``: feature-aware, ``T > 32``: a group spans ``T / 32`` warps, collaborative operations
  through shared memory;
* ``nfa``: not feature-aware: one thread per vertex looping over the ``k`` features.

Pull kernels of the group mappings may give each thread ``width`` (1, 2 or 4) consecutive
features: the group then has ``T = next_pow2(k / width)`` threads, a thread calls the user
functions once per feature it owns (``fw0 = f * width``, ``fw1``, ...; ``f`` is then the
thread's slot in its group), keeps that many aggregates in registers and loads that many
values per edge, and the collaborative operations combine a thread's own features before the
lanes' (segments hold whole slots).  ``width=1`` generates exactly the one-feature code.

**Register aggregates** (ONYX's folding removes the intermediate property): a pull's edge step
with ``store=False`` writes nothing; its aggregate stays in the thread's registers and the
vertex steps of the same kernel read it there (a vertex step's ``aggregate`` parameter receives
the value, a normalize step may take it as its source).  The in-edges of heavy vertices are
still summed by the chunk kernel, atomically, into a compact scratch array of the heavy rows
(``heavy_row[v]`` names v's row); the main kernel adds that row to the registers and resets it
to the reduction's identity, so the scratch is ready for the next launch and nothing is
zeroed between iterations.  A vertex step's ``aggregate`` naming a stored array receives
``array[v, f]``.

Pull kernels of the warp mapping may read their in-edges in *runs* (``runs``, EMOGI's merged
access, for edges in host memory read over PCIe): the lanes of a vertex load that many
consecutive in-edges in one coalesced load and hand them round by shuffles, instead of each
group loading each edge it takes; ``align`` starts the runs at 128-byte boundaries.

The source is built as text, ``exec``'d into a namespace holding only the user functions, the
collaborative device functions and constants, and compiled with ``numba.cuda.jit``.  Set
``ONYX_RAPIDS_DUMP_KERNELS=DIR`` to write every generated source to ``DIR``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np
from numba import cuda, int32, uint32

from . import collective, vectors

#: Every generated kernel's first parameters.  A pull visits the vertices ``first_vertex <= v < n``
#: (a whole launch: 0 and the vertex count; a streamed launch, :mod:`onyx_rapids.streaming`: one
#: partition of destination vertices); push and chunk kernels take ``first_vertex`` and ignore it.
FIXED_PARAMS = ("n", "first_vertex", "offsets", "indices", "edge_ids", "active_in", "active_out")


@dataclass(frozen=True)
class StepSpec:
    """One step of a generated kernel, with everything that changes its code."""

    kind: str  # "edge" | "vertex" | "normalize" | "solve" | "maxchange"
    params: tuple = ()  # user function: argument names after (f, v) / (f, u, v, e); solve: ridge
    into: str = ""  # edge: the reduced output; normalize, solve: the destination; maxchange:
    # the two maxima
    source: str = ""  # normalize: the array normalized; solve: the rows [A, b]; maxchange: new
    other: str = ""  # maxchange: old
    order: int = 0  # solve: d, the size of the system (k = d*d + d)
    reduce: str = "sum"  # edge: "sum" | "min" | "max"
    segment: int = 0  # normalize: features per segment
    log: bool = False  # normalize: the source holds logs (softmax, shifted by the maximum)
    moved: str = ""  # maxchange: int64 array of 1 that adds up ``weight[v]`` of the moved rows
    threshold: str = ""  # maxchange with moved: how far a feature must move (a scalar)
    weight: str = ""  # maxchange with moved: the per-vertex integer added (out-degrees, say)
    sums: str = ""  # maxchange: float64 array of k that gets sum_v |new - old| per feature
    reads_edge: bool = True  # edge: the function reads its edge id ``e`` (else runs skip it)
    store: bool = True  # edge: False keeps the aggregate in registers (see "Register aggregates")
    aggregate: str = ""  # vertex: the parameter that receives ``aggregate[v, f]`` as a value
    gather: bool = False  # edge: value = source[u, f] * fn(u, v, e, ..) (fn None: no weight)
    vector: int = 0  # gather in a pull: the thread's `width` features in one vector load


@dataclass(frozen=True)
class KernelSpec:
    steps: tuple  # of StepSpec
    direction: str  # "pull" | "push"
    mapping: str  # "warp" | "block" | "nfa"
    k: int
    group: int  # T, threads per property (1 for nfa)
    coop: int  # pull, warp mapping: groups sharing one vertex's in-edges (1: a group each)
    block_size: int
    scratch: int  # shared-memory floats per feature group (per thread for nfa) given as `scratch`
    all_active: bool
    has_active_out: bool
    arg_names: tuple
    aliases: tuple  # (name, kernel parameter) pairs: names bound to an array passed once
    dtypes: tuple  # (name, numpy dtype str) of the edge outputs and normalized arrays
    heavy: int = 0  # pull: in-degree from which a vertex's edges are left to the chunk kernel
    chunk: int = 0  # edges per chunk of a heavy vertex
    chunk_kernel: bool = False  # this is the chunk kernel of the heavy vertices (see below)
    width: int = 1  # pull, group mappings: consecutive features per thread (k % width == 0)
    runs: bool = False  # pull, warp mapping: a vertex's lanes load runs of consecutive in-edges
    align: int = 0  # with runs: a run starts at a multiple of this many edges (0: at the first)


class _Writer:
    def __init__(self):
        self.lines = []
        self.depth = 0

    def __call__(self, line: str = ""):
        self.lines.append("    " * self.depth + line if line else "")

    def indent(self):
        self.depth += 1

    def dedent(self):
        self.depth -= 1

    def text(self):
        return "\n".join(self.lines) + "\n"


def _identity(reduce: str, dtype: np.dtype):
    if reduce == "sum":
        return dtype.type(0)
    if np.issubdtype(dtype, np.floating):
        return dtype.type(np.inf if reduce == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if reduce == "min" else info.min)


def _combine(w, reduce: str, target: str, value: str):
    """Emit ``target = reduce(target, value)``."""
    if reduce == "sum":
        w(f"{target} += {value}")
    else:
        w(f"if {value} {'<' if reduce == 'min' else '>'} {target}:")
        w(f"    {target} = {value}")


def _call(step_index: int, step: StepSpec, head: str) -> str:
    args = ", ".join((head,) + step.params)
    return f"fn{step_index}({args})"


class _Generator:
    def __init__(self, spec: KernelSpec):
        self.spec = spec
        self.w = _Writer()
        self.ns = {
            "cuda": cuda,
            "uint32": uint32,
            "int32": int32,
            "FULL": uint32(0xFFFFFFFF),
            "is_active": collective.is_active,
            "mark_active": collective.mark_active,
            "group_any": collective.group_any,
            "lane_group_mask": collective.lane_group_mask,
            "group_segment_sum": collective.group_segment_sum,
            "warp_inclusive_scan": collective.warp_inclusive_scan,
            "warp_upper_lane": collective.warp_upper_lane,
            "block_group_any": collective.block_group_any,
            "block_segment_sum": collective.block_segment_sum,
            "block_segment_max": collective.block_segment_max,
            "group_segment_max": collective.group_segment_max,
            "group_spd_solve": collective.group_spd_solve,
            "block_spd_solve": collective.block_spd_solve,
            "spd_solve_row": collective.spd_solve_row,
            "load2": vectors.load2,
            "load4": vectors.load4,
        }
        self.dtypes = dict(spec.dtypes)
        self.W = spec.width
        self.K = spec.k // spec.width  # feature slots of a property (k when width is 1)
        if spec.k % self.W or (self.W > 1 and (spec.mapping == "nfa" or spec.direction != "pull"
                                               or any(s.kind == "solve" for s in spec.steps))):
            raise ValueError(f"width={self.W} needs a feature-aware pull without solve steps "
                             f"and k a multiple of it (k={spec.k})")
        if spec.runs and (spec.mapping != "warp" or spec.direction != "pull"):
            raise ValueError("merged edge runs need a pull in the warp mapping (k / width <= 32)")
        self.edge_steps = [(i, s) for i, s in enumerate(spec.steps) if s.kind == "edge"]
        # aggregates kept in registers: their name -> the edge step's index
        self.registers = {s.into: i for i, s in self.edge_steps if not s.store}
        if self.registers and spec.direction != "pull":
            raise ValueError("register aggregates (Edge store=False) need a pull")
        self.vertex_steps = [(i, s) for i, s in enumerate(spec.steps) if s.kind != "edge"]
        self.max_changes = [(i, s) for i, s in self.vertex_steps if s.kind == "maxchange"]
        for i, s in self.edge_steps:
            self.ns[f"ident{i}"] = _identity(s.reduce, np.dtype(self.dtypes[s.into]))

    # -- helpers -------------------------------------------------------------------------

    def feats(self) -> list:
        """The features this thread owns, as expressions: ``f``, or ``fw0``.. with width."""
        return ["f"] if self.W == 1 else [f"fw{j}" for j in range(self.W)]

    def acc(self, i: int, j: int) -> str:
        return f"acc{i}" if self.W == 1 else f"acc{i}_{j}"

    def value(self, name: str, fj: str, j: int = 0) -> str:
        """The expression of ``name[v, fj]`` (``fj`` the ``j``-th feature the thread owns): the
        register of a register aggregate, else a load."""
        i = self.registers.get(name)
        if i is None:
            return f"{name}[v, {fj}]"
        return f"acc{i}[{fj}]" if self.spec.mapping == "nfa" else self.acc(i, j)

    def vertex_call(self, i: int, s, fj: str, j: int = 0) -> str:
        """The call of vertex step ``i`` on feature ``fj`` of ``v``; its ``aggregate``
        parameter gets the value (:meth:`value`) instead of the array."""
        args = [fj, "v"] + [self.value(p, fj, j) if p == s.aggregate else p for p in s.params]
        return f"fn{i}({', '.join(args)})"

    def feature_vars(self):
        """Define ``fw0``.. (the features of slot ``f``) when a thread owns several."""
        if self.W > 1:
            self.w(f"fw0 = f * {self.W}")
            for j in range(1, self.W):
                self.w(f"fw{j} = fw0 + {j}")

    def active(self, var: str) -> str:
        return "True" if self.spec.all_active else f"is_active(active_in, {var}) == 1"

    def first_go(self, var: str) -> str:
        """Progress flag on entry: pull edge steps gate on their sources, vertex steps on v."""
        return "True" if self.edge_steps else self.active(var)

    def header(self):
        params = ", ".join(FIXED_PARAMS + self.spec.arg_names)
        self.w(f"def kernel({params}):")
        self.w.indent()
        if self.spec.mapping != "warp":
            self.w("lanes = uint32(0)  # the features are not spread over one warp's lanes")
        for name, twin in self.spec.aliases:
            self.w(f"{name} = {twin}")
        if self.max_changes:
            self.ns.update(float32=np.float32, warp_max=collective.warp_max, INF=np.float32(np.inf))
            for i, s in self.max_changes:
                self.w(f"mc_d{i} = float32(0.0)")
                self.w(f"mc_a{i} = float32(0.0)")
                if s.moved:
                    self.ns.update(int64=np.int64, warp_sum=collective.warp_sum)
                    self.w(f"mc_e{i} = int64(0)")
                if s.sums:
                    self.ns.update(float64=np.float64, warp_sum=collective.warp_sum)
                    if self.spec.mapping == "nfa":  # a thread holds every feature
                        self.w(f"mc_s{i} = cuda.local.array({self.spec.k}, float64)")
                        self.w(f"for f in range({self.spec.k}):")
                        self.w(f"    mc_s{i}[f] = 0.0")
                    else:
                        for j in range(self.W):
                            self.w(f"mc_s{i}_{j} = float64(0.0)")
        if self.spec.scratch:
            # ONYX 6.2.1: each feature group gets its own slice of shared memory, alive for the
            # whole folded kernel, so its functions can hand values to each other
            per = self.spec.scratch
            owners = self.spec.block_size // self.spec.group
            self.w(f"scratch_all = cuda.shared.array({owners * per}, float32)")
            self.w(f"sg = cuda.threadIdx.x // {self.spec.group}")
            self.w(f"scratch = scratch_all[sg * {per}:(sg + 1) * {per}]")
            self.ns["float32"] = np.float32

    def lanes_code(self):
        """``lanes``, given to user functions that ask for it: the warp lanes holding features
        0..k-1 of the thread's property, which call every user function together."""
        if self.W > 1:  # user functions taking lanes run one feature per thread
            self.w("lanes = uint32(0)")
            return
        k = self.spec.k
        self.w(f"lanes = uint32({(1 << k) - 1} << (lane - f))")

    # -- vertex and normalize steps ------------------------------------------------------

    def vertex_steps_code(self, valid: str):
        """Emit the vertex/normalize steps; ``go`` holds the progress flag of the vertex."""
        spec, w = self.spec, self.w
        for i, s in self.vertex_steps:
            if s.kind == "vertex":
                if spec.mapping == "nfa":
                    w("r = False")
                    w("if go:")
                    w.indent()
                    w(f"for f in range({spec.k}):")
                    w.indent()
                    w(f"if {self.vertex_call(i, s, 'f')}:")
                    w("    r = True")
                    w.dedent()
                    w.dedent()
                    w("go = r")
                else:
                    w("r = False")
                    w(f"if go and f < {self.K}:")
                    if self.W == 1:
                        w(f"    r = {self.vertex_call(i, s, 'f')}")
                    for j, fj in enumerate(self.feats() if self.W > 1 else ()):
                        w(f"    if {self.vertex_call(i, s, fj, j)}:")
                        w("        r = True")
                    if spec.mapping == "warp":
                        w("go = group_any(r, gmask)")
                        w("cuda.syncwarp()")
                    else:
                        w("go = block_group_any(r, g, f, flags)")
            elif s.kind == "solve":
                self.solve_code(s, valid)
            elif s.kind == "maxchange":
                self.max_change_code(i, s, valid)
            elif s.log:
                self.log_normalize_code(s, valid)
            else:  # normalize
                src, dst, seg = s.source, s.into, s.segment
                zero = f"zero_{src}"
                self.ns[zero] = np.dtype(self.dtypes[src]).type(0)
                if spec.mapping == "nfa":
                    w("if go:")
                    w.indent()
                    w(f"for s0 in range(0, {spec.k}, {seg}):")
                    w.indent()
                    w(f"total = {zero}")
                    w(f"for f in range(s0, s0 + {seg}):")
                    w(f"    total += {self.value(src, 'f')}")
                    w(f"for f in range(s0, s0 + {seg}):")
                    w(f"    x = {self.value(src, 'f')}")
                    w(f"    {dst}[v, f] = x / total if total != 0 else x")
                    w.dedent()
                    w.dedent()
                elif self.W == 1:
                    w(f"x = {zero}")
                    w(f"if {valid} and f < {spec.k}:")
                    w(f"    x = {self.value(src, 'f')}")
                    w(f"total = {self.segment_call('sum', 'x', seg)}")
                    w(f"if go and f < {spec.k}:")
                    w(f"    {dst}[v, f] = x / total if total != 0 else x")
                    w("cuda.syncwarp()" if spec.mapping == "warp" else "cuda.syncthreads()")
                else:  # the thread's own features first, then the segment's slots
                    xs = [f"xw{j}" for j in range(self.W)]
                    w(f"{' = '.join(xs)} = {zero}")
                    w(f"if {valid} and f < {self.K}:")
                    for j, (x, fj) in enumerate(zip(xs, self.feats())):
                        w(f"    {x} = {self.value(src, fj, j)}")
                    w(f"x = {' + '.join(xs)}")
                    w(f"total = {self.segment_call('sum', 'x', seg // self.W)}")
                    w(f"if go and f < {self.K}:")
                    for x, fj in zip(xs, self.feats()):
                        w(f"    {dst}[v, {fj}] = {x} / total if total != 0 else {x}")
                    w("cuda.syncwarp()" if spec.mapping == "warp" else "cuda.syncthreads()")

    def max_change_code(self, i: int, s, valid: str):
        """Fold row v's ``|new - old|`` and ``|new|`` into the thread's maxima (every valid
        vertex, whatever its progress flag; a NaN counts as infinity, so it never passes).
        With ``moved``: a row with some ``|new - old| > threshold`` adds ``weight[v]`` to the
        count of its group's first thread, once per vertex."""
        spec, w = self.spec, self.w
        new, old = s.source, s.other
        lead = " and gi == 0" if spec.coop > 1 and self.edge_steps else ""
        if not self.edge_steps and not spec.all_active:  # a vertexmap visits its active set
            valid = f"{valid} and {self.active('v')}"
        if s.moved:
            w("mvf = False")
        if spec.mapping == "nfa":
            w(f"if {valid}:")
            w.indent()
            w(f"for f in range({spec.k}):")
            feats = ["f"]
        else:
            w(f"if {valid} and f < {self.K}{lead}:")
            feats = self.feats()
        w.indent()
        for j, fj in enumerate(feats):
            w(f"mcx = {new}[v, {fj}]")
            if s.sums:  # in float64, as the called L1 test: the float32 difference rounds
                w(f"mcs = abs(float64(mcx) - float64({old}[v, {fj}]))")
                w("if mcs != mcs:")
                w("    mcs = INF")
                w(f"mc_s{i}[f] += mcs" if spec.mapping == "nfa" else f"mc_s{i}_{j} += mcs")
            w(f"mcd = abs(mcx - {old}[v, {fj}])")
            w("mcx = abs(mcx)")
            w("if mcd != mcd:")
            w("    mcd = INF")
            w("if mcx != mcx:")
            w("    mcx = INF")
            w(f"if mcd > mc_d{i}:")
            w(f"    mc_d{i} = mcd")
            w(f"if mcx > mc_a{i}:")
            w(f"    mc_a{i} = mcx")
            if s.moved:
                w(f"if mcd > {s.threshold}:")
                w("    mvf = True")
        w.dedent()
        if spec.mapping == "nfa":
            w.dedent()
        if not s.moved:
            return
        if spec.mapping == "warp":
            w("mvf = group_any(mvf, gmask)")
            w("cuda.syncwarp()")
        elif spec.mapping == "block":
            w("mvf = block_group_any(mvf, g, f, flags)")
        first = "" if spec.mapping == "nfa" else " and f == 0"
        w(f"if mvf and {valid}{first}{lead}:")
        w(f"    mc_e{i} += int64({s.weight}[v])")

    def max_change_epilogue(self):
        """After the vertex loop (every lane of the warp gets here): a warp maximum, then one
        atomic per warp, skipped when the global value is already larger."""
        w = self.w
        for i, s in self.max_changes:
            if s.sums:
                self.sums_epilogue(i, s)
            w(f"mc_d{i} = warp_max(mc_d{i})")
            w(f"mc_a{i} = warp_max(mc_a{i})")
            if s.moved:
                w(f"mc_e{i} = warp_sum(mc_e{i})")
                w(f"if cuda.laneid == 0 and mc_e{i} != 0:")
                w(f"    cuda.atomic.add({s.moved}, 0, mc_e{i})")
            w("if cuda.laneid == 0:")
            w(f"    if mc_d{i} > {s.into}[0]:")
            w(f"        cuda.atomic.max({s.into}, 0, mc_d{i})")
            w(f"    if mc_a{i} > {s.into}[1]:")
            w(f"        cuda.atomic.max({s.into}, 1, mc_a{i})")

    def sums_epilogue(self, i: int, s):
        """``sums[f] += `` the thread's sums: lanes holding the same feature add theirs up
        first (warp mapping: shuffles across the groups; nfa: a warp sum a feature), and one
        atomic per feature a warp (a thread, in the block mapping) is left, skipped at zero."""
        spec, w = self.spec, self.w
        if spec.mapping == "nfa":
            w(f"for f in range({spec.k}):")
            w(f"    mcs = warp_sum(mc_s{i}[f])")
            w("    if cuda.laneid == 0 and mcs != 0.0:")
            w(f"        cuda.atomic.add({s.sums}, f, mcs)")
            return
        T = spec.group
        for j, fj in enumerate(self.feats()):
            a = f"mc_s{i}_{j}"
            if spec.mapping == "warp":
                d = 16
                while d >= T:
                    w(f"{a} += cuda.shfl_xor_sync(FULL, {a}, {d})")
                    d >>= 1
            first = f"cuda.laneid < {T} and " if spec.mapping == "warp" and T < 32 else ""
            w(f"if {first}f < {self.K} and {a} != 0.0:")
            w(f"    cuda.atomic.add({s.sums}, {fj}, {a})")

    def solve_code(self, s, valid: str):
        """into[v, :d] = (A + ridge I)^{-1} b from the row [A (d x d), b] of source."""
        spec, w = self.spec, self.w
        d, (ridge,) = s.order, s.params
        if spec.mapping == "nfa":
            w("if go:")
            w(f"    spd_solve_row({s.source}, v, {d}, {ridge}, {s.into})")
            return
        # every lane takes part (the exchanges name the whole warp or block); lanes of vertices
        # that do not go solve zeros and store nothing
        w("a = 0.0")
        w(f"if {valid} and go and f < {spec.k}:")
        w(f"    a = 1.0 * {s.source}[v, f]")
        if spec.mapping == "warp":
            w(f"a = group_spd_solve(a, f, {d}, {ridge})")
        else:
            w(f"a = block_spd_solve(a, f, {d}, {ridge}, gstart, solve_buf)")
        w(f"if go and f >= {d * d} and f < {spec.k}:")
        w(f"    {s.into}[v, f - {d * d}] = a")
        w("cuda.syncwarp()" if spec.mapping == "warp" else "cuda.syncthreads()")

    def segment_call(self, op: str, value: str, seg: int) -> str:
        spec = self.spec
        if spec.mapping == "warp":
            return f"group_segment_{op}({value}, f, {seg}, {spec.group}, gmask)"
        return f"block_segment_{op}({value}, f, {seg}, {self.K}, gstart, norm_buf)"

    def log_normalize_code(self, s, valid: str):
        """into = softmax of the log values in source, per segment (max-shifted: no overflow)."""
        spec, w = self.spec, self.w
        src, dst, seg = s.source, s.into, s.segment
        self.ns["math"] = math
        if spec.mapping == "nfa":
            w("if go:")
            w.indent()
            w(f"for s0 in range(0, {spec.k}, {seg}):")
            w.indent()
            w(f"top = {self.value(src, 's0')}")
            w(f"for f in range(s0 + 1, s0 + {seg}):")
            w(f"    top = max(top, {self.value(src, 'f')})")
            w("total = 0.0")
            w(f"for f in range(s0, s0 + {seg}):")
            w(f"    total += math.exp({self.value(src, 'f')} - top)")
            w(f"for f in range(s0, s0 + {seg}):")
            w(f"    {dst}[v, f] = math.exp({self.value(src, 'f')} - top) / total")
            w.dedent()
            w.dedent()
            return
        if self.W > 1:
            self.wide_log_normalize_code(s, valid)
            return
        w("x = -math.inf")
        w(f"live = {valid} and f < {spec.k}")
        w("if live:")
        w(f"    x = {self.value(src, 'f')}")
        w(f"top = {self.segment_call('max', 'x', seg)}")
        w("x = math.exp(x - top) if live else 0.0")
        w(f"total = {self.segment_call('sum', 'x', seg)}")
        w("if go and live:")
        w(f"    {dst}[v, f] = x / total")
        w("cuda.syncwarp()" if spec.mapping == "warp" else "cuda.syncthreads()")

    def wide_log_normalize_code(self, s, valid: str):
        """:meth:`log_normalize_code` with several features per thread."""
        w, src, dst, seg = self.w, s.source, s.into, s.segment // self.W
        xs = [f"xw{j}" for j in range(self.W)]
        w(f"{' = '.join(xs)} = -math.inf")
        w(f"live = {valid} and f < {self.K}")
        w("if live:")
        for j, (x, fj) in enumerate(zip(xs, self.feats())):
            w(f"    {x} = {self.value(src, fj, j)}")
        w(f"x = max({', '.join(xs)})")
        w(f"top = {self.segment_call('max', 'x', seg)}")
        for x in xs:
            w(f"{x} = math.exp({x} - top) if live else 0.0")
        w(f"x = {' + '.join(xs)}")
        w(f"total = {self.segment_call('sum', 'x', seg)}")
        w("if go and live:")
        for x, fj in zip(xs, self.feats()):
            w(f"    {dst}[v, {fj}] = {x} / total")
        w("cuda.syncwarp()" if self.spec.mapping == "warp" else "cuda.syncthreads()")

    # -- pull: edge steps reduced in registers -------------------------------------------

    def pull_edges_code(self, valid: str):
        spec, w = self.spec, self.w
        if not self.edge_steps:
            return
        nfa = spec.mapping == "nfa"
        w("ret = False")
        for i, s in self.edge_steps:
            if nfa:
                w(f"acc{i} = cuda.local.array({spec.k}, dtype_{s.into})")
                self.ns[f"dtype_{s.into}"] = np.dtype(self.dtypes[s.into])
                w(f"for f in range({spec.k}):")
                w(f"    acc{i}[f] = ident{i}")
            else:
                for j in range(self.W):
                    w(f"{self.acc(i, j)} = ident{i}")
        coop = spec.coop
        if spec.runs:
            self.pull_runs_code(valid)
        else:
            self.pull_each_edge_code(valid)
        if coop > 1:
            # combine the partial aggregates of the unit's groups: a butterfly over the lanes
            # T, 2T, .. apart, so every group ends with the whole aggregate of its feature
            d = spec.group
            w("hit = 1 if ret else 0")
            while d < spec.group * coop:
                for i, s in self.edge_steps:
                    for j in range(self.W):
                        w(f"other = cuda.shfl_xor_sync(umask, {self.acc(i, j)}, {d})")
                        _combine(w, s.reduce, self.acc(i, j), "other")
                w(f"hit |= cuda.shfl_xor_sync(umask, hit, {d})")
                d *= 2
            w("ret = hit != 0")
        # store: one writer per (v, f), no atomics
        lead = " and gi == 0" if coop > 1 else ""
        stored = [(i, s) for i, s in self.edge_steps if s.store]
        any_minmax = any(s.reduce != "sum" for _, s in stored)
        if any_minmax:
            w("improved = False")
        if stored:
            self.store_code(stored, valid, lead)
        if self.registers and spec.heavy:
            self.heavy_registers_code(valid, lead)
        if any_minmax:
            w("ret = improved")
        if not self.vertex_steps:  # the edge group is last: it decides activation
            if spec.mapping == "warp":
                w("go = group_any(ret, gmask)" + lead)
            elif spec.mapping == "block":
                w("go = block_group_any(ret, g, f, flags)")
            else:
                w("go = ret")
        else:
            # a vertex step may read features other lanes of the group just stored
            if spec.mapping == "warp":
                w("cuda.syncwarp()")
            elif spec.mapping == "block":
                w("cuda.syncthreads()")
            if coop > 1:
                w("go = valid and gi == 0  # the unit's first group runs the vertex steps")

    def heavy_registers_code(self, valid: str, lead: str):
        """A heavy vertex's register aggregates: its row of the scratch the chunk kernel
        summed into, which is then reset to the identity for the next launch."""
        w = self.w
        w(f"if {valid} and f < {self.K}{lead}:")
        w(f"    if offsets[v + 1] - offsets[v] >= {self.spec.heavy}:")
        w("        hr = heavy_row[v]")
        for name, i in self.registers.items():
            s = self.spec.steps[i]
            for j, fj in enumerate(self.feats()):
                w.depth += 2
                _combine(w, s.reduce, self.acc(i, j), f"{name}[hr, {fj}]")
                w(f"{name}[hr, {fj}] = ident{i}")
                w.depth -= 2

    def store_code(self, stored, valid: str, lead: str):
        """``into[v, f]`` of the stored edge steps: added (sum) or improved (min, max)."""
        spec, w = self.spec, self.w
        nfa = spec.mapping == "nfa"
        w(f"if {valid}{lead}:" if nfa else f"if {valid} and f < {self.K}{lead}:")
        w.indent()
        if nfa:
            w(f"for f in range({spec.k}):")
            w.indent()
        for i, s in stored:
            stores = [(f"acc{i}[f]", "f")] if nfa else [
                (self.acc(i, j), fj) for j, fj in enumerate(self.feats())]
            for a, fj in stores:
                if s.reduce == "sum":
                    w("if ret:")
                    w(f"    {s.into}[v, {fj}] += {a}")
                else:
                    cmp = "<" if s.reduce == "min" else ">"
                    w(f"if {a} {cmp} {s.into}[v, {fj}]:")
                    w(f"    {s.into}[v, {fj}] = {a}")
                    w("    improved = True")
        if nfa:
            w.dedent()
        w.dedent()

    def edge_value(self, i: int, s, fj: str, u: str, v: str, e: str) -> str:
        """The value of edge step ``i`` on edge ``(u, v, e)`` and feature ``fj``."""
        if not s.gather:
            return _call(i, s, f"{fj}, {u}, {v}, {e}")
        row = f"{s.source}[{u}, {fj}]"
        return row if self.ns.get(f"fn{i}") is None else \
            f"{row} * {_call(i, s, f'{u}, {v}, {e}')}"

    def edge_calls(self, u: str = "u", e: str = "e"):
        """The edge steps' calls on edge ``(u, v, e)``, each feature a thread owns folded into
        its aggregate (the group mappings); a vector gather loads the thread's features of
        row ``u`` at once and calls its weight function once."""
        w = self.w
        for i, s in self.edge_steps:
            if s.gather and s.vector:
                parts = [f"gv{j}" for j in range(self.W)]
                w(f"{', '.join(parts)} = load{self.W}({s.source}, {u}, fw0)")
                if self.ns.get(f"fn{i}") is not None:
                    w(f"wgt = {_call(i, s, f'{u}, v, {e}')}")
                    parts = [f"{p} * wgt" for p in parts]
                for j, part in enumerate(parts):
                    _combine(w, s.reduce, self.acc(i, j), part)
                continue
            for j, fj in enumerate(self.feats()):
                w(f"val = {self.edge_value(i, s, fj, u, 'v', e)}")
                _combine(w, s.reduce, self.acc(i, j), "val")

    def edge_loop(self, first: str, end: str, step: str, flag: str):
        """A group's walk over the in-edges ``first, first + step, .. < end`` (group
        mappings), setting ``flag`` when an active source gave.  (Loading 2, 4 or 8 edges'
        indices before combining them changed nothing on the H100: benchmarks/NOTES.md.)"""
        w = self.w
        reads_e = any(s.reads_edge for _, s in self.edge_steps)
        w(f"for p in range({first}, {end}, {step}):")
        w.indent()
        w("u = indices[p]")
        w(f"if {self.active('u')}:")
        w.indent()
        w("e = edge_ids[p]" if reads_e else "e = 0")
        self.edge_calls()
        w(f"{flag} = True")
        w.dedent()
        w.dedent()

    def pull_each_edge_code(self, valid: str):
        """Each group reads each of its vertex's in-edges itself (one load a group an edge;
        not feature-aware, one thread loops over the features)."""
        spec, w = self.spec, self.w
        nfa = spec.mapping == "nfa"
        w(f"if {valid}:" if nfa else f"if {valid} and f < {self.K}:")
        w.indent()
        w("end = offsets[v + 1]")
        if spec.heavy:  # the chunk kernel has already reduced a heavy vertex's in-edges
            w(f"if end - offsets[v] >= {spec.heavy}:")
            w("    end = offsets[v]")
        if not nfa:  # the unit's groups take every coop-th in-edge
            self.edge_loop("offsets[v] + gi" if spec.coop > 1 else "offsets[v]", "end",
                           str(spec.coop), "ret")
            w.dedent()
            return
        w("for p in range(offsets[v], end):")
        w.indent()
        w("u = indices[p]")
        w(f"if {self.active('u')}:")
        w.indent()
        w("e = edge_ids[p]")
        w(f"for f in range({spec.k}):")
        w.indent()
        for i, s in self.edge_steps:
            w(f"val = {self.edge_value(i, s, 'f', 'u', 'v', 'e')}")
            _combine(w, s.reduce, f"acc{i}[f]", "val")
        w.dedent()
        w("ret = True")
        w.dedent()
        w.dedent()
        w.dedent()

    def pull_runs_code(self, valid: str):
        """EMOGI's merged reads: the U = group x coop lanes of a vertex load U consecutive
        in-edges (index, and edge id when a function reads it) in one coalesced load, then
        hand them round by shuffles, group ``gi`` taking every ``coop``-th; with ``align``
        the first run starts at the multiple of ``align`` below the vertex's first edge (a
        128-byte boundary), so a run is one aligned transaction.  Lanes past ``k`` load and
        shuffle too (every lane the mask names takes part) but compute nothing."""
        spec, w = self.spec, self.w
        T, coop = spec.group, spec.coop
        U = T * coop
        reads_e = any(s.reads_edge for _, s in self.edge_steps)
        w(f"ul = lane & {U - 1}")
        w("ub = lane - ul")
        w("rmask = FULL" if U == 32 else f"rmask = uint32({(1 << U) - 1}) << uint32(ub)")
        w(f"if {valid}:")
        w.indent()
        w("start = offsets[v]")
        w("end = offsets[v + 1]")
        if spec.heavy:
            w(f"if end - start >= {spec.heavy}:")
            w("    end = start")
        w(f"p0 = start - start % {spec.align}" if spec.align else "p0 = start")
        w("while p0 < end:")
        w.indent()
        w("p = p0 + ul")
        w("mine = p >= start and p < end")
        w("ru = indices[p if mine else start]")
        if reads_e:
            w("re = edge_ids[p if mine else start]")
        w(f"for jj in range({T}):")
        w.indent()
        w(f"src = jj * {coop} + gi" if coop > 1 else "src = jj")
        if T == 1:  # a lane per group: its own load is its edge
            w("u = ru")
            if reads_e:
                w("e = re")
        else:
            w("u = cuda.shfl_sync(rmask, ru, ub + src)")
            if reads_e:
                w("e = cuda.shfl_sync(rmask, re, ub + src)")
        if not reads_e:
            w("e = 0")
        w("q = p0 + src")
        w(f"if f < {self.K} and q >= start and q < end:")
        w.indent()
        w(f"if {self.active('u')}:")
        w.indent()
        self.edge_calls()
        w("ret = True")
        w.dedent()
        w.dedent()
        w.dedent()
        w(f"p0 += {U}")
        w.dedent()
        w.dedent()

    # -- pull, heavy vertices: edge chunks with atomics ---------------------------------

    def chunk_kernel(self):
        """The edge steps over the in-edges of the heavy vertices, in chunks of ``chunk`` edges: a
        block takes a chunk (``chunk_vertex[c]``, from ``chunk_start[c]``), its groups take
        every G-th edge of it and combine their partial aggregates into ``into[v, f]`` with
        one atomic each.  Runs before the main pull kernel, which then skips these vertices'
        edges (its vertex steps see complete aggregates); without vertex steps it also marks
        the destinations in ``active_out``."""
        spec, w = self.spec, self.w
        T = spec.group
        G = spec.block_size // T
        params = ", ".join(FIXED_PARAMS + ("chunk_vertex", "chunk_start") + spec.arg_names)
        w(f"def kernel({params}):")
        w.indent()
        w("lanes = uint32(0)")
        for name, twin in spec.aliases:
            w(f"{name} = {twin}")
        w(f"g = cuda.threadIdx.x // {T}")
        w(f"f = cuda.threadIdx.x % {T}")
        self.feature_vars()
        w("c = cuda.blockIdx.x")
        w("while c < chunk_vertex.shape[0]:")
        w.indent()
        w("v = chunk_vertex[c]")
        w("start = chunk_start[c]")
        w(f"end = min(start + {spec.chunk}, offsets[v + 1])")
        for i, _ in self.edge_steps:
            for j in range(self.W):
                w(f"{self.acc(i, j)} = ident{i}")
        w("hit = False")
        w(f"if f < {self.K}:")
        w.indent()
        self.edge_loop("start + g", "end", str(G), "hit")
        w("go = False")
        w("if hit:")
        w.indent()
        if self.registers:  # register aggregates: the heavy vertex's row of their scratch
            w("hr = heavy_row[v]")
        for i, s in self.edge_steps:
            row = "v" if s.store else "hr"
            for j, fj in enumerate(self.feats()):
                a = self.acc(i, j)
                if s.reduce == "sum":
                    w(f"cuda.atomic.add({s.into}, ({row}, {fj}), {a})")
                    w("go = True")
                else:
                    cmp = "<" if s.reduce == "min" else ">"
                    w(f"old = cuda.atomic.{s.reduce}({s.into}, ({row}, {fj}), {a})")
                    w(f"if {a} {cmp} old:")
                    w("    go = True")
        w.dedent()
        if spec.has_active_out and not self.vertex_steps:
            w("if go:")
            w("    mark_active(active_out, v)")
        w.dedent()
        w("c += cuda.gridDim.x")
        return w.text()

    # -- push: atomics into the destinations ---------------------------------------------

    def push_edge_body(self, u: str, v: str, e: str):
        """Edge steps on one edge for the current ``f``; sets ``ret`` (progress rule)."""
        w = self.w
        w("ret = True")
        for i, s in self.edge_steps:
            w("if ret:")
            w.indent()
            w(f"val = {self.edge_value(i, s, 'f', u, v, e)}")
            if s.reduce == "sum":
                w(f"cuda.atomic.add({s.into}, ({v}, f), val)")
            else:
                w(f"old = cuda.atomic.{s.reduce}({s.into}, ({v}, f), val)")
                cmp = "<" if s.reduce == "min" else ">"
                w(f"ret = val {cmp} old")
            w.dedent()

    def activation_code(self, var: str = "v"):
        if self.spec.has_active_out:
            lead = "True" if self.spec.mapping == "nfa" else "f == 0"
            self.w(f"if go and {lead}:")
            self.w(f"    mark_active(active_out, {var})")

    # -- kernels -------------------------------------------------------------------------

    def pull_kernel(self):
        spec, w = self.spec, self.w
        self.header()
        if spec.mapping == "nfa":
            w("v = first_vertex + cuda.grid(1)")
            w("stride = cuda.gridDim.x * cuda.blockDim.x")
            w("while v < n:")
            w.indent()
            w(f"go = {self.first_go('v')}")
            self.pull_edges_code("True")
            self.vertex_steps_code("True")
            self.activation_code()
            w("v += stride")
            w.dedent()
        elif spec.mapping == "warp":
            T, W = spec.group, spec.group * spec.coop  # W lanes (coop groups) per vertex
            units = 32 // W
            w("lane = cuda.laneid")
            w(f"f = lane & {T - 1}")
            self.feature_vars()
            self.lanes_code()
            w(f"gmask = lane_group_mask(lane, {T})")
            if spec.coop > 1:
                w(f"gi = (lane & {W - 1}) // {T}")
                w("umask = FULL")
            # a warp-uniform loop: every lane reaches every collective, so the warp stays
            # converged (lanes past n take part with valid = False)
            w(f"vb = first_vertex + (cuda.grid(1) // 32) * {units}")
            self.pull_uniform_loop(f"vb + lane // {W}",
                                   f"(cuda.gridDim.x * cuda.blockDim.x // 32) * {units}")
        else:
            self.block_prologue()
            self.pull_uniform_loop("vb + g", f"cuda.gridDim.x * {spec.block_size // spec.group}")
        self.max_change_epilogue()
        return w.text()

    def pull_uniform_loop(self, vertex: str, step: str):
        """The pull loop shared by the group mappings: uniform over the warp (or block)."""
        w = self.w
        w("while vb < n:")
        w.indent()
        w(f"v = {vertex}")
        w("valid = v < n")
        w("go = False")
        w("if valid:")
        w(f"    go = {self.first_go('v')}")
        self.pull_edges_code("valid")
        self.vertex_steps_code("valid")
        self.activation_code()
        w(f"vb += {step}")
        w.dedent()

    def block_prologue(self):
        spec, w = self.spec, self.w
        T, gpb = spec.group, spec.block_size // spec.group
        w(f"flags = cuda.shared.array({gpb}, int32)")
        if any(s.kind == "normalize" for s in spec.steps):
            # one buffer serves every normalize step: float64 when one of them sums float64
            wide = any(np.dtype(self.dtypes[s.source]) == np.float64
                       for s in spec.steps if s.kind == "normalize")
            w(f"norm_buf = cuda.shared.array({spec.block_size}, norm_dtype)")
            self.ns["norm_dtype"] = np.float64 if wide or any(
                s.log for s in spec.steps if s.kind == "normalize") else np.float32
        if any(s.kind == "solve" for s in spec.steps):
            w(f"solve_buf = cuda.shared.array({spec.block_size}, float64)")
            self.ns["float64"] = np.float64
        w(f"g = cuda.threadIdx.x // {T}")
        w(f"f = cuda.threadIdx.x - g * {T}")
        self.feature_vars()
        w(f"gstart = g * {T}")
        w(f"vb = first_vertex + cuda.blockIdx.x * {gpb}")

    def push_kernel(self):
        spec, w = self.spec, self.w
        self.header()
        if spec.mapping == "nfa":
            w("v = cuda.grid(1)")
            w("stride = cuda.gridDim.x * cuda.blockDim.x")
            w("while v < n:")
            w.indent()
            w(f"go = {self.active('v')}")
            self.vertex_steps_code("True")
            w("if go:")
            w.indent()
            w("for e in range(offsets[v], offsets[v + 1]):")
            w.indent()
            w("dst = indices[e]")
            w("hit = False")
            w(f"for f in range({spec.k}):")
            w.indent()
            self.push_edge_body("v", "dst", "e")
            w("if ret:")
            w("    hit = True")
            w.dedent()
            if spec.has_active_out:
                w("if hit:")
                w("    mark_active(active_out, dst)")
            w.dedent()
            w.dedent()
            w("v += stride")
        elif spec.mapping == "block":
            self.block_prologue()
            w("while vb < n:")
            w.indent()
            w("v = vb + g")
            w("valid = v < n")
            w("go = False")
            w("if valid:")
            w(f"    go = {self.active('v')}")
            self.vertex_steps_code("valid")
            w("if go:")
            w.indent()
            w("for e in range(offsets[v], offsets[v + 1]):")
            w.indent()
            w("dst = indices[e]")
            w("ret = False")
            w(f"if f < {spec.k}:")
            w.indent()
            self.push_edge_body("v", "dst", "e")
            w.dedent()
            if spec.has_active_out:
                w("hits = cuda.ballot_sync(FULL, ret)")
                w("if cuda.laneid == 0 and hits != 0:")
                w("    mark_active(active_out, dst)")
            w.dedent()
            w.dedent()
            w(f"vb += cuda.gridDim.x * {spec.block_size // spec.group}")
        else:
            self.push_warp_kernel()
        return w.text()

    def push_warp_kernel(self):
        spec, w = self.spec, self.w
        T = spec.group
        G = 32 // T
        w("lane = cuda.laneid")
        w(f"f = lane & {T - 1}")
        self.lanes_code()
        w(f"gi = lane // {T}")
        w(f"gmask = lane_group_mask(lane, {T})")
        w("nwarps = (cuda.gridDim.x * cuda.blockDim.x) // 32")
        w("chunk = (cuda.grid(1) // 32) * 32")
        w("while chunk < n:")
        w.indent()
        if spec.all_active:
            w("word = FULL")
        else:
            w("word = uint32(active_in[chunk >> 5])")
        if self.vertex_steps:
            # vertex phase: the groups of the warp run the vertex steps on the warp's 32
            # vertices; `selected` collects the ones whose last vertex step returned True
            w("selected = uint32(0)")
            w(f"for it in range({T}):")
            w.indent()
            w(f"j = gi + it * {G}")
            w("v = chunk + j")
            w("go = v < n and ((word >> j) & 1) == 1")
            self.vertex_steps_code("v < n")
            w("lead = cuda.ballot_sync(FULL, go and f == 0)")
            w(f"for g2 in range({G}):")
            w(f"    if (lead >> ({T} * g2)) & 1:")
            w(f"        selected |= uint32(1) << uint32(g2 + it * {G})")
            w.dedent()
        else:
            w("selected = word")
        # per-edge phase: scan of the selected degrees, one binary search per edge
        w("mine = chunk + lane")
        w("deg = 0")
        w("if mine < n and ((selected >> lane) & 1) == 1:")
        w("    deg = offsets[mine + 1] - offsets[mine]")
        w("incl = warp_inclusive_scan(deg)")
        w("excl = incl - deg")
        w("total = cuda.shfl_sync(FULL, incl, 31)")
        w("base = 0")
        w("while base < total:")
        w.indent()
        w("slot = base + lane")
        w("src_lane = warp_upper_lane(excl, slot)")
        w("first = cuda.shfl_sync(FULL, excl, src_lane)")
        w("u = chunk + src_lane")
        w("e = -1")
        w("dst = 0")
        w("if slot < total:")
        w("    e = offsets[u] + (slot - first)")
        w("    dst = indices[e]")
        # per-feature phase: each group takes edges j, j+G, ... with their features
        w(f"for it in range({T}):")
        w.indent()
        w(f"j = gi + it * {G}")
        w("ej = cuda.shfl_sync(FULL, e, j)")
        w("uj = cuda.shfl_sync(FULL, u, j)")
        w("vj = cuda.shfl_sync(FULL, dst, j)")
        w("hit = False")
        w(f"if ej >= 0 and f < {spec.k}:")
        w.indent()
        self.push_edge_body("uj", "vj", "ej")
        w("hit = ret")
        w.dedent()
        if spec.has_active_out:
            w("hits = cuda.ballot_sync(FULL, hit)")
            w("if f == 0 and (hits & gmask) != 0:")
            w("    mark_active(active_out, vj)")
        w.dedent()
        w("base += 32")
        w.dedent()
        w("chunk += nwarps * 32")


def generate(spec: KernelSpec, functions) -> tuple[str, dict]:
    """Kernel source and the namespace to ``exec`` it in."""
    gen = _Generator(spec)
    for i, fn in enumerate(functions):
        if fn is not None:
            gen.ns[f"fn{i}"] = fn
    if spec.chunk_kernel:
        source = gen.chunk_kernel()
    else:
        source = gen.pull_kernel() if spec.direction == "pull" else gen.push_kernel()
    _check_shadowing(spec.arg_names, source)
    return source, gen.ns


def _check_shadowing(names, source):
    """A user argument whose name the generated kernel also assigns (a local or loop variable)
    would be silently shadowed: refuse it, naming it."""
    clash = sorted(name for name in set(names)
                   if re.search(rf"^\s*(for\s+)?{re.escape(name)}\s*(=|\+=|in\b)", source,
                                re.MULTILINE))
    if clash:
        raise ValueError(f"args: {', '.join(repr(c) for c in clash)} "
                         f"{'is a name' if len(clash) == 1 else 'are names'} the generated "
                         "kernel uses for its own variables; rename the argument(s)")


def build(spec: KernelSpec, functions):
    """Compile the kernel for ``spec`` (lazily: numba specializes on the first launch)."""
    source, ns = generate(spec, functions)
    dump = os.environ.get("ONYX_RAPIDS_DUMP_KERNELS")
    if dump:
        os.makedirs(dump, exist_ok=True)
        name = f"kernel_{abs(hash(spec)) & 0xFFFFFFFF:08x}.py"
        with open(os.path.join(dump, name), "w") as fh:
            fh.write(f"# {spec}\n{source}")
    code = compile(source, "<onyx_rapids generated kernel>", "exec")
    exec(code, ns)
    kernel = ns["kernel"]
    kernel.__onyx_source__ = source
    return cuda.jit(kernel), source
