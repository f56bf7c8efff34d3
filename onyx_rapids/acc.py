"""SIMD-X's Active-Compute-Combine model as one operator: :func:`acc`.

The user gives three device functions on a per-vertex ``state`` (a 1-D device array) and a
tuple ``args`` passed through to them as ``aux``::

    active(v, state, aux)      -> bool   # may v take part (default: every updated vertex)
    compute(u, v, e, state, aux) -> value  # what u offers v along edge e (CSR position)
    combine = "min" | "max"               # associative, commutative; "max" on 0/1 is a vote

and :func:`acc` iterates to a fixed point: every iteration, the vertices whose state improved in
the last one offer ``compute`` along their out-edges and each head keeps ``combine`` of its own
state and the offers.  Push applies the combine with atomics, pull without (a vertex reduces its
in-edges in registers); ``settled(v, state, aux)`` (optional) says a vertex can no longer
improve, so pull skips it (BFS: already reached).

Just-in-time task management (SIMD-X Section 4): the next worklist comes from thread-private
bins filled as vertices improve (``filter="online"``), from a ballot scan of the frontier
bit-vector (``"ballot"``: sorted, duplicate-free), or from the bins unless one overflowed its
``threshold`` entries and the ballot scan otherwise (``"jit"``, the default).  Worklist vertices
are split by out-degree into small / medium / large lists run by a thread / a warp / a block.
``direction="auto"`` pulls while the frontier's out-edges exceed ``pull_fraction`` of all
edges and pushes otherwise, deciding again every iteration (Ligra / SIMD-X).  ``fused=True`` runs
the whole traversal as one persistent cooperative kernel with grid-wide barriers (its grid is
sized from the kernel's measured occupancy, so every block is resident and the barrier cannot
deadlock) instead of several launches and host decisions per iteration.

Example (BFS hop counts from vertex 0)::

    from numba import cuda
    import onyx_rapids as onyx

    @cuda.jit(device=True)
    def hop(u, v, e, dist, aux):
        return dist[u] + 1

    dist = cupy.full(g.n, 2**31 - 1, dtype="int32"); dist[0] = 0
    info = onyx.acc(g, dist, hop, combine="min", frontier=onyx.frontier.from_vertices(g.n, [0]))
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from . import device, frontier as fr
from .kernels import acc as kacc
from .operators import KERNEL_CACHE, next_pow2

FILTERS = {"jit": kacc.JIT, "online": kacc.ONLINE, "ballot": kacc.BALLOT}
DIRECTIONS = {"auto": kacc.AUTO, "push": kacc.PUSH, "pull": kacc.PULL}
TRACE_ROWS = 1 << 16  # per-iteration trace kept for the first iterations


@cuda.jit(device=True)
def always(v, state, aux):
    return True


@cuda.jit(device=True)
def never(v, state, aux):
    return False


def _check(g, state, combine, filter, threshold, direction, pull_fraction, max_iter,
           medium_degree, large_degree):
    if combine not in ("min", "max"):
        raise ValueError(f"combine must be 'min' or 'max' (a vote is 'max' on 0/1), got "
                         f"{combine!r}")
    if filter not in FILTERS:
        raise ValueError(f"filter must be one of {sorted(FILTERS)}, got {filter!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {sorted(DIRECTIONS)}, got {direction!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)) \
            or threshold < 1:
        raise ValueError(f"threshold (bin entries per thread) must be a positive integer, got "
                         f"{threshold!r}")
    if isinstance(pull_fraction, bool) or not isinstance(pull_fraction, (int, float)) \
            or not 0.0 <= float(pull_fraction) <= 1.0:
        raise ValueError(f"pull_fraction must be a number in [0, 1], got {pull_fraction!r}")
    if max_iter is not None and (isinstance(max_iter, bool)
                                 or not isinstance(max_iter, (int, np.integer)) or max_iter < 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if not 1 <= int(medium_degree) <= int(large_degree):
        raise ValueError(f"need 1 <= medium_degree <= large_degree, got {medium_degree}, "
                         f"{large_degree}")
    if not device.is_device_array(state) or getattr(state, "ndim", 0) != 1 \
            or state.shape[0] != g.n:
        raise ValueError(f"state must be a 1-D device array of length n = {g.n}, got "
                         f"{getattr(state, 'shape', type(state).__name__)}")
    if np.dtype(state.dtype) not in (np.dtype(np.int32), np.dtype(np.int64),
                                     np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"state must be int32, int64, float32 or float64, got {state.dtype}")


def _identity(dtype, combine):
    """The value no offer can lose to: +-inf for floats (a vertex with no offer stays as it
    is), the integer range's end for integers."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(np.inf if combine == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if combine == "min" else info.min)


def _launch_shape(block_size):
    if device.is_simulator():
        return 1, block_size or 32  # a cooperative grid has one block there
    block = block_size or 256
    if block % 32 or not 32 <= block <= 1024:
        raise ValueError(f"block_size must be a multiple of 32 in [32, 1024], got {block}")
    return device.multiprocessor_count() * (2048 // block), block


def acc(g, state, compute, *, combine="min", active=None, settled=None, args=(), frontier=None,
        direction="auto", pull_fraction=0.3, filter="jit", threshold=64, fused=False,
        max_iter=None, block_size=None, medium_degree=32, large_degree=1024, parent=None):
    """Run Active-Compute-Combine from ``frontier`` (a bit-vector; None: every vertex) until no
    state improves; ``state`` is updated in place.  Returns a dict: ``iterations``, ``push`` and
    ``pull`` (iterations run each way), ``online`` and ``ballot`` (iterations whose next
    worklist came from the bins / the ballot scan), ``fused`` and ``grid`` (blocks launched),
    and ``trace`` (per iteration: pulled, ballot, worklist size, worklist out-edges).

    See the module docstring for the model; ``medium_degree`` / ``large_degree`` are the
    out-degrees from which a worklist vertex gets a warp / a block.  ``parent`` (an int32 or
    int64 device array of length n) receives, for every vertex that improved, a u whose offer
    improved it: a valid parent when every improving offer of one iteration is the same value
    (BFS levels), not in general (a later, smaller offer may lose the race to write it)."""
    _check(g, state, combine, filter, threshold, direction, pull_fraction, max_iter,
           medium_degree, large_degree)
    if frontier is not None and (getattr(frontier, "shape", None) != (fr.words(g.n),)
                                 or np.dtype(frontier.dtype) != np.uint32):
        raise ValueError(f"frontier must be a uint32 bit-vector of {fr.words(g.n)} words "
                         "(onyx_rapids.frontier), or None for every vertex")
    n, m = g.n, g.m
    active = always if active is None else active
    settled = never if settled is None else settled
    aux = tuple(args) if len(args) else (device.zeros(1, np.int32),)
    if parent is not None and (not device.is_device_array(parent)
                               or getattr(parent, "shape", None) != (n,)
                               or np.dtype(parent.dtype) not in (np.int32, np.int64)):
        raise ValueError(f"parent must be an int32 or int64 device array of length n = {n}")
    track = parent is not None
    if parent is None:
        parent = device.zeros(1, np.int32)
    max_iter = int(max_iter) if max_iter is not None else n + 1
    grid, block = _launch_shape(block_size)
    group = min(32, next_pow2(max(1, round(m / max(n, 1)))))
    key = ("acc", compute, active, settled, combine, group, int(threshold), int(medium_degree),
           int(large_degree), block, track)
    kernels = KERNEL_CACHE.get(key, lambda: kacc.build(
        compute, active, settled, combine, group=group, threshold=int(threshold),
        medium_degree=int(medium_degree), large_degree=int(large_degree), block=block,
        track_parent=track))

    ident = device.asarray(np.array([_identity(state.dtype, combine)]))
    words = fr.words(n)
    bits = device.zeros((2, words), np.uint32)
    bits[0] = fr.full(n) if frontier is None else frontier
    queues = device.empty((2, 3, max(n, 1)), np.int32)  # filled before read
    ctr = device.zeros((3, kacc.NC), np.int64)
    trace = device.zeros((min(max_iter, TRACE_ROWS), kacc.NT), np.int64)
    fmode, dmode = FILTERS[filter], DIRECTIONS[direction]
    pull_edges = np.int64(float(pull_fraction) * m)
    off, idx = g.out_offsets, g.out_indices
    in_off, in_idx, in_eid = g.in_offsets, g.in_indices, g.in_edge_ids

    if fused:
        done = device.zeros(1, np.int64)

        def fused_args(blocks):
            return (np.int64(n), state, aux, ident, off, idx, in_off, in_idx, in_eid, queues,
                    ctr, bits, device.empty(blocks * block * int(threshold), np.int32),
                    device.zeros(blocks * block, np.int32), device.zeros((3, blocks), np.int64),
                    trace, np.int64(max_iter), pull_edges, np.int32(dmode), np.int32(fmode), done,
                    parent)

        grid = min(grid, device.cooperative_blocks(kernels["fused"], fused_args(1), block))
        fargs = fused_args(grid)
        bins, binc, bcount = fargs[12], fargs[13], fargs[14]
    else:
        bins = device.empty(grid * block * int(threshold), np.int32)
        binc = device.zeros(grid * block, np.int32)
        bcount = device.zeros((3, grid), np.int64)

    # the first worklist: a ballot scan of the starting frontier (iteration -1 fills row 0)
    it0 = np.int64(-1)
    _launch(kernels["ballot_count"], grid, block, np.int64(n), state, aux, off, bits, bcount,
            ctr, it0)
    _launch(kernels["ballot_write"], grid, block, np.int64(n), state, aux, off, bits, bcount,
            queues, binc, it0)
    if fused:
        _launch(kernels["fused"], grid, block, *fargs)
        iterations = int(done[0])
        rows = device.to_host(trace[:min(iterations, trace.shape[0])])
    else:
        iterations, rows = _host_loop(kernels, grid, block, n, m, state, aux, ident, g, queues,
                                      ctr, bits, bins, binc, bcount, max_iter, pull_edges, dmode,
                                      fmode, parent)
    pulled = int(rows[:, kacc.T_PULL].sum()) if len(rows) else 0
    ballots = int(rows[:, kacc.T_BALLOT].sum()) if len(rows) else 0
    return dict(iterations=iterations, pull=pulled, push=iterations - pulled, ballot=ballots,
                online=iterations - ballots, fused=bool(fused), grid=int(grid),
                converged=_empty(ctr, iterations), trace=rows)


def _launch(kernel, grid, block, *args):
    kernel[grid, block](*device.kernel_args(args))


def _empty(ctr, it) -> bool:
    row = device.to_host(ctr[it % 3])
    return int(row[kacc.C_SMALL] + row[kacc.C_MEDIUM] + row[kacc.C_LARGE]) == 0


def _host_loop(kernels, grid, block, n, m, state, aux, ident, g, queues, ctr, bits, bins, binc,
               bcount, max_iter, pull_edges, dmode, fmode, parent):
    rows = []
    off, idx = g.out_offsets, g.out_indices
    n64 = np.int64(n)
    fm = np.int32(fmode)
    it = 0
    while it < max_iter:
        row = device.to_host(ctr[it % 3])
        size = int(row[kacc.C_SMALL] + row[kacc.C_MEDIUM] + row[kacc.C_LARGE])
        if size == 0:
            break
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
