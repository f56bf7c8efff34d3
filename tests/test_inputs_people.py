"""Per-vertex inputs as people hold them (issue 35): NetworkX's ``node`` column, dicts and
Series keyed by vertex, a default RangeIndex refused instead of read as ids, and bipartite
vertices named ``(side, id)``.  Cheap: the inputs' normalization, plus a few runs on graphs
of a handful of vertices."""

import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import onyx_rapids as onyx
from onyx_rapids import datasets, device, inputs, io
from onyx_rapids.graph import Graph

H = device.to_host
FIX = r"name the id column 'vertex' \(or 'node'\), or set it as the index"


@pytest.fixture(scope="module")
def karate():
    return Graph.from_edgelist(datasets.load_edges("karate"), directed=False)


@pytest.fixture(scope="module")
def g():
    """Ids 10, 20, 30 (internal 0, 1, 2): positions and ids differ."""
    return Graph.from_edgelist(pd.DataFrame({"src": [30, 10, 20], "dst": [10, 20, 30]}),
                               directed=True)


@pytest.fixture(scope="module")
def gb():
    ratings = pd.DataFrame({"user": [1, 2, 1], "item": [1, 3, 5]})
    return Graph.from_bipartite(ratings, "user", "item")


# --------------------------------------------------------------------- the id column


def test_node_column_seeds_the_named_vertices(karate):
    """The issue's example: label_propagation's seeds {node: [0, 33], label: [0, 1]} label
    vertices 0 and 33 (the frame's default RangeIndex was read as ids 0 and 1)."""
    seeds = pd.DataFrame({"node": [0, 33], "label": [0, 1]})
    lp0, labelled, parts = inputs.LABELS.normalize(karate, seeds, 2)
    at = H(karate.to_internal([0, 33]))
    assert parts == 1 and np.flatnonzero(H(labelled)).tolist() == sorted(at.tolist())
    assert H(lp0)[at].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    # the same seeds keyed by 'vertex' give the same start
    same = inputs.LABELS.normalize(karate, seeds.rename(columns={"node": "vertex"}), 2)
    assert np.array_equal(H(same[0]), H(lp0))


def test_feature_frame_keyed_by_node_has_no_id_column(g):
    x = H(g.vertex_property(pd.DataFrame({"node": [30, 10, 20], "a": [3.0, 1.0, 2.0]})))
    assert x.tolist() == [[1.0], [2.0], [3.0]]
    table = pa.table({"node": [20, 30, 10], "a": [2.0, 3.0, 1.0]})
    assert H(g.vertex_property(table))[:, 0].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("values, match", [
    (pd.DataFrame({"a": [1.0, 2.0, 3.0]}), FIX),
    (pd.DataFrame({"id": [10, 20, 30], "a": [1.0, 2.0, 3.0]}), FIX),
    (pd.Series([1.0, 2.0, 3.0]), r"x: the Series has a default RangeIndex.*here they are not; "
                                 r"index it by vertex id.*or pass its \.to_numpy\(\)"),
    (pa.table({"a": [1.0, 2.0, 3.0]}), r"x: .*pyarrow Table, which has no index.*'node'"),
    (pd.DataFrame({"vertex": [10, 20, 30], "node": [10, 20, 30], "a": 1.0}),
     "both a 'vertex' and a 'node' column"),
])
def test_row_positions_are_never_vertex_ids(g, values, match):
    with pytest.raises(ValueError, match=match):
        g.vertex_property(values, name="x")


def test_an_explicit_index_still_keys_the_rows():
    """A named RangeIndex (set on purpose), a stepped one and an integer index are ids. A
    Series's default RangeIndex (pandas 3 gives one to ``pd.Series({0: .., 1: ..})``) is read
    where ids and positions agree; a frame's is refused even there (a column may hold the
    ids)."""
    h = Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}), directed=True)
    named = pd.Series([5.0, 6.0, 7.0], index=pd.RangeIndex(3, name="vertex"))
    assert H(h.vertex_property(named))[:, 0].tolist() == [5.0, 6.0, 7.0]
    assert H(h.vertex_property(pd.Series([5.0, 6.0, 7.0], index=[2, 1, 0])))[:, 0].tolist() \
        == [7.0, 6.0, 5.0]
    stepped = pd.Series({0: 1.0, 2: 2.0})  # RangeIndex(0, 4, 2): ids
    assert H(inputs.DISTRIBUTION.normalize(h, stepped, "p"))[:, 0].tolist() == \
        pytest.approx([1 / 3, 0.0, 2 / 3])
    assert H(h.vertex_property(pd.Series({0: 5.0, 1: 6.0, 2: 7.0})))[:, 0].tolist() == \
        [5.0, 6.0, 7.0]
    with pytest.raises(ValueError, match="default RangeIndex"):
        h.vertex_property(pd.DataFrame({"a": [5.0, 6.0, 7.0]}))
    with pytest.raises(ValueError, match="default RangeIndex"):
        h.reorder("degree").vertex_property(pd.Series([5.0, 6.0, 7.0]))


def test_cli_files_keyed_by_node(tmp_path):
    path = tmp_path / "seeds.parquet"
    pd.DataFrame({"node": [0, 33], "label": [0, 1]}).to_parquet(path)
    assert list(inputs.LABELS.parse(str(path), "--labels").columns) == ["node", "label"]
    pd.DataFrame({"id": [0], "label": [0]}).to_parquet(path)
    with pytest.raises(ValueError, match=r"--labels .* needs a 'vertex' \(or 'node'\) column"):
        inputs.LABELS.parse(str(path), "--labels")


# ------------------------------------------------------------- dicts and Series


def test_personalization_dict_series_and_node_frame_agree(karate):
    want = inputs.DISTRIBUTION.normalize(
        karate, pd.DataFrame({"vertex": [0, 33], "p": [1.0, 1.0]}), "personalization")
    for held in ({0: 1.0, 33: 1.0}, pd.Series({0: 1.0, 33: 1.0}),
                 pd.DataFrame({"node": [33, 0], "values": [1.0, 1.0]})):
        got = inputs.DISTRIBUTION.normalize(karate, held, "personalization")
        assert np.array_equal(H(got), H(want)), held
    assert sorted(np.flatnonzero(H(want)[:, 0]).tolist()) == sorted(
        H(karate.to_internal([0, 33])).tolist())


def test_labels_as_a_series_or_dict_of_the_labelled_vertices(karate):
    frame = inputs.LABELS.normalize(karate, pd.DataFrame({"vertex": [0, 33], "label": [0, 1]}),
                                    2)
    for held in (pd.Series([0, 1], index=[0, 33]), {0: 0, 33: 1}, {33: 1, 0: 0}):
        lp0, labelled, parts = inputs.LABELS.normalize(karate, held, 2)
        assert parts == 1
        assert np.array_equal(H(lp0), H(frame[0])) and np.array_equal(H(labelled),
                                                                      H(frame[1]))
    with pytest.raises(ValueError, match=r"labels must be integer classes in \[0, 2\)"):
        inputs.LABELS.normalize(karate, {0: 2}, 2)


def test_feature_dicts(g):
    x = H(g.vertex_property({30: [3.0, 6.0], 10: [1.0, 4.0], 20: [2.0, 5.0]}))
    assert x.tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert H(g.vertex_property({30: 3.0, 10: 1.0, 20: 2.0}))[:, 0].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="rows of one length"):
        g.vertex_property({30: [1.0], 10: [1.0, 2.0], 20: [1.0]}, name="x")
    with pytest.raises(ValueError, match="x: the dict is empty"):
        g.vertex_property({}, name="x")
    with pytest.raises(ValueError, match=r"x: 1 vertices have no row.*20"):
        g.vertex_property({30: 3.0, 10: 1.0}, name="x")
    with pytest.raises(ValueError, match=r"not vertices of the graph: 40"):
        g.vertex_property({30: 3.0, 10: 1.0, 20: 2.0, 40: 0.0}, name="x")
    columns = {"node": [20, 30, 10], "a": [2.0, 3.0, 1.0]}  # a dict of columns, pandas-style
    assert H(g.vertex_property(columns))[:, 0].tolist() == [1.0, 2.0, 3.0]


def test_keyed_pandas_gives_the_partitioned_readers_a_vertex_column():
    for held in ({5: 1.0, 7: 2.0}, pd.Series([1.0, 2.0], index=[5, 7]),
                 pd.DataFrame({"node": [5, 7], "value": [1.0, 2.0]}),
                 pd.DataFrame({"value": [1.0, 2.0]}, index=pd.Index([5, 7], name="id"))):
        frame = io.keyed_pandas(held, "x", np.array([5, 7]))
        assert frame.to_dict("list") == {"vertex": [5, 7], "value": [1.0, 2.0]}, held
    with pytest.raises(ValueError, match="default RangeIndex"):
        io.keyed_pandas(pd.DataFrame({"value": [1.0]}), "x", np.array([0, 1]))
    with pytest.raises(ValueError, match="default RangeIndex"):
        io.keyed_pandas(pd.Series([1.0]), "x", np.array([5, 7]))
    assert io.keyed_pandas(pd.Series([1.0]), "x", np.array([0, 1]))["vertex"].tolist() == [0]


def test_sources_frame_keyed_by_node(g):
    ids = io.read_vertex_ids(pd.DataFrame({"node": [30, 10]}), "sources")
    assert H(ids).tolist() == [30, 10]


def test_pagerank_personalization_dict_is_networkx_s():
    """One run: NetworkX's personalization dict (vertices left out get 0) gives NetworkX's
    ranks."""
    edges = pd.DataFrame({"src": [0, 1, 2, 3, 0], "dst": [1, 2, 3, 0, 2]})
    want = nx.pagerank(nx.from_pandas_edgelist(edges, "src", "dst", create_using=nx.DiGraph),
                       personalization={0: 1.0, 3: 3.0}, tol=1e-10)
    g4 = Graph.from_edgelist(edges, directed=True)
    got = io.to_pandas(onyx.pagerank(g4, personalization={0: 1.0, 3: 3.0}, tol=1e-7))
    ranks = dict(zip(got["vertex"].tolist(), got["pagerank"].tolist()))
    assert ranks == pytest.approx(want, abs=1e-5)


# --------------------------------------------------------------- bipartite graphs


def test_bfs_starts_from_side_and_id(gb):
    df = io.to_pandas(onyx.bfs(gb, source=("user", 1)))
    reached = {(s, v): d for s, v, d in zip(df["side"], df["vertex"], df["distance"])}
    assert reached[("user", 1)] == 0 and reached[("item", 1)] == 1 and reached[("item", 5)] == 1
    assert reached[("user", 2)] == 2**31 - 1
    many = io.to_pandas(onyx.bfs(gb, sources=[("item", 3), ("left", 1)]))
    assert many.loc[(many["side"] == "user") & (many["vertex"] == 2), "distance_0"].item() == 1
    assert many.loc[(many["side"] == "user") & (many["vertex"] == 1), "distance_1"].item() == 0
    frame = pd.DataFrame({"side": ["item"], "vertex": [3]})
    assert inputs.starts(gb, None, frame).tolist() == H(gb.to_internal([3], side="item")).tolist()


@pytest.mark.parametrize("source, sources, match", [
    (1, None, r"source=1: this graph is bipartite \('user', 'item'\).*source=\('user', 1\) or "
              r"\('item', 1\)"),
    (None, [1, 2], r"sources: 1: .*sources=\[\('user', 1\)\]"),
    (("users", 1), None, r"source: \('users', 1\) names no side of this graph; a side is 'user' "
                         r"or 'item'"),
    (("item", 2), None, r"source: .*not a vertex of this graph on side 'item': 2"),
    (None, [], "sources must name at least one vertex"),
])
def test_bipartite_starts_are_refused_with_the_fix(gb, source, sources, match):
    with pytest.raises(ValueError, match=match):
        inputs.starts(gb, source, sources)


def test_bipartite_values_keyed_by_side_and_id(gb):
    held = {("user", 1): 1.0, ("item", 3): 3.0}
    t = H(inputs.DISTRIBUTION.normalize(gb, held, "personalization"))[:, 0]
    at = [gb.to_internal(1, side="user"), gb.to_internal(3, side="item")]
    assert np.flatnonzero(t).tolist() == sorted(at) and t[at].tolist() == [0.25, 0.75]
    frame = pd.DataFrame({"side": ["user", "item"], "node": [1, 3], "p": [1.0, 3.0]})
    assert np.array_equal(H(inputs.DISTRIBUTION.normalize(gb, frame, "personalization"))[:, 0],
                          t)
