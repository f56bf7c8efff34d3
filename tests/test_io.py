"""Input adapters (frames, Parquet, cuGraph), their error messages, and result frames."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from onyx_rapids import device, io
from onyx_rapids.io import results, staging
from onyx_rapids.graph import Graph

H = device.to_host
LAYOUT = ("vertices", "out_offsets", "out_indices", "in_offsets", "in_indices", "in_edge_ids",
          "out_degree", "in_degree", "edge_weights")


def assert_same_graph(a, b):
    assert (a.n, a.m, a.directed, a.weight_names) == (b.n, b.m, b.directed, b.weight_names)
    for name in LAYOUT:
        x, y = getattr(a, name), getattr(b, name)
        if x is None or y is None:
            assert x is None and y is None, name
        else:
            assert np.array_equal(H(x), H(y)), name


@pytest.fixture
def edges():
    return pd.DataFrame({
        "src": np.array([3, -1, 2**40, 3, 3], dtype=np.int64),
        "dst": np.array([-1, 2**40, 3, -1, 3], dtype=np.int64),
        "w": [1.0, 2.0, 3.0, 4.0, 5.0],
        "cost": [1, 2, 3, 4, 5],
        "label": ["a", "b", "c", "d", "e"],
    })


# ---------------------------------------------------------------------- frames in


def test_pyarrow_table_and_pandas_agree(edges):
    table = pa.Table.from_pandas(edges, preserve_index=False)
    for directed in (True, False):
        a = Graph.from_edgelist(edges, weight=["w", "cost"], directed=directed)
        b = Graph.from_edgelist(table, weight=["w", "cost"], directed=directed)
        assert_same_graph(a, b)
        assert a.weight_names == ["w", "cost"]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint32", "uint64",
                                   "Int64", "int64[pyarrow]"])
def test_integer_id_dtypes(dtype):
    df = pd.DataFrame({"a": pd.array([5, 1, 7], dtype=dtype), "b": pd.array([1, 7, 7],
                                                                          dtype=dtype)})
    g = Graph.from_edgelist(df, source="a", destination="b", directed=True)
    assert H(g.vertices).tolist() == [1, 5, 7]
    assert H(g.vertices).dtype == np.int64


def test_custom_column_names_and_integer_weights():
    df = pd.DataFrame({"u": [1, 2], "v": [2, 3], "r": np.array([3, 4], dtype=np.int32)})
    g = Graph.from_edgelist(df, source="u", destination="v", weight="r", directed=True)
    assert H(g.edge_weights).dtype == np.float32 and g.weight_names == ["r"]


def test_parquet_round_trip(tmp_path, edges, monkeypatch):
    path = tmp_path / "edges.parquet"
    pq.write_table(pa.Table.from_pandas(edges, preserve_index=False), path)
    read = []
    real = pq.read_table

    def spy(source, columns=None, **kw):
        read.append(columns)
        return real(source, columns=columns, **kw)

    monkeypatch.setattr(pq, "read_table", spy)
    for directed in (True, False):
        a = Graph.from_parquet(path, weight="w", directed=directed, vertices=[0])
        b = Graph.from_edgelist(edges, weight="w", directed=directed, vertices=[0])
        assert_same_graph(a, b)
    if io._cudf() is None:
        assert read == [["src", "dst", "w"]] * 2  # only the needed columns
    g = Graph.from_parquet(str(path), source="dst", destination="src",  # str paths too
                           directed=True)
    assert g.m == len(edges) - 1  # the repeated 3->-1 row is one edge
    multi = Graph.from_parquet(path, source="dst", destination="src", multigraph=True,
                               directed=True)
    assert multi.m == len(edges) and multi.multigraph


def test_parquet_directory(tmp_path, edges):
    folder = tmp_path / "parts"
    folder.mkdir()
    pq.write_table(pa.Table.from_pandas(edges.iloc[:2], preserve_index=False),
                   folder / "a.parquet")
    pq.write_table(pa.Table.from_pandas(edges.iloc[2:], preserve_index=False),
                   folder / "b.parquet")
    assert_same_graph(Graph.from_parquet(folder, directed=True),
                      Graph.from_edgelist(edges, directed=True))


# ---------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"source": "srd"}, ValueError,
         r"source='srd': no such column in the edge list .*did you mean 'src'"),
        ({"destination": "dts"}, ValueError, r"destination='dts'.*did you mean 'dst'"),
        ({"weight": "ww"}, ValueError, r"weight='ww'.*did you mean 'w'"),
        ({"weight": ["w", "cots"]}, ValueError, r"weight='cots'.*did you mean 'cost'"),
        ({"source": "zzz"}, ValueError, r"source='zzz': no such column .*columns: 'src'"),
        ({"weight": "label"}, TypeError, "weight='label': values must be numeric"),
        ({"weight": []}, ValueError, r"weight=\[\] names no column"),
        ({"weight": ["w", "w"]}, ValueError, "weight names the column.*more than once"),
        ({"source": ["src", "w"]}, ValueError, r"source names 2 column\(s\) and destination 1"),
        ({"source": "w"}, TypeError, "source='w': vertex ids must be integers or labels"),
        ({"directed": "yes"}, TypeError, "directed must be True or False"),
        ({"vertices": [1.0]}, TypeError, "vertices: vertex ids must be integers"),
        ({"vertices": "abc"}, TypeError, r"vertices must be a list .* wrap it: \['abc'\]"),
    ],
)
def test_edgelist_argument_errors(edges, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Graph.from_edgelist(edges, **kwargs)


def test_integral_float_ids_are_rejected():
    df = pd.DataFrame({"src": [1.0, 2.0], "dst": [2, 3]})
    with pytest.raises(TypeError, match="source='src': vertex ids must be integers.*float64"):
        Graph.from_edgelist(df)
    with pytest.raises(TypeError, match="vertex ids must be integers"):
        Graph.from_edgelist(pa.table({"src": [1, 2], "dst": [2.0, 3.0]}))
    with pytest.raises(TypeError, match="must be integers"):
        Graph.from_edgelist(pd.DataFrame({"src": [True], "dst": [False]}))


def test_null_ids():
    df = pd.DataFrame({"src": pd.array([1, None, 3], dtype="Int64"), "dst": [2, 3, 1]})
    with pytest.raises(ValueError, match=r"source='src': 1 null vertex id .*first at row 1"):
        Graph.from_edgelist(df)
    table = pa.table({"src": [1, 2], "dst": pa.array([None, 3], type=pa.int64())})
    with pytest.raises(ValueError, match=r"destination='dst': 1 null vertex id.*row 0"):
        Graph.from_edgelist(table)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_weights(bad):
    df = pd.DataFrame({"src": [1, 2, 3], "dst": [2, 3, 1], "w": [1.0, 2.0, bad]})
    with pytest.raises(ValueError, match=r"weight='w': 1 row.*NaN or infinite.*row 2"):
        Graph.from_edgelist(df, weight="w")


def test_weight_null_overflow_and_non_numeric():
    df = pd.DataFrame({"src": [1, 2], "dst": [2, 3], "w": pd.array([1.0, None],
                                                                   dtype="Float64")})
    with pytest.raises(ValueError, match=r"weight='w': 1 null value .*row 1"):
        Graph.from_edgelist(df, weight="w")
    big = pd.DataFrame({"src": [1, 2], "dst": [2, 3], "w": [1.0, 1e300]})
    with pytest.raises(ValueError, match="weight='w': 1 row.*float32 range"):
        Graph.from_edgelist(big, weight="w")
    text = pd.DataFrame({"src": [1], "dst": [2], "w": ["1.5"]})
    with pytest.raises(TypeError, match="weight='w': values must be numeric.*to_numeric"):
        Graph.from_edgelist(text, weight="w")
    flags = pd.DataFrame({"src": [1], "dst": [2], "w": [True]})
    with pytest.raises(TypeError, match="weight='w': values must be numeric"):
        Graph.from_edgelist(flags, weight="w")


def test_empty_and_non_frame_inputs():
    with pytest.raises(ValueError, match="df: the edge list is empty"):
        Graph.from_edgelist(pd.DataFrame({"src": np.array([], dtype=np.int64),
                                          "dst": np.array([], dtype=np.int64)}))
    with pytest.raises(ValueError, match="the edge list is empty"):
        Graph.from_edgelist(pd.DataFrame(columns=["src", "dst"]))
    for bad in ({"src": [1], "dst": [2]}, np.array([[1, 2]]), [(1, 2)], None):
        with pytest.raises(TypeError, match="df must be a pandas or cuDF DataFrame"):
            Graph.from_edgelist(bad)


def test_uint64_ids_beyond_int64():
    df = pd.DataFrame({"src": np.array([2**64 - 1], dtype=np.uint64),
                       "dst": np.array([1], dtype=np.uint64)})
    with pytest.raises(ValueError, match="source='src': ids above 2\\*\\*63-1"):
        Graph.from_edgelist(df)


def test_nothing_half_built(edges):
    """A failing call raises before any Graph exists, so no partial object can escape."""
    bad = edges.assign(w=[1.0, np.nan, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        Graph.from_edgelist(bad, weight="w")


def test_parquet_errors(tmp_path, edges):
    missing = tmp_path / "nope.parquet"
    with pytest.raises(FileNotFoundError, match="nope.parquet"):
        Graph.from_parquet(missing)
    text = tmp_path / "edges.csv"
    edges.to_csv(text)
    with pytest.raises(ValueError, match=r"path='.*edges\.csv' is not a readable Parquet file"):
        Graph.from_parquet(text)
    good = tmp_path / "good.parquet"
    pq.write_table(pa.Table.from_pandas(edges, preserve_index=False), good)
    with pytest.raises(ValueError, match=r"source='srd': no such column in Parquet file "
                                         r"'.*good\.parquet'.*did you mean 'src'"):
        Graph.from_parquet(good, source="srd")
    with pytest.raises(ValueError, match="weight='x'"):
        Graph.from_parquet(good, weight="x")
    with pytest.raises(TypeError, match="source='w': vertex ids must be integers"):
        Graph.from_parquet(good, source="w")
    with pytest.raises(TypeError, match="path must be a file path"):
        Graph.from_parquet(42)


# ---------------------------------------------------------------------- vertex frames


def test_read_vertex_frame_partial_and_integer():
    g = Graph.from_edgelist(pd.DataFrame({"src": [30, 10], "dst": [10, 20]}), directed=True)
    labels = pd.DataFrame({"vertex": [30, 10], "label": [2, 0]})
    ids, values = io.read_vertex_frame(g, labels, complete=False, dtype=np.int32)
    assert H(ids).tolist() == [2, 0]
    assert H(values).tolist() == [[2], [0]] and H(values).dtype == np.int32
    with pytest.raises(ValueError, match="labels: 1 vertices have no row"):
        io.read_vertex_frame(g, labels, name="labels")
    with pytest.raises(TypeError, match="columns='label': expected integers"):
        io.read_vertex_frame(g, labels.assign(label=[0.5, 1.0]), complete=False,
                             dtype=np.int32)
    with pytest.raises(TypeError, match="labels must be a pandas or cuDF DataFrame"):
        io.read_vertex_frame(g, [1], name="labels")


# ---------------------------------------------------------------------- frames out


def test_to_frame_columns_and_expansion():
    g = Graph.from_edgelist(pd.DataFrame({"src": [5, 9], "dst": [9, -7]}), directed=True)
    df = io.to_frame(g, {"rank": device.asarray(np.array([0.1, 0.2, 0.7])),
                         "lp_*": np.arange(6, dtype=np.float32).reshape(3, 2),
                         "one_*": np.array([1, 2, 3]),
                         "distance": np.array([0, 1, 2], dtype=np.int32)})
    assert isinstance(df, pd.DataFrame) or type(df).__module__.startswith("cudf")
    assert list(df.columns) == ["vertex", "rank", "lp_0", "lp_1", "one_0", "distance"]
    host = df if isinstance(df, pd.DataFrame) else df.to_pandas()
    assert host["vertex"].tolist() == [-7, 5, 9]
    assert host["lp_1"].tolist() == [1.0, 3.0, 5.0]
    assert host["distance"].dtype == np.int32
    assert host["vertex"].dtype == np.int64


@pytest.mark.parametrize(
    "columns, exc, match",
    [
        ({"h": np.ones((3, 2))}, ValueError, r"columns\['h'\] has shape \(3, 2\); name a 2-D "
                                             r"array with a trailing '\*'"),
        ({"x": np.ones(4)}, ValueError, r"columns\['x'\] has shape \(4,\); it needs 3 rows"),
        ({"vertex": np.ones(3)}, ValueError, "'vertex' occurs twice"),
        ({"a_*": np.ones((3, 1)), "a_0": np.ones(3)}, ValueError, "'a_0' occurs twice"),
        ({"*": np.ones((3, 2))}, ValueError, "'\\*' needs a prefix"),
        ({1: np.ones(3)}, TypeError, "names must be strings"),
        ([np.ones(3)], TypeError, "columns must be a dict"),
    ],
)
def test_to_frame_rejects(columns, exc, match):
    g = Graph.from_edgelist(pd.DataFrame({"src": [5, 9], "dst": [9, -7]}), directed=True)
    with pytest.raises(exc, match=match):
        io.to_frame(g, columns)


def test_to_edge_frame_round_trips():
    df = pd.DataFrame({"src": [3, 1, 3], "dst": [1, 2, 3], "w": [0.5, 1.5, 2.5]})
    g = Graph.from_edgelist(df, weight="w", directed=True)
    out = io.to_edge_frame(g, {"flow": np.arange(3)})
    host = out if isinstance(out, pd.DataFrame) else out.to_pandas()
    assert list(host.columns) == ["src", "dst", "w", "flow"]
    assert host[["src", "dst"]].values.tolist() == [[1, 2], [3, 1], [3, 3]]
    assert_same_graph(Graph.from_edgelist(host, weight="w", directed=True), g)


# ---------------------------------------------------------------------- cuGraph (GPU only)


@pytest.mark.gpu
@pytest.mark.parametrize("directed", [True, False])
def test_from_cugraph_matches_from_edgelist(directed):
    import cudf  # gpu tests need RAPIDS: fail, never skip, when it is missing
    import cugraph

    # No parallel edges (cugraph.Graph drops them) and, undirected, no edge given both ways.
    frame = cudf.DataFrame({
        "src": np.array([10, -4, 2**40, 10, 7], dtype=np.int64),
        "dst": np.array([-4, 2**40, 7, 7, 3], dtype=np.int64),
        "w": np.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32),
    })
    G = cugraph.Graph(directed=directed)
    G.from_cudf_edgelist(frame, source="src", destination="dst", weight="w")
    a = Graph.from_cugraph(G)
    b = Graph.from_edgelist(frame, weight="w", directed=directed)
    assert device.is_device_array(a.out_indices)
    assert_same_graph(a, b)
    if not directed:
        assert np.array_equal(H(a.reverse_edge), H(b.reverse_edge))

    U = cugraph.Graph(directed=directed)
    U.from_cudf_edgelist(frame, source="src", destination="dst")
    assert Graph.from_cugraph(U).edge_weights is None
    with pytest.raises(TypeError, match="G must be a cugraph.Graph"):
        Graph.from_cugraph(frame)


# ---------------------------------------------------------------------- pandas result frames


def _reference(g, columns):
    """The frame as built column by column (``pd.DataFrame`` over host columns)."""
    out = {} if g.sides is None else {"side": staging.Sides(g.sides, g.side_names)}
    out["vertex"] = g.vertices
    out.update(results._result_columns(columns, g.n, "vertices", tuple(out)))
    return pd.DataFrame({k: staging.pandas_column(v) for k, v in out.items()})


def _six():
    return Graph.from_edgelist(pd.DataFrame({"src": [5, 9, 3, 11, 2], "dst": [9, -7, 5, 2, 3]}),
                               directed=True)


def _masks(shape, step):
    return np.arange(int(np.prod(shape))).reshape(shape) % step != 0


def _cases(n):
    rng = np.random.default_rng(3)
    return {
        "1-D": {"rank": rng.random(n), "distance": np.arange(n, dtype=np.int32),
                "hit": np.arange(n) % 2 == 0, "label": np.arange(n, dtype=np.uint8)},
        "n x k": {"x_*": rng.random((n, 3)).astype(np.float32), "one_*": np.arange(n),
                  "score": rng.random(n).astype(np.float32)},
        "masked": {"predecessor": (np.arange(n, dtype=np.int32)[::-1].copy(), _masks(n, 3)),
                   "weight": (rng.random(n).astype(np.float32), _masks(n, 2)),
                   "reached": (np.arange(n) % 3 == 0, _masks(n, 4)),
                   "mixed": np.arange(n, dtype=np.int64) * 10},
        "masked n x k": {"lp_*": (np.arange(2 * n).reshape(n, 2), _masks((n, 2), 3)),
                         "f_*": (rng.random((n, 2)), _masks((n, 2), 2)),
                         "x_*": np.arange(3 * n, dtype=np.float32).reshape(n, 3)},
    }


@pytest.mark.parametrize("case", ["1-D", "n x k", "masked", "masked n x k"])
def test_pandas_result_frame_keeps_values_dtypes_and_nulls(case):
    g = _six()
    columns = _cases(g.n)[case]
    df = io._to_frame(g, {k: (tuple(device.asarray(x) for x in v) if isinstance(v, tuple)
                              else device.asarray(v)) for k, v in columns.items()},
                      pandas=True)
    assert isinstance(df, pd.DataFrame)
    pd.testing.assert_frame_equal(df, _reference(g, columns))
    assert df["vertex"].tolist() == H(g.vertices).tolist()
    for name, value in columns.items():
        if isinstance(value, tuple):
            values, valid = value
            col = df[name] if not name.endswith("*") else df[name[:-1] + "0"]
            first_values = values if values.ndim == 1 else values[:, 0]
            first_valid = valid if valid.ndim == 1 else valid[:, 0]
            assert col.isna().tolist() == (~first_valid).tolist()
            assert col[first_valid].tolist() == first_values[first_valid].tolist()
            want = {"i": "Int64", "u": "Int64", "b": "boolean"}.get(values.dtype.kind)
            assert str(col.dtype) == (want or ("Float32" if values.dtype == np.float32
                                               else "Float64"))
        elif not name.endswith("*"):
            assert df[name].dtype == value.dtype and df[name].tolist() == value.tolist()
        else:
            block = value.reshape(g.n, -1)
            for j in range(block.shape[1]):
                assert df[f"{name[:-1]}{j}"].dtype == block.dtype
                assert df[f"{name[:-1]}{j}"].tolist() == block[:, j].tolist()


def test_pandas_result_frame_of_a_bipartite_graph():
    ratings = pd.DataFrame({"user": [5, 5, 7], "item": [5, 8, 5], "stars": [4.0, 2.0, 5.0]})
    g = Graph.from_bipartite(ratings, "user", "item", weight="stars")
    columns = {"f_*": np.arange(2 * g.n, dtype=np.float32).reshape(g.n, 2),
               "p": (np.arange(g.n), _masks(g.n, 2))}
    df = io._to_frame(g, columns, pandas=True)
    pd.testing.assert_frame_equal(df, _reference(g, columns))
    assert list(df.columns) == ["side", "vertex", "f_0", "f_1", "p"]
    assert isinstance(df["side"].dtype, pd.CategoricalDtype)
    assert df["side"].tolist() == ["user", "user", "item", "item"]
    assert df["vertex"].tolist() == [5, 7, 5, 8]


def test_pandas_edge_frame_with_weight_columns():
    df = pd.DataFrame({"src": [3, 1, 3], "dst": [1, 2, 3], "w": [0.5, 1.5, 2.5],
                       "c": [1, 2, 3]})
    g = Graph.from_edgelist(df, weight=["w", "c"], directed=True)
    out = io.to_edge_frame(g, {"flow": (np.arange(3), np.array([True, False, True]))})
    host = io.to_pandas(out)
    assert list(host.columns) == ["src", "dst", "w", "c", "flow"]
    assert host[["src", "dst"]].values.tolist() == [[1, 2], [3, 1], [3, 3]]
    assert host["w"].dtype == np.float32 and host["c"].tolist() == [2.0, 1.0, 3.0]
    assert host["flow"].isna().tolist() == [False, True, False]
    if isinstance(out, pd.DataFrame):
        assert not np.shares_memory(out["w"].to_numpy(), H(g.edge_weights))


def test_feature_block_is_moved_once_and_pandas_keeps_it(monkeypatch):
    """The n x k block crosses once, as one (k, n) C-contiguous buffer, and the frame's
    columns are views of what crossed: pandas made no copy of it."""
    moved = []
    real = device.to_host_pinned_async

    def spy(arrays):
        out, wait = real(arrays)
        moved.extend(out)
        return out, wait

    monkeypatch.setattr(device, "to_host_pinned_async", spy)
    g = _six()
    block = np.arange(4 * g.n, dtype=np.float32).reshape(g.n, 4)
    df = io._to_frame(g, {"x_*": device.asarray(block), "p": (np.arange(g.n),
                                                               _masks(g.n, 2))}, pandas=True)
    floats = [a for a in moved if a.dtype == np.float32]
    assert len(floats) == 1 and floats[0].shape == (4, g.n) and floats[0].flags.c_contiguous
    assert len(moved) == 3  # int64 (vertex, predecessor values), float32, the null mask
    for j in range(4):
        assert np.shares_memory(df[f"x_{j}"].to_numpy(), floats[0])
        assert df[f"x_{j}"].tolist() == block[:, j].tolist()
    ints = next(a for a in moved if a.dtype == np.int64)
    assert np.shares_memory(df["vertex"].to_numpy(), ints)
    assert np.shares_memory(df["p"].array._data, ints)
    # never the caller's or the graph's memory
    assert not np.shares_memory(df["x_0"].to_numpy(), block)
    assert not np.shares_memory(df["vertex"].to_numpy(), H(g.vertices))


def test_pandas_frame_without_the_blocks_api(monkeypatch):
    """pandas < 3 (no create_dataframe_from_blocks): the same frame through pd.DataFrame."""
    g = _six()
    columns = _cases(g.n)["masked n x k"]
    monkeypatch.setattr(staging, "_blocks_api", lambda: None)
    pd.testing.assert_frame_equal(io._to_frame(g, columns, pandas=True),
                                  _reference(g, columns))


def test_frame_stays_valid_after_later_calls():
    g = _six()
    block = device.asarray(np.arange(2 * g.n, dtype=np.float32).reshape(g.n, 2))
    pred = device.asarray(np.arange(g.n))
    valid = device.asarray(_masks(g.n, 2))
    first = io._to_frame(g, {"x_*": block, "p": (pred, valid)}, pandas=True)
    kept = first.copy(deep=True)
    vertices = H(g.vertices).copy()
    block[:] = -1  # the caller reuses its buffers for the next call
    pred[:] = -1
    for _ in range(3):  # frames of the same sizes, the later ones dropped at once
        again = io._to_frame(g, {"x_*": block, "p": (pred, ~valid)}, pandas=True)
        assert again["x_0"].tolist() == [-1.0] * g.n
        del again
    pd.testing.assert_frame_equal(first, kept)
    first.loc[0, "vertex"] = 123  # writing into the frame leaves the graph alone
    first.loc[1, "x_0"] = 9.0
    assert H(g.vertices).tolist() == vertices.tolist()
    assert float(H(block)[1, 0]) == -1.0


def test_to_host_pinned_keeps_host_arrays():
    a = np.arange(5)
    assert device.to_host_pinned([a])[0] is a
    (same,), wait = device.to_host_pinned_async([a])
    wait()
    assert same is a


@pytest.mark.gpu
def test_to_host_pinned_uses_the_pinned_pool():
    import cupy

    x = cupy.arange(3 * 1000, dtype=cupy.float32).reshape(1000, 3)
    host, = device.to_host_pinned([x.T])  # made contiguous on the device, then copied
    assert host.shape == (3, 1000) and host.flags.c_contiguous
    assert np.array_equal(host, x.T.get())
    assert isinstance(host.base, cupy.cuda.PinnedMemoryPointer)
    ptr = host.ctypes.data
    again, = device.to_host_pinned([x.T])
    assert again.ctypes.data != ptr  # in use: never handed out twice
    del host
    third, = device.to_host_pinned([x.T + 1])
    assert third.ctypes.data == ptr  # back in the pool once nothing refers to it
    assert np.array_equal(again, x.T.get()) and np.array_equal(third, x.T.get() + 1)
    (late,), wait = device.to_host_pinned_async([x * 2])
    wait()
    assert np.array_equal(late, x.get() * 2) and isinstance(late.base,
                                                           cupy.cuda.PinnedMemoryPointer)
    g = _six()
    df = io._to_frame(g, {"x_*": cupy.ones((g.n, 2), dtype=cupy.float32)}, pandas=True)
    assert isinstance(df, pd.DataFrame) and df["x_1"].tolist() == [1.0] * g.n


@pytest.mark.parametrize("dtype, to", [(np.float32, np.float32), (np.int32, np.int64),
                                       (np.bool_, np.bool_), (np.float64, np.float64)])
def test_transpose_into(dtype, to):
    a = (np.arange(70 * 33) % 5).astype(dtype).reshape(70, 33)
    out = device.empty((33, 70), to)
    device.transpose_into(out, device.asarray(a))  # 32 x 32 tiles and their ragged edges
    assert H(out).dtype == to and np.array_equal(H(out), a.T.astype(to))
    strided = device.asarray((np.arange(70 * 18) % 3).astype(dtype).reshape(70, 18))[:, ::2]
    part = device.empty((9, 70), to)
    device.transpose_into(part, strided)  # not contiguous: by assignment
    assert np.array_equal(H(part), H(strided).T.astype(to))
