"""onyx_rapids.dask on a local cluster of two CPU processes (the simulator in each): every
distributed algorithm against its single-GPU namesake with 1, 2 and 3 partitions (exact for
traversals, the contract's tolerance otherwise), the partitions' edges, bad input, and a worker
lost mid-run."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import device

from onyx_rapids import dask as odask  # noqa: E402  (dask is in the test extra)
from onyx_rapids.dask import run  # noqa: E402

from graphs import random_directed, random_undirected  # noqa: E402

PARTITIONS = (1, 2, 3)


@pytest.fixture(scope="module")
def client():
    client = odask.local_cluster(2)
    client.run(sys.setswitchinterval, 0.0005)  # as conftest: cheaper simulated warps
    yield client
    cluster = client.cluster
    client.close()
    cluster.close()


def _directed():
    return random_directed(n=14, m=40, seed=3, weights=1)


def _undirected():
    return random_undirected(n=12, m=20, seed=1)


def _by_vertex(frame):
    frame = frame.compute() if hasattr(frame, "compute") else frame
    return frame.sort_values("vertex").reset_index(drop=True)


def _close(ours, ref, columns, atol=2e-6):
    ours, ref = _by_vertex(ours), _by_vertex(ref)
    assert ours["vertex"].tolist() == ref["vertex"].tolist()
    np.testing.assert_allclose(ours[columns].to_numpy(np.float64),
                               ref[columns].to_numpy(np.float64), atol=atol, rtol=0)


@pytest.mark.parametrize("P", PARTITIONS)
def test_partitions_hold_every_edge_of_the_single_gpu_graph(client, P):
    df = _directed()
    ref = onyx.Graph.from_edgelist(df, "src", "dst", weight="w0", directed=True)
    if P == 3:  # a Dask frame of several partitions, read where they lie
        import dask.dataframe as dd

        df = dd.from_pandas(df, npartitions=3, sort=False)
    g = odask.Graph.from_edgelist(df, "src", "dst", weight="w0", client=client, npartitions=P,
                                  directed=True)
    assert (g.n, g.m, g.npartitions) == (ref.n, ref.m, P)
    np.testing.assert_array_equal(g.vertices, device.to_host(ref.vertices))
    sizes = g.summary()["partitions"]
    assert sum(s["vertices"] for s in sizes) == g.n and sum(s["in_edges"] for s in sizes) == g.m
    parts = client.gather(g.partitions)
    edges = []
    for part in parts:
        local = part.graph
        to_global = np.concatenate([np.arange(part.lo, part.hi), part.ghosts])
        src = device.to_host(local.edge_sources)
        dst = device.to_host(local.out_indices)
        w = device.to_host(local.edge_weights[:, 0])
        edges += list(zip(to_global[src], to_global[dst], w))
        # the send lists name the reader's ghosts, in the reader's order
        for q, rows in part.send.items():
            a, b = parts[q].recv[part.index]
            np.testing.assert_array_equal(device.to_host(rows) + part.lo,
                                          parts[q].ghosts[a - parts[q].n_own:b - parts[q].n_own])
    src, dst = (device.to_host(a) for a in (ref.edge_sources, ref.out_indices))
    expect = sorted(zip(src, dst, device.to_host(ref.edge_weights[:, 0])))
    assert sorted(edges) == expect  # parallel edges merged keeping the first row's weight


@pytest.mark.parametrize("P", PARTITIONS)
def test_pagerank_and_personalized_pagerank_equal_the_single_gpu_runs(client, P):
    df = _directed()
    ref = onyx.Graph.from_edgelist(df, "src", "dst", weight="w0", directed=True)
    g = odask.Graph.from_edgelist(df, "src", "dst", weight="w0", client=client, npartitions=P,
                                  directed=True)
    # alpha 0.6: a third of the default's iterations (CI time); equality is what is tested
    ours, info = odask.pagerank(g, alpha=0.6, return_info=True)
    expect, ref_info = onyx.pagerank(ref, alpha=0.6, return_info=True)  # weighted by default
    _close(ours, expect, ["pagerank"])
    assert info.converged and abs(info.iterations - ref_info.iterations) <= 1
    assert info.npartitions == P and len(info.bytes_exchanged) == info.iterations + 1
    assert (sum(info.bytes_exchanged) > 0) == (P > 1)
    # one resident task per worker (P = 3: two partitions on one of the two workers)
    assert info.transport == ("local" if P == 1 else run.default_transport())
    sources = df["src"].iloc[[0, 5]].tolist()
    ours = odask.personalized_pagerank(g, sources, alpha=0.6, weight=False, change_driven=True)
    expect = onyx.personalized_pagerank(ref, sources, alpha=0.6, weight=False)
    _close(ours, expect, ["ppr_0", "ppr_1"], atol=1e-5)


@pytest.mark.parametrize("P", PARTITIONS)
def test_label_and_feature_propagation_equal_the_single_gpu_runs(client, P):
    df, extra = _undirected()
    ref = onyx.Graph.from_edgelist(df, "src", "dst", directed=False, vertices=extra)
    g = odask.Graph.from_edgelist(df, "src", "dst", directed=False, vertices=extra,
                                  client=client, npartitions=P)
    seeds = pd.DataFrame({"vertex": [0, 7], "label": [0, 1]})
    # 5 iterations: equality with the single-GPU run, not convergence, is tested (CI time)
    with pytest.warns(RuntimeWarning, match="did not converge in 5 iterations"):
        ours = _by_vertex(odask.label_propagation(g, seeds, k=2, tol=1e-9, max_iter=5))
    with pytest.warns(RuntimeWarning):
        expect = _by_vertex(onyx.label_propagation(ref, seeds, k=2, tol=1e-9, max_iter=5))
    _close(ours, expect, ["lp_0", "lp_1"], atol=1e-5)
    assert ours["label"].tolist() == expect["label"].tolist()
    if P == 2:  # the same seeds as a full n x k lp^0 array (its rows scattered to the owners)
        lp0 = np.full((g.n, 2), 0.5, dtype=np.float32)
        lp0[np.searchsorted(g.vertices, [0, 7])] = [[1, 0], [0, 1]]
        with pytest.warns(RuntimeWarning):
            rows = odask.label_propagation(g, lp0, k=2, tol=1e-9, max_iter=5)
        _close(rows, ours, ["lp_0", "lp_1"], atol=0)
    features = np.random.default_rng(P).random((ref.n, 3), dtype=np.float32)
    ours = odask.feature_propagation(g, features, iterations=2)
    expect = onyx.feature_propagation(ref, features, iterations=2)
    _close(ours, expect, ["h_0", "h_1", "h_2"])


@pytest.mark.parametrize("P", PARTITIONS)
def test_traversals_equal_the_single_gpu_runs(client, P):
    df = random_directed(n=16, m=22, seed=5)  # sparse: unreachable vertices, components
    ref = onyx.Graph.from_edgelist(df, "src", "dst", vertices=[-7, 10**13], directed=True)
    g = odask.Graph.from_edgelist(df, "src", "dst", vertices=[-7, 10**13], client=client,
                                  npartitions=P, directed=True)
    source = int(df["src"].iloc[0])
    ours = _by_vertex(odask.bfs(g, source=source))
    expect = _by_vertex(onyx.bfs(ref, source=source))
    assert ours["distance"].tolist() == expect["distance"].tolist()
    assert (ours["distance"] == 2**31 - 1).any()
    # a predecessor is null exactly where the single-GPU one is, else one hop closer along an edge
    assert ours["predecessor"].isna().tolist() == expect["predecessor"].isna().tolist()
    dist = dict(zip(ours["vertex"], ours["distance"]))
    pairs = set(zip(df["src"], df["dst"]))
    for v, p in zip(ours["vertex"], ours["predecessor"]):
        if not pd.isna(p):
            assert (int(p), v) in pairs and dist[int(p)] == dist[v] - 1
    many = _by_vertex(odask.bfs(g, sources=[source, -7]))
    expect = _by_vertex(onyx.bfs(ref, sources=[source, -7]))
    assert many[["distance_0", "distance_1"]].equals(expect[["distance_0", "distance_1"]])
    ours = _by_vertex(odask.weakly_connected_components(g))
    expect = _by_vertex(onyx.weakly_connected_components(ref))
    assert ours["labels"].tolist() == expect["labels"].tolist()
    assert ours["labels"].nunique() > 2


def test_change_driven_exchanges_fewer_rows_and_agrees(client):
    """Personalized PageRank from one end of a path cut in three: the rows far from the source
    stay 0 for many iterations and, change-driven, are not sent."""
    path = pd.DataFrame({"src": np.arange(29), "dst": np.arange(1, 30)})
    g = odask.Graph.from_edgelist(path, "src", "dst", directed=False, client=client,
                                  npartitions=3)
    bulk, bulk_info = odask.personalized_pagerank(g, [0], alpha=0.6, tol=1e-4, return_info=True)
    cd, cd_info = odask.personalized_pagerank(g, [0], alpha=0.6, tol=1e-4, return_info=True,
                                              execution=onyx.Execution(change_driven=True))
    _close(cd, bulk, ["ppr_0"], atol=1e-4)
    assert cd_info.change_driven and not bulk_info.change_driven
    assert sum(cd_info.bytes_exchanged[1:]) < 0.7 * sum(bulk_info.bytes_exchanged[1:])


def test_every_transport_and_lag_gives_the_same_run(client):
    """A task per partition and iteration (one synchronous round trip an iteration, or
    iterations submitted ahead of the client's stop test) and resident tasks exchanging over
    Dask: the same iterations, rows and exchanged bytes."""
    df = _directed()
    client.wait_for_workers(2)  # a worker restarted by its nanny (a missed heartbeat under
    # load) would leave every partition on the other one: a run "local", not over Dask
    g = odask.Graph.from_edgelist(df, "src", "dst", weight="w0", client=client, npartitions=3,
                                  directed=True)
    placed = run._placement(g)
    assert len(set(placed[1])) == 2  # the partitions span both workers
    runs = []
    resident = ("dask",) + (("nccl",) if run.nccl_available() else ())
    for transport, lag in (("tasks", 0), ("tasks", 4)) + tuple((t, 0) for t in resident):
        old, run.LAG = run.LAG, lag
        try:
            runs.append((odask.pagerank(g, alpha=0.6, tol=1e-5, change_driven=True,
                                        return_info=True, transport=transport),
                         odask.bfs(g, source=int(df["src"].iloc[0]), return_info=True,
                                   transport=transport)))
        finally:
            run.LAG = old
        # a partition's tasks ran where it lies: still there, and nowhere else
        assert run._placement(g) == placed
        assert all(len(h) == 1 for h in client.who_has(g.partitions).values()), transport
    (pr0, pr0_info), (bfs0, bfs0_info) = runs[0]
    assert pr0_info.transport == "tasks" and runs[2][0][1].transport == "dask"
    for (pr, pr_info), (bfs, bfs_info) in runs[1:]:
        assert pr0_info.iterations == pr_info.iterations > 5
        assert pr0_info.bytes_exchanged == pr_info.bytes_exchanged
        _close(pr, pr0, ["pagerank"], atol=0)
        assert bfs0_info.iterations == bfs_info.iterations
        assert bfs0_info.bytes_exchanged == bfs_info.bytes_exchanged
        assert _by_vertex(bfs)["distance"].tolist() == _by_vertex(bfs0)["distance"].tolist()


def test_parquet_directory_and_empty_partitions(client, tmp_path):
    df = _directed()
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), 2)):
        df.iloc[chunk].to_parquet(tmp_path / f"part{i}.parquet")
    # more partitions than vertex ranges with edges: some hold no in-edge at all
    g = odask.Graph.from_parquet(tmp_path, "src", "dst", weight="w0", client=client,
                                 npartitions=9, directed=True)
    sizes = g.summary()["partitions"]
    assert any(s["in_edges"] == 0 for s in sizes)
    ref = onyx.Graph.from_edgelist(df, "src", "dst", weight="w0", directed=True)
    with pytest.warns(RuntimeWarning, match="did not converge in 3"):  # equality: 3 will do
        ours, expect = odask.pagerank(g, max_iter=3), onyx.pagerank(ref, max_iter=3)
    _close(ours, expect, ["pagerank"])


def test_the_distributed_algorithms_are_declared_as_their_namesakes():
    """Each is declared in odask.ALGORITHMS with (some of) its namesake's inputs and its columns,
    and takes ``execution=``: options it does not support are refused before any work, in the
    registry's one message."""
    assert set(odask.ALGORITHMS) == {"pagerank", "personalized_pagerank", "label_propagation",
                                     "feature_propagation", "bfs",
                                     "weakly_connected_components"}
    for name, spec in odask.ALGORITHMS.items():
        single = onyx.registry.get(name)
        assert spec.function is getattr(odask, name)
        assert spec.columns == single.columns
        declared = {(i.name, i.kind) for i in single.inputs}  # pagerank: no personalization
        assert {(i.name, i.kind) for i in spec.inputs} <= declared
        assert set(spec.options) <= set(single.options)
    assert odask.ALGORITHMS["pagerank"].variants() == [{"change_driven": False},
                                                       {"change_driven": True}]
    with pytest.raises(ValueError, match="pagerank does not support fold=True: its execution "
                                         "options are change_driven"):
        odask.pagerank(None, fold=True)
    with pytest.raises(ValueError, match="bfs does not support change_driven=True"):
        odask.bfs(None, source=0, execution=onyx.Execution(change_driven=True))
    with pytest.raises(ValueError, match="change_driven must be"):
        odask.label_propagation(None, None, 2, change_driven="auto")


def test_bad_input_is_named(client):
    df = _directed()
    with pytest.raises(ValueError, match="no column 'dest'"):
        odask.Graph.from_edgelist(df, "src", "dest", client=client)
    floats = df.assign(src=df["src"].astype(np.float64))
    with pytest.raises(TypeError, match="source='src': vertex ids must be integers"):
        odask.Graph.from_edgelist(floats, "src", "dst", client=client)
    with pytest.raises(ValueError, match="npartitions"):
        odask.Graph.from_edgelist(df, "src", "dst", client=client, npartitions=0)
    with pytest.raises(ValueError, match="directed"):
        odask.Graph.from_edgelist(df, "src", "dst", client=client, directed="yes")
    g = odask.Graph.from_edgelist(df, "src", "dst", client=client, directed=True)
    with pytest.raises(ValueError, match=r"sources: \[12345\] not a vertex"):
        odask.personalized_pagerank(g, [12345])
    with pytest.raises(ValueError, match="no edge weights"):
        odask.pagerank(g, weight="w0")
    with pytest.raises(ValueError, match="source"):
        odask.bfs(g)
    with pytest.raises(ValueError, match="features: 14 rows"):
        odask.feature_propagation(g, np.ones((3, 2), dtype=np.float32))
    with pytest.raises(ValueError, match=r"labels must be integer classes in \[0, 2\)"):
        odask.label_propagation(g, pd.DataFrame({"vertex": [df["src"][0]], "label": [5]}), 2)
    with pytest.raises(ValueError, match="transport must be one of"):
        odask.pagerank(g, transport="mpi")
    if not run.nccl_available():
        with pytest.raises(ValueError, match="transport='nccl' needs GPUs"):
            odask.bfs(g, source=int(df["src"][0]), transport="nccl")


def test_one_worker_runs_several_partitions():
    df, extra = _undirected()
    ref = onyx.Graph.from_edgelist(df, "src", "dst", directed=False, vertices=extra)
    client = odask.local_cluster(1)
    try:
        assert len(client.scheduler_info()["workers"]) == 1
        g = odask.Graph.from_edgelist(df, "src", "dst", directed=False, vertices=extra,
                                      client=client)
        assert g.npartitions == 1  # one per worker by default
        g = odask.Graph.from_edgelist(df, "src", "dst", directed=False, vertices=extra,
                                      client=client, npartitions=2)
        ours = _by_vertex(odask.weakly_connected_components(g))
        assert ours["labels"].tolist() == \
            _by_vertex(onyx.weakly_connected_components(ref))["labels"].tolist()
    finally:
        cluster = client.cluster
        client.close(timeout=10)
        cluster.close(timeout=10)


@pytest.mark.parametrize("transport", ["tasks", "dask"])
def test_a_worker_lost_mid_run_raises_or_recomputes(transport):
    """A worker killed after the second iteration (on a cluster of its own).  Tasks: Dask
    recomputes what it can from the lineage, and where a dependency is gone for good the run
    raises a RuntimeError naming the algorithm and the iteration.  Resident: the other worker's
    task is stopped and the run raises a RuntimeError.  Never an incomplete frame."""
    warnings.simplefilter("ignore", RuntimeWarning)  # tol below float32's reach: max_iter
    df = _directed()
    ref = onyx.Graph.from_edgelist(df, "src", "dst", weight="w0", directed=True)
    client = odask.local_cluster(2)
    try:
        g = odask.Graph.from_edgelist(df, "src", "dst", weight="w0", client=client,
                                      npartitions=2, directed=True)
        victim = sorted(client.nthreads())[0]
        killed = []

        def kill(iteration, seconds):
            if iteration >= 2 and not killed:
                killed.append(victim)
                client.run(lambda: __import__("os")._exit(1), workers=[victim], nanny=False,
                           on_error="ignore")

        from distributed.client import FutureCancelledError, FuturesCancelledError

        # long enough for the kill to land mid-run: tasks kill in the client's progress call of
        # iteration 2 with at most run.LAG (3) iterations submitted ahead, so 12 leave 7 or
        # more to recompute (CI time: 60 cost 9 s); resident, ~2 ms an iteration on a GPU
        iterations = 12 if transport == "tasks" else 60 if device.is_simulator() else 3000
        assert iterations > 2 + run.LAG + 2
        raised = False
        try:
            frame = odask.pagerank(g, tol=1e-12, max_iter=iterations, progress=kill,
                                   transport=transport)
            ours = frame.compute()
        except RuntimeError as e:
            raised = True
            assert "no result is returned" in str(e)
            assert ("pagerank: the Dask computation failed during iteration" in str(e)
                    if transport == "tasks" else "left the cluster mid-run" in str(e))
        except (FutureCancelledError, FuturesCancelledError) as e:  # ended before the kill
            assert transport == "dask" and "lost dependencies" in str(e)
        else:  # recomputed from the lineage, or ended before the kill landed: whole and right
            _close(ours, onyx.pagerank(ref, tol=1e-12, max_iter=iterations), ["pagerank"])
        assert killed
        if transport == "dask" and device.is_simulator():
            assert raised  # a simulated run outlasts the kill
    finally:
        cluster = client.cluster
        client.close(timeout=10)
        cluster.close(timeout=10)


def test_the_gpu_count_at_import_initializes_no_cuda(monkeypatch):
    """Importing the package counts GPUs through NVML where pynvml is installed (a dask-cuda
    worker imports its parent's main module, and so the package, before it picks its GPU with
    CUDA_VISIBLE_DEVICES: a CUDA call then would bind it to every GPU)."""
    import types

    calls = []
    fake = types.SimpleNamespace(nvmlInit=lambda: calls.append("init"),
                                 nvmlDeviceGetCount=lambda: 4,
                                 nvmlShutdown=lambda: calls.append("shutdown"))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert device._nvml_gpu_count() == 4 and calls == ["init", "shutdown"]
    for visible, count in (("1", 1), ("0,2", 2), ("", 0), ("-1", 0), ("0,1,2,3,4,5", 4)):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
        assert device._nvml_gpu_count() == count, visible

    def broken():
        raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setattr(fake, "nvmlInit", broken)
    assert device._nvml_gpu_count() is None
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed: import fails
    assert device._nvml_gpu_count() is None


def test_nccl_host_objects_travel_in_one_slot_and_the_slot_grows_alike():
    """NcclTransport.metas on two ranks with a fake all-gather (threads): small objects in
    one fixed slot, a larger one in a second gather that widens every rank's slot alike."""
    import threading

    from onyx_rapids.dask import exchange

    barrier, board, gathers = threading.Barrier(2), {}, []

    class Fake(exchange.NcclTransport):
        def __init__(self, rank):
            self.rank, self.size, self._slot = rank, 2, 4096

        def _all_gather(self, host):
            board[self.rank] = host.copy()
            barrier.wait()
            out = np.stack([board[0], board[1]])
            barrier.wait()
            gathers.append((self.rank, host.shape[0]))
            return out

    ranks, got = [Fake(0), Fake(1)], {}

    def run(t):
        for it, size in enumerate((10, 6000, 20)):
            meta = {"rank": t.rank, "pad": "x" * (size if t.rank == 1 else 3)}
            t.post(it, meta, {})
            got[(t.rank, it)] = (t.metas(it), t._slot)

    threads = [threading.Thread(target=run, args=(t,)) for t in ranks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    for it, size in enumerate((10, 6000, 20)):
        for r in (0, 1):
            metas, slot = got[(r, it)]
            assert [m["rank"] for m in metas] == [0, 1]
            assert len(metas[1]["pad"]) == size and metas[0]["pad"] == "xxx"
    assert got[(0, 1)][1] == got[(1, 1)][1] == 8192  # both widened on the 6000-byte object
    sizes = [n for r, n in gathers if r == 0]  # one gather, two (slot, then widest), one
    assert sizes[:2] == [4096, 4096] and 6000 < sizes[2] < 8192 and sizes[3:] == [8192]
