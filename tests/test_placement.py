"""Graph placement (device / host zero-copy / auto), the device-memory budget, and the edge
access variants (EMOGI's naive / merged / aligned reads) of the traversal kernels."""

import numpy as np
import pandas as pd
import pytest

import oracles_traversal as oracle
from graphs import csr_edges, predecessor_ids
from onyx_rapids import (Graph, bfs, device, feature_propagation,
                         label_propagation, memory, pagerank, personalized_pagerank, sssp,
                         operators, streaming, weakly_connected_components)
from onyx_rapids.binding import reads_argument
from onyx_rapids.construction import layout
from onyx_rapids.kernels import pagerank as pagerank_kernel

ACCESS = ("degree", "naive", "merged", "aligned")


@pytest.fixture(autouse=True)
def _no_budget():
    yield
    memory.set_device_budget(None)


def _edges(n=30, m=220, seed=3, weighted=True):
    """Enough edges that vertices' edge lists start off the 128-byte boundaries and some
    cross them (aligned reads then idle lanes before the first edge)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    src[:40] = 4  # a vertex whose list spans more than one aligned window
    cols = {"src": src * 3 - 7, "dst": dst * 3 - 7}
    if weighted:
        cols["w"] = (rng.random(m) + 0.1).astype(np.float32)
    return pd.DataFrame(cols)


@pytest.fixture(scope="module")
def pair():
    df = _edges()
    return (Graph.from_edgelist(df, weight="w", placement="device", directed=True),
            Graph.from_edgelist(df, weight="w", placement="host", directed=True))


def test_placement_is_reported_and_arrays_round_trip(pair):
    g, h = pair
    assert (g.placement, h.placement) == ("device", "host")
    assert h.summary()["placement"] == "host" and "placement=host" in repr(h)
    assert h.edge_bytes() == g.edge_bytes() > 0
    for name in Graph.EDGE_ARRAYS:
        a, b = getattr(g, name), getattr(h, name)
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(device.to_host(a), device.to_host(b))
    back = h.to("device")
    assert back.placement == "device" and h.to("host") is h
    np.testing.assert_array_equal(device.to_host(back.in_indices), device.to_host(g.in_indices))


def test_undirected_graph_keeps_its_shared_csc_when_moved():
    df = _edges(weighted=False)
    h = Graph.from_edgelist(df, directed=False, placement="host")
    assert h.in_indices is h.out_indices and h.in_edge_ids is h.reverse_edge
    assert h.edge_bytes() == h.out_indices.nbytes + h.in_edge_ids.nbytes


@pytest.mark.parametrize("access", ACCESS)
def test_traversals_equal_on_both_placements_and_the_oracle(pair, access):
    g, h = pair
    src, dst = csr_edges(g)
    source = int(device.to_host(g.vertices)[4])
    expected = oracle.bfs(g.n, src, dst, 4)
    for graph in (g, h):
        got = bfs(graph, source=source, edge_access=access)["distance"].to_numpy()
        np.testing.assert_array_equal(got, expected)
    a = sssp(g, source=source, edge_access=access)["distance"].to_numpy()
    b = sssp(h, source=source, edge_access=access)["distance"].to_numpy()
    np.testing.assert_array_equal(a, b)
    w = device.to_host(g.edge_weights[:, 0]).astype(np.float64)
    np.testing.assert_allclose(a, oracle.sssp(g.n, src, dst, w, 4), rtol=1e-5)
    a = weakly_connected_components(g, method="propagate", edge_access=access)
    b = weakly_connected_components(h, method="propagate", edge_access=access)
    np.testing.assert_array_equal(a["labels"].to_numpy(), b["labels"].to_numpy())


def test_host_placement_defaults_to_aligned_reads(pair):
    _, h = pair
    info = bfs(h, source=int(device.to_host(h.vertices)[4]), return_info=True)[1]
    assert info.iterations >= 2
    g64_src = weakly_connected_components(h)  # union-find on the host-placed edges
    assert len(g64_src) == h.n


@pytest.mark.filterwarnings("ignore:.*did not converge:RuntimeWarning")  # a few iterations
def test_propagations_equal_on_both_placements(pair, monkeypatch):
    """Host edges copied to the device for the call (``onyx_rapids.streaming``: the generated
    pulls stream partitions, LP's weighted edge function reads edge ids, streamed too; the
    fused kernels' whole copy is test_streaming's), and read zero-copy (STREAM off: the fused
    kernel's lane per in-edge, the generated pulls' aligned runs).  Equality, not
    convergence, is tested: every run reads every edge each iteration, so 3 iterations (2 for
    feature propagation) check every read path."""
    g, h = pair
    ids = device.to_host(g.vertices)
    rng = np.random.default_rng(0)
    feats = pd.DataFrame(rng.random((g.n, 3)).astype(np.float32), index=ids)
    labels = pd.DataFrame({"vertex": ids[:4], "label": [0, 1, 0, 1]})
    pandas = lambda f: getattr(f, "to_pandas", lambda: f)()  # noqa: E731  (cuDF frames)
    # PageRank's streamed runs (its fused kernel reading a whole copy of the in-edges,
    # unweighted and weighted) are test_streaming's test_fused_kernels_read_a_whole_copy_when_
    # it_fits, at these defaults (RESIDENT_LIMIT None): zero-copy only here (CI time)
    for run, streams in ((lambda x: pagerank(x, max_iter=3), (False,)),
                         (lambda x: pagerank(x, weight="w", max_iter=3), (False,)),
                         (lambda x: personalized_pagerank(x, sources=list(ids[:2]), max_iter=3),
                          (True, False)),
                         (lambda x: feature_propagation(x, feats, iterations=2), (True, False)),
                         (lambda x: label_propagation(x, labels, k=2, max_iter=3),
                          (True, False))):
        want = pandas(run(g))
        for stream in streams:
            monkeypatch.setattr(streaming, "STREAM", stream)
            pd.testing.assert_frame_equal(want, pandas(run(h)), rtol=1e-5, atol=1e-7)


@pytest.mark.filterwarnings("ignore:.*did not converge:RuntimeWarning")  # 3 iterations
def test_propagations_read_in_edge_runs(pair):
    """EMOGI's merged reads (device edges) and aligned reads (host edges) in the generated pull
    kernels give the per-group reads' results: three sources leave a lane of each group idle
    (it still loads and shuffles), and the weighted edge function reads edge ids."""
    g, h = pair
    sources = list(device.to_host(g.vertices)[:3])
    pandas = lambda f: getattr(f, "to_pandas", lambda: f)()  # noqa: E731  (cuDF frames)
    want = pandas(personalized_pagerank(g, sources, weight="w", max_iter=3, edge_access="degree"))
    for x, access in ((g, "merged"), (h, "aligned")):
        got = pandas(personalized_pagerank(x, sources, weight="w", max_iter=3,
                                           edge_access=access))
        pd.testing.assert_frame_equal(want, got, rtol=1e-5, atol=1e-7,
                                      obj=f"{access} {x.placement}")


def test_edge_runs_refuse_what_cannot_read_them(pair):
    g = pair[0]
    feats = pd.DataFrame(np.ones((g.n, 2), np.float32), index=device.to_host(g.vertices))
    with pytest.raises(ValueError, match="edge_access='merged' .* feature_aware=True"):
        feature_propagation(g, feats, edge_access="merged", feature_aware=False)
    with pytest.raises(ValueError, match="fused=True with edge_access='aligned'"):
        pagerank(g, fused=True, edge_access="aligned")
    with pytest.raises(ValueError, match="edge_access must be one of"):
        label_propagation(g, pd.DataFrame({"vertex": [-7], "label": [0]}), k=1,
                          edge_access="scattered")


def test_edge_functions_that_ignore_their_edge_id_are_seen_to():
    def reads(f, u, v, e, x, w):
        return x[u, f] * w[e]

    def ignores(f, u, v, e, x):
        return x[u, f]

    def captures(f, u, v, e, x):
        def inner():
            return e
        return x[u, f] + inner()

    assert reads_argument(reads, 3) and not reads_argument(ignores, 3)
    assert reads_argument(captures, 3)


def test_int64_offsets_on_the_host(monkeypatch):
    monkeypatch.setattr(layout, "INDEX32_LIMIT", 100)
    df = _edges(weighted=False)
    h = Graph.from_edgelist(df, placement="host", directed=True)
    # n = 30 <= 100 < m: int32 vertex indices beside int64 offsets (the reads align to the
    # indices' 4-byte elements)
    assert (h.index_dtype, h.offset_dtype) == (np.int32, np.int64) and h.m > 100
    src, dst = csr_edges(h)
    source = int(device.to_host(h.vertices)[4])
    for access in ("aligned", "merged"):
        got = bfs(h, source=source, edge_access=access)["distance"].to_numpy()
        np.testing.assert_array_equal(got, oracle.bfs(h.n, src, dst, 4))


@pytest.mark.filterwarnings("ignore:.*did not converge:RuntimeWarning")  # few iterations: enough
def test_algorithms_agree_on_int32_indices_beside_int64_offsets(monkeypatch):
    """n <= limit < m (the layout of more than 2**31 edges on fewer vertices): every kernel
    family gives the all-int32 graph's results, on the device and on the host."""
    rng = np.random.default_rng(9)
    src, dst = rng.integers(0, 12, 44), rng.integers(0, 12, 44)
    src[:10], dst[10:20] = 4, 7  # hubs of out- and in-edges
    df = pd.DataFrame({"src": src * 3 - 7, "dst": dst * 3 - 7,
                       "w": (rng.random(44) + 0.1).astype(np.float32)})
    # the pull kernels cut the in-edges of vertices of in-degree 6+ into chunks (whose starts
    # are edge positions: offset_dtype)
    monkeypatch.setattr(pagerank_kernel, "HEAVY", 6)
    monkeypatch.setattr(pagerank_kernel, "CHUNK", 3)
    monkeypatch.setattr(operators, "HEAVY_ROUNDS", 1)
    monkeypatch.setattr(operators, "CHUNK_ROUNDS", 2)
    normal = Graph.from_edgelist(df, weight="w", placement="device", directed=True)
    monkeypatch.setattr(layout, "INDEX32_LIMIT", 20)
    g = Graph.from_edgelist(df, weight="w", placement="device", directed=True)
    h = g.to("host")
    und = h.simple_undirected()
    for x in (g, h, und):
        assert x.n <= 20 < x.m and (x.index_dtype, x.offset_dtype) == (np.int32, np.int64)
    assert device.to_host(h.in_edge_ids).dtype == np.int64
    src, dst = csr_edges(normal)
    w = device.to_host(normal.edge_weights[:, 0]).astype(np.float64)
    ids = device.to_host(normal.vertices)
    feats = pd.DataFrame(rng.random((normal.n, 4)).astype(np.float32), index=ids)
    labels = pd.DataFrame({"vertex": ids[:4], "label": [0, 1, 0, 1]})
    runs = {"sssp": lambda x: sssp(x, source=int(ids[4])),
            "wcc hook": lambda x: weakly_connected_components(x),
            "wcc propagate": lambda x: weakly_connected_components(x, method="propagate"),
            "pagerank": lambda x: pagerank(x, fused=True, max_iter=6),  # weighted (CSC gather)
            "ppr": lambda x: personalized_pagerank(x, sources=list(ids[:2]), max_iter=6),
            "fp": lambda x: feature_propagation(x, feats, iterations=3),  # k = 4 features
            "lp": lambda x: label_propagation(x, labels, k=2, max_iter=4)}
    want = {name: run(normal) for name, run in runs.items()}
    expected = oracle.bfs(normal.n, src, dst, 4)
    for x in (g, h):
        got = bfs(x, source=int(ids[4]))
        np.testing.assert_array_equal(got["distance"].to_numpy(), expected)
        oracle.check_predecessors(x.n, src, dst, expected.astype(np.int64),
                                  predecessor_ids(x, got["predecessor"]), [4])
        for name, run in runs.items():
            a, b = (getattr(f, "to_pandas", lambda f=f: f)() for f in (want[name], run(x)))
            if name == "sssp":  # predecessors: any valid one
                np.testing.assert_allclose(b["distance"].to_numpy(),
                                           oracle.sssp(x.n, src, dst, w, 4), rtol=1e-5)
                oracle.check_predecessors(x.n, src, dst, b["distance"].to_numpy(),
                                          predecessor_ids(x, b["predecessor"]), [4], weights=w)
                a, b = a.drop(columns="predecessor"), b.drop(columns="predecessor")
            pd.testing.assert_frame_equal(a, b, rtol=1e-5, atol=1e-7, obj=f"{name} {x!r}")
    assert pagerank_kernel.pull_work(g)["heavy"] > 0  # the chunked paths ran
    assert device.to_host(pagerank_kernel.pull_work(g)["chunk_start"]).dtype == np.int64
    assert device.to_host(operators._heavy_chunks(und, 2, 2)[1]).dtype == np.int64


def test_bad_placement_names_the_argument(pair):
    with pytest.raises(ValueError, match="placement must be one of 'device', 'host', 'auto'"):
        Graph.from_edgelist(_edges(), placement="gpu")
    with pytest.raises(ValueError, match="placement must be one of"):
        pair[0].to("disk")
    with pytest.raises(ValueError, match="edge_access must be one of"):
        bfs(pair[0], source=-7, edge_access="scattered")


@pytest.mark.simulator  # on a GPU the allocator enforces it: tests marked gpu
def test_budget_refuses_a_build_that_does_not_fit_and_names_it():
    df = _edges()
    memory.set_device_budget(500)
    with pytest.raises(MemoryError, match=r"building a graph of 220 edge rows.*budget of 500 B"):
        Graph.from_edgelist(df, weight="w", placement="device", directed=True)
    # auto: not even the finished arrays fit, so it builds in chunks, which do not fit either
    with pytest.raises(MemoryError, match=r"building a graph from the edge list in chunks of "
                                          r"220 rows.*budget of 500 B"):
        Graph.from_edgelist(df, weight="w", directed=True)


@pytest.mark.simulator  # on a GPU the allocator enforces it: tests marked gpu
def test_auto_places_on_the_host_when_the_budget_is_tight():
    df = _edges(weighted=False)
    need = len(df) * 12
    memory.set_device_budget(int(need * 1.2))
    g = Graph.from_edgelist(df, directed=True)
    assert g.placement == "host"
    memory.set_device_budget(None)
    assert Graph.from_edgelist(df, directed=True).placement == "device"


@pytest.mark.simulator  # on a GPU the allocator enforces it: tests marked gpu
def test_budget_below_the_vertex_properties_is_a_clear_error(pair):
    _, h = pair
    memory.set_device_budget(16)
    with pytest.raises(MemoryError, match=r"a vertex property of 30 x 1 int32 .*budget of 16 B"):
        bfs(h, source=-7)


@pytest.mark.parametrize("text, expected", [("16GB", 16 * 10**9), ("512 MiB", 512 * 2**20),
                                            ("1.5e3", 1500), (4096, 4096)])
def test_budget_parsing(text, expected):
    assert memory.parse_bytes(text) == expected


@pytest.mark.parametrize("bad", ["lots", "-1GB", 0, True, 1.5])
def test_budget_parsing_refuses_nonsense(bad):
    with pytest.raises(ValueError, match="budget must be"):
        memory.set_device_budget(bad)


@pytest.mark.gpu
def test_gpu_host_arrays_are_mapped_host_memory(pair):
    g, h = pair
    assert memory.is_host_placed(h.out_indices) and not memory.is_host_placed(g.out_indices)
    assert memory.is_host_placed(h.edge_weights)


@pytest.mark.gpu
@pytest.mark.parametrize("allocator", ["cupy pool", "rmm"])
def test_gpu_budget_is_enforced_by_the_allocator_and_named(allocator):
    cupy = device.xp
    before = cupy.cuda.get_allocator()
    if allocator == "rmm":
        from rmm.allocators.cupy import rmm_cupy_allocator
        cupy.cuda.set_allocator(rmm_cupy_allocator)
    else:
        cupy.cuda.set_allocator(cupy.get_default_memory_pool().malloc)
    try:
        memory.set_device_budget(4 * 2**20)
        with pytest.raises(MemoryError, match="a test buffer .*ran out of device memory under "
                                              "the device budget of 4.19 MB"):
            with memory.allocating("a test buffer", 1):
                cupy.empty(64 * 2**20, np.uint8)
        small = cupy.empty(2**20, np.uint8)  # within the budget
        assert small.nbytes == 2**20
        memory.set_device_budget(None)
        assert cupy.empty(64 * 2**20, np.uint8).nbytes == 64 * 2**20
    finally:
        memory.set_device_budget(None)
        cupy.cuda.set_allocator(before)


def test_host_memory_failures_are_not_reported_as_device_ones():
    assert memory._allocator_failure(MemoryError("out of memory"))
    assert not memory._allocator_failure(memory.HostMemoryError("could not page-lock"))
    assert not memory._allocator_failure(memory.DeviceMemoryError("over the budget"))
