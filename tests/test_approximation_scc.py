"""Approximation knobs of strongly_connected_components (issue 37): ``stop_changed_fraction``
on the coloring rounds and ``merge_similarity`` on the graph of merged similar neighbours.
Their exact ends bit for bit, a stopped run's labels only splitting the exact components, a
merged run's only merging them (and exact where every edge is stored both ways), a row per
original vertex, RunInfo, the refusal of a knob SCC does not take.  Graphs of tens of
vertices: every run goes through the CUDA simulator.
"""

import math

import numpy as np
import pandas as pd
import pytest

from graphs import assert_refused
import onyx_rapids as onyx
from onyx_rapids import Approximation, io

SCC = onyx.strongly_connected_components


def _chain():
    """Cycles 40..37, 36..34 and 33-32 joined one way (40 -> 36 -> 33): trimming and the
    pivot (the clique 0..3) leave them to the coloring, one a round, largest ids first; a
    tail 3 -> 10 -> 11 and a lone edge 20 -> 21 to trim; 50 isolated."""
    cycles = [[40, 39, 38, 37], [36, 35, 34], [33, 32]]
    edges = [(c[i], c[(i + 1) % len(c)]) for c in cycles for i in range(len(c))]
    edges += [(40, 36), (36, 33), (3, 10), (10, 11), (20, 21)]
    edges += [(u, v) for u in range(4) for v in range(4) if u != v]
    return onyx.Graph.from_edgelist(pd.DataFrame(edges, columns=["src", "dst"]),
                                    vertices=[50], directed=True)


def _both_ways():
    """Every edge stored both ways (strongly connected components = connected ones): a
    triangle 0-1-2 with 3 on 1 and 2, the clique 5..8, a path 10-11-12, the pair 20-21 and
    the isolated 30; twins 1 and 2, the clique's vertices, 20 and 21."""
    edges = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (10, 11), (11, 12), (20, 21)]
    edges += [(u, v) for u in range(5, 9) for v in range(u + 1, 9)]
    src, dst = np.array(edges).T
    df = pd.DataFrame({"src": np.r_[src, dst], "dst": np.r_[dst, src]})
    return onyx.Graph.from_edgelist(df, vertices=[30], directed=True)


CHAIN, BOTH_WAYS = _chain(), _both_ways()


@pytest.fixture(scope="module")
def exact():
    """The exact run on each graph: (frame as pandas, RunInfo)."""
    runs = {name: SCC(g, return_info=True) for name, g in (("chain", CHAIN),
                                                         ("both_ways", BOTH_WAYS))}
    return {name: (io.to_pandas(df), info) for name, (df, info) in runs.items()}


def _run(g, **knobs):
    df, info = SCC(g, approximation=Approximation(**knobs), return_info=True)
    return io.to_pandas(df), info


def _refines(fine, coarse):
    """Whether every two vertices together in ``fine`` are together in ``coarse`` (labels
    in the same vertex order)."""
    pairs = pd.DataFrame({"fine": fine, "coarse": coarse}).drop_duplicates()
    return len(pairs) == len(set(fine))


# ------------------------------------------------------------------ stop_changed_fraction


def test_stop_at_its_exact_end_is_the_exact_run(exact):
    """Below 1 / n (ceil(f n) = 1) a round would have to settle no vertex: never."""
    fraction = 0.5 / CHAIN.n
    assert math.ceil(fraction * CHAIN.n) == 1
    frame, info = exact["chain"]
    assert info.trimmed == 5 and info.pivot_component == 4 and info.coloring_rounds == 3
    df, at_end = _run(CHAIN, stop_changed_fraction=fraction)
    assert df.equals(frame) and at_end.coloring_rounds == 3
    assert at_end.estimate["stopped_by"] is None and at_end.estimate["unrelaxed"] == 0


def test_stopped_coloring_only_splits(exact):
    """ceil(0.25 n) = 5: the first round settles 40..37 (4, but the first never stops), the
    second 36..34 (3 <= 4) and stops; 33 and 32 are left a component each."""
    frame, _ = exact["chain"]
    df, info = _run(CHAIN, stop_changed_fraction=0.25)
    assert info.coloring_rounds == 2 and info.approximation == {"stop_changed_fraction": 0.25}
    assert info.estimate["stopped_by"] == "stop_changed_fraction"
    assert info.estimate["unrelaxed"] == 2 and info.estimate["rounds"] == info.iterations
    assert df["vertex"].tolist() == frame["vertex"].tolist()
    assert _refines(df["labels"], frame["labels"])
    expected = frame.set_index("vertex")["labels"].to_dict() | {33: 33, 32: 32}
    assert df.set_index("vertex")["labels"].to_dict() == expected


# ------------------------------------------------------------------------ merge_similarity


@pytest.mark.parametrize("threshold", [1.0, 0.3])
def test_merge_is_exact_where_every_edge_goes_both_ways(exact, threshold):
    """A group is connected, and with every edge both ways strongly connected: the merged
    graph's components are the exact ones, at every threshold."""
    frame, _ = exact["both_ways"]
    df, info = _run(BOTH_WAYS, merge_similarity=threshold)
    assert df.equals(frame)
    assert info.estimate["merged_vertices"] < BOTH_WAYS.n
    assert {"merged_edges", "merge_build_ms"} <= set(info.estimate)


def test_merge_only_merges_and_twins_one_way_come_out_together(exact):
    """20 -> 21 alone makes twins (N[20] = N[21] in the undirected view) that are not
    strongly connected: merge_similarity=1 puts them together; exact components stay whole."""
    frame, _ = exact["chain"]
    df, info = _run(CHAIN, merge_similarity=1.0)
    assert sorted(df["vertex"]) == sorted(frame["vertex"]) == sorted(
        [0, 1, 2, 3, 10, 11, 20, 21, 50, *range(32, 41)])
    assert _refines(frame["labels"].to_numpy(), df.set_index("vertex").loc[frame["vertex"],
                                                                          "labels"].to_numpy())
    labels = df.set_index("vertex")["labels"]
    assert labels[20] == labels[21] == 20 and frame.set_index("vertex")["labels"][21] == 21
    assert info.approximation == {"merge_similarity": 1.0}


def test_a_knob_scc_does_not_take_is_refused_by_name():
    assert_refused(lambda g: SCC(g, approximation=Approximation(edge_fraction=0.5)),
                   ["strongly_connected_components does not support approximation "
                    "edge_fraction=0.5",
                    "its approximation knobs are stop_changed_fraction, merge_similarity"])
