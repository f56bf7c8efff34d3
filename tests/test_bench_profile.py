import json

import pytest

from benchmarks import profile


def test_profile_splits_a_call_into_kernels_and_the_rest(tmp_path, capsys):
    assert profile.main(["--quick", "--algorithms", "pagerank", "--variants", "FA/NCD,NFA/NCD",
                         "--max-iter", "1", "--out", str(tmp_path), "--tag", "t"]) == 0
    (path,) = tmp_path.glob("profile_*_rmat_t.json")
    report = json.loads(path.read_text())
    assert [r["variant"] for r in report["runs"]] == ["FA/NCD", "NFA/NCD"]
    for r in report["runs"]:
        assert r["iterations"] == 1 and r["kernels"]
        assert r["kernel_ms"] == pytest.approx(sum(x["ms"] for x in r["kernels"]))
        assert r["other_ms"] == pytest.approx(r["profiled_call_ms"] - r["kernel_ms"])
        assert all(x["launches"] >= 1 for x in r["kernels"])
    mappings = [x["kernel"].split()[1] for r in report["runs"] for x in r["kernels"]]
    assert "warp" in mappings and "nfa" in mappings
    assert "## pagerank k=1 FA/NCD" in capsys.readouterr().out


def test_profile_refuses_an_algorithm_off_its_family(tmp_path):
    with pytest.raises(SystemExit):
        profile.main(["--quick", "--family", "rmat", "--algorithms", "als",
                      "--out", str(tmp_path)])
    assert not list(tmp_path.iterdir())
