"""Rows that name the same edge: ``duplicates="first" | "last" | "min" | "sum" | "error"`` on
every edge-list constructor, the same in the device and the host build, and the UserWarning
when merged rows disagree in weight under the default; and the constructors' argument checks."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from onyx_rapids import device, io
from onyx_rapids.graph import Graph

H = device.to_host

# 1-2 three times (5, 1, 3), 2-1 once (7), 3-3 twice (2, 4), 1-3 twice with one weight.
ROWS = pd.DataFrame({"src": [1, 1, 2, 3, 1, 3, 1, 1],
                     "dst": [2, 2, 1, 3, 2, 3, 3, 3],
                     "w": [5.0, 1.0, 7.0, 2.0, 3.0, 4.0, 6.0, 6.0],
                     "c": [1.0, 9.0, 0.0, 1.0, 2.0, 1.0, 0.0, 0.0]})

# Expected weights of column w per edge, in the device graph's CSR order.
DIRECTED = {  # edges 1->2, 1->3, 2->1, 3->3
    "first": [5.0, 6.0, 7.0, 2.0], "last": [3.0, 6.0, 7.0, 4.0],
    "min": [1.0, 6.0, 7.0, 2.0], "sum": [9.0, 12.0, 7.0, 6.0],
}
UNDIRECTED = {  # 1-2 (rows 5, 1, 7, 3), 1-3, 3-3: stored 1->2, 1->3, 2->1, 3->1, 3->3
    "first": [5.0, 6.0, 5.0, 6.0, 2.0], "last": [3.0, 6.0, 3.0, 6.0, 4.0],
    "min": [1.0, 6.0, 1.0, 6.0, 2.0], "sum": [16.0, 12.0, 16.0, 12.0, 6.0],
}


def weights(g, column=0):
    return H(g.edge_weights[:, column]).tolist()


@pytest.mark.parametrize("directed, expected", [(True, DIRECTED), (False, UNDIRECTED)])
def test_rules_device_and_host_builds_agree(directed, expected):
    for mode, want in expected.items():
        dev = Graph.from_edgelist(ROWS, weight=["w", "c"], directed=directed, duplicates=mode,
                                  placement="device")
        assert weights(dev) == want, mode
        host = Graph.from_edgelist(ROWS, weight=["w", "c"], directed=directed,
                                   duplicates=mode, placement="host", chunk_rows=3)
        assert host.placement == "host"
        for name in ("out_offsets", "out_indices", "in_indices", "edge_weights"):
            assert np.array_equal(H(getattr(dev, name)), H(getattr(host, name))), (mode, name)
    # column by column: "min" of c over the 1->2 rows (1, 9, 2) is 1 though w's min is row 2's
    assert weights(Graph.from_edgelist(ROWS, weight=["w", "c"], directed=True,
                                       duplicates="min"), 1)[0] == 1.0


@pytest.mark.parametrize("placement", ["device", "host"])
def test_default_warns_with_count_and_keeps_first(placement):
    with pytest.warns(UserWarning) as record:
        g = Graph.from_edgelist(ROWS, weight="w", directed=True, placement=placement,
                                chunk_rows=3)
    assert len(record) == 1 and record[0].filename == __file__  # points at the caller
    text = str(record[0].message)
    assert "2 (source, destination) pairs (1 -> 2, 3 -> 3) appear in several rows whose " \
           "weights differ" in text
    assert "duplicates='first', the default" in text and "duplicates='last'" in text
    assert weights(g) == DIRECTED["first"]
    with pytest.warns(UserWarning, match=r"^2 vertex pairs \(1 - 2, 3 - 3\) appear"):
        Graph.from_edgelist(ROWS, weight="w", directed=False, placement=placement,
                            chunk_rows=3)


def test_silent_when_rows_agree_or_a_rule_is_chosen():
    agree = pd.DataFrame({"src": [1, 2, 1, 3], "dst": [2, 1, 2, 3], "w": [4.0, 4.0, 4.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Graph.from_edgelist(agree, weight="w", directed=False)  # u-v and v-u agree
        Graph.from_edgelist(agree, weight="w", directed=True)
        Graph.from_edgelist(ROWS, directed=True)  # no weights: nothing to disagree
        Graph.from_edgelist(ROWS, weight="w", directed=True, duplicates="first")
        Graph.from_edgelist(ROWS, weight="w", directed=True, multigraph=True)
        g = Graph.from_edgelist(ROWS, weight="w", directed=False, duplicates="sum")
        g.reorder("degree")  # the rebuild merges both stored copies, silently


def test_error_names_pairs_in_original_ids():
    named = ROWS.assign(src=ROWS["src"].map("n{}".format), dst=ROWS["dst"].map("n{}".format))
    with pytest.raises(ValueError, match=r"duplicates='error': 2 \(source, destination\) "
                                         r"pairs \(n1 -> n2, n3 -> n3\) appear in several rows"):
        Graph.from_edgelist(named, weight="w", directed=True, duplicates="error")
    with pytest.raises(ValueError, match=r"duplicates='error': 2 vertex pairs \(1 - 2, 3 - 3\)"):
        Graph.from_edgelist(ROWS, weight="w", directed=False, duplicates="error",
                            placement="host", chunk_rows=2)
    g = Graph.from_edgelist(ROWS.iloc[6:], weight="w", directed=True, duplicates="error")
    assert weights(g) == [6.0]  # rows that agree are no error


def test_parquet_and_bipartite_take_the_option(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_pandas(ROWS, preserve_index=False), path, row_group_size=3)
    for placement in ("device", "host"):
        g = Graph.from_parquet(path, weight="w", directed=True, duplicates="last",
                               placement=placement, chunk_rows=3)
        assert weights(g) == DIRECTED["last"]
    ratings = pd.DataFrame({"user": ["a", "a", "b"], "item": [1, 1, 1], "r": [2.0, 5.0, 1.0]})
    g = Graph.from_bipartite(ratings, "user", "item", weight="r", duplicates="sum")
    assert weights(g) == [7.0, 1.0, 7.0, 1.0]
    with pytest.warns(UserWarning, match=r"1 vertex pair \(user a - item 1\)"):
        Graph.from_bipartite(ratings, "user", "item", weight="r")


def test_sum_adds_rows_that_agree_too():
    counts = pd.DataFrame({"src": [1, 1, 1, 2], "dst": [2, 2, 2, 1], "w": [1.0, 1.0, 1.0, 1.0]})
    assert weights(Graph.from_edgelist(counts, weight="w", directed=True,
                                       duplicates="sum")) == [3.0, 1.0]
    assert weights(Graph.from_edgelist(counts, weight="w", directed=False,
                                       duplicates="sum")) == [4.0, 4.0]


def test_sum_overflow_is_refused():
    big = pd.DataFrame({"src": [1, 1], "dst": [2, 2], "w": [3e38, 3e38]})
    with pytest.raises(ValueError, match="summed weights .* exceed the float32 range"):
        Graph.from_edgelist(big, weight="w", directed=True, duplicates="sum")


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"weight": True}, TypeError, r"weight=True: a graph's weights come from columns; pass "
                                      r"the weight column's name \(e.g. weight='w'\)"),
        ({"weight": False}, TypeError, "weight=False: .* or weight=None for an unweighted"),
        ({"weight": 1}, ValueError, r"weight=1: no such column .*pass weight= the name"),
        ({"weight": {"w": 1}}, TypeError, "weight must be a column name or a list of names"),
        ({"source": True}, TypeError, r"source=True: pass the name of a column"),
        ({"source": None}, TypeError, "source must be a single column name, got None"),
        ({"destination": []}, ValueError, r"destination=\[\] names no column"),
        ({"source": ["src", "src"]}, ValueError, r"source=\['src', 'src'\] names a column more"),
        ({"directed": 1}, TypeError, "directed must be True or False, got 1"),
        ({"multigraph": "no"}, TypeError, "multigraph must be True or False"),
        ({"duplicates": "max"}, ValueError, r"duplicates='max': choose one of 'first', 'last'"),
        ({"duplicates": True}, ValueError, "duplicates=True: choose one of"),
        ({"placement": "gpu"}, ValueError, "placement"),
        ({"chunk_rows": 0}, ValueError, "chunk_rows must be a positive int"),
    ],
)
def test_edgelist_arguments_are_checked_by_name(kwargs, exc, match):
    args = {"weight": "w", "directed": True, **kwargs}
    with pytest.raises(exc, match=match):
        Graph.from_edgelist(ROWS, **args)


def test_other_constructors_check_arguments(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.Table.from_pandas(ROWS, preserve_index=False), path)
    with pytest.raises(TypeError, match="weight=True: a graph's weights come from columns"):
        Graph.from_parquet(path, weight=True, directed=True)
    with pytest.raises(ValueError, match="duplicates='mean': choose one of"):
        Graph.from_parquet(path, directed=True, duplicates="mean")
    with pytest.raises(TypeError, match="weight=True"):
        Graph.from_bipartite(ROWS, "src", "dst", weight=True)
    with pytest.raises(TypeError, match="df must be a pandas or cuDF DataFrame"):
        Graph.from_edgelist({"src": [1], "dst": [2]}, directed=True)
    with pytest.raises(TypeError, match="df must be a pandas or cuDF DataFrame"):
        Graph.from_bipartite([[1, 2]], "src", "dst")
    assert io.weight_column_names(["w", "c"]) == ["w", "c"]
