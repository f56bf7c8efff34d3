"""The traversal benchmark script (benchmarks/traversal.py) on tiny graphs: it runs, writes its
JSON and Markdown, reads "n/a" where the installed function lacks a variant's keywords (and runs
the variant where it has them), keeps to its time budgets, fills cuGraph's columns (here from a
stand-in ``cugraph`` module built on the test oracles), fails loudly on a wrong result, and
refuses bad arguments.  No timing assertions.

The onyx_rapids functions are replaced by wrappers with fixed signatures where a test depends on
which keywords exist, so that these tests keep their meaning when the filter / fused / sssp APIs
land."""

import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import oracles  # noqa: E402
import oracles_traversal as oracle  # noqa: E402
from _fakes import fake_cugraph_module  # noqa: E402
from graphs import csr_edges  # noqa: E402

import onyx_rapids  # noqa: E402
from benchmarks import traversal  # noqa: E402
from onyx_rapids import device, io  # noqa: E402

TINY = ["--quick", "--scale", "4", "--edge-factor", "4", "--grid-side", "4", "--repeat", "1"]
REAL_BFS = onyx_rapids.bfs
UNREACHED = 2**31 - 1


def _outputs(tmp_path):
    js = sorted(tmp_path.glob("traversal_*_quick.json"))
    md = sorted(tmp_path.glob("traversal_*_quick.md"))
    assert len(js) == 1 and len(md) == 1, (js, md)
    return json.loads(js[0].read_text()), md[0].read_text()


def _rows(report, algorithm=None, family=None):
    return [r for r in report["measurements"]
            if (algorithm is None or r["algorithm"] == algorithm)
            and (family is None or r["family"] == family)]


def _row(report, algorithm, variant, family="rmat"):
    found = [r for r in _rows(report, algorithm, family) if r["variant"] == variant]
    assert len(found) == 1, (algorithm, variant, family, found)
    return found[0]


# ------------------------------------------------------------------------------ stand-ins


def narrow_bfs(g, source=None, sources=None, *, direction="auto", pull_fraction=0.3,
               return_info=False):
    """bfs as it is before the filter / fused options exist."""
    return REAL_BFS(g, source=source, sources=sources, direction=direction,
                    pull_fraction=pull_fraction, return_info=return_info)


def _wide(calls):
    def wide_bfs(g, source=None, sources=None, *, direction="auto", pull_fraction=0.3,
                 filter="jit", threshold=64, fused=False, return_info=False):
        """bfs with the filter / fused options; fused runs direction 'auto' only."""
        calls.append(dict(filter=filter, fused=fused, direction=direction))
        if fused and direction != "auto":
            raise ValueError("fused=True runs direction='auto' only")
        return REAL_BFS(g, source=source, sources=sources, direction=direction,
                        pull_fraction=pull_fraction, return_info=return_info)
    return wide_bfs


def _internal(g, ids):
    return device.to_host(g.to_internal(np.asarray(ids, dtype=np.int64))).astype(np.int64)


def fake_sssp(g, source=None, sources=None, *, delta=None, direction="auto", pull_fraction=0.3,
              return_info=False):
    """sssp from the Dijkstra oracle (float32 distances, inf when unreached)."""
    src, dst = csr_edges(g)
    w = device.to_host(g.edge_weights[:, 0]).astype(np.float64)

    def one(s):
        return oracle.sssp(g.n, src, dst, w, int(_internal(g, [s])[0])).astype(np.float32)

    if sources is None:
        cols = {"distance": one(source), "predecessor": np.full(g.n, -1, dtype=np.int64)}
    else:
        cols = {"distance_*": np.stack([one(s) for s in np.asarray(sources)], axis=1)}
    df = io.to_frame(g, cols)
    info = {"iterations": 1, "converged": True, "direction": direction}
    return (df, info) if return_info else df


def _slow_wcc(delay):
    def wcc(g, *, method="hook", direction="auto", pull_fraction=0.3, return_info=False):
        time.sleep(delay)
        src, dst = csr_edges(g)
        labels = oracle.weakly_connected_components(g.n, src, dst, device.to_host(g.vertices))
        df = io.to_frame(g, {"labels": labels})
        return (df, {"iterations": 1, "converged": True}) if return_info else df
    return wcc


def _slow_core(delay):
    def core_number(g, *, return_info=False):
        time.sleep(delay)
        src, dst = csr_edges(g)
        df = io.to_frame(g, {"core_number": oracle.core_number(g.n, src, dst).astype(np.int32)})
        return (df, {"iterations": 1, "converged": True}) if return_info else df
    return core_number


def fake_cugraph(wrong_bfs=False):
    """A stand-in for the cugraph module on pandas frames, computing with the test oracles.
    Results come in shuffled row order and wcc labels are not the smallest ids, as cuGraph's."""
    mod = fake_cugraph_module()
    mod.calls = []

    def frame(G, **cols):
        df = pd.DataFrame({"vertex": G.ids, **cols})
        return df.sample(frac=1.0, random_state=0).reset_index(drop=True)

    def bfs(G, start=None):
        mod.calls.append(("bfs", start))
        d = oracle.bfs(len(G.ids), G.s, G.d, int(np.searchsorted(G.ids, start)))
        d = d.astype(np.int32)
        if wrong_bfs:
            reached = np.flatnonzero((d > 0) & (d != UNREACHED))
            d[reached[:1]] += 1
        return frame(G, distance=d, predecessor=np.full(len(G.ids), -1))

    def sssp(G, source=None):
        mod.calls.append(("sssp", source))
        d = oracle.sssp(len(G.ids), G.s, G.d, G.w, int(np.searchsorted(G.ids, source)))
        d = np.where(np.isfinite(d), d, np.finfo(np.float32).max).astype(np.float32)
        return frame(G, distance=d, predecessor=np.full(len(G.ids), -1))

    def weakly_connected_components(G):
        assert not G.directed, "cuGraph's wcc needs an undirected graph"
        labels = oracle.weakly_connected_components(len(G.ids), G.s, G.d, G.ids)
        return frame(G, labels=labels * 7 + 3)[["labels", "vertex"]]

    def core_number(G):
        assert not G.directed, "cuGraph's core_number needs an undirected graph"
        return frame(G, core_number=oracle.core_number(len(G.ids), G.s, G.d).astype(np.int32))

    def pagerank(G, alpha=0.85, tol=1e-5, max_iter=100):
        assert G.store_transposed
        return frame(G, pagerank=oracles.pagerank(len(G.ids), G.s, G.d, alpha=alpha,
                                                  tol=1e-10).astype(np.float32))

    mod.bfs, mod.sssp, mod.pagerank = bfs, sssp, pagerank
    mod.weakly_connected_components, mod.core_number = weakly_connected_components, core_number
    return mod


@pytest.fixture
def no_cugraph(monkeypatch):
    monkeypatch.setitem(sys.modules, "cugraph", None)  # import cugraph -> ImportError


# ------------------------------------------------------------------------------ tests


def test_quick_run_files_and_na_cells(tmp_path, capsys, monkeypatch, no_cugraph):
    monkeypatch.setattr(onyx_rapids, "bfs", narrow_bfs)
    monkeypatch.delattr(onyx_rapids, "sssp", raising=False)
    rc = traversal.main(TINY + [
        "--families", "rmat,road", "--algorithms", "bfs,sssp,core_number",
        "--variants", "default/auto,default/push,jit/unfused/auto,jit/fused/auto,auto,default",
        "--multi-source", "bfs,sssp", "--ks", "2", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    report, md = _outputs(tmp_path)

    for key in ("benchmark", "date", "timestamp", "device", "git", "argv", "cugraph",
                "settings", "graphs", "measurements", "cugraph_rows", "multi_source",
                "failures", "ok", "elapsed_s"):
        assert key in report, key
    assert report["benchmark"] == "traversal" and report["ok"] is True
    assert report["failures"] == [] and report["cugraph"].startswith("not installed")
    s = report["settings"]
    assert (s["scale"], s["edge_factor"], s["grid_side"], s["repeat"], s["ks"]) == (
        4, 4, 4, 1, [2])
    assert set(s["variant_table"]) == set(traversal.ALGORITHMS)

    rmat, road = report["graphs"]["rmat"], report["graphs"]["road"]
    assert rmat["directed"] is True and road["directed"] is False
    assert rmat["raw_edges"] == 4 * 16
    assert rmat["input_edges"] == rmat["m"] == (
        rmat["raw_edges"] - rmat["self_loops_dropped"] - rmat["duplicates_dropped"])
    assert road["n"] == 16 and road["input_edges"] == 24 and road["m"] == 48
    assert road["diameter_hops"] == 6
    for gr in (rmat, road):
        for key in ("generator", "build_ms", "generate_s", "source_pool", "max_out_degree",
                    "undirected_view_ms", "cugraph_build_ms"):
            assert key in gr, key
    assert rmat["undirected_view_ms"] is not None  # core_number ran on it

    for family in ("rmat", "road"):
        for variant in ("default/auto", "default/push"):
            r = _row(report, "bfs", variant, family)
            assert r["status"] == "ok", r
            assert r["calls"] == 1 and len(r["times_ms"]) == 1 and r["median_ms"] > 0
            assert r["check"]["ok"] and r["check"]["kind"] == "certificate"
            assert r["check"]["edges_violated"] == 0 and r["check"]["orphans"] == 0
            assert r["agreement"]["ok"] and r["agreement"]["against"] == "default/auto"
            assert r["iterations"] and r["median_iterations"] >= 1
            assert len(r["sources"]) == 2 and r["cugraph_ms"] is None
            assert "cugraph_agreement" not in r
        assert _row(report, "bfs", "default/push", family)["directions"] == ["push"]
        for variant in ("jit/unfused/auto", "jit/fused/auto"):
            r = _row(report, "bfs", variant, family)
            assert r["status"] == "n/a (not available: bfs(filter=, fused=))", r
            assert "times_ms" not in r
        r = _row(report, "sssp", "auto", family)
        assert r["status"] == "n/a (not available: onyx_rapids.sssp)"
        r = _row(report, "core_number", "default", family)
        assert r["status"] == "ok" and r["check"]["ok"], r
    # variants not selected do not appear; pagerank and wcc were not selected
    assert {r["variant"] for r in _rows(report, "bfs")} == {
        "default/auto", "default/push", "jit/unfused/auto", "jit/fused/auto"}
    assert not _rows(report, "pagerank") and not _rows(report, "wcc")
    assert all(c["status"].startswith("not installed") for c in report["cugraph_rows"])

    multi = {(m["algorithm"], m["k"]): m for m in report["multi_source"]}
    assert set(multi) == {("bfs", 2), ("sssp", 2)}
    m = multi[("bfs", 2)]
    assert m["status"] == "ok" and m["rounds"] == 1 and m["family"] == "rmat"
    assert m["column_mismatches"] == [0] and all(c["ok"] for c in m["single_certificates"])
    assert m["median_at_once_ms"] > 0 and m["median_separate_ms"] > 0
    assert m["separate_over_at_once"] > 0
    assert [len(x) for x in m["sources"]] == [2, 2]
    assert m["cugraph_status"].startswith("not installed")
    assert multi[("sssp", 2)]["status"] == "n/a (not available: onyx_rapids.sssp)"

    for heading in ("## Graphs", "## Algorithms", "## Multi-source (rmat graph)"):
        assert heading in md
    assert ("| algorithm | graph | variant | median ms | calls | iterations | cuGraph ms "
            "| speedup vs cuGraph | check |") in md
    assert ("| algorithm | k | ours k-at-once ms | ours k-separate ms | separate / at-once "
            "| cuGraph k-separate ms | cuGraph separate / ours at-once | check |") in md
    line = next(x for x in md.splitlines() if x.startswith("| bfs | rmat | jit/unfused/auto |"))
    assert "n/a (not available: bfs(filter=, fused=))" in line
    line = next(x for x in md.splitlines() if x.startswith("| bfs | road | default/push |"))
    assert line.endswith("| not installed | not installed | ok |")
    assert "| bfs | 2 |" in md and "| sssp | 2 | n/a (not available" in md
    assert "cuGraph rows" not in md  # that table only when cuGraph ran
    assert "All checks passed" in md and "FAILED" not in md
    assert md.strip() in captured.out  # the Markdown is printed to stdout


def test_variants_are_picked_up_when_the_keywords_exist(tmp_path, capsys, monkeypatch,
                                                        no_cugraph):
    calls = []
    monkeypatch.setattr(onyx_rapids, "bfs", _wide(calls))
    rc = traversal.main(TINY + [
        "--families", "rmat", "--algorithms", "bfs", "--multi-source", "none",
        "--variants", "jit/unfused/auto,jit/fused/auto,ballot/unfused/push,jit/fused/pull",
        "--out", str(tmp_path)])
    assert rc == 0, capsys.readouterr().out
    report, md = _outputs(tmp_path)
    for variant in ("jit/unfused/auto", "jit/fused/auto", "ballot/unfused/push"):
        r = _row(report, "bfs", variant)
        assert r["status"] == "ok" and r["check"]["ok"] and r["agreement"]["ok"], r
    r = _row(report, "bfs", "jit/fused/pull")
    assert r["status"].startswith("n/a (rejected: ValueError: fused=True runs"), r
    assert {"filter": "ballot", "fused": False, "direction": "push"} in calls
    assert {"filter": "jit", "fused": True, "direction": "auto"} in calls
    # warm-up and one timed call per variant that ran, one refused call
    assert len(calls) == 3 * 2 + 1
    assert report["ok"] and "n/a (rejected: ValueError" in md


def test_cugraph_columns_with_a_stand_in(tmp_path, capsys, monkeypatch):
    fake = fake_cugraph()
    monkeypatch.setitem(sys.modules, "cugraph", fake)
    monkeypatch.setattr(onyx_rapids, "sssp", fake_sssp, raising=False)
    rc = traversal.main(TINY + [
        "--families", "rmat", "--variants", "default/auto,auto,default,NCD/pull",
        "--multi-source", "bfs,sssp", "--ks", "2", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    report, md = _outputs(tmp_path)
    assert report["cugraph"] == "cugraph stand-in"
    kinds = {c["algorithm"]: c["graph_kind"] for c in report["cugraph_rows"]}
    assert kinds == {"bfs": "directed", "sssp": "directed/weighted", "wcc": "undirected",
                     "core_number": "undirected", "pagerank": "directed/transposed"}
    for c in report["cugraph_rows"]:
        assert c["status"] == "ok" and c["check"]["ok"], c
        assert c["calls"] == 1 and c["median_ms"] > 0 and c["first_call_ms"] > 0
    assert set(report["graphs"]["rmat"]["cugraph_build_ms"]) == set(kinds.values())
    for algorithm, variant in (("bfs", "default/auto"), ("sssp", "auto"), ("wcc", "default/auto"),
                               ("core_number", "default"), ("pagerank", "NCD/pull")):
        r = _row(report, algorithm, variant)
        assert r["status"] == "ok" and r["check"]["ok"], r
        assert r["cugraph_agreement"]["ok"] and r["cugraph_agreement"]["against"] == "cuGraph"
        assert r["cugraph_ms"] > 0 and r["speedup_vs_cugraph"] > 0
        line = next(x for x in md.splitlines()
                    if x.startswith(f"| {algorithm} | rmat | {variant} |"))
        assert line.endswith(f"{r['speedup_vs_cugraph']:.2f}x | ok |"), line
    assert _row(report, "wcc", "default/auto")["cugraph_agreement"]["metric"] == "same partition"
    # the same sources for ours and cuGraph's
    bfs = _row(report, "bfs", "default/auto")
    assert [s for name, s in fake.calls if name == "bfs"][:2] == bfs["sources"]
    for m in report["multi_source"]:
        assert m["status"] == "ok" and m["cugraph_status"] == "ok", m
        assert m["column_mismatches"] == [0] and m["cugraph_column_mismatches"] == [0]
        assert m["median_cugraph_separate_ms"] > 0 and m["cugraph_separate_over_at_once"] > 0
    assert "cuGraph rows" in md and "| bfs | rmat | directed |" in md
    assert "All checks passed" in md


def test_wrong_cugraph_result_fails_loudly(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "cugraph", fake_cugraph(wrong_bfs=True))
    monkeypatch.setattr(onyx_rapids, "bfs", narrow_bfs)
    rc = traversal.main(TINY + ["--families", "rmat", "--algorithms", "bfs",
                                "--variants", "default/auto", "--multi-source", "bfs",
                                "--ks", "2", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "FAILED" in captured.out and "FAILED" in captured.err
    report, md = _outputs(tmp_path)  # results are still written
    assert report["ok"] is False
    assert any("cuGraph: certificate failed" in f for f in report["failures"])
    assert any("disagrees with cuGraph" in f for f in report["failures"])
    assert any("differ from cuGraph's runs" in f for f in report["failures"])
    r = _row(report, "bfs", "default/auto")
    assert r["check"]["ok"] and not r["cugraph_agreement"]["ok"]
    assert "FAILED: vs cuGraph" in md and "FAILED: certificate" in md


def test_wrong_variant_fails_loudly(tmp_path, capsys, monkeypatch, no_cugraph):
    def broken(g, source=None, sources=None, *, direction="auto", pull_fraction=0.3,
               return_info=False):
        df, info = REAL_BFS(g, source=source, sources=sources, direction=direction,
                            return_info=True)
        if direction == "push":  # one reached vertex one hop too far
            d = df["distance"].to_numpy().copy()
            d[np.flatnonzero((d > 0) & (d != UNREACHED))[:1]] += 1
            df["distance"] = d
        return (df, info) if return_info else df

    monkeypatch.setattr(onyx_rapids, "bfs", broken)
    rc = traversal.main(TINY + ["--families", "rmat", "--algorithms", "bfs",
                                "--variants", "default/auto,default/push",
                                "--multi-source", "none", "--out", str(tmp_path)])
    assert rc == 1
    report, md = _outputs(tmp_path)
    good, bad = _row(report, "bfs", "default/auto"), _row(report, "bfs", "default/push")
    assert good["check"]["ok"] and good["agreement"]["ok"]
    assert not bad["check"]["ok"] and not bad["agreement"]["ok"]
    assert len(bad["timed_check_failures"]) == 1
    assert all("default/push" in f for f in report["failures"])
    line = next(x for x in md.splitlines() if x.startswith("| bfs | rmat | default/push |"))
    assert "FAILED: certificate, 1 timed call(s), vs default/auto" in line


def test_budget_guard(tmp_path, capsys, monkeypatch, no_cugraph):
    monkeypatch.setattr(onyx_rapids, "weakly_connected_components", _slow_wcc(0.5))
    monkeypatch.setattr(onyx_rapids, "core_number", _slow_core(5.0))
    t = time.perf_counter()
    rc = traversal.main(TINY + ["--families", "rmat", "--algorithms", "wcc,core_number",
                                "--variants", "default/auto,default/push,default",
                                "--multi-source", "none", "--repeat", "3", "--budget", "0.3",
                                "--max-call-seconds", "1.5", "--out", str(tmp_path)])
    assert time.perf_counter() - t < 4.5  # the 5 s core_number call was cut at 1.5 s
    assert rc == 0, capsys.readouterr().out  # skipped cells are no failures
    report, md = _outputs(tmp_path)
    first, second = _row(report, "wcc", "default/auto"), _row(report, "wcc", "default/push")
    # the warm-up ran (0.5 s), no timed call fitted the 0.3 s section, the next cell skipped
    assert first["status"] == "skipped: budget (warm-up only)" and first["budget_cut"]
    assert first["calls"] == 0 and first["check"]["ok"]
    assert second["status"] == "skipped: budget (0.3 s)"
    core = _row(report, "core_number", "default")
    assert core["status"] == "skipped: call > 1.5 s (warm-up)"
    assert "| wcc | rmat | default/push | skipped: budget (0.3 s) |" in md
    assert "| core_number | rmat | default | skipped: call > 1.5 s (warm-up) |" in md
    assert "Budget: 3 cell(s) skipped or cut short" in md


def test_timed_calls_stop_at_the_section_budget(tmp_path, capsys, monkeypatch, no_cugraph):
    monkeypatch.setattr(onyx_rapids, "weakly_connected_components", _slow_wcc(0.25))
    rc = traversal.main(TINY + ["--families", "rmat", "--algorithms", "wcc",
                                "--variants", "default/auto", "--multi-source", "none",
                                "--repeat", "5", "--budget", "0.9", "--out", str(tmp_path)])
    assert rc == 0, capsys.readouterr().out
    report, md = _outputs(tmp_path)
    r = _row(report, "wcc", "default/auto")
    assert r["budget_cut"] and 1 <= r["calls"] < 5 and r["status"] == "ok", r
    assert f"| {r['calls']}/5 |" in md


def test_total_budget_skips_everything_left(tmp_path, capsys, monkeypatch, no_cugraph):
    rc = traversal.main(TINY + ["--families", "rmat,road", "--algorithms", "bfs",
                                "--variants", "default/auto", "--multi-source", "bfs",
                                "--ks", "2", "--total-budget", "0.000001",
                                "--out", str(tmp_path)])
    assert rc == 0, capsys.readouterr().out
    report, md = _outputs(tmp_path)
    assert report["graphs"] == {}  # nothing was built
    statuses = [r["status"] for r in report["measurements"] + report["multi_source"]]
    assert len(statuses) == 3
    assert all(s.startswith("skipped: total budget") for s in statuses)
    assert md.count("skipped: total budget") == 3


@pytest.mark.parametrize("argv", [
    ["--families", "rmat,moon"],
    ["--algorithms", "bfs,dfs"],
    ["--variants", "jit/warp/auto"],
    ["--ks", "8,x"],
    ["--ks", "0"],
    ["--repeat", "0"],
    ["--multi-repeat", "0"],
    ["--grid-side", "0"],
    ["--scale", "40"],
    ["--budget", "-1"],
    ["--max-call-seconds", "-2"],
    ["--pagerank-tol", "0"],
    ["--algorithms", "none", "--multi-source", "none"],
    ["--multi-source", "wcc"],
])
def test_bad_arguments_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as e:
        traversal.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


def test_argument_defaults_and_aliases():
    args = traversal.parse_args([])
    assert args.families == ["rmat", "road"] and args.algorithms == list(traversal.ALGORITHMS)
    assert (args.scale, args.edge_factor, args.grid_side, args.ks) == (22, 16, 2048, [8, 32, 128])
    assert args.multi_source == ["bfs", "sssp"] and args.variants == list(
        traversal.ALL_VARIANT_NAMES)
    assert (args.budget, args.total_budget, args.max_call_seconds) == (100, 480, 30)
    args = traversal.parse_args(["--algorithms", "weakly_connected_components,core",
                                 "--quick", "--repeat", "2"])
    assert args.algorithms == ["wcc", "core_number"] and args.repeat == 2 and args.scale == 5
    args = traversal.parse_args(["--algorithms", "none", "--ks", "4"])
    assert args.algorithms == [] and args.ks == [4]


def test_variant_table():
    names = {a: [v["name"] for v in vs] for a, vs in traversal.VARIANTS.items()}
    assert names["wcc"] == ["hook"] + names["bfs"] + ["jump16/auto"] and len(names["bfs"]) == 15
    assert traversal.VARIANTS["wcc"][0]["options"] == {"method": "hook"}
    assert all(v["options"]["method"] == "propagate" for v in traversal.VARIANTS["wcc"][1:])
    assert names["bfs"][:5] == ["default/auto", "jit/unfused/auto", "jit/fused/auto",
                                "ballot/unfused/auto", "online/unfused/auto"]
    for f in ("jit", "ballot", "online"):
        for d in ("auto", "push", "pull"):
            v = next(v for v in traversal.VARIANTS["bfs"] if v["name"] == f"{f}/unfused/{d}")
            assert v["options"] == {"filter": f, "fused": False, "direction": d}
    assert names["sssp"] == ["auto", "push", "pull", "unfused/auto"]
    assert names["pagerank"] == ["NCD/pull", "NCD/pull/unfused", "CD/push", "CD/pull", "CD/auto"]
    assert traversal.VARIANTS["pagerank"][1]["options"]["fused"] is False
    assert traversal.VARIANTS["pagerank"][4]["requires"] == ("pull_fraction",)
    assert names["core_number"] == ["default", "unfused"]


def test_reference_comparison_only_on_the_reference_graph():
    row = {"family": "rmat", "algorithm": "bfs", "variant": "default/auto", "median_ms": 5.05,
           "status": "ok", "check": {"ok": True}, "agreement": {"ok": True}}
    slow = dict(row, variant="default/push", median_ms=20.2)
    bad = dict(row, variant="default/pull", median_ms=1.0, check={"ok": False})
    report = {"graphs": {"rmat": {"scale": 22, "edge_factor": 16}},
              "measurements": [slow, row, bad]}
    rows = {r["algorithm"]: r for r in traversal.reference_rows(report)}
    assert set(rows) == set(traversal.CUGRAPH_REFERENCE["ms"])
    assert rows["bfs"]["ours_variant"] == "default/auto"  # fastest of those that passed
    assert rows["bfs"]["reference_over_ours"] == pytest.approx(10.1 / 5.05)
    assert rows["sssp"]["ours_ms"] is None
    report["graphs"]["rmat"]["scale"] = 21
    assert traversal.reference_rows(report) == []
