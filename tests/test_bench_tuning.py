"""Suite ``tuning`` (issue 38): its rows are a training table (a pool per algorithm, each
configuration checked against the defaults), and a wrong configuration fails the run."""

import json

import pandas as pd

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
