"""Streamed pulls over a host-placed graph's in-edges (onyx_rapids.streaming): partitions
copied through two buffers, the resident prefix, the alternating order that reuses what the
buffers hold, the kernels' vertex ranges, and the fall-back to zero-copy reads."""

import numpy as np
import pandas as pd
import pytest

from onyx_rapids import (Graph, device, feature_propagation, memory, pagerank,
                         personalized_pagerank, streaming)

pytestmark = pytest.mark.filterwarnings("ignore:.*did not converge:RuntimeWarning")


@pytest.fixture(autouse=True)
def _settings(monkeypatch):
    """Partitions of about 16 edges (int32 ids), one resident partition's worth of bytes."""
    monkeypatch.setattr(streaming, "PARTITION_BYTES", 64)
    monkeypatch.setattr(streaming, "RESIDENT_LIMIT", 64)
    yield
    memory.set_device_budget(None)


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(5)
    n, m = 28, 200
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    dst[:36] = 9  # a vertex of many in-edges: a partition of its own, and heavy-vertex chunks
    df = pd.DataFrame({"src": src * 2 + 1, "dst": dst * 2 + 1,
                       "w": (rng.random(m) + 0.1).astype(np.float32)})
    return (Graph.from_edgelist(df, weight="w", placement="device", directed=True),
            Graph.from_edgelist(df, weight="w", placement="host", directed=True))


def _pandas(frame):
    return getattr(frame, "to_pandas", lambda: frame)()


def _counters():
    return dict(streaming.COUNTERS)


def _delta(before):
    return {k: streaming.COUNTERS[k] - v for k, v in before.items()}


def test_streamed_pulls_give_the_device_results(pair):
    """Unweighted PageRank (source ids streamed) and weighted PPR (edge ids streamed too: its
    edge function reads them) over partitions, against the device placement; the edges the
    call held on the device are given back when it returns."""
    g, h = pair
    sources = list(device.to_host(g.vertices)[:2])
    for run in (lambda x: pagerank(x, weight=False, max_iter=4),
                lambda x: personalized_pagerank(x, sources, weight="w", max_iter=3)):
        want = _pandas(run(g))
        before = _counters()
        got = _pandas(run(h))
        moved = _delta(before)
        pd.testing.assert_frame_equal(want, got, rtol=1e-5, atol=1e-7)
        assert moved["launches"] >= 3 and moved["partitions"] >= 4 * moved["launches"]
        assert moved["bytes_copied"] > 0
        assert h.cached(("streaming", "streams"), dict) == {}


def test_fused_kernels_read_a_whole_copy_when_it_fits(pair, monkeypatch):
    """Where the CSC (and the weights) fit on the device for the call, PageRank and one-column
    feature propagation keep their fused kernel and read a copy of the in-edges made once per
    call; the device memory goes back when the call returns."""
    monkeypatch.setattr(streaming, "RESIDENT_LIMIT", None)
    g, h = pair
    feats = pd.DataFrame(np.random.default_rng(2).random((g.n, 1)).astype(np.float32),
                         index=device.to_host(g.vertices))
    for run, nbytes in ((lambda x: pagerank(x, weight=False, max_iter=4), h.m * 4),
                        (lambda x: pagerank(x, weight="w", max_iter=4), h.m * 8),
                        (lambda x: feature_propagation(x, feats, iterations=2),
                         h.simple_undirected().m * 4)):
        want = _pandas(run(g))
        before = _counters()
        got = _pandas(run(h))
        assert _delta(before) == {"launches": 0, "partitions": 0, "bytes_copied": nbytes}
        pd.testing.assert_frame_equal(want, got, rtol=1e-5, atol=1e-7)
        assert h.cached(("streaming", "streams"), dict) == {}


def test_vertex_ranges_in_every_thread_mapping(pair):
    """A streamed launch visits one partition's vertices: one thread a vertex (not feature
    aware), warps, and groups of two warps (k = 64, a feature a thread)."""
    g, h = pair
    rng = np.random.default_rng(1)
    for k, options in ((3, dict(feature_aware=False)), (64, dict(width=1))):
        feats = pd.DataFrame(rng.random((g.n, k)).astype(np.float32),
                             index=device.to_host(g.vertices))
        want = _pandas(feature_propagation(g, feats, iterations=1, **options))
        before = _counters()
        got = _pandas(feature_propagation(h, feats, iterations=1, **options))
        assert _delta(before)["partitions"] >= 4
        pd.testing.assert_frame_equal(want, got, rtol=1e-5, atol=1e-6)


@pytest.mark.simulator  # the windows are host arrays there (on a GPU, views of device buffers)
def test_windows_cover_the_csc_and_reuse_what_the_buffers_hold(pair, monkeypatch):
    monkeypatch.setattr(streaming, "RESIDENT_LIMIT", 0)
    h = pair[1]
    stream = streaming.EdgeStream(h, with_ids=True)
    indices, ids = device.to_host(h.in_indices), device.to_host(h.in_edge_ids)
    offsets = device.to_host(h.in_offsets)
    assert stream.resident_hi == 0 and len(stream.parts) >= 5
    copied = []
    for _ in range(3):
        before = streaming.COUNTERS["bytes_copied"]
        covered = np.zeros(h.n, dtype=int)
        for first, end, (w_indices, w_ids) in stream.windows():
            covered[first:end] += 1
            e0, e1 = int(offsets[first]), int(offsets[end])
            np.testing.assert_array_equal(w_indices[e0:e1], indices[e0:e1])
            np.testing.assert_array_equal(w_ids[e0:e1], ids[e0:e1])
            outside = np.r_[w_indices[:e0], w_indices[e1:]]
            assert (outside == np.iinfo(w_indices.dtype).max).all()  # never read
        np.testing.assert_array_equal(covered, 1)
        copied.append(streaming.COUNTERS["bytes_copied"] - before)
    # later launches walk the other way and start with the two partitions left in the buffers
    first_two = sum((e1 - e0) * 8 for _, _, e0, e1 in stream.parts[-2:])
    assert copied[0] == h.m * 8 and copied[1] == h.m * 8 - first_two
    stream.close()


@pytest.mark.simulator
def test_resident_partitions_run_as_one_launch(pair, monkeypatch):
    monkeypatch.setattr(streaming, "RESIDENT_LIMIT", None)
    h = pair[1]
    stream = streaming.EdgeStream(h, with_ids=False)  # no budget: every edge fits
    assert stream.parts == [] and stream.resident_hi == h.n
    (first, end, (window,)), = list(stream.windows())
    assert (first, end) == (0, h.n)
    np.testing.assert_array_equal(window, device.to_host(h.in_indices))


@pytest.mark.simulator  # the budget's accounting of planned allocations
def test_zero_copy_when_the_buffers_do_not_fit_or_streaming_is_off(pair, monkeypatch):
    """Under a budget too small for two buffers of the largest in-degree (and with STREAM
    off) nothing is copied: PageRank takes its fused kernel, reading the edges zero-copy."""
    g, h = pair
    want = _pandas(pagerank(g, weight=False, max_iter=4))
    widest = int(device.to_host(h.in_degree).max())
    memory.set_device_budget(widest * 4 * 2 * 2 - 4)  # the buffers need half of it and more
    assert not streaming.preferred(h)
    for setting in (True, False):
        monkeypatch.setattr(streaming, "STREAM", setting)
        before = _counters()
        got = _pandas(pagerank(h, weight=False, max_iter=4))
        assert _delta(before) == {"launches": 0, "partitions": 0, "bytes_copied": 0}
        pd.testing.assert_frame_equal(want, got, rtol=1e-5, atol=1e-7)
        memory.set_device_budget(None)


def test_vertices_without_in_edges_in_a_partition_of_their_own():
    """The last vertices have out-edges only: their partition holds no edge, and its launch
    still runs their vertex step (their rank is the teleport's)."""
    src = np.r_[np.arange(20), np.arange(20, 40)]
    # 20..39 receive nothing, and the partition before them ends inside 19's in-edges
    dst = np.r_[(np.arange(20) + 1) % 20, np.full(20, 19)]
    df = pd.DataFrame({"src": src, "dst": dst})
    g = Graph.from_edgelist(df, placement="device", directed=True)
    h = Graph.from_edgelist(df, placement="host", directed=True)
    assert int(device.to_host(h.in_degree)[-10:].max()) == 0
    want = _pandas(pagerank(g, weight=False, max_iter=3))
    before = _counters()
    got = _pandas(pagerank(h, weight=False, max_iter=3))
    assert _delta(before)["launches"] == 3
    pd.testing.assert_frame_equal(want, got, rtol=1e-5, atol=1e-7)
