"""The benchmark harness (``python -m benchmarks``: benchmarks/harness.py, graphs.py) on tiny
graphs under the simulator: graph specs parse (and bad ones are refused naming the spec), the
generators are deterministic, simple and of the documented shape, ``run traversal`` / ``run
spmm`` / ``run ablation`` write Parquet, JSON and Markdown with the documented columns and rows,
skipped peers are recorded with their reason, a wrong result of ours (or of a peer) is caught as
FAILED with exit status 1, and cuGraph's path works against a stand-in module.  No timing
assertions."""

import json
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import oracles_traversal as oracle  # noqa: E402
from _fakes import FakeCugraphGraph, fake_cugraph_module  # noqa: E402

import onyx_rapids  # noqa: E402
from benchmarks import graphs as specs  # noqa: E402
from benchmarks import harness, peers, traversal  # noqa: E402
from benchmarks.foundation import Bench  # noqa: E402
from onyx_rapids import device  # noqa: E402

UNREACHED = 2**31 - 1
TORCH_REASON = "not installed: torch (test)"
KEY = ["suite", "graph", "algorithm", "variant", "implementation"]
COLUMNS = KEY + [
    "case", "role", "label", "k", "unit", "ms", "first_call_ms", "repeats", "times_ms", "status",
    "check", "check_against", "check_detail", "speedup_vs_ours", "ratio_vs_ours",
    "best_alternative", "params", "graph_kind", "graph_n", "graph_m", "graph_directed",
    "graph_weighted", "graph_max_degree", "graph_params", "device", "backend", "driver",
    "version_onyx_rapids", "version_numba", "version_numba_cuda", "version_cupy",
    "version_cudf", "version_cugraph", "version_torch", "version_torch_geometric", "date",
    "timestamp", "git_commit", "tag", "quick"]


@pytest.fixture
def no_cugraph(monkeypatch):
    monkeypatch.setitem(sys.modules, "cugraph", None)  # import cugraph -> ImportError


@pytest.fixture(autouse=True)
def _no_torch(monkeypatch):
    """The PyG peer is skipped the same way whether or not torch is installed here."""
    monkeypatch.setattr(peers, "import_torch", lambda: (None, None, TORCH_REASON))


def _run(tmp_path, *argv):
    return harness.main(["run", *argv, "--out", str(tmp_path)])


def _outputs(tmp_path, suite):
    found = {ext: sorted(tmp_path.glob(f"run-{suite}_*_quick.{ext}"))
             for ext in ("parquet", "json", "md")}
    assert all(len(v) == 1 for v in found.values()), found
    df = pd.read_parquet(found["parquet"][0])
    report = json.loads(found["json"][0].read_text())
    return df, report, found["md"][0].read_text(), found["json"][0]


def _matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except Exception:
        return False
    return True


def _check_common(df, report, md, suite):
    assert set(COLUMNS) <= set(df.columns), set(COLUMNS) - set(df.columns)
    assert not df.duplicated(KEY).any()
    assert len(report["rows"]) == len(df)
    assert (df["suite"] == suite).all() and report["suite"] == suite
    assert (df["backend"] == device.BACKEND).all()
    assert (df["version_onyx_rapids"] == onyx_rapids.__version__).all()
    for key in ("argv", "date", "timestamp", "metadata", "settings", "graphs", "rows", "details",
                "skipped_peers", "plots", "plot_note", "failures", "ok", "elapsed_s"):
        assert key in report, key
    for spec, st in report["graphs"].items():
        assert (df.loc[df["graph"] == spec, "graph_n"] == st["n"]).all()
        assert (df.loc[df["graph"] == spec, "graph_m"] == st["m"]).all()
    ours = df[df["role"] == "ours"]
    ok = ours[ours["status"] == "ok"]
    assert (ok["ms"] > 0).all() and (ok["speedup_vs_ours"] == 1.0).all()
    assert "## Ours against the" in md and "## Where we lose" in md and "## Every row" in md
    if _matplotlib_available():
        assert report["plot_note"] is None and report["plots"]
        for p in report["plots"]:
            assert Path(p).exists() and Path(p).stat().st_size > 1000
    else:  # CI's venv: the run still succeeds and says why there is no plot
        assert report["plots"] == []
        assert report["plot_note"].startswith("no plot: matplotlib not installed")
        assert report["plot_note"] in md


# ------------------------------------------------------------------------------ specs


@pytest.mark.parametrize("text, kind, params", [
    ("rmat:10", "rmat", {"scale": 10, "edge_factor": 16}),
    (" RMAT:10:8 ", "rmat", {"scale": 10, "edge_factor": 8}),
    ("er:100:2.5", "er", {"n": 100, "avg_degree": 2.5}),
    ("er:100:4", "er", {"n": 100, "avg_degree": 4}),
    ("grid:5", "grid", {"side": 5}),
    ("delaunay:50", "delaunay", {"n": 50}),
    ("ratings:10:5:20", "ratings", {"users": 10, "items": 5, "ratings": 20}),
])
def test_good_specs_parse(text, kind, params):
    spec = specs.parse_spec(text)
    assert (spec.kind, spec.params) == (kind, params)
    assert spec.slug.startswith(kind) and "/" not in spec.slug and ":" not in spec.slug


def test_spec_lists_drop_duplicates_and_keep_order():
    got = specs.parse_specs("grid:3, rmat:4:4,grid:3")
    assert [s.text for s in got] == ["grid:3", "rmat:4:4"]
    with pytest.raises(ValueError, match="no graph spec"):
        specs.parse_specs(" , ")


@pytest.mark.parametrize("text, what", [
    ("", "empty"),
    ("foo:3", "unknown kind 'foo'"),
    ("rmat", "expected rmat:SCALE"),
    ("rmat:x", "SCALE must be an integer"),
    ("rmat:0", "SCALE must be in"),
    ("rmat:4:0", "EDGE_FACTOR must be >= 1"),
    ("rmat:4:4:4", "expected rmat:SCALE"),
    ("er:10", "expected er:N:AVG_DEGREE"),
    ("er:10:0", "AVG_DEGREE must be positive"),
    ("er:10:abc", "AVG_DEGREE must be a number"),
    ("er:5:9", "exceeds N - 1"),
    ("grid:1", "SIDE must be in"),
    ("grid:3:3", "expected grid:SIDE"),
    ("delaunay:2", "N must be >= 3"),
    ("ratings:2:2:5", "exceeds USERS x ITEMS"),
    ("ratings:2:2", "expected ratings:USERS:ITEMS:RATINGS"),
    ("parquet:", "no PATH given"),
    ("parquet:/no/such/edges.parquet", "no such Parquet file"),
    ("parquet:/no/such/edges.parquet:u", "give both SRC and DST"),
])
def test_bad_specs_name_the_spec_and_the_problem(text, what):
    with pytest.raises(ValueError) as e:
        specs.parse_spec(text)
    assert repr(text.strip()) in str(e.value) and what in str(e.value), str(e.value)


def test_parquet_spec(tmp_path):
    path = tmp_path / "edges.parquet"
    pd.DataFrame({"u": [10, 10, -3, 7], "v": [-3, 7, 7, 10],
                  "w": np.array([0.5, 1.0, 2.0, 0.25], dtype=np.float32)}).to_parquet(path)
    spec = specs.parse_spec(f"parquet:{path}:u:v:w")
    assert spec.params == {"path": str(path), "src": "u", "dst": "v", "weight": "w"}
    assert spec.slug == "parquet-edges"
    g, st = specs.build(spec)
    assert (g.n, g.m, g.directed, st["weighted"]) == (3, 4, True, True)
    assert device.to_host(g.vertices).tolist() == [-3, 7, 10]
    g, st = specs.build(spec, undirected=True)
    assert (g.n, g.m, g.directed) == (3, 8, False) and st["input_edges"] == 4
    # default columns src, dst
    other = tmp_path / "plain.parquet"
    pd.DataFrame({"src": [0, 1], "dst": [1, 2]}).to_parquet(other)
    assert specs.parse_spec(f"parquet:{other}").params["src"] == "src"
    # a missing column, a missing file, not Parquet
    with pytest.raises(ValueError) as e:
        specs.parse_spec(f"parquet:{path}:u:v:rating")
    msg = str(e.value)
    assert f"parquet:{path}:u:v:rating" in msg and "no WEIGHT column 'rating'" in msg, msg
    with pytest.raises(ValueError, match="no SRC column 'src'"):
        specs.parse_spec(f"parquet:{path}")
    with pytest.raises(ValueError, match="no such Parquet file or directory"):
        specs.parse_spec(f"parquet:{tmp_path / 'gone.parquet'}:u:v")
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        specs.parse_spec(f"parquet:{junk}")


# ------------------------------------------------------------------------------ generators


def _arrays(g):
    out = [device.to_host(a) for a in (g.vertices, g.out_offsets, g.out_indices)]
    if g.edge_weights is not None:
        out.append(device.to_host(g.edge_weights))
    return out


def _pairs(g):
    src = device.to_host(g.edge_sources).astype(np.int64)
    dst = device.to_host(g.out_indices).astype(np.int64)
    return src, dst


@pytest.mark.parametrize("text", ["rmat:4:4", "er:40:3", "grid:4", "delaunay:30",
                                  "ratings:10:5:20"])
@pytest.mark.parametrize("undirected", [False, True])
def test_generators_are_deterministic_and_simple(text, undirected):
    g, st = specs.build(text, undirected=undirected)
    g2, st2 = specs.build(text, undirected=undirected)
    for a, b in zip(_arrays(g), _arrays(g2), strict=True):
        np.testing.assert_array_equal(a, b)
    assert (st["n"], st["m"], st["directed"]) == (g.n, g.m, g.directed)
    assert st["spec"] == text and st["params"] == specs.parse_spec(text).params
    for key in ("max_degree", "max_out_degree", "max_in_degree", "generator", "build_ms",
                "self_loops", "isolated_vertices", "weighted"):
        assert key in st, key
    src, dst = _pairs(g)
    assert st["max_degree"] == (np.bincount(src, minlength=g.n)
                                + (np.bincount(dst, minlength=g.n) if g.directed else 0)).max()
    if text.startswith("rmat") and undirected:  # ablation.py's raw R-MAT edges, symmetrized
        assert g.n == 16 and st["input_edges"] == 64 and not g.directed
        return
    assert st["self_loops"] == 0 and bool((src != dst).all())
    keys = src * g.n + dst
    assert np.unique(keys).size == keys.size  # no duplicate edges


def test_generator_shapes():
    g, st = specs.build("grid:4")
    assert (g.n, g.m, g.directed, st["weighted"]) == (16, 48, False, True)
    g, _ = specs.build("grid:4", undirected=True)
    assert (g.n, g.m, g.edge_weights) == (16, 48, None)
    g, st = specs.build("er:40:3")  # directed: 120 distinct ordered pairs, weighted
    assert (g.m, g.directed, st["edges_drawn"]) == (120, True, 120) and g.n <= 40
    w = device.to_host(g.edge_weights[:, 0])
    assert w.min() >= 0.1 and w.max() < 1.0
    g, _ = specs.build("er:40:3", undirected=True)  # 60 pairs stored both ways, all 40 ids
    assert (g.n, g.m, g.directed) == (40, 120, False)
    g, st = specs.build("delaunay:30")
    assert (g.n, g.directed) == (30, False) and g.m // 2 <= 3 * 30 - 6  # planar
    assert float(device.to_host(g.edge_weights).min()) > 0  # Euclidean lengths
    g, st = specs.build("ratings:10:5:20")
    src, dst = _pairs(g)
    ids = device.to_host(g.vertices)
    users = ids[src] < 10
    assert g.m == 40 and bool((users != (ids[dst] < 10)).all())  # bipartite
    assert st["weighted"] and float(device.to_host(g.edge_weights).max()) <= 5


def test_rmat_is_traversal_benchmarks_graph():
    """rmat in directed mode is benchmarks/traversal.py's rmat family, weights included."""
    g, st = specs.build("rmat:5:4")
    ns = types.SimpleNamespace(scale=5, edge_factor=4, seed=0, ks=[1], multi_source=[])
    fam = traversal.build_family(Bench(), ns, "rmat")
    for a, b in zip(_arrays(g), _arrays(fam.g), strict=True):
        np.testing.assert_array_equal(a, b)
    assert st["duplicates_dropped"] == fam.stats["duplicates_dropped"]


# ------------------------------------------------------------------------------ command line


def test_list_prints_suites_and_specs(capsys):
    assert harness.main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    for name in harness.SUITES:
        assert sum(line.strip().startswith(name + " ") for line in lines) == 1, name
    for syntax, _ in specs.KINDS.values():
        assert sum(line.strip().startswith(syntax) for line in lines) == 1, syntax


@pytest.mark.parametrize("argv, message", [
    (["run", "nosuch"], "invalid choice"),
    (["run", "traversal", "--graphs", "rmat:4:4,grid:1"], "graph spec 'grid:1'"),
    (["run", "traversal", "--graphs", "parquet:/no/such.parquet"], "no such Parquet file"),
    (["run", "spmm", "--repeat", "0"], "--repeat must be >= 1"),
    (["run", "spmm", "--algorithms", "bfs"], "unknown ['bfs']"),
])
def test_bad_arguments_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        harness.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_defaults_per_suite():
    args = harness.parse_args(["run", "traversal"])
    assert [s.text for s in args.graphs] == ["rmat:22:16", "grid:2048"] and args.repeat == 5
    args = harness.parse_args(["run", "spmm", "--quick", "--algorithms", "ppr"])
    assert args.repeat == 1 and args.algorithms == ["personalized_pagerank"]
    assert [s.text for s in args.graphs] == ["rmat:4:4", "grid:4"]
    args = harness.parse_args(["run", "ablation", "--quick", "--repeat", "2"])
    assert args.repeat == 2 and args.algorithms == list(harness.ablation.ALGORITHMS)


# ------------------------------------------------------------------------------ runs


def test_quick_traversal_run(tmp_path, capsys, no_cugraph):
    rc = _run(tmp_path, "traversal", "--quick", "--graphs", "rmat:4:4,grid:3", "--tag", "t")
    out = capsys.readouterr().out
    assert rc == 0, out
    df, report, md, path = _outputs(tmp_path, "traversal")
    assert path.name.startswith("run-traversal_") and path.name.endswith("_t_quick.json")
    _check_common(df, report, md, "traversal")
    algorithms = harness.SUITES["traversal"].algorithms
    assert len(df) == 2 * len(algorithms) * 2  # graphs x algorithms x (ours, cugraph)
    assert set(df["graph"]) == {"rmat:4:4", "grid:3"}
    assert set(df["algorithm"]) == set(algorithms)
    assert (df["unit"] == "ms/call").all() and (df["repeats"][df["role"] == "ours"] == 1).all()
    ours = df[df["implementation"] == "ours"]
    assert (ours["status"] == "ok").all() and (ours["check"] == "ok").all()
    assert ours["check_against"].str.startswith("CPU oracle").all()
    peer = df[df["implementation"] == "cugraph"]
    assert peer["status"].str.startswith("skipped: cugraph not installed").all()
    assert peer["ms"].isna().all() and not peer["best_alternative"].any()
    assert report["skipped_peers"]["cugraph"].startswith("cugraph not installed")
    assert "peer cugraph skipped: cugraph not installed" in out
    assert report["graphs"]["rmat:4:4"]["directed"] is True
    assert report["graphs"]["grid:3"]["directed"] is False
    k_core = json.loads(ours[ours["algorithm"] == "k_core"]["params"].iloc[0])
    assert k_core["k"] >= 1
    assert "No comparison: no best peer ran" in md and "| rmat:4:4 | bfs | default |" in md
    assert "All checks passed." in md and report["ok"] is True and report["failures"] == []


def _stand_in_cugraph():
    """A cugraph module on pandas frames computing with the test oracles (shuffled rows, wcc
    labels not the smallest ids, as cuGraph's)."""
    mod = fake_cugraph_module()

    def frame(G, **cols):
        return pd.DataFrame({"vertex": G.ids, **cols}).sample(frac=1.0, random_state=0)

    def pagerank(G, alpha=0.85, personalization=None, tol=1e-5, max_iter=100):
        assert G.store_transposed
        n = len(G.ids)
        out = np.bincount(G.s, minlength=n).astype(float)
        t = np.full(n, 1.0 / n)
        if personalization is not None:
            t = np.zeros(n)
            t[np.searchsorted(G.ids, personalization["vertex"].to_numpy())] = 1.0
        x = t.copy()
        for _ in range(5000):
            push = np.bincount(G.d, weights=x[G.s] / out[G.s], minlength=n)
            x = alpha * (push + x[out == 0].sum() * t) + (1 - alpha) * t
        return frame(G, pagerank=x.astype(np.float32))

    def k_core(G, k=None):
        assert not G.directed
        sub = FakeCugraphGraph(directed=False)
        sub.ids = G.ids[oracle.k_core(len(G.ids), G.s, G.d, k)]  # a membership mask
        return sub

    mod.bfs = lambda G, start=None: frame(G, distance=oracle.bfs(
        len(G.ids), G.s, G.d, int(np.searchsorted(G.ids, start))).astype(np.int64),
        predecessor=-1)
    mod.sssp = lambda G, source=None: frame(G, distance=np.nan_to_num(oracle.sssp(
        len(G.ids), G.s, G.d, G.w, int(np.searchsorted(G.ids, source))),
        posinf=np.finfo(np.float32).max).astype(np.float32), predecessor=-1)
    mod.weakly_connected_components = lambda G: frame(
        G, labels=oracle.weakly_connected_components(len(G.ids), G.s, G.d, G.ids) * 7 + 3)
    mod.core_number = lambda G: frame(G, core_number=oracle.core_number(len(G.ids), G.s, G.d))
    mod.pagerank, mod.k_core = pagerank, k_core
    return mod


def test_cugraph_peer_with_a_stand_in(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "cugraph", _stand_in_cugraph())
    rc = _run(tmp_path, "traversal", "--quick", "--graphs", "rmat:4:4")
    out = capsys.readouterr().out
    assert rc == 0, out
    df, report, md, _ = _outputs(tmp_path, "traversal")
    _check_common(df, report, md, "traversal")
    peer = df[df["implementation"] == "cugraph"]
    assert len(peer) == len(harness.SUITES["traversal"].algorithms)
    assert (peer["status"] == "ok").all() and (peer["ms"] > 0).all()
    assert (peer["check"] == "ok").all() and peer["best_alternative"].all()
    assert (peer["label"] == "cugraph stand-in").all()
    assert (df["version_cugraph"] == "stand-in").all()
    ours = df[df["implementation"] == "ours"].set_index("algorithm")
    assert (ours["check_against"] == "cugraph stand-in").all()
    assert (ours["check"] == "ok").all()
    merged = peer.set_index("algorithm")
    np.testing.assert_allclose(merged["ratio_vs_ours"], merged["ms"] / ours["ms"])
    np.testing.assert_allclose(merged["speedup_vs_ours"], ours["ms"] / merged["ms"])
    assert report["skipped_peers"] == {}
    assert report["graphs"]["rmat:4:4"]["cugraph_build_ms"]


def _wrong_bfs(real):
    def bfs(g, source=None, sources=None, **kw):
        df = real(g, source=source, sources=sources, **kw)
        d = df["distance"].to_numpy().copy()
        reached = np.flatnonzero((d > 0) & (d != UNREACHED))
        d[reached[:1]] += 1
        df["distance"] = d
        return df
    return bfs


def test_wrong_result_of_ours_fails(tmp_path, capsys, monkeypatch, no_cugraph):
    monkeypatch.setattr(onyx_rapids, "bfs", _wrong_bfs(onyx_rapids.bfs))
    rc = _run(tmp_path, "traversal", "--quick", "--graphs", "rmat:4:4",
              "--algorithms", "bfs,wcc")
    out = capsys.readouterr().out
    assert rc == 1
    df, report, md, _ = _outputs(tmp_path, "traversal")  # files still written
    ours = df[df["implementation"] == "ours"].set_index("algorithm")
    assert ours.loc["bfs", "check"] == "FAILED" and ours.loc["wcc", "check"] == "ok"
    assert "mismatches 1" in ours.loc["bfs", "check_detail"]
    assert report["ok"] is False and len(report["failures"]) == 1
    assert "bfs on rmat:4:4: ours differs from CPU oracle" in report["failures"][0]
    assert "FAILED: bfs on rmat:4:4" in out and "## FAILED" in md
    assert "| rmat:4:4 | bfs | default |" in md and "| FAILED |" in md


def test_wrong_spmm_result_fails(tmp_path, capsys, monkeypatch):
    real = onyx_rapids.feature_propagation

    def wrong(*a, **kw):
        frame, info = real(*a, **kw)
        frame["h_0"] = frame["h_0"] + 1.0
        return frame, info

    monkeypatch.setattr(onyx_rapids, "feature_propagation", wrong)
    rc = _run(tmp_path, "spmm", "--quick", "--graphs", "rmat:3:2",
              "--algorithms", "feature_propagation")
    capsys.readouterr()
    assert rc == 1
    df, report, md, _ = _outputs(tmp_path, "spmm")
    ours = df[df["implementation"] == "ours"]
    assert (ours["check"] == "FAILED").all() and len(ours) == 2  # k = 1, 2
    cs = df[df["implementation"] == "cusparse"]
    assert (cs["check"] == "FAILED").all() and not cs["best_alternative"].any()
    assert all("differs from" in f for f in report["failures"])


def test_quick_spmm_run(tmp_path, capsys):
    rc = _run(tmp_path, "spmm", "--quick", "--graphs", "rmat:3:2")
    out = capsys.readouterr().out
    assert rc == 0, out
    df, report, md, _ = _outputs(tmp_path, "spmm")
    _check_common(df, report, md, "spmm")
    # algorithms x ks x (ours, cusparse, pyg), but label_propagation k=1: one n/a row of ours
    assert len(df) == 3 * 2 * 3 - 2 and set(df["case"]) == {"k=1", "k=2"}
    assert set(df["algorithm"]) == {"feature_propagation", "personalized_pagerank",
                                    "label_propagation"}
    assert (df["unit"] == "ms/iteration").all() and set(df["k"]) == {1, 2}
    assert report["graphs"]["rmat:3:2"]["directed"] is False  # ablation.py's graph
    lp = df[df["algorithm"] == "label_propagation"]
    [na] = lp[lp["k"] == 1].itertuples()
    assert na.implementation == "ours" and na.status.startswith("n/a: label_propagation with k")
    assert na.check == "-" and pd.isna(na.ms)
    assert "| rmat:3:2 | label_propagation | k=1 | n/a |" in md
    assert set(lp.loc[lp["k"] == 2, "implementation"]) == {"ours", "cusparse", "pyg"}
    df = df[df["status"] != na.status]
    cs = df[df["implementation"] == "cusparse"]
    assert (cs["status"] == "ok").all() and (cs["check"] == "ok").all()
    assert cs["label"].str.contains("stand-in").all() and cs["best_alternative"].all()
    ours = df[df["implementation"] == "ours"]
    assert (ours["check"] == "ok").all() and ours["check_against"].str.contains("stand-in").all()
    pyg = df[df["implementation"] == "pyg"]
    assert (pyg["status"] == f"skipped: {TORCH_REASON}").all() and pyg["ms"].isna().all()
    assert report["skipped_peers"] == {"pyg": TORCH_REASON}
    assert f"peer pyg skipped: {TORCH_REASON}" in out and TORCH_REASON in md
    for _, r in cs.iterrows():
        base = ours[ours["algorithm"].eq(r["algorithm"]) & ours["k"].eq(r["k"])]["ms"].iloc[0]
        assert r["ratio_vs_ours"] == pytest.approx(r["ms"] / base)
    assert len(report["details"]) == 6 and report["details"][0]["peers"]["pyg"] == {
        "skipped": TORCH_REASON}
    assert report["settings"]["lp_alpha"] == 0.85


def test_missing_matplotlib_is_recorded(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.setattr(harness, "SPMM_KS", {True: (1,), False: (1,)})
    rc = _run(tmp_path, "spmm", "--quick", "--graphs", "rmat:3:2",
              "--algorithms", "personalized_pagerank")
    out = capsys.readouterr().out
    assert rc == 0, out
    df, report, md, _ = _outputs(tmp_path, "spmm")
    assert report["plots"] == [] and list(tmp_path.glob("*.png")) == []
    assert report["plot_note"].startswith("no plot: matplotlib not installed")
    assert "no plot: matplotlib not installed" in out and report["plot_note"] in md
    assert len(df) == 3


def test_quick_ablation_run(tmp_path, capsys):
    rc = _run(tmp_path, "ablation", "--quick", "--graphs", "rmat:3:2",
              "--algorithms", "pagerank,als")
    out = capsys.readouterr().out
    assert rc == 0, out
    df, report, md, _ = _outputs(tmp_path, "ablation")
    _check_common(df, report, md, "ablation")
    pr = df[df["algorithm"] == "pagerank"].set_index("variant")
    assert len(pr) == 8 and pr.loc["FA/NCD", "role"] == "ours"
    assert (pr.drop(index="FA/NCD")["role"] == "variant").all()
    assert (pr["check"] == "ok").all() and (pr["check_against"] == "FA/NCD").all()
    assert pr["best_alternative"].sum() == 1 and (pr["k"] == 1).all()
    als = df[df["algorithm"] == "als"]
    assert len(als) == 1 and als["status"].iloc[0] == "n/a: als runs on ratings graphs only"
    assert "best other variant" in md


def test_oracle_falls_back_to_the_certificate(tmp_path, capsys, monkeypatch, no_cugraph):
    monkeypatch.setattr(harness, "ORACLE_MAX_EDGES", 0)
    rc = _run(tmp_path, "traversal", "--quick", "--graphs", "rmat:3:2",
              "--algorithms", "wcc,k_core")
    capsys.readouterr()
    assert rc == 0
    df, report, _, _ = _outputs(tmp_path, "traversal")
    ours = df[df["implementation"] == "ours"].set_index("algorithm")
    assert ours.loc["wcc", "check"] == "ok"
    assert ours.loc["wcc", "check_against"].startswith("certificate")
    assert ours.loc["k_core", "check"].startswith("unchecked: no peer, and")
    assert report["ok"] is True
