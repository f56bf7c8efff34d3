"""The foundation benchmark script (benchmarks/foundation.py) on a tiny graph: it runs, writes its
JSON and Markdown, and fails loudly when a variant's result is wrong.  No timing assertions."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import onyx_rapids  # noqa: E402
from benchmarks import foundation  # noqa: E402

QUICK = ["--quick", "--scale", "5"]
NAMES = [foundation.variant_name(v) for v in foundation.VARIANTS]


def _outputs(tmp_path):
    js = sorted(tmp_path.glob("foundation_*_quick.json"))
    md = sorted(tmp_path.glob("foundation_*_quick.md"))
    assert len(js) == 1 and len(md) == 1, (js, md)
    return json.loads(js[0].read_text()), md[0].read_text()


def test_quick_run_writes_json_and_markdown(tmp_path, capsys):
    rc = foundation.main(QUICK + ["--conv-max-iter", "4", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    report, md = _outputs(tmp_path)

    for key in ("benchmark", "date", "timestamp", "device", "git", "settings", "graph", "fixed",
                "compile", "result_frame", "convergence", "failures", "ok"):
        assert key in report, key
    assert report["ok"] is True and report["failures"] == []
    assert report["device"]["backend"] == onyx_rapids.device.BACKEND
    s = report["settings"]
    assert (s["scale"], s["edge_factor"], s["ks"], s["repeat"], s["max_iter"]) == (5, 8, [4], 1, 3)
    assert s["ncd_tol"] == 1e-12 and s["conv_max_iter"] == 4
    graph = report["graph"]
    assert graph["n"] == 32 and graph["m"] == 8 * 32  # isolated ids are vertices too
    for key in ("max_degree", "max_out_degree", "max_in_degree", "build_ms", "generate_s"):
        assert key in graph

    fixed = report["fixed"]
    assert [(r["algorithm"], r["k"], r["variant"]) for r in fixed] == (
        [("pagerank", 1, n) for n in NAMES] + [("label_propagation", 4, n) for n in NAMES])
    for r in fixed:
        assert "error" not in r, r
        for key in ("first_call_ms", "times_ms", "median_ms", "compile_ms", "ms_per_iter",
                    "iterations", "direction", "kernels_compiled", "speedup_vs_nfa_ncd"):
            assert key in r, (r["variant"], key)
        assert len(r["times_ms"]) == 1
        switching = r["algorithm"] == "pagerank" and r["change_driven"] and not r["fold"]
        assert r["direction"] == ("auto" if switching else
                                  "push" if r["change_driven"] else "pull")
        if not r["change_driven"]:
            assert r["iterations"] == 3 and r["tol"] == 1e-12
        assert r["check"]["ok"] and r["check"]["finite"]
        assert r["agreement"]["ok"] and r["agreement"]["against"] == "FA/NCD"
        assert r["agreement"]["metric"] == ("l1" if r["algorithm"] == "pagerank" else "max_abs")
        if r["algorithm"] == "pagerank":
            assert abs(r["check"]["sum"] - 1) <= 1e-3
    assert [r["speedup_vs_nfa_ncd"] for r in fixed if r["variant"] == "NFA/NCD"] == [1.0, 1.0]
    assert len(report["compile"]) == len(fixed)
    assert {(f["algorithm"], f["k"]) for f in report["result_frame"]} == {
        ("pagerank", 1), ("label_propagation", 4)}

    conv = report["convergence"]
    assert [(c["algorithm"], c["feature_aware"], c["fold"]) for c in conv] == [
        (a, fa, fold) for a in ("pagerank", "label_propagation")
        for fa in (False, True) for fold in (False, True)]
    for c in conv:
        assert not c["ncd"]["change_driven"] and c["cd"]["change_driven"]
        for run in (c["ncd"], c["cd"]):
            assert run["max_iter"] == 4 and 1 <= run["iterations"] <= 4
            assert run["check"]["ok"] and run["agreement"]["ok"]
            assert "total_ms" in run and "converged" in run

    for heading in ("## Time per iteration", "## First-call compile time",
                    "## Run to convergence"):
        assert heading in md
    for name in NAMES:
        assert md.count(f"| pagerank | 1 | {name} |") == 2  # per-iteration and compile tables
        assert md.count(f"| label_propagation | 4 | {name} |") == 2
    assert "All checks passed" in md and "FAILED" not in md
    assert md.strip() in out  # the Markdown is printed to stdout


def _corrupt_pagerank(df):
    col = df["pagerank"].to_numpy().copy()
    col[0] += 0.01  # the sum stays 1 and everything finite: only the agreement check sees it
    col[1] -= 0.01
    df["pagerank"] = col
    return df


def _corrupt_lp(df):
    a, b = df["lp_0"].to_numpy().copy(), df["lp_1"].to_numpy().copy()
    a[0] += 0.01  # rows still sum to 1
    b[0] -= 0.01
    df["lp_0"], df["lp_1"] = a, b
    return df


def _nan_pagerank(df):
    col = df["pagerank"].to_numpy().copy()
    col[0] = np.nan
    df["pagerank"] = col
    return df


@pytest.mark.parametrize(
    "algorithm, corrupt, expect",
    [("pagerank", _corrupt_pagerank, "disagrees with FA/NCD"),
     ("label_propagation", _corrupt_lp, "disagrees with FA/NCD"),
     ("pagerank", _nan_pagerank, "result check")],
)
def test_wrong_variant_fails_loudly(tmp_path, capsys, monkeypatch, algorithm, corrupt, expect):
    real = getattr(onyx_rapids, algorithm)

    def broken(*args, **kwargs):
        df, info = real(*args, **kwargs)
        if kwargs.get("change_driven") and kwargs.get("fold"):  # FA/CD/fold only
            df = corrupt(df.copy())
        return df, info

    monkeypatch.setattr(onyx_rapids, algorithm, broken)
    rc = foundation.main(QUICK + ["--algorithms", algorithm, "--variants", "FA/CD/fold",
                                  "--skip-convergence", "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "FAILED" in captured.out and "FAILED" in captured.err
    report, md = _outputs(tmp_path)  # results are still written
    assert report["ok"] is False
    assert report["failures"] and all("FA/CD/fold" in f for f in report["failures"])
    assert any(expect in f for f in report["failures"]), report["failures"]
    bad = [r for r in report["fixed"] if r["variant"] == "FA/CD/fold"]
    assert len(bad) == 1
    assert [r["variant"] for r in report["fixed"]] == ["FA/NCD", "FA/CD/fold"]  # + reference
    ref = next(r for r in report["fixed"] if r["variant"] == "FA/NCD")
    assert ref["check"]["ok"] and ref["agreement"]["ok"]
    assert "FAILED" in md


def test_unknown_variant_is_rejected():
    with pytest.raises(SystemExit):
        foundation.parse_args(["--variants", "FA/XX"])
