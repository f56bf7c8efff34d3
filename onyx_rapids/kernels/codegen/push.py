"""Push kernels: vertex steps first, then edge steps.  The vertex steps decide (progress rule)
which sources push; the edge steps combine into the destinations with atomics.

* ``nfa``: one thread a source, looping over its out-edges and the features;
* ``block``: a group a source; its threads (features) walk the out-edges together;
* ``warp``: ONYX's two-phase load balancing: the warp's groups run the vertex steps on its 32
  vertices, then the selected vertices' out-edges are spread over the warp (a warp scan of
  their degrees, one binary search per edge: the per-edge phase) and each edge with its
  features is handed to a group through shuffles (the per-feature phase)."""

from __future__ import annotations

from .vertex import VertexSteps


class PushKernel(VertexSteps):
    """The source of a push kernel (``source()``)."""

    def source(self) -> str:
        self.header()
        if self.spec.mapping == "nfa":
            self.nfa_kernel()
        elif self.spec.mapping == "block":
            self.block_kernel()
        else:
            self.warp_kernel()
        return self.w.text()

    def edge_body(self, u: str, v: str, e: str):
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

    def nfa_kernel(self):
        spec, w = self.spec, self.w
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
        self.edge_body("v", "dst", "e")
        w("if ret:")
        w("    hit = True")
        w.dedent()
        if spec.has_active_out:
            w("if hit:")
            w("    mark_active(active_out, dst)")
        w.dedent()
        w.dedent()
        w("v += stride")

    def block_kernel(self):
        spec, w = self.spec, self.w
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
        self.edge_body("v", "dst", "e")
        w.dedent()
        if spec.has_active_out:
            w("hits = cuda.ballot_sync(FULL, ret)")
            w("if cuda.laneid == 0 and hits != 0:")
            w("    mark_active(active_out, dst)")
        w.dedent()
        w.dedent()
        w(f"vb += cuda.gridDim.x * {spec.block_size // spec.group}")

    def warp_kernel(self):
        spec, w = self.spec, self.w
        T = spec.group
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
        self.select_code()
        self.per_edge_phase()
        w("chunk += nwarps * 32")

    def select_code(self):
        """The vertex phase: the warp's groups run the vertex steps on its 32 vertices;
        ``selected`` collects the ones whose last vertex step returned True."""
        T, w = self.spec.group, self.w
        G = 32 // T
        if not self.vertex_steps:
            w("selected = word")
            return
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

    def per_edge_phase(self):
        """A scan of the selected degrees, one binary search per edge, 32 edges a round."""
        w = self.w
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
        self.per_feature_phase()
        w("base += 32")
        w.dedent()

    def per_feature_phase(self):
        """Each group takes edges j, j+G, ... of the round with their features."""
        spec, w = self.spec, self.w
        T = spec.group
        w(f"for it in range({T}):")
        w.indent()
        w(f"j = gi + it * {32 // T}")
        w("ej = cuda.shfl_sync(FULL, e, j)")
        w("uj = cuda.shfl_sync(FULL, u, j)")
        w("vj = cuda.shfl_sync(FULL, dst, j)")
        w("hit = False")
        w(f"if ej >= 0 and f < {spec.k}:")
        w.indent()
        self.edge_body("uj", "vj", "ej")
        w("hit = ret")
        w.dedent()
        if spec.has_active_out:
            w("hits = cuda.ballot_sync(FULL, hit)")
            w("if f == 0 and (hits & gmask) != 0:")
            w("    mark_active(active_out, vj)")
        w.dedent()

