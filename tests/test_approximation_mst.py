"""The approximation knobs of minimum_spanning_tree (issue 37): ``stop_changed_fraction`` ends
Boruvka's rounds early (a sub-forest of the exact one), ``edge_fraction`` runs on the first
``ceil(fraction * c(u))`` of each vertex's c(u) canonical edges (the partial graph's forest,
against the Kruskal oracle on the kept edges).  Their exact ends give the exact frame bit for
bit; other knobs are refused by name.  Graphs of tens of vertices, under the simulator.
"""

import numpy as np
import pandas as pd
import pytest

import oracles_traversal as oracle
from graphs import assert_refused, csr_edges
import onyx_rapids as onyx
from onyx_rapids import Approximation, datasets, device, io, registry

NAME = "minimum_spanning_tree"


@pytest.fixture(scope="module")
def grid():
    """A weighted 6 x 6 grid: 36 vertices, one component, several Boruvka rounds."""
    return onyx.Graph.from_edgelist(datasets.grid_2d(6, 6, weighted=True, seed=1),
                                    weight="weight")


@pytest.fixture(scope="module")
def scattered():
    """30 vertices with scattered ids (negative and large), 70 pairs in either orientation,
    weights from three values (ties by position) and one isolated vertex."""
    rng = np.random.default_rng(7)
    ids = np.sort(rng.choice(np.arange(-40, 10**12, 104729), size=30, replace=False))
    pairs = np.array([(a, b) for a in range(29) for b in range(a + 1, 29)])
    pick = pairs[rng.choice(len(pairs), size=70, replace=False)]
    flip = rng.random(70) < 0.5
    edges = pd.DataFrame({"src": ids[np.where(flip, pick[:, 1], pick[:, 0])],
                          "dst": ids[np.where(flip, pick[:, 0], pick[:, 1])],
                          "w": rng.choice([0.5, 1.0, 2.0], 70).astype(np.float32)})
    return onyx.Graph.from_edgelist(edges, weight="w", vertices=[ids[29]])


def _canonical(g):
    """(src, dst, w) of the canonical copies (internal src < dst) in CSR order; w float64."""
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights[:, 0]).astype(np.float64)
    keep = src < dst
    return src[keep], dst[keep], w[keep]


def _frame(g, src, dst, w):
    ids = g.id_map.original()
    return pd.DataFrame({"src": ids[src], "dst": ids[dst], "weight": w.astype(np.float32)})


def _rows(df):
    return set(map(tuple, io.to_pandas(df).values.tolist()))


def test_registry_declares_the_knobs():
    assert registry.get(NAME).knobs() == {"stop_changed_fraction": "a number in (0, 1)",
                                          "edge_fraction": "a number in (0, 1]"}


@pytest.mark.parametrize("call, needles", [
    (lambda g: onyx.minimum_spanning_tree(g, approximation=Approximation(merge_similarity=0.5)),
     ["minimum_spanning_tree does not support approximation merge_similarity=0.5",
      "its approximation knobs are stop_changed_fraction, edge_fraction"]),
    (lambda g: onyx.minimum_spanning_tree(g, approximation=Approximation(edge_fraction=0)),
     ["edge_fraction must be a number in (0, 1], got 0"]),
], ids=["other-knob", "out-of-range"])
def test_refusals_name_the_knob(call, needles):
    assert_refused(call, needles)


@pytest.mark.parametrize("knob", [Approximation(stop_changed_fraction=1e-9),
                                  Approximation(edge_fraction=1.0),
                                  Approximation(stop_changed_fraction=1e-9, edge_fraction=1.0)],
                         ids=["stop", "edges", "both"])
def test_exact_ends_give_the_exact_frame(grid, scattered, knob):
    """ceil(1e-9 n) = 1 and a round joins at least one edge: never stops; fraction 1 keeps
    every canonical edge."""
    for g in (grid, scattered):
        exact, info = onyx.minimum_spanning_tree(g, return_info=True)
        assert info.approximation is None and "estimate" not in info
        df, at_end = onyx.minimum_spanning_tree(g, approximation=knob, return_info=True)
        pd.testing.assert_frame_equal(io.to_pandas(df), io.to_pandas(exact))
        assert at_end.approximation == knob.knobs() == df.attrs["approximation"]
        canonical = len(_canonical(g)[0])
        assert at_end.estimate == dict(stopped_by=None, changed_fraction=0.0,
                                       rounds=info.iterations, edges_processed=canonical,
                                       exact_edges=canonical)
        assert at_end["total_weight"] == info["total_weight"]


def test_stopped_rounds_leave_a_sub_forest(grid):
    exact, info = onyx.minimum_spanning_tree(grid, return_info=True)
    knob = Approximation(stop_changed_fraction=0.4)  # stops after round 2 of 3
    df, loose = onyx.minimum_spanning_tree(grid, approximation=knob, return_info=True)
    estimate = loose.estimate
    assert estimate["stopped_by"] == "stop_changed_fraction"
    assert 0 < estimate["changed_fraction"] < 0.4
    assert estimate["rounds"] == loose.iterations < info.iterations
    assert _rows(df) < _rows(exact)  # rows in original ids, each one of the exact forest's
    assert loose["total_weight"] < info["total_weight"]
    assert loose["components"] == grid.n - len(df) > 1
    print(f"mst stop: {loose.iterations} rounds (exact {info.iterations}), weight "
          f"{loose['total_weight']:.3f} of {info['total_weight']:.3f}")


@pytest.mark.parametrize("fraction", [0.3, 0.5])
def test_partial_edges_give_the_partial_graphs_forest(grid, scattered, fraction):
    """The first ceil(fraction * c(u)) of each vertex's canonical edges, then Kruskal on them
    (ties by position in the kept list: CSR order)."""
    for g in (grid, scattered):
        src, dst, w = _canonical(g)
        c = np.bincount(src, minlength=g.n)
        rank = np.arange(src.size) - (np.cumsum(c) - c)[src]
        keep = rank < np.ceil(fraction * c[src])
        kept = oracle.minimum_spanning_forest(g.n, src[keep], dst[keep], w[keep])
        expected = _frame(g, src[keep][kept], dst[keep][kept], w[keep][kept])
        df, info = onyx.minimum_spanning_tree(
            g, approximation=Approximation(edge_fraction=fraction), return_info=True)
        pd.testing.assert_frame_equal(io.to_pandas(df), expected)
        assert info.estimate["edges_processed"] == keep.sum() < info.estimate["exact_edges"]
        assert info.estimate["exact_edges"] == src.size and info.estimate["stopped_by"] is None
        assert info["total_weight"] == pytest.approx(w[keep][kept].sum(), rel=1e-12)
        assert info["components"] == g.n - len(kept)
        exact = onyx.minimum_spanning_tree(g, return_info=True)[1]
        assert info["components"] > exact["components"] or \
            info["total_weight"] >= exact["total_weight"]  # connected as g: no lighter
