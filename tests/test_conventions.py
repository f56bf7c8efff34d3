"""Inputs never silently wrong (issue 14's first list), for the propagation algorithms:
weights used by default and validated, per-vertex inputs aligned by id, ALS refusing graphs it
cannot use, pandas objects accepted, run facts truthful."""

import warnings

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import Graph


def _frame(df):
    return df.to_pandas() if hasattr(df, "to_pandas") else df


def _weighted_triangle(w=(1.0, 2.0, 3.0, 0.5)):
    return pd.DataFrame({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 2], "w": list(w)})


def test_pagerank_matches_networkx_weighted_by_default():
    edges = _weighted_triangle()
    g = Graph.from_edgelist(edges, weight="w", directed=True)
    ours = _frame(onyx.pagerank(g, tol=1e-7)).set_index("vertex")["pagerank"]
    G = nx.from_pandas_edgelist(edges, "src", "dst", edge_attr="w", create_using=nx.DiGraph)
    ref = nx.pagerank(G, weight="w", tol=1e-10, max_iter=1000)
    assert max(abs(ours[v] - ref[v]) for v in ref) < 1e-5


@pytest.mark.parametrize("algorithm", ["pagerank", "label_propagation"])
def test_negative_weights_are_refused(algorithm):
    g = Graph.from_edgelist(_weighted_triangle((1.0, -2.0, 3.0, 0.5)), weight="w", directed=True)
    call = {"pagerank": lambda: onyx.pagerank(g),
            "label_propagation": lambda: onyx.label_propagation(
                g, pd.DataFrame({"vertex": [1], "label": [0]}), k=2)}[algorithm]
    with pytest.raises(ValueError, match=f"{algorithm}: weight column 'w' has 1 edge"):
        call()


def test_pagerank_personalization_matches_networkx():
    edges = pd.DataFrame({"src": [1, 2, 3, 4], "dst": [2, 3, 1, 1]})
    g = Graph.from_edgelist(edges, directed=True)
    person = pd.DataFrame({"vertex": [3, 1], "values": [3.0, 1.0]})  # cuGraph's form
    ours = _frame(onyx.pagerank(g, personalization=person, tol=1e-7)).set_index("vertex")
    G = nx.from_pandas_edgelist(edges, "src", "dst", create_using=nx.DiGraph)
    ref = nx.pagerank(G, personalization={3: 0.75, 1: 0.25, 2: 0, 4: 0}, tol=1e-10,
                      max_iter=1000)
    assert max(abs(ours.loc[v, "pagerank"] - ref[v]) for v in ref) < 1e-5


def test_per_vertex_inputs_are_aligned_by_id_not_position():
    g = Graph.from_edgelist(pd.DataFrame({"src": [30, 10, 20], "dst": [10, 20, 30],
                                          "w": [1.0, 2.0, 0.5]}), weight="w", directed=True)
    init = np.array([[1.0], [2.0], [3.0]], np.float32)  # rows in g.vertices order: 10, 20, 30
    by_array = _frame(onyx.multi_manifold_ranking(g, init, max_iter=5))
    shuffled = pd.Series([3.0, 1.0, 2.0], index=[30, 10, 20])  # the same values, other order
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        by_series = _frame(onyx.multi_manifold_ranking(g, shuffled, max_iter=5))
        by_index = _frame(onyx.multi_manifold_ranking(g, shuffled.to_frame("x"), max_iter=5))
    np.testing.assert_allclose(by_series["mmr_0"], by_array["mmr_0"], rtol=1e-6)
    np.testing.assert_allclose(by_index["mmr_0"], by_array["mmr_0"], rtol=1e-6)


def _ratings():
    # user and item ids overlap on purpose: user 1 and item 1 are different vertices
    return pd.DataFrame({"user": [1, 1, 2, 3, 3], "item": [1, 2, 2, 1, 3],
                         "stars": [5.0, 3.0, 4.0, 2.0, 1.0]})


def test_als_on_a_bipartite_graph_keeps_users_and_items_apart():
    g = Graph.from_bipartite(_ratings(), "user", "item", weight="stars")
    assert g.n == 6  # 3 users + 3 items, though ids 1..3 appear on both sides
    df = _frame(onyx.als(g, 2, iterations=3))
    assert len(df) == 6 and {"side", "vertex", "lf_0", "lf_1"} <= set(df.columns)
    assert np.abs(df[["lf_0", "lf_1"]].to_numpy()).sum(axis=1).min() > 0  # no zero factors


def test_als_refuses_a_directed_ratings_graph_with_the_fix():
    g = Graph.from_edgelist(_ratings().assign(item=lambda d: d["item"] + 100), "user", "item",
                            weight="stars", directed=True)
    with pytest.raises(ValueError, match="from_bipartite"):
        onyx.als(g, 2)


def test_als_sides_are_checked_and_aligned_by_vertex():
    ratings = _ratings().assign(item=lambda d: d["item"] + 100)
    g = Graph.from_edgelist(ratings, "user", "item", weight="stars", directed=False)
    good = pd.Series([1, 1, 1, 0, 0, 0], index=[101, 102, 103, 1, 2, 3])  # items side 1
    df = _frame(onyx.als(g, 2, iterations=2, sides=good))
    assert df.set_index("vertex").loc[[1, 2, 3], "side"].tolist() == [0, 0, 0]
    bad = pd.Series([0, 0, 1, 0, 1, 1], index=[1, 2, 3, 101, 102, 103])  # 3 and 101 mixed
    with pytest.raises(ValueError, match="sides: every edge must join side 0 and side 1"):
        onyx.als(g, 2, sides=bad)


def test_als_reports_convergence_truthfully():
    g = Graph.from_bipartite(_ratings(), "user", "item", weight="stars")
    _, one = onyx.als(g, 1, lam=1.0, iterations=1, tol=1e-3, return_info=True)
    _, many = onyx.als(g, 1, lam=1.0, iterations=30, tol=1e-3, return_info=True)
    assert one.converged is False and many.converged is True


def test_belief_propagation_takes_a_pandas_potential():
    g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2], "dst": [1, 2, 0]}), directed=False)
    priors = np.array([[0.9, 0.1], [0.5, 0.5], [0.5, 0.5]], np.float32)
    psi = [[0.8, 0.2], [0.2, 0.8]]
    a = _frame(onyx.belief_propagation(g, priors, psi))
    b = _frame(onyx.belief_propagation(g, priors, pd.DataFrame(psi)))
    np.testing.assert_allclose(a["belief_0"], b["belief_0"])
    with pytest.raises(TypeError, match="potential must be a k x k numeric matrix"):
        onyx.belief_propagation(g, priors, {"a": 1})


def test_an_argument_the_generated_kernel_would_shadow_is_refused():
    """A user argument named like a local of the generated kernel ('x' in a normalize step)
    used to read the local silently; now it is refused, naming it."""
    from numba import cuda

    from onyx_rapids import operators as ops, properties as props

    @cuda.jit(device=True)
    def take(f, u, v, e, x):
        return x[u, f]

    g = Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]}), directed=True)
    args = dict(x=props.vertex_property(g, 1, 1.0), acc=props.vertex_property(g, 1))
    with pytest.raises(ValueError, match="args: 'x' is a name the generated kernel uses"):
        ops.foldmap(g, [ops.Edge(take, "acc"), ops.Normalize("acc", "acc", 1)], args, k=1,
                    direction="pull")
    args["y"] = args.pop("x")  # a free name is fine

    @cuda.jit(device=True)
    def take_y(f, u, v, e, y):
        return y[u, f]

    ops.foldmap(g, [ops.Edge(take_y, "acc"), ops.Normalize("acc", "acc", 1)], args, k=1,
                direction="pull")
    assert float(props.max_abs(args["acc"])) == 1.0
