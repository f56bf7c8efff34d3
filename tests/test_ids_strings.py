"""Vertex ids as people hold them: strings (and any hashable) renumbered as cuGraph renumbers
them, in every edge-list source, the labels kept in result frames and lookups; and
``Graph.from_networkx``.

Each labelled graph is checked against the same graph built from integer ids: names ``v00``..
sort as the integers do, so the two builds must give the same arrays, bit for bit, and the
algorithms the same results keyed by the names."""

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import onyx_rapids as onyx
from onyx_rapids import device, io
from onyx_rapids.graph import Graph

H = device.to_host
LAYOUT = ("vertices", "out_offsets", "out_indices", "in_offsets", "in_indices", "in_edge_ids",
          "out_degree", "in_degree", "edge_weights")

SRC = [0, 0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8]
DST = [1, 2, 2, 0, 4, 5, 6, 6, 7, 3, 0, 9]
W = [1.0, 2.0, 0.5, 1.5, 3.0, 1.0, 2.5, 0.25, 1.0, 2.0, 0.75, 1.0]


def name(i: int) -> str:
    return f"v{i:02d}"


def int_frame():
    return pd.DataFrame({"src": SRC, "dst": DST, "w": W})


def str_frame(dtype=object):
    return pd.DataFrame({"src": pd.Series([name(i) for i in SRC], dtype=dtype),
                         "dst": pd.Series([name(i) for i in DST], dtype=dtype), "w": W})


def assert_same_arrays(a, b):
    assert (a.n, a.m, a.directed) == (b.n, b.m, b.directed)
    for attr in LAYOUT:
        x, y = getattr(a, attr), getattr(b, attr)
        assert (x is None) == (y is None), attr
        if x is not None:
            assert H(x).dtype == H(y).dtype and np.array_equal(H(x), H(y)), attr


def results_match(labelled, integer, directed):
    """pagerank and bfs of the labelled graph, keyed by names, equal the integer graph's."""
    a = io.to_pandas(onyx.pagerank(labelled, weight=False)).set_index("vertex")["pagerank"]
    b = io.to_pandas(onyx.pagerank(integer, weight=False)).set_index("vertex")["pagerank"]
    assert sorted(a.index) == [name(i) for i in sorted(b.index)]
    assert np.allclose([a[name(i)] for i in b.index], b.values)
    x = io.to_pandas(onyx.bfs(labelled, source=name(4))).set_index("vertex")
    y = io.to_pandas(onyx.bfs(integer, source=4)).set_index("vertex")
    assert [x.loc[name(i), "distance"] for i in y.index] == y["distance"].tolist()
    pred = [None if pd.isna(p) else name(int(p)) for p in y["predecessor"]]
    got = [x.loc[name(i), "predecessor"] for i in y.index]
    assert [None if pd.isna(p) else p for p in got] == pred
    assert pd.isna(x.loc[name(4), "predecessor"])


@pytest.mark.parametrize("dtype", [object, "string", "category"])
def test_pandas_string_ids_match_integer_ids(dtype):
    ints = Graph.from_edgelist(int_frame(), weight="w", directed=True)
    g = Graph.from_edgelist(str_frame(dtype), weight="w", directed=True)
    assert_same_arrays(g, ints)
    assert g.id_map.labels.values.tolist() == [name(i) for i in range(10)]
    if dtype is object:  # the same arrays: the results of one dtype stand for all
        results_match(g, ints, True)
    frame = io.to_pandas(io.to_frame(g, {}))
    assert pd.api.types.is_string_dtype(frame["vertex"])  # pandas' str (object before 3)
    assert frame["vertex"].tolist()[:2] == ["v00", "v01"]
    edges = io.to_pandas(io.to_edge_frame(g))
    assert (edges["src"].tolist()[0], edges["dst"].tolist()[0], edges["w"].tolist()[0]) == \
        ("v00", "v01", 1.0)


@pytest.mark.parametrize("kind", ["string", "large_string", "dictionary"])
def test_pyarrow_string_ids(kind):
    def column(ids):
        names = pa.array([name(i) for i in ids], type=pa.large_string() if kind ==
                         "large_string" else pa.string())
        return names.dictionary_encode() if kind == "dictionary" else names

    table = pa.table({"src": column(SRC), "dst": column(DST), "w": W})
    g = Graph.from_edgelist(table, weight="w", directed=False, duplicates="first")
    ints = Graph.from_edgelist(int_frame(), weight="w", directed=False, duplicates="first")
    assert_same_arrays(g, ints)
    if kind == "dictionary":
        results_match(g, ints, False)
        host = Graph.from_edgelist(table, weight="w", directed=False, duplicates="first",
                                   placement="host", chunk_rows=4)  # in chunks of the table
        assert_same_arrays(host, ints.to("host"))
        assert host.id_map.original().tolist() == [name(i) for i in range(10)]


@pytest.mark.parametrize("placement, chunk_rows", [("device", None), ("host", 5)])
def test_parquet_string_ids_stream(tmp_path, placement, chunk_rows):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_pandas(str_frame(), preserve_index=False), path,
                   row_group_size=4)
    g = Graph.from_parquet(path, weight="w", directed=True, placement=placement,
                           chunk_rows=chunk_rows, vertices=["v10"])
    ints = Graph.from_edgelist(int_frame(), weight="w", directed=True, vertices=[10])
    assert g.placement == placement
    assert_same_arrays(g, ints.to(placement))
    assert g.id_map.labels.values.tolist()[-1] == "v10"
    assert g.to_internal("v10") == 10


def test_bipartite_string_ids():
    ratings = pd.DataFrame({"user": ["ann", "bob", "ann", "cy"], "item": [5, 5, 8, 9],
                            "stars": [4.0, 2.0, 5.0, 1.0]})
    g = Graph.from_bipartite(ratings, "user", "item", weight="stars")
    assert (g.n, g.m) == (6, 8)
    assert g.id_map.labels.values.tolist() == ["ann", "bob", "cy", 5, 8, 9]
    assert g.to_internal("bob", side="user") == 1 and g.to_internal(8, side="item") == 4
    frame = io.to_pandas(io.to_frame(g, {}))
    assert frame["side"].tolist() == ["user"] * 3 + ["item"] * 3
    assert frame["vertex"].tolist() == ["ann", "bob", "cy", 5, 8, 9]
    with pytest.raises(ValueError, match="1 id is not a vertex of this graph on side 'item'"):
        g.to_internal("ann", side="item")


def test_networkx_edgelist_frame():
    G = nx.relabel_nodes(nx.karate_club_graph(), lambda i: f"m{i:02d}")
    df = nx.to_pandas_edgelist(G)
    g = Graph.from_edgelist(df, source="source", destination="target", weight="weight",
                            directed=False)
    ref = nx.pagerank(G, weight=None)
    got = io.to_pandas(onyx.pagerank(g, weight=False)).set_index("vertex")["pagerank"]
    assert max(abs(got[k] - v) for k, v in ref.items()) < 1e-5


def test_labels_survive_reorder_placement_and_components():
    g = Graph.from_edgelist(str_frame(), weight="w", directed=True)
    for h in (g.reorder("degree"), g.to("host"), g.simple_undirected()):
        frame = io.to_pandas(io.to_frame(h, {}))
        assert sorted(frame["vertex"]) == [name(i) for i in range(10)]
        assert H(h.to_internal([name(4)]))[0] == list(frame["vertex"]).index(name(4))
    cc = io.to_pandas(onyx.weakly_connected_components(g)).set_index("vertex")["labels"]
    assert cc.to_dict() == {name(i): "v00" if i in (0, 1, 2, 8, 9) else "v03" for i in range(10)}
    assert g.describe_vertices([3]) == ["v03"]


def test_label_lookups_and_their_errors():
    g = Graph.from_edgelist(str_frame(), directed=True)
    assert g.to_internal("v05") == 5
    assert H(g.to_internal(pd.Series(["v09", "v00"]))).tolist() == [9, 0]
    with pytest.raises(ValueError, match=r"ids: 2 ids are not a vertex of this graph: 'x', 'y'"):
        g.to_internal(["v01", "x", "y", "x"])
    ints = Graph.from_edgelist(int_frame(), directed=True)
    with pytest.raises(TypeError, match=r"ids: vertex ids must be integers, got dtype <U1; .*"
                                        "labels such as strings"):
        ints.to_internal(["a"])
    with pytest.raises(TypeError, match="ids: vertex ids must be integers, got the string 'a'"):
        ints.to_internal("a")
    with pytest.raises(TypeError, match="this graph's vertex ids are integers, got labels"):
        ints.id_map.to_internal(np.array(["a"], dtype=object))
    with pytest.raises(ValueError, match=r"source='src': 1 null vertex id .*first at row 1"):
        Graph.from_edgelist(pd.DataFrame({"src": ["a", None], "dst": ["b", "c"]}),
                            directed=True)
    with pytest.raises(TypeError, match=r"source='src': vertex ids must be integers or labels "
                                        r"\(strings, say\), but the column .* float64"):
        Graph.from_edgelist(pd.DataFrame({"src": [1.0], "dst": [2]}), directed=True)


def test_mixed_id_columns_and_integer_ids_unchanged():
    g = Graph.from_edgelist(pd.DataFrame({"src": ["a", "b"], "dst": [1, 2]}), directed=True)
    assert g.id_map.labels is not None and g.n == 4
    assert sorted(map(str, g.id_map.labels.values)) == ["1", "2", "a", "b"]
    ints = Graph.from_edgelist(int_frame(), directed=True)
    assert ints.id_map.labels is None and H(ints.vertices).dtype == np.int64
    assert io.to_pandas(io.to_frame(ints, {}))["vertex"].dtype == np.int64


def test_from_networkx_karate_matches_networkx():
    G = nx.karate_club_graph()
    g = Graph.from_networkx(G)
    assert (g.n, g.m, g.directed, g.weight_names) == (34, 156, False, ["weight"])
    assert g.id_map.labels is None  # integer nodes keep integer ids
    got = io.to_pandas(onyx.pagerank(g, weight=False)).set_index("vertex")["pagerank"]
    assert max(abs(got[k] - v) for k, v in nx.pagerank(G, weight=None).items()) < 1e-5
    dist = io.to_pandas(onyx.bfs(g, source=0)).set_index("vertex")["distance"]
    assert dist.to_dict() == nx.single_source_shortest_path_length(G, 0)


def test_from_networkx_labels_isolated_directed_and_weights():
    G = nx.DiGraph()
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("b", "c")  # no weight: 1.0, as NetworkX's algorithms read it
    G.add_edge(("t", 1), "a", weight=3)
    G.add_node("lonely")
    g = Graph.from_networkx(G)
    assert (g.n, g.m, g.directed) == (5, 3, True)
    edges = io.to_pandas(io.to_edge_frame(g))
    assert {(u, v): w for u, v, w in edges[["src", "dst", "weight"]].itertuples(index=False)} \
        == {("a", "b"): 2.0, ("b", "c"): 1.0, (("t", 1), "a"): 3.0}
    assert g.to_internal([("t", 1)]).shape == (1,)
    got = io.to_pandas(onyx.pagerank(g)).set_index("vertex")["pagerank"]
    assert max(abs(got[k] - v) for k, v in nx.pagerank(G).items()) < 1e-5
    assert Graph.from_networkx(G, weight=None).edge_weights is None
    assert Graph.from_networkx(nx.path_graph(3), weight="cost").edge_weights is None


def test_from_networkx_multigraph_and_errors():
    M = nx.MultiDiGraph([(1, 2, {"weight": 1.0}), (1, 2, {"weight": 4.0}), (2, 3, {})])
    g = Graph.from_networkx(M)
    assert (g.multigraph, g.m) == (True, 3)
    assert sorted(H(g.edge_weights[:, 0]).tolist()) == [1.0, 1.0, 4.0]
    with pytest.raises(TypeError, match=r"edge \(1, 2\) has weight='x', which is not a number"):
        Graph.from_networkx(nx.Graph([(1, 2, {"weight": "x"})]))
    with pytest.raises(TypeError, match="G must be a networkx Graph"):
        Graph.from_networkx(pd.DataFrame({"src": [1], "dst": [2]}))
    with pytest.raises(TypeError, match="weight=True: pass the name of the edge attribute"):
        Graph.from_networkx(nx.path_graph(2), weight=True)
    with pytest.raises(ValueError, match="G has no nodes"):
        Graph.from_networkx(nx.Graph())


@pytest.mark.gpu
def test_cudf_string_ids_give_cudf_string_columns():
    import cudf

    frame = cudf.DataFrame({"src": [name(i) for i in SRC], "dst": [name(i) for i in DST],
                            "w": W})
    g = Graph.from_edgelist(frame, weight="w", directed=True)
    assert_same_arrays(g, Graph.from_edgelist(int_frame(), weight="w", directed=True))
    out = onyx.bfs(g, source="v04")
    assert isinstance(out, cudf.DataFrame)
    assert cudf.api.types.is_string_dtype(out["vertex"].dtype)  # a cuDF string column
    assert out["vertex"].to_pandas().tolist()[:2] == ["v00", "v01"]
    assert out["predecessor"].null_count == 6  # the source and the 5 vertices it cannot reach
    assert out["predecessor"].to_pandas().tolist()[5] == "v04"  # 4 -> 5


def test_multi_column_ids_as_cugraph_takes_them(tmp_path):
    df = pd.DataFrame({"a0": ["x", "x", "y"], "a1": [1, 2, 1], "b0": ["x", "y", "x"],
                       "b1": [2, 1, 1], "w": [1.0, 2.0, 3.0]})
    g = Graph.from_edgelist(df, source=["a0", "a1"], destination=["b0", "b1"], weight="w",
                            directed=True)
    assert g.id_map.labels.values.tolist() == [("x", 1), ("x", 2), ("y", 1)]
    assert H(g.to_internal([("y", 1)])).tolist() == [2]
    edges = io.to_pandas(io.to_edge_frame(g))
    assert list(zip(edges["src"], edges["dst"])) == [(("x", 1), ("x", 2)), (("x", 2), ("y", 1)),
                                                    (("y", 1), ("x", 1))]
    path = tmp_path / "m.parquet"
    df.to_parquet(path)
    for placement in ("device", "host"):
        p = Graph.from_parquet(path, source=["a0", "a1"], destination=["b0", "b1"],
                               weight="w", directed=True, placement=placement, chunk_rows=2)
        assert np.array_equal(H(p.out_indices), H(g.out_indices))
        assert p.id_map.labels.values.tolist() == g.id_map.labels.values.tolist()
    with pytest.raises(ValueError, match=r"source names 2 column\(s\) and destination 1"):
        Graph.from_edgelist(df, source=["a0", "a1"], destination="b0", directed=True)
