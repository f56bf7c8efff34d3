"""The Active-Compute-Combine engine (onyx_rapids.acc) against the oracles, in every mode."""

import numpy as np
import pandas as pd
import pytest
from numba import cuda

import oracles_traversal as oracle
from graphs import build, csr_edges
from onyx_rapids import AccOptions, Execution, Graph, acc, device, frontier
from onyx_rapids.acc import AccResult

UNREACHED = 2**31 - 1


@cuda.jit(device=True)
def hop(u, v, e, dist):
    return dist[u] + 1


@cuda.jit(device=True)
def reached(v, dist):
    return dist[v] != 2147483647


@cuda.jit(device=True)
def path_length(u, v, e, dist, weight):
    return dist[u] + weight[e]


@cuda.jit(device=True)
def mean_length(u, v, e, dist, weight, same_weight):
    # one array bound to two names: passed to the kernels once, read through both
    return dist[u] + 0.5 * (weight[e] + same_weight[e])


@cuda.jit(device=True)
def spread_vote(u, v, e, mark):
    return mark[u]


@cuda.jit(device=True)
def below(v, dist, limit, stride):
    # two arguments bound by name, given in the other order than args' sorted keys
    return v % stride == 0 and dist[v] < limit


@cuda.jit(device=True)
def offer_from_other(u, v, e, dist, other):
    # reads an argument bound to the state itself (args={"other": dist}): the same array
    return other[u] + 1


def _star_and_path():
    # a hub of out-degree 12 (a block with large_degree=8), vertices of out-degree 4-7 (warps)
    # and a tail: every worklist class is used
    src = np.r_[np.zeros(12, int), np.repeat([1, 2], 5), np.arange(12, 20)]
    dst = np.r_[np.arange(1, 13), np.arange(13, 18), np.arange(14, 19), np.arange(13, 21)]
    return Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), "src", "dst", directed=True)


GRAPHS = {"classes": _star_and_path(), "random": build("directed", seed=11)}


def _bfs_state(g, source):
    dist = device.full(g.n, UNREACHED, np.int32)
    dist[source] = 0
    return dist


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("filter", ["jit", "online", "ballot"])
@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("direction", ["push", "pull", "auto"])
def test_bfs_in_every_mode(name, filter, fused, direction):
    g = GRAPHS[name]
    src, dst = csr_edges(g)
    dist = _bfs_state(g, 0)
    info = acc(g, dist, hop, settled=reached, active_in=frontier.from_vertices(g.n, [0]),
               options=AccOptions(filter=filter, fused=fused, direction=direction, threshold=2,
                                  medium_degree=4, large_degree=8))
    np.testing.assert_array_equal(device.to_host(dist), oracle.bfs(g.n, src, dst, 0))
    assert isinstance(info, AccResult)
    assert info.converged and info.fused is fused
    assert info.iterations == len(info.trace) == info.push + info.pull
    assert info.directions.count("pull") == info.pull
    if direction != "auto":
        assert getattr(info, direction) == info.iterations
        assert info.directions == [direction] * info.iterations
    if filter == "ballot":
        assert info.ballot == info.iterations
    if filter == "online":
        assert info.ballot == 0
    assert info.online + info.ballot == info.iterations
    # the trace's worklist sizes are the BFS levels' sizes
    levels = np.bincount(oracle.bfs(g.n, src, dst, 0)[oracle.bfs(g.n, src, dst, 0) < UNREACHED])
    np.testing.assert_array_equal(info.trace[:, 2], levels[:info.iterations])


def test_jit_switches_to_ballot_only_on_overflow():
    g = GRAPHS["classes"]
    roomy = acc(g, _bfs_state(g, 0), hop, active_in=frontier.from_vertices(g.n, [0]),
                options=AccOptions(threshold=64, direction="push"))
    tight = acc(g, _bfs_state(g, 0), hop, active_in=frontier.from_vertices(g.n, [0]),
                options=AccOptions(threshold=1, direction="push"))
    assert roomy.ballot == 0
    assert 0 < tight.ballot < tight.iterations  # the hub's level overflows, the tail not


def test_auto_direction_follows_pull_fraction():
    g = GRAPHS["random"]
    always_pull = acc(g, _bfs_state(g, 0), hop, settled=reached,
                      active_in=frontier.from_vertices(g.n, [0]),
                      options=AccOptions(pull_fraction=0.0))
    never_pull = acc(g, _bfs_state(g, 0), hop, settled=reached,
                     active_in=frontier.from_vertices(g.n, [0]),
                     options=AccOptions(pull_fraction=1.0))
    # pull once the frontier's out-edges exceed the fraction: with 0, every level that has any
    assert always_pull.pull == int((always_pull.trace[:, 3] > 0).sum()) > 0
    assert never_pull.push == never_pull.iterations


def _late_parent():
    # 39 -> 38 -> 0, and 0's other 37 in-edges come from unreachable vertices listed first:
    # one lane a vertex (m / n < 2), which must read past them to its one frontier in-edge
    src = np.r_[39, np.arange(1, 39)]
    dst = np.r_[38, np.zeros(38, int)]
    return Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), "src", "dst",
                               directed=True), 39


def _heavy_heads():
    # a few heads with ~60 in-edges each (16 lanes a vertex: several edges a lane), so lanes
    # meet a frontier in-neighbour early and stop
    rng = np.random.default_rng(3)
    s, d = rng.integers(0, 40, 400), rng.integers(0, 40, 400)
    d[:300] = rng.integers(0, 5, 300)
    return Graph.from_edgelist(pd.DataFrame({"src": s, "dst": d}), "src", "dst", directed=True), 1


@pytest.mark.parametrize("make", [_late_parent, _heavy_heads])
@pytest.mark.parametrize("fused", [False, True])
def test_same_offers_pull_stops_early_with_the_same_levels_and_valid_parents(make, fused):
    g, source = make()
    src, dst = csr_edges(g)
    expected = oracle.bfs(g.n, src, dst, source)
    dist = _bfs_state(g, source)
    parent = device.full(g.n, -1, np.int32)
    run = acc(g, dist, hop, settled=reached, same_offers=True,
              parent=parent, active_in=frontier.from_vertices(g.n, [source]),
              options=AccOptions(direction="pull", fused=fused))
    got, par = device.to_host(dist), device.to_host(parent)
    np.testing.assert_array_equal(got, expected)
    assert run.pull == run.iterations > 1
    edges = set(zip(src.tolist(), dst.tolist()))
    for v in np.flatnonzero((got > 0) & (got < UNREACHED)):
        assert (par[v], v) in edges and got[par[v]] == got[v] - 1


@pytest.mark.parametrize("fused", [False, True])
def test_float_state_with_named_weights_is_bellman_ford(fused):
    g = build("directed", seed=5, weights=1)
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0].astype(np.float32)
    dist = device.full(g.n, np.inf, np.float32)
    dist[2] = 0.0
    acc(g, dist, path_length, args={"weight": device.asarray(w)},
        active_in=frontier.from_vertices(g.n, [2]), options=AccOptions(fused=fused))
    expected = oracle.sssp(g.n, src, dst, w.astype(np.float64), 2)
    np.testing.assert_allclose(device.to_host(dist), expected, rtol=1e-5)


def test_an_array_under_two_names_is_one_argument():
    g = build("directed", seed=5, weights=1)
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights)[:, 0].astype(np.float32)
    dist = device.full(g.n, np.inf, np.float32)
    dist[2] = 0.0
    weight = device.asarray(w)
    acc(g, dist, mean_length, args={"weight": weight, "same_weight": weight},
        active_in=frontier.from_vertices(g.n, [2]))
    expected = oracle.sssp(g.n, src, dst, w.astype(np.float64), 2)
    np.testing.assert_allclose(device.to_host(dist), expected, rtol=1e-5)


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_max_combine_is_a_vote(direction):
    g = GRAPHS["random"]
    src, dst = csr_edges(g)
    mark = device.zeros(g.n, np.int32)
    mark[3] = 1
    acc(g, mark, spread_vote, combine="max", active_in=frontier.from_vertices(g.n, [3]),
        options=AccOptions(direction=direction))
    reach = oracle.bfs(g.n, src, dst, 3) < UNREACHED
    np.testing.assert_array_equal(device.to_host(mark).astype(bool), reach)


def test_functions_get_their_args_by_name():
    # a path 0 -> 1 -> ... -> 9; only vertices at a multiple of `stride` below `limit` offer
    g = Graph.from_edgelist(pd.DataFrame({"src": np.arange(9), "dst": np.arange(1, 10)}),
                            "src", "dst", directed=True)
    start = frontier.from_vertices(g.n, [0])
    for stride, limit, reached_ in [(1, 3, 4), (2, 3, 2), (1, 100, 10)]:
        dist = _bfs_state(g, 0)
        run = acc(g, dist, hop, active=below, args={"stride": stride, "limit": limit},
                  active_in=start)
        got = device.to_host(dist)
        assert got[:reached_].tolist() == list(range(reached_)), (stride, limit)
        assert (got[reached_:] == UNREACHED).all() and run.converged
    # an argument bound to the state array itself reads the state (passed once, not copied)
    dist = _bfs_state(g, 0)
    acc(g, dist, offer_from_other, args={"other": dist}, active_in=start,
        options=AccOptions(fused=True))
    assert device.to_host(dist).tolist() == list(range(10))


def test_max_iter_stops_early_and_says_so():
    g = Graph.from_edgelist(pd.DataFrame({"src": np.arange(9), "dst": np.arange(1, 10)}),
                            "src", "dst", directed=True)
    for fused in (False, True):
        dist = _bfs_state(g, 0)
        info = acc(g, dist, hop, active_in=frontier.from_vertices(g.n, [0]), max_iter=3,
                   options=AccOptions(fused=fused))
        assert info.iterations == 3 and not info.converged
        assert device.to_host(dist)[:4].tolist() == [0, 1, 2, 3]
        assert device.to_host(dist)[4] == UNREACHED


def test_bad_arguments_raise_clear_errors():
    g = GRAPHS["random"]
    dist = _bfs_state(g, 0)
    with pytest.raises(ValueError, match="combine"):
        acc(g, dist, hop, combine="sum")
    with pytest.raises(ValueError, match="filter"):
        acc(g, dist, hop, options=AccOptions(filter="bins"))
    with pytest.raises(ValueError, match="direction"):
        acc(g, dist, hop, options=AccOptions(direction="up"))
    with pytest.raises(ValueError, match="threshold"):
        acc(g, dist, hop, options=AccOptions(threshold=0))
    with pytest.raises(ValueError, match="pull_fraction"):
        acc(g, dist, hop, options=AccOptions(pull_fraction=2))
    with pytest.raises(ValueError, match="max_iter"):
        acc(g, dist, hop, max_iter=0)
    with pytest.raises(ValueError, match="state"):
        acc(g, dist[:-1], hop)
    with pytest.raises(ValueError, match="state"):
        acc(g, device.zeros(g.n, np.uint8), hop)
    with pytest.raises(ValueError, match="active_in must be a uint32 bit-vector"):
        acc(g, dist, hop, active_in=device.zeros(3, np.int32))
    with pytest.raises(ValueError, match="block_size"):
        acc(g, dist, hop, options=AccOptions(block_size=48))
    with pytest.raises(ValueError, match="path_length takes 'weight', which args does not hold"):
        acc(g, dist, path_length, args={"wait": device.zeros(g.m, np.float32)})
    with pytest.raises(TypeError, match=r"compute .* must take \(u, v, e, state, ...\)"):
        acc(g, dist, lambda u, v: 0)
    with pytest.raises(ValueError, match="medium_degree"):
        acc(g, dist, hop, options=AccOptions(medium_degree=10, large_degree=5))


def test_options_are_one_value_checked_with_executions_messages():
    for bad in (dict(filter="bins"), dict(direction="up"), dict(threshold=0),
                dict(pull_fraction=2), dict(block_size=48), dict(fused="yes"),
                dict(edge_access="scattered")):
        with pytest.raises(ValueError) as ours:
            AccOptions(**bad)
        with pytest.raises(ValueError) as executions:
            Execution(**bad)
        assert str(ours.value) == str(executions.value)
    e = Execution(direction="push", pull_fraction=0.5, filter="ballot", threshold=8,
                  block_size=64, edge_access="naive", feature_aware=False)
    assert AccOptions.of(e, large_degree=64) == AccOptions(
        direction="push", pull_fraction=0.5, filter="ballot", threshold=8, fused=False,
        block_size=64, edge_access="naive", large_degree=64)
    assert (AccOptions.of(Execution()).direction, AccOptions(fused=None).fused) == ("auto", False)
    g = GRAPHS["random"]
    with pytest.raises(TypeError, match="fused"):
        acc(g, _bfs_state(g, 0), hop, fused=True)  # the options are one value, not keywords


@pytest.mark.parametrize("direction, fused", [("push", False), ("pull", True), ("auto", False)])
def test_parents_of_a_level_synchronous_search_are_valid(direction, fused):
    g = GRAPHS["random"]
    src, dst = csr_edges(g)
    dist = _bfs_state(g, 4)
    parent = device.full(g.n, -1, np.int32)
    acc(g, dist, hop, settled=reached, active_in=frontier.from_vertices(g.n, [4]), parent=parent,
        options=AccOptions(direction=direction, fused=fused))
    oracle.check_predecessors(g.n, src, dst, device.to_host(dist).astype(np.int64),
                              device.to_host(parent).astype(np.int64), [4])
    with pytest.raises(ValueError, match="parent"):
        acc(g, dist, hop, parent=device.zeros(g.n, np.float32))
