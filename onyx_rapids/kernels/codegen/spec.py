"""What a generated kernel is made of: :class:`StepSpec` (one step), :class:`KernelSpec` (the
steps, the direction, the thread mapping and the launch options), the fixed parameters every
kernel takes, and the identity of each reduction.  A ``KernelSpec`` with the user functions is
the kernel cache's key (:mod:`onyx_rapids.operators`): it holds everything that changes the
generated source."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    relative: str = ""  # maxchange with moved: moved beyond threshold + relative * |new|
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
    chunk_kernel: bool = False  # this is the chunk kernel of the heavy vertices (pull.ChunkKernel)
    width: int = 1  # pull, group mappings: consecutive features per thread (k % width == 0)
    runs: bool = False  # pull, warp mapping: a vertex's lanes load runs of consecutive in-edges
    align: int = 0  # with runs: a run starts at a multiple of this many edges (0: at the first)


def identity(reduce: str, dtype) -> np.generic:
    """The value ``reduce`` ("sum", "min", "max") starts from in ``dtype``: 0, or the end of
    the range no value can lose to (+-inf for floats)."""
    dtype = np.dtype(dtype)
    if reduce == "sum":
        return dtype.type(0)
    if np.issubdtype(dtype, np.floating):
        return dtype.type(np.inf if reduce == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if reduce == "min" else info.min)
