import numpy as np
import pandas as pd
import pytest

import oracles_traversal as oracle
from graphs import build, csr_edges
from onyx_rapids import Graph, device, weakly_connected_components


def _shapes():
    ids = 10 * np.arange(30)[::-1] + 7  # non-contiguous, given in reverse order
    chain = pd.DataFrame({"src": ids[:-1], "dst": ids[1:]})  # one long component
    pieces = pd.DataFrame({"src": [ids[0], ids[3], ids[5], ids[9], ids[9]],
                           "dst": [ids[2], ids[2], ids[6], ids[9], ids[8]]})
    return {"chain": Graph.from_edgelist(chain, "src", "dst", directed=True),
            "pieces": Graph.from_edgelist(pieces, "src", "dst", vertices=ids[20:], directed=True),
            "random": build("directed", seed=7),
            "undirected": build("undirected", seed=8)}


SHAPES = _shapes()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("direction, filter, fused", [
    ("auto", "jit", False), ("push", "online", True), ("pull", "ballot", False),
    ("auto", "ballot", True)])
def test_labels_match_oracle(shape, direction, filter, fused):
    g = SHAPES[shape]
    src, dst = csr_edges(g)
    df = weakly_connected_components(g, method="propagate", direction=direction,
                                     filter=filter, fused=fused, threshold=1)
    assert list(df.columns) == ["vertex", "labels"]
    expected = oracle.weakly_connected_components(g.n, src, dst, device.to_host(g.vertices))
    np.testing.assert_array_equal(df["labels"].to_numpy(), expected)


@pytest.mark.parametrize("shape", sorted(SHAPES) + ["many_pieces"])
@pytest.mark.parametrize("block", [None, 32])
def test_hooking_matches_oracle(shape, block):
    if shape == "many_pieces":  # 60 vertices, 6 components of random edges, ids shuffled
        rng = np.random.default_rng(5)
        parts = rng.permutation(60).reshape(6, 10) * 3 + 1
        pairs = [rng.choice(p, size=2, replace=False) for p in parts for _ in range(14)]
        frame = pd.DataFrame(pairs, columns=["src", "dst"])
        g = Graph.from_edgelist(frame, "src", "dst", directed=True)
    else:
        g = SHAPES[shape]
    src, dst = csr_edges(g)
    df, info = weakly_connected_components(g, block_size=block, return_info=True)
    assert list(df.columns) == ["vertex", "labels"]
    assert info["method"] == "hook" and info["converged"]
    expected = oracle.weakly_connected_components(g.n, src, dst, device.to_host(g.vertices))
    np.testing.assert_array_equal(df["labels"].to_numpy(), expected)


@pytest.mark.parametrize("method", ["hook", "propagate"])
def test_edges_against_their_direction_still_connect(method):
    # 3 -> 1 <- 2: weakly one component, though no vertex reaches both others
    g = Graph.from_edgelist(pd.DataFrame({"src": [3, 2], "dst": [1, 1]}), "src", "dst",
                            directed=True)
    labels = weakly_connected_components(g, method=method)["labels"].to_numpy().tolist()
    assert labels == [1, 1, 1]


def test_bad_options():
    with pytest.raises(ValueError, match="direction"):
        weakly_connected_components(SHAPES["chain"], method="propagate", direction="up")
    with pytest.raises(ValueError, match="filter"):
        weakly_connected_components(SHAPES["chain"], method="propagate", filter="up")
    with pytest.raises(ValueError, match="method must be one of"):
        weakly_connected_components(SHAPES["chain"], method="bfs")
    with pytest.raises(ValueError, match="does not support the execution option\\(s\\) fused=True, "
                       "threshold=4 with method='hook'"):
        weakly_connected_components(SHAPES["chain"], fused=True, threshold=4)
    with pytest.raises(ValueError, match="jump_every=3: only method='propagate'"):
        weakly_connected_components(SHAPES["chain"], jump_every=3)
    with pytest.raises(ValueError, match="weakly_connected_components does not support "
                       "feature_aware=False"):
        weakly_connected_components(SHAPES["chain"], method="propagate", feature_aware=False)
    with pytest.raises(ValueError, match="block_size"):
        weakly_connected_components(SHAPES["chain"], block_size=100)


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("jump_every, fused", [(1, False), (2, True), (None, False)])
def test_pointer_jumping_phases_keep_the_labels(shape, jump_every, fused):
    g = SHAPES[shape]
    src, dst = csr_edges(g)
    df, info = weakly_connected_components(g, method="propagate", jump_every=jump_every,
                                           fused=fused, return_info=True)
    expected = oracle.weakly_connected_components(g.n, src, dst, device.to_host(g.vertices))
    np.testing.assert_array_equal(df["labels"].to_numpy(), expected)
    assert len(info.directions) == info.iterations
    if jump_every is None:
        assert info["phases"] == 1
    elif shape == "chain":  # 30 vertices in a line: more than one phase, fewer rounds
        plain = weakly_connected_components(g, method="propagate", return_info=True)[1]
        assert info["phases"] > 1 and info["iterations"] < plain["iterations"]


def test_bad_jump_every():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="jump_every"):
            weakly_connected_components(SHAPES["chain"], method="propagate", jump_every=bad)
