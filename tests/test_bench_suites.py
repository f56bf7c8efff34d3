"""Every suite of ``python -m benchmarks run`` end to end on tiny graphs under the simulator
(through :func:`benchmarks.harness.run_suite`): files written with the documented columns, each
result checked, a wrong result of ours or of a peer caught (exit status 1), a missing peer or
one out of memory recorded as a skip.  No timing assertions."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _fakes import fake_cugraph_module  # noqa: E402

import onyx_rapids  # noqa: E402
from onyx_rapids import device  # noqa: E402
from benchmarks import catalog, harness  # noqa: E402
from benchmarks.peers import cusparse  # noqa: E402

COLUMNS = {"suite", "graph", "algorithm", "case", "variant", "implementation", "role", "label",
           "k", "unit", "ms", "first_call_ms", "repeats", "times_ms", "status", "check",
           "check_against", "check_detail", "params", "speedup_vs_ours", "ratio_vs_ours",
           "best_alternative", "graph_kind", "graph_n", "graph_m", "device", "backend",
           "version_onyx_rapids", "version_cugraph", "version_torch", "date", "git_commit",
           "tag", "quick"}


@pytest.fixture(autouse=True)
def _no_optional_peers(monkeypatch):
    """cuGraph and torch are missing here whether or not they are installed."""
    monkeypatch.setitem(sys.modules, "cugraph", None)
    monkeypatch.setitem(sys.modules, "torch", None)


def run(tmp_path, suite, graphs, **kw):
    status, report = harness.run_suite(suite, graphs_text=graphs, quick=True, out=tmp_path,
                                       quiet=True, tag="t", **kw)
    stem = next(tmp_path.glob(f"run-{suite}_*_t_quick.json")).with_suffix("")
    assert stem.name.startswith(f"run-{suite}_") and "_20" in stem.name
    df = pd.read_parquet(stem.with_suffix(".parquet"))
    assert COLUMNS <= set(df.columns)
    saved = json.loads(stem.with_suffix(".json").read_text())
    assert saved["suite"] == suite and saved["failures"] == report["failures"]
    assert saved["environment"]["versions"]["onyx_rapids"] == onyx_rapids.__version__
    md = stem.with_suffix(".md").read_text()
    assert "## Every row" in md and (report["plots"] or report["plot_note"])
    return status, df.set_index(["algorithm", "implementation", "variant", "case"]), report


def test_traversal_against_the_cpu_oracle(tmp_path):
    status, df, report = run(tmp_path, "traversal", "rmat:3:2",
                             algorithms=["sssp", "wcc", "core_number", "k_core", "pagerank"])
    assert status == 0, report["failures"]
    ours = df.xs("ours", level="implementation")
    assert (ours["check"] == "ok").all() and (ours["ms"] > 0).all()
    assert ours["check_against"].str.contains("scipy|networkx|power").all()
    assert ("pagerank", "weighted") in ours.index.droplevel("variant")  # the graph is weighted
    peer = df.xs("cugraph", level="implementation")
    assert peer["status"].str.startswith("skipped: cugraph not installed").all()
    assert "cugraph" in report["skipped_peers"]


def test_wrong_result_of_ours_fails(tmp_path, monkeypatch):
    real = onyx_rapids.pagerank

    def wrong(g, *a, **kw):
        out = real(g, *a, **kw)
        frame = out[0] if isinstance(out, tuple) else out
        frame["pagerank"] = np.roll(frame["pagerank"].to_numpy(), 1)
        return out
    monkeypatch.setattr(onyx_rapids, "pagerank", wrong)
    status, df, report = run(tmp_path, "traversal", "rmat:3:2", algorithms=["pagerank"])
    assert status == 1 and "pagerank on rmat:3:2" in report["failures"][0]
    assert df.loc[("pagerank", "ours", "default", "default"), "check"] == "FAILED"


def _cugraph(wrong: bool):
    """A stand-in cugraph with weakly_connected_components (scipy); ``wrong`` splits one
    component."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    mod = fake_cugraph_module()

    def wcc(G):
        n = len(G.ids)
        labels = connected_components(csr_matrix((np.ones(len(G.s)), (G.s, G.d)), (n, n)),
                                      connection="weak")[1] * 7 + 3
        if wrong:
            labels[0] = -1
        return pd.DataFrame({"vertex": G.ids, "labels": labels})
    mod.weakly_connected_components = wcc
    return mod


@pytest.mark.parametrize("spec, wrong", [("grid:3", False), ("grid:3", True),
                                         ("grid:3@degree", False)])
def test_cugraph_peer_checks_ours(tmp_path, monkeypatch, spec, wrong):
    """Also on a reordered graph, whose results are not in ascending id order."""
    monkeypatch.setitem(sys.modules, "cugraph", _cugraph(wrong))
    status, df, report = run(tmp_path, "traversal", spec, algorithms=["wcc"])
    key = ("weakly_connected_components", "cugraph", "default", "default")
    assert df.loc[key, "status"] == "ok" and df.loc[key, "label"] == "cugraph stand-in"
    assert status == int(wrong) and report["skipped_peers"] == {}
    assert df.loc[key, "check"] == ("FAILED" if wrong else "ok")
    assert report["graphs"][spec]["cugraph_build_ms"]


def test_spmm_against_the_sparse_peer(tmp_path):
    status, df, report = run(tmp_path, "spmm", "rmat:3:2",
                             algorithms=["feature_propagation", "ppr"])
    assert status == 0, report["failures"]
    peer = df.xs("cusparse", level="implementation")
    label = "CPU stand-in" if device.is_simulator() else "cuSPARSE"
    assert (peer["check"] == "ok").all() and peer["label"].str.contains(label).all()
    assert df.xs("torch", level="implementation")["status"].str.startswith("skipped").all()
    params = json.loads(df.xs("ours", level="implementation")["params"].iloc[0])
    assert params["min_bytes"] > 0 and params["full_ms"] > 0


def test_wrong_peer_fails_and_peer_out_of_memory_is_a_skip(tmp_path, monkeypatch):
    real = cusparse.Peer.run
    monkeypatch.setattr(cusparse.Peer, "run", lambda self, it: real(self, it) * 1.1)
    status, df, report = run(tmp_path, "spmm", "rmat:3:2", algorithms=["ppr"], ks=[2])
    label = "scipy.sparse (CPU stand-in" if device.is_simulator() else "cupyx.scipy.sparse"
    assert status == 1 and f"differs from {label}" in report["failures"][0]
    assert df.xs("cusparse", level="implementation")["check"].eq("FAILED").all()

    def oom(self, it):
        raise MemoryError("out of memory allocating 63 GiB")
    monkeypatch.setattr(cusparse.Peer, "run", oom)
    status, df, _ = run(tmp_path / "b", "spmm", "rmat:3:2", algorithms=["ppr"], ks=[2])
    assert status == 0
    assert df.xs("cusparse", level="implementation")["status"].str.startswith(
        "skipped: out of device memory").all()


def test_scaling_sweeps_graphs_and_ks(tmp_path):
    status, df, report = run(tmp_path, "scaling", "rmat:2:2,rmat:3:2",
                             algorithms=["feature_propagation"])
    assert status == 0, report["failures"]
    ours = df.xs("ours", level="implementation").reset_index()
    assert set(zip(ours["graph"], ours["k"])) == {(g, k) for g in ("rmat:2:2", "rmat:3:2")
                                                  for k in (1, 2)}


def test_convergence_change_driven_against_bulk(tmp_path):
    status, df, report = run(tmp_path, "convergence", "rmat:3:2", algorithms=["pagerank"])
    assert status == 0, report["failures"]
    auto = df.loc[("pagerank", "ours", "auto", "k=1")]
    cd = df.loc[("pagerank", "ours", "CD", "k=1")]
    bulk = df.loc[("pagerank", "ours", "bulk", "k=1")]
    assert auto["role"] == "ours" and cd["role"] == bulk["role"] == "variant"
    assert auto["check"] == cd["check"] == "ok"
    params = json.loads(auto["params"])
    assert params["converged"] and 0 <= params["cd_iterations"] <= params["iterations"]
    assert json.loads(cd["params"])["converged"] and json.loads(bulk["params"])["iterations"] > 1


def test_ablation_variants_from_the_registry(tmp_path, monkeypatch):
    status, df, report = run(tmp_path, "ablation", "rmat:3:2", algorithms=["pagerank"],
                             variants=["FA/CD/unfold/unfused/push", "NFA/NCD/fold/fused/pull"])
    assert status == 0, report["failures"]
    variants = set(df.xs("pagerank", level="algorithm").index.get_level_values("variant"))
    assert variants == {"default", "FA/CD/unfold/unfused/push", "NFA/NCD/fold/fused/pull"}
    assert (df["check"] == "ok").all()
    real = onyx_rapids.pagerank  # a variant that computes something else fails
    monkeypatch.setattr(onyx_rapids, "pagerank", lambda g, *a, **kw: (
        lambda out: (out[0].assign(pagerank=out[0]["pagerank"].to_numpy()[::-1]), out[1])
        if kw.get("change_driven") else out)(real(g, *a, **kw)))
    status, df, _ = run(tmp_path / "b", "ablation", "rmat:3:2", algorithms=["pagerank"],
                        variants=["FA/CD/unfold/unfused/push"])
    assert status == 1
    assert df.loc[("pagerank", "ours", "FA/CD/unfold/unfused/push", "k=1"), "check"] == "FAILED"


def test_ratings_graphs_run_the_bipartite_algorithms_only(tmp_path):
    status, df, _ = run(tmp_path, "ablation", "ratings:6:4:12", algorithms=["pagerank"])
    assert status == 0 and df["status"].str.startswith("n/a: ratings graphs").all()


def test_profile_splits_a_call_into_kernels(tmp_path):
    status, df, report = run(tmp_path, "profile", "rmat:3:2", algorithms=["ppr"])
    assert status == 0, report["failures"]
    params = json.loads(df["params"].iloc[0])
    assert params["kernels"] and params["kernel_ms"] <= params["profiled_call_ms"]


def test_profile_sees_the_hand_written_kernels(tmp_path):
    """ACC's, union-find's and the fused PageRank's launches are in the split too."""
    status, df, report = run(tmp_path, "profile", "rmat:3:2",
                             algorithms=["bfs", "weakly_connected_components", "pagerank"])
    assert status == 0, report["failures"]
    names = {row["algorithm"]: {k["kernel"] for k in json.loads(row["params"])["kernels"]}
             for _, row in df.reset_index().iterrows()}
    assert any(k.startswith("acc ") for k in names["bfs"]), names["bfs"]
    assert "union-find compress" in names["weakly_connected_components"]
    assert "fused pagerank" in names["pagerank"]


def test_profile_takes_option_settings_as_variants(tmp_path):
    status, df, report = run(tmp_path, "profile", "rmat:3:2", algorithms=["ppr"], ks=[4],
                             variants=["width=2"])
    assert status == 0, report["failures"]
    assert set(df.index.get_level_values("variant")) == {"default", "width=2"}
    rows = df.xs("width=2", level="variant")
    assert (rows["check"] == "ok").all()
    kernels = json.loads(rows["params"].iloc[0])["kernels"]
    assert kernels and all("width=2" in k["kernel"] for k in kernels)
    assert catalog.parse_options("width=4/fold=false/direction=pull") == dict(
        width=4, fold=False, direction="pull")


def test_construction_and_first_calls(tmp_path):
    status, df, report = run(tmp_path, "construction", "rmat:3:2",
                             algorithms=["core_number", "pagerank"])
    assert status == 0, report["failures"]
    build = df.loc[("graph construction", "ours", "from_edgelist", "build")]
    assert build["check"] == "ok" and build["ms"] > 0
    first = df.loc[("pagerank", "ours", "default", "first call")]
    assert first["check"] == "ok" and "compile_ms" in json.loads(first["params"])
    assert df.loc[("result frame", "ours", "io.to_frame", "k=2"), "check"] == "ok"


def test_multisource_against_single_source_runs(tmp_path):
    status, df, report = run(tmp_path, "multisource", "rmat:3:2", algorithms=["sssp"])
    assert status == 0, report["failures"]
    at_once = df.xs("at once", level="variant")
    assert (at_once["check"] == "ok").all() and set(at_once["k"]) == {2, 3}
    assert (df.xs("k separate", level="variant").xs("ours", level="implementation")["role"]
            == "variant").all()


def test_outofcore_builds_from_parquet_and_checks_both_placements(tmp_path, monkeypatch):
    monkeypatch.setenv("ONYX_BENCH_SCRATCH", str(tmp_path))
    status, df, report = run(tmp_path, "outofcore", "rmat:4:2", algorithms=["bfs"])
    assert status == 0, report["failures"]
    build = df.loc[("graph construction", "ours", "host", "from_parquet")]
    params = json.loads(build["params"])
    assert build["check"] == "ok" and params["m"] == report["graphs"]["rmat:4:2"]["m"]
    assert any("host build: CSC" in line for line in params["passes"])
    assert df.loc[("bfs", "ours", "host", "default"), "check"] == "ok"
    assert not list(tmp_path.glob("onyx_outofcore_*"))  # the edge file is deleted
    with pytest.raises(ValueError, match="draws R-MAT graphs"):
        harness.SUITES["outofcore"].prepare(harness.graphs.parse_spec("grid:4"))


def test_hostmem_auto_case_crosses_from_device_to_host_at_the_budget(tmp_path, monkeypatch):
    # edges of 704 and 1360 bytes; auto keeps edges up to 1000 bytes of the 64 MB budget on
    # the device (the budget itself must hold the traversal's work space: on an H100 under
    # cuDF's RMM allocator a request above 4 MB, whatever the graph)
    monkeypatch.setattr(onyx_rapids.memory, "AUTO_FRACTION", 1000 / 64e6)
    status, df, report = run(tmp_path, "hostmem", "rmat:4:4,rmat:5:4", algorithms=["bfs"],
                             device_budget="64MB")
    assert status == 0, report["failures"]
    auto = df.xs("auto", level="case").xs("ours", level="implementation")
    assert (auto["check"] == "ok").all() and len(auto) == 2
    placed = [json.loads(p)["placement"] for p in auto.sort_values("graph_m")["params"]]
    assert placed == ["device", "host"]
    limit = harness._auto_limit_edges(report)
    assert report["graphs"]["rmat:4:4"]["m"] < limit < report["graphs"]["rmat:5:4"]["m"]
    with pytest.raises(ValueError, match="--device-budget is an option of the hostmem suite"):
        harness.run_suite("spmm", quick=True, out=tmp_path, device_budget="1GB")
    with pytest.raises(ValueError, match="--device-budget must be positive"):
        harness.run_suite("hostmem", quick=True, out=tmp_path, device_budget="0")
    assert onyx_rapids.memory.device_budget() is None  # the cases put back what was set


def test_partition_streaming_baseline_gives_our_pagerank():
    from benchmarks.suites import hostmem
    from onyx_rapids import Graph, datasets, device, pagerank

    g = Graph.from_edgelist(datasets.rmat(5, 4, seed=2), placement="host", directed=True)
    frame, info = pagerank(g, weight=False, tol=1e-6, return_info=True)
    streamed = hostmem.Streamed(g, partition_bytes=64)  # 16 int32 ids a partition
    assert len(streamed.parts) > 4
    ranks = device.to_host(streamed.pagerank(0.85, info.iterations)).astype(np.float64)
    ours = frame["pagerank"].to_numpy().astype(np.float64)
    assert np.abs(ranks - ours).sum() / np.abs(ours).sum() < 1e-5
    wrong = device.to_host(streamed.pagerank(0.5, info.iterations)).astype(np.float64)
    assert np.abs(wrong - ours).sum() / np.abs(ours).sum() > 1e-3  # the check can fail


# ------------------------------------------------------------------------------ suite networkx


def test_networkx_suite_graphs_and_sizes():
    from benchmarks.suites import networkx as nxs

    specs = nxs.specs_for_sizes(nxs.parse_sizes("1e4,1e7"))
    assert specs == "rmat:9:16,grid:71,rmat:19:16,grid:2236"
    with pytest.raises(ValueError, match="--sizes"):
        nxs.parse_sizes("1e4,big")
    G, facts = nxs.nx_graph("grid:5")
    assert (G.number_of_nodes(), G.number_of_edges(), facts["family"]) == (25, 40, "road")
    assert all(0.1 <= w < 1 for _, _, w in G.edges(data="weight"))
    S, facts = nxs.nx_graph("rmat:5:4")
    assert facts["family"] == "social" and not S.is_directed() and S.number_of_edges() > 50
    assert S.degree(nxs.hub(S)) == max(d for _, d in S.degree())


def test_networkx_suite_checks_catch_wrong_results():
    import networkx as nx
    from benchmarks.suites import networkx as nxs

    G, _ = nxs.nx_graph("rmat:5:4")
    s = nxs.hub(G)
    for name in nxs.FUNCTIONS:
        ref = nxs._call(name, G, s, backend="networkx")
        assert nxs.check(name, ref, ref, G, against="nx", source=s)["ok"], name
    pr = nx.pagerank(G)
    worse = {**pr, s: pr[s] + 0.01}
    assert not nxs.check("pagerank", worse, pr, G, against="nx")["ok"]
    d = nx.single_source_dijkstra_path_length(G, s)
    far = max(d, key=d.get)
    assert not nxs.check("single_source_dijkstra_path_length", {**d, far: d[far] * 1.01},
                         d, G, against="nx")["ok"]
    hops = nx.single_source_shortest_path_length(G, s)
    assert not nxs.check("single_source_shortest_path_length", {**hops, far: hops[far] + 1},
                         hops, G, against="nx")["ok"]
    missing = {v: c for v, c in nx.core_number(G).items() if v != far}
    assert "missing" in nxs.check("core_number", missing, nx.core_number(G), G,
                                  against="nx")["error"]
    comps = [set(G)]  # one component where there are several, or a node dropped
    ref = list(nx.connected_components(G))
    assert nxs.check("connected_components", ref, ref, G, against="nx")["ok"]
    if len(ref) > 1:
        assert not nxs.check("connected_components", comps, ref, G, against="nx")["ok"]
    edges = list(nx.bfs_edges(G, s))
    u, v = edges[-1]
    assert not nxs.check("bfs_edges", edges[:-1] + [(v, u)], edges, G, against="nx",
                         source=s)["ok"]
    assert not nxs.check("bfs_edges", edges[:-1], edges, G, against="nx", source=s)["ok"]


def test_networkx_suite_runs_networkx_and_cuts_it_above_the_limit(tmp_path, monkeypatch):
    from benchmarks.suites import networkx as nxs

    # the onyx column under the simulator would cost seconds per call: left out here
    monkeypatch.setattr(nxs, "onyx_backend", lambda: nxs.Backend("onyx", "onyx", why="off"))
    status, _, report = run(tmp_path, "networkx", "grid:4",
                            algorithms=["pagerank", "connected_components"], nx_max_edges=10)
    rows = {(r["algorithm"], r["implementation"], r["case"]): r for r in report["rows"]}
    cut = rows[("pagerank", "networkx", "end to end")]
    assert cut["status"].startswith("not run: 24 edges > --nx-max-edges 10")
    assert cut["ms"] is None
    assert report["skipped_peers"]["onyx"] == "off"
    assert rows[("pagerank", "onyx", "end to end")]["status"] == "skipped: off"
    status, df, report = run(tmp_path / "all", "networkx", "grid:4", algorithms=["core_number"])
    assert "not run" not in " ".join(df["status"])
    nx_row = next(r for r in report["rows"] if r["implementation"] == "networkx")
    assert nx_row["status"] == "ok" and nx_row["ms"] > 0 and status == 0
    with pytest.raises(ValueError, match="networkx suite"):
        harness.run_suite("traversal", sizes=[1e4], out=tmp_path, quiet=True)


# ------------------------------------------------------------------------------ traversal: seeds


SIMDX_OUTPUT = """Input: /path/to/exe /path/to/beg_pos /path/to/adj_list /path/weight_list \
src blk_size swith_iter
./bfs g.beg_pos g.csr g.weight 3 128 1
Expected edge count: 40
Graph load (success): 16 verts, 40 edges 0.0001 second(s)
Total iteration: 4
Total time: 8.1e-05 second(s).
Result correct
"""


def test_simdx_build_patch_output_and_files(tmp_path):
    from benchmarks.peers import simdx

    src = "v = __shfl(v, i);\nb = __ballot(p); if (__any(j < e)) x += __shfl_xor(x, j, 32);\n" \
          "__shfl_sync(0xffffffff, v, 1); cudaThreadSynchronize();"
    assert simdx.patch(src) == (
        "v = __shfl_sync(0xffffffff, v, i);\nb = __ballot_sync(0xffffffff, p); if ("
        "__any_sync(0xffffffff, j < e)) x += __shfl_xor_sync(0xffffffff, x, j, 32);\n"
        "__shfl_sync(0xffffffff, v, 1); cudaDeviceSynchronize();")
    assert simdx.parse(SIMDX_OUTPUT) == {"iterations": 4, "ms": pytest.approx(0.081),
                                         "correct": True}
    wrong = SIMDX_OUTPUT.replace("Result correct", "Result wrong! Below are top 10 wrongs")
    assert simdx.parse(wrong)["correct"] is False
    with pytest.raises(ValueError, match="lacks"):
        simdx.parse(SIMDX_OUTPUT.replace("Result correct", ""))
    g = onyx_rapids.Graph.from_edgelist(pd.DataFrame({"s": [0, 1, 2], "d": [1, 2, 0]}), "s",
                                        "d", directed=True)
    beg, csr, weight = simdx.write_csr(g, tmp_path / "g")
    assert np.fromfile(beg, dtype=np.int64).tolist() == [0, 1, 2, 3]
    assert np.fromfile(csr, dtype=np.int64).tolist() == [1, 2, 0]
    assert np.fromfile(weight, dtype=np.int64).tolist() == [1, 1, 1]
    assert not simdx.symmetric(g)
    both = pd.DataFrame({"s": [0, 1, 1, 2], "d": [1, 0, 2, 1]})
    assert simdx.symmetric(onyx_rapids.Graph.from_edgelist(both, "s", "d", directed=True))
    assert simdx.symmetric(onyx_rapids.Graph.from_edgelist(both, "s", "d", directed=False))


def _seed_fakes(correct: bool, emogi_extra: int):
    """SIMD-X and EMOGI stand-ins on the 3 x 3 grid (ids = internal ids): EMOGI's iterations
    are the root's eccentricity + 1 (+ emogi_extra)."""
    import types

    import networkx as nx

    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 3), ordering="sorted")

    from benchmarks.peers.simdx import symmetric

    simdx = types.SimpleNamespace(BLOCK_SIZE=128, SWITCH_ITER=1, symmetric=symmetric,
                                  write_csr=lambda g, stem: ("b", "c", "w"),
                                  run_bfs=lambda files, root: {"iterations": 3, "ms": 1.5,
                                                               "correct": correct})
    emogi = types.SimpleNamespace(PROGRAMS=("bfs",), write_bel=lambda g, stem: "bel",
                                  run_bfs=lambda p, bel, root, mode: [(
                                      root, nx.eccentricity(grid, root) + 1 + emogi_extra, 2.0)])
    return {"simdx": (simdx, "SIMD-X stand-in"), "emogi": (emogi, "EMOGI stand-in")}


def test_seed_rows_join_the_bfs_group_and_are_checked(tmp_path, monkeypatch):
    """SIMD-X's run is right and EMOGI's iterations one too many: ok and FAILED."""
    from benchmarks.peers import load
    from benchmarks.suites import seeds

    fakes = _seed_fakes(True, 1)
    monkeypatch.setattr(seeds.peers, "load", lambda name: fakes[name] if name in fakes
                        else load(name))
    status, df, report = run(tmp_path, "traversal", "grid:3", algorithms=["bfs"])
    key = ("bfs", "simdx", "simdx", "default")
    assert df.loc[key, "status"] == "ok" and df.loc[key, "ms"] == 1.5
    assert df.loc[key, "check"] == "ok" and df.loc[key, "check_against"] == "its own CPU BFS"
    assert json.loads(df.loc[key, "params"])["switch_iter"] == 1
    emogi = df.loc[("bfs", "emogi", "emogi bfs device", "random source")]
    assert emogi["check"] == "FAILED" and emogi["ms"] == 2.0
    assert status == 1 and any("EMOGI bfs" in f for f in report["failures"])
    fakes["simdx"][0].run_bfs = lambda files, root: {"iterations": 3, "ms": 1.5,
                                                     "correct": False}
    status, df, _ = run(tmp_path / "wrong", "traversal", "grid:3", algorithms=["bfs"])
    assert df.loc[key, "check"] == "FAILED"
    status, df, _ = run(tmp_path / "directed", "traversal", "rmat:3:2", algorithms=["bfs"])
    assert df.loc[key, "status"].startswith("n/a: SIMD-X's program is a BFS of symmetric")


def test_first_call_child_times_and_checks_in_process():
    from benchmarks.suites import traversal

    rec = traversal.first_call_child("grid:3", "weakly_connected_components", 0, 1)
    assert rec["first_ms"] > 0 and len(rec["warm_ms"]) == 1 and rec["check"]["ok"]


@pytest.mark.slow
def test_first_calls_run_in_fresh_processes_with_an_empty_then_warm_cache():
    from benchmarks import common, graphs
    from benchmarks.suites import traversal

    run_ = harness.Run(harness.SUITES["traversal"], algorithms=["weakly_connected_components"],
                       repeat=1, quick=True, ks=(), variants=None, log=common.Log(True))
    spec = graphs.parse_spec("grid:3")
    g, _ = graphs.build(spec)
    traversal.first_calls(run_, spec, g, 0)
    assert [(r["variant"], r["role"], r["check"]) for r in run_.rows] == [
        ("empty cache", "ours", "ok"), ("warm cache", "variant", "ok")]
    assert all(r["ms"] > 0 and "beyond_warm_ms" in r["params"] for r in run_.rows)


def test_no_first_calls_leaves_out_a_full_runs_fresh_processes(tmp_path):
    status, report = harness.run_suite("traversal", graphs_text="grid:3", repeat=1,
                                       algorithms=["weakly_connected_components"], out=tmp_path,
                                       quiet=True, tag="t", first_calls=False)
    assert status == 0, report["failures"]
    df = pd.read_parquet(next(tmp_path.glob("run-traversal_*_t.parquet")))
    assert len(df) and not (df["case"] == "first call (fresh process)").any()
    with pytest.raises(ValueError, match="--no-first-calls is an option of the traversal"):
        harness.run_suite("spmm", quick=True, out=tmp_path, quiet=True, first_calls=False)
