"""The iteration driver of the distributed algorithms.

A run is four functions of the algorithm (module-level, so they travel by name):

* ``start(part, given) -> State``: the partition's first rows (``given``: its slice of the
  inputs);
* ``step(part, state, shared, inbox) -> State``: one iteration: the ghost rows the owners sent
  (``inbox``, ``{q: payload}``) go into the partition's copy, then the single-GPU operators
  run on the partition's local graph;
* ``reduce(partials) -> (shared, done)``: the global sums an iteration needs (PageRank's
  dangling mass, the stop test), from each partition's small ``partial``;
* ``frame(part, state)``: the partition's rows of the result frame.

A state's ``outbox`` maps each partition that keeps some of its rows as ghosts to what it
sends: every row (bulk) or ``(positions, rows)`` of the rows that moved (change-driven; see
:func:`outbox`).

:func:`iterate` runs them one of two ways (``transport``):

* **resident** (``"nccl"``, ``"dask"``; the default): one task per worker holds its partitions
  for the whole run (:func:`_resident`); every iteration the workers exchange their partials
  and ghost rows directly (:mod:`onyx_rapids.dask.exchange`: GPU to GPU through NCCL, or over
  the workers' own Dask connections), each reduces every partition's partials itself, and all
  stop at the same iteration.  The client submits the tasks, watches them (a failed task or a
  lost worker stops the others and raises a ``RuntimeError`` naming the algorithm; no frame)
  and collects the frames and counts.  ``RunInfo.seconds``: the client's ``submit``, ``run``
  and ``collect``, and the slowest worker's ``worker_start``, ``worker_steps``,
  ``worker_exchange`` (which holds the wait for the slowest peer) and ``worker_frames``.
* **tasks** (``"tasks"``): a task per partition and iteration, the ghost rows task results of
  their own moved worker to worker by Dask, partials reduced by each next step and by the
  client, which submits up to :data:`LAG` iterations ahead.  Tasks are pure (a step copies
  what it changes): when a worker is lost mid-run, Dask recomputes what it still can from the
  lineage, and where a result is gone for good the run raises a ``RuntimeError`` naming the
  algorithm and iteration and returns no frame.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

import numpy as np

from .. import device
from ..algorithms._common import RunInfo
from . import exchange

log = logging.getLogger("onyx_rapids.dask")


class State:
    """A partition's rows after a step: ``x`` (n_local rows: own, then ghosts), ``outbox``,
    ``partial``, and what else the algorithm keeps (``extra``)."""

    def __init__(self, x, outbox, partial, **extra):
        self.x = x
        self.outbox = outbox
        self.partial = partial
        self.__dict__.update(extra)


def outbox(part, rows, pushed=None, threshold=None):
    """What ``part`` sends for its own ``rows`` (n_own x k): to every partition in
    ``part.send`` the rows it keeps, or, given ``pushed`` (the rows last sent), only those that
    moved by more than ``threshold`` in some feature (or from ``pushed`` at all, without a
    threshold), as ``(positions, rows)``, positions in the reader's block, or the whole block
    where that is no larger; ``pushed`` is updated in place (the rows that moved: every reader
    holds them within ``threshold``).  Returns ``(outbox, bytes)``."""
    xp = device.xp
    box, nbytes = {}, 0
    moved = None
    if pushed is not None:
        diff = rows != pushed if threshold is None else abs(rows - pushed) > threshold
        moved = diff.reshape(rows.shape[0], -1).any(axis=1)
    for q, send in part.send.items():
        if moved is None:
            payload = rows[send]
            nbytes += payload.nbytes
        else:
            positions = xp.nonzero(moved[send])[0].astype(np.int32)
            payload = (positions, rows[send[positions]])
            if positions.nbytes + payload[1].nbytes >= send.shape[0] * rows[0].nbytes:
                payload = rows[send]  # most rows moved: the block costs less than its changes
                nbytes += payload.nbytes
            else:
                nbytes += positions.nbytes + payload[1].nbytes
        box[q] = payload
    if moved is not None:
        pushed[moved] = rows[moved]
    return box, nbytes


def receive(part, x, inbox):
    """Write the ghost rows of ``inbox`` into ``x`` (in place)."""
    for q, payload in inbox.items():
        if payload is None:
            continue
        a, b = part.recv[q]
        if isinstance(payload, tuple):
            positions, rows = payload
            if positions.shape[0]:
                x[a + positions] = rows
        else:
            x[a:b] = payload


def _pick(state, q):
    return state.outbox.get(q)


def _partial(state):
    return state.partial


def _meta(frame):
    return frame.iloc[:0]


def _fail(name, stage, error):
    return RuntimeError(f"{name}: the Dask computation failed during {stage} "
                        f"({type(error).__name__}: {error}); no result is returned")


def _dask_errors():
    from distributed.client import FutureCancelledError, FuturesCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    return (FutureCancelledError, FuturesCancelledError, CommClosedError, KilledWorker,
            TimeoutError)


#: Iterations the client submits ahead of the last one whose partials it has read (0: one
#: synchronous round trip an iteration).  Ahead of the client, each step reduces the previous
#: iteration's partials itself, on its worker, and a step after convergence passes its rows on
#: (:func:`_advance`), so the result is the same iteration's as one at a time.
LAG = 3


def _advance(step, reduce, part, state, partials, inbox):
    """One iteration of partition ``part`` from the previous iteration's ``partials`` (every
    partition's); a run that has converged keeps its rows."""
    shared, done = reduce(partials)
    if done:
        return state
    return step(part, state, shared, inbox)


def iterate(graph, name, start, step, reduce, frame, given, *, max_iter, variant,
            progress=None, lag=None, transport=None):
    """Run ``start``, then ``step`` until ``reduce`` says done or ``max_iter`` steps; return
    ``(dask DataFrame, RunInfo)``.  ``given[p]`` is partition p's input (a future or a
    value); ``progress(iteration, seconds)`` is called on the client as iterations end.
    ``transport``: ``"tasks"`` (a task per partition and iteration; ``lag``, default
    :data:`LAG`: iterations submitted ahead of the client), or a resident run (:func:`_resident`)
    exchanging through ``"dask"`` or ``"nccl"``; default (None): :func:`default_transport`.
    ``info.bytes_exchanged`` holds the bytes of ghost rows sent in each iteration (the first
    entry: the start's)."""
    _require_dask_cudf()
    transport = check_transport(transport)
    if transport == "tasks":
        return _iterate_tasks(graph, name, start, step, reduce, frame, given,
                              max_iter=max_iter, variant=variant, progress=progress, lag=lag)
    return _iterate_resident(graph, name, start, step, reduce, frame, given,
                             max_iter=max_iter, variant=variant, progress=progress,
                             transport=transport)


def _iterate_tasks(graph, name, start, step, reduce, frame, given, *, max_iter, variant,
                   progress, lag):
    import dask.dataframe as dd

    client, parts, P = graph.client, graph.partitions, graph.npartitions
    lag = LAG if lag is None else int(lag)
    errors = _dask_errors()
    readers = _readers(graph)
    sent = []
    info = RunInfo(variant=dict(variant, npartitions=P, bytes_exchanged=sent,
                                transport="tasks"))
    stage = "the start"
    began = time.perf_counter()
    addresses, rank_of = _placement(graph)

    def at(p):  # a partition's tasks run where it lies: unrestricted, Dask would copy it to
        # another worker, and its memory manager may then drop the copy on its home
        return dict(workers=[addresses[rank_of[p]]], allow_other_workers=False)

    try:
        states = {0: [client.submit(start, parts[p], given[p], **at(p)) for p in range(P)]}
        partials = {0: [client.submit(_partial, s, **at(p)) for p, s in enumerate(states[0])]}
        submitted, done = 0, False
        while True:
            while submitted < min(max_iter, info.iterations + lag):
                prev, prev_partials = states[submitted], partials[submitted]
                submitted += 1
                boxes = [{q: client.submit(_pick, prev[q], p, **at(q)) for q in readers[p]}
                         for p in range(P)]
                states[submitted] = [client.submit(_advance, step, reduce, parts[p], prev[p],
                                                   prev_partials, boxes[p], **at(p))
                                     for p in range(P)]
                partials[submitted] = [client.submit(_partial, s, **at(p))
                                       for p, s in enumerate(states[submitted])]
            for old in [i for i in states if i < info.iterations]:
                del states[old], partials[old]  # read and built upon: Dask may free them
            read = client.gather(partials[info.iterations])
            _, done = reduce(read)
            sent.append(sum(pt["sent"] for pt in read))
            if info.iterations:
                elapsed = time.perf_counter() - began
                log.info("%s: iteration %d, %.3f s, %d bytes exchanged", name,
                         info.iterations, elapsed, sent[-1])
                if progress is not None:
                    progress(info.iterations, elapsed)
            if done or info.iterations == max_iter:
                break
            info.iterations += 1
            stage = f"iteration {info.iterations}"
        final = states[info.iterations]
        states.clear()  # iterations submitted past the end only pass their rows on
        partials.clear()
        info.converged = bool(done)
        stage = "the result frame"
        frames = [client.submit(frame, parts[p], final[p], **at(p)) for p in range(P)]
        meta = client.submit(_meta, frames[0]).result()
    except errors as e:
        raise _fail(name, stage, e) from e
    return dd.from_delayed(frames, meta=meta, verify_meta=False), info


#: The transports of :func:`iterate`: ``tasks`` (Dask tasks each iteration), ``dask``
#: (resident tasks, rows over the workers' Dask connections), ``nccl`` (resident tasks, rows
#: GPU to GPU through NCCL).
TRANSPORTS = ("tasks", "dask", "nccl")

#: Seconds between the client's looks at a resident run (failures, progress).
WATCH_INTERVAL = 0.1


def nccl_available() -> bool:
    """True on GPUs where CuPy's NCCL bindings load."""
    if device.BACKEND != "gpu":
        return False
    try:
        from cupy.cuda import nccl
    except ImportError:
        return False
    return bool(getattr(nccl, "available", True))


def default_transport() -> str:
    """``"nccl"`` where :func:`nccl_available`, else ``"dask"``."""
    return "nccl" if nccl_available() else "dask"


def check_transport(transport):
    """``transport`` checked (None: :func:`default_transport`)."""
    if transport is None:
        return default_transport()
    if transport not in TRANSPORTS:
        raise ValueError(f"transport must be one of {TRANSPORTS} or None, got {transport!r}")
    if transport == "nccl" and not nccl_available():
        raise ValueError("transport='nccl' needs GPUs and CuPy's NCCL bindings "
                         "(cupy.cuda.nccl; pip install nvidia-nccl-cu13); use 'dask'")
    return transport


_PROGRESS: dict = {}  # run id -> last iteration ended, on the workers


def _resident(run, rank, spec, members, parts, given, start, step, reduce, frame, max_iter,
              rank_of):
    """A resident run's task on worker ``rank``: its partitions (``members``) from ``start`` to
    the stop, exchanging with the other workers through ``spec`` (``("dask", addresses)`` or
    ``("nccl", key)``).  Every worker reduces every partition's partials itself, so all stop
    at the same iteration.  Returns its partitions' result frames and the run's counts."""
    kind, arg = spec
    link = (exchange.DaskTransport(run, rank, arg) if kind == "dask"
            else exchange.NcclTransport(run, rank, arg))
    clock = {"start": 0.0, "steps": 0.0, "exchange": 0.0}
    try:
        t = time.perf_counter()
        states = [start(part, g) for part, g in zip(parts, given)]
        clock["start"] = time.perf_counter() - t
        it, sent = 0, []
        while True:
            t = time.perf_counter()
            outgoing, local = {}, {}
            for q, state in zip(members, states):
                for p, payload in state.outbox.items():
                    r = rank_of[p]
                    (local if r == rank else outgoing.setdefault(r, {}))[(q, p)] = payload
            link.post(it, {q: s.partial for q, s in zip(members, states)}, outgoing)
            partials = [None] * len(rank_of)
            for meta in link.metas(it):
                for q, partial in meta.items():
                    partials[q] = partial
            shared, done = reduce(partials)
            sent.append(sum(pt["sent"] for pt in partials))
            _PROGRESS[run] = it
            if done or it == max_iter:
                clock["exchange"] += time.perf_counter() - t
                break
            it += 1
            inboxes = {p: {} for p in members}
            for (q, p), payload in local.items():
                inboxes[p][q] = payload
            for box in link.rows(it - 1).values():
                for (q, p), payload in box.items():
                    inboxes[p][q] = payload
            u = time.perf_counter()
            clock["exchange"] += u - t
            states = [step(part, state, shared, inboxes[p])
                      for p, part, state in zip(members, parts, states)]
            clock["steps"] += time.perf_counter() - u
        t = time.perf_counter()
        frames = {p: frame(part, state) for p, part, state in zip(members, parts, states)}
        clock["frames"] = time.perf_counter() - t
        return dict(frames=frames, iterations=it, converged=bool(done), sent=sent,
                    seconds=clock)
    finally:
        link.close()
        _PROGRESS.pop(run, None)


def _summary(result):
    """The run's counts and an empty frame of the result's columns (its ``meta``)."""
    summary = {k: v for k, v in result.items() if k != "frames"}
    summary["meta"] = _meta(next(iter(result["frames"].values())))
    return summary


def _frame_of(result, p):
    return result["frames"][p]


def _progress_of(run):
    return _PROGRESS.get(run)


def _placement(graph):
    """The workers holding the partitions (``addresses``, one rank each) and each partition's
    rank: the worker it was built on while that still holds it (Dask may have copied it to
    others)."""
    who = graph.client.who_has(graph.partitions)
    addresses, rank_of = [], []
    for p, f in enumerate(graph.partitions):
        holders = sorted(who.get(f.key, ()))
        if not holders:
            raise RuntimeError(f"partition {p} of the graph is on no worker (lost); build the "
                               "graph again")
        at = graph.homes[p] if graph.homes[p] in holders else holders[0]
        if at not in addresses:
            addresses.append(at)
        rank_of.append(addresses.index(at))
    return addresses, rank_of


def _client_lock(client):
    """One resident run at a time from a client: each holds a thread of every worker it uses
    (and an NCCL communicator) for the whole run."""
    lock = getattr(client, "_onyx_resident_lock", None)
    if lock is None:
        lock = client._onyx_resident_lock = threading.Lock()
    return lock


def _nccl_key(client, addresses):
    """The NCCL communicator key of these workers, made once per set of workers."""
    keys = getattr(client, "_onyx_nccl_keys", None)
    if keys is None:
        keys = client._onyx_nccl_keys = {}
    if tuple(addresses) not in keys:
        keys[tuple(addresses)] = client.submit(exchange.nccl_key, addresses, pure=False,
                                               workers=[addresses[0]]).result()
    return keys[tuple(addresses)]


def _stop(client, run, addresses, why):
    """Abort run ``run`` on those of ``addresses`` still in the cluster."""
    alive = set(client.nthreads())
    survivors = [a for a in addresses if a in alive]
    if survivors:
        client.run(exchange.abort, run, why, workers=survivors)
    keys = getattr(client, "_onyx_nccl_keys", None)
    if keys is not None:
        keys.pop(tuple(addresses), None)  # aborted communicators are gone


def _watch(client, run, name, futures, addresses, progress, began):
    """Wait for a resident run's tasks; on a failed task or a lost worker abort the others and
    raise (the task's own exception, or a ``RuntimeError`` naming the algorithm)."""
    from distributed import wait
    from distributed.client import FutureCancelledError, FuturesCancelledError

    seen = -1
    while True:
        try:
            wait([f for f in futures if not f.done()], timeout=WATCH_INTERVAL,
                 return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        except (FutureCancelledError, FuturesCancelledError):
            pass  # a task was forgotten (its worker left): the checks below say why
        failed = [f for f in futures if f.status in ("error", "cancelled", "lost")]
        if not failed and all(f.status == "finished" for f in futures):
            return
        alive = set(client.nthreads())
        lost = [a for a in addresses if a not in alive]
        if failed or lost:
            _stop(client, run, addresses, f"{name}: stopped (another worker failed)")
            client.cancel(futures)
        if lost:
            raise RuntimeError(f"{name}: worker(s) {lost} left the cluster mid-run; no result "
                               "is returned (build the graph again: its partitions there are "
                               "gone)")
        if failed:
            where = addresses[futures.index(failed[0])]
            if failed[0].status != "error":
                raise RuntimeError(f"{name}: the run's task on {where} was {failed[0].status}; "
                                   "no result is returned")
            error = failed[0].exception()
            if isinstance(error, (exchange.RunAborted, TimeoutError) + _dask_errors()):
                raise _fail(name, f"a resident run (on {where})", error) from error
            raise error
        if progress is not None:
            it = client.run(_progress_of, run, workers=[addresses[0]]).get(addresses[0])
            if it is not None and it > seen and it > 0:
                seen = it
                progress(it, time.perf_counter() - began)


def _iterate_resident(graph, name, start, step, reduce, frame, given, *, max_iter, variant,
                      progress, transport):
    """:func:`iterate` with one resident task per worker for the whole run (its partitions'
    states stay on its GPU between iterations) and the rows moved by ``transport``."""
    import dask.dataframe as dd

    client, parts, P = graph.client, graph.partitions, graph.npartitions
    run = f"onyx-{name}-{uuid.uuid4().hex}"
    began = time.perf_counter()
    seconds = {}
    with _client_lock(client):
        addresses, rank_of = _placement(graph)
        R = len(addresses)
        if transport == "nccl" and R > 1:
            spec = ("nccl", _nccl_key(client, addresses))
        else:
            client.run(exchange.install, workers=addresses)
            spec = ("dask", addresses)
        members = [[p for p in range(P) if rank_of[p] == r] for r in range(R)]
        futures = [client.submit(_resident, run, r, spec, members[r],
                                 [parts[p] for p in members[r]],
                                 [given[p] for p in members[r]], start, step, reduce,
                                 frame, max_iter, rank_of, key=f"{run}-rank{r}",
                                 workers=[addresses[r]], allow_other_workers=False)
                   for r in range(R)]
        seconds["submit"] = time.perf_counter() - began
        _watch(client, run, name, futures, addresses, progress, began)
        seconds["run"] = time.perf_counter() - began - seconds["submit"]
    frames = [client.submit(_frame_of, futures[rank_of[p]], p, workers=[addresses[rank_of[p]]])
              for p in range(P)]
    try:
        summaries = client.gather([client.submit(_summary, f, workers=[a])
                                   for f, a in zip(futures, addresses)])
    except _dask_errors() as e:
        raise _fail(name, "the result frame", e) from e
    summary, meta = summaries[0], summaries[0]["meta"]
    seconds["collect"] = time.perf_counter() - began - seconds["submit"] - seconds["run"]
    for k in summary["seconds"]:  # the slowest worker's
        seconds[f"worker_{k}"] = max(s["seconds"][k] for s in summaries)
    info = RunInfo(variant=dict(variant, npartitions=P, bytes_exchanged=summary["sent"],
                                transport=spec[0] if R > 1 else "local", seconds=seconds))
    info.iterations, info.converged = summary["iterations"], summary["converged"]
    return dd.from_delayed(frames, meta=meta, verify_meta=False), info


def _require_dask_cudf():
    """Result frames are cuDF frames where cuDF is installed on a GPU: their Dask collection
    needs dask-cudf (checked before any work is done)."""
    from .. import io

    if io._cudf() is None:
        return
    try:
        import dask_cudf  # noqa: F401  (registers the cuDF backend of dask.dataframe)
    except ImportError as e:
        raise ImportError("onyx_rapids.dask returns dask-cuDF frames where cuDF is installed: "
                          "pip install 'onyx_rapids[dask-cu13]' (dask-cudf)") from e


def _readers(graph):
    """``readers[p]``: the partitions whose rows partition p keeps as ghosts."""
    key = "_readers"
    if getattr(graph, key, None) is None:
        client = graph.client
        setattr(graph, key, client.gather([client.submit(_owners, part)
                                           for part in graph.partitions]))
    return getattr(graph, key)


def _owners(part):
    return sorted(part.recv)


def slices(graph, values):
    """Partition p's rows ``[cuts[p], cuts[p+1])`` of a host array of n rows, scattered to
    the workers (futures)."""
    cuts = graph.cuts
    return [graph.client.scatter(np.ascontiguousarray(values[cuts[p]:cuts[p + 1]]), hash=False)
            for p in range(graph.npartitions)]
