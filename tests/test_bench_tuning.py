"""Suite ``tuning`` (issue 38): its rows are a training table (a pool per algorithm, each
configuration checked against the defaults), and a wrong configuration fails the run."""

import json

import pandas as pd
import pytest

from benchmarks import harness
from benchmarks.suites import tuning as suite
from onyx_rapids import tuning, tuning_model


def _run(tmp_path, monkeypatch, **kw):
    monkeypatch.setattr(suite, "RANDOM", 1)
    return harness.run_suite("tuning", graphs_text="rmat:3:2", quick=True, out=str(tmp_path),
                             quiet=True, algorithms=["weakly_connected_components"], **kw)


def test_the_runs_rows_are_a_training_table(tmp_path, monkeypatch):
    rc, rep = _run(tmp_path, monkeypatch)
    assert rc == 0 and not rep["failures"]
    rows = pd.DataFrame(rep["rows"])
    cost = rows[rows["algorithm"] == "attributes"].iloc[0]
    assert cost["check"] == "ok" and cost["ms"] > 0 and cost["params"]["pagerank_ms"] > 0
    table = suite.training_table(pd.read_parquet(next(tmp_path.glob("*.parquet"))))
    pool = tuning.pool("weakly_connected_components", random_count=1)
    assert sorted(table["config"]) == sorted(tuning.config_json(c, "weakly_connected_components")
                                             for c in pool)
    assert (table["status"] == "ok").all() and table["agrees"].all() and (table["ms"] > 0).all()
    assert table.loc[table["config"] == "{}", "role"].tolist() == ["ours"]
    assert table["attr_n"].eq(table["attr_n"].iloc[0]).all() and table["attr_kind"].iloc[0]
    # the table is what train() reads (one graph: constant choices)
    model = tuning_model.train(table)
    assert model.algorithms == ["weakly_connected_components"]
    assert {json.dumps(c, sort_keys=True) for c in model.pool(
        "weakly_connected_components")} == set(table["config"])


def test_a_configuration_computing_something_else_fails_the_run(tmp_path, monkeypatch):
    def wrong(ref, ours):
        return len(ours) == 0, "forced"  # every configuration disagrees
    monkeypatch.setitem(suite.CHECKS, "weakly_connected_components", lambda k: wrong)
    rc, rep = _run(tmp_path, monkeypatch)
    assert rc == 1 and any("differs from the defaults" in f for f in rep["failures"])


def test_train_writes_the_model_and_the_held_out_table(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "RANDOM", 1)
    for graphs_text, tag in (("rmat:3:2,grid:3", "train"), ("rmat:3:2~1", "held")):
        rc, _ = harness.run_suite("tuning", graphs_text=graphs_text, quick=True,
                                  out=str(tmp_path / tag), quiet=True, tag=tag,
                                  algorithms=["weakly_connected_components"])
        assert rc == 0
    train = [str(p) for p in (tmp_path / "train").glob("*.parquet")]
    held = [str(p) for p in (tmp_path / "held").glob("*.parquet")]
    model_path = tmp_path / "model.json"
    assert harness.main(["train", "--train", *train, "--held-out", *held, "--model",
                         str(model_path), "--out", str(tmp_path)]) == 0
    model = tuning_model.load_model(model_path)
    assert model.algorithms == ["weakly_connected_components"]
    assert sorted(model.meta["graphs"]) == ["grid:3", "rmat:3:2"]
    report = json.loads(next(tmp_path.glob("run-tuning-heldout_*.json")).read_text())
    (row,) = report["summary"]
    assert row["graphs"] == 1 and report["held_out_graphs"] == ["rmat:3:2~1"]
    for c in suite.COLUMNS:  # shares of the measured peak
        assert 0 < row[f"{c}_mean"] <= 100
    assert report["held_out_families_in_training"] == ["rmat:3:2"]  # another seed only
    assert 0 < report["degrees_only"]["weakly_connected_components"]["top3_mean"] <= 100
    with pytest.raises(ValueError, match="both in training and held out: grid:3, rmat:3:2"):
        suite.train_and_evaluate(train, train, model_path=tmp_path / "m2.json",
                                 out=str(tmp_path))
