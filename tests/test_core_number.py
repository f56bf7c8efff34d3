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
    hub = pd.DataFrame({"src": np.r_[np.zeros(40, int), np.arange(1, 40)],
                        "dst": np.r_[np.arange(1, 41), np.arange(2, 41)]})  # fan: > a warp
    path = pd.DataFrame({"src": np.arange(30), "dst": np.arange(1, 31)})  # peels end-inwards
    return {"clique_and_tail": Graph.from_edgelist(edges, "src", "dst", vertices=[20],
                                                   directed=True),
            "hub_fan": Graph.from_edgelist(hub, "src", "dst", directed=True),
            "long_path": Graph.from_edgelist(path, "src", "dst", directed=True),
            "star_directed": Graph.from_edgelist(star, "src", "dst", directed=True),
            "random": build("directed", seed=11),
            "undirected": build("undirected", seed=12)}


SHAPES = _shapes()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("block, fused", [(None, True), (64, True), (None, False),
                                          (32, False)])
def test_core_numbers_match_oracle(shape, block, fused):
    g = SHAPES[shape]
    src, dst = csr_edges(g)
    df, info = core_number(g, block_size=block, fused=fused, return_info=True)
    assert info["fused"] is fused
    assert list(df.columns) == ["vertex", "core_number"]
    np.testing.assert_array_equal(df["core_number"].to_numpy(), oracle.core_number(g.n, src, dst))


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("fused", [True, False])
def test_k_core_members(k, fused):
    g = SHAPES["clique_and_tail"]
    src, dst = csr_edges(g)
    df = k_core(g, k, fused=fused)
    members = oracle.k_core(g.n, src, dst, k)
    ids = device.to_host(g.vertices)  # 0..8 and the isolated 20
    assert df["vertex"].to_numpy().tolist() == ids[members].tolist()
    assert (df["core_number"] >= k).all()


def test_k_core_rejects_bad_k():
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="k must be a non-negative integer"):
            k_core(SHAPES["random"], bad)


@pytest.mark.parametrize("fused", [True, False])
def test_peel_rounds_follow_the_onion(fused):
    # a path of 31 vertices: level 2 peels both ends, then one vertex from each end per round
    df, info = core_number(SHAPES["long_path"], fused=fused, return_info=True)
    assert (df["core_number"].to_numpy() == 1).all()
    assert info["levels"] == 1 and info["iterations"] == 16 and info["converged"]


def test_core_number_rejects_bad_block_size():
    for fused in (True, False):
        with pytest.raises(ValueError, match="block_size must be None or a multiple of 32"):
            core_number(SHAPES["random"], block_size=48, fused=fused)
