"""Warp-intrinsic emulation for the Numba CUDA simulator.

The simulator (``NUMBA_ENABLE_CUDASIM=1``) runs every thread of a block as a Python thread, and
``cuda`` inside a kernel is an instance of ``numba.cuda.simulator.kernelapi.FakeCUDAModule``.
That class has no warp intrinsics, so :func:`install` adds them to it, with numba-cuda's names,
signatures and semantics, so that kernels written once against the real API run unchanged:

* ``shfl_sync(mask, value, src_lane)``, ``shfl_up_sync(mask, value, delta)``,
  ``shfl_down_sync(mask, value, delta)``, ``shfl_xor_sync(mask, value, lane_mask)``;
* ``ballot_sync(mask, predicate)``, ``all_sync(mask, predicate)``, ``any_sync(mask, predicate)``;
* ``syncwarp(mask=0xFFFFFFFF)``, ``activemask()``, ``lanemask_lt()`` (and ``laneid`` should a
  simulator lack it);
* and it makes the simulator's ``cuda.shared.array`` allocate under a lock (see
  :func:`_shared_array`: unlocked, threads of a block could get private "shared" arrays).

Design
------
Each warp (``thread_id // 32`` within one block of one launch) has a ``threading.Condition``
and, per distinct ``mask``, at most one open *round*: one execution of an intrinsic by the lanes
the mask names.  A lane deposits its arguments in the open round for its mask and waits; the
last lane to arrive computes every lane's result at once, closes the round (the next call with
that mask opens a fresh one) and wakes the others, which each read their own result from the
round object they joined.  A fast lane that races ahead into its next call therefore cannot
disturb a round that slower lanes have not read yet, and a round's results are freed once the
last lane drops it.  Rounds are keyed by mask so that divergent groups (say lanes 0-15 with mask
``0x0000FFFF`` and lanes 16-31 with ``0xFFFF0000``) proceed independently.

Semantics (as on the GPU unless noted)
--------------------------------------
* ``mask`` is truncated to 32 bits; lanes it names that do not exist in the block (a partial last
  warp) are ignored.  The calling lane must be in ``mask``: otherwise RuntimeError (undefined
  behaviour on the GPU).
* Shuffles use the low 5 bits of ``src_lane``/``delta``/``lane_mask``, as PTX ``shfl.sync``
  does: ``shfl_sync`` reads lane ``src_lane % 32``; ``shfl_up_sync`` and ``shfl_down_sync``
  return the caller's own value when ``laneid - delta < 0`` or ``laneid + delta > 31``.  Values
  are returned as deposited (same Python/NumPy type); the GPU only shuffles 32/64-bit ints and
  floats.
* A source lane that is not in ``mask`` gives the caller its own value.  The GPU gives an
  undefined value there, so kernels must not rely on this.
* ``ballot_sync`` returns a non-negative int (bit ``i`` set when lane ``i`` is in ``mask`` and its
  predicate is true).  numba-cuda types it ``int32``, so on the GPU a ballot with lane 31 set is
  negative; the bits are the same.  Store ballots in ``uint32`` arrays, where both agree (and
  the simulator's ``popc``/``ffs``/``clz``/``brev`` need the non-negative form).
* ``all_sync``/``any_sync`` return a bool (numba-cuda's ``b1``), i.e. 1/0 in arithmetic.
* ``activemask()`` returns the lanes of the warp that exist in the block and whose threads have
  not exited.  The simulator cannot see branch divergence: lanes that are alive but on another
  path still count as active, where the GPU would leave them out.

Limits and errors (instead of hangs)
------------------------------------
* If a lane named in ``mask`` has exited the kernel, the waiting lanes raise RuntimeError naming
  it (undefined behaviour on the GPU).
* If another thread of the block raised (the simulator then sets ``abort`` on every thread), a
  waiting lane raises within :data:`_POLL_S` seconds.
* A lane that waits longer than :data:`TIMEOUT_S` seconds (say, missing lanes stuck at
  ``syncthreads`` or in a round with a different mask) raises RuntimeError naming the lanes
  that never arrived.
* Two intrinsics (e.g. ``shfl_sync`` and ``ballot_sync``) meeting with the same mask raise
  RuntimeError.  Lanes that name overlapping but different masks wait for each other in vain
  until the timeout.

To see exits, :func:`install` wraps the simulator's ``BlockThread.run`` so that a thread that
finishes without error records itself.  Outside the simulator :func:`install` does nothing.
"""

from __future__ import annotations

import functools
import operator
import sys
import threading
import time
import weakref

import numpy as np

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF

#: Seconds a lane waits for the rest of its mask before giving up with an error.
TIMEOUT_S = 120.0
#: Seconds between checks for an aborted block (the simulator sets the flag without notifying).
_POLL_S = 0.05

_SHUFFLE_TYPES = (int, float, np.integer, np.floating, np.bool_)

# BlockManager -> {(blockIdx, warp index): _Warp}; weak so that finished launches free their state.
_blocks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_registry_lock = threading.Lock()
_install_lock = threading.Lock()
_shared_lock = threading.Lock()


class _Round:
    """One execution of an intrinsic by the lanes of one mask."""

    __slots__ = ("op", "mask", "args", "results", "done")

    def __init__(self, op: str, mask: int):
        self.op = op
        self.mask = mask
        self.args: dict[int, tuple] = {}  # lane -> (value, operand)
        self.results: dict[int, object] | None = None
        self.done = False


class _Warp:
    """Rendezvous state of one warp of one block."""

    __slots__ = ("cond", "label", "existing", "exited", "rounds")

    def __init__(self, label: str, n_lanes: int):
        self.cond = threading.Condition()
        self.label = label
        self.existing = (1 << n_lanes) - 1
        self.exited = 0  # lanes whose threads finished normally
        self.rounds: dict[int, _Round] = {}  # mask -> open round


def _lanes(bits: int) -> list[int]:
    return [lane for lane in range(WARP_SIZE) if bits >> lane & 1]


def _kernel_thread(op: str):
    thread = threading.current_thread()
    if getattr(thread, "_manager", None) is None:
        raise RuntimeError(f"cuda.{op} called outside a simulated kernel thread")
    if thread.abort:
        raise RuntimeError(f"cuda.{op}: block aborted because another thread raised")
    return thread


def _warp_of(thread) -> _Warp:
    manager = thread._manager
    block = tuple(thread.blockIdx)
    warp_index = thread.thread_id // WARP_SIZE
    with _registry_lock:
        warps = _blocks.get(manager)
        if warps is None:
            warps = _blocks[manager] = {}
        warp = warps.get((block, warp_index))
        if warp is None:
            n_threads = int(np.prod(manager._block_dim))
            n_lanes = min(WARP_SIZE, n_threads - warp_index * WARP_SIZE)
            warp = warps[(block, warp_index)] = _Warp(f"block {block} warp {warp_index}", n_lanes)
    return warp


def _record_exit(thread) -> None:
    warp = _warp_of(thread)
    with warp.cond:
        warp.exited |= 1 << (thread.thread_id % WARP_SIZE)
        warp.cond.notify_all()  # lanes waiting on it can report it now


# Each shuffle's source lane from the caller's lane and the low 5 bits of its operand; PTX
# gives the caller its own value where shfl.up would go below lane 0 or shfl.down above 31.
_SOURCE_LANE = {
    "shfl_sync": lambda lane, b: b,
    "shfl_up_sync": lambda lane, b: lane - b if b <= lane else lane,
    "shfl_down_sync": lambda lane, b: lane + b if lane + b < WARP_SIZE else lane,
    "shfl_xor_sync": lambda lane, b: lane ^ b,
}
# Each vote's result (the same for every lane) from the lanes whose predicate is true and the
# number of lanes voting.
_VOTE = {
    "ballot_sync": lambda true, n: sum(1 << lane for lane in true),
    "all_sync": lambda true, n: len(true) == n,
    "any_sync": lambda true, n: bool(true),
    "syncwarp": lambda true, n: None,
}


def _results(op: str, args: dict) -> dict:
    """Every lane's result of a round, from ``args``: lane -> (value, operand)."""
    source = _SOURCE_LANE.get(op)
    if source is None:
        result = _VOTE[op]([lane for lane, (pred, _) in args.items() if pred], len(args))
        return dict.fromkeys(args, result)
    out = {}
    for lane, (value, operand) in args.items():
        src = source(lane, operand & (WARP_SIZE - 1))
        # A source lane outside the round (not in mask, or not in the block): own value.
        out[lane] = args[src][0] if src in args else value
    return out


def _rendezvous(op: str, mask, value=None, operand: int = 0):
    """Join the round of ``op`` for ``mask`` in the caller's warp and return its result."""
    thread = _kernel_thread(op)
    lane = thread.thread_id % WARP_SIZE
    mask = operator.index(mask) & FULL_MASK
    warp = _warp_of(thread)
    if not mask >> lane & 1:
        raise RuntimeError(
            f"cuda.{op}: lane {lane} of {warp.label} is not in its mask 0x{mask:08X} "
            "(the calling lane must be in mask)"
        )
    members = mask & warp.existing
    with warp.cond:
        rnd = warp.rounds.get(mask)
        if rnd is None:
            rnd = warp.rounds[mask] = _Round(op, mask)
        elif rnd.op != op:
            raise RuntimeError(
                f"cuda.{op}: lane {lane} of {warp.label} called it with mask 0x{mask:08X} while "
                f"lanes {sorted(rnd.args)} are in cuda.{rnd.op} with the same mask"
            )
        rnd.args[lane] = (value, operand)
        if len(rnd.args) == members.bit_count():
            rnd.results = _results(op, rnd.args)
            rnd.done = True
            del warp.rounds[mask]
            warp.cond.notify_all()
        else:
            _wait(thread, warp, rnd, members)
        return rnd.results[lane]


def _wait(thread, warp: _Warp, rnd: _Round, members: int) -> None:
    # Called with warp.cond held; returns once rnd is done or raises.
    deadline = time.monotonic() + TIMEOUT_S
    where = f"cuda.{rnd.op} (mask 0x{rnd.mask:08X}) in {warp.label}"
    while not rnd.done:
        if thread.abort:
            raise RuntimeError(f"{where}: block aborted because another thread raised")
        exited = members & warp.exited
        if exited:
            raise RuntimeError(
                f"{where}: lanes {_lanes(exited)} named in the mask exited the kernel "
                "without joining (undefined behaviour on a GPU)"
            )
        left = deadline - time.monotonic()
        if left <= 0:
            missing = members & ~sum(1 << lane for lane in rnd.args)
            raise RuntimeError(
                f"{where}: lanes {_lanes(missing)} did not arrive within {TIMEOUT_S:g} s "
                "(stuck elsewhere, or calling with a different mask?)"
            )
        warp.cond.wait(min(_POLL_S, left))


# Methods added to FakeCUDAModule; ``self`` is the kernel's fake ``cuda`` module.


def _check_shuffle_value(op: str, value) -> None:
    if not isinstance(value, _SHUFFLE_TYPES):
        raise TypeError(f"cuda.{op} shuffles ints and floats, not {type(value).__name__}")


def shfl_sync(self, mask, value, src_lane):
    """Return ``value`` from lane ``src_lane % 32`` of the masked warp."""
    _check_shuffle_value("shfl_sync", value)
    return _rendezvous("shfl_sync", mask, value, operator.index(src_lane))


def shfl_up_sync(self, mask, value, delta):
    """Return ``value`` from lane ``laneid - delta``; the caller's own value if that is < 0."""
    _check_shuffle_value("shfl_up_sync", value)
    return _rendezvous("shfl_up_sync", mask, value, operator.index(delta))


def shfl_down_sync(self, mask, value, delta):
    """Return ``value`` from lane ``laneid + delta``; the caller's own value if that is > 31."""
    _check_shuffle_value("shfl_down_sync", value)
    return _rendezvous("shfl_down_sync", mask, value, operator.index(delta))


def shfl_xor_sync(self, mask, value, lane_mask):
    """Return ``value`` from lane ``laneid ^ lane_mask``."""
    _check_shuffle_value("shfl_xor_sync", value)
    return _rendezvous("shfl_xor_sync", mask, value, operator.index(lane_mask))


def ballot_sync(self, mask, predicate):
    """Mask (as a non-negative int) of the lanes in ``mask`` whose predicate is true."""
    return _rendezvous("ballot_sync", mask, bool(predicate))


def all_sync(self, mask, predicate):
    """True when the predicate is true on every lane in ``mask``."""
    return _rendezvous("all_sync", mask, bool(predicate))


def any_sync(self, mask, predicate):
    """True when the predicate is true on some lane in ``mask``."""
    return _rendezvous("any_sync", mask, bool(predicate))


def syncwarp(self, mask=FULL_MASK):
    """Wait until every lane in ``mask`` has reached a ``syncwarp`` with this mask."""
    _rendezvous("syncwarp", mask)


def activemask(self):
    """Lanes of the caller's warp that exist in the block and have not exited (see module doc)."""
    thread = _kernel_thread("activemask")
    warp = _warp_of(thread)
    return warp.existing & ~warp.exited


def lanemask_lt(self):
    """Mask of the lanes whose id is below the caller's."""
    return (1 << _kernel_thread("lanemask_lt").thread_id % WARP_SIZE) - 1


def _laneid(self):
    return threading.current_thread().thread_id % WARP_SIZE


_METHODS = {
    f.__name__: f
    for f in (
        shfl_sync,
        shfl_up_sync,
        shfl_down_sync,
        shfl_xor_sync,
        ballot_sync,
        all_sync,
        any_sync,
        syncwarp,
        activemask,
        lanemask_lt,
    )
}


def _shared_array(self, shape, dtype, alignment=None):
    """The simulator's ``cuda.shared.array`` with its first allocation under a lock.

    The simulator keys a block's static shared arrays by the caller's file and line and
    allocates on first use without a lock: threads that reach the line together can each get
    a private ``np.empty`` array, so values written by one never reach the others (a rare
    failure of ballot_write's per-warp counts in CI).  Dynamic arrays (``shape == 0``) and
    alignment errors are left to the original."""
    if shape == 0 or alignment is not None:
        return _ORIGINAL_SHARED_ARRAY(self, shape, dtype, alignment)
    from numba.cuda.simulator import kernelapi

    if isinstance(dtype, kernelapi.types.Type):
        dtype = kernelapi.numpy_support.as_dtype(dtype)
    frame = sys._getframe(1)
    caller = (frame.f_code.co_filename, frame.f_lineno)
    with _shared_lock:
        res = self._allocations.get(caller)
        if res is None:
            res = self._allocations[caller] = np.empty(shape, dtype)
    return res


_ORIGINAL_SHARED_ARRAY = None


def _simulator_enabled() -> bool:
    try:
        from numba.cuda.core import config
    except ImportError:  # numba-cuda versions that still use numba's config
        from numba.core import config
    return bool(config.ENABLE_CUDASIM)


def install() -> None:
    """Add the warp intrinsics to the simulator's ``cuda`` module; idempotent.

    Does nothing when ``numba.cuda`` is not the simulator.
    """
    if not _simulator_enabled():
        return
    from numba.cuda.simulator.kernel import BlockThread
    from numba.cuda.simulator.kernelapi import FakeCUDAModule

    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    global _ORIGINAL_SHARED_ARRAY
    with _install_lock:
        for name, method in _METHODS.items():
            setattr(FakeCUDAModule, name, method)
        if FakeCUDAShared.array is not _shared_array:
            _ORIGINAL_SHARED_ARRAY = FakeCUDAShared.array
            FakeCUDAShared.array = _shared_array
        if not hasattr(FakeCUDAModule, "laneid"):
            FakeCUDAModule.laneid = property(_laneid)
        if not getattr(BlockThread.run, "_records_exit", False):
            original_run = BlockThread.run

            @functools.wraps(original_run)
            def run(thread):
                try:
                    original_run(thread)
                finally:
                    # A thread that raised aborts the block; only clean exits are recorded.
                    if thread.exception is None:
                        _record_exit(thread)

            run._records_exit = True
            BlockThread.run = run
