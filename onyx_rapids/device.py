"""Which backend runs: a real CUDA GPU or the Numba CUDA simulator.

The choice is made once, at import:

* ``ONYX_RAPIDS_BACKEND=gpu`` forces the GPU (CuPy arrays, ``numba.cuda`` kernels) and fails
  loudly if none is usable;
* ``ONYX_RAPIDS_BACKEND=simulator`` (or ``NUMBA_ENABLE_CUDASIM=1``) forces the Numba CUDA
  simulator (NumPy arrays, kernels run as Python threads);
* otherwise (``auto``) the GPU is used when CuPy imports and a device is there (counted by NVML
  where ``pynvml`` is installed, so that importing initializes no CUDA; else by CuPy), else the
  simulator.

Everything else in the package reads :data:`BACKEND`, :data:`xp` and the helpers below, so that
the same kernels and algorithms run on both.  Under the simulator the warp intrinsics that the
kernels use (``shfl_*_sync``, ``ballot_sync``, ``activemask``, ``all_sync``/``any_sync``,
``syncwarp``) are emulated (:mod:`onyx_rapids.kernels.warp_emulation`).
"""

from __future__ import annotations

import os
import sys

import numpy as np

_ENV = "ONYX_RAPIDS_BACKEND"
_CHOICES = ("auto", "gpu", "simulator")


def _nvml_gpu_count() -> int | None:
    """The GPUs this process may use, from NVML (the driver's management library) and
    ``CUDA_VISIBLE_DEVICES``, without initializing CUDA, or None where NVML is not installed or
    fails.  Importing the package must not initialize CUDA: a process that imports it before it
    picks its GPU (a dask-cuda worker sets ``CUDA_VISIBLE_DEVICES`` after its parent's main
    module is imported again in it) would otherwise be bound to every GPU and use the first."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        try:
            count = int(pynvml.nvmlDeviceGetCount())
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        entries = [v for v in visible.split(",") if v.strip()]
        if not entries or entries[0].strip() == "-1":
            return 0
        count = min(count, len(entries))
    return count


def _gpu_usable() -> tuple[bool, str]:
    try:
        import cupy
    except Exception as e:  # ImportError, or a broken CUDA install
        return False, f"CuPy not importable ({type(e).__name__}: {e})"
    count = _nvml_gpu_count()
    if count is not None:
        if count < 1:
            return False, "NVML reports no usable GPU"
        return True, f"{count} GPU(s) (NVML)"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return False, f"CuPy sees no CUDA device ({type(e).__name__}: {e})"
    if count < 1:
        return False, "CuPy sees no CUDA device"
    return True, f"{count} CUDA device(s)"


def _choose_backend() -> tuple[str, str]:
    requested = os.environ.get(_ENV, "auto").strip().lower() or "auto"
    if requested not in _CHOICES:
        raise ValueError(f"{_ENV}={requested!r} is not one of {', '.join(_CHOICES)}")
    sim_forced = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    if requested == "simulator" or (requested == "auto" and sim_forced):
        return "simulator", "forced by environment"
    if sim_forced:
        raise RuntimeError(f"{_ENV}=gpu contradicts NUMBA_ENABLE_CUDASIM=1; unset one of them")
    ok, why = _gpu_usable()
    if ok:
        return "gpu", why
    if requested == "gpu":
        raise RuntimeError(f"{_ENV}=gpu but no GPU is usable: {why}")
    return "simulator", why


BACKEND, BACKEND_REASON = _choose_backend()

if BACKEND == "simulator":
    if "numba.cuda" in sys.modules and not os.environ.get("NUMBA_ENABLE_CUDASIM"):
        raise RuntimeError(
            "numba.cuda was imported before onyx_rapids chose the simulator; "
            "set NUMBA_ENABLE_CUDASIM=1 before importing numba.cuda"
        )
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

from numba import cuda  # noqa: E402  (must follow the NUMBA_ENABLE_CUDASIM decision)

if BACKEND == "gpu":
    import cupy as xp  # noqa: E402
else:
    xp = np
    from .kernels import warp_emulation as _warp_emulation  # noqa: E402

    _warp_emulation.install()

WARP_SIZE = 32


def is_simulator() -> bool:
    """True when kernels run under the Numba CUDA simulator."""
    return BACKEND == "simulator"


def _dataframe_library(a) -> str | None:
    """'pandas' or 'cudf' for their Series, DataFrames and Indexes, else None."""
    top = type(a).__module__.split(".")[0]
    if top in ("pandas", "cudf") and hasattr(a, "to_numpy") and hasattr(a, "isna"):
        return top
    return None


def _frame_values(a, dtype, name: str, library: str):
    """The values of a pandas/cuDF Series, DataFrame or Index as a NumPy (or, for cuDF on the
    GPU, CuPy) array, by position. Nulls are refused by name (pandas 3 would turn a nullable
    integer NA into NaN silently); so are non-numeric values."""
    what = f"{name} (a {library} {type(a).__name__})"
    dtypes = list(a.dtypes) if hasattr(a, "columns") else [a.dtype]
    if library == "cudf" or any(not isinstance(d, np.dtype) for d in dtypes):
        mask = a.isna()
        mask = getattr(mask, "values", mask)  # pandas/cuDF objects -> NumPy/CuPy booleans
        nulls = int(mask.sum())
        if nulls:
            raise ValueError(f"{what}: {nulls} null value(s); drop or fill them (e.g. .fillna) "
                             "before passing it")
    if library == "cudf" and BACKEND == "gpu":
        values = a.values  # CuPy, no host copy
        return values if dtype is None else values.astype(dtype, copy=False)
    try:
        out = a.to_numpy() if dtype is None else a.to_numpy(dtype=dtype)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} could not be read as a numeric array ({e}); convert it, e.g. "
                        "with pandas.to_numeric") from e
    if out.dtype == object:
        try:
            out = np.asarray(out.tolist())
        except (TypeError, ValueError):
            pass
        if out.dtype.kind not in "biuf":
            raise TypeError(f"{what} holds non-numeric values (dtype {out.dtype}); convert it, "
                            "e.g. with pandas.to_numeric")
    return out


def asarray(a, dtype=None, name: str = "array"):
    """``a`` as an array of this backend (CuPy on the GPU, NumPy under the simulator).

    pandas and cuDF Series, DataFrames and Indexes are read by position (their ``.to_numpy()``
    values, the index ignored; align them by vertex id first, see
    :meth:`onyx_rapids.graph.Graph.vertex_property`). Nulls in them raise ValueError naming
    ``name``, non-numeric values TypeError.

    >>> import pandas as pd
    >>> asarray(pd.Series([3, 1]), name="sources").tolist()  # doctest: +SKIP
    [3, 1]
    """
    library = _dataframe_library(a)
    if library is not None:
        a = _frame_values(a, dtype, name, library)
    if BACKEND == "gpu":
        return xp.asarray(a, dtype=dtype)
    if hasattr(a, "get") and not isinstance(a, np.ndarray):  # a CuPy array on a sim run
        a = a.get()
    return np.asarray(a, dtype=dtype)


def to_host(a, name: str = "array") -> np.ndarray:
    """A NumPy copy (or view) of a backend array; pandas and cuDF objects give their values by
    position (as in :func:`asarray`)."""
    if isinstance(a, np.ndarray):
        return a
    library = _dataframe_library(a)
    if library is not None:
        a = _frame_values(a, None, name, library)
        if isinstance(a, np.ndarray):
            return a
    if hasattr(a, "get"):
        return a.get()
    if hasattr(a, "copy_to_host"):
        return a.copy_to_host()
    return np.asarray(a)


def to_host_pinned(arrays) -> list:
    """Host arrays with the values of backend ``arrays`` (same shapes and dtypes), each moved
    by one copy, for results that the caller hands out.

    On the GPU each array (made C-contiguous on the device first where it is not) is copied
    over PCIe once, asynchronously on CuPy's current stream, into page-locked (pinned) host
    memory taken from CuPy's pinned memory pool (:func:`cupy.cuda.alloc_pinned_memory`); one
    synchronization waits for all the copies.  A returned array holds its pinned block through
    its ``base`` (so do its views, and pandas objects built on them): the block goes back to
    the pool, for the next call to reuse, only once nothing refers to it, so an array handed
    out is never overwritten by a later call.  Block sizes are rounded up (by at most an
    eighth) so that results of similar sizes share blocks; the pool keeps freed blocks until
    ``cupy.get_default_pinned_memory_pool().free_all_blocks()``.  Where no pinned memory can be
    had, ordinary host memory takes the copy.

    NumPy arrays, which are all the arrays under the simulator, are returned as they are (no
    copy: the caller passes arrays that it owns); anything else goes through :func:`to_host`
    there."""
    out, wait = to_host_pinned_async(arrays)
    wait()
    return out


def to_host_pinned_async(arrays):
    """:func:`to_host_pinned` that returns before the copies are done: ``(host arrays,
    wait)``.  Nothing may read or write the host arrays before ``wait()`` has returned; host
    work in between (building objects over them that do not read them) overlaps the copies.
    ``wait`` is a no-op under the simulator."""
    arrays = list(arrays)
    if BACKEND != "gpu":
        return [to_host(a) for a in arrays], _done
    import ctypes

    stream = xp.cuda.get_current_stream()
    sources, out = [], []
    for a in arrays:
        if isinstance(a, np.ndarray):
            out.append(a)
            continue
        a = xp.ascontiguousarray(a)
        host = _pinned_empty(a.shape, a.dtype)
        if a.nbytes:
            a.data.copy_to_host_async(ctypes.c_void_p(host.ctypes.data), a.nbytes, stream)
        sources.append(a)
        out.append(host)

    def wait():
        stream.synchronize()
        sources.clear()  # the device arrays stay alive until their copies are done

    return out, wait


def _done() -> None:
    """Nothing to wait for."""


def transpose_into(out, a) -> None:
    """``out[...] = a.T``, cast to ``out``'s dtype: a 2-D backend array ``a`` (n x k) written
    as ``out`` (k x n, one row per column of ``a``).

    On the GPU, where ``a`` is C-contiguous with k >= 8 and ``out`` C-contiguous, a tiled
    kernel moves 32 x 32 tiles through shared memory so that both its reads and its writes
    are coalesced (an element-wise copy reads each output row as a strided column of ``a``,
    a sector per element once rows are 32 bytes or longer); a cast, if any, comes first, on
    the contiguous ``a``.  Elsewhere, and under the simulator, the assignment does it."""
    n, k = a.shape
    if (BACKEND != "gpu" or k < 8 or not a.flags.c_contiguous or not out.flags.c_contiguous
            or out.dtype.itemsize not in _TRANSPOSE_TYPES or a.size == 0):
        out[...] = a.T
        return
    if a.dtype != out.dtype:
        a = a.astype(out.dtype)
    kernel = _transpose_kernel(out.dtype.itemsize)
    kernel((-(-n // 32), -(-k // 32)), (32, 8), (a, out, np.int64(n), np.int64(k)))


_TRANSPOSE_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
                    8: "unsigned long long"}
_TRANSPOSE_SOURCE = r"""
template <typename T>
__global__ void transpose_tiles(const T* __restrict__ a, T* __restrict__ out,
                                long long n, long long k) {
    __shared__ T tile[32][33];
    const long long r0 = (long long)blockIdx.x * 32, c0 = (long long)blockIdx.y * 32;
    for (int i = threadIdx.y; i < 32; i += 8) {
        const long long r = r0 + i, c = c0 + threadIdx.x;
        if (r < n && c < k) tile[i][threadIdx.x] = a[r * k + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
        const long long c = c0 + i, r = r0 + threadIdx.x;
        if (r < n && c < k) out[c * n + r] = tile[threadIdx.x][i];
    }
}
"""
_TRANSPOSE_KERNELS: dict = {}


def _transpose_kernel(itemsize: int):
    """The tiled transpose for elements of ``itemsize`` bytes (moved as unsigned integers),
    compiled once (CuPy RawModule)."""
    kernel = _TRANSPOSE_KERNELS.get(itemsize)
    if kernel is None:
        names = [f"transpose_tiles<{t}>" for t in _TRANSPOSE_TYPES.values()]
        module = xp.RawModule(code=_TRANSPOSE_SOURCE, options=("--std=c++11",),
                              name_expressions=names)
        for size, t in _TRANSPOSE_TYPES.items():
            _TRANSPOSE_KERNELS[size] = module.get_function(f"transpose_tiles<{t}>")
        kernel = _TRANSPOSE_KERNELS[itemsize]
    return kernel


def _pinned_size(nbytes: int) -> int:
    """``nbytes`` rounded up to a multiple of a power of two of at most an eighth of it."""
    unit = 1 << max(9, int(nbytes).bit_length() - 4)
    return -(-int(nbytes) // unit) * unit


def _pinned_empty(shape, dtype) -> np.ndarray:
    """An uninitialized NumPy array in a pinned block of CuPy's pinned memory pool (the array's
    base), or in ordinary memory when it is empty or no pinned memory can be had."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes == 0:
        return np.empty(shape, dtype=dtype)
    try:
        block = xp.cuda.alloc_pinned_memory(_pinned_size(nbytes))
    except (xp.cuda.runtime.CUDARuntimeError, MemoryError):
        return np.empty(shape, dtype=dtype)
    return np.ndarray(shape, dtype=dtype, buffer=block)


def is_device_array(a) -> bool:
    """True for arrays that kernels can take directly on this backend."""
    if BACKEND == "gpu":
        return hasattr(a, "__cuda_array_interface__")
    return isinstance(a, np.ndarray)


def _simulated_budget(shape, dtype) -> None:
    """Under the simulator (no memory pool to cap) a request is checked against the device
    budget here (:mod:`onyx_rapids.memory`)."""
    if BACKEND != "gpu":
        from . import memory

        if memory.device_budget() is not None:
            count = int(np.prod(shape, dtype=np.int64))
            memory.reserve(f"an array of {shape} {np.dtype(dtype).name}",
                           count * np.dtype(dtype).itemsize)


def empty(shape, dtype):
    _simulated_budget(shape, dtype)
    return xp.empty(shape, dtype=dtype)


def zeros(shape, dtype):
    _simulated_budget(shape, dtype)
    return xp.zeros(shape, dtype=dtype)


def full(shape, value, dtype):
    _simulated_budget(shape, dtype)
    return xp.full(shape, value, dtype=dtype)


_VIEWS: dict = {}
_VIEWS_MAX = 4096


def kernel_args(args):
    """``args`` as a Numba kernel launch should get them: on the GPU each CuPy array becomes a
    cached, non-owning Numba view of the same memory (keyed by pointer, shape, strides, dtype).

    A launch given CuPy arrays pays for each array (the CUDA array interface is parsed and,
    by default, the array's stream synchronized, which also stalls the host until the queued
    work is done); given Numba views it pays a fraction of that (docs/performance.md).  The
    views need no synchronization: CuPy
    and the kernels share the default stream.  The caller keeps the CuPy arrays alive for the
    launch (a view does not own its memory; a later array at the same address, of the same
    shape and dtype, is the same memory and reuses the view)."""
    if BACKEND != "gpu":
        return args
    out = []
    for a in args:
        if isinstance(a, tuple):
            out.append(tuple(kernel_args(a)))
        elif isinstance(a, xp.ndarray):
            key = (a.data.ptr, a.shape, a.strides, a.dtype.char)
            view = _VIEWS.get(key)
            if view is None:
                if len(_VIEWS) >= _VIEWS_MAX:
                    _VIEWS.clear()
                view = cuda.from_cuda_array_interface(a.__cuda_array_interface__, owner=None,
                                                      sync=False)
                _VIEWS[key] = view
            out.append(view)
        else:
            out.append(a)
    return out


_STREAMS: dict = {}


def launch_config(grid, block):
    """``(grid, block)`` for a Numba launch, with CuPy's current stream when a caller has made
    one current (a CUDA graph capture: :class:`onyx_rapids.algorithms._propagate._Replay`),
    so the kernels queue where CuPy's work does.  The default stream otherwise, and always
    under the simulator."""
    if BACKEND != "gpu":
        return grid, block
    ptr = xp.cuda.get_current_stream().ptr
    if ptr == 0:
        return grid, block
    stream = _STREAMS.get(ptr)
    if stream is None:
        if len(_STREAMS) >= 64:
            _STREAMS.clear()
        stream = _STREAMS[ptr] = cuda.external_stream(ptr)
    return grid, block, stream


def synchronize() -> None:
    """Wait for all queued device work (a no-op under the simulator)."""
    if BACKEND == "gpu":
        xp.cuda.runtime.deviceSynchronize()


def grid_size(work_items: int, block_size: int, max_blocks: int | None = None) -> int:
    """Blocks needed to give ``work_items`` threads one each (at least one block)."""
    if block_size < 1:
        raise ValueError(f"block_size must be positive, got {block_size}")
    blocks = max(1, -(-int(work_items) // int(block_size)))
    if max_blocks is not None:
        blocks = min(blocks, max_blocks)
    return blocks


def stride_grid(work_items: int, block_size: int, blocks_per_sm: int) -> int:
    """Blocks of a grid-stride loop over ``work_items``: one thread each, at most
    ``blocks_per_sm`` blocks per multiprocessor (one block under the simulator, whose threads
    are Python threads)."""
    cap = 1 if is_simulator() else multiprocessor_count() * blocks_per_sm
    return grid_size(work_items, block_size, cap)


def block_threads(block_size, gpu_default: int, simulator_default: int = 64) -> int:
    """Threads per block: ``block_size`` (checked: a multiple of 32 in [32, 1024]) or the
    default of this backend."""
    block = int(block_size or (simulator_default if is_simulator() else gpu_default))
    if block < 32 or block % 32 or block > 1024:
        raise ValueError(f"block_size must be a multiple of 32 in [32, 1024], got {block}")
    return block


#: Registers of one thread block (64 K 32-bit registers on every GPU since Maxwell), given
#: out per warp in units of 256 (8 a thread); a thread takes at most 255.
REGISTERS_PER_BLOCK, REGISTER_UNIT, MAX_THREAD_REGISTERS = 65536, 8, 255


def register_cap(block: int) -> int:
    """The most registers a thread of a ``block``-thread kernel may take so that the block
    can launch at all (0: no cap needed, the hardware's 255 fit).  Without it a kernel whose
    code wants more compiles fine and then fails every launch of a 512- or 1024-thread block
    with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (seen on an H200: a personalized_pagerank fold
    of 32 features in the tuning suite; the fused bfs / sssp kernel of 512 threads, whose
    occupancy query answered 0 blocks); with it the compiler spills instead.

    >>> register_cap(256), register_cap(512), register_cap(1024)
    (0, 128, 64)
    """
    cap = REGISTERS_PER_BLOCK // max(int(block), 1) // REGISTER_UNIT * REGISTER_UNIT
    return 0 if cap >= MAX_THREAD_REGISTERS else cap


def jit_options(block: int) -> dict:
    """``numba.cuda.jit`` options of a kernel launched with ``block`` threads a block: its
    :func:`register_cap` (none under the simulator, which takes no register limit)."""
    cap = 0 if is_simulator() else register_cap(block)
    return {"max_registers": cap} if cap else {}


def cooperative_blocks(kernel, args, block) -> int:
    """Blocks of ``kernel`` (launched on ``args``, ``block`` threads each) that can all be
    resident at once (registers, shared memory): the largest grid a grid-wide barrier allows.
    One under the simulator, whose cooperative grids have one block."""
    if is_simulator():
        return 1
    key = (id(kernel), int(block), tuple(_type_key(a) for a in args))
    if key not in _COOPERATIVE:  # compile + the occupancy query: too slow for every call
        # the launch's own overload (a specialization would compile the kernel a second time,
        # past the kernel's on-disk cache)
        overload = kernel.compile(tuple(kernel.typeof_pyval(a) for a in kernel_args(args)))
        _COOPERATIVE[key] = int(overload.max_cooperative_grid_blocks(block))
    return resident_blocks(_COOPERATIVE[key], block)


def resident_blocks(blocks: int, block: int) -> int:
    """``blocks`` (the occupancy query's answer for a cooperative kernel), refused when not
    even one block of ``block`` threads fits a multiprocessor: a grid-wide barrier needs the
    whole grid resident, and the driver would refuse the launch with a message about grid
    sizes."""
    if blocks < 1:
        raise ValueError(f"block_size={block}: not one block of {block} threads of the fused "
                         "(cooperative) kernel fits a multiprocessor (registers, shared "
                         "memory); pass a smaller block_size or fused=False")
    return blocks


_COOPERATIVE: dict = {}


def _type_key(a):
    if isinstance(a, tuple):
        return tuple(_type_key(x) for x in a)
    if hasattr(a, "dtype") and hasattr(a, "ndim"):
        return (a.dtype.str, a.ndim, bool(a.flags.c_contiguous))
    return type(a).__name__


def multiprocessor_count() -> int:
    """Streaming multiprocessors of the current device (1 under the simulator), cached per
    device: the driver query costs more than many launches it sizes."""
    if BACKEND != "gpu":
        return 1
    key = xp.cuda.runtime.getDevice()
    if key not in _SM_COUNT:
        _SM_COUNT[key] = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    return _SM_COUNT[key]


_SM_COUNT: dict = {}


def info() -> dict:
    """Backend facts: which backend, why, library versions and the device name."""
    import numba

    facts = {
        "backend": BACKEND,
        "reason": BACKEND_REASON,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "numba": numba.__version__,
    }
    try:
        from importlib.metadata import version

        facts["numba-cuda"] = version("numba-cuda")
    except Exception:
        facts["numba-cuda"] = "not installed"
    for name in ("cupy", "cudf", "cugraph", "pandas", "pyarrow"):
        try:
            mod = __import__(name)
            facts[name] = getattr(mod, "__version__", "?")
        except Exception:
            facts[name] = "not installed"
    if BACKEND == "gpu":
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        facts["device"] = name
        facts["compute_capability"] = ".".join(map(str, dev.compute_capability))
        facts["multiprocessors"] = int(dev.MULTIPROCESSOR_COUNT)
        facts["driver"] = int(xp.cuda.runtime.driverGetVersion())
    else:
        facts["device"] = "Numba CUDA simulator (CPU)"
    return facts
