"""The benchmark tool's parts, without running a suite: graph specs and generators
(benchmarks/graphs.py), the algorithm list and variant matrices read from the registry
(benchmarks/catalog.py), the result checks (benchmarks/common.py, suites/traversal.py's
predecessor check: nullable and -1 "no predecessor" both read) and the command line."""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import onyx_rapids  # noqa: E402
from benchmarks import catalog, common, graphs, harness  # noqa: E402
from benchmarks.suites import traversal  # noqa: E402
from onyx_rapids import device, inputs  # noqa: E402


@pytest.mark.parametrize("text, kind, params", [
    ("rmat:10", "rmat", {"scale": 10, "edge_factor": 16}),
    ("RMAT:3:2", "rmat", {"scale": 3, "edge_factor": 2}),
    ("rmat:3:2:0.45", "rmat", {"scale": 3, "edge_factor": 2, "a": 0.45}),
    ("er:100:2.5", "er", {"n": 100, "avg_degree": 2.5}),
    ("grid:4", "grid", {"side": 4}),
    ("road:4:0.25", "road", {"side": 4, "drop": 0.25}),
    ("delaunay:10", "delaunay", {"n": 10}),
    ("ratings:6:4:12", "ratings", {"users": 6, "items": 4, "ratings": 12}),
    ("rmat:3:2:0.45@degree", "rmat", {"scale": 3, "edge_factor": 2, "a": 0.45,
                                      "order": "degree"}),
    ("powerlaw:100:4:2.5", "powerlaw", {"n": 100, "avg_degree": 4, "exponent": 2.5}),
    ("smallworld:100:6:0.1", "smallworld", {"n": 100, "k": 6, "p": 0.1}),
    ("er:100:2.5~7", "er", {"n": 100, "avg_degree": 2.5, "seed": 7}),
    ("dataset:karate", "dataset", {"name": "karate"}),
    ("rmat:3:2~1@bfs", "rmat", {"scale": 3, "edge_factor": 2, "seed": 1, "order": "bfs"}),
])
def test_good_specs_parse(text, kind, params):
    spec = graphs.parse_spec(text)
    assert (spec.kind, spec.params) == (kind, params)


@pytest.mark.parametrize("text, what", [
    ("", "empty"), ("foo:3", "unknown kind 'foo'"), ("rmat", "expected rmat:SCALE"),
    ("rmat:x", "SCALE must be a number"), ("rmat:40", "SCALE must be >= 1 and <= 31"),
    ("er:10:20", "exceeds N - 1"), ("ratings:2:2:5", "exceeds USERS x ITEMS"),
    ("grid:1", "SIDE must be >= 2"), ("rmat:3:2:0.7", "A must be in [0.25, 0.62)"),
    ("rmat:3:2:0.62", "A must be in [0.25, 0.62) (b = c = 0.19), got 0.62"),
    ("parquet:/no/such.parquet", "no such Parquet"), ("road:4:1", "DROP must be >= 0 and < 1"),
    ("road:4", "expected road:SIDE:DROP"), ("powerlaw:100:4:2", "EXPONENT must be > 2"),
    ("powerlaw:100:30:2.5", "exceeds (N - 1) / 4"), ("smallworld:100:5:0.1", "K must be even"),
    ("smallworld:10:4:2", "P must be >= 0 and <= 1"), ("grid:4~x", "seed after '~'"),
    ("dataset:foo", "unknown dataset 'foo'"),
])
def test_bad_specs_name_the_spec_and_the_problem(text, what):
    with pytest.raises(ValueError) as e:
        graphs.parse_spec(text)
    assert what in str(e.value) and (repr(text.strip()) in str(e.value) or not text)


def test_new_families_and_seeds_are_what_their_specs_say():
    src, dst = graphs.powerlaw_edges(2000, 16000, 2.1, seed=1)
    deg = np.bincount(src, minlength=2000) + np.bincount(dst, minlength=2000)
    assert len(src) == 16000 and not (src == dst).any()
    assert len(set(zip(src.tolist(), dst.tolist()))) == 16000  # simple
    assert deg.max() > 20 * deg.mean()  # skewed: hubs
    src, dst = graphs.smallworld_edges(1000, 10, 0.0)  # no rewiring: the ring lattice
    assert len(src) == 5000 and set((dst - src) % 1000) | set((src - dst) % 1000) >= {1, 5}
    lattice = set(zip(src.tolist(), dst.tolist()))
    src, dst = graphs.smallworld_edges(1000, 10, 0.2)
    moved = 1 - len(lattice & set(zip(src.tolist(), dst.tolist()))) / 5000
    assert 0.1 < moved < 0.3 and (src < dst).all()
    a, _, _ = graphs.edge_frame("er:200:4~1", undirected=False)
    b, _, _ = graphs.edge_frame("er:200:4~2", undirected=False)
    c, _, _ = graphs.edge_frame("er:200:4~1", undirected=False)
    assert not np.array_equal(a["dst"], b["dst"]) and np.array_equal(a["dst"], c["dst"])
    assert not np.array_equal(a["weight"], b["weight"])


def test_road_drops_a_seeded_fraction_of_the_grid_and_keeps_the_vertices_by_mode():
    grid, _, _ = graphs.edge_frame("grid:20", undirected=False)
    road, kw, facts = graphs.edge_frame("road:20:0.3", undirected=False)
    kept = len(road["src"]) / len(grid["src"])
    assert 0.6 < kept < 0.8 and "0.3 of the edges deleted" in facts["generator"]
    pairs = set(zip(grid["src"].tolist(), grid["dst"].tolist()))
    assert set(zip(road["src"].tolist(), road["dst"].tolist())) <= pairs
    # directed mode (compared with cuGraph): the ids with an edge; undirected: all 400
    assert "vertices" not in kw and len(road["weight"]) == len(road["src"])
    _, und_kw, _ = graphs.edge_frame("road:20:0.3", undirected=True)
    assert len(und_kw["vertices"]) == 400
    again, _, _ = graphs.edge_frame("road:20:0.3", undirected=False)
    assert np.array_equal(again["src"], road["src"])


def test_an_order_suffix_reorders_the_same_graph():
    spec = graphs.parse_spec("rmat:5:4@degree")
    assert spec.slug == "rmat-5-4-degree"
    g, st = graphs.build(spec, undirected=True)
    plain, _ = graphs.build("rmat:5:4", undirected=True)
    assert (g.vertex_order, plain.vertex_order, g.m, g.n) == ("degree", "id", plain.m, plain.n)
    assert st["reorder_ms"] > 0
    with pytest.raises(ValueError, match="unknown vertex order 'random'"):
        graphs.parse_spec("rmat:5@random")


def test_random_inputs_are_the_same_per_id_in_either_order():
    from benchmarks import catalog
    from benchmarks.suites import traversal

    g, _ = graphs.build("rmat:5:4", undirected=False)
    h, _ = graphs.build("rmat:5:4@degree", undirected=False)
    assert inputs.top_vertex(g) == inputs.top_vertex(h)
    assert traversal.random_source(g) == traversal.random_source(h)
    assert traversal._source_set(g, 6).tolist() == traversal._source_set(h, 6).tolist()
    assert inputs.lp_labels(g, 3).equals(inputs.lp_labels(h, 3))
    for name in ("personalized_pagerank", "feature_propagation"):
        a = catalog.make_inputs(catalog.get(name), g, 2)
        b = catalog.make_inputs(catalog.get(name), h, 2)
        if name == "personalized_pagerank":
            assert list(a["sources"]) == list(b["sources"])
        else:
            fa, fb = device.to_host(a["features"]), device.to_host(b["features"])
            ids_g, ids_h = device.to_host(g.vertices), device.to_host(h.vertices)
            np.testing.assert_array_equal(fa[np.argsort(ids_g)], fb[np.argsort(ids_h)])


def test_results_are_aligned_by_vertex_id_and_bad_vertex_columns_are_named():
    from benchmarks import common

    g, _ = graphs.build("rmat:4:4@degree", undirected=True)
    ids = device.to_host(g.vertices)
    values = device.asarray(np.arange(g.n, dtype=np.float32))
    shuffled = np.random.default_rng(1).permutation(g.n)
    got = common.by_vertex(device.asarray(ids[shuffled]), values[device.asarray(shuffled)], g,
                           "x")
    np.testing.assert_array_equal(device.to_host(got), np.arange(g.n))
    with pytest.raises(ValueError, match="x has 3 vertices, the graph"):
        common.by_vertex(device.asarray(ids[:3]), values[:3], g, "x")
    twice = ids.copy()
    twice[1] = twice[0]
    with pytest.raises(ValueError, match="x has other vertex ids than the graph \\(some twice"):
        common.by_vertex(device.asarray(twice), values, g, "x")
    stranger = ids.copy()
    stranger[0] = -12345
    with pytest.raises(ValueError, match="x has other vertex ids than the graph"):
        common.by_vertex(device.asarray(stranger), values, g, "x")


def test_spec_lists_and_parquet(tmp_path):
    assert [s.text for s in graphs.parse_specs("grid:3,rmat:3:2,grid:3")] == ["grid:3",
                                                                              "rmat:3:2"]
    path = tmp_path / "e.parquet"
    pd.DataFrame({"a": [0, 1, 2], "b": [1, 2, 0], "w": [1.0, 2.0, 3.0]}).to_parquet(path)
    spec = graphs.parse_spec(f"parquet:{path}:a:b:w")
    assert spec.params == {"path": str(path), "src": "a", "dst": "b", "weight": "w"}
    with pytest.raises(ValueError, match="no SRC column 'src'"):
        graphs.parse_spec(f"parquet:{path}")
    g, st = graphs.build(spec, undirected=False)
    assert (g.n, g.m, st["weighted"]) == (3, 3, True)


@pytest.mark.parametrize("text, undirected", [("rmat:4:4", False), ("er:30:3", False),
                                              ("er:30:3", True), ("ratings:6:4:12", True),
                                              ("delaunay:12", False)])
def test_generators_are_deterministic(text, undirected):
    a, sa = graphs.build(text, undirected=undirected)
    b, _ = graphs.build(text, undirected=undirected)
    assert np.array_equal(device.to_host(a.out_indices), device.to_host(b.out_indices))
    assert sa["n"] == a.n and sa["m"] == a.m and sa["directed"] == (not undirected and
                                                                      text[:2] in ("rm", "er"))
    if not undirected:  # directed mode: simple and weighted (sssp)
        assert sa["self_loops"] == 0 and sa["weighted"]


def test_er_and_ratings_shapes():
    g, _ = graphs.build("er:50:4", undirected=False)
    assert g.m == 200 and g.n <= 50
    df = graphs.ratings_frame(10, 5, 30, seed=1)
    assert len(df) == 30 and df["src"].max() < 10 and df["dst"].min() >= 10
    assert len(df.drop_duplicates(["src", "dst"])) == 30


def test_algorithms_come_from_the_registry():
    table = catalog.algorithms()
    declared = onyx_rapids.registry.ALGORITHMS
    assert set(declared) <= set(table) and len(table) == 17
    for name, spec in declared.items():
        entry = table[name]
        assert entry.spec is spec and entry.columns == tuple(spec.columns)
        assert entry.variants() == spec.variants()
    # the suites' lists are derived from it
    assert set(harness.SUITES["ablation"].algorithms()) == {
        n for n, s in declared.items() if "fold" in s.options}
    assert set(harness.SUITES["multisource"].algorithms()) == {"bfs", "sssp"}
    assert onyx_rapids.registry.variant_name({"feature_aware": False, "change_driven": True,
                                              "fold": True,
                                 "direction": "push"}) == "NFA/CD/fold/push"


def test_inputs_follow_the_declared_inputs():
    g, _ = graphs.build("rmat:3:2", undirected=True)
    ppr = catalog.make_inputs(catalog.get("ppr"), g, 3)
    assert set(ppr) == {"sources"} and len(ppr["sources"]) == 3
    lp = catalog.make_inputs(catalog.get("label_propagation"), g, 3)
    assert lp["k"] == 3 and set(lp["labels"].columns) == {"vertex", "label"}
    assert catalog.make_inputs(catalog.get("pagerank"), g, 3) == {}  # optional: left out
    assert catalog.get("wcc").name == "weakly_connected_components"
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        catalog.get("nope")


X = device.asarray(np.array([0.1, 0.2, 0.3, 0.4]))


@pytest.mark.parametrize("metric, ref, tol, ok", [
    ("rel_l2", X, 1e-3, True), ("rel_l2", X * 1.01, 1e-3, False),
    ("normalized_l1", X * 2, 1e-3, True), ("normalized_l1", X[::-1], 1e-3, False),
    ("max_abs", X + 1e-4, 1e-3, True), ("max_abs", X + 1e-2, 1e-3, False),
    ("rel_l2", X * np.nan, 1e-3, False),  # NaN never passes
    ("exact", X, 0, True), ("hops", device.asarray(np.array([0, 1, 2**62, 2**31 - 1])), 0, False),
])
def test_compare_fails_on_a_wrong_result(metric, ref, tol, ok):
    assert common.compare(metric, X, ref, against="t", tol=tol)["ok"] is ok


def test_compare_structural_metrics():
    a = device.asarray(np.array([5, 5, 7, 7]))
    assert common.compare("partition", a, device.asarray(np.array([1, 1, 0, 0])),
                          against="t")["ok"]
    assert not common.compare("partition", a, device.asarray(np.array([1, 1, 1, 0])),
                              against="t")["ok"]
    hops = device.asarray(np.array([0, 1, 2**31 - 1]))
    assert common.compare("hops", hops, device.asarray(np.array([0, 1, 2**63 - 1])),
                          against="t")["ok"]  # unreached: int32 or int64 max
    d = device.asarray(np.array([0.0, 1.0, np.inf]))
    assert common.compare("distance", d, d * (1 + 1e-6), against="t", tol=1e-4)["ok"]
    assert not common.compare("distance", d, device.asarray(np.array([0.0, 1.0, 2.0])),
                              against="t", tol=1e-4)["ok"]  # reach differs
    assert not common.compare("members", [1, 2], [1, 3], against="t")["ok"]


@pytest.mark.parametrize("none", ["null", "minus one"])
def test_predecessors_null_or_minus_one(none):
    # path 10 -> 20 -> 30, and 40 unreachable; source 10
    g = onyx_rapids.Graph.from_edgelist(pd.DataFrame({"src": [10, 20, 40], "dst": [20, 30, 30]}),
                                        directed=True)
    missing = pd.NA if none == "null" else -1
    frame = pd.DataFrame({"vertex": [10, 20, 30, 40], "distance": [0, 1, 2, 2**31 - 1],
                          "predecessor": pd.array([missing, 10, 20, missing], dtype="Int64")})
    dist = common.ordered(frame, g, "distance")
    assert device.to_host(common.predecessors(frame, g)).tolist() == [-1, 0, 1, -1]
    assert traversal.predecessor_check("bfs", frame, g, dist, 10)["ok"]
    frame.loc[2, "predecessor"] = 40  # not an in-neighbour on a shortest path
    c = traversal.predecessor_check("bfs", frame, g, dist, 10)
    assert not c["ok"] and c["value"] == 1


def test_list_and_bad_arguments(capsys):
    assert harness.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("traversal", "multisource", "spmm", "scaling", "convergence", "ablation",
                 "profile", "construction", "approximate", "rmat:SCALE[:EDGE_FACTOR[:A]]",
                 "parquet:PATH"):
        assert name in out
    for argv, message in ((["run", "nope"], "invalid choice"),
                          (["run", "spmm", "--algorithms", "bfs"], "unknown ['bfs']"),
                          (["run", "spmm", "--graphs", "rmat:x"], "SCALE must be a number"),
                          (["run", "spmm", "--repeat", "0"], "--repeat must be >= 1")):
        with pytest.raises(SystemExit) as e:
            harness.main(argv)
        assert e.value.code == 2 and message in capsys.readouterr().err


def test_no_other_command_line():
    """``python -m benchmarks`` is the only entry: no other main, parser or __main__ block."""
    for path in (ROOT / "benchmarks").rglob("*.py"):
        text = path.read_text()
        if path.name in ("harness.py", "__main__.py"):
            continue
        assert "argparse" not in text and "__main__" not in text and "def main(" not in text, \
            path
