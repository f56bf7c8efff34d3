"""The ablation benchmark script (benchmarks/ablation.py) on tiny graphs: it runs, writes its
JSON and Markdown (and the sweep plot, or says why not), runs ALS only on the ratings graph, and
fails loudly when a variant's result is wrong.  No timing assertions.

Under the CUDA simulator feature-aware kernels are slow, so every run here is restricted with
--algorithms / --families / --variants and uses graphs of a few dozen edges."""

import functools
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import onyx_rapids  # noqa: E402
from benchmarks import ablation  # noqa: E402

TINY = ["--quick", "--scale", "3", "--edge-factor", "4", "--grid-side", "3", "--users", "6",
        "--items", "4", "--ratings", "12"]
NAMES = [ablation.variant_name(v) for v in ablation.VARIANTS]


def _matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except Exception:
        return False
    return True


def _outputs(tmp_path):
    js = sorted(tmp_path.glob("ablation_*_quick.json"))
    md = sorted(tmp_path.glob("ablation_*_quick.md"))
    assert len(js) == 1 and len(md) == 1, (js, md)
    return json.loads(js[0].read_text()), md[0].read_text()


def test_quick_run_writes_json_markdown_and_sweep(tmp_path, capsys):
    rc = ablation.main(TINY + ["--families", "rmat,grid",
                               "--algorithms", "pagerank,feature_propagation",
                               "--sweep", "1,2", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    report, md = _outputs(tmp_path)

    for key in ("benchmark", "date", "timestamp", "device", "git", "argv", "settings", "graphs",
                "measurements", "table", "sweep", "plot", "failures", "ok", "elapsed_s"):
        assert key in report, key
    assert report["benchmark"] == "ablation"
    assert report["ok"] is True and report["failures"] == []
    assert report["device"]["backend"] == onyx_rapids.device.BACKEND
    s = report["settings"]
    assert (s["scale"], s["edge_factor"], s["grid_side"], s["k"], s["max_iter"], s["repeat"]) == (
        3, 4, 3, 4, 2, 1)
    assert s["sweep"] == [1, 2] and s["sweep_algorithm"] == "personalized_pagerank"
    assert s["variants"] == NAMES

    graphs = report["graphs"]
    assert set(graphs) == {"rmat", "grid"}  # ratings: no selected algorithm runs on it
    assert graphs["rmat"]["n"] == 8 and graphs["rmat"]["input_edges"] == 32
    assert graphs["grid"]["n"] == 9 and graphs["grid"]["m"] == 2 * 12  # undirected: both ways
    for gr in graphs.values():
        assert gr["directed"] is False
        for key in ("generator", "m", "max_degree", "generate_s", "build_ms"):
            assert key in gr

    table_rows = [r for r in report["measurements"] if r["section"] == "table"]
    assert {(r["family"], r["algorithm"], r["variant"]) for r in table_rows} == {
        (f, a, n) for f in ("rmat", "grid") for a in ("pagerank", "feature_propagation")
        for n in NAMES}
    for r in table_rows:
        assert "error" not in r, r
        for key in ("baseline_pool_bytes", "peak_pool_bytes", "peak_run_bytes"):
            assert key in r, (r["variant"], key)
            if onyx_rapids.device.BACKEND != "gpu":
                assert r[key] is None  # no device memory pool under the simulator
        if r["algorithm"] == "feature_propagation" and r["change_driven"]:
            assert r["skipped"].startswith("n/a")  # no change_driven option
            continue
        for key in ("first_call_ms", "times_ms", "median_ms", "ms_per_iter", "iterations",
                    "direction", "compile_ms", "kernels_compiled", "check", "agreement"):
            assert key in r, (r["variant"], key)
        assert r["iterations"] == 2 and len(r["times_ms"]) == 1
        assert r["check"]["ok"] and r["agreement"]["ok"]
        assert r["agreement"]["against"] == "FA/NCD"
    assert [(t["algorithm"], t["family"]) for t in report["table"]] == [
        ("pagerank", "rmat"), ("pagerank", "grid"), ("feature_propagation", "rmat"),
        ("feature_propagation", "grid")]
    for t in report["table"]:
        assert t["ok"] and t["nfa_ncd_ms_per_iter"] > 0
        assert set(t["speedups"]) == {h for h, _, _ in ablation.SPEEDUPS}
        if t["algorithm"] == "feature_propagation":
            assert t["speedups"]["FA/CD speedup"] == "n/a"
            assert t["speedups"]["FA/NCD speedup"] > 0
        else:
            assert all(v > 0 for v in t["speedups"].values())

    sweep = report["sweep"]
    assert sweep["algorithm"] == "personalized_pagerank" and sweep["family"] == "rmat"
    assert [p["k"] for p in sweep["points"]] == [1, 2]
    assert all(p["ok"] and p["fa_ms_per_iter"] > 0 and p["nfa_ms_per_iter"] > 0
               for p in sweep["points"])
    sweep_rows = [r for r in report["measurements"] if r["section"] == "sweep"]
    assert sorted((r["k"], r["variant"]) for r in sweep_rows) == [
        (1, "FA/NCD"), (1, "NFA/NCD"), (2, "FA/NCD"), (2, "NFA/NCD")]

    # Markdown: the Table 7.2 rows, all variants, the sweep
    for heading in ("## Graphs", "## Table 7.2", "## All variants",
                    "## Device memory allocated by one run (MiB)", "## Feature sweep"):
        assert heading in md
    assert ("| algorithm | graph | k | NFA/NCD ms/iter | FA/NCD speedup | NFA/CD speedup | "
            "FA/CD speedup | FA/CD folded over unfolded |") in md
    for family in ("rmat", "grid"):
        # Table 7.2, all variants, device memory
        assert md.count(f"| pagerank | {family} | 1 |") == 3
        assert md.count(f"| feature_propagation | {family} | 4 |") == 3
    fp_row = next(line for line in md.splitlines()
                  if line.startswith("| feature_propagation | rmat | 4 |"))
    assert fp_row.count("n/a") == 3 and fp_row.endswith("| ok |")  # NFA/CD, FA/CD, CD fold
    assert "| 1 |" in md and "| 2 |" in md
    assert "All checks passed" in md and "FAILED" not in md
    assert md.strip() in captured.out  # the Markdown is printed to stdout

    png = sorted(tmp_path.glob("ablation_sweep_*_quick.png"))
    if _matplotlib_available():
        assert len(png) == 1 and png[0].stat().st_size > 0
        assert report["plot"]["path"] == str(png[0])
    else:
        assert png == []
        assert "matplotlib" in report["plot"]["reason"]
        assert "sweep plot not drawn: matplotlib is not available" in captured.err
        assert "Plot not drawn: matplotlib is not available" in md


def test_missing_matplotlib_writes_table_only(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    rc = ablation.main(TINY + ["--families", "rmat", "--algorithms", "pagerank",
                               "--variants", "NFA/NCD", "--sweep", "1", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    report, md = _outputs(tmp_path)
    assert list(tmp_path.glob("*.png")) == []
    assert report["plot"]["path"] is None and "matplotlib" in report["plot"]["reason"]
    assert "sweep plot not drawn: matplotlib is not available" in captured.err
    assert "| 1 |" in md and "Plot not drawn: matplotlib" in md


def test_als_runs_only_on_the_ratings_graph(tmp_path, capsys):
    rc = ablation.main(TINY + ["--families", "rmat,ratings", "--algorithms", "pagerank,als",
                               "--variants", "NFA/NCD", "--sweep", "none",
                               "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    report, md = _outputs(tmp_path)
    assert set(report["graphs"]) == {"rmat", "ratings"}
    ratings = report["graphs"]["ratings"]
    assert (ratings["n"], ratings["input_edges"], ratings["m"]) == (10, 12, 24)
    assert {(r["algorithm"], r["family"]) for r in report["measurements"]} == {
        ("pagerank", "rmat"), ("als", "ratings")}
    assert [r["variant"] for r in report["measurements"] if r["algorithm"] == "als"] == [
        "FA/NCD", "NFA/NCD"]  # the reference first
    assert all(r["agreement"]["ok"] for r in report["measurements"])
    assert report["sweep"] == {} and "## Feature sweep" not in md
    assert "| als | ratings | 4 |" in md and "| als | rmat" not in md


def test_every_other_algorithm_runs_and_agrees(tmp_path, capsys):
    others = [a for a in ablation.ALGORITHMS
              if a not in ("pagerank", "feature_propagation", "als")]
    rc = ablation.main(TINY + ["--families", "rmat", "--algorithms", ",".join(others),
                               "--variants", "NFA/NCD,FA/CD/fold", "--sweep", "none",
                               "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    report, md = _outputs(tmp_path)
    assert [t["algorithm"] for t in report["table"]] == others
    for r in report["measurements"]:
        assert "error" not in r, r
        if r.get("skipped"):  # a CD variant of an algorithm without change_driven
            assert r["change_driven"] and not ablation.supports_change_driven(r["algorithm"])
            continue
        assert r["k"] == 4 and r["iterations"] == 2
        assert r["check"]["ok"] and r["agreement"]["ok"], r
        assert r["agreement"]["metric"] == ablation.AGREE[r["algorithm"]][0]
    for a in others:
        assert f"| {a} | rmat | 4 |" in md


def _shift_mass(df, column):
    col = df[column].to_numpy().copy()
    col[0] += 0.01  # PageRank still sums to 1 and is finite: only the agreement check sees it
    col[1] -= 0.01
    df[column] = col
    return df


def _bump(df, column):
    col = df[column].to_numpy().copy()
    col[0] += 1.0
    df[column] = col
    return df


def _nan(df, column):
    col = df[column].to_numpy().copy()
    col[0] = np.nan
    df[column] = col
    return df


@pytest.mark.parametrize(
    "algorithm, variant, corrupt, column, expect",
    [("pagerank", "FA/CD/fold", _shift_mass, "pagerank", "disagrees with FA/NCD"),
     ("feature_propagation", "NFA/NCD/fold", _bump, "h_0", "disagrees with FA/NCD"),
     ("pagerank", "NFA/CD", _nan, "pagerank", "result check")],
)
def test_wrong_variant_fails_loudly(tmp_path, capsys, monkeypatch, algorithm, variant, corrupt,
                                    column, expect):
    real = getattr(onyx_rapids, algorithm)
    fa, cd, fold = ablation._BY_NAME[variant.lower()]

    @functools.wraps(real)  # keeps the signature: change_driven support is read from it
    def broken(*args, **kwargs):
        df, info = real(*args, **kwargs)
        if (kwargs.get("feature_aware"), kwargs.get("change_driven", False),
                kwargs.get("fold")) == (fa, cd, fold):
            df = corrupt(df.copy(), column)
        return df, info

    monkeypatch.setattr(onyx_rapids, algorithm, broken)
    rc = ablation.main(TINY + ["--families", "rmat", "--algorithms", algorithm,
                               "--variants", variant, "--sweep", "none", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "FAILED" in captured.out and "FAILED" in captured.err
    report, md = _outputs(tmp_path)  # results are still written
    assert report["ok"] is False
    assert report["failures"] and all(variant in f for f in report["failures"])
    assert any(expect in f for f in report["failures"]), report["failures"]
    assert [r["variant"] for r in report["measurements"]] == ["FA/NCD", variant]
    ref = report["measurements"][0]
    assert ref["check"]["ok"] and ref["agreement"]["ok"]
    assert report["table"][0]["ok"] is False
    assert "FAILED" in md


def test_bipartite_ratings():
    df = ablation.bipartite_ratings(30, 7, 150, seed=3)
    assert len(df) == 150 and list(df.columns) == ["src", "dst", "rating"]
    assert df["src"].between(0, 29).all() and df["dst"].between(30, 36).all()
    assert not df.duplicated(["src", "dst"]).any()
    assert set(np.unique(df["rating"])) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert df["rating"].dtype == np.float32
    assert df.equals(ablation.bipartite_ratings(30, 7, 150, seed=3))
    assert not df.equals(ablation.bipartite_ratings(30, 7, 150, seed=4))
    assert len(ablation.bipartite_ratings(3, 2, 6)) == 6  # every pair
    with pytest.raises(ValueError):
        ablation.bipartite_ratings(3, 2, 7)


@pytest.mark.parametrize("argv", [["--algorithms", "pagerank,nope"], ["--families", "road"],
                                  ["--variants", "FA/XX"], ["--sweep-algorithm", "als"],
                                  ["--sweep", "1,x"], ["--k", "0"]])
def test_bad_options_are_rejected(argv):
    with pytest.raises(SystemExit):
        ablation.parse_args(argv)


def test_quick_defaults():
    args = ablation.parse_args(["--quick"])
    assert (args.scale, args.max_iter, args.repeat, args.sweep) == (6, 2, 1, [1, 2, 4])
    args = ablation.parse_args([])
    assert (args.scale, args.k, args.max_iter, args.repeat) == (22, 4, 10, 3)
    assert args.sweep == [1, 2, 4, 8, 16, 32, 64, 128]
    assert args.families == list(ablation.FAMILIES) and args.algorithms == list(ablation.ALGORITHMS)
