"""Building a graph from Parquet in chunks straight into host-placed arrays
(``Graph.from_parquet(..., placement="host")``): the same graph as the device build, whatever
the chunking, and errors that name the file's row."""

import logging

import numpy as np
import pandas as pd
import pytest

from onyx_rapids import Graph, bfs, device, graph as graph_module, memory

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


def _assert_same(g, h):
    assert h.placement == "host" and g.placement == "device"
    assert (h.n, h.m, h.directed, h.multigraph) == (g.n, g.m, g.directed, g.multigraph)
    assert h.index_dtype == g.index_dtype and h.offset_dtype == g.offset_dtype
    assert h.weight_names == g.weight_names
    for name in ARRAYS:
        a, b = getattr(g, name), getattr(h, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype, name
            np.testing.assert_array_equal(device.to_host(b), device.to_host(a), err_msg=name)
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
    h = Graph.from_edgelist(df, chunk_rows=2)
    memory.set_device_budget(None)
    assert h.placement == "host"
    _assert_same(Graph.from_edgelist(df, placement="device"), h)


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
    g = Graph.from_parquet(folder, weight="w", placement="device")
    _assert_same(g, Graph.from_parquet(folder, weight="w", placement="host", chunk_rows=9))


@pytest.mark.parametrize("limit, dtypes", [(100, (np.int32, np.int64)),  # n <= limit < m
                                           (20, (np.int64, np.int64))])  # limit < n = 25
def test_int64_offsets_when_the_edges_exceed_the_limit(tmp_path, monkeypatch, limit, dtypes):
    monkeypatch.setattr(graph_module, "_INDEX32_LIMIT", limit)
    path = _write(tmp_path, _edges(weighted=False))
    g = Graph.from_parquet(path, placement="device")
    h = Graph.from_parquet(path, placement="host", chunk_rows=16)
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
    monkeypatch.setattr(graph_module, "_INDEX32_LIMIT", 20)
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
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(device.to_host(y), device.to_host(x), err_msg=name)


def test_host_offsets_follow_the_edges_left_after_merging(tmp_path, monkeypatch):
    """More rows read than the limit, but no more edges once parallel ones merge: int32
    offsets, as the device build has (the host build once sized them by the rows read)."""
    df = pd.concat([_mixed_edges()] * 3, ignore_index=True)  # every row three times
    g = Graph.from_edgelist(df, placement="device")
    monkeypatch.setattr(graph_module, "_INDEX32_LIMIT", g.m)
    assert len(df) > g.m
    h = Graph.from_parquet(_write(tmp_path, df), placement="host", chunk_rows=16)
    assert (h.index_dtype, h.offset_dtype) == (np.int32, np.int32)
    _assert_same(Graph.from_edgelist(df, placement="device"), h)


@pytest.mark.simulator  # a budget of bytes: on a GPU the allocator counts every live array
def test_auto_builds_on_the_host_when_the_budget_is_small(tmp_path, caplog):
    path = _write(tmp_path, _edges(weighted=False))
    memory.set_device_budget(1500)  # 160 rows x 12 bytes > half of it; chunks of 2 fit
    with caplog.at_level(logging.INFO, logger="onyx_rapids.host_build"):
        h = Graph.from_parquet(path, chunk_rows=2)
    assert h.placement == "host"
    assert any("host build: CSC" in r.getMessage() for r in caplog.records)
    memory.set_device_budget(None)
    _assert_same(Graph.from_parquet(path, placement="device"), h)


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
    g = Graph.from_edgelist(df, placement="device")
    h = Graph.from_edgelist(df, placement="host")
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
