import numpy as np
import pandas as pd
import pytest

import oracles_learning as oracles
from graphs import csr_edges
from onyx_rapids import Graph, device, registry
from onyx_rapids.algorithms.als import als, bipartite_sides
from onyx_rapids.registry import variant_name

# every variant, with 2 or 3 factors, and one (FA/NCD/fold/pull) with 6: a wider solve
CASES = [(6 if i == 2 else 2 + i % 2, v) for i, v in enumerate(registry.get("als").variants())]


def _ratings(users=7, items=5, m=20, seed=0):
    rng = np.random.default_rng(seed)
    pairs = {(int(u), int(i)) for u, i in zip(rng.integers(0, users, m), rng.integers(0, items, m))}
    users_, items_ = zip(*sorted(pairs))
    return pd.DataFrame({"user": np.array(users_) * 10 + 1,  # ids of the two sides never collide
                         "item": np.array(items_) * 10 + 2,
                         "stars": rng.integers(1, 6, len(users_)).astype(np.float32)})


def _frame_lf(df, k):
    df = df.to_pandas() if hasattr(df, "to_pandas") else df
    return df[[f"lf_{f}" for f in range(k)]].to_numpy(dtype=np.float64)


@pytest.mark.parametrize("k, variant", CASES, ids=[f"k{k}-{variant_name(v)}" for k, v in CASES])
def test_matches_numpy_solve_per_vertex(k, variant):
    g = Graph.from_edgelist(_ratings(seed=k), "user", "item", weight="stars", directed=False)
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0]
    sides = oracles.bipartite_sides(g.n, src, dst)
    expected = oracles.als(g.n, src, dst, w, sides, k, iterations=2)
    df = als(g, k, iterations=2, **variant, tol=1e-7)
    got = _frame_lf(df, k)
    assert np.linalg.norm(got - expected) / np.linalg.norm(expected) <= 1e-3
    side = (df.to_pandas() if hasattr(df, "to_pandas") else df)["side"].to_numpy()
    assert np.array_equal(side, sides)


def test_sides_and_bad_inputs():
    g = Graph.from_edgelist(_ratings(), "user", "item", weight="stars", directed=False)
    src, dst = csr_edges(g)
    assert np.array_equal(bipartite_sides(g), oracles.bipartite_sides(g.n, src, dst))
    triangle = Graph.from_edgelist(pd.DataFrame({"a": [0, 1, 2], "b": [1, 2, 0],
                                                 "w": np.ones(3, np.float32)}), "a", "b",
                                   weight="w", directed=False)
    with pytest.raises(ValueError, match="bipartite"):
        als(triangle, 2)
    with pytest.raises(ValueError, match="k must be"):
        als(g, 0)
    with pytest.raises(ValueError, match="ratings"):
        als(Graph.from_edgelist(_ratings()[["user", "item"]], "user", "item", directed=False), 2)
    with pytest.raises(ValueError, match="lam"):
        als(g, 2, lam=0)
