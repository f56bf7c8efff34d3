"""betweenness_centrality and edge_betweenness_centrality against the float64 oracle
(oracles_betweenness.py, itself checked against NetworkX here): shapes, every scaling, sampled
and given sources, batches, every registry variant, the command line and the refusals.

Most runs take one thread per vertex (``feature_aware=False``): under the CUDA simulator every
thread costs, and the lanes of a feature-aware run multiply them; the variant test runs the
feature-aware kernels on a few lanes.
"""

import random

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import oracles_betweenness as oracle
from graphs import csr_edges
from onyx_rapids import (Graph, betweenness_centrality, cli, datasets, device,
                         edge_betweenness_centrality, io, registry)
from onyx_rapids.algorithms import betweenness_centrality as bc_module

RTOL = 1e-9
NFA = dict(feature_aware=False)


def _graph(edges, directed=False, vertices=None):
    return Graph.from_edgelist(pd.DataFrame(edges, columns=["src", "dst"]), directed=directed,
                               vertices=vertices)


def _shapes():
    rnd_d = nx.gnm_random_graph(10, 25, seed=4, directed=True)
    rnd_u = nx.gnm_random_graph(11, 18, seed=5)
    names = list("abcdefg")
    return {
        "path": _graph([(i, i + 1) for i in range(5)]),
        "star": _graph([(0, i) for i in range(1, 7)]),
        "cycle": _graph([(i, (i + 1) % 7) for i in range(7)]),
        "two_triangles": _graph([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)]),
        "directed_random": _graph(list(rnd_d.edges()), directed=True, vertices=range(10)),
        "undirected_random": _graph(list(rnd_u.edges()), vertices=range(12)),
        "disconnected": _graph([(0, 1), (1, 2), (3, 4), (4, 3), (2, 2)], directed=True,
                               vertices=[5]),
        "labelled": _graph([(names[i], names[(i + 1) % 7]) for i in range(7)]
                           + [("a", "d"), ("b", "f")]),
    }


SHAPES = _shapes()


def _internal(g, ids):
    return device.to_host(g.to_internal(np.asarray(ids, dtype=object)
                                        if g.id_map.labels is not None else np.asarray(ids)))


def _oracle_bc(g, sources=None, **kw):
    src, dst = csr_edges(g)
    internal = None if sources is None else _internal(g, sources)
    return oracle.betweenness(g.n, src, dst, directed=g.directed, sources=internal, **kw)


def _oracle_ebc(g, sources=None, **kw):
    src, dst = csr_edges(g)
    internal = None if sources is None else _internal(g, sources)
    return oracle.edge_betweenness(g.n, src, dst, directed=g.directed, sources=internal, **kw)


def _check_bc(g, df, expected):
    df = io.to_pandas(df)  # (a cuDF frame on a GPU)
    assert list(df.columns) == ["vertex", "betweenness_centrality"]
    assert df["vertex"].tolist() == list(g.id_map.original())
    np.testing.assert_allclose(df["betweenness_centrality"].to_numpy(), expected, rtol=RTOL,
                               atol=1e-12)


def _check_ebc(g, df, expected):
    df = io.to_pandas(df)
    assert list(df.columns) == ["src", "dst", "betweenness_centrality"]
    u, v = _internal(g, df["src"].tolist()), _internal(g, df["dst"].tolist())
    keys = list(zip(u.tolist(), v.tolist()))
    if not g.directed:  # each undirected edge once, src <= dst
        keys = [(min(a, b), max(a, b)) for a, b in keys]
        assert len(set(keys)) == len(keys)
        if g.id_map.labels is None:
            assert (df["src"] <= df["dst"]).all()
    assert sorted(keys) == sorted(expected)
    got = df["betweenness_centrality"].to_numpy()
    np.testing.assert_allclose(got, [expected[key] for key in keys], rtol=RTOL, atol=1e-12)


# ------------------------------------------------------------------------- the oracle itself


@pytest.mark.parametrize("directed", [False, True])
def test_oracle_matches_networkx(directed):
    G = nx.gnm_random_graph(11, 22, seed=9, directed=directed)
    G.add_node(11)  # isolated
    src, dst = map(np.array, zip(*G.edges()))
    n = G.number_of_nodes()
    drawn = random.Random(5).sample(list(G.nodes()), 4)  # NetworkX's own draw for seed=5
    for normalized in (False, True):
        for endpoints in (False, True):
            kw = dict(normalized=normalized, endpoints=endpoints)
            exact = nx.betweenness_centrality(G, **kw)
            got = oracle.betweenness(n, src, dst, directed=directed, **kw)
            np.testing.assert_allclose(got, [exact[i] for i in range(n)], rtol=RTOL)
            sampled = nx.betweenness_centrality(G, k=4, seed=5, **kw)
            got = oracle.betweenness(n, src, dst, directed=directed, sources=drawn, **kw)
            np.testing.assert_allclose(got, [sampled[i] for i in range(n)], rtol=RTOL)
        for k, sources in ((None, None), (4, drawn)):
            exact = nx.edge_betweenness_centrality(G, k=k, seed=5, normalized=normalized)
            got = oracle.edge_betweenness(n, src, dst, directed=directed, sources=sources,
                                          normalized=normalized)
            key = (lambda e: e) if directed else (lambda e: (min(e), max(e)))
            assert sorted(got) == sorted(key(e) for e in exact)
            for e, value in exact.items():
                assert got[key(e)] == pytest.approx(value, rel=RTOL, abs=1e-12)


# ------------------------------------------------------------------------------- the library


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_vertex_betweenness_matches_oracle(shape):
    g = SHAPES[shape]
    df, info = betweenness_centrality(g, return_info=True, **NFA)
    _check_bc(g, df, _oracle_bc(g))
    assert info.converged and info["sources"] == g.n and info["batches"] == 1


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_edge_betweenness_matches_oracle(shape):
    g = SHAPES[shape]
    _check_ebc(g, edge_betweenness_centrality(g, **NFA), _oracle_ebc(g))


@pytest.mark.parametrize("shape", ["directed_random", "undirected_random"])
@pytest.mark.parametrize("k", [None, 4])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("endpoints", [False, True])
def test_every_scaling(shape, k, normalized, endpoints):
    g = SHAPES[shape]
    seed = None if k is None else 11
    sources = None if k is None else bc_module.sample_sources(g, k, seed)
    df = betweenness_centrality(g, k=k, normalized=normalized, endpoints=endpoints, seed=seed,
                                **NFA)
    _check_bc(g, df, _oracle_bc(g, sources, normalized=normalized, endpoints=endpoints))


@pytest.mark.parametrize("shape", ["directed_random", "undirected_random"])
def test_edge_betweenness_of_sampled_sources(shape):
    g = SHAPES[shape]
    sources = bc_module.sample_sources(g, 5, 3)
    df = edge_betweenness_centrality(g, k=5, seed=3, normalized=False, **NFA)
    _check_ebc(g, df, _oracle_ebc(g, sources, normalized=False))


def test_sources_given_by_label_and_k_equal_to_n():
    g = SHAPES["labelled"]
    sources = ["c", "a", "f"]
    _check_bc(g, betweenness_centrality(g, sources=pd.Series(sources), **NFA),
              _oracle_bc(g, sources))
    _check_ebc(g, edge_betweenness_centrality(g, sources=sources, **NFA),
               _oracle_ebc(g, sources))
    every = betweenness_centrality(g, k=g.n, seed=1, **NFA)  # every vertex, in random order
    _check_bc(g, every, _oracle_bc(g))


def test_sample_sources_is_the_draw_the_call_uses_and_repeats():
    g = SHAPES["undirected_random"]
    drawn = bc_module.sample_sources(g, 6, 42)
    assert len(set(drawn.tolist())) == 6 and list(drawn) == list(bc_module.sample_sources(g, 6, 42))
    by_k = betweenness_centrality(g, k=6, seed=42, **NFA)
    by_list = betweenness_centrality(g, sources=list(drawn), **NFA)
    np.testing.assert_array_equal(by_k["betweenness_centrality"].to_numpy(),
                                  by_list["betweenness_centrality"].to_numpy())
    # a reordered graph draws the same vertices (ascending ids), so the values per id agree
    h = g.reorder("degree")
    assert sorted(bc_module.sample_sources(h, 6, 42)) == sorted(drawn)
    _check_ebc(h, edge_betweenness_centrality(h, sources=[4, 0], **NFA),
               _oracle_ebc(h, [4, 0]))
    per_id = betweenness_centrality(h, k=6, seed=42, **NFA).set_index("vertex")
    np.testing.assert_allclose(per_id.loc[by_k["vertex"], "betweenness_centrality"].to_numpy(),
                               by_k["betweenness_centrality"].to_numpy(), rtol=RTOL)


def test_batches_smaller_than_the_sources(monkeypatch):
    monkeypatch.setattr(bc_module, "MAX_LANES", 3)
    g = SHAPES["directed_random"]  # 10 sources: 4 batches of 3 lanes, the last padded
    df, info = betweenness_centrality(g, return_info=True, **NFA)
    assert (info["lanes"], info["batches"]) == (3, 4)
    _check_bc(g, df, _oracle_bc(g))
    u = SHAPES["undirected_random"]
    sources = bc_module.sample_sources(u, 7, 2)  # 7 sources: 3 batches of 3, 2 lanes empty
    df, info = edge_betweenness_centrality(u, k=7, seed=2, return_info=True, **NFA)
    assert (info["lanes"], info["batches"]) == (3, 3)
    _check_ebc(u, df, _oracle_ebc(u, sources))
    df = betweenness_centrality(u, k=7, seed=2, endpoints=True, **NFA)
    _check_bc(u, df, _oracle_bc(u, sources, endpoints=True))


def test_the_batch_follows_the_device_memory(monkeypatch):
    g = SHAPES["path"]
    monkeypatch.setattr(bc_module.memory, "device_available",
                        lambda: 2 * g.n * bc_module.LANE_BYTES * 2)  # room for 2 lanes
    _, info = betweenness_centrality(g, return_info=True, **NFA)
    assert (info["lanes"], info["batches"]) == (2, 3)


@pytest.mark.parametrize("name", ["betweenness_centrality", "edge_betweenness_centrality"])
def test_every_registry_variant(name):
    spec = registry.get(name)
    variants = spec.variants()
    assert {tuple(sorted(v.items())) for v in variants} == {
        (("direction", d), ("feature_aware", fa)) for d in ("pull", "push")
        for fa in (True, False)}
    g = SHAPES["two_triangles"]
    sources = [0, 4, 5]
    check, expected = ((_check_bc, _oracle_bc(g, sources)) if name == "betweenness_centrality"
                       else (_check_ebc, _oracle_ebc(g, sources)))
    for options in variants:
        df, info = spec.function(g, sources=sources, return_info=True, **options)
        check(g, df, expected)
        assert set(info.directions) == {options["direction"]}
        assert info["feature_aware"] is options["feature_aware"]


def test_host_placed_graph():
    g = SHAPES["directed_random"].to("host")
    assert g.placement == "host"
    _check_bc(g, betweenness_centrality(g, sources=[0, 3, 7], **NFA),
              _oracle_bc(g, [0, 3, 7]))


def test_refusals():
    g = SHAPES["path"]
    cases = [
        (dict(k=7), ValueError, r"k=7: sample at least 1 and at most the graph's 6 vertices"),
        (dict(k=0), ValueError, r"k \(sources sampled\) must be a positive integer"),
        (dict(k=[0, 1]), ValueError, "give a list of vertices .* as sources= instead"),
        (dict(k=2, sources=[0, 1]), ValueError, "give k .* or sources .*, not both"),
        (dict(seed=3), ValueError, "seed=3 seeds the sampling of k sources"),
        (dict(k=2, seed=-1), ValueError, "seed must be a non-negative integer"),
        (dict(sources=[0, 9]), ValueError, "sources: .* not a vertex of this graph: 9"),
        (dict(sources=[1, 1]), ValueError, r"sources name vertices more than once \(1\)"),
        (dict(normalized=1), ValueError, "normalized must be True or False"),
        (dict(endpoints="yes"), ValueError, "endpoints must be True or False"),
        (dict(fold=True), ValueError, "betweenness_centrality does not support fold=True"),
    ]
    for kwargs, error, match in cases:
        with pytest.raises(error, match=match):
            betweenness_centrality(g, **kwargs)
    with pytest.raises(NotImplementedError, match="weight='w': weighted betweenness"):
        betweenness_centrality(g, weight="w")
    with pytest.raises(NotImplementedError, match="edge_betweenness_centrality: weight="):
        edge_betweenness_centrality(g, weight="w")
    with pytest.raises(TypeError, match="does not support endpoints"):
        edge_betweenness_centrality(g, endpoints=True)
    multi = Graph.from_edgelist(pd.DataFrame({"src": [0, 0], "dst": [1, 1]}), multigraph=True)
    with pytest.raises(ValueError, match="parallel edges .* multigraph=False"):
        edge_betweenness_centrality(multi)


def test_sampling_one_source_gives_it_nan_as_networkx():
    g = SHAPES["path"]
    df = betweenness_centrality(g, sources=[2], **NFA)
    values = df.set_index("vertex")["betweenness_centrality"]
    assert np.isnan(values[2]) and not values.drop(2).isna().any()


# -------------------------------------------------------------------------- the command line


def test_cli_k_on_the_embedded_graph(capsys, tmp_path):
    out = tmp_path / "bc.parquet"
    code = cli.main(["run", "betweenness_centrality", "--k", "8", "--param", "seed=3",
                     "--no-feature-aware", "--quiet", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    g = Graph.from_parquet(datasets.dataset_path("karate"), "src", "dst")
    sources = bc_module.sample_sources(g, 8, 3)
    _check_bc(g, pd.read_parquet(out), _oracle_bc(g, sources))
    # --k above n (florentine_families has 15 vertices): every vertex is a source, NetworkX's
    # exact values
    code = cli.main(["run", "betweenness_centrality", "--dataset", "florentine_families",
                     "--k", "64", "--no-feature-aware", "--quiet", "--out", str(out), "--force"])
    assert code == 0, capsys.readouterr().err
    exact = nx.betweenness_centrality(nx.from_pandas_edgelist(
        datasets.load_edges("florentine_families"), "src", "dst"))
    df = pd.read_parquet(out)
    np.testing.assert_allclose(df["betweenness_centrality"], [exact[v] for v in df["vertex"]],
                               rtol=RTOL)
    # weighted betweenness is refused as a usage error (exit 2, one line)
    code = cli.main(["run", "betweenness_centrality", "--param", "weight=weight", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "weighted betweenness (shortest paths by weight" in err


# ------------------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
@pytest.mark.parametrize("directed, scale", [(False, 14), (True, 13)])
def test_rmat_64_sampled_sources_on_the_gpu(directed, scale):
    g = Graph.from_edgelist(datasets.rmat(scale, seed=2), directed=directed)
    sources = bc_module.sample_sources(g, 64, 9)
    expected = _oracle_bc(g, sources)
    for options in registry.get("betweenness_centrality").variants():
        df = betweenness_centrality(g, k=64, seed=9, **options)
        _check_bc(g, df, expected)
    _check_ebc(g, edge_betweenness_centrality(g, k=64, seed=9), _oracle_ebc(g, sources))


@pytest.mark.gpu
def test_rmat_batches_on_the_gpu(monkeypatch):
    monkeypatch.setattr(bc_module, "MAX_LANES", 48)  # 100 sources: 3 batches of 34 lanes
    g = Graph.from_edgelist(datasets.rmat(12, seed=4), directed=True)
    sources = bc_module.sample_sources(g, 100, 1)
    df, info = betweenness_centrality(g, k=100, seed=1, endpoints=True, return_info=True)
    assert (info["lanes"], info["batches"]) == (34, 3)
    _check_bc(g, df, _oracle_bc(g, sources, endpoints=True))


@pytest.mark.gpu
@pytest.mark.parametrize("graph", ["karate", "rmat"])
def test_sixteen_sampled_sources_repeat_on_the_gpu(graph):
    """The tuning suite's betweenness inputs (k=16, seed=37), two vertices a warp: every
    variant equals the oracle, on repeated calls too.  (The tuning run that found the results
    differing from call to call had lost ``seed``: tests/test_tuning.py.)"""
    g = Graph.from_edgelist(datasets.load_edges("karate") if graph == "karate"
                            else datasets.rmat(12, seed=5))
    expected = _oracle_bc(g, bc_module.sample_sources(g, 16, 37))
    for options in registry.get("betweenness_centrality").variants():
        for _ in range(2):
            _check_bc(g, betweenness_centrality(g, k=16, seed=37, **options), expected)
