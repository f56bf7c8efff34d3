import numpy as np
import pandas as pd
import pytest

import oracles_traversal as oracle
from graphs import build, csr_edges
from onyx_rapids import Graph, core_number, device, k_core


def _shapes():
    clique = [(a, b) for a in range(5) for b in range(a + 1, 5)]  # a 4-core
    tail = [(4, 5), (5, 6), (6, 7), (7, 5), (8, 8), (4, 5)]  # triangle, self-loop, multi-edge
    edges = pd.DataFrame(clique + tail, columns=["src", "dst"])
    star = pd.DataFrame({"src": np.zeros(9, int), "dst": np.arange(1, 10)})
    return {"clique_and_tail": Graph.from_edgelist(edges, "src", "dst", vertices=[20]),
            "star_directed": Graph.from_edgelist(star, "src", "dst"),
            "random": build("directed", seed=11),
            "undirected": build("undirected", seed=12)}


SHAPES = _shapes()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("fa", [True, False])
def test_core_numbers_match_oracle(shape, fa):
    g = SHAPES[shape]
    src, dst = csr_edges(g)
    df = core_number(g, feature_aware=fa)
    assert list(df.columns) == ["vertex", "core_number"]
    np.testing.assert_array_equal(df["core_number"].to_numpy(), oracle.core_number(g.n, src, dst))


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 5])
def test_k_core_members(k):
    g = SHAPES["clique_and_tail"]
    src, dst = csr_edges(g)
    df = k_core(g, k)
    members = oracle.k_core(g.n, src, dst, k)
    ids = device.to_host(g.vertices)  # 0..8 and the isolated 20
    assert df["vertex"].to_numpy().tolist() == ids[members].tolist()
    assert (df["core_number"] >= k).all()


def test_k_core_rejects_bad_k():
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="k must be a non-negative integer"):
            k_core(SHAPES["random"], bad)
