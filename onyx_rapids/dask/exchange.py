"""How the resident tasks of a run (one task per worker for the whole run, see
:func:`onyx_rapids.dask.run.iterate`) move rows to each other, without the scheduler or the
client in the loop.

Each iteration every worker *posts* one message to every other worker: a small host object
(its partitions' partials: the stop test's sums, the bytes they sent) and the ghost rows its
partitions send to that worker's partitions (device arrays inside dicts / tuples).  Each worker
then reads every worker's host object (:meth:`metas`, the same list on all of them, so each
reduces the partials itself and all stop together) and, unless the run stops there, the rows
sent to it (:meth:`rows`).

* :class:`DaskTransport` sends both in one message over the workers' own Dask connections
  (``Worker.rpc``: TCP, or UCX where the cluster uses it), straight from worker to worker.  It
  runs anywhere, the simulator's CPU workers too.
* :class:`NcclTransport` (GPUs; CuPy's NCCL bindings): the host objects are all-gathered as
  bytes and the rows go GPU to GPU by NCCL send / receive (over NVLink where the GPUs have it),
  on the stream the kernels run on.

A run that fails on one worker is stopped on the others by :func:`abort` (the client calls it
through ``Client.run``): a waiting receive raises, an NCCL communicator is aborted.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time

import numpy as np

from .. import device

#: Seconds a worker waits for another's message before it gives the run up.
TIMEOUT = 600.0

_LOCK = threading.Lock()
_BOXES: dict = {}  # run id -> _Mailbox, on each worker
_ENDED: set = set()  # runs ended here: their late messages are dropped
_COMMS: dict = {}  # NCCL: key -> communicator, kept from run to run (its set-up is slow)
_ACTIVE: dict = {}  # run id -> the NCCL key it uses (for abort)


class RunAborted(RuntimeError):
    """Raised in a resident task when its run was stopped (another worker failed)."""


class _Mailbox:
    def __init__(self):
        self.cond = threading.Condition()
        self.messages = {}
        self.error = None

    def put(self, key, message):
        with self.cond:
            self.messages[key] = message
            self.cond.notify_all()

    def take(self, keys, timeout, what):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                if self.error is not None:
                    raise RunAborted(self.error)
                if all(k in self.messages for k in keys):
                    return [self.messages.pop(k) for k in keys]
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [k for k in keys if k not in self.messages]
                    raise TimeoutError(f"no message {missing} for {what} in {timeout:.0f} s "
                                       "(a worker is lost or stuck)")
                self.cond.wait(min(left, 1.0))

    def abort(self, why):
        with self.cond:
            self.error = why
            self.cond.notify_all()


def _mailbox(run):
    with _LOCK:
        if run in _ENDED:
            return None
        return _BOXES.setdefault(run, _Mailbox())


def _deliver(run=None, key=None, message=None):
    """The worker's ``onyx_rows`` handler: file a message for its run."""
    box = _mailbox(run)
    if box is not None:
        box.put(tuple(key), message)
    return "ok"


def install(dask_worker=None):
    """Give this worker the ``onyx_rows`` handler (``Client.run(install)`` before a run)."""
    dask_worker.handlers["onyx_rows"] = _deliver
    return True


def abort(run, why, dask_worker=None):
    """Stop run ``run`` on this worker (``Client.run``): its receive raises :class:`RunAborted`,
    its NCCL communicator (if any) is aborted and forgotten."""
    box = _mailbox(run)
    if box is not None:
        box.abort(why)
    with _LOCK:
        key = _ACTIVE.pop(run, None)
        comm = _COMMS.pop(key, None) if key is not None else None
    if comm is not None:
        comm.abort()
    return True


def _end(run):
    with _LOCK:
        _BOXES.pop(run, None)
        _ENDED.add(run)
        _ACTIVE.pop(run, None)


class DaskTransport:
    """Rows and host objects in one Dask message a worker pair an iteration (see the module
    doc); ``addresses[r]`` is rank r's worker."""

    def __init__(self, run, rank, addresses, timeout=None):
        from distributed import get_worker

        self.run, self.rank, self.addresses = run, rank, list(addresses)
        self.timeout = TIMEOUT if timeout is None else timeout
        self.worker = get_worker()
        self.box = _mailbox(run)
        self._rows = {}

    def post(self, it, meta, rows):
        from distributed.protocol import to_serialize
        from distributed.utils import sync

        self._meta = meta
        others = [d for d in range(len(self.addresses)) if d != self.rank]
        if not others:
            return
        key = [it, self.rank]

        async def send_all():
            await asyncio.gather(*(
                self.worker.rpc(self.addresses[d]).onyx_rows(
                    run=self.run, key=key, message=to_serialize((meta, rows.get(d))))
                for d in others))

        sync(self.worker.loop, send_all)

    def metas(self, it):
        others = [d for d in range(len(self.addresses)) if d != self.rank]
        got = self.box.take([(it, d) for d in others], self.timeout, f"iteration {it}")
        out = [None] * len(self.addresses)
        out[self.rank] = self._meta
        self._rows = {}
        for d, (meta, rows) in zip(others, got):
            out[d] = meta
            if rows is not None:
                self._rows[d] = rows
        return out

    def rows(self, it):
        return self._rows

    def close(self):
        _end(self.run)


def nccl_key(addresses):
    """A communicator's cache key on its workers: a new NCCL id for a new set of workers (a
    restarted worker has a new address, so it never meets an old communicator)."""
    from cupy.cuda import nccl

    return (tuple(addresses), nccl.get_unique_id())


class NcclTransport:
    """Host objects all-gathered and rows sent GPU to GPU through NCCL (see the module doc).
    ``key``: from :func:`nccl_key` (made once on one worker, the same on all)."""

    def __init__(self, run, rank, key):
        from cupy.cuda import nccl

        self.nccl, self.run, self.rank = nccl, run, rank
        self.size = len(key[0])
        with _LOCK:
            comm = _COMMS.get(key)
            _ACTIVE[run] = key
        if comm is None:
            comm = nccl.NcclCommunicator(self.size, key[1], rank)
            with _LOCK:
                _COMMS[key] = comm
        self.comm = comm
        self._got = None
        self._slot = 4096  # bytes each rank all-gathers for its host object (grows alike)

    def _stream(self):
        return device.xp.cuda.get_current_stream().ptr

    def post(self, it, meta, rows):
        skeletons, self._send = {}, {}
        for d, obj in rows.items():
            arrays = []
            skeletons[d] = _flatten(obj, arrays)
            self._send[d] = arrays
        self._blob = pickle.dumps((meta, skeletons), protocol=pickle.HIGHEST_PROTOCOL)

    def _all_gather(self, host):
        """Every rank's ``host`` bytes (a NumPy uint8 array, the same length on all ranks)."""
        xp, nccl = device.xp, self.nccl
        mine = xp.asarray(host)
        every = xp.empty(self.size * host.shape[0], dtype=np.uint8)
        self.comm.allGather(mine.data.ptr, every.data.ptr, host.shape[0], nccl.NCCL_UINT8,
                            self._stream())
        return every.get().reshape(self.size, host.shape[0])

    def metas(self, it):
        """One all-gather of a fixed slot (8 bytes of length, then the pickled object) in the
        common case; where some rank's object outgrows the slot, a second of the largest size,
        and every rank widens its slot alike (they all see the same lengths)."""
        blob, slot = self._blob, self._slot
        mine = np.zeros(slot, dtype=np.uint8)
        mine[:8] = np.frombuffer(np.int64(len(blob)).tobytes(), dtype=np.uint8)
        if len(blob) <= slot - 8:
            mine[8:8 + len(blob)] = np.frombuffer(blob, dtype=np.uint8)
        every = self._all_gather(mine)
        sizes = every[:, :8].copy().view(np.int64)[:, 0]
        width = int(sizes.max())
        if width > slot - 8:
            padded = np.zeros(width, dtype=np.uint8)
            padded[:len(blob)] = np.frombuffer(blob, dtype=np.uint8)
            every = np.concatenate([np.zeros((self.size, 8), np.uint8),
                                    self._all_gather(padded)], axis=1)
            self._slot = 1 << int(width + 8 - 1).bit_length()
        self._got = [pickle.loads(every[r, 8:8 + int(sizes[r])].tobytes())
                     for r in range(self.size)]
        return [meta for meta, _ in self._got]

    def rows(self, it):
        xp, nccl, stream = device.xp, self.nccl, self._stream()
        out, filled = {}, {}
        nccl.groupStart()
        for d, arrays in self._send.items():
            for a in arrays:
                if a.nbytes:
                    self.comm.send(a.data.ptr, a.nbytes, nccl.NCCL_UINT8, d, stream)
        for q, (_, skeletons) in enumerate(self._got):
            if q == self.rank or self.rank not in skeletons:
                continue
            bufs = filled[q] = []
            for shape, dtype in _slots(skeletons[self.rank]):
                b = xp.empty(shape, dtype=dtype)
                if b.nbytes:
                    self.comm.recv(b.data.ptr, b.nbytes, nccl.NCCL_UINT8, q, stream)
                bufs.append(b)
        nccl.groupEnd()
        for q, bufs in filled.items():
            out[q] = _unflatten(self._got[q][1][self.rank], iter(bufs))
        self._send = {}
        return out

    def close(self):
        _end(self.run)


class _Slot:
    """Where a device array was in a flattened message (its shape and dtype)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def __reduce__(self):
        return (_Slot, (self.shape, self.dtype))


def _flatten(obj, arrays):
    """``obj`` with each device array replaced by a :class:`_Slot` (the array, contiguous,
    appended to ``arrays``)."""
    if isinstance(obj, dict):
        return {k: _flatten(v, arrays) for k, v in obj.items()}
    if isinstance(obj, (tuple, list)):
        return type(obj)(_flatten(v, arrays) for v in obj)
    if hasattr(obj, "__cuda_array_interface__"):
        a = device.xp.ascontiguousarray(obj)
        arrays.append(a)
        return _Slot(a.shape, a.dtype.str)
    return obj


def _slots(skeleton):
    if isinstance(skeleton, dict):
        for v in skeleton.values():
            yield from _slots(v)
    elif isinstance(skeleton, (tuple, list)):
        for v in skeleton:
            yield from _slots(v)
    elif isinstance(skeleton, _Slot):
        yield skeleton.shape, np.dtype(skeleton.dtype)


def _unflatten(skeleton, arrays):
    if isinstance(skeleton, dict):
        return {k: _unflatten(v, arrays) for k, v in skeleton.items()}
    if isinstance(skeleton, (tuple, list)):
        return type(skeleton)(_unflatten(v, arrays) for v in skeleton)
    if isinstance(skeleton, _Slot):
        return next(arrays)
    return skeleton
