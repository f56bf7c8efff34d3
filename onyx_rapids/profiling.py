"""Where a call's time went: with ``ONYX_RAPIDS_PROFILE=1`` in the environment, every algorithm
call measures its phases and ``return_info=True`` gives them as ``info.timings`` (seconds)::

    {"setup": ..., "kernels": ..., "result": ..., "compile": ..., "total": ...}

* ``kernels``: the library's kernel launches (generated, traversal, fused and hand-written
  ones), each timed between two device synchronizations, less the compilation a first launch
  triggers;
* ``result``: building the result frame (:func:`onyx_rapids.io.to_frame`: ids back to the
  original ones, the frame's columns);
* ``compile``: compiling kernels, or loading them from the on-disk cache
  (:mod:`onyx_rapids.kernels.disk_cache`);
* ``setup``: the rest: checking and converting inputs, allocations, the host's part of the
  iteration loop, CuPy work between launches (a CUDA graph replay counts here too);
* ``total``: the call, from a synchronization before it to one after its result.

The synchronizations make a profiled call slower than a plain one (they wait for each launch
and stop work from overlapping), so profiling is off unless asked for: an unprofiled call
pays one environment lookup.  The figures say where the time goes, not how fast a plain call
is.  A call made inside another (an algorithm that runs another one) adds its kernels to both.

>>> import os, onyx_rapids as onyx
>>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
>>> os.environ["ONYX_RAPIDS_PROFILE"] = "1"
>>> _, info = onyx.bfs(g, source=0, return_info=True)   # doctest: +SKIP
>>> sorted(info.timings)                                  # doctest: +SKIP
['compile', 'kernels', 'result', 'setup', 'total']
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

from . import device
from .kernels import disk_cache

ENV = "ONYX_RAPIDS_PROFILE"
_OFF = ("", "0", "false", "no", "off")
_LOCAL = threading.local()


def enabled() -> bool:
    """Whether ``ONYX_RAPIDS_PROFILE`` asks for profiling (any value but empty, 0, false, no,
    off)."""
    return os.environ.get(ENV, "").strip().lower() not in _OFF


class _Record:
    """The phases of one profiled call so far."""

    def __init__(self):
        device.synchronize()
        self.compiled = disk_cache.stats()["compile_s"]
        self.kernels = 0.0
        self.result = 0.0
        self.started = time.perf_counter()


def _stack() -> list:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack


def active() -> bool:
    """Whether a profiled call is running in this thread."""
    return bool(getattr(_LOCAL, "stack", None))


@contextmanager
def call():
    """Around one algorithm call (the registry's wrapper): records its phases when
    :func:`enabled`, nothing otherwise."""
    if not enabled():
        yield
        return
    record = _Record()
    stack = _stack()
    stack.append(record)
    try:
        yield
    finally:
        stack.remove(record)


def _elapsed(work) -> float:
    """Seconds ``work()`` takes between two synchronizations, less the compilation in it."""
    device.synchronize()
    compiled = disk_cache.stats()["compile_s"]
    started = time.perf_counter()
    work()
    device.synchronize()
    return time.perf_counter() - started - (disk_cache.stats()["compile_s"] - compiled)


def timed_launch(launch) -> float:
    """Run ``launch()`` (a kernel launch), adding its seconds to the running calls' kernels;
    returns them."""
    seconds = _elapsed(launch)
    for record in _stack():
        record.kernels += seconds
    return seconds


@contextmanager
def result():
    """Around the building of a result frame: its seconds go to the running call's result."""
    stack = getattr(_LOCAL, "stack", None)
    if not stack:
        yield
        return
    device.synchronize()
    started = time.perf_counter()
    yield
    device.synchronize()
    stack[-1].result += time.perf_counter() - started


def timings() -> dict | None:
    """The running call's phases so far (None when it is not profiled), its total up to now."""
    stack = getattr(_LOCAL, "stack", None)
    if not stack:
        return None
    record = stack[-1]
    device.synchronize()
    total = time.perf_counter() - record.started
    compile_s = disk_cache.stats()["compile_s"] - record.compiled
    setup = max(0.0, total - record.kernels - record.result - compile_s)
    return {"setup": setup, "kernels": record.kernels, "result": record.result,
            "compile": compile_s, "total": total}


def call_seconds(fn, *args, repeat: int = 5, **kwargs) -> dict:
    """Seconds a call ``fn(*args, **kwargs)`` takes, for benchmarks: ``first`` (the first
    call, synchronized), then ``repeat`` more calls, each between two synchronizations, as
    ``median`` and ``min``, and ``phases``: the last call's :func:`timings` when run again
    profiled (``ONYX_RAPIDS_PROFILE`` is set for that call only).  ``fn`` must be an algorithm
    taking ``return_info``.

    >>> import onyx_rapids as onyx
    >>> g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    >>> sorted(call_seconds(onyx.bfs, g, source=0, repeat=1))   # doctest: +SKIP
    ['first', 'median', 'min', 'phases']
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat!r}")

    def once() -> float:
        device.synchronize()
        started = time.perf_counter()
        fn(*args, **kwargs)
        device.synchronize()
        return time.perf_counter() - started

    first = once()
    runs = sorted(once() for _ in range(repeat))
    previous = os.environ.get(ENV)
    os.environ[ENV] = "1"
    try:
        _, info = fn(*args, return_info=True, **kwargs)
    finally:
        if previous is None:
            del os.environ[ENV]
        else:
            os.environ[ENV] = previous
    return {"first": first, "median": runs[len(runs) // 2], "min": runs[0],
            "phases": info.timings}
