"""tuning="auto" / "search" (issue 38): the model's configuration runs, less what the caller
set; "search" times the top 3 once per graph; without a model for this device the defaults
run with a warning; a bad model file is an error naming it."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from graphs import pandas
import onyx_rapids as onyx
from onyx_rapids import cli, tuning, tuning_model
from onyx_rapids.algorithms.sssp import _edge_weights, default_delta

#: the configuration the fabricated table makes fastest, per algorithm
BEST = {"sssp": {"block_size": 256, "delta": 4.0},
        "weakly_connected_components": {"method": "propagate"},
        "pagerank": {"change_driven": True},
        **{name: {"block_size": 128} for name in ("bfs", "betweenness_centrality")}}
SMALL_POOL = [{}, {"block_size": 128}, {"block_size": 256}]
SSSP_POOL = [{}, {"block_size": 256, "delta": 4.0}, {"delta": 4.0}, {"block_size": 128},
             {"direction": "push"}, {"delta": 0.25}]


def _graphs():
    edges = {name: onyx.datasets.load_edges(name) for name in ("karate", "les_miserables",
                                                                "florentine_families")}
    out = {f"{name}-{d}": onyx.Graph.from_edgelist(df, directed=d)
           for name, df in edges.items() for d in (False, True)}
    return out


def _table(graphs, device=None):
    """A training table whose times make BEST fastest on every graph (no measuring)."""
    here, backend = tuning._this_device()
    rows = []
    pools = {"sssp": SSSP_POOL,
             "weakly_connected_components": tuning.pool("weakly_connected_components",
                                                        random_count=0),
             "pagerank": [{}, {"change_driven": True}, {"fold": False}, {"block_size": 128}],
             **{name: SMALL_POOL for name in ("bfs", "betweenness_centrality")}}
    for gname, g in graphs.items():
        attrs = {f"attr_{k}": v for k, v in g.attributes().items()}
        for name, pool in pools.items():
            for i, config in enumerate(pool):
                fast = tuning.canonical(config, name) == tuning.canonical(BEST[name], name)
                rows.append(dict(algorithm=name, graph=gname, config=tuning.config_json(
                    config, name), ms=1.0 if fast else 2.0 + i, status="ok", repeat=1,
                    device=device or here, backend=backend, agrees=True,
                    attributes_version=attrs["attr_version"], **attrs))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def model():
    return tuning_model.train(_table(_graphs()))


@pytest.fixture
def karate():
    return onyx.Graph.from_edgelist(onyx.datasets.load_edges("karate"))


def _distances(frame):
    """sssp's distances by vertex (a predecessor among equal-distance parents may differ)."""
    return pandas(frame).sort_values("vertex")[["vertex", "distance"]].reset_index(drop=True)


def _delta(g, factor):
    return factor * default_delta(g, _edge_weights(g, None)[:, 0])


def test_auto_runs_the_models_choice_equal_to_it_set_by_hand(model, karate, monkeypatch):
    out, info = onyx.sssp(karate, source=0, tuning=model, return_info=True)
    assert info.tuning["config"] == BEST["sssp"] and info.tuning["model"] == model.source
    monkeypatch.setattr(model, "rank", lambda *a: pytest.fail("predicted again"))
    _, again = onyx.sssp(karate, source=0, tuning=model, return_info=True)  # remembered
    assert again.tuning["config"] == BEST["sssp"] and again.tuning["attributes_seconds"] < 0.1
    monkeypatch.undo()
    by_hand = onyx.sssp(karate, source=0, block_size=256, delta=_delta(karate, 4.0))
    assert _distances(out).equals(_distances(by_hand))
    out, info = onyx.weakly_connected_components(karate, execution=onyx.Execution(
        tuning=model), return_info=True)
    assert info.tuning["config"] == {"method": "propagate"}
    assert pandas(out).equals(pandas(onyx.weakly_connected_components(karate,
                                                                      method="propagate")))
    out, info = onyx.pagerank(karate, tuning=model, return_info=True)
    assert info.tuning["config"] == {"change_driven": True} and info.change_driven is True
    assert pandas(out).equals(pandas(onyx.pagerank(karate, change_driven=True)))


@pytest.mark.parametrize("name", ["bfs", "betweenness_centrality"])  # the propagations: above
def test_every_tuned_algorithm_runs_the_choice(model, karate, name):
    inputs = tuning.training_inputs(name, karate, features=2)
    function = getattr(onyx, name)
    out, info = function(karate, **inputs, tuning=model, return_info=True)
    assert info.tuning["config"] == {"block_size": 128}
    ours, ref = pandas(out), pandas(function(karate, **inputs, block_size=128))
    assert list(ours.columns) == list(ref.columns)
    for col in ours.columns:
        if col == "predecessor":  # any parent one hop closer
            continue
        assert np.allclose(ours[col].to_numpy(float), ref[col].to_numpy(float), rtol=1e-6,
                           atol=1e-9), col


def test_what_the_caller_sets_wins_over_the_tuner(model, karate):
    out, info = onyx.sssp(karate, source=0, tuning=model, block_size=128, return_info=True)
    assert info.tuning["config"] == {"delta": 4.0}
    assert _distances(out).equals(_distances(onyx.sssp(karate, source=0, block_size=128,
                                                       delta=_delta(karate, 4.0))))
    _, info = onyx.sssp(karate, source=0, tuning=model, delta=0.5, return_info=True)
    assert info.tuning["config"] == {"block_size": 256}
    # the caller's direction rules out union-find (hook takes block_size only): propagate
    _, info = onyx.weakly_connected_components(karate, tuning=model, direction="push",
                                               return_info=True)
    assert info.tuning["config"].get("method") == "propagate"


def test_an_algorithm_the_model_does_not_tune_runs_its_defaults(model, karate):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, info = onyx.core_number(karate, tuning=model, return_info=True)
    assert info.tuning["config"] == {} and "does not tune core_number" in info.tuning["reason"]
    assert pandas(out).equals(pandas(onyx.core_number(karate)))


def test_search_times_the_top_three_once_per_graph_and_keeps_the_fastest(model, karate,
                                                                      monkeypatch):
    monkeypatch.setattr(tuning, "model_for", lambda t: (model, "test model"))
    out, info = onyx.sssp(karate, source=0, tuning="search", return_info=True)
    searched = info.tuning["searched"]
    assert info.tuning["mode"] == "search" and len(searched) == tuning.SEARCH_TOP
    assert searched[0]["config"] == json.dumps(BEST["sssp"], sort_keys=True)
    fastest = min(searched, key=lambda s: s["ms"])
    assert info.tuning["config"] == json.loads(fastest["config"])
    config = tuning._decoded(info.tuning["config"])
    by_hand = onyx.sssp(karate, source=0, **tuning.call_options("sssp", config, karate))
    assert _distances(out).equals(_distances(by_hand))
    original = karate.cached  # a second call reads the remembered times: no new search
    monkeypatch.setattr(karate, "cached", lambda key, build: original(
        key, lambda: pytest.fail(f"searched again ({key})")))
    _, again = onyx.sssp(karate, source=0, tuning="search", return_info=True)
    assert again.tuning["searched"] == searched


def test_without_a_model_for_this_device_the_defaults_run_with_a_warning(karate, monkeypatch,
                                                                         tmp_path):
    monkeypatch.setenv(tuning_model.MODEL_ENV, str(tmp_path / "none.json"))
    with pytest.warns(RuntimeWarning, match="no tuning model file .*none.json.*defaults"):
        out, info = onyx.pagerank(karate, tuning="auto", return_info=True)
    assert info.tuning["config"] == {} and info.tuning["model"] is None
    assert pandas(out).equals(pandas(onyx.pagerank(karate)))
    other = tuning_model.train(_table(_graphs(), device="NVIDIA H200"))
    path = tmp_path / "h200.json"
    other.save(path)
    monkeypatch.setenv(tuning_model.MODEL_ENV, str(path))
    with pytest.warns(RuntimeWarning, match="trained on NVIDIA H200"):
        _, info = onyx.sssp(karate, source=0, tuning="auto", return_info=True)
    assert info.tuning["config"] == {}


@pytest.mark.parametrize("damage, what", [
    (lambda text: "{not json", "not JSON"),
    (lambda text: text.replace('"format_version": 1', '"format_version": 2'), "format_version"),
])
def test_a_corrupt_model_file_is_an_error_naming_it(model, karate, monkeypatch, tmp_path,
                                                    damage, what):
    path = tmp_path / "model.json"
    model.save(path)
    path.write_text(damage(path.read_text()))
    monkeypatch.setenv(tuning_model.MODEL_ENV, str(path))
    with pytest.raises(tuning_model.ModelError, match=what) as e:
        onyx.pagerank(karate, tuning="auto")
    assert str(path) in str(e.value)


def test_bad_tuning_values_name_the_option(karate):
    with pytest.raises(ValueError, match="tuning must be None, 'auto', 'search'"):
        onyx.Execution(tuning="fast")
    with pytest.raises(ValueError, match="tuning must be"):
        onyx.pagerank(karate, tuning=3)


def test_the_command_line_tunes_and_runs_tuned(model, monkeypatch, tmp_path, capsys):
    path = tmp_path / "m.json"
    assert cli.main(["tune", "florentine_families", "karate", "--algorithms",
                     "weakly_connected_components", "--random", "0", "--repeat", "1",
                     "--out", str(path), "-q", "--degree-only"]) == 0
    written = tuning_model.load_model(path)
    assert written.algorithms == ["weakly_connected_components"] and not written.structure
    assert "wrote" in capsys.readouterr().out
    assert cli.main(["tune", "karate", "--out", str(tmp_path / "m.parquet")]) == 2
    assert cli.main(["tune", "karate", "--out", str(tmp_path / "q.json"), "--quick",
                     "--degree-only"]) == 2
    assert "give --quick or --degree-only, not both" in capsys.readouterr().err
    model.save(path)
    monkeypatch.setenv(tuning_model.MODEL_ENV, str(path))
    out = tmp_path / "wcc.csv"
    assert cli.main(["run", "weakly_connected_components", "--tuning", "auto", "--out",
                     str(out)]) == 0
    assert 'tuning=auto chose {"method": "propagate"}' in capsys.readouterr().err
    labels = pd.read_csv(out).sort_values("vertex")["labels"].to_numpy()
    ref = pandas(onyx.weakly_connected_components(onyx.Graph.from_edgelist(
        onyx.datasets.load_edges("karate"), weight="weight"))).sort_values("vertex")
    assert np.array_equal(labels, ref["labels"].to_numpy())


def test_a_model_without_structure_computes_only_the_cheap_attributes(karate):
    cheap = tuning_model.train(_table(_graphs()), structure=False)
    _, info = onyx.weakly_connected_components(karate, tuning=cheap, return_info=True)
    assert info.tuning["config"] == {"method": "propagate"}
    keys = [k for k in karate._cache if isinstance(k, tuple) and k[:1] == ("attributes",)]
    assert keys == [("attributes", "degrees")]  # no BFS sweeps, no wedges


@pytest.mark.parametrize("argv, what", [
    (["nowhere.parquet"], "no such file, nor an embedded graph"),
    (["karate", "--algorithms", "pagerankk"], "unknown algorithm 'pagerankk'"),
    (["karate", "--repeat", "0"], "--repeat must be >= 1"),
])
def test_tune_refuses_bad_input_before_measuring(tmp_path, capsys, argv, what):
    assert cli.main(["tune", *argv, "--out", str(tmp_path / "m.json")]) == 2
    assert what in capsys.readouterr().err and not (tmp_path / "m.json").exists()


def test_tuning_needs_a_graph_it_can_describe(model):
    with pytest.raises(ValueError, match="tuning needs an onyx_rapids.Graph, got str"):
        onyx.pagerank("edges.parquet", tuning=model)
