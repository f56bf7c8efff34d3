"""Suite ``multigpu``: :mod:`onyx_rapids.dask` on a local cluster of every GPU of the machine
(``onyx_rapids.dask.local_cluster()``; under the simulator two CPU processes), against the
single-GPU call on the same graph in the same process.

The graph's stored edges (both directions of an undirected graph) are written to a Parquet
directory of one file per worker and read by the workers (``odask.Graph.from_parquet``, case
``build``, one timed build per partition count).  Then per algorithm (case = the algorithm's
settings): the single-GPU call (``ours``), and the distributed call with 1 partition (the
distributed path's overhead on one GPU) and with one partition per worker, bulk and
change-driven (PageRank, label propagation): ms per call until every partition of the result
frame is in worker memory (``persist``), median of ``repeat`` after a warm-up.  params:
iterations, workers, partitions, mean bytes of ghost rows exchanged per iteration.  Checked:
every distributed result against the single-GPU one of the same run (PageRank normalized L1
1e-3, label propagation max |diff| 1e-3, bfs hops exact).

Algorithm ``driver`` times the iteration driver alone (:func:`onyx_rapids.dask.run.iterate`
with steps that only add 1 to every own row and send it: no kernel), ``DRIVER_ITERATIONS``
iterations with one partition per worker, at each of ``DRIVER_LAGS`` (iterations run ahead of
the client; the default lag is the reference, lag 0 one synchronous round trip an
iteration): ms per call, params ms per iteration; checked: every vertex's counter equals the
iteration count.  It is Dask's cost, so it means the same under
the simulator.

``ONYX_BENCH_DASK_TRANSPORTS`` (comma-separated) limits the transports measured.

Strong scaling is a graph's rows side by side; weak scaling compares a graph on one GPU with
a graph of twice the edges on two (docs/performance.md pairs them).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import onyx_rapids as onyx
from onyx_rapids import device, io

from ..common import compare

LP_ITERATIONS, LP_LABELLED = 20, 0.01
ALGORITHMS = ("pagerank", "label_propagation", "bfs", "driver")
DRIVER_ITERATIONS, DRIVER_LAGS = 50, (3, 1, 0)  # the first: the default (run.LAG), reference
_CLIENT = []


def algorithms():
    return ALGORITHMS


def _client():
    from onyx_rapids import dask as odask

    if not _CLIENT:
        _CLIENT.append(odask.local_cluster())
    return _CLIENT[0]


def _workers(client) -> int:
    return len(client.scheduler_info()["workers"])


def _persisted(frame):
    from distributed import wait

    frame = frame.persist()
    wait(frame)
    return frame


def _pandas(frame):
    frame = frame.compute() if hasattr(frame, "compute") else frame
    frame = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    return frame.sort_values("vertex").reset_index(drop=True)


def measure(run, spec, g, stats) -> None:
    from onyx_rapids import dask as odask

    client = _client()
    workers = _workers(client)
    counts = sorted({1, workers})
    graph = spec.text
    ids = device.to_host(g.vertices)
    edges = io.to_edge_frame(g)
    edges = edges.to_pandas() if hasattr(edges, "to_pandas") else edges
    with tempfile.TemporaryDirectory() as tmp:
        for i, chunk in enumerate(np.array_split(np.arange(len(edges)), workers)):
            edges.iloc[chunk].to_parquet(Path(tmp) / f"part{i}.parquet")
        del edges
        built = {}
        single = run.row(graph, "graph construction", "build", "Graph.from_parquet", "ours",
                         "ours")
        run.timed(single, lambda: onyx.Graph.from_parquet(tmp, "src", "dst", multigraph=True,
                                                          vertices=ids, directed=True), repeat=1)
        for P in counts:
            row = run.row(graph, "graph construction", "build", f"dask P={P}", "ours",
                          "variant", params={"partitions": P, "workers": workers})
            dg = run.timed(row, lambda P=P: odask.Graph.from_parquet(
                tmp, "src", "dst", multigraph=True, client=client, npartitions=P, vertices=ids,
                directed=True),
                repeat=1)
            if dg is not None:
                built[P] = dg
                run.check(row, {"against": "ours", "metric": "edges", "value": dg.m,
                                "expected": g.m, "ok": dg.m == g.m and dg.n == g.n},
                          f"dask build P={P} {graph}")
    hub = int(ids[int(device.to_host(g.out_degree).argmax())])
    rng = np.random.default_rng(7)
    labelled = rng.choice(g.n, max(1, int(g.n * LP_LABELLED)), replace=False)
    classes = run.ks[0]  # label propagation's k
    seeds = pd.DataFrame({"vertex": ids[labelled],
                          "label": rng.integers(0, classes, labelled.size)})
    for name in run.algorithms:
        if name == "pagerank":
            case, mine, theirs = "alpha 0.85, tol 1e-6", onyx.pagerank, odask.pagerank
            args, kw, metric = (), dict(weight=False), ("normalized_l1", 1e-3, ["pagerank"])
            modes = (False, True)
        elif name == "label_propagation":
            case = f"k={classes}, {LP_ITERATIONS} iterations"
            mine, theirs = onyx.label_propagation, odask.label_propagation
            args = (seeds, classes)
            kw = dict(weight=False, tol=1e-12, max_iter=LP_ITERATIONS)
            metric = ("max_abs", 1e-3, [f"lp_{i}" for i in range(classes)])
            modes = (False, True)
        elif name == "driver":
            _measure_driver(run, graph, built[max(built)], workers)
            continue
        elif name == "bfs":
            case, mine, theirs = "from the hub", onyx.bfs, odask.bfs
            args, kw, metric, modes = (), dict(source=hub), ("hops", 0.0, ["distance"]), (False,)
        else:
            continue
        _measure_algorithm(run, graph, name, case, g, built, workers, mine, theirs, args, kw,
                           metric, modes)


def _measure_algorithm(run, graph, name, case, g, built, workers, mine, theirs, args, kw,
                       metric, modes):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # fixed iterations: "not converged"
        ours = run.row(graph, name, case, "single GPU", "ours", "ours")
        ref = run.timed(ours, lambda: mine(g, *args, **kw))
        ref = None if ref is None else _pandas(ref)
        for P, dg, transport, cd in _variants(built, modes):
            extra = dict(change_driven=True) if cd else {}
            if transport is not None:
                extra["transport"] = transport
            label = (f"dask P={P}" + ("" if transport is None else f" {transport}")
                     + (" change-driven" if cd else ""))
            row = run.row(graph, name, case, label, "ours", "variant")
            box = {}

            def call(dg=dg, extra=extra, box=box):
                frame, info = theirs(dg, *args, **kw, **extra, return_info=True)
                box["info"] = info
                return _persisted(frame)

            out = run.timed(row, call)
            if out is None:
                continue
            info = box["info"]
            moved = info.bytes_exchanged[1:]
            row["params"] = {"partitions": P, "workers": workers,
                             "transport": info.transport, "iterations": info.iterations,
                             "bytes_per_iteration": float(np.mean(moved)) if moved else 0.0}
            if getattr(info, "seconds", None):  # resident runs: where the time went (ms)
                row["params"]["phase_ms"] = {k: round(1e3 * v, 2)
                                             for k, v in info.seconds.items()}
            if ref is not None:
                have = _pandas(out)
                kind, tol, columns = metric
                record = compare(kind, device.asarray(have[columns].to_numpy()),
                                 device.asarray(ref[columns].to_numpy()),
                                 against="single GPU", tol=tol)
                run.check(row, record, f"{name} {label} {graph}")


def _transports():
    """The transports measured: every one this machine runs, or those listed in
    ``ONYX_BENCH_DASK_TRANSPORTS`` (comma-separated; e.g. ``nccl`` alone for large graphs,
    where the tasks and Dask-connection rows cost minutes)."""
    import os

    from onyx_rapids.dask import run as driver

    every = ("tasks", "dask") + (("nccl",) if driver.nccl_available() else ())
    wanted = os.environ.get("ONYX_BENCH_DASK_TRANSPORTS", "").strip()
    if not wanted:
        return every
    chosen = tuple(t.strip() for t in wanted.split(",") if t.strip())
    unknown = [t for t in chosen if t not in every]
    if unknown:
        raise ValueError(f"ONYX_BENCH_DASK_TRANSPORTS: {unknown} not among {every}")
    return chosen


def _variants(built, modes):
    """(partitions, graph, transport, change-driven) of each distributed row: one partition
    with the default transport, one per worker with each transport (tasks: bulk only)."""
    for P, dg in built.items():
        for transport in (None,) if P == 1 else _transports():
            for cd in modes:
                if not (cd and (P == 1 or transport == "tasks")):
                    yield P, dg, transport, cd


def _driver_start(part, given):
    from onyx_rapids.dask.run import State, outbox

    x = device.zeros((part.n_local, 1), np.float32)
    box, sent = outbox(part, x[:part.n_own])
    return State(x, box, dict(sent=sent))


def _driver_step(part, state, shared, inbox):
    from onyx_rapids.dask.run import State, outbox, receive

    x = state.x.copy()
    receive(part, x, inbox)
    x[:part.n_own] += 1
    box, sent = outbox(part, x[:part.n_own])
    return State(x, box, dict(sent=sent))


def _driver_reduce(partials):
    return None, False


def _driver_frame(part, state):
    return pd.DataFrame({"vertex": part.own_ids,
                         "count": device.to_host(state.x[:part.n_own, 0])})


def _measure_driver(run, graph, dg, workers):
    from onyx_rapids.dask import run as driver

    case = f"{DRIVER_ITERATIONS} iterations, no kernel, P={dg.npartitions}"
    chosen = _transports()
    first = driver.default_transport() if driver.default_transport() in chosen else chosen[0]
    ways = [(t, None) for t in (first,) + chosen if t != "tasks"]
    ways = list(dict.fromkeys(ways))
    if "tasks" in chosen:
        ways += [("tasks", lag) for lag in DRIVER_LAGS]
    for transport, lag in ways:
        label = transport if lag is None else f"tasks lag {lag}"
        row = run.row(graph, "driver", case, label, "ours",
                      "ours" if transport == first else "variant")

        def call(transport=transport, lag=lag):
            frame, _ = driver.iterate(dg, "driver", _driver_start, _driver_step, _driver_reduce,
                                      _driver_frame, [None] * dg.npartitions,
                                      max_iter=DRIVER_ITERATIONS, variant={}, lag=lag,
                                      transport=transport)
            return frame.compute()

        out = run.timed(row, call)
        if out is None:
            continue
        row["params"] = {"transport": transport, "lag": lag, "partitions": dg.npartitions,
                         "workers": workers, "ms_per_iteration": row["ms"] / DRIVER_ITERATIONS}
        counts = np.asarray(out["count"])
        run.check(row, {"against": "the iteration count", "metric": "exact",
                        "value": int((counts != DRIVER_ITERATIONS).sum()),
                        "ok": len(counts) == dg.n and bool((counts == DRIVER_ITERATIONS).all())},
                  f"driver {label} {graph}")
