"""benchmarks/ablation.py --combine (one report from the JSON files of split runs) and the device
memory of one run recorded per variant.

Three tiny quick runs are made once for the module (as in test_bench_ablation.py: restricted
with --families / --algorithms / --variants so that the simulator takes about a second); the
combine tests read them, and copies of them edited by hand for the conflicts."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import onyx_rapids  # noqa: E402
from benchmarks import ablation  # noqa: E402

TINY = ["--quick", "--scale", "3", "--edge-factor", "4", "--grid-side", "3", "--users", "6",
        "--items", "4", "--ratings", "12"]
MEMORY_KEYS = ("baseline_pool_bytes", "peak_pool_bytes", "peak_run_bytes")
MEMORY_HEADING = "## Device memory allocated by one run (MiB)"
RUNS = {  # tag: options of a split run
    "a": ["--families", "rmat", "--algorithms", "pagerank", "--variants", "NFA/NCD,FA/NCD/fold",
          "--sweep", "1"],
    "b": ["--families", "grid", "--algorithms", "feature_propagation", "--variants", "NFA/NCD",
          "--sweep", "none"],
    # a re-run of part of "a": its rows must replace a's
    "c": ["--families", "rmat", "--algorithms", "pagerank", "--variants", "NFA/NCD",
          "--sweep", "none"],
}


def _key(r):
    return (r["section"], r["family"], r["algorithm"], r["k"], r["variant"])


def _one(folder: Path, tag: str):
    paths = sorted(folder.glob(f"ablation_*_{tag}_quick.json"))
    assert len(paths) == 1, paths
    md = paths[0].with_suffix(".md")
    return paths[0], json.loads(paths[0].read_text()), md.read_text()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{tag: (json path, report)} of the three split runs."""
    folder = tmp_path_factory.mktemp("runs")
    out = {}
    for tag, options in RUNS.items():
        assert ablation.main(TINY + options + ["--tag", tag, "--out", str(folder)]) == 0
        path, report, _ = _one(folder, tag)
        out[tag] = (path, report)
    return out


def _edited(runs, tmp_path, tag, name, edit):
    """A copy of run ``tag``'s JSON under ``tmp_path/name``, changed by ``edit(report)``."""
    report = json.loads(runs[tag][0].read_text())
    edit(report)
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return path


def _combine_error(capsys, argv) -> str:
    with pytest.raises(SystemExit) as e:
        ablation.main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


# ------------------------------------------------------------------------------ --combine


def test_combine_merges_split_runs(runs, tmp_path, capsys):
    (pa, a), (pb, b) = runs["a"], runs["b"]
    rc = ablation.main(["--combine", str(pa), str(pb), "--out", str(tmp_path), "--tag", "ab"])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    path, report, md = _one(tmp_path, "ab")
    assert path.name == (f"ablation_{ablation._slug(a['device']['device'])}_{a['date']}"
                         "_ab_quick.json")

    assert report["benchmark"] == "ablation" and report["ok"] is True
    assert report["failures"] == []
    assert report["device"] == a["device"] and report["date"] == max(a["date"], b["date"])
    merged = report["measurements"]
    assert len(merged) == len(a["measurements"]) + len(b["measurements"])
    assert {_key(r) for r in merged} == ({_key(r) for r in a["measurements"]}
                                         | {_key(r) for r in b["measurements"]})
    for r in merged:  # every row says where it came from, and is that file's row
        source = {str(pa): a, str(pb): b}[r["source"]]
        assert {k: v for k, v in r.items() if k != "source"} in source["measurements"]
    assert [(t["algorithm"], t["family"]) for t in report["table"]] == [
        ("pagerank", "rmat"), ("feature_propagation", "grid")]
    assert report["table"] == ablation.table_rows(report)
    assert report["graphs"] == {"rmat": a["graphs"]["rmat"], "grid": b["graphs"]["grid"]}
    assert report["sweep"] == a["sweep"] and [p["k"] for p in report["sweep"]["points"]] == [1]

    s = report["settings"]
    assert [src["file"] for src in s["sources"]] == [str(pa), str(pb)]
    for src, rep in zip(s["sources"], (a, b)):
        assert src["settings"] == rep["settings"] and src["git"] == rep["git"]
        assert src["timestamp"] == rep["timestamp"]
    assert s["families"] == ["rmat", "grid"]
    assert s["algorithms"] == ["pagerank", "feature_propagation"]
    assert s["tag"] == "ab" and s["sweep"] == [1] and s["differing"] == {}
    assert (s["k"], s["max_iter"], s["repeat"], s["quick"]) == (4, 2, 1, True)

    assert "Combined from 2 result files" in md and pa.name in md and pb.name in md
    assert md.count("| pagerank | rmat | 1 |") == 3  # Table 7.2, all variants, memory
    assert md.count("| feature_propagation | grid | 4 |") == 3
    assert MEMORY_HEADING in md and "## Feature sweep" in md
    assert "All checks passed" in md and md.strip() in captured.out
    if report["sweep"]["points"]:
        png = sorted(tmp_path.glob("ablation_sweep_*_ab_quick.png"))
        assert len(png) == 1 if report["plot"].get("path") else png == []
        assert report["plot"].get("path") or "matplotlib" in report["plot"]["reason"]


def test_combine_later_file_wins(runs, tmp_path, capsys):
    (pa, a), (pb, b), (pc, c) = runs["a"], runs["b"], runs["c"]
    rc = ablation.main(["--combine", str(pa), str(pb), str(pc), "--out", str(tmp_path),
                        "--tag", "abc"])
    captured = capsys.readouterr()
    assert rc == 0, captured.out
    _, report, _ = _one(tmp_path, "abc")
    twice = {_key(r) for r in a["measurements"]} & {_key(r) for r in c["measurements"]}
    assert twice == {("table", "rmat", "pagerank", 1, "FA/NCD"),
                     ("table", "rmat", "pagerank", 1, "NFA/NCD")}
    merged = {_key(r): r for r in report["measurements"]}
    assert len(merged) == len(report["measurements"])  # no key twice
    assert len(merged) == (len(a["measurements"]) + len(b["measurements"])
                           + len(c["measurements"]) - len(twice))
    for key in twice:
        assert merged[key]["source"] == str(pc)
        assert {k: v for k, v in merged[key].items() if k != "source"} in c["measurements"]
    assert merged[("table", "rmat", "pagerank", 1, "FA/NCD/fold")]["source"] == str(pa)
    for key in twice:  # the log says which file replaced which
        assert (f"{' '.join(map(str, key))}: the measurement of {pc} replaces that of {pa}"
                in captured.err)
    assert "speedups among them compare separate runs" in captured.err
    assert [src["file"] for src in report["settings"]["sources"]] == [str(pa), str(pb), str(pc)]
    # the sweep comes from the one file that has one
    assert report["sweep"] == a["sweep"]

    # the other order: a's rows win
    rc = ablation.main(["--combine", str(pc), str(pa), "--out", str(tmp_path), "--tag", "ca"])
    capsys.readouterr()
    assert rc == 0
    _, report, _ = _one(tmp_path, "ca")
    assert all(r["source"] == str(pa) for r in report["measurements"])


def test_combine_failures_are_prefixed_and_exit_1(runs, tmp_path, capsys):
    pa = runs["a"][0]
    broken = _edited(runs, tmp_path, "b", "broken.json",
                     lambda r: r.update(failures=["feature_propagation k=4 on grid NFA/NCD: "
                                                  "raised ValueError: boom"], ok=False))
    rc = ablation.main(["--combine", str(pa), str(broken), "--out", str(tmp_path),
                        "--tag", "failed"])
    captured = capsys.readouterr()
    assert rc == 1
    _, report, md = _one(tmp_path, "failed")
    assert report["ok"] is False
    assert report["failures"] == [
        "broken.json: feature_propagation k=4 on grid NFA/NCD: raised ValueError: boom"]
    assert "FAILED: broken.json: feature_propagation" in captured.out
    assert "**FAILED checks:**" in md


def test_combine_settings_that_differ_are_listed(runs, tmp_path, capsys):
    pa = runs["a"][0]

    def edit(r):
        r["settings"].update(repeat=3)
        r["device"].update(numba="0.0.test")  # same device, a library updated in between

    other = _edited(runs, tmp_path, "b", "repeat3.json", edit)
    assert ablation.main(["--combine", str(pa), str(other), "--out", str(tmp_path),
                          "--tag", "mixed"]) == 0
    err = capsys.readouterr().err
    assert f"device facts differ between {pa} and {other}: numba" in err
    _, report, md = _one(tmp_path, "mixed")
    assert report["device"] == runs["a"][1]["device"]
    assert report["settings"]["differing"] == {"repeat": [1, 3]}
    assert report["settings"]["repeat"] is None
    assert "median of 1 / 3 (differs between the source files) synchronized" in md


def test_combine_unites_a_split_sweep(runs, tmp_path, capsys):
    pa = runs["a"][0]

    def to_k2(r):  # the same sweep continued at k = 2 in another run
        for row in r["measurements"]:
            row["k"] = 2 if row["section"] == "sweep" else row["k"]
        r["measurements"] = [row for row in r["measurements"] if row["section"] == "sweep"]
        r["sweep"]["ks"] = [2]
        r["sweep"]["points"] = [{**pt, "k": 2} for pt in r["sweep"]["points"]]

    more = _edited(runs, tmp_path, "a", "k2.json", to_k2)
    assert ablation.main(["--combine", str(more), str(pa), "--out", str(tmp_path),
                          "--tag", "sweep"]) == 0
    capsys.readouterr()
    _, report, md = _one(tmp_path, "sweep")
    assert report["sweep"]["ks"] == [1, 2] and report["settings"]["sweep"] == [1, 2]
    assert [p["k"] for p in report["sweep"]["points"]] == [1, 2]
    assert sorted(r["k"] for r in report["measurements"] if r["section"] == "sweep") == [
        1, 1, 2, 2]
    assert "| 2 |" in md


def test_combine_conflicts_are_errors(runs, tmp_path, capsys):
    pa, pb = str(runs["a"][0]), str(runs["b"][0])
    out = ["--out", str(tmp_path), "--tag", "x"]

    other = _edited(runs, tmp_path, "b", "other_device.json",
                    lambda r: r["device"].update(device="NVIDIA H200"))
    err = _combine_error(capsys, ["--combine", pa, str(other)] + out)
    assert "different devices" in err and pa in err and str(other) in err
    assert "NVIDIA H200" in err

    bigger = _edited(runs, tmp_path, "c", "bigger_rmat.json",
                     lambda r: r["graphs"]["rmat"].update(n=16, scale=4))
    err = _combine_error(capsys, ["--combine", pa, str(bigger)] + out)
    assert "the rmat graph differs between" in err and pa in err and str(bigger) in err
    # timings of the same graph differ between runs: not a conflict
    slower = _edited(runs, tmp_path, "c", "slower_build.json",
                     lambda r: r["graphs"]["rmat"].update(build_ms=1e6, generate_s=99.0))
    assert ablation.main(["--combine", pa, str(slower)] + out) == 0
    capsys.readouterr()

    def change_point(r):
        r["sweep"]["points"][0]["fa_ms_per_iter"] *= 2

    resweep = _edited(runs, tmp_path, "a", "resweep.json", change_point)
    err = _combine_error(capsys, ["--combine", pa, str(resweep)] + out)
    assert "sweep point k=1 differs between" in err and pa in err and str(resweep) in err

    other_sweep = _edited(runs, tmp_path, "a", "lp_sweep.json",
                          lambda r: r["sweep"].update(algorithm="label_propagation"))
    err = _combine_error(capsys, ["--combine", pa, str(other_sweep)] + out)
    assert "sweeps of" in err and "label_propagation" in err

    # the merged report may not overwrite an input (a run of the same day and tag)
    err = _combine_error(capsys, ["--combine", pa, pb, "--out", str(runs["a"][0].parent),
                                  "--tag", "a"])
    assert "would overwrite its input" in err


def test_combine_bad_files_are_rejected(runs, tmp_path, capsys):
    pa = str(runs["a"][0])
    out = ["--out", str(tmp_path)]
    missing = tmp_path / "nope.json"
    err = _combine_error(capsys, ["--combine", pa, str(missing)] + out)
    assert f"{missing}: no such file" in err

    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    err = _combine_error(capsys, ["--combine", pa, str(garbage)] + out)
    assert f"{garbage} is not valid JSON" in err

    foundation = tmp_path / "foundation.json"
    foundation.write_text(json.dumps({"benchmark": "foundation", "measurements": []}))
    err = _combine_error(capsys, ["--combine", pa, str(foundation)] + out)
    assert f"{foundation} is not an ablation report" in err and "'foundation'" in err

    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]")
    err = _combine_error(capsys, ["--combine", str(listing)] + out)
    assert "is not an ablation report" in err

    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"benchmark": "ablation", "date": "2026-01-01"}))
    err = _combine_error(capsys, ["--combine", str(partial)] + out)
    assert "lacks device, graphs, measurements, settings, failures" in err
    assert list(tmp_path.glob("ablation_*")) == []  # nothing written


@pytest.mark.parametrize("extra", [["--families", "grid"], ["--quick"], ["--k", "8"],
                                   ["--algorithms", "als", "--sweep", "none"]])
def test_combine_refuses_run_options(runs, tmp_path, capsys, extra):
    err = _combine_error(capsys, ["--combine", str(runs["a"][0]), "--out", str(tmp_path)]
                         + extra)
    assert "--combine merges earlier results and runs nothing" in err
    assert extra[0] in err


def test_combine_arguments(runs):
    pa, pb = str(runs["a"][0]), str(runs["b"][0])
    args = ablation.parse_args(["--combine", pa, pb, "--tag", "t", "--out", "x"])
    assert args.combine == [pa, pb] and (args.tag, args.out) == ("t", "x")
    assert [(name, rep["settings"]["tag"]) for name, rep in args.combine_reports] == [
        (pa, "a"), (pb, "b")]
    with pytest.raises(SystemExit):
        ablation.parse_args(["--combine"])  # at least one file


# ------------------------------------------------------------------------------ memory


def test_rows_carry_device_memory(runs):
    for _, report in runs.values():
        for r in report["measurements"]:
            for key in MEMORY_KEYS:
                assert key in r, (r["variant"], key)
            if onyx_rapids.device.BACKEND != "gpu" or r.get("skipped") or r.get("error"):
                # simulator: NumPy arrays, no device memory pool to read
                assert all(r[key] is None for key in MEMORY_KEYS), r
            elif _cupy_pool_in_use():
                assert r["peak_run_bytes"] > 0
            else:  # CuPy allocates elsewhere (RMM's allocator): said, not reported as 0
                assert all(r[key] is None for key in MEMORY_KEYS), r
                assert r["memory_note"] == ablation.POOL_BYPASSED


def _cupy_pool_in_use() -> bool:
    """Whether a CuPy allocation goes through CuPy's default memory pool."""
    pool = onyx_rapids.device.xp.get_default_memory_pool()
    before = pool.used_bytes()
    probe = onyx_rapids.device.xp.empty(1 << 20, dtype="uint8")
    used = pool.used_bytes() > before
    del probe
    return used


def test_a_bypassed_pool_is_not_measured_as_zero(monkeypatch, tmp_path):
    """A hook that sees no allocation and an empty pool (CuPy allocating through RMM): the
    row's memory reads None with the note, never 0 bytes."""
    class SilentHook(ablation._PeakCounter):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(ablation, "_peak_hook", SilentHook)
    monkeypatch.setattr(ablation, "_pool_bytes", lambda: 0)
    monkeypatch.setattr(ablation, "_pool_after_free", lambda: 0)
    assert ablation.main(TINY + RUNS["c"] + ["--tag", "silent", "--out", str(tmp_path)]) == 0
    _, report, md = _one(tmp_path, "silent")
    rows = [r for r in report["measurements"] if not r.get("skipped")]
    assert rows
    for r in rows:
        assert all(r[key] is None for key in MEMORY_KEYS), r
        assert r["memory_note"] == ablation.POOL_BYPASSED
    assert "outside its default pool" in md


def test_peak_counter_keeps_the_high_water_mark():
    c = ablation._PeakCounter()
    for event, size in [("malloc", 512), ("malloc", 2048), ("free", 512), ("malloc", 1024),
                        ("free", 2048), ("free", 1024)]:
        getattr(c, f"{event}_postprocess")(device_id=0, mem_size=size, mem_ptr=0, pmem_id=0)
    assert (c.live, c.peak) == (0, 3072)


class _FakeHook(ablation._PeakCounter):
    """Stands in for the CuPy memory hook: the call 'allocates' 3 MiB, then 1 MiB more, and
    frees the first block (peak 4 MiB) per use."""

    def __init__(self, sizes):
        super().__init__()
        self.sizes = sizes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        first, second = self.sizes
        self.malloc_postprocess(mem_size=first)
        self.malloc_postprocess(mem_size=second)
        self.free_postprocess(mem_size=first)


def test_measure_records_the_warm_up_call_high_water_mark(tmp_path, capsys, monkeypatch):
    """The GPU path with stand-ins: the pool read right after the free and right after the
    warm-up call; the hook's high-water mark is the run's memory."""
    reads = iter([1000, 1000 + 3 * 2**20,  # FA/NCD, the reference, runs first
                  2000, 2000 + 2**20])      # NFA/NCD
    hooks = iter([_FakeHook((3 * 2**20, 2**20)), _FakeHook((2**20, 2**20))])
    monkeypatch.setattr(ablation, "_pool_bytes", lambda: next(reads))
    monkeypatch.setattr(ablation, "_peak_hook", lambda: next(hooks))
    rc = ablation.main(TINY + ["--families", "rmat", "--algorithms", "pagerank",
                               "--variants", "NFA/NCD", "--sweep", "none",
                               "--out", str(tmp_path)])
    capsys.readouterr()
    assert rc == 0
    path = sorted(tmp_path.glob("ablation_*_quick.json"))[0]
    report = json.loads(path.read_text())
    rows = {r["variant"]: r for r in report["measurements"]}
    assert {k: rows["FA/NCD"][k] for k in MEMORY_KEYS} == {
        "baseline_pool_bytes": 1000, "peak_pool_bytes": 1000 + 3 * 2**20,
        "peak_run_bytes": 4 * 2**20}
    assert rows["NFA/NCD"]["peak_run_bytes"] == 2 * 2**20
    md = path.with_suffix(".md").read_text()
    section = md[md.index(MEMORY_HEADING):]
    assert "| pagerank | rmat | 1 | 2.0 | - | 4.0 | - | - | - | - | - |" in section


def _row(family, algorithm, k, variant, peak, *, ms=1.0, skipped=False):
    fa, cd, fold = ablation._BY_NAME[variant.lower()]
    r = {"section": "table", "family": family, "algorithm": algorithm, "k": k,
         "variant": variant, "feature_aware": fa, "change_driven": cd, "fold": fold,
         "baseline_pool_bytes": None, "peak_pool_bytes": None, "peak_run_bytes": peak}
    if skipped:
        r["skipped"] = "n/a: no change_driven option"
    else:
        r.update(ms_per_iter=ms, check={"ok": True}, agreement={"ok": True})
    return r


def test_markdown_memory_table():
    mib = 2**20
    rows = [
        _row("rmat", "belief_propagation", 4, "NFA/NCD", 3 * mib),
        _row("rmat", "belief_propagation", 4, "NFA/NCD/fold", int(1.5 * mib)),
        _row("rmat", "belief_propagation", 4, "FA/NCD", int(2.5 * mib)),
        _row("rmat", "belief_propagation", 4, "FA/NCD/fold", 1234567),  # 1.18 MiB
        _row("rmat", "belief_propagation", 4, "NFA/CD", None),  # not measured
        _row("rmat", "belief_propagation", 4, "FA/CD", 0),
        _row("grid", "feature_propagation", 4, "FA/NCD", 10 * mib),
        _row("grid", "feature_propagation", 4, "NFA/CD", None, skipped=True),
    ]
    report = {"device": {"device": "Test GPU", "backend": "gpu"}, "date": "2026-01-01",
              "git": {"commit": "abc"}, "graphs": {}, "measurements": rows, "sweep": {},
              "failures": [],
              "settings": {"k": 4, "max_iter": 10, "tol": 1e-12, "cd_tol": 1e-12, "repeat": 3}}
    report["table"] = ablation.table_rows(report)
    md = ablation.markdown(report)
    section = md[md.index(MEMORY_HEADING):]
    names = " | ".join(ablation.variant_name(v) for v in ablation.VARIANTS)
    assert f"| algorithm | graph | k | {names} |" in section
    # columns: NFA/NCD, NFA/NCD/fold, FA/NCD, FA/NCD/fold, NFA/CD, NFA/CD/fold, FA/CD, FA/CD/fold
    assert "| belief_propagation | rmat | 4 | 3.0 | 1.5 | 2.5 | 1.2 | - | - | 0.0 | - |" in section
    assert "| feature_propagation | grid | 4 | - | - | 10.0 | - | n/a | - | - | - |" in section
    # after the main table and the all-variants table
    assert md.index("## Table 7.2") < md.index("## All variants") < md.index(MEMORY_HEADING)
