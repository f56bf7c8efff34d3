"""Building a graph from Parquet in chunks straight into host-placed arrays
(``Graph.from_parquet(..., placement="host")``): the same graph as the device build, whatever
the chunking, and errors that name the file's row."""

import logging

import numpy as np
import pandas as pd
import pytest

from onyx_rapids import Graph, bfs, device, memory
from onyx_rapids.construction import layout, sources

ARRAYS = ("vertices", "out_offsets", "out_indices", "in_offsets", "in_indices", "in_edge_ids",
          "out_degree", "in_degree", "edge_weights", "_reverse_edge")


@pytest.fixture(autouse=True)
def _no_budget():
    yield
    memory.set_device_budget(None)


def _write(tmp_path, df, name="e.parquet", row_group_size=7):
    path = tmp_path / name
    df.to_parquet(path, row_group_size=row_group_size)
    return path


def _edges(n=25, m=160, seed=5, weighted=True, sparse_ids=False):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[:30] = 3  # a hub whose row is longer than the small chunks below
    src[30:35] = dst[30:35]  # self-loops
    src[35:45], dst[35:45] = dst[45:55], src[45:55]  # the same pairs reversed (undirected dups)
    if sparse_ids:
        src, dst = src * 1_000_003 - 40, dst * 1_000_003 - 40
    cols = {"src": src, "dst": dst}
    if weighted:
        cols["w"] = rng.random(m).astype(np.float32) + 0.5
        cols["x"] = rng.integers(1, 9, m).astype(np.int32)
    return pd.DataFrame(cols)


def _assert_same_arrays(g, h):
    """Every array of ARRAYS present in both or neither, with equal dtypes and values."""
    for name in ARRAYS:
        a, b = getattr(g, name), getattr(h, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(device.to_host(b), device.to_host(a), err_msg=name)


def _assert_same(g, h):
    assert h.placement == "host" and g.placement == "device"
    assert (h.n, h.m, h.directed, h.multigraph) == (g.n, g.m, g.directed, g.multigraph)
    assert h.index_dtype == g.index_dtype and h.offset_dtype == g.offset_dtype
    assert h.weight_names == g.weight_names
    _assert_same_arrays(g, h)
    for name in Graph.EDGE_ARRAYS:
        a = getattr(h, name)
        assert a is None or memory.is_host_placed(a), name


@pytest.mark.parametrize("directed,multigraph", [(True, False), (False, False), (True, True)])
@pytest.mark.parametrize("chunk_rows", [5, 1000])
def test_chunked_host_build_equals_the_device_build(tmp_path, directed, multigraph, chunk_rows):
    path = _write(tmp_path, _edges(sparse_ids=not directed))
    kw = dict(weight=["w", "x"], directed=directed, multigraph=multigraph, vertices=[10**9])
    g = Graph.from_parquet(path, placement="device", **kw)
    h = Graph.from_parquet(path, placement="host", chunk_rows=chunk_rows, **kw)
    _assert_same(g, h)
    if not directed:
        assert h.in_indices is h.out_indices and h._reverse_edge is h.in_edge_ids
    source = 3 if directed else 3 * 1_000_003 - 40
    np.testing.assert_array_equal(bfs(h, source)["distance"].to_numpy(),
                                  bfs(g, source)["distance"].to_numpy())


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
@pytest.mark.parametrize("directed,multigraph", [(True, False), (False, False), (True, True)])
def test_an_edge_frame_is_built_on_the_host_in_chunks(kind, directed, multigraph):
    df = _edges(sparse_ids=not directed)
    if kind == "arrow":
        import pyarrow as pa
        df = pa.Table.from_pandas(df, preserve_index=False)
    kw = dict(weight=["w", "x"], directed=directed, multigraph=multigraph, vertices=[10**9])
    g = Graph.from_edgelist(df, placement="device", **kw)
    _assert_same(g, Graph.from_edgelist(df, placement="host", chunk_rows=7, **kw))


@pytest.mark.simulator  # a budget of bytes: on a GPU the allocator counts every live array
def test_auto_builds_an_edge_frame_on_the_host_when_the_budget_is_small():
    df = _edges(weighted=False)
    memory.set_device_budget(1500)
    h = Graph.from_edgelist(df, chunk_rows=2, directed=True)
    memory.set_device_budget(None)
    assert h.placement == "host"
    _assert_same(Graph.from_edgelist(df, placement="device", directed=True), h)


def test_a_bad_row_of_an_edge_frame_is_named_by_its_row():
    df = _edges()
    df["src"] = df["src"].astype("Int64")
    df.loc[23, "src"] = None
    with pytest.raises(ValueError, match="1 null vertex id .*\\(first at row 23\\)"):
        Graph.from_edgelist(df, weight="w", placement="host", chunk_rows=10)
    with pytest.raises(ValueError, match="chunk_rows must be a positive int"):
        Graph.from_edgelist(_edges(), placement="host", chunk_rows=0)


def test_a_directory_of_files_is_read_in_file_order(tmp_path):
    df = _edges(weighted=True)
    folder = tmp_path / "edges"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(df)), 3)):
        df.iloc[rows].to_parquet(folder / f"part{i}.parquet", row_group_size=4)
    g = Graph.from_parquet(folder, weight="w", placement="device", directed=True)
    _assert_same(g, Graph.from_parquet(folder, weight="w", placement="host", chunk_rows=9,
                                       directed=True))


@pytest.mark.parametrize("limit, dtypes", [(100, (np.int32, np.int64)),  # n <= limit < m
                                           (20, (np.int64, np.int64))])  # limit < n = 25
def test_int64_offsets_when_the_edges_exceed_the_limit(tmp_path, monkeypatch, limit, dtypes):
    monkeypatch.setattr(layout, "INDEX32_LIMIT", limit)
    path = _write(tmp_path, _edges(weighted=False))
    g = Graph.from_parquet(path, placement="device", directed=True)
    h = Graph.from_parquet(path, placement="host", chunk_rows=16, directed=True)
    assert g.m > 100 and (h.index_dtype, h.offset_dtype) == dtypes
    _assert_same(g, h)


def _mixed_edges(directed=True):
    """10 vertices, 40 rows: more edges than a limit of 20, fewer vertices."""
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 10, 40), rng.integers(0, 10, 40)
    src[:12] = 3  # a hub whose row is longer than the chunks
    src[12:15] = dst[12:15]  # self-loops
    src[15:20], dst[15:20] = dst[20:25], src[20:25]  # the same pairs reversed
    if not directed:
        src, dst = src * 1_000_003 - 40, dst * 1_000_003 - 40
    return pd.DataFrame({"src": src, "dst": dst, "w": rng.random(40).astype(np.float32) + 0.5,
                         "x": rng.integers(1, 9, 40).astype(np.int32)})


@pytest.mark.parametrize("directed,multigraph", [(True, False), (False, False), (True, True)])
def test_mixed_dtypes_on_the_host_equal_the_device_build(tmp_path, monkeypatch, directed,
                                                         multigraph):
    """n <= limit < m: int32 vertex indices beside int64 offsets and edge positions, in the
    host build (frame and Parquet, in chunks) exactly as in the device build."""
    df = _mixed_edges(directed)
    kw = dict(weight=["w", "x"], directed=directed, multigraph=multigraph)
    normal = Graph.from_edgelist(df, placement="device", **kw)
    monkeypatch.setattr(layout, "INDEX32_LIMIT", 20)
    g = Graph.from_edgelist(df, placement="device", **kw)
    assert g.n <= 20 < g.m and (g.index_dtype, g.offset_dtype) == (np.int32, np.int64)
    for name in ARRAYS:
        a = getattr(normal, name)
        if a is not None:
            np.testing.assert_array_equal(device.to_host(getattr(g, name)), device.to_host(a),
                                          err_msg=name)
    _assert_same(g, Graph.from_edgelist(df, placement="host", chunk_rows=7, **kw))
    h = Graph.from_parquet(_write(tmp_path, df), placement="host", chunk_rows=9, **kw)
    _assert_same(g, h)
    assert device.to_host(h.edge_sources).dtype == np.int32
    a, b = g.simple_undirected(), h.simple_undirected()  # built in blocks on the host
    assert (b.index_dtype, b.offset_dtype) == (a.index_dtype, a.offset_dtype)
    _assert_same_arrays(a, b)


def test_host_offsets_follow_the_edges_left_after_merging(tmp_path, monkeypatch):
    """More rows read than the limit, but no more edges once parallel ones merge: int32
    offsets, as the device build has (the host build once sized them by the rows read)."""
    df = pd.concat([_mixed_edges()] * 3, ignore_index=True)  # every row three times
    g = Graph.from_edgelist(df, placement="device", directed=True)
    monkeypatch.setattr(layout, "INDEX32_LIMIT", g.m)
    assert len(df) > g.m
    h = Graph.from_parquet(_write(tmp_path, df), placement="host", chunk_rows=16, directed=True)
    assert (h.index_dtype, h.offset_dtype) == (np.int32, np.int32)
    _assert_same(Graph.from_edgelist(df, placement="device", directed=True), h)


@pytest.mark.simulator  # a budget of bytes: on a GPU the allocator counts every live array
def test_auto_builds_on_the_host_when_the_budget_is_small(tmp_path, caplog):
    path = _write(tmp_path, _edges(weighted=False))
    memory.set_device_budget(1500)  # 160 rows x 12 bytes > half of it; chunks of 2 fit
    with caplog.at_level(logging.INFO, logger="onyx_rapids.host_build"):
        h = Graph.from_parquet(path, chunk_rows=2, directed=True)
    assert h.placement == "host"
    assert any("host build: CSC" in r.getMessage() for r in caplog.records)
    memory.set_device_budget(None)
    _assert_same(Graph.from_parquet(path, placement="device", directed=True), h)


def test_undirected_multigraph_is_built_on_the_device_then_placed(tmp_path):
    path = _write(tmp_path, _edges(weighted=False))
    g = Graph.from_parquet(path, directed=False, multigraph=True, placement="device")
    h = Graph.from_parquet(path, directed=False, multigraph=True, placement="host")
    _assert_same(g, h)


@pytest.mark.parametrize("column,value,message", [
    ("src", None, "source='src': 1 null vertex id in Parquet file .* \\(first at row 23\\)"),
    ("w", np.inf, "weight='w': 1 row\\(s\\) hold NaN or infinite values \\(first at row 23\\)"),
])
def test_bad_rows_are_named_by_their_row_in_the_file(tmp_path, column, value, message):
    df = _edges()
    df[column] = df[column].astype("float64" if column == "w" else "Int64")
    df.loc[23, column] = value
    path = _write(tmp_path, df)
    with pytest.raises(ValueError, match=message):
        Graph.from_parquet(path, weight="w", placement="host", chunk_rows=10)


def test_bad_arguments_and_files(tmp_path):
    path = _write(tmp_path, _edges(weighted=False))
    with pytest.raises(ValueError, match="chunk_rows must be a positive int"):
        Graph.from_parquet(path, placement="host", chunk_rows=0)
    with pytest.raises(ValueError, match="destination='v': no such column in Parquet file"):
        Graph.from_parquet(path, destination="v", placement="host")
    empty = _write(tmp_path, _edges(weighted=False).iloc[:0], name="empty.parquet")
    with pytest.raises(ValueError, match="the edge list is empty"):
        Graph.from_parquet(empty, placement="host")
    with pytest.raises(FileNotFoundError, match="no such Parquet"):
        Graph.from_parquet(tmp_path / "nope.parquet", placement="host")


def test_a_budget_below_one_chunk_is_refused_before_reading(tmp_path):
    path = _write(tmp_path, _edges(weighted=False))
    memory.set_device_budget(1000)
    with pytest.raises(MemoryError, match="in chunks of 100 rows needs .* device budget"):
        Graph.from_parquet(path, placement="host", chunk_rows=100)


def test_simple_undirected_view_of_a_host_graph_is_built_on_the_host(tmp_path):
    from onyx_rapids import weakly_connected_components

    df = _edges(weighted=False)
    df = pd.concat([df, pd.DataFrame({"src": [900, 901], "dst": [901, 902]})])  # 2nd component
    g = Graph.from_edgelist(df, placement="device", directed=True)
    h = Graph.from_edgelist(df, placement="host", directed=True)
    a, b = g.simple_undirected(), h.simple_undirected()
    assert b.placement == "host" and b is h.simple_undirected()
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(device.to_host(y), device.to_host(x), err_msg=name)
    assert memory.is_host_placed(h.edge_sources)
    np.testing.assert_array_equal(device.to_host(h.edge_sources), device.to_host(g.edge_sources))
    for method in ("hook", "propagate"):
        np.testing.assert_array_equal(
            weakly_connected_components(h, method=method)["labels"].to_numpy(),
            weakly_connected_components(g, method=method)["labels"].to_numpy())


# ---------------------------------------------------------------------- from CSR arrays


def _csr(directed=True, weights=None, n=14, seed=3):
    """CSR arrays of n vertices: unsorted rows, repeated (row, column) entries with their own
    weights, self-loops, empty rows, a row longer than the chunks, an isolated vertex (n-1).
    ``directed=False``: a symmetric input (every u->v with a v->u of the same weight, parallel
    copies matched), rows in a shuffled order.  ``weights``: None, "1d", "2d" or "dict"."""
    rng = np.random.default_rng(seed)
    if directed:
        deg = rng.integers(0, 5, n)
        deg[[2, 7, n - 1]] = 0
        deg[5] = 9
        offsets = np.concatenate([[0], np.cumsum(deg)])
        m = int(offsets[-1])
        indices = rng.integers(0, n - 1, m)
        indices[offsets[5]:offsets[5] + 3] = indices[offsets[5]]  # 5->c three times
        indices[offsets[3]] = 3  # a self-loop
        values = rng.random((m, 2)) + 0.5
    else:
        u, v = rng.integers(0, n - 1, 30), rng.integers(0, n - 1, 30)
        u[np.isin(u, [2, 7])], v[np.isin(v, [2, 7])] = 0, 4  # rows 2 and 7 empty
        u[:4], v[:4] = 5, 1  # 5-1 four times (parallel copies both ways)
        u[4:6], v[4:6] = 3, 3  # a self-loop twice
        loop = u == v
        rows = np.concatenate([u, v[~loop]])
        cols = np.concatenate([v, u[~loop]])
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        values = np.stack([lo * 0.25 + hi, hi * 0.5 + 1.0 / (1 + lo)], axis=1)  # per pair
        order = np.argsort(rows[perm := rng.permutation(rows.size)], kind="stable")
        rows, indices, values = rows[perm][order], cols[perm][order], values[perm][order]
        offsets = np.searchsorted(rows, np.arange(n + 1))
    if weights == "1d":
        w = values[:, 0]
    elif weights == "2d":
        w = values.astype(np.float32)
    elif weights == "dict":
        w = {"a": values[:, 0], "b": (values[:, 1] * 4).astype(np.int64)}
    else:
        w = None
    return offsets, indices, w


def _same_as_device(args, *, chunk_rows, **kw):
    g = Graph.from_csr(*args, placement="device", **kw)
    h = Graph.from_csr(*args, placement="host", chunk_rows=chunk_rows, **kw)
    _assert_same(g, h)
    moved = g.to("host")  # the reference: the device build, moved
    for name in ARRAYS:
        a, b = getattr(moved, name), getattr(h, name)
        if a is not None:
            np.testing.assert_array_equal(device.to_host(b), device.to_host(a), err_msg=name)
    return g, h


@pytest.mark.parametrize("weights", [None, "1d", "2d", "dict"])
@pytest.mark.parametrize("directed,multigraph", [(True, False), (True, True), (False, False),
                                                 (False, True)])
@pytest.mark.parametrize("chunk_rows", [3, 1000])
def test_csr_built_on_the_host_equals_the_device_build(weights, directed, multigraph,
                                                        chunk_rows):
    args = _csr(directed, weights)
    g, h = _same_as_device(args, chunk_rows=chunk_rows, directed=directed,
                           multigraph=multigraph)
    out_degree = device.to_host(h.out_degree)
    assert g.n == 14 and out_degree[2] == out_degree[7] == 0  # empty rows
    assert out_degree[13] == device.to_host(h.in_degree)[13] == 0  # an isolated vertex
    assert (g.m == len(args[1])) == multigraph  # repeated entries merged unless multigraph
    if not directed:
        rev = device.to_host(h._reverse_edge)
        np.testing.assert_array_equal(rev[rev], np.arange(h.m))
        assert memory.is_host_placed(h._reverse_edge)


def test_the_host_csr_path_reads_no_whole_array_on_the_device(monkeypatch):
    from onyx_rapids import io

    def whole(*_a, **_k):
        raise AssertionError("read_csr moves the whole CSR to the device")

    args = _csr(True, "2d")
    g = Graph.from_csr(*args, placement="device")
    monkeypatch.setattr(io, "read_csr", whole)
    h = Graph.from_csr(*args, placement="host", chunk_rows=4)
    _assert_same(g, h)


def test_csr_inputs_of_other_kinds_on_the_host():
    import scipy.sparse as sp

    a = sp.random(15, 15, density=0.25, format="csr", random_state=4, dtype=np.float64)
    a.indices = a.indices.astype(np.int32)
    _same_as_device((a,), chunk_rows=5)
    _same_as_device((a,), chunk_rows=5, weights=False)
    _same_as_device((a.tocoo(),), chunk_rows=5, multigraph=True)
    sym = (a + a.T).tocsr()
    _same_as_device((sym,), chunk_rows=4, directed=False)
    off, ind, w = _csr(True, "1d")
    _same_as_device((off.tolist(), ind.astype(np.uint32), pd.Series(w)), chunk_rows=6)
    _same_as_device((np.zeros(4, np.int64), np.zeros(0, np.int64)), chunk_rows=3)  # no edges
    _same_as_device((np.zeros(4, np.int64), np.zeros(0, np.int64), np.zeros((0, 2))),
                    chunk_rows=3, directed=False)


_BAD_CSR = [
    (np.array([1, 2]), np.array([0, 1])),
    (np.array([0, 2, 1, 3]), np.array([0, 1, 2])),
    (np.array([0, 1, 2]), np.array([0, 1, 1])),
    (np.array([0, 2, 4, 6]), np.array([0, 3, 1, -1, 7, 0])),  # 3 out of range, over chunks
    (np.array([0.0, 1.0]), np.array([0])),
    (np.array([0, 1]), np.array([0.0])),
    (np.array([[0, 1]]), np.array([0])),
    (np.array([0, 1]), np.array([[0]])),
    (np.array([0]), np.array([], dtype=np.int64)),
    (np.array([0, 1]),),
    (np.array([0, 1], dtype=np.uint64), np.array([2**63 + 5], dtype=np.uint64)),
    (np.array([0, 1, 2]), np.array([1, 0]), np.ones(3)),
    (np.array([0, 1, 2]), np.array([1, 0]), np.ones((2, 0))),
    (np.array([0, 1, 2]), np.array([1, 0]), np.ones((2, 1, 1))),
    (np.array([0, 1, 2]), np.array([1, 0]), np.float64(2.0)),
    (np.array([0, 2, 4, 5]), np.array([1, 2, 0, 2, 0]), np.array([1, np.nan, 2, np.inf, 3])),
    (np.array([0, 2, 4, 5]), np.array([1, 2, 0, 2, 0]), np.array([1, 2, 3e39, 4, -1e40])),
    (np.array([0, 1, 2]), np.array([1, 0]), np.array(["a", "b"])),
    (np.array([0, 1, 2]), np.array([1, 0]), {"x": np.ones(3)}),
    (np.array([0, 1, 2]), np.array([1, 0]), {}),
    (np.array([0, 1, 2]), np.array([1, 0]), {"x": np.array([1.0, np.inf])}),
]
_K5 = np.array([j for i in range(5) for j in range(5) if j != i])
_BAD_SYMMETRIC = [
    (np.array([0, 1, 1]), np.array([1])),  # 0->1 without 1->0
    (np.array([0, 2, 4, 4, 4]), np.array([3, 1, 0, 2])),  # 0->3 and 1->2 without reverses
    (np.arange(16).clip(max=14), np.arange(1, 15)),  # a path: 14 edges without reverses
    (np.array([0, 1, 2]), np.array([1, 0]), np.array([2.0, 3.0])),  # weights differ
    (np.arange(0, 21, 4), _K5, np.arange(20.0)),  # every weight differs from its reverse's
]


def _error(args, placement, **kw):
    with pytest.raises((ValueError, TypeError)) as info:
        Graph.from_csr(*args, placement=placement, **kw)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", range(len(_BAD_CSR)))
def test_a_bad_csr_fails_on_the_host_as_on_the_device(case):
    args = _BAD_CSR[case]
    expected = _error(args, "device")
    assert _error(args, "host", chunk_rows=2) == expected
    assert _error(args, "auto") == expected


@pytest.mark.parametrize("case", range(len(_BAD_SYMMETRIC)))
@pytest.mark.parametrize("multigraph", [False, True])
def test_an_asymmetric_undirected_csr_fails_on_the_host_as_on_the_device(case, multigraph):
    args = _BAD_SYMMETRIC[case]
    expected = _error(args, "device", directed=False, multigraph=multigraph)
    assert expected[0] is ValueError and expected[1].startswith("directed=False needs")
    assert _error(args, "host", directed=False, multigraph=multigraph, chunk_rows=1) == expected


def test_parallel_copies_without_reverses_fail_only_in_an_undirected_multigraph():
    args = (np.array([0, 2, 3]), np.array([1, 1, 0]))  # 0->1 twice, 1->0 once
    _same_as_device(args, chunk_rows=1, directed=False)  # merged: symmetric
    expected = _error(args, "device", directed=False, multigraph=True)
    assert "1 edge (0->1) have no reverse" in expected[1]
    assert _error(args, "host", directed=False, multigraph=True, chunk_rows=1) == expected


def test_bad_chunk_rows_of_a_csr():
    args = _csr(True)
    for bad in (0, -3, 2.5, True, "8"):
        with pytest.raises(ValueError, match="chunk_rows must be a positive int"):
            Graph.from_csr(*args, placement="host", chunk_rows=bad)


@pytest.mark.simulator  # a budget of bytes: on a GPU the allocator counts every live array
def test_auto_builds_a_csr_on_the_host_when_the_budget_is_small(caplog):
    off, ind, w = _csr(True, "1d", n=60, seed=8)
    assert len(ind) * 16 > 1500  # the finished edge arrays do not fit
    g = Graph.from_csr(off, ind, w, placement="device")
    memory.set_device_budget(1500)
    with caplog.at_level(logging.INFO, logger="onyx_rapids.host_build"):
        h = Graph.from_csr(off, ind, w, chunk_rows=2)
    assert h.placement == "host"
    assert any("host build: CSR checked" in r.getMessage() for r in caplog.records)
    with pytest.raises(MemoryError, match="in chunks of 100 rows needs"):
        Graph.from_csr(off, ind, w, placement="host", chunk_rows=100)
    memory.set_device_budget(None)
    _assert_same(g, h)
    assert Graph.from_csr(off, ind, w).placement == "device"  # fits: built on the device


# ---------------------------------------------------------------------- from cuGraph


def test_the_frame_build_of_from_cugraph_names_the_weights_alike_on_both_paths():
    """from_cugraph's build (sources.frame over G's edge frame, its vertex list as a
    device array, the weight named by cuGraph's rule), here over a pandas frame: cuGraph
    itself is tested on a GPU below."""
    df = _edges(weighted=True)[["src", "dst", "w"]]
    extra = device.asarray(np.array([10**9, 3], dtype=np.int64))
    kw = dict(directed=True, multigraph=False, vertices=extra, weight_names=["weight"])
    g = Graph.from_buffers(*sources.frame(df, "src", "dst", "w", placement="device",
                                          chunk_rows=None, **kw))
    h = Graph.from_buffers(*sources.frame(df, "src", "dst", "w", placement="host",
                                          chunk_rows=9, **kw))
    assert h.weight_names == ["weight"]
    _assert_same(g, h)


@pytest.mark.gpu
@pytest.mark.parametrize("directed,weighted", [(True, True), (False, False), (False, True)])
def test_from_cugraph_on_the_host_equals_the_device_build_moved(directed, weighted):
    import cudf  # gpu tests need RAPIDS: fail, never skip, when it is missing
    import cugraph

    df = _edges(weighted=True, sparse_ids=True)
    df = df[df["src"] != df["dst"]]
    if directed:
        df = df.drop_duplicates(["src", "dst"])
    else:  # each unordered pair once (cugraph.Graph keeps no edge given both ways)
        lo = np.minimum(df["src"], df["dst"])
        hi = np.maximum(df["src"], df["dst"])
        df = df.assign(src=lo, dst=hi).drop_duplicates(["src", "dst"])
    frame = cudf.from_pandas(df[["src", "dst", "w"]].reset_index(drop=True))
    G = cugraph.Graph(directed=directed)
    G.from_cudf_edgelist(frame, source="src", destination="dst",
                         **({"weight": "w"} if weighted else {}))
    g = Graph.from_cugraph(G, placement="device")
    h = Graph.from_cugraph(G, placement="host", chunk_rows=7)
    assert g.weight_names == ([str(getattr(G, "weight_column", None) or "weight")]
                              if weighted else [])
    _assert_same(g, h)
    moved = g.to("host")
    for name in ARRAYS:
        a, b = getattr(moved, name), getattr(h, name)
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_array_equal(device.to_host(b), device.to_host(a), err_msg=name)
    if not directed:  # an undirected multigraph: built on the device, then moved
        _assert_same(Graph.from_cugraph(G, multigraph=True, placement="device"),
                     Graph.from_cugraph(G, multigraph=True, placement="host"))
