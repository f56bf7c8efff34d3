"""Where a graph's arrays live, and how much device memory onyx_rapids may take.

**Placement** (EMOGI): a :class:`~onyx_rapids.graph.Graph`'s edge arrays (its CSR and CSC
indices, CSC edge ids, weights and the other per-edge arrays) live either in device memory
(``"device"``) or in page-locked (pinned) host memory that the GPU reads directly over PCIe,
zero-copy (``"host"``); ``"auto"`` picks by size against the device memory the library may
still use.  The per-vertex arrays (offsets, degrees, ids), the vertex properties, frontiers and
worklists always stay on the device: they are O(n), the edge arrays O(m).  Host-placed arrays
are ordinary CuPy arrays whose pointer is the mapped host block (every kernel and CuPy
operation works on them unchanged, each access a PCIe read), so the kernels' access pattern is
what decides their speed: see the ``edge_access`` execution option.

**The device-memory budget**: :func:`set_device_budget` (or the environment variable
``ONYX_RAPIDS_DEVICE_BUDGET``, read at import, e.g. ``16GB``) caps what onyx_rapids allocates
on the device.  On a GPU it is enforced by the allocator CuPy uses: CuPy's own memory pool gets
its size limit; RAPIDS' allocator (RMM, which importing cuDF installs for CuPy) gets RMM's
limiting resource adaptor, counting what is allocated from then on.  Every allocation through
that allocator (the library's and the caller's) counts, and one above the budget fails; the
library turns such a failure into a :class:`MemoryError` that names what it was allocating,
how much, and the budget.  Under the simulator there is no device: the library checks its planned allocations
(a graph's arrays, vertex properties) against the budget instead.

>>> import onyx_rapids as onyx
>>> onyx.memory.set_device_budget("16 GB")
>>> onyx.memory.device_budget()
16000000000
>>> onyx.memory.set_device_budget(None)  # no cap
"""

from __future__ import annotations

import contextlib
import os
import re

import numpy as np

from . import device

__all__ = ["DeviceMemoryError", "HostMemoryError", "PLACEMENTS", "ENV_BUDGET", "set_device_budget", "device_budget", "device_available",
           "check_placement", "format_bytes", "parse_bytes", "host_empty", "to_host_placed",
           "is_host_placed", "reserve", "allocating", "running"]

PLACEMENTS = ("device", "host", "auto")
ENV_BUDGET = "ONYX_RAPIDS_DEVICE_BUDGET"
#: "auto" places a graph on the device when its arrays take at most this fraction of the
#: device memory still available (the rest is left to vertex properties and work space).
AUTO_FRACTION = 0.5

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_budget: int | None = None


def parse_bytes(value, name: str = "budget") -> int:
    """A byte count from an int or a string such as ``"16GB"``, ``"512 MiB"``, ``"1.5e9"``.

    >>> parse_bytes("2 GiB"), parse_bytes(1000), parse_bytes("1.5kb")
    (2147483648, 1000, 1500)
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a byte count, got {value!r}")
    if isinstance(value, (int, np.integer)):
        count = int(value)
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*", value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise ValueError(f"{name} must be a byte count such as 16000000000, '16GB' or "
                             f"'512MiB', got {value!r}")
        count = int(float(match.group(1)) * _UNITS[unit])
    else:
        raise ValueError(f"{name} must be a byte count (int or a string such as '16GB'), got "
                         f"{type(value).__name__} {value!r}")
    if count <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return count


def format_bytes(nbytes: int) -> str:
    """``'1.50 GB'``-style text for error messages and summaries."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{int(nbytes)} B"


def set_device_budget(nbytes) -> None:
    """Cap onyx_rapids' device memory at ``nbytes`` (an int or ``"16GB"``-style string);
    None removes the cap.  On a GPU: CuPy's default memory-pool limit when CuPy allocates from
    its pool (its cached free blocks are released first, so the cap holds at once), or RMM's
    ``LimitingResourceAdaptor`` over the current RMM resource when CuPy allocates through RMM
    (as after importing cuDF); see the module docstring."""
    global _budget
    budget = None if nbytes is None else parse_bytes(nbytes)
    if device.BACKEND == "gpu":
        _unlimit()
        if budget is not None:
            _limit(budget)
    _budget = budget


_rmm_upstream = None  # the RMM resource under our limiting adaptor, while one is installed


def _uses_rmm() -> bool:
    allocator = device.xp.cuda.get_allocator()
    return "rmm" in (getattr(allocator, "__module__", "") or "")


def _limit(budget: int) -> None:
    global _rmm_upstream
    cupy = device.xp
    if _uses_rmm():
        import rmm

        _rmm_upstream = rmm.mr.get_current_device_resource()
        rmm.mr.set_current_device_resource(
            rmm.mr.LimitingResourceAdaptor(_rmm_upstream, allocation_limit=budget))
    else:
        pool = cupy.get_default_memory_pool()
        pool.free_all_blocks()
        pool.set_limit(size=budget)


def _unlimit() -> None:
    global _rmm_upstream
    if _rmm_upstream is not None:
        import rmm

        rmm.mr.set_current_device_resource(_rmm_upstream)
        _rmm_upstream = None
    device.xp.get_default_memory_pool().set_limit(size=0)


def device_budget() -> int | None:
    """The cap set by :func:`set_device_budget` (or the environment), None when there is none."""
    return _budget


def _in_use() -> int:
    """Bytes counted against the budget now (0 without a GPU)."""
    if device.BACKEND != "gpu":
        return 0
    if _rmm_upstream is not None:
        import rmm

        return int(rmm.mr.get_current_device_resource().get_allocated_bytes())
    return int(device.xp.get_default_memory_pool().used_bytes())


def device_available() -> int:
    """Bytes the library may still allocate on the device: the budget less what CuPy's pool
    holds in use, and never more than the GPU has free (free memory plus the pool's cached
    blocks).  Under the simulator without a budget: unbounded (a very large number)."""
    room = None if _budget is None else max(0, _budget - _in_use())
    if device.BACKEND == "gpu":
        free, _total = device.xp.cuda.runtime.memGetInfo()
        pool = device.xp.get_default_memory_pool()
        physical = int(free) + int(pool.total_bytes() - pool.used_bytes())  # + cached blocks
        room = physical if room is None else min(room, physical)
    return int(2**62) if room is None else room


def check_placement(placement, arg: str = "placement") -> str:
    if placement not in PLACEMENTS:
        raise ValueError(f"{arg} must be one of {', '.join(map(repr, PLACEMENTS))}, got "
                         f"{placement!r}")
    return placement


def _budget_text() -> str:
    if _budget is None:
        return "the GPU's free memory"
    return f"the device budget of {format_bytes(_budget)} ({ENV_BUDGET} / " \
           "onyx_rapids.memory.set_device_budget)"


class DeviceMemoryError(MemoryError):
    """A device allocation that does not fit the budget (or the GPU), naming what it was."""


class HostMemoryError(MemoryError):
    """Pinned host memory for host placement that could not be page-locked."""


def _allocator_failure(e: BaseException) -> bool:
    """An out-of-memory failure of the device allocator (CuPy's pool, RMM), not one of ours
    (and not the host's)."""
    return isinstance(e, MemoryError) and not isinstance(e, (DeviceMemoryError,
                                                              HostMemoryError))


def reserve(what: str, nbytes: int, hint: str = "") -> None:
    """Raise MemoryError when ``nbytes`` of device memory for ``what`` do not fit in what the
    library may still allocate (checked before allocating, so nothing is left half-built)."""
    available = device_available()
    if nbytes > available:
        raise DeviceMemoryError(f"{what} needs {format_bytes(nbytes)} of device memory, but only "
                          f"{format_bytes(available)} of {_budget_text()} are available"
                          + (f"; {hint}" if hint else ""))


@contextlib.contextmanager
def _named_failures(message):
    """Run the block; on a GPU, an out-of-memory failure of the device allocator inside it
    becomes a :class:`DeviceMemoryError` whose text is ``message(e)``."""
    if device.BACKEND != "gpu":
        yield
        return
    try:
        yield
    except MemoryError as e:
        if not _allocator_failure(e):
            raise
        raise DeviceMemoryError(message(e)) from e


@contextlib.contextmanager
def allocating(what: str, nbytes: int, hint: str = ""):
    """Run the block that allocates ``what`` (about ``nbytes``): checked against the budget
    first, and an out-of-memory failure inside it (CuPy's pool limit) becomes a MemoryError
    naming ``what``, the size and the budget."""
    reserve(what, nbytes, hint)
    with _named_failures(lambda e: f"{what} (about {format_bytes(nbytes)}) ran out of device "
                         f"memory under {_budget_text()}: {e}" + (f"; {hint}" if hint else "")):
        yield


@contextlib.contextmanager
def running(algorithm: str):
    """Run ``algorithm``: an out-of-memory failure of CuPy's pool (the budget) inside it
    becomes a MemoryError that names the algorithm, the request and the budget."""
    with _named_failures(lambda e: f"{algorithm} ran out of device memory under "
                         f"{_budget_text()}: {e}; raise the budget, place the graph on the "
                         "host (Graph.to('host')), or use fewer features"):
        yield


# ------------------------------------------------------------------ pinned, mapped host memory

def host_empty(shape, dtype):
    """An uninitialised backend array in page-locked host memory that kernels read zero-copy
    (a CuPy array whose pointer is the mapped host block, kept alive by the array); a NumPy
    array under the simulator."""
    dtype = np.dtype(dtype)
    if device.BACKEND != "gpu":
        return np.empty(shape, dtype)
    cupy = device.xp
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = max(count * dtype.itemsize, 1)
    flags = cupy.cuda.runtime.hostAllocMapped | cupy.cuda.runtime.hostAllocPortable
    try:
        block = cupy.cuda.PinnedMemory(nbytes, flags)
    except cupy.cuda.runtime.CUDARuntimeError as e:
        raise HostMemoryError(f"could not page-lock {format_bytes(nbytes)} of host memory for "
                              f"host placement ({e}); the host arrays of a graph take its "
                              "edge count times the element size per array (4 bytes; 8 for "
                              "vertex indices from 2**31 vertices, and for offsets and edge "
                              "positions from 2**31 edges): free host memory, or use a "
                              "machine with more") from e
    # unified addressing (every 64-bit CUDA platform): the mapped block's device pointer is
    # its host pointer
    memory = cupy.cuda.UnownedMemory(block.ptr, nbytes, block, cupy.cuda.Device().id)
    return cupy.ndarray(shape, dtype, cupy.cuda.MemoryPointer(memory, 0))


def to_host_placed(a):
    """A copy of backend array ``a`` in pinned, mapped host memory (see :func:`host_empty`)."""
    if a is None:
        return None
    out = host_empty(a.shape, a.dtype)
    out[...] = a
    return out


def is_host_placed(a) -> bool:
    """True for an array made by :func:`host_empty` (on a GPU: its memory is a mapped host
    block; under the simulator every array is host memory, and this says True)."""
    if device.BACKEND != "gpu":
        return isinstance(a, np.ndarray)
    cupy = device.xp
    if not isinstance(a, cupy.ndarray):
        return False
    attributes = cupy.cuda.runtime.pointerGetAttributes(a.data.ptr)
    return int(attributes.type) == cupy.cuda.runtime.memoryTypeHost


def _from_environment() -> None:
    value = os.environ.get(ENV_BUDGET, "").strip()
    if value:
        try:
            set_device_budget(value)
        except ValueError as e:
            raise ValueError(f"{ENV_BUDGET}={value!r}: {e}") from None


_from_environment()
