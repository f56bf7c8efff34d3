"""The base every kernel generator builds on: :class:`Writer` (indented source lines),
:class:`Emitter` (the spec checked, the namespace the source runs in, and the expressions and
prologues every direction shares) and two line helpers, :func:`combine` and :func:`call`."""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, uint32

from .. import collective, vectors
from .spec import FIXED_PARAMS, KernelSpec, identity


class Writer:
    """Source lines at the current indentation; ``text()`` joins them."""

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


def combine(w, reduce: str, target: str, value: str):
    """Emit ``target = reduce(target, value)``."""
    if reduce == "sum":
        w(f"{target} += {value}")
    else:
        w(f"if {value} {'<' if reduce == 'min' else '>'} {target}:")
        w(f"    {target} = {value}")


def call(step_index: int, step, head: str) -> str:
    """The call of step ``step_index``'s user function: ``fn<i>(head, <its params>)``."""
    args = ", ".join((head,) + step.params)
    return f"fn{step_index}({args})"


#: What every generated kernel's namespace holds besides the user functions and constants.
BUILTINS = {
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


class Emitter:
    """A kernel being written: the spec (checked), the :class:`Writer` ``w``, the namespace
    ``ns`` its source will run in, and the pieces every direction uses."""

    def __init__(self, spec: KernelSpec):
        self.spec = spec
        self.w = Writer()
        self.ns = dict(BUILTINS)
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
            self.ns[f"ident{i}"] = identity(s.reduce, self.dtypes[s.into])

    # -- expressions ---------------------------------------------------------------------

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

    def active(self, var: str) -> str:
        return "True" if self.spec.all_active else f"is_active(active_in, {var}) == 1"

    def edge_value(self, i: int, s, fj: str, u: str, v: str, e: str) -> str:
        """The value of edge step ``i`` on edge ``(u, v, e)`` and feature ``fj``."""
        if not s.gather:
            return call(i, s, f"{fj}, {u}, {v}, {e}")
        row = f"{s.source}[{u}, {fj}]"
        return row if self.ns.get(f"fn{i}") is None else \
            f"{row} * {call(i, s, f'{u}, {v}, {e}')}"

    # -- prologues -----------------------------------------------------------------------

    def header(self):
        """``def kernel(...)``: the fixed and user parameters, the aliases, the max-change
        registers (:meth:`max_change_registers`) and the shared ``scratch`` of each group."""
        params = ", ".join(FIXED_PARAMS + self.spec.arg_names)
        self.w(f"def kernel({params}):")
        self.w.indent()
        if self.spec.mapping != "warp":
            self.w("lanes = uint32(0)  # the features are not spread over one warp's lanes")
        self.aliases()
        self.max_change_registers()
        if self.spec.scratch:
            # ONYX 6.2.1: each feature group gets its own slice of shared memory, alive for the
            # whole folded kernel, so its functions can hand values to each other
            per = self.spec.scratch
            owners = self.spec.block_size // self.spec.group
            self.w(f"scratch_all = cuda.shared.array({owners * per}, float32)")
            self.w(f"sg = cuda.threadIdx.x // {self.spec.group}")
            self.w(f"scratch = scratch_all[sg * {per}:(sg + 1) * {per}]")
            self.ns["float32"] = np.float32

    def max_change_registers(self):
        """At the kernel's start: each max-change step's maxima (``mc_d``, ``mc_a``), moved
        count (``mc_e``) and per-feature sums (``mc_s``), zero."""
        spec, w = self.spec, self.w
        if not self.max_changes:
            return
        self.ns.update(float32=np.float32, warp_max=collective.warp_max, INF=np.float32(np.inf))
        for i, s in self.max_changes:
            w(f"mc_d{i} = float32(0.0)")
            w(f"mc_a{i} = float32(0.0)")
            if s.moved:
                self.ns.update(int64=np.int64, warp_sum=collective.warp_sum)
                w(f"mc_e{i} = int64(0)")
            if s.sums:
                self.ns.update(float64=np.float64, warp_sum=collective.warp_sum)
                if spec.mapping == "nfa":  # a thread holds every feature
                    w(f"mc_s{i} = cuda.local.array({spec.k}, float64)")
                    w(f"for f in range({spec.k}):")
                    w(f"    mc_s{i}[f] = 0.0")
                else:
                    for j in range(self.W):
                        w(f"mc_s{i}_{j} = float64(0.0)")

    def aliases(self):
        """Names bound to an array passed once under another name."""
        for name, twin in self.spec.aliases:
            self.w(f"{name} = {twin}")

    def feature_vars(self):
        """Define ``fw0``.. (the features of slot ``f``) when a thread owns several."""
        if self.W > 1:
            self.w(f"fw0 = f * {self.W}")
            for j in range(1, self.W):
                self.w(f"fw{j} = fw0 + {j}")

    def lanes_code(self):
        """``lanes``, given to user functions that ask for it: the warp lanes holding features
        0..k-1 of the thread's property, which call every user function together."""
        if self.W > 1:  # user functions taking lanes run one feature per thread
            self.w("lanes = uint32(0)")
            return
        k = self.spec.k
        self.w(f"lanes = uint32({(1 << k) - 1} << (lane - f))")

    def block_prologue(self):
        """The block mapping's start: group ``g`` of the block, its thread's feature ``f``,
        shared flags (and buffers for normalize and solve steps), the block's first vertex."""
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

    # -- epilogues -----------------------------------------------------------------------

    def activation_code(self, var: str = "v"):
        """Mark ``var`` in ``active_out`` when its progress flag ``go`` is up (once a group)."""
        if self.spec.has_active_out:
            lead = "True" if self.spec.mapping == "nfa" else "f == 0"
            self.w(f"if go and {lead}:")
            self.w(f"    mark_active(active_out, {var})")
