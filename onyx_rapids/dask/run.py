"""The iteration driver of the distributed algorithms: one Dask task per partition and
iteration, the boundary rows moving between them as task results.

A run is four functions of the algorithm (module-level, so they travel by name):

* ``start(part, given) -> State``: the partition's first rows (``given``: its slice of the
  inputs);
* ``step(part, state, shared, inbox) -> State``: one iteration: the ghost rows the owners sent
  (``inbox``, ``{q: payload}``) go into the partition's copy, then the single-GPU operators
  run on the partition's local graph;
* ``reduce(partials) -> (shared, done)`` on the client: the global sums an iteration needs
  (PageRank's dangling mass, the stop test), from each partition's small ``partial``;
* ``frame(part, state)``: the partition's rows of the result frame.

A state's ``outbox`` maps each partition that keeps some of its rows as ghosts to what it
sends: every row (bulk) or ``(positions, rows)`` of the rows that moved (change-driven; see
:func:`outbox`).  Each payload is a task result of its own, so Dask moves it from the owner's
worker to the reader's (over the workers' own transport: TCP, or UCX between GPUs), never
through the client; the client gathers only the partials, once an iteration.  Tasks are pure
(a step copies what it changes): when a worker is lost mid-run, Dask recomputes what it still
can from the lineage, and where a result is gone for good (a state whose inputs were released,
data scattered from the client) the run raises a ``RuntimeError`` naming the algorithm and
iteration and returns no frame; start it again (on a rebuilt graph if its partitions were
lost).
"""

from __future__ import annotations

import logging
import time

import numpy as np

from .. import device
from ..algorithms._common import RunInfo

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
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    return (FutureCancelledError, CommClosedError, KilledWorker, TimeoutError)


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
            progress=None, lag=None):
    """Run ``start``, then ``step`` until ``reduce`` says done or ``max_iter`` steps; return
    ``(dask DataFrame, RunInfo)``.  ``given[p]`` is partition p's input (a future or a
    value); ``progress(iteration, seconds)`` is called on the client as each iteration's
    partials arrive; ``lag`` (default :data:`LAG`): iterations run ahead of the client.
    ``info.bytes_exchanged`` holds the bytes of ghost rows sent in each iteration (the first
    entry: the start's)."""
    import dask.dataframe as dd

    _require_dask_cudf()
    client, parts, P = graph.client, graph.partitions, graph.npartitions
    lag = LAG if lag is None else int(lag)
    errors = _dask_errors()
    readers = _readers(graph)
    sent = []
    info = RunInfo(variant=dict(variant, npartitions=P, bytes_exchanged=sent))
    stage = "the start"
    began = time.perf_counter()
    try:
        states = {0: [client.submit(start, parts[p], given[p]) for p in range(P)]}
        partials = {0: [client.submit(_partial, s) for s in states[0]]}
        submitted, done = 0, False
        while True:
            while submitted < min(max_iter, info.iterations + lag):
                prev, prev_partials = states[submitted], partials[submitted]
                submitted += 1
                boxes = [{q: client.submit(_pick, prev[q], p) for q in readers[p]}
                         for p in range(P)]
                states[submitted] = [client.submit(_advance, step, reduce, parts[p], prev[p],
                                                   prev_partials, boxes[p]) for p in range(P)]
                partials[submitted] = [client.submit(_partial, s) for s in states[submitted]]
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
        frames = [client.submit(frame, parts[p], final[p]) for p in range(P)]
        meta = client.submit(_meta, frames[0]).result()
    except errors as e:
        raise _fail(name, stage, e) from e
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
