"""Graph attributes (onyx_rapids.attributes, Graph.attributes) against NumPy / NetworkX
references, on small graphs (each attributes() call runs two BFS sweeps under the simulator)."""

import json
import math

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import attributes as attrs
from onyx_rapids import device
from onyx_rapids.graph import Graph


def frame(pairs, **columns):
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return pd.DataFrame({"src": pairs[:, 0], "dst": pairs[:, 1], **columns})


def nx_simple(g) -> nx.Graph:
    """The simple undirected view of ``g`` in internal ids, as NetworkX."""
    src = device.to_host(g.edge_sources).tolist()
    dst = device.to_host(g.out_indices).tolist()
    G = nx.Graph()
    G.add_nodes_from(range(g.n))
    G.add_edges_from((u, v) for u, v in zip(src, dst) if u != v)
    return G


def nx_stored(g):
    """``g`` as NetworkX in internal ids: a DiGraph of its stored edges, or a Graph."""
    src = device.to_host(g.edge_sources).tolist()
    dst = device.to_host(g.out_indices).tolist()
    G = nx.DiGraph() if g.directed else nx.Graph()
    G.add_nodes_from(range(g.n))
    G.add_edges_from(zip(src, dst))
    return G


def degree_reference(d) -> dict:
    """The degree statistics by direct (independent) formulas."""
    d = np.asarray(d, dtype=np.float64)
    n, total = d.size, d.sum()
    mean, std = d.mean(), d.std()
    ref = {"mean": mean, "max": int(d.max()), "std": std,
           "skew": float(((d - mean) ** 3).mean() / std ** 3) if std > 0 else None,
           # mean absolute difference over all ordered pairs, halved and normalized
           "gini": float(np.abs(d[:, None] - d[None, :]).sum() / (2 * n * n * mean))
           if total else None}
    for q in (50, 90, 99):
        ref[f"p{q}"] = float(np.percentile(d, q))
    top = math.ceil(n / 100)
    ref["top1_share"] = float(np.sort(d)[::-1][:top].sum() / total) if total else None
    best = 0.0  # largest P with the top (1 - P) of the vertices owning at least P of the edges
    desc = np.sort(d)[::-1]
    for k in range(1, n + 1):
        best = max(best, min(desc[:k].sum() / total, 1 - k / n)) if total else None
    ref["balanced_inequality"] = best if total else None
    return ref


def check_degrees(a, prefix, degrees):
    for key, want in degree_reference(degrees).items():
        got = a[f"{prefix}_degree_{key}"]
        if want is None:
            assert got is None, key
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12), key


def double_sweep_reference(G: nx.Graph, sweeps=2):
    """The double sweep by NetworkX BFS: from the smallest vertex of largest degree, then from
    the smallest of the farthest vertices."""
    degrees = np.array([G.degree(v) for v in range(G.number_of_nodes())])
    source, best = int(np.argmax(degrees)), 0
    for _ in range(sweeps):
        dist = nx.single_source_shortest_path_length(G, source)
        depth = max(dist.values())
        best = max(best, depth)
        source = min(v for v, x in dist.items() if x == depth)
    return best


def check_common(g, a):
    """Keys every graph shares with a NetworkX/NumPy reference."""
    json.dumps(a, allow_nan=False)  # plain values, no NaN
    assert all(isinstance(k, str) for k in a)
    assert all(v is None or type(v) in (int, float, str, bool) for v in a.values())
    assert a["version"] == attrs.VERSION
    assert (a["n"], a["m"], a["volume"]) == (g.n, g.m, g.m)
    src = device.to_host(g.edge_sources)
    dst = device.to_host(g.out_indices)
    loops = int((src == dst).sum())
    assert a["self_loops"] == loops
    assert a["edges"] == (g.m if g.directed else (g.m + loops) // 2)
    out_d = device.to_host(g.out_degree)
    in_d = device.to_host(g.in_degree)
    check_degrees(a, "out", out_d)
    check_degrees(a, "in", in_d)
    assert a["isolated_share"] == pytest.approx(np.mean((out_d == 0) & (in_d == 0)))
    assert a["zero_in_share"] == pytest.approx(np.mean(in_d == 0))
    assert a["zero_out_share"] == pytest.approx(np.mean(out_d == 0))
    S = nx_simple(g)
    wedges = sum(d * (d - 1) // 2 for _, d in S.degree())
    assert a["wedges"] == wedges
    if a["clustering_exact"] and wedges:
        assert a["clustering_samples"] == wedges
        assert a["transitivity_estimate"] == pytest.approx(nx.transitivity(S), abs=1e-12)
        assert a["average_clustering_estimate"] == pytest.approx(nx.average_clustering(S),
                                                                 abs=1e-12)
    if S.number_of_edges():
        assert a["diameter_estimate"] == double_sweep_reference(S)
        first = nx.node_connected_component(S, int(np.argmax([S.degree(v) for v in S])))
        assert a["reached_share"] == pytest.approx(len(first) / g.n)
    return S


@pytest.fixture(scope="module")
def karate():
    g = Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    return g, g.attributes()


def test_karate_against_networkx(karate):
    g, a = karate
    S = check_common(g, a)
    G = nx.karate_club_graph()
    assert a["kind"] == "undirected" and not a["weighted"] and not a["multigraph"]
    assert a["edges"] == G.number_of_edges() == 78
    assert a["density"] == pytest.approx(nx.density(G))
    assert a["degree_assortativity"] == pytest.approx(
        nx.degree_assortativity_coefficient(S), abs=1e-12)
    assert a["diameter_estimate"] == nx.diameter(G) == 5
    assert a["diameter_sweeps"] == 2 and a["reached_share"] == 1.0
    assert a["clustering_exact"] and a["wedges"] == 528
    assert a["transitivity_estimate"] == pytest.approx(nx.transitivity(G), abs=1e-12)
    assert a["average_clustering_estimate"] == pytest.approx(nx.average_clustering(G), abs=1e-12)
    assert a["left_n"] is None and a["weight_mean"] is None


def test_cached_on_the_graph(karate, monkeypatch):
    g, a = karate
    def fail(*args, **kwargs):  # a second computation would call this
        raise AssertionError("attributes recomputed")
    monkeypatch.setattr(attrs, "attributes", fail)
    assert g.attributes() is a
    assert g.attributes(samples=attrs.DEFAULT_SAMPLES, seed=0) is a
    with pytest.raises(AssertionError, match="recomputed"):
        g.attributes(seed=1)  # another seed is another entry


def test_host_placed_graph_gives_the_same_attributes(karate):
    g, a = karate
    h = g.to("host")
    assert h.placement == "host"
    assert attrs.attributes(h) == a


def test_grid_and_tree_diameters_are_exact():
    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(6, 6), ordering="sorted")
    tree = nx.balanced_tree(2, 4)  # 31 vertices, diameter 8
    for G, diameter in ((grid, 10), (tree, 8)):
        g = Graph.from_edgelist(frame(list(G.edges())))
        a = g.attributes()
        check_common(g, a)
        assert a["diameter_estimate"] == nx.diameter(G) == diameter
        assert a["degree_assortativity"] == pytest.approx(
            nx.degree_assortativity_coefficient(G), abs=1e-12)
        assert a["density"] == pytest.approx(nx.density(G))
    assert a["transitivity_estimate"] == 0.0  # the tree has no triangle


def test_directed_weighted_random_graph():
    G = nx.gnp_random_graph(40, 0.08, seed=3, directed=True)
    rng = np.random.default_rng(0)
    w = rng.uniform(0.5, 2.0, G.number_of_edges()).astype(np.float32)
    g = Graph.from_edgelist(frame(list(G.edges()), w=w), weight="w", directed=True)
    a = g.attributes()
    check_common(g, a)
    D = nx_stored(g)
    assert a["kind"] == "directed" and a["weighted"]
    assert a["edges"] == a["m"] == G.number_of_edges()
    assert a["density"] == pytest.approx(nx.density(G))
    assert a["degree_assortativity"] == pytest.approx(
        nx.degree_assortativity_coefficient(D), abs=1e-12)  # out of the source, in of the target
    stored = device.to_host(g.edge_weights[:, 0]).astype(np.float64)
    assert a["weight_mean"] == pytest.approx(stored.mean())
    assert a["weight_std"] == pytest.approx(stored.std())
    assert (a["weight_min"], a["weight_max"]) == (pytest.approx(stored.min()),
                                                  pytest.approx(stored.max()))


def test_bipartite():
    ratings = pd.DataFrame({"user": [1, 1, 1, 2, 2, 3, 4, 4], "item": [7, 8, 9, 7, 8, 9, 9, 10]})
    g = Graph.from_bipartite(ratings, "user", "item")
    a = g.attributes()
    check_common(g, a)
    assert a["kind"] == "bipartite" and a["edges"] == 8
    assert (a["left_n"], a["right_n"]) == (4, 4)
    assert a["density"] == pytest.approx(8 / 16)
    assert (a["left_degree_max"], a["left_degree_mean"]) == (3, 2.0)
    assert (a["right_degree_max"], a["right_degree_mean"]) == (3, 2.0)
    assert a["transitivity_estimate"] == 0.0  # bipartite: no triangle
    assert a["degree_assortativity"] == pytest.approx(
        nx.degree_assortativity_coefficient(nx_simple(g)), abs=1e-12)


def test_isolated_vertices_self_loops_and_a_multigraph():
    # a triangle with a tail, a self-loop on 5, a parallel edge 0-1, two isolated vertices
    df = frame([(0, 1), (1, 2), (2, 0), (2, 3), (5, 5), (0, 1), (5, 6)])
    g = Graph.from_edgelist(df, vertices=[8, 9], multigraph=True)
    a = g.attributes()
    S = check_common(g, a)
    assert a["multigraph"] and a["self_loops"] == 1 and a["edges"] == 7
    assert a["isolated_share"] == pytest.approx(2 / 8)  # 8 and 9 (ids 0-3, 5, 6, 8, 9)
    assert a["reached_share"] == pytest.approx(4 / 8)  # the triangle's component
    assert a["diameter_estimate"] == 2
    assert a["transitivity_estimate"] == pytest.approx(nx.transitivity(S))


def test_graph_without_edges():
    g = Graph.from_csr(np.zeros(4, dtype=np.int64), np.empty(0, dtype=np.int32), directed=False)
    a = g.attributes()
    json.dumps(a, allow_nan=False)
    assert (a["n"], a["m"], a["edges"], a["density"]) == (3, 0, 0, 0.0)
    assert a["isolated_share"] == 1.0
    assert (a["out_degree_mean"], a["out_degree_max"], a["out_degree_std"]) == (0.0, 0, 0.0)
    for key in ("out_degree_skew", "out_degree_gini", "out_degree_top1_share",
                "out_degree_balanced_inequality", "degree_assortativity",
                "transitivity_estimate", "average_clustering_estimate"):
        assert a[key] is None, key
    assert (a["diameter_estimate"], a["diameter_sweeps"], a["wedges"]) == (0, 0, 0)


def test_sampled_clustering_within_five_standard_errors():
    G = nx.powerlaw_cluster_graph(300, 4, 0.5, seed=2)
    g = Graph.from_edgelist(frame(list(G.edges())))
    degrees = {v: d for v, d in G.degree()}
    pairs = {v: d * (d - 1) // 2 for v, d in degrees.items()}
    W = sum(pairs.values())
    samples = 10_000
    assert W > samples  # sampled, not enumerated
    got = attrs.wedge_estimate(g, samples=samples, seed=7)
    assert got["wedges"] == W and not got["clustering_exact"]
    assert got["clustering_samples"] == samples
    # transitivity: the share of closed wedges, a Bernoulli mean
    p = nx.transitivity(G)
    assert abs(got["transitivity_estimate"] - p) < 5 * math.sqrt(p * (1 - p) / samples)
    # mean clustering: (W / n) * mean of X = closed / C(d_v, 2) over uniform wedges, whose
    # variance follows from the local coefficients c_v: E[X] = sum c_v / W,
    # E[X^2] = sum c_v / C(d_v, 2) / W
    local = nx.clustering(G)
    mean_x = sum(local.values()) / W
    var_x = sum(local[v] / pairs[v] for v in G if pairs[v]) / W - mean_x ** 2
    se = W / G.number_of_nodes() * math.sqrt(var_x / samples)
    assert abs(got["average_clustering_estimate"] - nx.average_clustering(G)) < 5 * se
    # seeded: the same draws again; enumerated when samples >= W, then exact
    assert attrs.wedge_estimate(g, samples=samples, seed=7) == got
    exact = attrs.wedge_estimate(g, samples=W)
    assert exact["clustering_exact"] and exact["clustering_samples"] == W
    assert exact["transitivity_estimate"] == pytest.approx(p, abs=1e-12)


def test_pair_decoding_covers_every_pair_once():
    k = np.arange(45, dtype=np.int64)  # C(10, 2)
    i, j = attrs._pair(k, np)
    assert list(zip(i.tolist(), j.tolist())) == [(a, b) for b in range(10) for a in range(b)]
    big = np.array([10**12, 10**13 + 12345], dtype=np.int64)  # exact past float rounding
    i, j = attrs._pair(big, np)
    assert ((j * (j - 1) // 2 + i) == big).all() and ((0 <= i) & (i < j)).all()


def test_bad_arguments():
    g = Graph.from_edgelist(frame([(0, 1)]))
    with pytest.raises(ValueError, match="samples"):
        attrs.attributes(g, samples=0)
    with pytest.raises(ValueError, match="sweeps"):
        attrs.attributes(g, sweeps=0)


def test_without_structure_the_costly_keys_are_none_and_the_rest_equal():
    import onyx_rapids as onyx
    from onyx_rapids.attributes import STRUCTURAL

    g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("les_miserables"), directed=True)
    cheap = g.attributes(structure=False)
    assert all(cheap[k] is None for k in STRUCTURAL) and cheap is g.attributes(structure=False)
    full = g.attributes()
    assert full["diameter_estimate"] > 0 and full["wedges"] > 0
    assert {k: v for k, v in full.items() if k not in STRUCTURAL} == {
        k: v for k, v in cheap.items() if k not in STRUCTURAL}
    h = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    h.attributes()  # the full dict serves a later cheap call
    assert h.attributes(structure=False)["wedges"] is None
    assert h.attributes(structure=False)["n"] == 34


@pytest.mark.parametrize("case", ["one", "zeros", "equal", "ties", "skewed", "uniform"])
def test_degree_statistics_from_the_histogram_equal_the_direct_formulas(case):
    """The degree statistics come from a histogram of the degrees (no sort of n values): each
    one equals its direct formula, on runs of ties, zeros, one vertex and skewed arrays."""
    rng = np.random.default_rng(7)
    d = {"one": [5], "zeros": [0] * 9, "equal": [3] * 250,
         "ties": [0, 0, 1, 1, 1, 2, 7, 7, 7, 7, 40],
         "skewed": np.minimum(rng.zipf(1.7, 3000), 5000),
         "uniform": rng.integers(0, 60, 2500)}[case]
    d = np.asarray(d, dtype=np.int32)
    got = attrs._degree_stats(device.xp.asarray(d))
    for key, want in degree_reference(d).items():
        if want is None:
            assert got[key] is None, key
        else:
            assert got[key] == pytest.approx(want, rel=1e-12, abs=1e-12), key


def test_weight_moments_do_not_cancel_on_a_large_offset():
    """The edge pass sums weights shifted by the first one: on 1e7 + {0..99} (exact in the
    stored float32) the std keeps 9 digits; summed unshifted, E[w^2] - E[w]^2 of ~1e14 loses
    about 5 of them."""
    rng = np.random.default_rng(3)
    pairs = rng.integers(0, 30, size=(90, 2))
    w = 1e7 + rng.integers(0, 100, 90)
    g = Graph.from_edgelist(frame(pairs, w=w), weight="w", directed=True)
    a = g.attributes(structure=False)
    stored = device.to_host(g.edge_weights[:, 0]).astype(np.float64)
    assert stored.std() > 20  # the spread survived float32
    assert a["weight_std"] == pytest.approx(stored.std(), rel=1e-9)
    assert a["weight_mean"] == pytest.approx(stored.mean(), rel=1e-15)
    assert (a["weight_min"], a["weight_max"]) == (stored.min(), stored.max())


@pytest.mark.gpu
@pytest.mark.parametrize("placement", ["device", "host"])
def test_gpu_edge_pass_and_histograms_equal_the_direct_formulas(placement):
    """On the GPU (many blocks, the shared-memory trees, atomics; host-placed arrays read
    over PCIe): self-loops, assortativity, weights and degree statistics of a skewed weighted
    graph of 200,000 edges equal NumPy's direct formulas."""
    rng = np.random.default_rng(11)
    n, m = 5000, 200_000
    src = np.minimum(rng.zipf(1.6, m), n) - 1  # skewed sources
    dst = rng.integers(0, n, m)
    g = Graph.from_edgelist(frame(np.stack([src, dst], 1), w=rng.random(m) * 10), weight="w",
                            directed=True, multigraph=True)
    if placement == "host":
        g = g.to("host")
    a = attrs.attributes(g, structure=False)
    s, d = device.to_host(g.edge_sources), device.to_host(g.out_indices)
    out_d, in_d = device.to_host(g.out_degree), device.to_host(g.in_degree)
    assert a["self_loops"] == int((s == d).sum())
    want = np.corrcoef(out_d[s].astype(np.float64), in_d[d].astype(np.float64))[0, 1]
    assert a["degree_assortativity"] == pytest.approx(want, abs=1e-12)
    w = device.to_host(g.edge_weights[:, 0]).astype(np.float64)
    assert a["weight_mean"] == pytest.approx(w.mean(), rel=1e-12)
    assert a["weight_std"] == pytest.approx(w.std(), rel=1e-9)
    assert (a["weight_min"], a["weight_max"]) == (w.min(), w.max())
    check_degrees(a, "out", out_d)
    check_degrees(a, "in", in_d)


def _equal_or_close(a, b):
    if isinstance(a, float) and b is not None:
        return b == pytest.approx(a, rel=1e-9, abs=1e-12)
    return a == b


@pytest.mark.parametrize("case", ["karate", "directed", "bipartite", "loops", "empty"])
def test_quick_attributes_equal_the_exact_ones_where_the_samples_hold_everything(case):
    """``quick=True`` samples only graphs over QUICK_VERTICES vertices or QUICK_EDGES edges:
    on smaller ones every value equals the exact degree part, structural keys None."""
    from onyx_rapids.attributes import STRUCTURAL

    rng = np.random.default_rng(3)
    if case == "karate":
        g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))
    elif case == "directed":
        g = Graph.from_edgelist(frame(rng.integers(0, 60, (400, 2)), w=rng.random(400)),
                                weight="w", directed=True, duplicates="min")
    elif case == "bipartite":
        g = Graph.from_bipartite(pd.DataFrame({"u": rng.integers(0, 30, 200),
                                               "i": rng.integers(100, 140, 200)}), "u", "i",
                                 duplicates="min")
    elif case == "loops":
        g = Graph.from_edgelist(frame([(0, 1), (1, 2), (2, 0), (2, 3), (5, 5), (0, 1)]),
                                vertices=[8, 9], multigraph=True)
    else:
        g = Graph.from_csr(np.zeros(4, dtype=np.int64), np.empty(0, dtype=np.int32),
                           directed=False)
    exact, quick = attrs.attributes(g, structure=False), g.attributes(quick=True)
    assert set(quick) == set(exact) and all(quick[k] is None for k in STRUCTURAL)
    for key in exact:
        assert _equal_or_close(exact[key], quick[key]), (key, exact[key], quick[key])
    json.dumps(quick, allow_nan=False)
    assert quick is g.attributes(quick=True) and quick is not g.attributes(structure=False)


def _stratum_middles(count, size):
    """The stratified sample's indices as the docs define them: the middle of each stratum."""
    if count <= size:
        return np.arange(count)
    return ((np.arange(size, dtype=np.float64) + 0.5) * (count / size)).astype(np.int64)


def test_quick_sample_kernel_gathers_the_middle_of_each_stratum(monkeypatch):
    """The one-launch gather (``kernels.edge_stats.quick_sample``) picks exactly the
    documented vertices and edges: every sampled statistic equals the same statistic of a
    NumPy gather (sources from the CSR row each edge falls in: empty rows, self-loops and a
    weighted multigraph included)."""
    monkeypatch.setattr(attrs, "QUICK_VERTICES", 37)
    monkeypatch.setattr(attrs, "QUICK_EDGES", 97)
    rng = np.random.default_rng(11)
    n = 90  # vertices 60..89 have no out-edges: empty rows inside and at the end
    src = np.concatenate([rng.integers(0, 60, 300), [4, 4, 7]])
    dst = np.concatenate([rng.integers(0, n, 300), [4, 4, 7]])
    w = rng.random(src.size) + 0.5
    g = Graph.from_edgelist(frame(np.column_stack([src, dst]), w=w), weight="w", directed=True,
                            multigraph=True, vertices=np.arange(n))
    quick = attrs.attributes(g, quick=True)
    offsets, indices = device.to_host(g.out_offsets), device.to_host(g.out_indices)
    d_out, d_in = device.to_host(g.out_degree), device.to_host(g.in_degree)
    weights = device.to_host(g.edge_weights)[:, 0].astype(np.float64)
    v = _stratum_middles(g.n, 37)
    e = _stratum_middles(g.m, 97)
    s = np.searchsorted(offsets, e, side="right") - 1
    for name, d in (("out", d_out), ("in", d_in)):
        sample = np.sort(d[v].astype(np.float64))
        assert quick[f"{name}_degree_max"] == d.max()
        assert quick[f"{name}_degree_std"] == pytest.approx(sample.std(), rel=1e-12)
        for q in (50, 90, 99):
            assert quick[f"{name}_degree_p{q}"] == pytest.approx(np.percentile(sample, q))
        gini = (2 * np.arange(1, v.size + 1) - v.size - 1) @ sample / (v.size * sample.sum())
        assert quick[f"{name}_degree_gini"] == pytest.approx(gini, rel=1e-12)
        top = sample[::-1][:-(-v.size // 100)].sum() / sample.sum()
        assert quick[f"{name}_degree_top1_share"] == pytest.approx(top, rel=1e-12)
    x, y = d_out[s].astype(np.float64), d_in[indices[e]].astype(np.float64)
    pearson = np.corrcoef(x, y)[0, 1]
    assert quick["degree_assortativity"] == pytest.approx(pearson, rel=1e-9)
    assert quick["self_loops"] == round((s == indices[e]).mean() * g.m) > 0
    assert quick["zero_out_share"] == (d_out[v] == 0).mean() > 0
    assert quick["isolated_share"] == ((d_out[v] == 0) & (d_in[v] == 0)).mean()
    assert quick["weight_mean"] == pytest.approx(weights[e].mean(), rel=1e-12)
    assert quick["weight_std"] == pytest.approx(weights[e].std(), rel=1e-9)
    assert (quick["weight_min"], quick["weight_max"]) == (weights[e].min(), weights[e].max())


def test_quick_attributes_estimate_from_stratified_samples(monkeypatch):
    """Past the sample sizes (made small here): mean and max stay exact, the rest are
    estimates near the exact values, from a few hundred sampled vertices and edges."""
    monkeypatch.setattr(attrs, "QUICK_VERTICES", 500)
    monkeypatch.setattr(attrs, "QUICK_EDGES", 2000)
    rng = np.random.default_rng(5)
    n = 3000
    src = np.minimum(rng.zipf(1.8, 12000), n) - 1  # skewed out-degrees
    dst = rng.integers(0, n, 12000)
    w = rng.random(12000) + 1.0
    g = Graph.from_edgelist(frame(np.column_stack([src, dst]), w=w), weight="w", directed=True,
                            duplicates="min", vertices=np.arange(n))
    exact, quick = attrs.attributes(g, structure=False), attrs.attributes(g, quick=True)
    for key in ("n", "m", "kind", "weighted", "out_degree_mean", "out_degree_max",
                "in_degree_mean", "in_degree_max", "volume"):
        assert quick[key] == exact[key], key
    for key in ("in_degree_p50", "in_degree_p90"):  # small integers: one step either way
        assert abs(quick[key] - exact[key]) <= 1, key
    for key, tol in (("in_degree_std", 0.1),
                     ("out_degree_gini", 0.1), ("in_degree_gini", 0.1),
                     ("zero_out_share", 0.1), ("weight_mean", 0.02), ("weight_std", 0.05),
                     ("out_degree_balanced_inequality", 0.1)):
        assert quick[key] == pytest.approx(exact[key], rel=tol), key
    assert abs(quick["degree_assortativity"] - exact["degree_assortativity"]) < 0.1
    assert quick["out_degree_skew"] > 1 and quick["self_loops"] >= 0
