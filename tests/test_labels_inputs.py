"""Per-vertex inputs on a labelled graph (issue 35): frames with a ``vertex`` or ``node`` column
of labels, dicts keyed by labels and Series indexed by labels work as their integer-id
equivalents on the same graph built from integers; unknown labels are refused by name; start
vertices, the command line's ids and the generated inputs are labels; and
``pagerank(personalization=<one vertex>)`` runs the personalized PageRank engine whatever form
names the vertex (a one-key dict, as NetworkX passes it).

The labelled graph's names ``v00``.. sort as the integers do, so both graphs have the same
internal order and every normalized input must be equal, bit for bit.  Cheap: mostly the
inputs' normalization (no kernel), plus a few runs on ten vertices."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import cli, device, inputs, io
from onyx_rapids.graph import Graph

H = device.to_host
SRC = [0, 0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8]
DST = [1, 2, 2, 0, 4, 5, 6, 6, 7, 3, 0, 9]


def name(i: int) -> str:
    return f"v{i:02d}"


@pytest.fixture(scope="module")
def gi():
    return Graph.from_edgelist(pd.DataFrame({"src": SRC, "dst": DST}))


@pytest.fixture(scope="module")
def gl():
    return Graph.from_edgelist(pd.DataFrame({"src": [name(i) for i in SRC],
                                             "dst": [name(i) for i in DST]}))


def test_the_graphs_match(gi, gl):
    assert gl.id_map.labels is not None and gi.id_map.labels is None
    assert gl.id_map.original().tolist() == [name(i) for i in H(gi.vertices)]


# -- per-vertex values: both forms, normalized ---------------------------------------------


def _forms(ids, values, column="x"):
    """A frame with a ``vertex`` column, one with a ``node`` column, a dict and a Series, all
    keyed by ``ids`` (a list)."""
    return [pd.DataFrame({"vertex": ids, column: values}),
            pd.DataFrame({"node": ids, column: values}),
            dict(zip(ids, values)),
            pd.Series(values, index=ids)]


def _same(a, b):
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif hasattr(a, "shape"):
        x, y = H(a), H(b)
        assert x.dtype == y.dtype and np.array_equal(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("form", range(4))
def test_labels_by_label_normalize_as_by_id(gi, gl, form):
    ids, classes = [0, 9, 4], [1, 0, 1]
    a = inputs.LABELS.normalize(gl, _forms([name(i) for i in ids], classes, "label")[form], 2)
    b = inputs.LABELS.normalize(gi, _forms(ids, classes, "label")[form], 2)
    _same(a, b)
    assert H(a[1]).sum() == 3


@pytest.mark.parametrize("form", range(4))
def test_personalization_by_label_normalizes_as_by_id(gi, gl, form):
    ids, values = [3, 1, 8], [1.0, 2.0, 5.0]
    a = inputs.DISTRIBUTION.normalize(gl, _forms([name(i) for i in ids], values)[form], "p")
    b = inputs.DISTRIBUTION.normalize(gi, _forms(ids, values)[form], "p")
    _same(a, b)
    assert H(a)[8, 0] == pytest.approx(0.625)


def test_features_by_label_read_as_by_id(gi, gl):
    rows = {i: [float(i), 10.0 - i] for i in range(10)}
    frames = [(pd.DataFrame({"node": [name(i) for i in rows], "a": [r[0] for r in rows.values()],
                             "b": [r[1] for r in rows.values()]}),
               pd.DataFrame({"node": list(rows), "a": [r[0] for r in rows.values()],
                             "b": [r[1] for r in rows.values()]})),
              ({name(i): r for i, r in rows.items()}, rows),
              (pd.Series([r[0] for r in rows.values()], index=[name(i) for i in rows]),
               pd.Series([r[0] for r in rows.values()], index=list(rows)))]
    for labelled, integer in frames:
        a = inputs.VALUES.normalize(gl, labelled, "features")
        _same(a, inputs.VALUES.normalize(gi, integer, "features"))
    assert H(a)[:, 0].tolist() == list(range(10))


def test_a_partial_frame_gives_the_same_rows(gi, gl):
    a = io.read_vertex_frame(gl, pd.DataFrame({"node": ["v07", "v02"], "x": [1.0, 2.0]}),
                             complete=False)
    b = io.read_vertex_frame(gi, pd.DataFrame({"node": [7, 2], "x": [1.0, 2.0]}),
                             complete=False)
    _same(a, b)


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("given", [
    pd.DataFrame({"vertex": ["v01", "nope", "zed"], "x": [1.0, 1.0, 1.0]}),
    pd.DataFrame({"node": ["v01", "nope", "zed"], "x": [1.0, 1.0, 1.0]}),
    {"v01": 1.0, "nope": 1.0, "zed": 1.0},
    pd.Series([1.0, 1.0, 1.0], index=["v01", "nope", "zed"]),
])
def test_unknown_labels_are_named(gl, given):
    with pytest.raises(ValueError, match=r"personalization: 2 id\(s\) in .* are not vertices of "
                                         r"the graph: 'nope', 'zed'; drop those rows"):
        onyx.pagerank(gl, personalization=given)


def test_many_unknown_labels_show_a_few(gl):
    given = {f"x{i}": 1.0 for i in range(40)}
    with pytest.raises(ValueError, match="40 id") as e:
        inputs.LABELS.normalize(gl, given, 2)
    assert "'x0'" in str(e.value) and "'x39'" not in str(e.value)


def test_a_default_range_index_is_not_read_as_labels(gl):
    with pytest.raises(ValueError, match="default RangeIndex"):
        inputs.DISTRIBUTION.normalize(gl, pd.Series([1.0, 2.0]), "personalization")


def test_null_labels_in_an_index_are_refused(gl):
    with pytest.raises(ValueError, match="1 null vertex label"):
        inputs.DISTRIBUTION.normalize(gl, pd.Series([1.0, 2.0], index=["v01", None]), "p")


def test_labels_on_an_integer_graph_are_refused_with_the_reason(gi):
    with pytest.raises(TypeError, match="labelled ids"):
        inputs.DISTRIBUTION.normalize(gi, {"v01": 1.0}, "personalization")


# -- runs: labelled and integer graphs agree -------------------------------------------------


def _by_name(frame, column):
    return io.to_pandas(frame).set_index("vertex")[column]


def test_label_propagation_seeded_by_label(gi, gl):
    a = _by_name(onyx.label_propagation(gl, {"v00": 0, "v09": 1}, k=2), "label")
    b = _by_name(onyx.label_propagation(gi, pd.DataFrame({"node": [0, 9], "label": [0, 1]}),
                                        k=2), "label")
    assert [a[name(i)] for i in b.index] == b.tolist()


def test_sources_by_label(gi, gl):
    a = io.to_pandas(onyx.bfs(gl, sources=["v04", "v08"])).set_index("vertex")
    b = io.to_pandas(onyx.bfs(gi, sources=[4, 8])).set_index("vertex")
    for column in ("distance_0", "distance_1"):
        assert [a.loc[name(i), column] for i in b.index] == b[column].tolist()


def test_one_vertex_personalization_by_label_is_personalized_pagerank(gi, gl, monkeypatch):
    """A one-key dict, a one-row ``{node, values}`` frame and rows where only one value is
    positive all run personalized PageRank's engine (the n-vector path is not taken) and give
    its ranks exactly; the labelled graph's equal the integer graph's."""
    ppr = _by_name(onyx.personalized_pagerank(gi, [4], tol=1e-3), "ppr_0")

    def no_vector(*args, **kwargs):
        raise AssertionError("the one-vertex personalization built an n-vector")

    monkeypatch.setattr(inputs.Distribution, "column", no_vector)
    for given in ({"v04": 1.0}, pd.DataFrame({"node": ["v04"], "values": [3.0]}),
                  {"v04": 2.0, "v01": 0.0}):
        pr = _by_name(onyx.pagerank(gl, personalization=given, tol=1e-3), "pagerank")
        assert [pr[name(i)] for i in ppr.index] == ppr.tolist()
    pr = _by_name(onyx.pagerank(gi, personalization={4: 1.0}, tol=1e-3), "pagerank")
    assert pr.tolist() == ppr.tolist()


def test_several_vertices_take_the_distribution_path(gi, gl):
    a = _by_name(onyx.pagerank(gl, personalization={"v04": 1.0, "v08": 3.0}, tol=1e-3),
                 "pagerank")
    b = _by_name(onyx.pagerank(gi, personalization=pd.Series([1.0, 3.0], index=[4, 8]),
                               tol=1e-3), "pagerank")
    assert [a[name(i)] for i in b.index] == b.tolist()


def test_tuple_labels_name_one_vertex():
    """NetworkX's grid nodes are tuples: ``source=(0, 1)`` is one vertex, and a dict keyed by
    tuples (a MultiIndex in pandas) names those vertices."""
    g = Graph.from_networkx(nx.grid_2d_graph(2, 3))
    frame = io.to_pandas(onyx.bfs(g, source=(0, 1)))
    assert dict(zip(frame["vertex"], frame["distance"]))[(1, 2)] == 2
    t = H(inputs.DISTRIBUTION.normalize(g, {(0, 1): 1.0, (1, 2): 3.0}, "p"))[:, 0]
    where = {label: i for i, label in enumerate(g.id_map.original())}
    assert t[where[(0, 1)]] == pytest.approx(0.25) and t[where[(1, 2)]] == pytest.approx(0.75)
    assert inputs.DISTRIBUTION.one_vertex(inputs.DISTRIBUTION.read(g, {(1, 2): 1.0}, "p")) \
        == where[(1, 2)]


# -- generated inputs and defaults are labels ------------------------------------------------


def test_generated_inputs_are_labels(gi, gl):
    assert inputs.top_vertex(gl) == name(inputs.top_vertex(gi))
    a, b = inputs.lp_labels(gl, 2, fraction=0.3), inputs.lp_labels(gi, 2, fraction=0.3)
    assert a["vertex"].tolist() == [name(i) for i in b["vertex"]]
    assert a["label"].tolist() == b["label"].tolist()
    x = inputs.VERTICES.generate(gl, 3, np.random.default_rng(5))
    y = inputs.VERTICES.generate(gi, 3, np.random.default_rng(5))
    assert list(x) == [name(i) for i in y]


# -- the command line ------------------------------------------------------------------------


def test_cli_vertex_ids_follow_the_graph(gi, gl):
    assert inputs.VERTEX.parse("v03", "--source", gl) == "v03"
    assert inputs.VERTEX.parse(" 4 ", "--source", gi) == 4
    assert inputs.VERTICES.parse("v01,v02", "--sources", gl) == ["v01", "v02"]
    strings = Graph.from_edgelist(pd.DataFrame({"src": ["1", "2"], "dst": ["2", "10"]}))
    assert inputs.VERTEX.parse("10", "--source", strings) == "10"  # a label, not the int
    mixed = Graph.from_networkx(nx.Graph([(1, "a"), ("a", "b")]))
    assert inputs.VERTEX.parse("1", "--source", mixed) == 1  # the int is the label
    assert inputs.VERTEX.parse("b", "--source", mixed) == "b"
    with pytest.raises(ValueError, match="--source 'ann' is not a vertex id .* integers"):
        inputs.VERTEX.parse("ann", "--source", gi)


def test_cli_runs_from_a_label(capsys, tmp_path):
    edges = tmp_path / "names.parquet"
    pd.DataFrame({"src": ["ann", "bob", "cy", "ann"],
                  "dst": ["bob", "cy", "dee", "dee"]}).to_parquet(edges)
    out = tmp_path / "bfs.parquet"
    code = cli.main(["run", "bfs", "--graph", str(edges), "--source", "cy", "--quiet",
                     "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    result = pd.read_parquet(out).set_index("vertex")
    assert result.loc["cy", "distance"] == 0 and result.loc["dee", "distance"] == 1
    code = cli.main(["run", "bfs", "--graph", str(edges), "--source", "zed", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "'zed'" in err and "Traceback" not in err
