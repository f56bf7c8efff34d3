"""Inputs never silently wrong (issue 14): simple graphs by default, bipartite graphs with two
id namespaces, per-vertex inputs aligned by vertex id, result columns with nulls, the graph's
cache, and weight resolution for the algorithms."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from onyx_rapids import device, io
from onyx_rapids.graph import Graph

H = device.to_host


def edges_of(g):
    """Stored edges as sorted (source id, destination id, weights...) tuples."""
    src = H(g.vertices)[H(g.edge_sources)].tolist()
    dst = H(g.vertices)[H(g.out_indices)].tolist()
    w = [()] * g.m if g.edge_weights is None else [tuple(r) for r in H(g.edge_weights).tolist()]
    return sorted((a, b) + x for a, b, x in zip(src, dst, w))


def check_invariants(g):
    """CSR/CSC/reverse_edge agree with each other."""
    src, dst = H(g.edge_sources), H(g.out_indices)
    assert np.array_equal(np.diff(H(g.out_offsets)), H(g.out_degree))
    assert np.array_equal(np.diff(H(g.in_offsets)), H(g.in_degree))
    ids = H(g.in_edge_ids)
    assert np.array_equal(np.sort(ids), np.arange(g.m))
    assert np.array_equal(src[ids], H(g.in_indices))
    if not g.directed:
        rev = H(g.reverse_edge)
        assert np.array_equal(rev[rev], np.arange(g.m))
        assert np.array_equal(src[rev], dst) and np.array_equal(dst[rev], src)
        if g.edge_weights is not None:
            assert np.array_equal(H(g.edge_weights)[rev], H(g.edge_weights))


# ---------------------------------------------------------------------- simple graphs


def test_directed_default_merges_parallel_edges_keeping_the_first_row():
    df = pd.DataFrame({"src": [1, 1, 2, 1, 3, 3], "dst": [2, 2, 1, 2, 3, 3],
                       "w": [5.0, 6.0, 7.0, 8.0, 9.0, 1.0]})
    g = Graph.from_edgelist(df, weight="w", directed=True)
    assert not g.multigraph and g.m == 3
    assert edges_of(g) == [(1, 2, 5.0), (2, 1, 7.0), (3, 3, 9.0)]  # loop once, first weight
    multi = Graph.from_edgelist(df, weight="w", multigraph=True, directed=True)
    assert multi.multigraph and multi.m == 6
    check_invariants(g)


def test_undirected_default_stores_each_edge_once_in_both_directions():
    # 1-2 listed as 1-2, 2-1 and 1-2 again; 3-3 twice; 2-3 once.
    df = pd.DataFrame({"src": [2, 1, 1, 3, 3, 2], "dst": [1, 2, 2, 3, 3, 3],
                       "w": [4.0, 5.0, 6.0, 7.0, 8.0, 9.0]})
    g = Graph.from_edgelist(df, weight="w", directed=False)
    assert g.m == 5  # 1-2 both ways, 2-3 both ways, one 3-3
    assert edges_of(g) == [(1, 2, 4.0), (2, 1, 4.0), (2, 3, 9.0), (3, 2, 9.0), (3, 3, 7.0)]
    assert H(g.out_degree).tolist() == [1, 2, 2]
    check_invariants(g)
    multi = Graph.from_edgelist(df, weight="w", directed=False, multigraph=True)
    assert multi.m == 2 * 4 + 2
    check_invariants(multi)
    # Listing both directions is the same graph as listing each edge once.
    once = Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 3], "dst": [2, 3, 3],
                                             "w": [4.0, 9.0, 7.0]}), weight="w",
                               directed=False)
    assert edges_of(once) == edges_of(g)


def test_from_csr_merges_repeated_entries_and_accepts_symmetric_undirected_input():
    # 0->1 and 1->0 each given twice, and a self-loop 2->2.
    offsets, indices = np.array([0, 2, 4, 5]), np.array([1, 1, 0, 0, 2])
    w = np.array([3.0, 4.0, 3.0, 4.0, 2.0])
    g = Graph.from_csr(offsets, indices, w)
    assert g.m == 3 and not g.multigraph
    assert edges_of(g) == [(0, 1, 3.0), (1, 0, 3.0), (2, 2, 2.0)]
    assert Graph.from_csr(offsets, indices, w, multigraph=True).m == 5
    sym = Graph.from_csr(offsets, indices, w, directed=False)
    assert sym.m == 3 and edges_of(sym) == edges_of(g)
    check_invariants(sym)
    with pytest.raises(ValueError, match=r"symmetric edge set.*1 edge \(2->1\)"):
        Graph.from_csr(offsets, np.array([1, 1, 0, 0, 1]), w, directed=False)
    import scipy.sparse as sp

    a = sp.csr_matrix(np.array([[0, 2.0, 0], [2.0, 1.0, 5.0], [0, 5.0, 0]]))
    und = Graph.from_csr(a, directed=False)
    assert und.m == 5 and not und.multigraph
    check_invariants(und)


def test_simple_undirected_and_flags():
    df = pd.DataFrame({"src": [1, 2, 2, 1], "dst": [2, 1, 2, 2]})
    g = Graph.from_edgelist(df, multigraph=True, directed=True)
    s = g.simple_undirected()
    assert s.m == 2 and not s.directed and not s.multigraph
    assert s is g.simple_undirected()  # cached
    with pytest.raises(TypeError, match="multigraph must be True or False, got 'no'"):
        Graph.from_edgelist(df, multigraph="no")
    with pytest.raises(TypeError, match="multigraph must be True or False"):
        Graph.from_csr(np.array([0, 1, 1]), np.array([1]), multigraph=1)


# ---------------------------------------------------------------------- bipartite graphs


@pytest.fixture
def ratings():
    # user 5 and item 5 are different vertices; user 7 rated item 9 twice.
    return pd.DataFrame({"user": [5, 7, 5, 7, 9], "item": [5, 9, 9, 9, 5],
                         "stars": [4.0, 1.0, 2.0, 3.0, 5.0]})


def test_bipartite_ids_stay_distinct_per_side(ratings):
    g = Graph.from_bipartite(ratings, "user", "item", weight="stars")
    assert (g.n, g.m, g.directed, g.multigraph) == (5, 8, False, False)
    assert H(g.vertices).tolist() == [5, 7, 9, 5, 9]
    assert H(g.sides).tolist() == [0, 0, 0, 1, 1] and H(g.sides).dtype == np.int8
    assert g.side_names == ("user", "item")
    # every edge joins the two sides
    assert (H(g.sides)[H(g.edge_sources)] != H(g.sides)[H(g.out_indices)]).all()
    check_invariants(g)
    assert g.to_internal(5, side="user") == 0 and g.to_internal(5, side="item") == 3
    assert H(g.to_internal([9, 5], side="right")).tolist() == [4, 3]
    assert g.to_internal(9, side=0) == 2
    w = dict(zip(zip(H(g.edge_sources).tolist(), H(g.out_indices).tolist()),
                 H(g.edge_weights)[:, 0].tolist()))
    assert w[(1, 4)] == 1.0  # user 7 - item 9 keeps its first rating
    assert Graph.from_bipartite(ratings, "user", "item", multigraph=True).m == 10
    s = g.summary()
    assert s["sides"] == {"user": 3, "item": 2} and s["multigraph"] is False
    assert "sides=('user', 'item')" in repr(g)
    und = g.simple_undirected()
    assert und.side_names == ("user", "item") and H(und.vertices).tolist() == [5, 7, 9, 5, 9]
    assert Graph.from_edgelist(ratings, "user", "item", directed=True).sides is None


def test_bipartite_lookup_errors(ratings):
    g = Graph.from_bipartite(ratings, "user", "item")
    with pytest.raises(ValueError, match=r"side: this graph is bipartite.*side='user' or 'item'"):
        g.to_internal(5)
    with pytest.raises(ValueError, match="side='film' is not a side of this graph"):
        g.to_internal(5, side="film")
    with pytest.raises(ValueError, match="ids: 1 id is not a vertex of this graph on side "
                                         "'item': 7"):
        g.to_internal([5, 7], side="item")
    plain = Graph.from_edgelist(ratings, "user", "item", directed=True)
    with pytest.raises(ValueError, match="side='user': sides exist only in bipartite graphs"):
        plain.to_internal(5, side="user")


@pytest.mark.parametrize(
    "frame, left, right, kwargs, exc, match",
    [
        (pd.DataFrame({"user": [1], "item": [2]}), "usr", "item", {}, ValueError,
         r"left='usr': no such column.*did you mean 'user'"),
        (pd.DataFrame({"user": [1], "item": [2]}), "user", "itm", {}, ValueError,
         r"right='itm': no such column.*did you mean 'item'"),
        (pd.DataFrame({"user": [1.0], "item": [2]}), "user", "item", {}, TypeError,
         "left='user': vertex ids must be integers"),
        (pd.DataFrame({"user": [1], "item": [True]}), "user", "item", {}, TypeError,
         "right='item': vertex ids must be integers"),
        (pd.DataFrame({"user": [1], "item": [2]}), "user", "user", {}, ValueError,
         "left and right name the same column 'user'"),
        (pd.DataFrame({"user": [1], "item": [2]}), ["user"], "item", {}, TypeError,
         "left must be a single column name"),
        (pd.DataFrame({"user": [1], "item": [2]}), "user", "item", {"weight": "r"}, ValueError,
         "weight='r': no such column"),
        (pd.DataFrame({"user": [1], "item": [2]}), "user", "item", {"multigraph": None},
         TypeError, "multigraph must be True or False"),
    ],
)
def test_bipartite_rejects_bad_input(frame, left, right, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Graph.from_bipartite(frame, left, right, **kwargs)


def test_bipartite_results_round_trip_through_side_and_vertex(ratings):
    g = Graph.from_bipartite(pa.Table.from_pandas(ratings), "user", "item", weight="stars")
    out = io.to_frame(g, {"score": np.arange(5, dtype=np.float32)})
    host = out if isinstance(out, pd.DataFrame) else out.to_pandas()
    assert list(host.columns) == ["side", "vertex", "score"]
    assert host["side"].astype(str).tolist() == ["user"] * 3 + ["item"] * 2
    assert host["vertex"].tolist() == [5, 7, 9, 5, 9]
    shuffled = host.iloc[[4, 0, 3, 2, 1]]
    assert H(g.vertex_property(shuffled))[:, 0].tolist() == [0, 1, 2, 3, 4]
    # The side column may also hold 0/1 or 'left'/'right'; a (side, vertex) MultiIndex works.
    codes = shuffled.assign(side=shuffled["side"].cat.codes.astype(int))
    assert H(g.vertex_property(codes))[:, 0].tolist() == [0, 1, 2, 3, 4]
    series = shuffled.set_index(["side", "vertex"])["score"]
    assert H(g.vertex_property(series))[:, 0].tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="the graph is bipartite.*needs a 'side' column"):
        g.vertex_property(host.drop(columns="side"), name="init")
    with pytest.raises(ValueError, match=r"init: 1 id\(s\) in column 'vertex' are not vertices "
                                         r"of the graph: item 7"):
        g.vertex_property(host.assign(vertex=[5, 7, 9, 5, 7]), name="init")
    with pytest.raises(ValueError, match=r"side='side': 1 row\(s\) of the init frame name no "
                                         r"side of the graph \('film'\)"):
        g.vertex_property(host.assign(side=["user"] * 4 + ["film"]), name="init")
    with pytest.raises(ValueError, match=r"init: 1 vertices have no row.*: item 9"):
        g.vertex_property(host.iloc[:4], name="init")
    with pytest.raises(ValueError, match=r"init: the graph is bipartite.*not a \(side, vertex\) "
                                         r"MultiIndex"):
        g.vertex_property(pd.Series([1.0] * 5, index=[5, 7, 9, 5, 9]), name="init")


# ---------------------------------------------------------------------- inputs aligned by id


@pytest.fixture
def g():
    return Graph.from_edgelist(pd.DataFrame({"src": [30, 10, 20], "dst": [10, 20, 30]}),
                               directed=True)


def test_series_and_index_keyed_frames_are_aligned_by_id(g):
    s = pd.Series([3.0, 1.0, 2.0], index=[30, 10, 20])
    assert H(g.vertex_property(s))[:, 0].tolist() == [1.0, 2.0, 3.0]
    frame = pd.DataFrame({"a": [3.0, 1.0, 2.0], "b": [6, 4, 5]}, index=[30, 10, 20])
    assert H(g.vertex_property(frame)).tolist() == [[1, 4], [2, 5], [3, 6]]
    assert H(io.read_property_array(s, 3, "vertices", "x", g=g))[:, 0].tolist() == [1, 2, 3]
    ids, values = io.read_vertex_frame(g, pd.Series([7, 9], index=[20, 30]), complete=False,
                                       dtype=np.int32)
    assert H(ids).tolist() == [1, 2] and H(values)[:, 0].tolist() == [7, 9]
    # NumPy arrays stay positional, in Graph.vertices order.
    assert H(g.vertex_property(np.array([3.0, 1.0, 2.0])))[:, 0].tolist() == [3.0, 1.0, 2.0]


@pytest.mark.parametrize(
    "values, exc, match",
    [
        (pd.Series([1.0, 2.0, 3.0]), ValueError,
         r"x: the Series has a default RangeIndex .* and here they are not"),
        (pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2]), ValueError,
         r"x: 3 id\(s\) in the index \(.*has no 'vertex' column, so its index gives the vertex "
         r"ids\) are not vertices of the graph: 0, 1, 2"),
        (pd.Series([1.0, 2.0], index=[10, 30]), ValueError, "x: 1 vertices have no row.*20"),
        (pd.Series([1.0] * 3, index=[10, 30, 10]), ValueError,
         "x: vertices appear more than once in the index.*10"),
        (pd.Series([1.0] * 3, index=["a", "b", "c"]), TypeError,
         "x: .* the index has dtype .*; vertex ids must be integers: add a 'vertex' column"),
        (pd.Series([1.0] * 3, index=[10.0, 20.0, 30.0]), TypeError, "index has dtype float64"),
        (pd.Series([1.0, np.nan, 2.0], index=[10, 20, 30]), ValueError, "NaN or infinite"),
        (pd.DataFrame({"a": [1.0] * 3}, index=pd.MultiIndex.from_arrays([[1, 2, 3]] * 2)),
         ValueError, "x: .* it is a MultiIndex of 2 levels"),
    ],
)
def test_index_keyed_inputs_are_refused_when_they_do_not_match(g, values, exc, match):
    with pytest.raises(exc, match=match):
        g.vertex_property(values, name="x")


def test_read_property_array_refuses_frames_without_the_graph():
    with pytest.raises(TypeError, match="x: a pandas Series is aligned by vertex id.*"
                                        "Graph.vertex_property"):
        io.read_property_array(pd.Series([1.0, 2.0]), 2, "vertices", "x")


def test_vertex_ids_from_series_index_and_frames(g):
    for ids in (pd.Series([30, 10], index=[7, 8]), pd.Index([30, 10]), [30, 10],
                np.array([30, 10]), pd.DataFrame({"vertex": [30, 10], "x": [0.0, 1.0]})):
        assert H(io.read_vertex_ids(ids, "sources")).tolist() == [30, 10]
        assert H(g.to_internal(ids)).tolist() == [2, 0]
    with pytest.raises(TypeError, match=r"sources: a DataFrame of ids needs a 'vertex' \(or "
                                        r"'node'\) column"):
        io.read_vertex_ids(pd.DataFrame({"id": [1]}), "sources")
    with pytest.raises(ValueError, match=r"sources: 1 null value"):
        io.read_vertex_ids(pd.Series([1, None], dtype="Int64"), "sources")


def test_device_conversions_accept_pandas_objects():
    s = pd.Series([3, 1], index=[9, 8])
    assert H(device.asarray(s)).tolist() == [3, 1]
    assert device.to_host(s).tolist() == [3, 1]
    assert device.to_host(pd.DataFrame({"a": [1.0], "b": [2.0]})).tolist() == [[1.0, 2.0]]
    assert H(device.asarray(pd.Series([1, 2], dtype="Int64"), np.float32)).dtype == np.float32
    with pytest.raises(ValueError, match=r"sides \(a pandas Series\): 1 null value"):
        device.asarray(pd.Series([1, None], dtype="Int64"), name="sides")
    with pytest.raises(TypeError, match=r"potential \(a pandas DataFrame\) holds non-numeric"):
        device.to_host(pd.DataFrame({"a": ["x"]}), name="potential")


# ---------------------------------------------------------------------- result columns with nulls


def test_to_frame_masked_columns_are_nullable(g):
    pred = np.array([2, 0, 1], dtype=np.int32)
    valid = np.array([True, False, True])
    df = io.to_frame(g, {"predecessor": (device.asarray(pred), device.asarray(valid)),
                         "d_*": (np.ones((3, 2)), np.array([[True, False]] * 3))})
    host = io.to_pandas(df)  # cuDF: nullable Int64 kept, not floats
    assert list(host.columns) == ["vertex", "predecessor", "d_0", "d_1"]
    assert str(host["predecessor"].dtype) == "Int64"
    assert host["predecessor"].isna().tolist() == [False, True, False]
    assert host["predecessor"].dropna().tolist() == [2, 1]
    assert host["d_1"].isna().all() and not host["d_0"].isna().any()
    # merging keeps the nulls
    assert host.merge(host[["vertex"]], on="vertex")["predecessor"].isna().sum() == 1


@pytest.mark.parametrize(
    "value, exc, match",
    [
        ((np.ones(3), np.ones(3)), TypeError, "the valid mask must be boolean"),
        ((np.ones(3), np.ones(2, dtype=bool)), ValueError, r"the valid mask has shape \(2,\)"),
        ((np.ones(3), np.ones(3, dtype=bool), 1), TypeError, "a tuple of 3 items"),
    ],
)
def test_to_frame_rejects_bad_masks(g, value, exc, match):
    with pytest.raises(exc, match=match):
        io.to_frame(g, {"p": value})


# ---------------------------------------------------------------------- the cache


def test_cached_builds_once_and_clear_cache_rebuilds(g):
    calls = []

    def build():
        calls.append(1)
        return {"n": g.n}

    first = g.cached(("test", "work"), build)
    assert g.cached(("test", "work"), build) is first and len(calls) == 1
    sources = g.edge_sources
    assert g.edge_sources is sources  # held by the cache
    g.clear_cache()
    assert g.cached(("test", "work"), build) is not first and len(calls) == 2
    assert np.array_equal(H(g.edge_sources), H(sources))

    def fails():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        g.cached("bad", fails)
    assert g.cached("bad", lambda: 3) == 3  # nothing was stored by the failed build
    with pytest.raises(TypeError, match="key must be hashable"):
        g.cached(["list"], dict)


def test_reverse_edges_survive_clear_cache():
    und = Graph.from_edgelist(pd.DataFrame({"src": [1, 2], "dst": [2, 3]}), directed=False)
    rev = und.reverse_edge
    und.clear_cache()
    assert und.reverse_edge is rev  # built with the graph, not derived data
    both = Graph.from_edgelist(pd.DataFrame({"src": [1, 2], "dst": [2, 1]}), directed=True)
    assert both.reverse_edge is both.reverse_edge  # computed once, then cached
    assert H(both.reverse_edge).tolist() == [1, 0]


# ---------------------------------------------------------------------- weights_for


def test_weights_for_resolves_the_column():
    df = pd.DataFrame({"src": [1, 2, 3], "dst": [2, 3, 1], "a": [1.0, 2.0, 3.0],
                       "b": [0.5, -1.0, np.inf]})
    one = Graph.from_edgelist(df, weight="a", directed=True)
    w = one.weights_for(None, name="pagerank")
    assert H(w).tolist() == [1.0, 2.0, 3.0] and H(w).dtype == np.float32
    assert H(w).flags.c_contiguous and w.shape == (3,)
    assert one.weights_for(None, name="pagerank") is w  # cached
    assert one.weights_for(False, name="pagerank") is None
    assert H(one.weights_for("a", name="sssp", non_negative=True)).tolist() == [1, 2, 3]
    assert H(one.weights_for(True, name="als")).tolist() == [1, 2, 3]
    none = Graph.from_edgelist(df, directed=True)
    assert none.weights_for(None, name="pagerank") is None
    with pytest.raises(ValueError, match="als: needs edge weights, but the graph has none"):
        none.weights_for(None, name="als", required=True)
    with pytest.raises(ValueError, match="als: weight=False, but als needs edge weights"):
        one.weights_for(False, name="als", required=True)
    two = Graph.from_edgelist(df.assign(b=[0.5, 1.0, 2.0]), weight=["a", "b"], directed=True)
    with pytest.raises(ValueError, match=r"pagerank: the graph has 2 weight columns \['a', 'b'\]"
                                         "; pass weight= one of them"):
        two.weights_for(None, name="pagerank")
    assert H(two.weights_for("b", name="pagerank")).tolist() == [0.5, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"sssp: weight='c' is not a weight column of the graph "
                                         r"\(it has \['a', 'b'\]\)"):
        two.weights_for("c", name="sssp")
    with pytest.raises(TypeError, match="sssp: weight must be None, False or a weight column"):
        two.weights_for(1, name="sssp")


def test_weights_for_refuses_negative_weights():
    df = pd.DataFrame({"src": [1, 2, 3, 4], "dst": [2, 3, 1, 1], "w": [1.0, -2.0, 0.0, -0.5]})
    g = Graph.from_edgelist(df, weight="w", directed=True)
    assert H(g.weights_for("w", name="pagerank")).min() == -2.0  # allowed unless non_negative
    with pytest.raises(ValueError, match=r"label_propagation: weight column 'w' has 2 edges "
                                         r"with a negative or non-finite weight \(2->3 = -2, "
                                         r"4->1 = -0.5\); label_propagation needs non-negative"):
        g.weights_for(None, name="label_propagation", non_negative=True)
    und = Graph.from_edgelist(df, weight="w", directed=False)
    with pytest.raises(ValueError, match="has 2 edges with a negative"):  # each edge once
        und.weights_for("w", name="sssp", non_negative=True)


# ------------------------------------------------------------------ input kinds (inputs.py)


def test_every_declared_input_has_one_kind_object():
    from onyx_rapids import inputs, registry

    for spec in registry.ALGORITHMS.values():
        for item in spec.inputs:
            assert isinstance(item.kind, inputs.Kind) and item.kind.name in inputs.KINDS
    assert registry.Input("x", "vertex").kind is inputs.VERTEX  # a name: that kind's object
    with pytest.raises(ValueError, match="Input kind must be one of"):
        registry.Input("x", "edges")


def test_wanted_inputs_fill_one_start_vertex():
    from onyx_rapids import inputs, registry

    bfs = registry.get("bfs")
    assert [i.name for i in inputs.wanted(bfs, set())] == ["source"]
    assert [i.name for i in inputs.wanted(bfs, {"sources"})] == ["sources"]
    pagerank = registry.get("pagerank")
    assert inputs.wanted(pagerank, set()) == []  # optional personalization: left out
    lp = registry.get("label_propagation")
    assert [i.name for i in inputs.wanted(lp, set())] == ["labels", "k"]


def test_kinds_normalize_with_the_argument_named():
    from onyx_rapids import inputs

    g = Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 3], "dst": [2, 3, 1]}), directed=True)
    t = inputs.DISTRIBUTION.normalize(g, pd.DataFrame({"vertex": [1, 3], "p": [1.0, 3.0]}),
                                      "personalization")
    assert H(t)[:, 0].tolist() == [0.25, 0.0, 0.75]
    with pytest.raises(ValueError, match="personalization: values must not all be zero"):
        inputs.DISTRIBUTION.normalize(g, np.zeros(3, np.float32), "personalization")
    lp0, labelled, P = inputs.LABELS.normalize(g, pd.DataFrame({"vertex": [2], "label": [1]}), 2)
    assert P == 1 and H(labelled).tolist() == [False, True, False]
    assert H(lp0).tolist() == [[0.5, 0.5], [0.0, 1.0], [0.5, 0.5]]
    with pytest.raises(ValueError, match=r"labels must be integer classes in \[0, 2\)"):
        inputs.LABELS.normalize(g, pd.DataFrame({"vertex": [2], "label": [2]}), 2)
    with pytest.raises(ValueError, match="k \\(classes per partition\\) must be a positive"):
        inputs.LABELS.normalize(g, pd.DataFrame({"vertex": [2], "label": [0]}), 0)
    with pytest.raises(ValueError, match="potential must be symmetric"):
        inputs.MATRIX.normalize([[1.0, 2.0], [3.0, 1.0]], 2, "potential", "priors")
    with pytest.raises(ValueError, match="sources: "):
        inputs.starts(g, None, [7])
    with pytest.raises(ValueError, match="--sources ',': give vertex ids"):
        inputs.VERTICES.parse(",", "--sources")


def test_benchmark_inputs_are_seeded_and_follow_the_kinds():
    from onyx_rapids import inputs, registry

    g = Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 2]}), directed=True)
    spec = registry.get("belief_propagation")
    a = inputs.generate(spec, g, 3, np.random.default_rng(0), {})
    b = inputs.generate(spec, g, 3, np.random.default_rng(0), {})
    assert set(a) == {"priors", "potential"} and np.array_equal(H(a["priors"]), H(b["priors"]))
    assert H(a["priors"]).min() >= 0.5  # positive values
    assert inputs.generate(registry.get("bfs"), g, 1, None, {}) == {"source": 3}
    assert inputs.generate(registry.get("k_core"), g, 4, None, {}) == {"k": 1}
