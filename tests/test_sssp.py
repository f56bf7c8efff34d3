import numpy as np
import pandas as pd
import pytest

import oracles_traversal as oracle
from graphs import build, csr_edges, predecessor_ids
from onyx_rapids import Graph, bfs, device, io, sssp


def _weighted(src, dst, w, **kw):
    df = pd.DataFrame({"src": src, "dst": dst, "w": np.asarray(w, dtype=np.float32)})
    return Graph.from_edgelist(df, "src", "dst", weight="w", directed=True, **kw)


def _shapes():
    rng = np.random.default_rng(7)
    path = _weighted(np.arange(24), np.arange(1, 25), rng.random(24) * 3 + 0.01)
    star = _weighted(np.r_[np.zeros(12, int), np.arange(1, 6)],
                     np.r_[np.arange(1, 13), np.zeros(5, int)], rng.random(17) + 0.5)
    pieces = _weighted([0, 1, 2, 10, 11, 11], [1, 2, 0, 11, 12, 11],
                       [0.5, 1.5, 2.0, 1.0, 0.25, 0.0], vertices=[99])
    # zero-weight cycles on the shortest paths, many ties, multi-edges and self-loops
    src = rng.integers(0, 16, 48)
    dst = rng.integers(0, 16, 48)
    zeros = _weighted(np.r_[src, 3, 4, 5, 6, 6], np.r_[dst, 4, 5, 3, 6, 6],
                      np.r_[rng.choice([0.0, 0.5, 1.0], 48), 0, 0, 0, 0, 2])
    # vertex 5 is first reached from 9; 3 then from 5, and 3 -> 5 offers the same distance with a
    # smaller parent id: a (distance, parent) min would make 3 and 5 each other's parent
    trap = _weighted([0, 9, 5, 3, 3, 0], [9, 5, 3, 5, 7, 7], [1.0, 0.0, 0.0, 0.0, 0.0, 4.0])
    return {"path": path, "star": star, "pieces": pieces, "zeros": zeros, "trap": trap,
            "random": build("directed", seed=3, weights=1),
            "unweighted": build("undirected", seed=4)}


SHAPES = _shapes()


def _weights(g):
    if g.edge_weights is None:
        return np.ones(g.m)
    return device.to_host(g.edge_weights[:, 0]).astype(np.float64)


def _check_single(g, source, df):
    src, dst = csr_edges(g)
    w = _weights(g)
    s = int(device.to_host(g.to_internal(source)))
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    assert df["distance"].dtype == np.float32
    got = df["distance"].to_numpy()
    np.testing.assert_allclose(got, oracle.sssp(g.n, src, dst, w, s), rtol=1e-5, atol=0)
    oracle.check_predecessors(g.n, src, dst, got, predecessor_ids(g, df["predecessor"]), s,
                              weights=w)


def _source(g):
    ids = device.to_host(g.vertices)
    return int(ids[0]) if g.n < 10 else int(ids[len(ids) // 3])


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
def test_single_source_matches_dijkstra_with_valid_predecessors(shape, direction):
    g = SHAPES[shape]
    source = _source(g)
    _check_single(g, source, sssp(g, source=source, direction=direction))


@pytest.mark.parametrize("shape", ["path", "zeros", "trap", "random"])
def test_result_does_not_depend_on_delta(shape):
    g = SHAPES[shape]
    source = _source(g)
    runs = {}
    for delta in [1e-7, 0.05, 0.7, 3, 1e30]:
        df, info = sssp(g, source=source, delta=delta, direction="auto", return_info=True)
        _check_single(g, source, df)
        assert info["delta"] == delta and info["converged"]
        assert len(info["directions"]) == info["iterations"]
        runs[delta] = (df, info)
    # the float32 fixpoint is unique (min over walks of left-to-right float32 sums): equal bits
    first = runs[1e-7][0]["distance"].to_numpy()
    for df, _ in runs.values():
        np.testing.assert_array_equal(df["distance"].to_numpy(), first)
    # Bellman-Ford (one bucket) versus nearly one bucket per distinct distance
    assert runs[1e30][1]["buckets"] == 1
    distinct = np.unique(first[np.isfinite(first)]).size
    assert runs[1e-7][1]["buckets"] == distinct


def test_zero_weight_cycle_predecessors_form_a_tree():
    g = SHAPES["trap"]
    for direction in ["push", "pull"]:
        df = io.to_pandas(sssp(g, source=0, direction=direction, delta=1.0))
        assert df["distance"].to_numpy().tolist() == [0.0, 1.0, 1.0, 1.0, 1.0]  # vertices 0, 3, 5, 7, 9
        assert df["predecessor"].isna().tolist() == [True, False, False, False, False]
        assert df["predecessor"].tolist()[1:] == [5, 9, 3, 0]


def test_unweighted_graph_uses_weight_one_and_agrees_with_bfs():
    g = SHAPES["unweighted"]
    source = _source(g)
    df = sssp(g, source=source)
    hops = bfs(g, source=source)["distance"].to_numpy()
    expected = np.where(hops == 2**31 - 1, np.inf, hops).astype(np.float32)
    np.testing.assert_array_equal(df["distance"].to_numpy(), expected)


@pytest.mark.parametrize("chosen, fa, direction", [([2], True, "auto"), ([0, 5, 5], True, "push"),
                                                   ([0, 5, 13], False, "pull"),
                                                   ([13, 1, 7], True, "pull")])
def test_multi_source_is_k_traversals_at_once(chosen, fa, direction):
    g = SHAPES["random"]
    src, dst = csr_edges(g)
    ids = device.to_host(g.vertices)[chosen]  # a repeated source gives two equal columns
    df, info = sssp(g, sources=ids, feature_aware=fa, direction=direction, delta=0.4,
                    return_info=True)
    assert len(info.directions) == info.iterations and set(info.directions) <= {"push", "pull"}
    k = len(chosen)
    assert list(df.columns) == ["vertex"] + [f"distance_{f}" for f in range(k)]
    got = np.stack([df[f"distance_{f}"].to_numpy() for f in range(k)], axis=1)
    assert got.dtype == np.float32
    expected = oracle.multi_sssp(g.n, src, dst, _weights(g), chosen)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=0)
    assert np.isinf(got).any()  # the random graph has vertices no source reaches


def test_multi_source_with_zero_weight_cycles():
    g = SHAPES["zeros"]
    src, dst = csr_edges(g)
    chosen = [0, 6, 11]
    df = sssp(g, sources=device.to_host(g.vertices)[chosen], delta=0.5)
    got = np.stack([df[f"distance_{f}"].to_numpy() for f in range(3)], axis=1)
    np.testing.assert_allclose(got, oracle.multi_sssp(g.n, src, dst, _weights(g), chosen),
                               rtol=1e-5, atol=0)


def test_single_vertex_and_info():
    g = _weighted([5], [5], [2.0])
    df, info = sssp(g, source=5, return_info=True)
    assert df["distance"].to_numpy().tolist() == [0.0] and df["predecessor"].isna().all()
    assert info["converged"] and info["iterations"] == 1 and info["buckets"] == 1


def test_default_delta_is_256_mean_weight_over_mean_degree_and_one_source_pushes():
    g = SHAPES["random"]
    _, info = sssp(g, source=_source(g), return_info=True)
    assert info["delta"] == pytest.approx(256 * _weights(g).mean() / (g.m / g.n))
    assert info["direction"] == "push"
    _, info = sssp(SHAPES["unweighted"], source=0, return_info=True)
    assert info["delta"] == pytest.approx(256 * SHAPES["unweighted"].n / SHAPES["unweighted"].m)
    zero = _weighted([0, 1], [1, 0], [0.0, 0.0])
    df, info = sssp(zero, source=1, return_info=True)
    assert info["delta"] == 1.0 and df["distance"].to_numpy().tolist() == [0.0, 0.0]


def test_no_predecessor_is_null_even_where_minus_one_is_a_vertex():
    g = _weighted([3, -1, 3, 3], [-1, 4, 5, 4], [1.0, 1.0, 0.5, 5.0], vertices=[7])
    df = io.to_pandas(sssp(g, 3))
    got = dict(zip(df["vertex"].tolist(), df["predecessor"].tolist()))
    assert str(df["predecessor"].dtype) == "Int64"
    assert got[-1] == 3 and got[4] == -1 and got[5] == 3  # 4 by way of -1 (2.0 < 5.0)
    assert df.loc[df["vertex"].isin([3, 7]), "predecessor"].isna().all()
    assert df["predecessor"].isna().sum() == 2


def test_weight_chooses_the_column():
    frame = pd.DataFrame({"src": [0, 0, 1], "dst": [1, 2, 2], "short": [1.0, 5.0, 1.0],
                          "long": [9.0, 1.0, 9.0]})
    g = Graph.from_edgelist(frame, "src", "dst", weight=["short", "long"], directed=True)
    distance = lambda df: df["distance"].to_numpy().tolist()  # noqa: E731
    assert distance(sssp(g, 0, weight="short")) == [0.0, 1.0, 2.0]
    assert distance(sssp(g, 0, weight="long")) == [0.0, 9.0, 1.0]
    with pytest.raises(ValueError, match=r"weight: the graph has 2 weight columns "
                                         r"\['short', 'long'\]; pass weight="):
        sssp(g, 0)
    with pytest.raises(ValueError, match=r"weight='w' is not a weight column.*\['short', 'long'\]"):
        sssp(g, 0, weight="w")
    one = Graph.from_edgelist(frame, "src", "dst", weight="long", directed=True)
    assert distance(sssp(one, 0)) == [0.0, 9.0, 1.0]  # the graph's only column by default
    plain = Graph.from_edgelist(frame, "src", "dst", directed=True)
    assert distance(sssp(plain, 0)) == [0.0, 1.0, 1.0]  # unweighted: 1.0 per edge
    with pytest.raises(ValueError, match="weight='short' is not a weight column.*no weights"):
        sssp(plain, 0, weight="short")
    frame.loc[1, "long"] = -1.0
    g = Graph.from_edgelist(frame, "src", "dst", weight=["short", "long"], directed=True)
    assert distance(sssp(g, 0, weight="short")) == [0.0, 1.0, 2.0]  # the other column's sign
    with pytest.raises(ValueError, match="non-negative edge weights.*'long'.*negative"):
        sssp(g, 0, weight="long")


def test_bad_inputs_raise_clear_errors():
    g = SHAPES["path"]
    with pytest.raises(ValueError, match="source: .*1000"):
        sssp(g, source=1000)
    with pytest.raises(ValueError, match="sources: .*1000"):
        sssp(g, sources=[0, 1000])
    with pytest.raises(ValueError, match="exactly one of source"):
        sssp(g)
    with pytest.raises(ValueError, match="exactly one of source"):
        sssp(g, source=0, sources=[1])
    with pytest.raises(ValueError, match="at least one vertex"):
        sssp(g, sources=[])
    for delta in [0, -1.0, float("nan"), float("inf"), "big", True]:
        with pytest.raises(ValueError, match="delta must be a positive finite number"):
            sssp(g, source=0, delta=delta)
    with pytest.raises(ValueError, match="direction"):
        sssp(g, source=0, direction="sideways")
    with pytest.raises(ValueError, match="pull_fraction"):
        sssp(g, source=0, pull_fraction=1.5)
    g = _weighted([0, 1, 2], [1, 2, 0], [1.0, -1.0, 2.0])
    with pytest.raises(ValueError, match="non-negative edge weights.*'w'.*negative.*1->2"):
        sssp(g, source=0)
    # the constructors refuse NaN and inf weights; a graph whose weights were changed afterwards
    # still gets a clear error rather than NaN distances
    for bad in [np.nan, np.inf]:
        g = _weighted([0, 1, 2], [1, 2, 0], [1.0, 3.0, 2.0])
        g.edge_weights[1, 0] = bad
        with pytest.raises(ValueError, match="edge weights.*'w'.*NaN or infinite.*1->2"):
            sssp(g, source=0)
