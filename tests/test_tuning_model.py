"""The tuning model (issue 38, onyx_rapids.tuning_model) on a synthetic training table whose
fastest configuration follows a known rule of two attributes: trained trees and regressors
recover it on held-out graphs, the exported arrays predict as scikit-learn does, the JSON file
round-trips and every malformed file is refused by name; unusable rows are ignored."""

import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from onyx_rapids import tuning_model as tm  # noqa: E402

NAME = "pagerank"
CONFIGS = [{}, {"direction": "push"}, {"direction": "pull"},
           {"block_size": 128, "direction": "push"}, {"change_driven": True},
           {"direction": "auto", "pull_fraction": 0.05}]
# slowdown of each configuration against the fastest, in each region of the rule
FACTORS = {3: [2.5, 1.6, 1.8, 1.0, 1.9, 1.7],
           2: [2.5, 1.9, 1.0, 1.8, 1.6, 1.4],
           4: [2.5, 1.7, 1.6, 1.9, 1.0, 1.8]}


def fastest(attrs):
    """The rule: low-skew graphs push with 128-thread blocks; skewed dense ones pull; skewed
    sparse ones run change-driven."""
    if attrs["out_degree_skew"] < 1.5:
        return 3
    return 2 if attrs["density"] >= 1e-3 else 4


def fake_attributes(rng, kind):
    attrs = {key: float(rng.uniform(0, 1)) for key in tm.FEATURES}
    n = int(rng.integers(1_000, 1_000_000))
    attrs.update(version=1, n=n, kind=kind, weighted=bool(rng.integers(2)), multigraph=False,
                 density=float(10 ** rng.uniform(-5, -1)),
                 out_degree_skew=float(rng.uniform(0, 4)), out_degree_max=int(rng.integers(1, n)),
                 left_n=None, left_degree_mean=None, left_degree_max=None, right_n=None,
                 right_degree_mean=None, right_degree_max=None, weight_mean=None,
                 diameter_estimate=int(rng.integers(2, 40)), clustering_exact=False)
    return attrs


def synthetic_table(graphs, seed, prefix="g"):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(graphs):
        attrs = fake_attributes(rng, ("directed", "undirected")[i % 2])
        base = attrs["n"] / 1e5
        factors = FACTORS[fastest(attrs)]
        common = dict(algorithm=NAME, graph=f"{prefix}{i}", repeat=3, device="NVIDIA H200",
                      backend="gpu", attributes_version=1,
                      **{f"attr_{k}": v for k, v in attrs.items()})
        for config, factor in zip(CONFIGS, factors):
            ms = base * factor * math.exp(rng.normal(0, 0.02))
            rows.append(dict(common, config=json.dumps(config, sort_keys=True), ms=ms,
                             status="ok", agrees=True))
        # unusable rows, each faster than any usable one: they must be ignored
        rows.append(dict(common, config='{"fused": true}', ms=math.nan,
                         status="refused: fused", agrees=True))
        rows.append(dict(common, config='{"fused": false}', ms=base * 0.01,
                         status="refused: odd", agrees=True))
        rows.append(dict(common, config='{"fold": true}', ms=base * 0.01, status="ok",
                         agrees=False))
        rows.append(dict(common, config='{"fold": false}', ms=math.inf, status="ok",
                         agrees=True))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def train_table():
    return synthetic_table(30, seed=1)


@pytest.fixture(scope="module")
def test_table():
    return synthetic_table(20, seed=2, prefix="held")


@pytest.fixture(scope="module")
def model(train_table):
    return tm.train(train_table, seed=0)


def test_unusable_rows_are_ignored(model):
    assert model.algorithms == [NAME]
    pool = model.pool(NAME)
    assert pool[0] == {} and sorted(map(json.dumps, pool)) == sorted(map(json.dumps, CONFIGS))
    assert model.meta["device"] == "NVIDIA H200" and model.meta["backend"] == "gpu"
    assert len(model.meta["graphs"]) == 30 and model.meta["attributes_version"] == 1


def test_the_rule_is_recovered_on_held_out_graphs(model, test_table):
    scores = tm.evaluate(model, test_table)
    assert len(scores) == 20 and scores["best_config"].map(json.loads).isin(CONFIGS).all()
    mean = scores[["defaults", "most_frequent", "tree", "top1", "top3"]].mean()
    assert mean["defaults"] == pytest.approx(100 / 2.5, rel=0.05)
    # the trees see 15 graphs of a kind each: a few held-out graphs fall across a boundary
    assert mean["top3"] >= 99 and mean["top1"] >= 95 and mean["tree"] >= 80, mean
    assert mean["most_frequent"] < 85, mean
    reg = model._doc["algorithms"][NAME]["regressor"]
    assert set(reg["scores"]) == {"gbm", "mlp"} and max(reg["scores"].values()) >= 0.95
    assert reg["kind"] == max(reg["scores"], key=lambda k: (reg["scores"][k], k == "gbm"))
    text = model.describe(NAME)
    assert "tree (directed)" in text and "out_degree_skew" in text and "regressor:" in text


def test_tree_choice_and_rank_follow_the_rule(model, test_table):
    for _, rows in test_table.groupby("graph"):
        attrs = tm._graph_attributes(rows)
        best = CONFIGS[fastest(attrs)]
        assert best in model.rank(NAME, attrs)[:3]
    assert model.most_frequent(NAME) in [CONFIGS[i] for i in FACTORS]


def test_importances_name_the_rules_attributes(model):
    """The trees' importances, averaged over the graph kinds' trees: the two attributes the
    rule splits on come first (the held-out report lists them next to the study's)."""
    ranked = model.importances(NAME)
    assert set(list(ranked)[:2]) == {"out_degree_skew", "density"}
    assert list(ranked.values()) == sorted(ranked.values(), reverse=True)
    assert sum(ranked.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="has no algorithm 'bfs'"):
        model.importances("bfs")


def test_training_graphs_are_refused_by_evaluate(model, train_table):
    with pytest.raises(ValueError, match="trained on"):
        tm.evaluate(model, train_table)
    assert len(tm.evaluate(model, train_table, in_sample=True)) == 30


def test_exported_arrays_predict_as_scikit_learn(model, train_table, test_table):
    fitted = model._estimators[NAME]
    algo = model._algos[NAME]
    X_attr = np.array([tm.attribute_vector(tm._graph_attributes(r))
                       for _, r in test_table.groupby("graph")])
    for kind, clf in fitted["trees"].items():
        tree = algo["trees"][kind]
        leaves = tm._leaves(tree, X_attr)
        assert (tree["classes"][tree["value"][leaves].argmax(axis=1)] == clf.predict(X_attr)).all()
    X = np.hstack([np.repeat(X_attr, len(CONFIGS), axis=0),
                   np.tile(algo["config_matrix"], (len(X_attr), 1))])
    for kind, export in (("gbm", tm._export_gbm), ("mlp", tm._export_mlp)):
        parsed = tm._parse_regressor(tm._Reader("x"), {**export(fitted[kind]), "scores": {}},
                                     "r", X.shape[1], len(CONFIGS))
        np.testing.assert_allclose(tm._predict_regressor(parsed, X), fitted[kind].predict(X),
                                   rtol=0, atol=1e-9)


def test_save_and_load_round_trip(model, test_table, tmp_path):
    path = tmp_path / "model.json"
    model.save(path)
    loaded = tm.load_model(path)
    assert loaded.meta == model.meta and loaded.describe(NAME) == model.describe(NAME)
    for _, rows in test_table.groupby("graph"):
        attrs = tm._graph_attributes(rows)
        assert loaded.rank(NAME, attrs) == model.rank(NAME, attrs)
        np.testing.assert_array_equal(loaded.predict(NAME, attrs), model.predict(NAME, attrs))
        assert loaded.tree_choice(NAME, attrs) == model.tree_choice(NAME, attrs)


def test_rank_needs_no_scikit_learn(model, test_table, tmp_path):
    path = tmp_path / "model.json"
    model.save(path)
    attrs = tm._graph_attributes(test_table[test_table["graph"] == "held0"])
    script = (
        "import json, sys; sys.modules['sklearn'] = None\n"
        "from onyx_rapids import tuning_model as tm\n"
        f"m = tm.load_model({str(path)!r})\n"
        f"a = json.loads({json.dumps(json.dumps(attrs))})\n"
        "print(json.dumps([m.rank('pagerank', a), m.tree_choice('pagerank', a)]))\n"
        "assert not [k for k in sys.modules if k.startswith('sklearn.')]\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == [model.rank(NAME, attrs), model.tree_choice(NAME, attrs)]


def _corrupt(doc, how):
    algo = doc["algorithms"][NAME]
    tree = next(t for t in algo["trees"].values() if "constant" not in t)
    reg = algo["regressor"]
    if how == "format":
        doc["format"] = "something-else"
    elif how == "version":
        doc["format_version"] = 2
    elif how == "missing key":
        del algo["regressor"]
    elif how == "missing array":
        del tree["threshold"]
    elif how == "bad shape":
        tree["children_right"] = tree["children_right"][:-1]
    elif how == "wrong type":
        tree["threshold"] = ["a"] * len(tree["threshold"])
    elif how == "bad child":
        tree["children_left"][0] = 0
    elif how == "bad regressor":
        if reg["kind"] == "mlp":
            reg["coefs"][0] = reg["coefs"][0][:-1]
        else:
            reg["stages"][0]["feature"][0] = 10_000
    elif how == "pool":
        algo["pool"][1] = "not json"
    elif how == "features":
        doc["features"] = doc["features"][::-1]
    return doc


@pytest.mark.parametrize("how, message", [
    ("format", "format 'something-else'"),
    ("version", "format_version 2, this onyx_rapids reads 1"),
    ("missing key", "has no 'regressor'"), ("missing array", "has no 'threshold'"),
    ("bad shape", "children_right has shape"), ("wrong type", "threshold holds"),
    ("bad child", "out of range"), ("bad regressor", "regressor"), ("pool", "pool"),
    ("features", "features differ")])
def test_a_malformed_file_raises_model_error_naming_it(model, tmp_path, how, message):
    path = tmp_path / "model.json"
    model.save(path)
    path.write_text(json.dumps(_corrupt(json.loads(path.read_text()), how)))
    with pytest.raises(tm.ModelError, match=f"model file {path}: .*{message}"):
        tm.load_model(path)


def test_not_json_and_missing_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(tm.ModelError, match=f"model file {bad}: not JSON"):
        tm.load_model(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(tm.ModelError, match=f"model file {bad}: not a tuning model"):
        tm.load_model(bad)
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "none.json")):
        tm.load_model(tmp_path / "none.json")


def test_default_model_path(monkeypatch, tmp_path):
    monkeypatch.delenv(tm.MODEL_ENV, raising=False)
    assert tm.default_model_path().parts[-4:] == ("onyx_rapids", "data", "tuning", "model.json")
    monkeypatch.setenv(tm.MODEL_ENV, str(tmp_path / "m.json"))
    assert tm.default_model_path() == tmp_path / "m.json"


def test_attributes_must_match_the_model(model, test_table):
    attrs = tm._graph_attributes(test_table[test_table["graph"] == "held0"])
    with pytest.raises(ValueError, match="attributes version 2"):
        model.rank(NAME, dict(attrs, version=2))
    with pytest.raises(ValueError, match="lack density"):
        model.rank(NAME, {k: v for k, v in attrs.items() if k != "density"})
    with pytest.raises(ValueError, match="no algorithm 'bfs'"):
        model.rank("bfs", attrs)


def test_a_table_mixing_devices_or_graphs_is_refused(train_table):
    mixed = train_table.copy()
    mixed.loc[mixed["graph"] == "g0", "device"] = "NVIDIA H100"
    with pytest.raises(ValueError, match="2 values of device"):
        tm.train(mixed)
    mixed = train_table.copy()
    mixed.loc[mixed.index[:2], "attr_n"] = [10, 20]  # two graphs named g0
    with pytest.raises(ValueError, match="different attributes in different rows: g0"):
        tm.train(mixed)


def test_parquet_paths_and_constant_cases(tmp_path):
    # one graph per kind and a single configuration: constant trees and regressor
    table = synthetic_table(2, seed=3)
    table = table[table["config"].isin(["{}", '{"fused": true}'])]
    path = tmp_path / "t.parquet"
    table.to_parquet(path, index=False)
    model = tm.train([path])
    assert model.pool(NAME) == [{}] and model._doc["algorithms"][NAME]["regressor"]["kind"] \
        == "constant"
    attrs = tm._graph_attributes(table.iloc[:1])
    assert model.rank(NAME, attrs) == [{}] and model.tree_choice(NAME, attrs) == {}
    assert model.tree_choice(NAME, dict(attrs, kind="bipartite")) == {}  # no tree: most frequent
    model.save(tmp_path / "m.json")
    assert tm.load_model(tmp_path / "m.json").rank(NAME, attrs) == [{}]


def test_a_model_without_structure_reads_only_the_cheap_attributes(train_table, test_table,
                                                                   tmp_path):
    cheap = tm.train(train_table, seed=0, structure=False)
    assert cheap.structure is False
    path = tmp_path / "cheap.json"
    cheap.save(path)
    loaded = tm.load_model(path)
    assert loaded.structure is False
    scores = tm.evaluate(loaded, test_table)  # the rule reads skew and density: no loss
    assert scores["top3"].mean() > 95
    attrs = tm._graph_attributes(test_table[test_table["graph"] == "held0"])
    other = {**attrs, "diameter_estimate": 10_000, "wedges": 10**9}
    np.testing.assert_array_equal(loaded.predict(NAME, attrs), loaded.predict(NAME, other))
    doc = json.loads(path.read_text())
    doc["structure"] = "yes"
    path.write_text(json.dumps(doc))
    with pytest.raises(tm.ModelError, match="structure 'yes' is not true or false"):
        tm.load_model(path)


def _with_quick(table, skew_factor):
    """``table`` with ``qattr_`` columns: its attributes, the skew scaled (a sampled
    estimate off by that factor)."""
    quick = table[[c for c in table if c.startswith("attr_")]].copy()
    quick.columns = ["q" + c for c in quick.columns]
    quick["qattr_out_degree_skew"] = quick["qattr_out_degree_skew"] * skew_factor
    return pd.concat([table, quick], axis=1)


def test_a_quick_model_trains_and_predicts_on_the_quick_attributes(train_table, test_table,
                                                                   tmp_path):
    """``quick=True`` reads the ``qattr_`` columns (``g.attributes(quick=True)``), in training
    and in :func:`evaluate`; a table without them is refused, naming the graphs."""
    with pytest.raises(ValueError, match=r"no quick attributes \(qattr_\* columns\) for the "
                                         r"graphs g0, g1, g10"):
        tm.train(train_table, seed=0, quick=True)
    quick = tm.train(_with_quick(train_table, 1.0), seed=0, quick=True)
    assert quick.quick and not quick.structure
    path = tmp_path / "quick.json"
    quick.save(path)
    loaded = tm.load_model(path)
    assert loaded.quick and loaded.meta["quick"] is True
    held = _with_quick(test_table, 1.0)
    assert tm.evaluate(loaded, held)["top3"].mean() > 95  # the rule reads skew and density
    # evaluate reads the quick columns: skews scaled past the rule's threshold change picks
    scaled = tm.evaluate(loaded, _with_quick(test_table, 100.0))
    assert scaled["top1"].mean() < tm.evaluate(loaded, held)["top1"].mean()

    class G:  # what a tuned call asks the graph for
        def attributes(self, **kw):
            return kw
    assert loaded.graph_attributes(G()) == {"quick": True}
    loaded.meta.update(quick=False, structure=False)  # a degree-only model's flags
    assert loaded.graph_attributes(G()) == {"structure": False}
    doc = json.loads(path.read_text())
    doc["quick"] = 1
    path.write_text(json.dumps(doc))
    with pytest.raises(tm.ModelError, match="quick 1 is not true or false"):
        tm.load_model(path)


def test_auto_follows_the_strategy_that_wins_leave_one_graph_out(model, test_table):
    """On the rule's table a learned pick beats the defaults (2.5x slower everywhere), so
    ``tuning="auto"`` follows the tree or the regressor; ``choices`` puts that strategy's
    pick first and the regressor's ranking after it, each configuration once."""
    algo = model._doc["algorithms"][NAME]
    scores = algo["auto_scores"]
    assert set(scores) == set(tm.STRATEGIES)
    assert scores["defaults"] == pytest.approx(1 / 2.5, rel=0.05)
    assert model.auto(NAME) in ("tree", "regressor") and scores[model.auto(NAME)] >= 0.95
    assert f'tuning="auto": {model.auto(NAME)}' in model.describe(NAME)
    attrs = tm._graph_attributes(next(iter(test_table.groupby("graph")))[1])
    for strategy, first in (("defaults", {}), ("most_frequent", model.most_frequent(NAME)),
                            ("tree", model.tree_choice(NAME, attrs)),
                            ("regressor", model.rank(NAME, attrs)[0])):
        model._algos[NAME]["auto"] = strategy
        try:
            chosen, picked = model.choices(NAME, attrs), model.pick(NAME, attrs)
        finally:
            model._algos[NAME]["auto"] = algo["auto"]
        assert chosen[0] == first == picked, strategy
        assert sorted(map(json.dumps, chosen)) == sorted(map(json.dumps, model.pool(NAME)))


def test_auto_keeps_the_defaults_when_nothing_beats_them_on_unseen_graphs():
    """Every configuration equally fast but for noise, the defaults a little faster: no
    learned pick beats them leave-one-graph-out, so ``tuning="auto"`` runs the defaults."""
    rng = np.random.default_rng(5)
    rows = []
    for i in range(8):
        attrs = fake_attributes(rng, ("directed", "undirected")[i % 2])
        common = dict(algorithm=NAME, graph=f"flat{i}", repeat=3, device="NVIDIA H200",
                      backend="gpu", attributes_version=1,
                      **{f"attr_{k}": v for k, v in attrs.items()})
        for j, config in enumerate(CONFIGS):
            ms = (1.0 if j == 0 else 1.03) * math.exp(rng.normal(0, 0.01))
            rows.append(dict(common, config=json.dumps(config, sort_keys=True), ms=ms,
                             status="ok", agrees=True))
    flat = tm.train(pd.DataFrame(rows), seed=0)
    assert flat.auto(NAME) == "defaults"
    assert flat.choices(NAME, attrs)[0] == {}
    scores = flat._doc["algorithms"][NAME]["auto_scores"]
    assert scores["defaults"] >= max(v for v in scores.values() if v is not None)


def test_a_model_file_names_a_bad_auto_strategy_and_reads_one_without_it(model, tmp_path):
    path = tmp_path / "model.json"
    model.save(path)
    doc = json.loads(path.read_text())
    doc["algorithms"][NAME]["auto"] = "fastest"
    path.write_text(json.dumps(doc))
    with pytest.raises(tm.ModelError, match=f"model file {path}: .*auto 'fastest' is not one"):
        tm.load_model(path)
    doc["algorithms"][NAME]["auto"] = "tree"
    doc["algorithms"][NAME]["auto_scores"] = {"tree": "high"}
    path.write_text(json.dumps(doc))
    with pytest.raises(tm.ModelError, match=f"model file {path}: .*auto_scores is not a map"):
        tm.load_model(path)
    del doc["algorithms"][NAME]["auto"]  # a file written before the strategies: the regressor
    del doc["algorithms"][NAME]["auto_scores"]
    path.write_text(json.dumps(doc))
    assert tm.load_model(path).auto(NAME) == "regressor"


def test_without_a_defaults_row_auto_cannot_follow_the_defaults(train_table):
    """Where no usable row of ``{}`` exists, the pool's first entry is another configuration:
    the defaults' score is None and the strategy is a learned one."""
    table = train_table[train_table["config"] != "{}"]
    model = tm.train(table[table["graph"].isin([f"g{i}" for i in range(8)])], seed=0)
    scores = model._doc["algorithms"][NAME]["auto_scores"]
    assert scores["defaults"] is None and model.auto(NAME) != "defaults"
    assert {} not in model.pool(NAME)


def test_the_packaged_model_loads_and_its_configurations_are_legal(monkeypatch):
    """The model file the package ships (trained on the project's GPU) reads without error,
    tunes every algorithm of :data:`onyx_rapids.tuning.TUNED`, and every configuration it
    can choose is one of the algorithm's legal configurations (:func:`tuning.space`, with
    the features the training measured)."""
    from onyx_rapids import tuning

    monkeypatch.delenv(tm.MODEL_ENV, raising=False)
    model = tm.load_model(tm.default_model_path())
    assert model.algorithms == sorted(tuning.TUNED) and model.meta["backend"] == "gpu"
    for name in model.algorithms:
        features = tuning.FEATURES.get(name, 1)
        legal = {tuning.config_json(c, name) for c in tuning.space(name, features=features)}
        pool = [tuning.config_json(c, name) for c in model.pool(name)]
        assert pool[0] == "{}" and set(pool) <= legal | {"{}"}, name
        assert model.auto(name) in tm.STRATEGIES
