"""Betweenness on long searches: the levels past ``DENSE_LEVELS`` run as (vertex, lane) pairs
(betweenness_centrality.py, kernels/brandes.py).  The threshold is lowered here (2 or 3) so
that the simulator runs the sparse levels on graphs of tens of vertices; every result is
checked against the float64 oracle (oracles_betweenness.py), and the sparse run against the
dense-only one (threshold out of reach).
"""

import time
import warnings

import numpy as np
import pandas as pd
import pytest

import oracles_betweenness as oracle
from graphs import csr_edges
from onyx_rapids import (Graph, betweenness_centrality, datasets, device,
                         edge_betweenness_centrality, io)
from onyx_rapids.algorithms import betweenness_centrality as bc_module

RTOL = 1e-9
NFA = dict(feature_aware=False)
NEVER = 10**9  # a threshold no search reaches: dense levels only


def _graph(edges, directed, vertices=None):
    return Graph.from_edgelist(pd.DataFrame(edges, columns=["src", "dst"]), directed=directed,
                               vertices=vertices)


SHAPES = {
    "path": _graph([(i, i + 1) for i in range(11)], directed=False),
    "grid": Graph.from_edgelist(datasets.grid_2d(4, 5)),
    "directed_grid": Graph.from_edgelist(datasets.grid_2d(4, 5), directed=True),
    # a directed path, a directed cycle, a self-loop and an isolated vertex
    "disconnected": _graph([(i, i + 1) for i in range(6)] + [(7 + i, 7 + (i + 1) % 5)
                                                              for i in range(5)] + [(3, 3)],
                           directed=True, vertices=[12]),
}


def _oracle(g, sources=None, **kw):
    src, dst = csr_edges(g)
    return oracle.betweenness(g.n, src, dst, directed=g.directed, sources=sources, **kw)


def _oracle_edges(g, sources=None, **kw):
    src, dst = csr_edges(g)
    return oracle.edge_betweenness(g.n, src, dst, directed=g.directed, sources=sources, **kw)


def _values(df):
    """Vertex values in internal id order (every graph here has ids 0..n-1)."""
    df = io.to_pandas(df)
    assert df["vertex"].tolist() == list(range(len(df)))
    return df["betweenness_centrality"].to_numpy()


def _edge_values(g, df):
    """{(u, v): value}, an undirected edge as (min, max), as the oracle's."""
    df = io.to_pandas(df)
    keys = [(u, v) if g.directed else (min(u, v), max(u, v))
            for u, v in zip(df["src"].tolist(), df["dst"].tolist())]
    return dict(zip(keys, df["betweenness_centrality"].tolist()))


def _check_edges(g, df, expected):
    got = _edge_values(g, df)
    assert sorted(got) == sorted(expected)
    np.testing.assert_allclose([got[key] for key in expected], list(expected.values()),
                               rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_sparse_levels_match_the_oracle(shape, monkeypatch):
    monkeypatch.setattr(bc_module, "DENSE_LEVELS", 2)
    g = SHAPES[shape]
    df, info = betweenness_centrality(g, return_info=True, **NFA)
    np.testing.assert_allclose(_values(df), _oracle(g), rtol=RTOL, atol=1e-12)
    assert info["sparse_levels"] > 0
    assert info.directions[2:] == ["sparse"] * info["sparse_levels"]
    assert "sparse" not in info.directions[:2]
    _check_edges(g, edge_betweenness_centrality(g, **NFA), _oracle_edges(g))


@pytest.mark.parametrize("endpoints", [False, True])
def test_given_sources_with_and_without_endpoints(endpoints, monkeypatch):
    monkeypatch.setattr(bc_module, "DENSE_LEVELS", 3)
    g = SHAPES["grid"]
    sources = [0, 7, 19]
    df = betweenness_centrality(g, sources=sources, endpoints=endpoints, normalized=False,
                                **NFA)
    expected = _oracle(g, sources, endpoints=endpoints, normalized=False)
    np.testing.assert_allclose(_values(df), expected, rtol=RTOL, atol=1e-12)


def test_several_batches(monkeypatch):
    monkeypatch.setattr(bc_module, "DENSE_LEVELS", 2)
    monkeypatch.setattr(bc_module, "MAX_LANES", 3)
    g = SHAPES["directed_grid"]
    sources = [0, 1, 5, 6, 12, 2, 10]  # 7 sources: 3 batches of 3 lanes, 2 of them empty
    df, info = betweenness_centrality(g, sources=sources, endpoints=True, return_info=True,
                                      **NFA)
    assert (info["lanes"], info["batches"]) == (3, 3) and info["sparse_levels"] > 0
    np.testing.assert_allclose(_values(df), _oracle(g, sources, endpoints=True), rtol=RTOL,
                               atol=1e-12)
    _check_edges(g, edge_betweenness_centrality(g, sources=sources, **NFA),
                 _oracle_edges(g, sources))


@pytest.mark.parametrize("options", [dict(direction="push", **NFA),
                                     dict(direction="pull", feature_aware=True)])
def test_sparse_and_dense_only_agree(options, monkeypatch):
    g = SHAPES["grid"]  # 4 x 5: the searches from the sources below run 8 and 5 levels
    runs = {}
    for threshold in (3, NEVER):
        monkeypatch.setattr(bc_module, "DENSE_LEVELS", threshold)
        runs[threshold] = betweenness_centrality(g, sources=[0, 12], return_info=True,
                                                 **options)
    (sparse, sparse_info), (dense, dense_info) = runs[3], runs[NEVER]
    np.testing.assert_allclose(_values(sparse), _values(dense), rtol=RTOL, atol=1e-12)
    assert dense_info["sparse_levels"] == 0 and sparse_info["sparse_levels"] == 8 - 3
    assert sparse_info.iterations == dense_info.iterations == 8
    assert sparse_info.directions == [options["direction"]] * 3 + ["sparse"] * 5
    assert dense_info.directions == [options["direction"]] * 8


@pytest.mark.parametrize("length, switched", [(3, 0), (4, 1)])
def test_sparse_levels_exactly_when_a_search_reaches_the_threshold(length, switched,
                                                                  monkeypatch):
    """A directed path of ``length`` vertices from vertex 0: levels 0..length-1; the switch
    happens when level 3 (the threshold) has vertices, and then runs that one level sparse."""
    monkeypatch.setattr(bc_module, "DENSE_LEVELS", 3)
    g = _graph([(i, i + 1) for i in range(length - 1)], directed=True)
    df, info = betweenness_centrality(g, sources=[0], normalized=False, endpoints=True,
                                      return_info=True, **NFA)
    assert info["sparse_levels"] == switched and info.iterations == length
    np.testing.assert_allclose(_values(df), _oracle(g, [0], normalized=False, endpoints=True),
                               rtol=RTOL)


# ------------------------------------------------------------------------------ on a GPU


def _timed(g, sources, threshold, monkeypatch):
    monkeypatch.setattr(bc_module, "DENSE_LEVELS", threshold)
    start = time.perf_counter()
    df, info = betweenness_centrality(g, sources=sources, return_info=True)
    device.synchronize()
    return _values(df), info, time.perf_counter() - start


@pytest.mark.gpu
def test_grid_256_sparse_equals_dense_only_on_the_gpu(monkeypatch):
    g = Graph.from_edgelist(datasets.grid_2d(256, 256))
    sources = bc_module.sample_sources(g, 64, 3)
    threshold = bc_module.DENSE_LEVELS
    _timed(g, sources[:2], threshold, monkeypatch)  # compiles the dense and sparse kernels
    sparse, sparse_info, sparse_s = _timed(g, sources, threshold, monkeypatch)
    dense, dense_info, dense_s = _timed(g, sources, NEVER, monkeypatch)
    print(f"\n256 x 256 grid, 64 sources, {dense_info.iterations} levels: sparse past level "
          f"{threshold} ({sparse_info['sparse_levels']} sparse levels) {sparse_s:.3f} s, "
          f"dense only {dense_s:.3f} s")
    assert sparse_info["sparse_levels"] > 0 and dense_info["sparse_levels"] == 0
    assert sparse_info.iterations == dense_info.iterations
    np.testing.assert_allclose(sparse, dense, rtol=RTOL, atol=1e-12)


def test_values_past_float64_are_reported_not_silently_returned():
    """Path counts past float64's range (a large grid's) make values inf / NaN: the call says
    how many, naming the algorithm."""
    values = device.asarray(np.array([0.5, np.nan, np.inf, 1.0]))
    with pytest.warns(RuntimeWarning, match=r"betweenness_centrality: 2 of 4 vertices have no "
                                            r"finite value"):
        bc_module.warn_not_finite(values, "betweenness_centrality", "vertices")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bc_module.warn_not_finite(values[:1], "betweenness_centrality", "vertices")
