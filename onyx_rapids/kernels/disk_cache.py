"""Compiled kernels kept on disk across processes, so that a new process's first call loads its
kernels instead of compiling them again (docs/execution.md, "Compiled kernels on disk").

Every kernel the library launches (the generated ones of :mod:`.codegen`, the traversal
engine's :mod:`.acc`, fused PageRank's, the hand-written ones) goes through :func:`persist`,
which gives its Numba CUDA dispatcher a :class:`KernelDiskCache`.  Numba's dispatcher asks that
object for a compiled kernel before it compiles one (``load_overload``) and hands it every
kernel it compiled (``save_overload``); the object stores the kernel's reduced state (its PTX
and linked cubin, Numba's own serialization of a kernel, ``_Kernel._reduce_states``) in one file
per kernel and signature.

The key of a file is a SHA-256 of

* the environment: a hash of the library's own source files (so any change to the library,
  the kernels' source generators included, invalidates every file), the library, Numba,
  numba-cuda, llvmlite and Python versions, and the device's compute capability with the CUDA runtime
  version (``codegen.magic_tuple()``);
* the kernel: its Python function's :func:`fingerprint`, which reads its bytecode, constants,
  defaults, closure cells and the globals it names, recursively through the device functions
  it calls (the generated kernels' source is their bytecode; a user function passed to
  ``foldmap`` or ``acc`` is fingerprinted the same way), and the ``cuda.jit`` options;
* the argument types of the launch.

A kernel whose fingerprint cannot be stable across processes (it reads a global that is an
object the fingerprint cannot describe, or a module outside NumPy, Numba and this library,
whose contents could change unseen) is not stored: it compiles as before.

Files live in :func:`directory` (``ONYX_RAPIDS_CACHE_DIR``, else ``$XDG_CACHE_HOME/onyx_rapids``,
else ``~/.cache/onyx_rapids``), under ``kernels/<environment hash>/``;
``ONYX_RAPIDS_CACHE=0`` turns the cache off.  A file is written to a temporary name and renamed
into place, so concurrent processes never read half a file; a file that cannot be read, is
truncated, was written for another key or fails to unpickle is ignored (the kernel compiles and
the file is rewritten).  Under the CUDA simulator nothing is compiled and the cache does
nothing.  :func:`stats` counts this process's hits, misses, saves and errors, and the seconds
its kernels took to compile or load (:mod:`onyx_rapids.profiling` reads them).
"""

from __future__ import annotations

import dis
import hashlib
import os
import pickle
import sys
import tempfile
import threading
import time
import types
from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np

from .. import device

ENV_DIR = "ONYX_RAPIDS_CACHE_DIR"
ENV_SWITCH = "ONYX_RAPIDS_CACHE"
MAGIC = b"ONYX-RAPIDS-KERNEL 1\n"
#: modules a kernel may name as a global: their code is pinned by the versions in the key
STABLE_MODULES = ("numba", "numba_cuda", "llvmlite", "numpy", "math", "cmath", "operator",
                  "onyx_rapids")
_OFF = ("0", "false", "no", "off")

_STATS = {"hits": 0, "misses": 0, "saves": 0, "errors": 0, "unkeyed": 0, "compile_s": 0.0}
_LOCK = threading.Lock()


def enabled() -> bool:
    """Whether kernels are read from and written to disk: on a GPU unless
    ``ONYX_RAPIDS_CACHE=0`` (or ``false``, ``no``, ``off``)."""
    return not device.is_simulator() and \
        os.environ.get(ENV_SWITCH, "1").strip().lower() not in _OFF


def directory() -> Path:
    """The cache directory: ``ONYX_RAPIDS_CACHE_DIR``, else ``$XDG_CACHE_HOME/onyx_rapids``,
    else ``~/.cache/onyx_rapids``.

    >>> directory().name in ("onyx_rapids", os.path.basename(os.environ.get(ENV_DIR, "")))
    True
    """
    given = os.environ.get(ENV_DIR)
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "onyx_rapids"


def stats() -> dict:
    """This process's counts: ``hits`` (kernels loaded from disk), ``misses`` (compiled),
    ``saves`` (written), ``errors`` (unreadable or unwritable files, ignored), ``unkeyed``
    (kernels with no stable fingerprint, compiled and not stored) and ``compile_s`` (seconds
    spent compiling or loading kernels)."""
    with _LOCK:
        return dict(_STATS)


def _count(name: str, amount=1):
    with _LOCK:
        _STATS[name] += amount


# -- keys ------------------------------------------------------------------------------------

_LIBRARY_HASH: list = []
_ENVIRONMENTS: dict = {}


def library_hash() -> str:
    """SHA-256 of the library's Python source files (path and contents), computed once."""
    if not _LIBRARY_HASH:
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha256()
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
        _LIBRARY_HASH.append(h.hexdigest())
    return _LIBRARY_HASH[0]


def environment(magic=()) -> str:
    """The environment part of every key: library hash and version, Numba, numba-cuda and
    Python versions, and ``magic`` (the codegen's compute capability and runtime version)."""
    magic = repr(tuple(magic))
    if magic not in _ENVIRONMENTS:
        _ENVIRONMENTS[magic] = _environment(magic)
    return _ENVIRONMENTS[magic]


def _environment(magic: str) -> str:
    import numba

    from .. import __version__

    try:
        from importlib.metadata import version

        numba_cuda = version("numba-cuda")
    except Exception:  # the numba.cuda built into Numba
        numba_cuda = "builtin"
    import llvmlite

    parts = (library_hash(), __version__, numba.__version__, numba_cuda, llvmlite.__version__,
             sys.version.split()[0], magic)
    return "|".join(parts)


class Unstable(Exception):
    """An object a fingerprint cannot describe the same way in another process."""


def fingerprint(obj) -> str | None:
    """A text that describes ``obj`` (a function, a dispatcher, a constant) the same way in
    every process where it behaves the same, or None where that cannot be known.

    >>> fingerprint(3) == fingerprint(3), fingerprint(3) == fingerprint(4)
    (True, False)
    >>> fingerprint(object()) is None
    True
    """
    try:
        return _describe(obj, set())
    except Unstable:
        return None


def _describe(obj, seen: set) -> str:
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return f"{type(obj).__name__}:{obj!r}"
    if isinstance(obj, (np.generic, np.dtype)):
        return f"np:{np.dtype(getattr(obj, 'dtype', obj)).str}:{obj!r}"
    if isinstance(obj, np.ndarray):
        return f"ndarray:{obj.dtype.str}:{obj.shape}:" + hashlib.sha256(
            np.ascontiguousarray(obj).tobytes()).hexdigest()
    if isinstance(obj, (tuple, list, frozenset, set)):
        items = sorted(_describe(x, seen) for x in obj) if isinstance(obj, (set, frozenset)) \
            else [_describe(x, seen) for x in obj]
        return f"{type(obj).__name__}({','.join(items)})"
    if isinstance(obj, dict):
        return "dict(" + ",".join(sorted(f"{_describe(k, seen)}={_describe(v, seen)}"
                                         for k, v in obj.items())) + ")"
    if isinstance(obj, types.ModuleType):
        if obj.__name__.split(".")[0] not in STABLE_MODULES:
            raise Unstable(obj.__name__)
        return f"module:{obj.__name__}"
    if isinstance(obj, types.CodeType):
        return _describe_code(obj, seen)
    if hasattr(obj, "py_func"):  # a Numba dispatcher (kernel or device function)
        options = getattr(obj, "targetoptions", {})
        return f"jit({_describe(dict(options), seen)}):{_describe(obj.py_func, seen)}"
    if isinstance(obj, types.FunctionType):
        return _describe_function(obj, seen)
    if callable(getattr(obj, "_defn", None)):  # a Numba @intrinsic: its typing function
        return f"intrinsic:{_describe(obj._defn, seen)}"
    if isinstance(obj, type):
        return f"type:{obj.__module__}.{obj.__qualname__}"
    if _is_numba_type(obj):
        return f"nbtype:{obj}"
    if is_dataclass(obj):
        return f"{type(obj).__qualname__}(" + ",".join(
            f"{f.name}={_describe(getattr(obj, f.name), seen)}" for f in fields(obj)) + ")"
    if isinstance(obj, types.BuiltinFunctionType):
        module = getattr(obj, "__module__", None) or ""
        if module.split(".")[0] in STABLE_MODULES + ("builtins",):
            return f"builtin:{module}.{obj.__qualname__}"
    raise Unstable(type(obj).__name__)


def _is_numba_type(obj) -> bool:
    from numba.core import types as nbtypes

    return isinstance(obj, nbtypes.Type)


def _describe_function(fn, seen: set) -> str:
    if id(fn) in seen:  # recursion: the name is enough, the body is being described
        return f"recursive:{fn.__qualname__}"
    seen.add(id(fn))
    code = fn.__code__
    parts = [f"fn:{fn.__module__}.{fn.__qualname__}", _describe_code(code, seen),
             _describe(fn.__defaults__, seen), _describe(fn.__kwdefaults__, seen)]
    if fn.__closure__:
        try:
            parts.append(_describe([cell.cell_contents for cell in fn.__closure__], seen))
        except ValueError:  # an empty cell: a name bound after the function was made
            raise Unstable(fn.__qualname__) from None
    names = sorted(_global_names(code))
    for name in names:
        if name in fn.__globals__:
            parts.append(f"{name}={_describe(fn.__globals__[name], seen)}")
    return "{" + ";".join(parts) + "}"


def _global_names(code) -> set:
    """The global names ``code`` (and the code nested in it) may read."""
    names = set()
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            names.add(ins.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _describe_code(code, seen: set) -> str:
    consts = ",".join(_describe_code(c, seen) if isinstance(c, types.CodeType)
                      else _describe(c, seen) for c in code.co_consts)
    body = hashlib.sha256(code.co_code).hexdigest()
    return f"code:{body}:{','.join(code.co_names)}:{code.co_argcount}:({consts})"


# -- files -----------------------------------------------------------------------------------


def write_entry(path: Path, key: str, body: bytes) -> bool:
    """Store ``body`` under ``key`` at ``path``: a temporary file in the same
    directory renamed into place, so a reader sees the old file or the whole new one.  False
    (and nothing left behind) where the directory cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".nbk")
        try:
            with os.fdopen(fd, "wb") as fh:
                key_bytes = key.encode()
                fh.write(MAGIC + len(key_bytes).to_bytes(8, "little") + key_bytes + body)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
        return True
    except Exception:
        _count("errors")
        return False


def read_entry(path: Path, key: str) -> bytes | None:
    """The bytes stored under ``key`` at ``path``, or None: no file, another key's file (a
    hash collision or a foreign file), or not one of these files at all (counted in
    errors)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        _count("errors")
        return None
    key_bytes = key.encode()
    head = len(MAGIC) + 8
    if not data.startswith(MAGIC) or int.from_bytes(data[len(MAGIC):head], "little") \
            != len(key_bytes) or data[head:head + len(key_bytes)] != key_bytes:
        _count("errors")
        return None
    return data[head + len(key_bytes):]


# -- the dispatcher's cache ------------------------------------------------------------------


class KernelDiskCache:
    """What a Numba CUDA dispatcher's ``_cache`` must be (``load_overload``, ``save_overload``,
    ``flush``, ``cache_path``), keyed by the dispatcher's :func:`fingerprint`.  It also times
    each compilation (from the load that missed to the save) into :func:`stats`, with the
    disk off too."""

    def __init__(self, dispatcher):
        self._dispatcher = dispatcher
        self._kernel_key: str | None = None
        self._started = None

    @property
    def cache_path(self) -> str:
        return str(directory())

    def _key(self, sig, target_context) -> tuple[Path, str] | None:
        if self._kernel_key is None:
            described = fingerprint(self._dispatcher)
            self._kernel_key = "" if described is None else described
            if described is None:
                _count("unkeyed")
        if not self._kernel_key or " at 0x" in str(sig):  # a type naming an address
            return None
        try:
            magic = target_context.codegen().magic_tuple()
        except Exception:
            return None
        env = environment(magic)
        key = f"{self._kernel_key}|sig:{sig}"
        env_dir = hashlib.sha256(env.encode()).hexdigest()[:20]
        name = hashlib.sha256(f"{env}|{key}".encode()).hexdigest()[:40] + ".nbk"
        return directory() / "kernels" / env_dir / name, f"{env}|{key}"

    def load_overload(self, sig, target_context):
        self._started = time.perf_counter()
        if not enabled():
            return None
        try:
            target_context.refresh()
            where = self._key(sig, target_context)
            body = None if where is None else read_entry(*where)
            kernel = None if body is None else _rebuild(pickle.loads(body))
        except Exception:
            _count("errors")
            kernel = None
        if kernel is None:
            _count("misses")
            return None
        _count("hits")
        _count("compile_s", time.perf_counter() - self._started)
        self._started = None
        return kernel

    def save_overload(self, sig, kernel):
        if self._started is not None:
            _count("compile_s", time.perf_counter() - self._started)
            self._started = None
        if not enabled() or getattr(kernel, "launch_config_sensitive", False):
            return
        try:
            where = self._key(sig, kernel.target_context)
            if where is not None and write_entry(where[0], where[1],
                                                 _dumps(kernel._reduce_states())):
                _count("saves")
        except Exception:
            _count("errors")

    def flush(self):
        """Numba's ``recompile`` flushes: the files stay (their key says what they hold)."""

    def enable(self):
        """Part of Numba's cache interface; :func:`enabled` decides."""

    def disable(self):
        """Part of Numba's cache interface; ``ONYX_RAPIDS_CACHE=0`` decides."""


def _dumps(payload) -> bytes:
    """Numba's own serialization of a kernel's state (what its cache writes)."""
    try:
        from numba.cuda.serialize import dumps
    except ImportError:  # the numba.cuda built into Numba
        from numba.core.serialize import dumps
    return dumps(payload)


def _rebuild(payload):
    from numba.cuda.dispatcher import _Kernel

    return _Kernel._rebuild(**payload)


def persist(dispatcher):
    """``dispatcher`` (a ``numba.cuda.jit`` kernel) with its compiled kernels kept on disk;
    returned as it is under the simulator.  Usable as a decorator above ``@cuda.jit``."""
    if not device.is_simulator() and hasattr(dispatcher, "_cache"):
        dispatcher._cache = KernelDiskCache(dispatcher)
    return dispatcher
