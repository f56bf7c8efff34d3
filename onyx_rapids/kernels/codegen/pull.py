"""Pull kernels: edge steps first, then vertex steps.  One feature group per destination ``v``
walks its in-edges (CSC) and reduces in registers, atomic-free, then runs the vertex steps on
``v`` at once, since ``v``'s aggregate is complete.

A kernel is a vertex loop (:meth:`PullKernel.source`: one thread a vertex for ``nfa``, a
warp-uniform loop for ``warp`` and ``block``) around three pieces: the in-edge walk
(:meth:`~PullKernel.pull_edges_code`: each group loading each edge it takes, or EMOGI's merged
runs), the stores of the stored aggregates, then the vertex steps (:mod:`.vertex`).
:class:`ChunkKernel` is the companion kernel that reduces the heavy vertices' in-edges in
chunks, with atomics, before the main kernel runs."""

from __future__ import annotations

import numpy as np

from .emit import call, combine
from .spec import FIXED_PARAMS
from .vertex import VertexSteps


class PullKernel(VertexSteps):
    """The source of a pull kernel (``source()``)."""

    def source(self) -> str:
        spec, w = self.spec, self.w
        self.header()
        if spec.mapping == "nfa":
            self.nfa_loop()
        elif spec.mapping == "warp":
            lanes = spec.group * spec.coop  # a vertex's lanes (its coop groups)
            self.warp_prologue()
            self.uniform_loop(f"vb + lane // {lanes}",
                              f"(cuda.gridDim.x * cuda.blockDim.x // 32) * {32 // lanes}")
        else:
            self.block_prologue()
            self.uniform_loop("vb + g", f"cuda.gridDim.x * {spec.block_size // spec.group}")
        self.max_change_epilogue()
        return w.text()

    def first_go(self, var: str) -> str:
        """Progress flag on entry: pull edge steps gate on their sources, vertex steps on v."""
        return "True" if self.edge_steps else self.active(var)

    def nfa_loop(self):
        """One thread a vertex, looping over the features."""
        w = self.w
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

    def warp_prologue(self):
        """The warp mapping's start: lane, feature, group mask; the warp's first vertex."""
        spec, w = self.spec, self.w
        T, W = spec.group, spec.group * spec.coop  # W lanes (coop groups) per vertex
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
        w(f"vb = first_vertex + (cuda.grid(1) // 32) * {32 // W}")

    def uniform_loop(self, vertex: str, step: str):
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

    # -- the in-edges --------------------------------------------------------------------

    def pull_edges_code(self, valid: str):
        """The edge steps of ``v``: aggregates from the identity, the in-edge walk, the
        partial aggregates of a unit's groups combined, the stores, then the progress flag."""
        if not self.edge_steps:
            return
        self.w("ret = False")
        self.start_aggregates()
        if self.spec.runs:
            self.pull_runs_code(valid)
        else:
            self.pull_each_edge_code(valid)
        if self.spec.coop > 1:
            self.combine_groups()
        # store: one writer per (v, f), no atomics
        lead = " and gi == 0" if self.spec.coop > 1 else ""
        stored = [(i, s) for i, s in self.edge_steps if s.store]
        any_minmax = any(s.reduce != "sum" for _, s in stored)
        if any_minmax:
            self.w("improved = False")
        if stored:
            self.store_code(stored, valid, lead)
        if self.registers and self.spec.heavy:
            self.heavy_registers_code(valid, lead)
        if any_minmax:
            self.w("ret = improved")
        self.after_edges(lead)

    def start_aggregates(self):
        """Each edge step's aggregates (a local array of k for nfa) set to its identity."""
        spec, w = self.spec, self.w
        for i, s in self.edge_steps:
            if spec.mapping == "nfa":
                w(f"acc{i} = cuda.local.array({spec.k}, dtype_{s.into})")
                self.ns[f"dtype_{s.into}"] = np.dtype(self.dtypes[s.into])
                w(f"for f in range({spec.k}):")
                w(f"    acc{i}[f] = ident{i}")
            else:
                for j in range(self.W):
                    w(f"{self.acc(i, j)} = ident{i}")

    def combine_groups(self):
        """Combine the partial aggregates of the unit's groups: a butterfly over the lanes
        T, 2T, .. apart, so every group ends with the whole aggregate of its feature."""
        spec, w = self.spec, self.w
        d = spec.group
        w("hit = 1 if ret else 0")
        while d < spec.group * spec.coop:
            for i, s in self.edge_steps:
                for j in range(self.W):
                    w(f"other = cuda.shfl_xor_sync(umask, {self.acc(i, j)}, {d})")
                    combine(w, s.reduce, self.acc(i, j), "other")
            w(f"hit |= cuda.shfl_xor_sync(umask, hit, {d})")
            d *= 2
        w("ret = hit != 0")

    def after_edges(self, lead: str):
        """Without vertex steps the edge group decides activation (``go``); with them, the
        group synchronizes, since a vertex step may read features other lanes just stored."""
        mapping, w = self.spec.mapping, self.w
        if not self.vertex_steps:
            if mapping == "warp":
                w("go = group_any(ret, gmask)" + lead)
            elif mapping == "block":
                w("go = block_group_any(ret, g, f, flags)")
            else:
                w("go = ret")
            return
        if mapping != "nfa":
            w(self.sync())
        if self.spec.coop > 1:
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
                combine(w, s.reduce, self.acc(i, j), f"{name}[hr, {fj}]")
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
                    w(f"wgt = {call(i, s, f'{u}, v, {e}')}")
                    parts = [f"{p} * wgt" for p in parts]
                for j, part in enumerate(parts):
                    combine(w, s.reduce, self.acc(i, j), part)
                continue
            for j, fj in enumerate(self.feats()):
                w(f"val = {self.edge_value(i, s, fj, u, 'v', e)}")
                combine(w, s.reduce, self.acc(i, j), "val")

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
            combine(w, s.reduce, f"acc{i}[f]", "val")
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
        U = spec.group * spec.coop
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
        self.run_edges_code(reads_e)
        w(f"p0 += {U}")
        w.dedent()
        w.dedent()

    def run_edges_code(self, reads_e: bool):
        """A run handed round: the group takes its edges of the run from the lanes that
        loaded them (shuffles), and folds those inside the vertex's range."""
        spec, w = self.spec, self.w
        T, coop = spec.group, spec.coop
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


class ChunkKernel(PullKernel):
    """The edge steps over the in-edges of the heavy vertices, in chunks of ``chunk`` edges: a
    block takes a chunk (``chunk_vertex[c]``, from ``chunk_start[c]``), its groups take every
    G-th edge of it and combine their partial aggregates into ``into[v, f]`` with one atomic
    each.  Runs before the main pull kernel, which then skips these vertices' edges (its vertex
    steps see complete aggregates); without vertex steps it also marks the destinations in
    ``active_out``.  A register aggregate's chunks go to the heavy vertex's row of a scratch
    (``heavy_row[v]``), which the main kernel adds to its registers."""

    def source(self) -> str:
        spec, w = self.spec, self.w
        T = spec.group
        params = ", ".join(FIXED_PARAMS + ("chunk_vertex", "chunk_start") + spec.arg_names)
        w(f"def kernel({params}):")
        w.indent()
        w("lanes = uint32(0)")
        self.aliases()
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
        self.edge_loop("start + g", "end", str(spec.block_size // T), "hit")
        w("go = False")
        w("if hit:")
        w.indent()
        self.atomics_code()
        w.dedent()
        if spec.has_active_out and not self.vertex_steps:
            w("if go:")
            w("    mark_active(active_out, v)")
        w.dedent()
        w("c += cuda.gridDim.x")
        return w.text()

    def atomics_code(self):
        """The group's partial aggregates into ``into[v, f]`` (a register aggregate: its
        scratch row), one atomic each; ``go`` when one added or improved."""
        w = self.w
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
