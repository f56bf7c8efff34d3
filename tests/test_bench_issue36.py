"""The traversal suite's rows of strongly_connected_components, minimum_spanning_tree and
betweenness_centrality (issue 36; benchmarks/suites/structure.py) end to end on tiny graphs
under the simulator: against a stand-in cuGraph computed with SciPy / NetworkX (its calls as
cuGraph 26.10 documents them) and against the CPU oracles without it; a wrong result on
either side is flagged; the graph versions the algorithms run on.  ``pytest -m gpu`` runs the
rows against the real cuGraph and checks the peer's reading of cuGraph (scaling of sampled
betweenness, the spanning forest's edge list) against the CPU oracles."""

import json
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _fakes import fake_cugraph_module  # noqa: E402

import onyx_rapids  # noqa: E402
from onyx_rapids import Graph, device  # noqa: E402
from benchmarks import graphs, harness  # noqa: E402
from benchmarks.peers import cugraph as peer  # noqa: E402
from benchmarks.suites import structure  # noqa: E402

ALGORITHMS = list(structure.ALGORITHMS)
GRAPHS = "rmat:3:4,road:4:0.2"  # directed (SCC as is, MST on its undirected version), grid
SMALL = "rmat:3:4"  # 8 vertices: strong components of 7 and 1


@pytest.fixture(autouse=True)
def _no_optional_peers(monkeypatch):
    """cuGraph and torch are missing unless a test puts a stand-in in."""
    monkeypatch.setitem(sys.modules, "cugraph", None)
    monkeypatch.setitem(sys.modules, "torch", None)


def run(tmp_path, graphs_text=GRAPHS, algorithms=ALGORITHMS, **kw):
    status, report = harness.run_suite("traversal", graphs_text=graphs_text, quick=True,
                                       out=tmp_path, quiet=True, tag="t",
                                       algorithms=algorithms, **kw)
    rows = {(r["graph"], r["algorithm"], r["implementation"]): r for r in report["rows"]}
    return status, rows, report


# ------------------------------------------------------------------------------ a stand-in cuGraph


class MstGraph:
    """What cugraph.minimum_spanning_tree returns, as the peer reads it: ``view_edge_list()``
    (each undirected edge once, src <= dst, as cuGraph's Graph shows an undirected graph)."""

    def __init__(self, frame):
        self.frame = frame

    def view_edge_list(self):
        return self.frame


def _bc(G, sources):
    """cuGraph 26.10's normalized betweenness from explicit sources, restated: NetworkX's
    dependency sums, divided by k (n - 2), a source's by (k - 1) (n - 2)."""
    n, k = len(G.ids), len(sources)
    gx = nx.DiGraph() if G.directed else nx.Graph()
    gx.add_nodes_from(range(n))
    gx.add_edges_from(zip(G.s.tolist(), G.d.tolist()))
    pos = np.searchsorted(G.ids, np.asarray(sources))
    raw = nx.betweenness_centrality_subset(gx, pos.tolist(), list(range(n)), normalized=False)
    sums = np.array([raw[v] for v in range(n)]) * (1 if G.directed else 2)
    divisor = np.full(n, k * (n - 2.0))
    divisor[pos] = (k - 1) * (n - 2.0)
    return sums / divisor


def _cugraph(wrong=()):
    """A stand-in cugraph with the three calls (SciPy / NetworkX); ``wrong`` names the calls
    that answer wrongly: SCC merges two components, the spanning tree has an edge heavier,
    betweenness is scaled as NetworkX's k-sample estimate before 3.6 (a dependency sum divided
    by k (n - 1) (n - 2) / n: a non-source's value n / (n - 1) times cuGraph's)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components, minimum_spanning_tree
    mod = fake_cugraph_module()
    calls = {}

    def scc(G):
        calls["scc"] = G.directed
        n = len(G.ids)
        labels = connected_components(csr_matrix((np.ones(len(G.s)), (G.s, G.d)), (n, n)),
                                      connection="strong")[1]
        if "scc" in wrong:
            labels = np.where(labels == labels.max(), labels.min(), labels)
        return pd.DataFrame({"vertex": G.ids, "labels": labels * 5 + 2})

    def mst(G, weight=None):
        calls["mst"] = (G.directed, weight)
        n = len(G.ids)
        t = minimum_spanning_tree(csr_matrix((G.w, (G.s, G.d)), (n, n))).tocoo()
        w = t.data.copy()
        if "mst" in wrong:
            w[0] += 0.5
        lo, hi = np.minimum(t.row, t.col), np.maximum(t.row, t.col)
        return MstGraph(pd.DataFrame({"src": G.ids[lo], "dst": G.ids[hi], "weight": w}))

    def bc(G, k=None, normalized=True):
        calls["bc"] = (G.directed, list(k), normalized)
        values = _bc(G, k)
        if "bc" in wrong:
            values = values * len(G.ids) / (len(G.ids) - 1.0)
        return pd.DataFrame({"vertex": G.ids, "betweenness_centrality": values})

    mod.strongly_connected_components = scc
    mod.minimum_spanning_tree = mst
    mod.betweenness_centrality = bc
    mod.calls = calls
    return mod


# ------------------------------------------------------------------------------ the rows


def test_rows_against_the_stand_in_cugraph(tmp_path, monkeypatch):
    mod = _cugraph()
    monkeypatch.setitem(sys.modules, "cugraph", mod)
    status, rows, report = run(tmp_path)
    assert status == 0, report["failures"]
    for g in GRAPHS.split(","):
        for name in ALGORITHMS:
            ours, theirs = rows[(g, name, "ours")], rows[(g, name, "cugraph")]
            assert ours["status"] == theirs["status"] == "ok", (ours, theirs)
            assert ours["check"] == theirs["check"] == "ok"
            assert ours["check_against"] == (  # betweenness: a float64 Brandes, not cuGraph
                structure.BRANDES_LABEL if name == "betweenness_centrality"
                else "cugraph stand-in") and ours["ms"] > 0
            assert ours["case"] == theirs["case"] and theirs["ratio_vs_ours"] > 0
    cases = {(g, a): rows[(g, a, "ours")]["case"] for g in GRAPHS.split(",") for a in ALGORITHMS}
    assert cases == {("rmat:3:4", "strongly_connected_components"): "directed",
                     ("rmat:3:4", "minimum_spanning_tree"): "undirected weighted version",
                     ("rmat:3:4", "betweenness_centrality"): "k=4",
                     ("road:4:0.2", "strongly_connected_components"): "directed version",
                     ("road:4:0.2", "minimum_spanning_tree"): "weighted",
                     ("road:4:0.2", "betweenness_centrality"): "k=4"}
    bc = rows[("road:4:0.2", "betweenness_centrality", "ours")]
    assert mod.calls["bc"] == (False, bc["params"]["sources"], True)  # the same 4 sources
    assert bc["k"] == bc["params"]["k"] == 4 and len(set(bc["params"]["sources"])) == 4
    assert mod.calls["scc"] is True and mod.calls["mst"] == (False, "weight")
    built = report["graphs"]["road:4:0.2"]["cugraph_build_ms"]
    assert any(k.startswith("directed version: directed") for k in built), built
    mst = rows[("rmat:3:4", "minimum_spanning_tree", "ours")]
    assert "forest_violations 0" in mst["check_detail"]
    md = next(tmp_path.glob("run-traversal_*_t_quick.md")).read_text()
    assert "| road:4:0.2 | betweenness_centrality | k=4 |" in md


def test_a_wrong_cugraph_result_is_flagged(tmp_path, monkeypatch):
    """Each of the three (betweenness: also cuGraph's scaling of sampled sums against older
    NetworkX's, which differ).  SCC and MST are checked against cuGraph, so both rows fail;
    betweenness is checked against a float64 Brandes, so only cuGraph's row does."""
    monkeypatch.setitem(sys.modules, "cugraph", _cugraph(wrong=("scc", "mst", "bc")))
    status, rows, report = run(tmp_path, SMALL)
    assert status == 1 and len(report["failures"]) == 3
    for name in ALGORITHMS:
        assert any(f.startswith(f"{name} (") for f in report["failures"]), name
        assert rows[(SMALL, name, "ours")]["check"] == (
            "ok" if name == "betweenness_centrality" else "FAILED")
        assert rows[(SMALL, name, "cugraph")]["check"] == "FAILED"


def test_rows_against_the_cpu_oracles(tmp_path):
    status, rows, report = run(tmp_path, SMALL)
    assert status == 0, report["failures"]
    against = {a: rows[(SMALL, a, "ours")]["check_against"] for a in ALGORITHMS}
    assert against == {"strongly_connected_components": "scipy strong components",
                       "minimum_spanning_tree": "scipy minimum_spanning_tree",
                       "betweenness_centrality":
                           "networkx Brandes over the sources, cuGraph's scaling"}
    assert all(rows[(SMALL, a, "ours")]["check"] == "ok" for a in ALGORITHMS)
    assert all(rows[(SMALL, a, "cugraph")]["status"].startswith("skipped: cugraph not")
               for a in ALGORITHMS)
    facts = {a: rows[(SMALL, a, "ours")]["params"]["run_facts"] for a in ALGORITHMS}
    assert facts["strongly_connected_components"]["trim_rounds"] >= 1
    assert facts["minimum_spanning_tree"]["iterations"] >= 1
    assert facts["betweenness_centrality"]["batches"] == 1


def test_a_wrong_result_of_ours_is_flagged(tmp_path, monkeypatch):
    real_scc, real_mst = (onyx_rapids.strongly_connected_components,
                          onyx_rapids.minimum_spanning_tree)

    def scc(g, *a, **kw):  # every vertex its own component
        out = real_scc(g, *a, **kw)
        frame = out[0] if isinstance(out, tuple) else out
        frame["labels"] = np.arange(len(frame))
        return out

    def mst(g, *a, **kw):  # one edge's weight lowered: lighter than the minimum, no edge of g
        frame, info = real_mst(g, *a, **kw)
        frame["weight"] = frame["weight"].to_numpy() * np.r_[0.5, np.ones(len(frame) - 1)]
        return frame, info
    monkeypatch.setattr(onyx_rapids, "strongly_connected_components", scc)
    monkeypatch.setattr(onyx_rapids, "minimum_spanning_tree", mst)
    status, rows, report = run(tmp_path, SMALL, ALGORITHMS[:2])
    assert status == 1 and len(report["failures"]) == 2
    assert rows[(SMALL, "strongly_connected_components", "ours")]["check"] == "FAILED"
    detail = rows[(SMALL, "minimum_spanning_tree", "ours")]["check_detail"]
    assert "forest_violations 1" in detail and "info_total_weight_rel" in detail


def test_first_call_child_runs_each_on_its_version():
    """A full run's first-call rows (suites/traversal.py): the fresh process calls each
    algorithm as the rows do (SCC on the grid's directed version, BC from k sources)."""
    from benchmarks.suites import traversal

    for name in ALGORITHMS:
        rec = traversal.first_call_child("grid:2", name, 0, 1, 2)
        assert rec["first_ms"] > 0 and len(rec["warm_ms"]) == 1 and rec["check"]["ok"], name
        assert rec["check"]["against"] == "a warm call in the process"


# ------------------------------------------------------------------------------ the pieces


def test_forest_certificate_finds_foreign_edges_cycles_and_gaps():
    # a 4-cycle 0-1-2-3 and a separate edge 4-5, weights 1..5
    df = pd.DataFrame({"src": [0, 1, 2, 0, 4], "dst": [1, 2, 3, 3, 5],
                       "weight": [1.0, 2.0, 3.0, 4.0, 5.0]})
    g = Graph.from_edgelist(df, weight="weight")
    good = peer.forest([0, 1, 2, 4], [1, 2, 3, 5], [1.0, 2.0, 3.0, 5.0])
    assert structure.forest_violations(g, good) == 0 and good["total_weight"] == 11.0
    foreign = peer.forest([0, 0, 2, 4], [1, 2, 3, 5], [1.0, 2.0, 3.0, 5.0])  # 0-2 no edge
    assert structure.forest_violations(g, foreign) == 1
    cycle = peer.forest([0, 1, 2, 0, 4], [1, 2, 3, 3, 5], [1.0, 2.0, 3.0, 4.0, 5.0])
    assert structure.forest_violations(g, cycle) == 1
    gap = peer.forest([0, 1, 4], [1, 2, 5], [1.0, 2.0, 5.0])  # 3 left out: edges 2-3, 0-3
    assert structure.forest_violations(g, gap) == 2
    reweighted = peer.forest([0, 1, 2, 4], [1, 2, 3, 5], [1.0, 2.0, 3.5, 5.0])
    assert structure.forest_violations(g, reweighted) == 1
    both_ways = peer.forest([1, 0], [0, 1], [1.0, 1.0])  # an edge list giving both directions
    assert both_ways["edges"] == 1 and both_ways["total_weight"] == 1.0


def test_sampled_betweenness_scaling_is_cugraphs():
    """With every vertex a source the oracle is NetworkX's normalized betweenness; with k
    sources a non-source is divided by k (n - 2), a source by (k - 1) (n - 2)."""
    for directed in (True, False):
        gx = nx.gnp_random_graph(12, 0.3, seed=4, directed=directed)
        src, dst = map(list, zip(*gx.edges()))
        g = Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), directed=directed,
                                vertices=range(12))
        s, d = (device.to_host(a).astype(np.int64) for a in (g.edge_sources, g.out_indices))
        full = device.to_host(structure._brandes(g, s, d, np.arange(12)))
        ref = nx.betweenness_centrality(gx, normalized=True)
        assert np.allclose(full, [ref[v] for v in range(12)], rtol=1e-12, atol=1e-15)
        some = device.to_host(structure._brandes(g, s, d, np.array([1, 5, 7])))
        raw = nx.betweenness_centrality_subset(gx, [1, 5, 7], list(gx), normalized=False)
        want = np.array([raw[v] for v in range(12)]) * (1 if directed else 2) / (3 * 10)
        want[[1, 5, 7]] *= 3 / 2
        assert np.allclose(some, want, rtol=1e-12, atol=1e-15)
    assert peer.bc_scale(10, range(9)) == (72.0, 72.0)  # k = n - 1: every vertex alike


def test_graph_versions_of_a_grid_and_of_rmat():
    grid, _ = graphs.build("grid:8")
    d = graphs.directed_version(grid)
    assert d.directed and d.n == grid.n and d is graphs.directed_version(d)
    pairs = grid.m // 2  # stored both ways
    two_way = d.m - pairs
    assert 0.3 < two_way / pairs < 0.7  # each street two-way with probability 1 - ONE_WAY
    keys = lambda h: set(zip(device.to_host(h.edge_sources).tolist(),  # noqa: E731
                             device.to_host(h.out_indices).tolist()))
    und = {(min(a, b), max(a, b)) for a, b in keys(d)}
    assert und == {(a, b) for a, b in keys(grid) if a < b}  # every street, some one way
    rmat, _ = graphs.build("rmat:5:4")
    u = graphs.undirected_weighted(rmat)
    assert not u.directed and u.n == rmat.n and graphs.undirected_weighted(u) is u
    assert u.m == 2 * len({(min(a, b), max(a, b)) for a, b in keys(rmat) if a != b})
    w = device.to_host(u.edge_weights[:, 0])
    assert w.min() >= 0.1 and w.max() < 1.0
    rev = graphs.directed_version(graphs.build("grid:8@degree")[0])
    assert rev.vertex_order == "degree"


# ------------------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_cugraph_readings_agree_with_the_cpu_oracles(monkeypatch):
    """The real cuGraph 26.10 through the peer module, on its own: strong components,
    the spanning forest's edge list and total weight, and normalized betweenness from 16
    given sources (:func:`benchmarks.peers.cugraph.bc_scale`) against SciPy / NetworkX."""
    monkeypatch.delitem(sys.modules, "cugraph")  # the autouse fixture's stand-in: none
    import cugraph  # noqa: F401  (a GPU machine without it fails here)

    for spec in ("rmat:10:8", "road:24:0.1"):
        g, _ = graphs.build(spec)
        versions = structure.Versions(g, peer, peer.Graphs(g))
        for name in structure.ALGORITHMS:
            view = versions.view(name)
            sources = structure.bc_sources(view, 16) if name == "betweenness_centrality" \
                else None
            ref, against = structure.oracle(name, view, sources)
            theirs = peer.values(name, peer.run(name, versions.cugraph(name), k=sources), view)
            if name == "minimum_spanning_tree":
                theirs = {**theirs, "violations": structure.forest_violations(view, theirs),
                          "info_total_weight": theirs["total_weight"]}
            check = structure.agree(name, theirs, ref, against)
            assert check["ok"], (spec, name, check)


@pytest.mark.gpu
def test_rows_against_cugraph_on_the_gpu(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "cugraph")
    import cugraph  # noqa: F401

    status, rows, report = run(tmp_path, "rmat:10:8,road:24:0.1")
    assert status == 0, report["failures"]
    assert all(r["check"] == "ok" and r["status"] == "ok" for r in rows.values()), [
        (k, r["status"], r["check_detail"]) for k, r in rows.items() if r["check"] != "ok"]
    assert json.dumps(report["graphs"]["road:24:0.1"]["cugraph_build_ms"])


def test_cugraph_spanning_tree_graphs_take_int32_ids():
    """cuGraph 26.10's minimum_spanning_tree refuses 64-bit edge offsets (which its graphs take
    from 64-bit ids): the peer narrows the ids, and refuses ids that do not fit."""
    assert "minimum_spanning_tree" in peer.INT32_IDS
    out = peer.int32_ids({"src": np.array([0, 5], np.int64), "dst": np.array([7, 2**31 - 1])})
    assert out["src"].dtype == np.int32 and device.to_host(out["dst"]).tolist() == [7, 2**31 - 1]
    with pytest.raises(ValueError, match="dst ids do not fit int32"):
        peer.int32_ids({"src": np.array([0]), "dst": np.array([2**31])})


@pytest.mark.parametrize("spec", ["rmat:5:4", "road:5:0.2"])
def test_brandes_by_sparse_products_is_networkx_brandes(spec):
    """The float64 reference the rows use beyond NetworkX's reach agrees with NetworkX's
    Brandes (cuGraph's scaling) on a directed and an undirected graph, in chunks of sources."""
    g, _ = graphs.build(spec)
    sources = structure.bc_sources(g, 5)
    ref, _ = structure.oracle("betweenness_centrality", g, sources)
    products, used = structure.brandes_products(g, sources, chunk=2)
    np.testing.assert_allclose(device.to_host(products), device.to_host(ref), rtol=1e-12,
                               atol=1e-15)
    assert float(device.to_host(ref).max()) > 0 and list(used) == list(sources)
    first, used = structure.brandes_products(g, sources, chunk=2, budget_s=0.0)
    assert list(used) == list(sources[:2])  # over budget: the first chunk only
    np.testing.assert_allclose(device.to_host(first), device.to_host(
        structure.oracle("betweenness_centrality", g, sources[:2])[0]), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("long_work, first", [(1e18, 2), (0, 3)])
def test_a_reference_over_part_of_the_sources_checks_a_call_of_ours_from_them(
        tmp_path, monkeypatch, long_work, first):
    """Over budget, the reference's first chunk: PRODUCT_CHUNK sources, or LONG_CHUNK where
    our search's levels x n pass LONG_WORK (a large long-diameter graph)."""
    monkeypatch.setattr(structure, "BC_ORACLE_WORK", 0)
    monkeypatch.setattr(structure, "PRODUCT_CHUNK", 2)
    monkeypatch.setattr(structure, "LONG_CHUNK", 3)
    monkeypatch.setattr(structure, "LONG_WORK", long_work)
    monkeypatch.setattr(structure, "REFERENCE_BUDGET_S", 0.0)
    monkeypatch.setitem(sys.modules, "cugraph", _cugraph())
    status, rows, report = run(tmp_path, SMALL, algorithms=["betweenness_centrality"])
    assert status == 0, report["failures"]
    ours, theirs = (rows[(SMALL, "betweenness_centrality", who)] for who in ("ours", "cugraph"))
    assert ours["check"] == "ok"
    assert f"the first {first} of the 4 sources" in ours["check_against"]
    assert theirs["check"].startswith("unchecked: ")


def test_cugraph_betweenness_is_checked_against_the_float64_reference(tmp_path, monkeypatch):
    """Beyond NetworkX's reach the rows take the sparse-product Brandes as the reference: ours
    and a cuGraph that answers wrongly are each checked against it, not against each other."""
    monkeypatch.setattr(structure, "BC_ORACLE_WORK", 0)
    monkeypatch.setitem(sys.modules, "cugraph", _cugraph(wrong=("bc",)))
    status, rows, report = run(tmp_path, SMALL, algorithms=["betweenness_centrality"])
    ours, theirs = (rows[(SMALL, "betweenness_centrality", who)] for who in ("ours", "cugraph"))
    assert ours["check"] == "ok" and ours["check_against"] == structure.PRODUCTS_LABEL
    assert theirs["check"] == "FAILED" and theirs["check_against"] == structure.PRODUCTS_LABEL
    assert status != 0


def test_peer_limit_leaves_out_a_betweenness_call_estimated_too_long(tmp_path, monkeypatch):
    monkeypatch.setattr(structure, "PROBE_SOURCES", 2)  # the quick run's 4 sources: probe 2
    monkeypatch.setitem(sys.modules, "cugraph", _cugraph())
    status, rows, report = run(tmp_path, SMALL, algorithms=["betweenness_centrality"],
                               peer_limit=1e-9)
    assert status == 0, report["failures"]
    ours, theirs = (rows[(SMALL, "betweenness_centrality", who)] for who in ("ours", "cugraph"))
    assert theirs["status"].startswith("not run: estimated") and "--peer-limit 1e-09 s" in \
        theirs["status"] and theirs["params"]["probe_ms"] > 0
    assert ours["check"] == "ok" and ours["check_against"] == structure.BRANDES_LABEL
    with pytest.raises(ValueError, match="--peer-limit is a positive number of seconds"):
        harness.run_suite("spmm", quick=True, out=tmp_path, quiet=True, peer_limit=5.0)


def test_betweenness_agrees_where_the_reference_is_finite_and_fails_where_only_one_is():
    """Past float64's range (path counts of a long lattice) the reference is NaN / inf: ours
    must be too, and agree elsewhere; a finite value against a NaN, or a wrong one, fails."""
    ref = device.asarray(np.array([1.0, 2.0, np.nan, np.inf]))
    same = structure.agree("betweenness_centrality", device.asarray(
        np.array([1.0, 2.0 * (1 + 1e-7), np.nan, np.nan])), ref, "ref")
    assert same["ok"] and same["not_finite"] == 2 and same["finite_mismatches"] == 0
    finite = structure.agree("betweenness_centrality", device.asarray(
        np.array([1.0, 2.0, 3.0, np.nan])), ref, "ref")
    assert not finite["ok"] and finite["finite_mismatches"] == 1
    wrong = structure.agree("betweenness_centrality", device.asarray(
        np.array([1.5, 2.0, np.nan, np.nan])), ref, "ref")
    assert not wrong["ok"] and wrong["value"] > 0.4
    clean = structure.agree("betweenness_centrality", ref[:2], ref[:2], "ref")
    assert clean["ok"] and "not_finite" not in clean
