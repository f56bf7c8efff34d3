"""The "onyx" NetworkX backend (onyx_rapids.nx): conversion, each function against NetworkX's
own answer, dispatch, can_run / should_run refusals and NetworkX's exceptions.

NetworkX's own test modules run against the backend in tests/test_networkx_suite.py.
"""

import inspect

import pytest

nx = pytest.importorskip("networkx")

from _onyx_rapids_nx import FUNCTIONS, get_info  # noqa: E402
from onyx_rapids import nx as onyx_nx  # noqa: E402
from onyx_rapids.nx import BackendInterface, OnyxGraph, from_networkx  # noqa: E402


def _refused(call, reason):
    """``call`` (with backend="onyx") raises NotImplementedError whose cause names ``reason``."""
    with pytest.raises(NotImplementedError) as err:
        call()
    cause = err.value.__cause__ or err.value
    assert reason in str(cause), str(cause)


@pytest.fixture(autouse=True)
def _quiet_cache_note():
    """NetworkX warns each time a cached conversion is reused; these tests reuse on purpose."""
    nx.config.warnings_to_ignore.add("cache")
    yield
    nx.config.warnings_to_ignore.discard("cache")


def _named_digraph():
    G = nx.DiGraph()
    G.add_edges_from([("s", "b"), ("s", "a"), ("a", "c"), ("b", "c"), ("c", "d"), ("d", "s"),
                      ("e", "s")])
    G.add_node("iso")
    return G


def _weighted():
    G = nx.Graph()
    G.add_weighted_edges_from([("x", "y", 0.1), ("y", "z", 0.2), ("x", "z", 0.3),
                               ("z", "w", 0.7), ("w", "v", 1.1), ("x", "v", 2.0)])
    G.add_node("lonely")
    return G


# ------------------------------------------------------------------------- conversion

@pytest.mark.parametrize("make", [_named_digraph, _weighted, nx.MultiGraph, nx.MultiDiGraph])
def test_round_trip_keeps_nodes_edges_and_weights(make):
    G = make()
    if G.number_of_nodes() == 0:  # the multigraph kinds: parallel edges, a self-loop
        G.add_edge("p", "q", weight=2)
        G.add_edge("p", "q", weight=5)
        G.add_edge("q", "q", weight=1)
        G.add_node(("tuple", 1))
    og = from_networkx(G)
    assert og.__networkx_backend__ == "onyx"
    assert og.nodes == list(G) and og.is_directed() == G.is_directed()
    assert og.is_multigraph() == G.is_multigraph()
    assert og.number_of_edges() == G.number_of_edges()
    H = og.to_networkx()
    assert type(H) is type(G) and list(H) == list(G)
    # edges without the attribute are carried with NetworkX's default weight, 1
    assert (sorted(map(repr, H.edges(data="weight")))
            == sorted(map(repr, G.edges(data="weight", default=1))))


def test_conversion_follows_networkx_adjacency_order_and_weight_types():
    G = nx.Graph()
    G.add_edge("b", "a", weight=3)
    G.add_edge("b", "c")  # no weight: NetworkX reads 1
    og = from_networkx(G)
    assert og.nodes == ["b", "a", "c"]
    assert og.offsets.tolist() == [0, 2, 3, 4] and og.indices.tolist() == [1, 2, 0, 0]
    assert og.weights["weight"].tolist() == [3, 1, 3, 1]
    assert og.weights["weight"].dtype.kind == "i"
    g = og.graph
    assert (g.n, g.m, g.directed) == (3, 4, False)


def test_integer_labels_out_of_order_are_renumbered():
    G = nx.DiGraph()
    G.add_edges_from([(2, 0), (0, 1), (1, 2), (2, 1)])
    og = from_networkx(G, weight=None)
    assert og.nodes == [2, 0, 1] and og.indices.tolist() == [1, 2, 2, 0]
    assert og.offsets.tolist() == [0, 2, 3, 4]


def test_non_numeric_attribute_is_not_carried():
    G = nx.Graph([(0, 1, {"weight": "heavy"})])
    assert from_networkx(G).weights == {}
    _refused(lambda: nx.single_source_dijkstra_path_length(G, 0, backend="onyx"),
             "carries no numeric edge attribute")


def test_from_networkx_refuses_other_objects():
    with pytest.raises(TypeError, match="must be a NetworkX graph"):
        from_networkx({0: [1]})


def test_conversion_is_cached_on_the_networkx_graph():
    G = nx.path_graph(5)
    assert nx.bfs_layers(G, 0, backend="onyx") is not None
    first = G.__networkx_cache__["backends"]["onyx"]
    (og,) = first.values()
    assert isinstance(og, OnyxGraph)
    list(nx.bfs_edges(G, 0, backend="onyx"))
    assert list(G.__networkx_cache__["backends"]["onyx"].values()) == [og]


# ------------------------------------------------------------------------- pagerank

def test_pagerank_matches_networkx_on_karate():
    G = nx.karate_club_graph()
    got = nx.pagerank(G, backend="onyx")
    want = nx.pagerank(G)
    assert list(got) == list(want) and all(type(v) is float for v in got.values())
    assert max(abs(got[v] - want[v]) for v in G) < 1e-5


def test_pagerank_personalization_dict_with_labels_and_unweighted():
    G = _named_digraph()
    for u, v in G.edges:
        G[u][v]["weight"] = 2.0 if u == "s" else 1.0
    p = {"a": 1, "d": 3, "not a node": 5}
    got = nx.pagerank(G, personalization=p, weight=None, backend="onyx")
    want = nx.pagerank(G, personalization=p, weight=None, tol=1e-12, max_iter=1000)
    assert max(abs(got[v] - want[v]) for v in G) < 1e-4
    with pytest.raises(ZeroDivisionError):
        nx.pagerank(G, personalization={"a": 0}, backend="onyx")


def test_pagerank_not_converged_raises():
    G = nx.cycle_graph(5, create_using=nx.DiGraph)
    G.add_edge(0, 2)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, max_iter=0, backend="onyx")
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(G, max_iter=2, tol=1e-12, backend="onyx")
    assert nx.pagerank(nx.Graph(), backend="onyx") == {}


def test_pagerank_negative_weights_go_back_to_networkx(monkeypatch):
    G = nx.DiGraph([(0, 1, {"weight": -1.0}), (1, 0, {"weight": 1.0})])
    _refused(lambda: nx.pagerank(G, backend="onyx"), "negative")
    # chosen by NetworkX (priority, no threshold): the refusal falls back to its own code
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["onyx"])
    monkeypatch.setattr(onyx_nx.interface, "SHOULD_RUN_MIN_EDGES", 0)
    assert nx.pagerank(G) == {0: 0.5, 1: 0.5}
    assert "onyx" in G.__networkx_cache__["backends"]  # it was converted and tried


# ------------------------------------------------------------------------- traversal

@pytest.mark.parametrize("depth_limit", [None, 1, 2])
def test_bfs_edges_tree_and_layers_in_networkx_order(depth_limit):
    for G in (_named_digraph(), nx.karate_club_graph()):
        src = next(iter(G))
        got = nx.bfs_edges(G, src, depth_limit=depth_limit, backend="onyx")
        assert inspect.isgenerator(got)
        assert list(got) == list(nx.bfs_edges(G, src, depth_limit=depth_limit))
        T = nx.bfs_tree(G, src, depth_limit=depth_limit, backend="onyx")
        assert nx.utils.graphs_equal(T, nx.bfs_tree(G, src, depth_limit=depth_limit))
    G = nx.karate_club_graph()
    assert list(nx.bfs_layers(G, [33, 0, 5], backend="onyx")) == list(nx.bfs_layers(G, [33, 0, 5]))
    assert list(nx.bfs_layers(G, 16, backend="onyx")) == list(nx.bfs_layers(G, 16))


def test_bfs_missing_source_raises_networkx_error():
    G = _named_digraph()
    with pytest.raises(nx.NetworkXError, match="not in the digraph"):
        list(nx.bfs_edges(G, "nope", backend="onyx"))
    with pytest.raises(nx.NetworkXError, match="not in the graph"):
        list(nx.bfs_layers(G, ["s", "nope"], backend="onyx"))


def test_single_source_shortest_path_length_and_cutoff():
    G = _named_digraph()
    for cutoff in (None, 1, 1.5):
        got = nx.single_source_shortest_path_length(G, "s", cutoff=cutoff, backend="onyx")
        assert got == nx.single_source_shortest_path_length(G, "s", cutoff=cutoff)
    assert list(got.values()) == sorted(got.values())
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(G, "nope", backend="onyx")


def test_dijkstra_lengths_are_exact_in_the_weights_type():
    G = _weighted()  # 0.1 + 0.2 != 0.3 in float64, equal in float32: the exact pass decides
    got = nx.single_source_dijkstra_path_length(G, "x", backend="onyx")
    assert got == nx.single_source_dijkstra_path_length(G, "x")
    assert got["z"] == 0.3 and "lonely" not in got
    cut = nx.single_source_dijkstra_path_length(G, "x", cutoff=1.0, backend="onyx")
    assert cut == nx.single_source_dijkstra_path_length(G, "x", cutoff=1.0)
    H = nx.DiGraph([(0, 1, {"w": 4}), (1, 2, {"w": 5}), (0, 2, {"w": 11}), (3, 2, {"w": 1})])
    multi = nx.multi_source_dijkstra_path_length(H, {0, 3}, weight="w", backend="onyx")
    assert multi == {0: 0, 3: 0, 2: 1, 1: 4}
    assert all(type(v) is int for v in multi.values())
    assert nx.dijkstra_path_length(H, 0, 2, weight="w", backend="onyx") == 9


def test_dijkstra_exceptions():
    H = nx.DiGraph([(0, 1, {"weight": 2})])
    H.add_node(2)
    with pytest.raises(nx.NetworkXNoPath):
        nx.dijkstra_path_length(H, 0, 2, backend="onyx")
    with pytest.raises(nx.NodeNotFound):
        nx.dijkstra_path_length(H, 9, 2, backend="onyx")
    with pytest.raises(nx.NodeNotFound):
        nx.multi_source_dijkstra_path_length(H, [0, 9], backend="onyx")
    with pytest.raises(ValueError, match="sources must not be empty"):
        nx.multi_source_dijkstra_path_length(H, [], backend="onyx")
    assert nx.dijkstra_path_length(H, 0, 0, backend="onyx") == 0


# ------------------------------------------------------------------------- components, cores

def test_components_in_networkx_order():
    G = nx.Graph([("c", "d"), ("a", "b"), ("e", "c")])
    G.add_node("z")
    assert list(nx.connected_components(G, backend="onyx")) == list(nx.connected_components(G))
    assert nx.number_connected_components(G, backend="onyx") == 3
    assert nx.is_connected(G, backend="onyx") is False
    D = _named_digraph()
    assert (list(nx.weakly_connected_components(D, backend="onyx"))
            == list(nx.weakly_connected_components(D)))
    assert nx.number_weakly_connected_components(D, backend="onyx") == 2
    assert nx.is_weakly_connected(D, backend="onyx") is False
    with pytest.raises(nx.NetworkXPointlessConcept):
        nx.is_connected(nx.Graph(), backend="onyx")
    with pytest.raises(nx.NetworkXNotImplemented):
        list(nx.connected_components(D, backend="onyx"))


def test_core_number_and_k_core():
    G = nx.karate_club_graph()
    nx.set_node_attributes(G, "x", "tag")
    assert nx.core_number(G, backend="onyx") == nx.core_number(G)
    got, want = nx.k_core(G, backend="onyx"), nx.k_core(G)
    assert nx.utils.graphs_equal(got, want) and got.nodes[0] == {"club": "Mr. Hi", "tag": "x"}
    assert nx.utils.graphs_equal(nx.k_core(G, 2, backend="onyx"), nx.k_core(G, 2))


def test_core_number_refusals():
    loop = nx.Graph([(0, 1), (1, 1)])
    with pytest.raises(nx.NetworkXNotImplemented, match="self loops"):
        nx.core_number(loop, backend="onyx")
    mutual = nx.DiGraph([(0, 1), (1, 0), (1, 2)])
    _refused(lambda: nx.core_number(mutual, backend="onyx"), "opposite edges")
    one_way = nx.DiGraph([(0, 1), (1, 2), (2, 0), (0, 3)])
    assert nx.core_number(one_way, backend="onyx") == nx.core_number(one_way)


# ------------------------------------------------------------------------- the interface

@pytest.mark.parametrize("name, kwargs, reason", [
    ("pagerank", {"nstart": {0: 1}}, "nstart"),
    ("pagerank", {"dangling": {0: 1}}, "dangling"),
    ("pagerank", {"alpha": 1.0}, "alpha"),
    ("pagerank", {"personalization": {0: -1, 1: 2}}, "negative"),
    ("pagerank", {"personalization": {0: "x"}}, "cannot check"),  # NetworkX raises its error
    ("bfs_edges", {"source": 0, "sort_neighbors": sorted}, "sort_neighbors"),
    ("bfs_tree", {"source": 0, "reverse": True}, "reverse"),
    ("single_source_dijkstra_path_length", {"source": 0, "weight": lambda u, v, d: 1},
     "callable"),
    ("k_core", {"core_number": {0: 1}}, "core_number"),
    ("betweenness_centrality", {}, "not implemented"),
])
def test_can_run_refuses_with_a_reason(name, kwargs, reason):
    D = nx.DiGraph([(0, 1)])
    answer = BackendInterface.can_run(name, (D,), kwargs)
    assert isinstance(answer, str) and reason in answer


def test_can_run_accepts_and_refusal_reaches_the_user():
    G = nx.path_graph(3)
    assert BackendInterface.can_run("bfs_tree", (G, 0), {"reverse": True}) is True  # undirected
    assert BackendInterface.can_run("pagerank", (G,), {"personalization": {0: 1}}) is True
    with pytest.raises(NotImplementedError, match="not implemented by 'onyx'"):
        nx.pagerank(G, nstart={0: 1.0}, backend="onyx")


def test_should_run_keeps_small_networkx_graphs_on_networkx(monkeypatch):
    G = nx.path_graph(3)
    answer = BackendInterface.should_run("pagerank", (G,), {})
    assert isinstance(answer, str) and "SHOULD_RUN_MIN_EDGES" in answer
    assert BackendInterface.should_run("pagerank", (from_networkx(G),), {}) is True
    monkeypatch.setattr(onyx_nx.interface, "SHOULD_RUN_MIN_EDGES", 2)
    assert BackendInterface.should_run("pagerank", (G,), {}) is True
    big = nx.path_graph(3 * 10)  # a traversal's threshold is its own
    monkeypatch.setattr(onyx_nx.interface, "TRAVERSAL_MIN_EDGES", 30)
    assert "TRAVERSAL_MIN_EDGES (30)" in BackendInterface.should_run("bfs_edges", (big,), {})
    assert BackendInterface.should_run("pagerank", (big,), {}) is True


def test_should_run_keeps_dijkstra_on_sparse_graphs_on_networkx(monkeypatch):
    monkeypatch.setattr(onyx_nx.interface, "TRAVERSAL_MIN_EDGES", 2)
    grid = nx.grid_2d_graph(6, 6)  # 60 edges on 36 nodes: road-like
    answer = BackendInterface.should_run("single_source_dijkstra_path_length", (grid,), {})
    assert isinstance(answer, str) and "DIJKSTRA_MIN_DENSITY" in answer
    assert BackendInterface.should_run("bfs_edges", (grid,), {}) is True  # Dijkstra only
    dense = nx.complete_graph(12)  # 66 edges on 12 nodes
    assert BackendInterface.should_run("dijkstra_path_length", (dense,), {}) is True


def test_automatic_dispatch_falls_back_for_small_graphs(monkeypatch):
    """backend_priority = ["onyx"]: a small graph stays on NetworkX (should_run), a large
    enough one (threshold lowered here) is converted and run by onyx."""
    G = nx.path_graph(6)
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["onyx"])
    nx.single_source_shortest_path_length(G, 0)
    assert "onyx" not in G.__networkx_cache__.get("backends", {})
    monkeypatch.setattr(onyx_nx.interface, "TRAVERSAL_MIN_EDGES", 1)
    assert nx.single_source_shortest_path_length(G, 0) == {i: i for i in range(6)}
    assert "onyx" in G.__networkx_cache__["backends"]


def test_backend_info_lists_every_function_with_networkx_signature():
    info = get_info()
    assert info["backend_name"] == "onyx" and set(info["functions"]) == set(FUNCTIONS)
    assert "onyx" in nx.utils.backends.backend_info
    for name in FUNCTIONS:
        ours = inspect.signature(getattr(BackendInterface, name))
        theirs = inspect.signature(nx.utils.backends._registered_algorithms[name].orig_func)
        assert ours == theirs, name
        assert "onyx" in nx.utils.backends._registered_algorithms[name].backends


@pytest.mark.gpu
def test_mid_size_graphs_match_networkx_on_the_gpu():
    """On a GPU: a 20 000-node graph through every kind of function, against NetworkX."""
    import random

    rng = random.Random(7)
    G = nx.gnm_random_graph(20_000, 80_000, seed=7, directed=True)
    for u, v in G.edges:
        G[u][v]["weight"] = rng.choice([0.1, 0.2, 0.3, 0.7, 1.1, 2.5])
    pr, want = nx.pagerank(G, backend="onyx"), nx.pagerank(G)
    assert sum(abs(pr[v] - want[v]) for v in G) < 1e-4
    assert (nx.single_source_dijkstra_path_length(G, 0, backend="onyx")
            == nx.single_source_dijkstra_path_length(G, 0))
    assert list(nx.bfs_edges(G, 0, backend="onyx")) == list(nx.bfs_edges(G, 0))
    assert (nx.single_source_shortest_path_length(G, 0, backend="onyx")
            == nx.single_source_shortest_path_length(G, 0))
    assert (list(nx.weakly_connected_components(G, backend="onyx"))
            == list(nx.weakly_connected_components(G)))
    U = G.to_undirected()
    U.remove_edges_from(nx.selfloop_edges(U))
    assert nx.core_number(U, backend="onyx") == nx.core_number(U)
