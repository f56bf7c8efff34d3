"""Generation of the folded map kernels (ONYX Chapter 6): Python source written line by line
from a :class:`KernelSpec`, ``exec``'d and compiled with ``numba.cuda.jit``
(kept on disk across processes: :mod:`onyx_rapids.kernels.disk_cache`).

One generated kernel runs an ordered list of steps on every vertex of the graph:

* ``edge`` steps: a per-feature edge function ``fn(f, u, v, e, ...)`` whose values are reduced
  (sum, min or max) into ``into[v, f]``;
* ``vertex`` steps: a per-feature vertex function ``fn(f, v, ...) -> bool``;
* ``normalize`` steps: the collaborative L1 normalization of a property row, per segment;
* ``solve`` steps: the collaborative Cholesky solve of the small SPD system a row holds;
* ``maxchange`` steps: the stop test's two maxima, ``max |new - old|`` and ``max |new|`` over
  the kernel's vertices, kept in registers through the vertex loop and combined at the end
  (a warp maximum, then one atomic per warp into ``into[0]``, ``into[1]``).

Two shapes are legal (checked in :mod:`onyx_rapids.operators`), each written by its module:

* **pull** (:mod:`.pull`): edge steps first, then vertex steps.  One feature group per
  destination ``v`` walks the in-edges (CSC) and reduces in registers, atomic-free, then runs
  the vertex steps on ``v`` at once, since ``v``'s aggregate is complete.
* **push** (:mod:`.push`): vertex steps first, then edge steps.  The vertex steps decide
  (progress rule) which sources push; their out-edges are spread over the warp with ONYX's
  two-phase load balancing: a warp scan of the selected degrees, one binary search per edge
  (per-edge phase), then the edge and its features handed to the lanes through shuffles
  (per-feature phase).  Reductions use atomics.

The vertex steps' code, shared by both, is :mod:`.vertex`; what every kernel starts with (the
header, the namespace, the expressions of features and aggregates) is :mod:`.emit`; the specs
are :mod:`.spec`.

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
still summed by the chunk kernel (:class:`.pull.ChunkKernel`), atomically, into a compact
scratch array of the heavy rows (``heavy_row[v]`` names v's row); the main kernel adds that
row to the registers and resets it to the reduction's identity, so the scratch is ready for
the next launch and nothing is zeroed between iterations.  A vertex step's ``aggregate``
naming a stored array receives ``array[v, f]``.

Pull kernels of the warp mapping may read their in-edges in *runs* (``runs``, EMOGI's merged
access, for edges in host memory read over PCIe): the lanes of a vertex load that many
consecutive in-edges in one coalesced load and hand them round by shuffles, instead of each
group loading each edge it takes; ``align`` starts the runs at 128-byte boundaries.

The source is ``exec``'d into a namespace holding only the user functions, the collaborative
device functions and constants.  Set ``ONYX_RAPIDS_DUMP_KERNELS=DIR`` to write every generated
source to ``DIR``.
"""

from __future__ import annotations

import os
import re

from numba import cuda

from ... import device
from ..disk_cache import persist
from .pull import ChunkKernel, PullKernel
from .push import PushKernel
from .spec import FIXED_PARAMS, KernelSpec, StepSpec, identity

__all__ = ["FIXED_PARAMS", "KernelSpec", "StepSpec", "identity", "generate", "build"]


def generate(spec: KernelSpec, functions) -> tuple[str, dict]:
    """Kernel source and the namespace to ``exec`` it in."""
    kind = ChunkKernel if spec.chunk_kernel else \
        PullKernel if spec.direction == "pull" else PushKernel
    gen = kind(spec)
    for i, fn in enumerate(functions):
        if fn is not None:
            gen.ns[f"fn{i}"] = fn
    source = gen.source()
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
    """Compile the kernel for ``spec`` (lazily: numba specializes on the first launch),
    its registers capped so that a block of ``spec.block_size`` threads launches
    (:func:`onyx_rapids.device.register_cap`)."""
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
    return persist(cuda.jit(kernel, **device.jit_options(spec.block_size))), source
