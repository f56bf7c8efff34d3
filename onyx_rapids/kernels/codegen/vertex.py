"""The steps a generated kernel runs on one vertex ``v``, after its edge steps (pull) or before
them (push): ``vertex`` (a user function per feature, progress from its result),
``normalize`` (L1, or softmax of logs, per segment), ``solve`` (a small SPD system per row)
and ``maxchange`` (the stop test's maxima, kept in registers and combined once a warp).

Each step has a version per thread mapping: ``nfa`` loops over the ``k`` features in one
thread; ``warp`` and ``block`` give each thread its feature(s) and combine across the group
with warp intrinsics (``group_*``) or shared memory (``block_*``)."""

from __future__ import annotations

import math

import numpy as np

from .emit import Emitter


class VertexSteps(Emitter):
    """The vertex steps' code, for :class:`~.pull.PullKernel` and :class:`~.push.PushKernel`."""

    def sync(self) -> str:
        """The barrier of a feature group's threads (group mappings)."""
        return "cuda.syncwarp()" if self.spec.mapping == "warp" else "cuda.syncthreads()"

    def vertex_steps_code(self, valid: str):
        """Emit the vertex/normalize/solve/maxchange steps; ``go`` holds the progress flag of
        the vertex."""
        for i, s in self.vertex_steps:
            if s.kind == "vertex":
                self.vertex_fn_code(i, s)
            elif s.kind == "solve":
                self.solve_code(s, valid)
            elif s.kind == "maxchange":
                self.max_change_code(i, s, valid)
            elif s.log:
                self.log_normalize_code(s, valid)
            else:
                self.normalize_code(s, valid)

    # -- vertex functions ----------------------------------------------------------------

    def vertex_call(self, i: int, s, fj: str, j: int = 0) -> str:
        """The call of vertex step ``i`` on feature ``fj`` of ``v``; its ``aggregate``
        parameter gets the value (:meth:`value`) instead of the array."""
        args = [fj, "v"] + [self.value(p, fj, j) if p == s.aggregate else p for p in s.params]
        return f"fn{i}({', '.join(args)})"

    def vertex_fn_code(self, i: int, s):
        """Vertex step ``i`` on every feature of ``v`` while ``go``; ``go`` becomes whether it
        returned True for some feature (the group's vote)."""
        spec, w = self.spec, self.w
        w("r = False")
        if spec.mapping == "nfa":
            w("if go:")
            w.indent()
            w(f"for f in range({spec.k}):")
            w.indent()
            w(f"if {self.vertex_call(i, s, 'f')}:")
            w("    r = True")
            w.dedent()
            w.dedent()
            w("go = r")
            return
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

    # -- normalize -----------------------------------------------------------------------

    def segment_call(self, op: str, value: str, seg: int) -> str:
        """The group's ``op`` ("sum", "max") of ``value`` over segments of ``seg`` slots."""
        spec = self.spec
        if spec.mapping == "warp":
            return f"group_segment_{op}({value}, f, {seg}, {spec.group}, gmask)"
        return f"block_segment_{op}({value}, f, {seg}, {self.K}, gstart, norm_buf)"

    def normalize_code(self, s, valid: str):
        """into[v, seg] = source[v, seg] / its sum (a zero segment stays as it is)."""
        spec, w = self.spec, self.w
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
            w(self.sync())
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
            w(self.sync())

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
        w(self.sync())

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
        w(self.sync())

    # -- solve ---------------------------------------------------------------------------

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
        w(self.sync())

    # -- maxchange -----------------------------------------------------------------------

    def max_change_code(self, i: int, s, valid: str):
        """Fold row v's ``|new - old|`` and ``|new|`` into the thread's maxima (every valid
        vertex, whatever its progress flag; a NaN counts as infinity, so it never passes).
        With ``moved``: a row with some ``|new - old| > threshold`` adds ``weight[v]`` to the
        count of its group's first thread, once per vertex."""
        spec, w = self.spec, self.w
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
            self.max_change_feature(i, s, j, fj)
        w.dedent()
        if spec.mapping == "nfa":
            w.dedent()
        if s.moved:
            self.moved_code(i, s, valid, lead)

    def max_change_feature(self, i: int, s, j: int, fj: str):
        """Feature ``fj`` of row v into the maxima (and the sums, and the moved flag)."""
        w, new, old = self.w, s.source, s.other
        w(f"mcx = {new}[v, {fj}]")
        if s.sums:  # in float64, as the called L1 test: the float32 difference rounds
            w(f"mcs = abs(float64(mcx) - float64({old}[v, {fj}]))")
            w("if mcs != mcs:")
            w("    mcs = INF")
            w(f"mc_s{i}[f] += mcs" if self.spec.mapping == "nfa" else f"mc_s{i}_{j} += mcs")
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
            w(f"if mcd > {s.threshold}" + (f" + {s.relative} * mcx:" if s.relative else ":"))
            w("    mvf = True")

    def moved_code(self, i: int, s, valid: str, lead: str):
        """A row some feature of which moved adds ``weight[v]`` to the count, once."""
        mapping, w = self.spec.mapping, self.w
        if mapping == "warp":
            w("mvf = group_any(mvf, gmask)")
            w("cuda.syncwarp()")
        elif mapping == "block":
            w("mvf = block_group_any(mvf, g, f, flags)")
        first = "" if mapping == "nfa" else " and f == 0"
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
