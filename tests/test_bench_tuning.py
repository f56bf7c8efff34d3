"""Suite ``tuning`` (issue 38): its rows are a training table (a pool per algorithm, each
configuration checked against the defaults), a wrong configuration fails the run, and
``python -m benchmarks train`` turns a training and a held-out run into the package's model
and the held-out table."""

import json

import pandas as pd
import pytest

from benchmarks import harness
from benchmarks.suites import tuning as suite
from graphs import fail_configuration
from onyx_rapids import tuning, tuning_model

WCC = "weakly_connected_components"


def _run(out, graphs_text, **kw):
    return harness.run_suite("tuning", graphs_text=graphs_text, quick=True, out=str(out),
                             quiet=True, algorithms=[WCC], **kw)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A training run (two graphs) and a held-out run (another seed), one random
    configuration a pool."""
    out = tmp_path_factory.mktemp("tuning")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(suite, "RANDOM", 1)
        reports = {tag: _run(out / tag, text, tag=tag)
                   for tag, text in (("train", "rmat:3:2,grid:3"), ("held", "rmat:3:2~1"))}
    return out, reports


def test_the_runs_rows_are_a_training_table(runs):
    out, reports = runs
    rc, rep = reports["train"]
    assert rc == 0 and not rep["failures"]
    rows = pd.DataFrame(rep["rows"])
    cost = rows[rows["algorithm"] == "attributes"]
    assert (cost["check"] == "ok").all() and (cost["ms"] > 0).all()
    assert all(p["pagerank_ms"] > 0 and p["degree_only_ms"] > 0 for p in cost["params"])
    table = suite.training_table(pd.read_parquet(next((out / "train").glob("*.parquet"))))
    # the run's JSON report reads as the same training table (train takes either file)
    from_json = suite._read([next((out / "train").glob("*.json"))])
    pd.testing.assert_frame_equal(from_json[table.columns], table, check_dtype=False)
    pool = sorted(tuning.config_json(c, WCC) for c in tuning.pool(WCC, random_count=1))
    for graph, rows in table.groupby("graph"):
        assert sorted(rows["config"]) == pool, graph
        assert rows.loc[rows["config"] == "{}", "role"].tolist() == ["ours"]
        assert rows["attr_n"].nunique() == 1 and rows["attr_kind"].iloc[0]
        assert (rows["qattr_n"] == rows["attr_n"]).all()  # the quick attributes too
    assert (table["status"] == "ok").all() and table["agrees"].all() and (table["ms"] > 0).all()
    drifts = {json.loads(p)["reference_drift"] for p in table["params"]}
    assert len(drifts) == 2 and all(d > 0 for d in drifts)  # one a graph's pool


def test_a_configuration_computing_something_else_fails_the_run(tmp_path, monkeypatch):
    def wrong(ref, ours):
        return len(ours) == 0, "forced"  # every configuration disagrees
    monkeypatch.setitem(suite.CHECKS, WCC, lambda k: wrong)
    monkeypatch.setattr(suite, "RANDOM", 0)
    rc, rep = _run(tmp_path, "rmat:3:2")
    assert rc == 1 and any("differs from the defaults" in f for f in rep["failures"])


def test_a_configuration_that_raises_fails_the_run_and_the_rest_is_measured(tmp_path,
                                                                           monkeypatch):
    fail_configuration(monkeypatch, {"method": "propagate"}, "launch failed")
    monkeypatch.setattr(suite, "RANDOM", 0)
    rc, rep = _run(tmp_path, "rmat:3:2")
    rows = pd.DataFrame(rep["rows"])
    rows = rows[rows["case"] == "pool"].set_index("config")
    assert rc == 1 and any(f.endswith(': error: RuntimeError: launch failed')
                           for f in rep["failures"])
    assert rows.loc['{"method": "propagate"}', "check"] == "error"
    assert len(rows) == len(tuning.pool(WCC, random_count=0))
    assert (rows.drop(index='{"method": "propagate"}')["status"] == "ok").all()


def test_train_writes_the_model_and_the_held_out_table(runs, tmp_path):
    out, _ = runs
    train = [str(p) for p in (out / "train").glob("*.parquet")]
    held = [str(p) for p in (out / "held").glob("*.parquet")]
    model_path = tmp_path / "model.json"
    assert harness.main(["train", "--train", *train, "--held-out", *held, "--model",
                         str(model_path), "--out", str(tmp_path)]) == 0
    model = tuning_model.load_model(model_path)
    assert model.algorithms == [WCC]
    assert sorted(model.meta["graphs"]) == ["grid:3", "rmat:3:2"]
    assert {json.dumps(c, sort_keys=True) for c in model.pool(WCC)} == {
        tuning.config_json(c, WCC) for c in tuning.pool(WCC, random_count=1)}
    report = json.loads(next(tmp_path.glob("run-tuning-heldout_*.json")).read_text())
    (row,) = report["summary"]
    assert row["graphs"] == 1 and report["held_out_graphs"] == ["rmat:3:2~1"]
    assert row["auto"] == model.auto(WCC) and row["auto"] in tuning_model.STRATEGIES
    for c in suite.COLUMNS:  # shares of the measured peak
        assert 0 < row[f"{c}_mean"] <= 100
    assert report["held_out_families_in_training"] == ["rmat:3:2"]  # another seed only
    (score,) = report["scores"]  # the pool's drift bounds what counts as a loss to the defaults
    pool = suite.training_table(pd.read_parquet(held[0]))
    drift = json.loads(pool["params"].iloc[0])["reference_drift"]
    assert score["noise"] == pytest.approx(100 * abs(drift - 1))
    assert row["auto_never_loses"] == (score["top1"] >= score["defaults"] - score["noise"])
    assert row["auto_worst_vs_defaults"] == pytest.approx(score["top1"] - score["defaults"])
    assert set(report["variants"]) == {"full", "degrees", "quick"} and not report["confirmed"]
    for mode in report["variants"].values():
        assert 0 < mode[WCC]["top3_mean"] <= 100 and mode[WCC]["auto"] in tuning_model.STRATEGIES
    # the trees' importances (test_tuning_model checks their values) next to the study's list
    ranked = report["importances"][WCC]
    assert ranked == model.importances(WCC) and set(ranked) <= set(tuning_model.feature_names())
    text = next(tmp_path.glob("run-tuning-heldout_*.md")).read_text()
    assert "the study's: volume, degree assortativity, wedge count, Gini, diameter" in text
    with pytest.raises(ValueError, match="both in training and held out: grid:3, rmat:3:2"):
        suite.train_and_evaluate(train, train, model_path=tmp_path / "m2.json",
                                 out=str(tmp_path))


def test_random_sets_the_pools_random_configurations(tmp_path):
    rc, rep = _run(tmp_path, "rmat:3:2", random_count=0)
    rows = pd.DataFrame(rep["rows"])
    assert rc == 0 and rep["settings"]["random_count"] == 0
    assert len(rows[rows["case"] == "pool"]) == len(tuning.pool(WCC, random_count=0))
    for suite_name, count in (("tuning", -1), ("traversal", 2)):
        with pytest.raises(ValueError, match=r"--random is a count >= 0 of the tuning suite"):
            harness.run_suite(suite_name, quick=True, out=str(tmp_path), quiet=True,
                              random_count=count)


def test_each_graph_is_its_own_run_and_files(tmp_path, monkeypatch):
    """``--each-graph``: the graphs run one after another in one process, each written as its
    own run (tagged TAG-GRAPH) when it ends."""
    monkeypatch.setattr(suite, "RANDOM", 0)
    assert harness.main(["run", "tuning", "--quick", "--graphs", "rmat:3:2,grid:3",
                         "--algorithms", WCC, "--random", "0", "--each-graph", "--tag",
                         "corpus", "--out", str(tmp_path)]) == 0
    files = sorted(p.name for p in tmp_path.glob("*.parquet"))
    assert [f.split("_")[-2:] for f in files] == [["corpus-grid-3", "quick.parquet"],
                                                  ["corpus-rmat-3-2", "quick.parquet"]]
    for name, graph in zip(files, ("grid:3", "rmat:3:2")):
        assert set(pd.read_parquet(tmp_path / name)["graph"]) == {graph}


def test_a_graph_slug_with_a_decimal_point_keeps_it_in_the_file_names(tmp_path):
    """The run of rmat:17:4:0.5 was written as ``..._i38-rmat-17-4-0.parquet``
    (``Path.with_suffix`` took ``.5`` for a suffix), where rmat:17:4:0.55's would land too."""
    from benchmarks import common, graphs

    tags = [f"i38-{graphs.parse_spec(s).slug}" for s in ("rmat:17:4:0.5", "rmat:17:4:0.55")]
    names = [common.suffixed(common.stem(tmp_path, "tuning", "NVIDIA H200", "2026-11-28", t),
                             ".parquet").name for t in tags]
    assert names == ["run-tuning_nvidia-h200_2026-11-28_i38-rmat-17-4-0.5.parquet",
                     "run-tuning_nvidia-h200_2026-11-28_i38-rmat-17-4-0.55.parquet"]


def test_the_rows_give_the_calls_each_configuration_was_timed(tmp_path, monkeypatch):
    monkeypatch.setattr(suite, "RANDOM", 0)
    monkeypatch.setattr(tuning, "FAR_FROM_BEST", 1.0)  # all but the fastest: timed once
    rc, rep = _run(tmp_path, "rmat:3:2", repeat=2)
    rows = pd.DataFrame(rep["rows"])
    rows = rows[rows["case"] == "pool"]
    assert rc == 0 and len(rows) > 2
    assert sorted(rows["repeats"]) == [1] * (len(rows) - 1) + [2]


def test_bad_training_files_and_arguments_are_refused_by_name(tmp_path, capsys):
    bad = tmp_path / "notes.json"
    bad.write_text('{"rows": []}')
    with pytest.raises(ValueError, match="notes.json: not a 'python -m benchmarks run' report"):
        suite._read([bad])
    # one graph's run twice (a repeat kept as noise evidence): its rows would count twice
    rows = pd.DataFrame({"suite": ["tuning"] * 2, "case": ["pool"] * 2, "status": ["ok"] * 2,
                         "graph": ["dataset:karate"] * 2, "algorithm": ["bfs"] * 2,
                         "variant": ["{}", '{"block_size": 128}'], "ms": [1.0, 2.0]})
    run, again = tmp_path / "karate.parquet", tmp_path / "repeat.parquet"
    rows.to_parquet(run)
    rows.to_parquet(again)
    assert set(suite._read([run])["graph"]) == {"dataset:karate"}
    with pytest.raises(ValueError, match=r"bfs on dataset:karate is in two results files, "
                                         r".*karate.parquet and .*repeat.parquet"):
        suite._read([run, again])
    # confirm runs: the later file's (algorithm, graph) replaces the earlier's, said so
    rows.assign(case="confirm").to_parquet(run)
    rows.assign(case="confirm", ms=[3.0, 4.0]).to_parquet(again)
    said = []
    table = suite._read([run, again], "confirm", said.append)
    assert sorted(table["ms"]) == [3.0, 4.0] and len(said) == 1 and "repeat.parquet" in said[0]
    with pytest.raises(SystemExit):
        harness.main(["run", "tuning", "--each-graph", "--sizes", "1e4", "--graphs", "rmat:3:2",
                      "--out", str(tmp_path)])
    assert "give --sizes or --graphs, not both" in capsys.readouterr().err


def test_every_corpus_spec_parses_and_training_and_held_out_are_disjoint():
    """A spec the builder refuses costs a GPU run its graph (stop 49: rmat:19:16:0.62 left
    d = 1 - a - b - c = 0 and built nothing); held-out graphs are never trained on."""
    from benchmarks import graphs

    training = [graphs.parse_spec(s) for s in suite.TRAINING.split(",")]
    held = [graphs.parse_spec(s) for s in suite.HELD_OUT.split(",")]
    slugs = [s.slug for s in training + held]
    assert len(set(slugs)) == len(slugs) == 31
    for spec in training + held:
        if spec.kind == "rmat" and "a" in spec.params:
            assert 0.25 <= spec.params["a"] < 1 - 2 * 0.19, spec.text


def test_confirm_times_the_finalists_again_and_train_scores_on_them(runs, tmp_path,
                                                                    monkeypatch):
    """``train --confirm-set`` names each held-out pool's finalists (``{}`` first, the
    identical block size 256 beside it, the pool's fastest, every model's picks); ``run
    tuning --confirm`` times only those; ``train --confirm`` scores on those times, the noise
    being ``{}`` against the identical configuration."""
    monkeypatch.setattr(suite, "CONFIRM_TOP", 2)  # fewer finalists: a shorter confirm run
    out, _ = runs
    train = [str(p) for p in (out / "train").glob("*.parquet")]
    held = [str(p) for p in (out / "held").glob("*.parquet")]
    chosen = tmp_path / "confirm.json"
    assert harness.main(["train", "--train", *train, "--held-out", *held, "--model",
                         str(tmp_path / "unused.json"), "--confirm-set", str(chosen)]) == 0
    assert not (tmp_path / "unused.json").exists()
    wanted = json.loads(chosen.read_text())[WCC]["rmat:3:2~1"]
    assert wanted[0] == "{}" and suite.SAME_AS_DEFAULTS in wanted
    assert len(wanted) == len(set(wanted)) >= 2
    rc, rep = _run(tmp_path / "c", "rmat:3:2~1", confirm=str(chosen), repeat=2)
    rows = pd.DataFrame(rep["rows"])
    timed = rows[rows["case"] == "confirm"]
    assert rc == 0 and rep["settings"]["confirm"] and sorted(timed["config"]) == sorted(wanted)
    assert (timed["check"] == "ok").all() and not (rows["case"] == "pool").any()
    confirmed = [str(p) for p in (tmp_path / "c").glob("*.parquet")]
    assert harness.main(["train", "--train", *train, "--held-out", *held, "--model",
                         str(tmp_path / "m.json"), "--out", str(tmp_path), "--attributes",
                         "quick", "--confirm", *confirmed]) == 0
    assert tuning_model.load_model(tmp_path / "m.json").quick
    report = json.loads(next(tmp_path.glob("run-tuning-heldout_*.json")).read_text())
    (score,) = report["scores"]
    assert report["confirmed"] and report["attributes"] == "quick"
    ms = suite.training_table(pd.read_parquet(confirmed[0]), "confirm").set_index("config")["ms"]
    assert score["best_ms"] == pytest.approx(ms.min())
    assert score["noise"] == pytest.approx(100 * abs(ms[suite.SAME_AS_DEFAULTS] / ms["{}"] - 1))
    # an algorithm whose confirm rows cannot be used is scored on its pools, with the pools'
    # drift as noise
    pooled = suite.train_and_evaluate(train, held, model_path=tmp_path / "p.json",
                                      out=str(tmp_path / "p"), confirm_paths=confirmed,
                                      pool_scored=[WCC], log=lambda m: None)
    (pooled_score,) = pooled["scores"]
    pool = suite.training_table(pd.read_parquet(held[0]))
    assert pooled["pool_scored"] == [WCC] and "Scored on the pools" in pooled["markdown"]
    assert pooled_score["best_ms"] == pytest.approx(pool.groupby("config")["ms"].median().min())
    with pytest.raises(ValueError, match="pool_scored: no held-out pools of bfs"):
        suite.train_and_evaluate(train, held, model_path=tmp_path / "p.json",
                                 confirm_paths=confirmed, pool_scored=["bfs"])
    with pytest.raises(ValueError, match="not a file of 'train --confirm-set'"):
        (tmp_path / "bad.json").write_text('{"bfs": {"g": ["{\\"fused\\": true}"]}}')
        _run(tmp_path / "d", "rmat:3:2~1", confirm=str(tmp_path / "bad.json"))
    with pytest.raises(ValueError, match="--confirm is an option of the tuning suite"):
        harness.run_suite("spmm", quick=True, out=str(tmp_path), quiet=True,
                          confirm=str(chosen))


def test_confirm_runs_sssp_delta_as_a_factor_of_its_default(tmp_path, monkeypatch):
    """A confirm file holds configurations as JSON; sssp's delta in them is a factor of the
    default delta (as in the pools), never an absolute delta."""
    seen = []
    measure = tuning.measure

    def spy(g, name, inputs=None, **kw):
        seen.extend(kw["configs"])
        return measure(g, name, inputs, **kw)
    monkeypatch.setattr(tuning, "measure", spy)
    chosen = tmp_path / "confirm.json"
    chosen.write_text(json.dumps({"sssp": {"rmat:3:2": ["{}", '{"delta": 4.0}']}}))
    rc, rep = harness.run_suite("tuning", graphs_text="rmat:3:2", quick=True, out=str(tmp_path),
                                quiet=True, algorithms=["sssp"], confirm=str(chosen))
    assert rc == 0 and seen == [{}, {"delta": tuning.DeltaFactor(4.0)}]
    assert isinstance(seen[1]["delta"], tuning.DeltaFactor)


def test_quick_attributes_are_filled_from_the_specs_of_the_same_graphs(runs):
    """Tables measured before the library recorded ``qattr_`` columns get them from the
    graphs built again from their specs, which must be the measured graphs."""
    out, _ = runs
    table = suite._read([str(p) for p in (out / "train").glob("*.parquet")])
    recorded = table.copy()
    old = table.drop(columns=[c for c in table if c.startswith("qattr_")])
    filled = suite._fill_quick(old, log=lambda m: None)
    for column in ("qattr_n", "qattr_m", "qattr_out_degree_max", "qattr_degree_assortativity"):
        assert filled[column].tolist() == recorded[column].tolist(), column
    wrong = old.assign(attr_m=old["attr_m"] + 1)
    with pytest.raises(ValueError, match=r"graph \S+ built again has m \d+, the measured one "
                                         r"[\d.]+: not the same graph"):
        suite._fill_quick(wrong, log=lambda m: None)
    with pytest.raises(ValueError, match="attributes must be one of full, degrees, quick"):
        suite.train_and_evaluate([], [], model_path="unused.json", attributes="exact")
