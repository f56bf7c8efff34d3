"""The tuning space (issue 38, onyx_rapids.tuning): the registry's options times the declared
candidates, less the refused combinations and the settings that change nothing; seeded samples;
sampled configurations run and give the default call's results."""

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest

from graphs import fail_configuration, pandas, watch_algorithm
import onyx_rapids as onyx
from onyx_rapids import registry, tuning
from onyx_rapids.algorithms.sssp import _edge_weights, default_delta


def test_a_small_space_is_the_whole_product():
    # minimum_spanning_tree declares block_size only
    assert tuning.space("minimum_spanning_tree") == [
        {}, {"block_size": 128}, {"block_size": 256}, {"block_size": 512}]


@pytest.mark.parametrize("name", ["pagerank", "sssp", "bfs", "weakly_connected_components"])
def test_every_configuration_is_legal_and_only_sets_what_matters(name):
    spec = registry.get(name)
    params = set(tuning.PARAMETERS.get(name, {}))
    configs = tuning.space(name)
    assert len({tuple(sorted(c.items(), key=lambda i: i[0])) for c in configs}) == len(configs)
    for c in configs:
        assert set(c) <= set(spec.options) | params
        spec.resolve(given={"source"} if name in ("bfs", "sssp") else set(),
                     **{k: v for k, v in c.items() if k not in params})  # not refused
        for option, (other, values) in tuning.ONLY_WITH.items():
            assert option not in c or c.get(other) in values, c


def test_refused_combinations_are_left_out_and_the_rest_kept():
    configs = tuning.space("pagerank")
    assert not any(c.get("fused") and c.get("change_driven") is True for c in configs)
    assert not any(c.get("fused") and c.get("direction") == "push" for c in configs)
    # every legal setting of the variant axes appears
    for fa, cd in itertools.product((True, False), (False, True, "auto")):
        assert any(c["feature_aware"] == fa and c["change_driven"] == cd for c in configs)
    assert not any("method" in c or "delta" in c for c in configs)


def test_parameters_belong_to_their_algorithm():
    assert {c["method"] for c in tuning.space("weakly_connected_components")} == {
        "hook", "propagate"}
    assert {float(c["delta"]) for c in tuning.space("sssp")} == {0.25, 1.0, 4.0}
    bfs = tuning.space("bfs")
    assert not any("width" in c or "delta" in c for c in bfs)
    assert tuning.space("bfs", given={"sources"}) != bfs  # k sources take no filter
    hook = [c for c in tuning.space("weakly_connected_components") if c["method"] == "hook"]
    assert all(set(c) <= {"method", "block_size"} for c in hook) and len(hook) == 4
    assert {c.get("width") for c in tuning.space("label_propagation", features=2)} == {
        None, 1, 2}
    assert {c.get("width") for c in tuning.space("pagerank")} == {None, 1}


def test_samples_are_seeded_distinct_members():
    a = tuning.sample("label_propagation", 20, seed=4)
    assert a == tuning.sample("label_propagation", 20, seed=4) != tuning.sample(
        "label_propagation", 20, seed=5)
    space = tuning.space("label_propagation")
    assert len(a) == 20 and all(c in space for c in a)
    assert len({tuple(sorted(c.items(), key=lambda i: i[0])) for c in a}) == 20
    assert tuning.sample("minimum_spanning_tree", 20) == tuning.space("minimum_spanning_tree")


def _small():
    """10 vertices 0..9, 24 weighted directed edges (a ring and chords: all reachable)."""
    rng = np.random.default_rng(2)
    src = np.r_[np.arange(10), rng.integers(0, 10, 14)]
    dst = np.r_[(np.arange(10) + 1) % 10, rng.integers(0, 10, 14)]
    return onyx.Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst,
                                                  "w": rng.uniform(0.5, 2, 24)}),
                                    weight="w", directed=True, duplicates="min")


def test_delta_factor_is_resolved_for_the_graph():
    g = _small()
    out = tuning.call_options("sssp", {"delta": tuning.DeltaFactor(4.0), "fused": False}, g)
    assert out["fused"] is False
    assert out["delta"] == pytest.approx(4 * default_delta(g, _edge_weights(g)[:, 0]))


@pytest.fixture(scope="module")
def small():
    return _small()


@pytest.mark.parametrize("name, column, call", [
    ("sssp", "distance", lambda g, kw: onyx.sssp(g, source=0, **kw)),
    ("weakly_connected_components", "labels", lambda g, kw: onyx.weakly_connected_components(
        g, **kw)),
    ("pagerank", "pagerank", lambda g, kw: onyx.pagerank(g, alpha=0.6, tol=1e-5, **kw)),
])
def test_sampled_configurations_give_the_default_result(small, name, column, call):
    want = pandas(call(small, {})).set_index("vertex")[column].sort_index()
    for config in tuning.sample(name, 1 if name == "pagerank" else 2, seed=7):
        got = pandas(call(small, tuning.call_options(name, config, small)))
        got = got.set_index("vertex")[column].sort_index()
        if name == "pagerank":
            np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), atol=2e-5)
        else:
            pd.testing.assert_series_equal(got, want, check_dtype=False)


def test_measure_appends_a_row_per_configuration(small, tmp_path):
    table = tmp_path / "train.parquet"
    rows = tuning.measure(small, "weakly_connected_components", count=2, seed=1, repeat=1,
                          table=table, graph_name="small")
    assert len(rows) == 2 and (rows["status"] == "ok").all()
    assert rows["ms"].is_monotonic_increasing and (rows["ms"] > 0).all()
    assert np.allclose(rows["edges_per_s"], small.m / (rows["ms"] / 1e3))
    assert {"algorithm", "graph", "config", "device", "backend", "attributes_version",
            "attr_n", "attr_out_degree_gini", "attr_diameter_estimate"} <= set(rows.columns)
    assert rows["attr_m"].tolist() == [small.m] * 2 and set(rows["graph"]) == {"small"}
    drawn = tuning.sample("weakly_connected_components", 2, seed=1)
    assert sorted(rows["config"]) == sorted(json.dumps(c, sort_keys=True) for c in drawn)
    again = tuning.measure(small, "minimum_spanning_tree", count=1, repeat=1, table=table)
    assert len(again) == 3 and len(pd.read_parquet(table)) == 3  # appended
    assert again["status"].iloc[-1].startswith("refused: ")  # MST needs an undirected graph
    for bad in (0, -1, 1.5, True):  # no timed pass: nothing to take a median of
        with pytest.raises(ValueError, match="repeat must be an integer of at least 1"):
            tuning.measure(small, "weakly_connected_components", configs=[{}], repeat=bad)


def test_measure_records_a_refused_configuration(small, monkeypatch):
    monkeypatch.setattr(tuning, "sample", lambda *a, **k: [{"delta": -1.0}])
    rows = tuning.measure(small, "sssp", {"source": 0}, count=1, repeat=1)
    assert rows["status"][0].startswith("refused: ") and "delta" in rows["status"][0]
    assert np.isnan(rows["ms"][0])


def test_a_configuration_that_fails_is_recorded_and_the_rest_measured(monkeypatch):
    """A kernel that cannot launch (as CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES did on an H200)
    fails its row, which then disagrees, and the next configurations are still measured."""
    g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("florentine_families"))
    fail_configuration(monkeypatch, {"method": "propagate"}, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
    configs = [{}, {"method": "propagate"}, {"block_size": 128}]
    rows = tuning.measure(g, "weakly_connected_components", configs=configs, repeat=1,
                          check=tuning.agreement).set_index("config")
    failed = rows.loc['{"method": "propagate"}']
    assert failed["status"] == "error: RuntimeError: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    assert np.isnan(failed["ms"]) and not failed["agrees"]
    assert (rows.drop(index='{"method": "propagate"}')["status"] == "ok").all()
    assert rows.drop(index='{"method": "propagate"}')["agrees"].all()


def test_agreement_compares_results_vertex_by_vertex():
    a = pd.DataFrame({"vertex": [0, 1, 2], "distance": [0.0, 1.0, np.inf],
                      "predecessor": pd.array([None, 0, None], dtype="Int64")})
    shuffled = a.iloc[[2, 0, 1]].assign(predecessor=pd.array([None, None, 2], dtype="Int64"))
    assert tuning.agreement(a, shuffled) == (True, "agrees")  # order and parents free
    assert not tuning.agreement(a, a.assign(distance=[0.0, 1.0, 5.0]))[0]  # reached
    assert not tuning.agreement(a, a.assign(distance=[0.0, 1.01, np.inf]))[0]
    assert tuning.agreement(a, a.assign(distance=[0.0, 1.0000001, np.inf]))[0]
    labels = pd.DataFrame({"vertex": range(200), "label": [0] * 200})
    assert tuning.agreement(labels, labels.assign(label=[1] + [0] * 199))[0]  # a near tie
    assert not tuning.agreement(labels, labels.assign(label=[1] * 3 + [0] * 197))[0]
    wcc = pd.DataFrame({"vertex": range(3), "labels": [0, 0, 2]})
    assert not tuning.agreement(wcc, wcc.assign(labels=[0, 0, 0]))[0]
    assert "columns" in tuning.agreement(wcc, wcc.drop(columns="labels"))[1]


def test_measure_passes_every_input_to_the_algorithm():
    """An input named like one of measure's own arguments (betweenness' ``seed``) reaches the
    algorithm: the sampled sources are the same in every call, so every configuration
    computes what the defaults compute (measure's own ``seed`` once took it, and each call drew
    other sources: rel_l2 0.1-1.4 against the defaults, on the GPU and under the simulator)."""
    g = onyx.Graph.from_edgelist(onyx.datasets.grid_2d(4, 5))  # 16 of 20 vertices sampled
    inputs = tuning.training_inputs("betweenness_centrality", g)
    assert inputs == {"k": 16, "seed": 37}
    nfa = {"feature_aware": False}  # (a thread a vertex: the simulator's fastest)
    rows = tuning.measure(g, "betweenness_centrality", inputs, repeat=1, seed=5,
                          configs=[nfa, {**nfa, "direction": "push"}], check=tuning.agreement)
    assert rows["agrees"].all(), rows["check_detail"].tolist()


def test_collect_checks_every_configuration_against_the_defaults():
    g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("florentine_families"))
    table = tuning.collect({"florentine": g}, ["weakly_connected_components"], repeat=1,
                           random_count=0)
    assert len(table) == len(tuning.pool("weakly_connected_components", random_count=0))
    assert table["agrees"].all() and (table["check_detail"] == "agrees").all()


def test_a_configuration_far_from_the_first_passs_fastest_is_timed_once(monkeypatch):
    """Over FAR_FROM_BEST times the first timed pass's fastest, one timed call places it."""
    import time as clock

    watch_algorithm(monkeypatch, "weakly_connected_components",
                    lambda k: clock.sleep(0.2) if k.get("block_size") == 128 else None)
    g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("florentine_families"))
    configs = [{"block_size": 128}, {"block_size": 64}, {"block_size": 128, "method":
                                                         "propagate"}]
    rows = tuning.measure(g, "weakly_connected_components", configs=configs,
                          repeat=3).set_index("config")
    assert rows["repeat"].to_dict() == {
        '{"block_size": 128}': 1, '{"block_size": 64}': 3,
        '{"block_size": 128, "method": "propagate"}': 1}


def test_a_slow_configuration_is_timed_once(monkeypatch):
    g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("florentine_families"))
    configs = [{}, {"method": "propagate"}]
    monkeypatch.setattr(tuning, "FAR_FROM_BEST", math.inf)  # (propagate is far from hook)
    monkeypatch.setattr(tuning, "SLOW_MS", math.inf)  # (the simulator's calls take ~0.5 s)
    rows = tuning.measure(g, "weakly_connected_components", configs=configs, repeat=3)
    assert rows["repeat"].tolist() == [3, 3]
    monkeypatch.setattr(tuning, "SLOW_MS", 0.0)  # every call is slow
    rows = tuning.measure(g, "weakly_connected_components", configs=configs, repeat=3)
    assert rows["repeat"].tolist() == [1, 1] and (rows["ms"] > 0).all()


def test_timed_passes_interleave_without_the_garbage_collector_and_the_first_is_timed_again(
        monkeypatch):
    """On an H200 the same call timed at different points of a pool differed (the defaults,
    the first call of every pass after a collection, 1.3-1.6x slower than the identical
    {"block_size": 256}; personalized_pagerank's default-equivalent configurations 27 and
    47 ms).  After one collection and an untimed call, timed passes call every configuration
    once in turn, each pass starting one further on, with the collector off (on again
    after), and the first configuration timed again at the end, alternating with the fastest
    other, gives the run's drift."""
    import gc

    g = onyx.Graph.from_edgelist(onyx.datasets.load_edges("florentine_families"))
    seen = []
    watch_algorithm(monkeypatch, "weakly_connected_components",
                    lambda k: seen.append((gc.isenabled(), k.get("block_size"))))
    monkeypatch.setattr(tuning, "FAR_FROM_BEST", math.inf)  # every call timed, however slow
    monkeypatch.setattr(tuning, "SLOW_MS", math.inf)
    rows = tuning.measure(g, "weakly_connected_components",
                          configs=[{"block_size": 64}, {"block_size": 128},
                                   {"block_size": 192}], repeat=2)
    assert gc.isenabled()
    # the warm-up pass (collector on), an untimed call, two timed passes in turn (the second
    # from the second configuration on), the first again alternating with the fastest other
    off = [(False, b) for b in (64, 128, 192, 128, 192, 64)]
    assert seen[:7] == [(True, 64), (True, 128), (True, 192), (False, 64)] + off[:3]
    assert seen[7:10] == off[3:]
    fastest = rows.loc[rows["config"] != tuning.config_json({"block_size": 64}), "ms"].idxmin()
    other = json.loads(rows.loc[fastest, "config"])["block_size"]
    assert seen[10:] == [(False, 64), (False, other)] * 2
    assert rows["reference_drift"].nunique() == 1 and rows["reference_drift"].iloc[0] > 0
    gc.disable()  # a caller's disabled collector stays disabled
    try:
        tuning.measure(g, "weakly_connected_components", configs=[{}], repeat=1)
        assert not gc.isenabled()
    finally:
        gc.enable()
