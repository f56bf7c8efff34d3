"""Edge lists are undirected by default (0.2, docs/changes.md), as cuGraph's ``Graph()`` and
NetworkX's ``from_pandas_edgelist``: karate's edge list, each edge listed once, gives the
undirected graph's answers without ``directed=``; ``directed=True`` gives the one-way graph;
``from_csr`` keeps SciPy's directed default; the CLI reads a Parquet file as undirected unless
given ``--directed``."""

import inspect

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from graphs import run_cli
import onyx_rapids as onyx
from onyx_rapids import datasets, device
from onyx_rapids import dask as odask
from onyx_rapids.graph import Graph

H = device.to_host


@pytest.fixture(scope="module")
def karate():
    return datasets.load_edges("karate")


@pytest.fixture(scope="module")
def g(karate):
    return Graph.from_edgelist(karate)


def _pandas(df):
    return df if isinstance(df, pd.DataFrame) else df.to_pandas()


def _arrays(graph):
    return [H(a).tolist() for a in (graph.vertices, graph.out_offsets, graph.out_indices,
                                   graph.in_offsets, graph.in_indices)]


def test_edge_lists_build_the_undirected_graph_by_default(karate, g, tmp_path):
    assert len(karate) == 78 and bool((karate["src"] < karate["dst"]).all())  # each edge once
    assert not g.directed and (g.n, g.m) == (34, 156)
    assert _arrays(g) == _arrays(Graph.from_edgelist(karate, directed=False))
    one_way = Graph.from_edgelist(karate, directed=True)
    assert one_way.directed and one_way.m == 78
    path = tmp_path / "karate.parquet"
    karate.to_parquet(path)
    assert _arrays(Graph.from_parquet(path)) == _arrays(g)
    assert Graph.from_parquet(path, directed=True).m == 78


def test_dask_constructors_default_to_undirected():
    for build in (odask.Graph.from_edgelist, odask.Graph.from_parquet):
        assert inspect.signature(build).parameters["directed"].default is False


def test_from_csr_stays_directed_as_scipy():
    g = Graph.from_csr(np.array([0, 1, 2, 2]), np.array([1, 2]))  # 0->1->2
    assert g.directed and g.m == 2
    assert _pandas(onyx.bfs(g, source=0))["distance"].tolist() == [0, 1, 2]
    assert _pandas(onyx.bfs(g, source=2))["distance"].tolist() == [2**31 - 1] * 2 + [0]


def test_karate_answers_are_the_undirected_graphs(karate, g):
    """The README's first example: label propagation from one seed per club finds the two
    clubs (a one-way graph left 33 of 34 vertices in one class); PageRank and bfs answer as
    NetworkX does on ``nx.from_pandas_edgelist`` (undirected)."""
    ref = nx.from_pandas_edgelist(karate, "src", "dst")
    club = datasets.load_labels("karate").set_index("vertex")["club"]
    seeds = pd.DataFrame({"vertex": [0, 33], "label": [0, 1]})
    with pytest.warns(RuntimeWarning, match="did not converge"):  # 5 iterations: cheap, enough
        lp = onyx.label_propagation(g, seeds, k=2, max_iter=5)
    labels = _pandas(lp).set_index("vertex")["label"]
    assert float((labels.sort_index() == club.sort_index()).mean()) >= 0.9
    ranks = _pandas(onyx.pagerank(g)).set_index("vertex")["pagerank"]
    want = nx.pagerank(ref, tol=1e-10)  # vertex 0: 0.097 here, 0.015 one-way
    assert max(abs(float(ranks[v]) - want[v]) for v in ref) < 1e-4
    dist = _pandas(onyx.bfs(g, source=33)).set_index("vertex")["distance"]
    hops = nx.single_source_shortest_path_length(ref, 33)
    assert {int(v): int(d) for v, d in dist.items()} == hops  # all 34 reached


def test_cli_reads_a_file_as_undirected_unless_directed(capsys, tmp_path):
    edges = tmp_path / "path.parquet"
    pd.DataFrame({"u": [0, 1], "v": [1, 2]}).to_parquet(edges)  # 0-1-2
    common = ("run", "bfs", "--graph", edges, "--src", "u", "--dst", "v", "--source", "2")
    code, _, err = run_cli(capsys, *common, "--out", tmp_path / "u.parquet")
    assert code == 0, err
    assert "n=3, m=4 (undirected" in err
    assert pd.read_parquet(tmp_path / "u.parquet")["distance"].tolist() == [2, 1, 0]
    code, _, err = run_cli(capsys, *common, "--directed", "--out", tmp_path / "d.parquet")
    assert code == 0, err
    assert "n=3, m=2 (directed" in err
    assert pd.read_parquet(tmp_path / "d.parquet")["distance"].tolist() == [2**31 - 1] * 2 + [0]


@pytest.mark.parametrize("argv, needle", [
    (("run", "bfs", "--dataset", "karate", "--directed"), "'karate' is undirected"),
    (("run", "belief_propagation", "--directed"), "belief_propagation runs on an undirected"),
    (("run", "bfs", "--directed", "--undirected"), "not allowed with argument"),
])
def test_cli_directed_refused_where_it_cannot_apply(capsys, argv, needle):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and needle in err, err
