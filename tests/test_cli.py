"""The onyx-rapids command line, called in-process through cli.main (and once as a process).

Every algorithm of the registry runs through ``onyx-rapids run`` (one test each, parametrized
from ``registry.ALGORITHMS``) on the embedded karate graph or the generated ratings graph, with
the cheap variant and few iterations: every kernel launch costs under the CUDA simulator.
"""

import dataclasses
import functools
import io
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import onyx_rapids
from onyx_rapids import cli, device, registry
from graphs import run_cli


def assert_one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.startswith("onyx-rapids: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def leftover_temp_files(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp") or
            p.name.startswith(".")]


def fast(name):
    """Flags for a quick run of algorithm ``name``, read from its declaration: one thread per
    vertex where the algorithm has the choice, and few iterations."""
    spec = registry.get(name)
    argv = ["--quiet"]
    if any("feature_aware" in v for v in spec.variants()):  # the default run's variant takes it
        argv.append("--no-feature-aware")
    params = spec.params
    if "max_iter" in params:
        argv += ["--param", "max_iter=4"]
    if "iterations" in params:
        argv += ["--param", "iterations=2"]
    if name in BETWEENNESS:  # a few sampled sources, not all 34 (a lane each)
        argv += ["--k", str(BC_SAMPLE), "--param", f"seed={BC_SEED}"]
    return argv


BETWEENNESS = ("betweenness_centrality", "edge_betweenness_centrality")
BC_SAMPLE, BC_SEED = 6, 1


def expand_columns(spec, columns):
    """The spec's columns with each ``{i}`` pattern expanded to the columns of ``columns`` that
    match it, which must be numbered 0..k-1 (k >= 1)."""
    expanded = []
    for pattern in spec.columns:
        if "{i}" not in pattern:
            expanded.append(pattern)
            continue
        regex = re.compile(re.escape(pattern).replace(r"\{i\}", r"(\d+)") + "$")
        found = sorted(int(m.group(1)) for c in columns if (m := regex.match(str(c))))
        assert found == list(range(len(found))) and found, (pattern, list(columns))
        expanded += [pattern.format(i=i) for i in found]
    return expanded


# --------------------------------------------------------------------- every algorithm runs

KARATE_N = 34


def _column(df, name):
    return df.set_index("vertex")[name]


def _check_pagerank(df):
    assert abs(df["pagerank"].sum() - 1.0) < 1e-4
    assert (df["pagerank"] > 0).all()


def _check_personalized_pagerank(df):  # default sources: the karate leaders 0 and 33
    for j, leader in enumerate((0, 33)):
        ppr = _column(df, f"ppr_{j}")
        assert abs(ppr.sum() - 1.0) < 1e-4
        assert ppr.idxmax() == leader


def _check_label_propagation(df):  # default seeds: vertex 0 in club 0, vertex 33 in club 1
    labels = _column(df, "label")
    assert labels[0] == 0 and labels[33] == 1
    lp = df[["lp_0", "lp_1"]].to_numpy()
    assert ((lp >= 0) & (lp <= 1)).all()


def _check_belief_propagation(df):
    beliefs = df.filter(like="belief_").to_numpy()
    assert np.allclose(beliefs.sum(axis=1), 1.0, atol=1e-4)
    assert ((beliefs >= 0) & (beliefs <= 1)).all()


def _check_positive(prefix):
    def check(df):
        values = df.filter(like=prefix).to_numpy()
        assert np.isfinite(values).all() and (values > 0).all()
    return check


def _check_als(df):
    assert len(df) > KARATE_N or len(df) > 0
    assert sorted(df["side"].unique()) == ["item", "user"]
    assert df.duplicated(["side", "vertex"]).sum() == 0
    assert np.isfinite(df.filter(like="lf_").to_numpy()).all()


def _check_traversal(df):  # default source: vertex 0
    distance = _column(df, "distance")
    predecessor = _column(df, "predecessor")
    assert distance[0] == 0 and pd.isna(predecessor[0])
    assert predecessor.drop(0).notna().all()  # karate is connected
    assert (distance.drop(0) > 0).all() and np.isfinite(distance).all()


def _check_bfs(df):
    _check_traversal(df)
    distance, predecessor = _column(df, "distance"), _column(df, "predecessor")
    assert distance.max() == 3  # karate's eccentricity of vertex 0
    others = predecessor.drop(0).astype(int)
    assert (distance[others].to_numpy() == distance.drop(0).to_numpy() - 1).all()


def _check_components(df):
    assert df["labels"].nunique() == 1 and df["labels"].iloc[0] == 0


def _check_core_number(df):
    assert df["core_number"].max() == 4 and df["core_number"].min() == 1


def _check_k_core(df):  # k = 2: every member but vertex 11, karate's one leaf
    assert len(df) == KARATE_N - 1 and 11 not in set(df["vertex"])
    assert (df["core_number"] >= 2).all()


def _check_minimum_spanning_tree(df):  # karate: connected, weighted by default
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    edges = onyx_rapids.datasets.load_edges("karate")
    matrix = csr_matrix((edges["weight"].astype(np.float64), (edges["src"], edges["dst"])),
                        shape=(KARATE_N, KARATE_N))
    assert len(df) == KARATE_N - 1 and (df["src"] < df["dst"]).all()
    assert abs(df["weight"].astype(np.float64).sum() - minimum_spanning_tree(matrix).sum()) < 1e-9


def _bc_reference(edge: bool):
    """The float64 oracle's betweenness of karate from the sources ``fast`` samples."""
    import oracles_betweenness as oracle
    from graphs import csr_edges
    from onyx_rapids.algorithms.betweenness_centrality import sample_sources

    g = onyx_rapids.Graph.from_edgelist(onyx_rapids.datasets.load_edges("karate"))
    sources = sample_sources(g, BC_SAMPLE, BC_SEED)  # karate's ids are its internal ones
    src, dst = csr_edges(g)
    if edge:
        return oracle.edge_betweenness(g.n, src, dst, directed=False, sources=sources)
    return oracle.betweenness(g.n, src, dst, directed=False, sources=sources)


def _check_betweenness(df):
    assert np.allclose(df["betweenness_centrality"], _bc_reference(False)[df["vertex"]])


def _check_edge_betweenness(df):
    ref = _bc_reference(True)
    assert len(df) == len(ref) and (df["src"] < df["dst"]).all()
    assert np.allclose(df["betweenness_centrality"],
                       [ref[(u, v)] for u, v in zip(df["src"], df["dst"])])


CHECKS = {
    "pagerank": _check_pagerank,
    "personalized_pagerank": _check_personalized_pagerank,
    "label_propagation": _check_label_propagation,
    "feature_propagation": _check_positive("h_"),
    "als": _check_als,
    "belief_propagation": _check_belief_propagation,
    "multi_manifold_ranking": _check_positive("mmr_"),
    "multimodal_learning": _check_positive("mml_"),
    "bfs": _check_bfs,
    "sssp": _check_traversal,
    "weakly_connected_components": _check_components,
    "core_number": _check_core_number,
    "k_core": _check_k_core,
    "minimum_spanning_tree": _check_minimum_spanning_tree,
    "strongly_connected_components": _check_components,  # karate taken both ways
    "betweenness_centrality": _check_betweenness,
    "edge_betweenness_centrality": _check_edge_betweenness,
}


@pytest.mark.parametrize("name", list(registry.ALGORITHMS))
def test_every_algorithm_runs(capsys, tmp_path, name):
    spec = registry.get(name)
    out = tmp_path / f"{name}.parquet"
    code, stdout, err = run_cli(capsys, "run", name, *fast(name), "--out", out)
    assert code == 0, err
    assert stdout == "" and "Traceback" not in err
    assert f"algorithm:  {name}" in err and "iterations:" in err and "wall time:" in err
    df = pd.read_parquet(out)
    assert sorted(df.columns) == sorted(expand_columns(spec, df.columns))
    keys = ["src", "dst"] if "src" in df else ["side", "vertex"] if "side" in df else "vertex"
    assert len(df) == len(df.drop_duplicates(keys))
    if spec.graph != "bipartite" and name != "k_core" and "vertex" in df:
        assert sorted(df["vertex"]) == list(range(KARATE_N))
    numeric = df.drop(columns=["side"], errors="ignore").select_dtypes("number")
    assert not numeric.isna().any().drop("predecessor", errors="ignore").any()
    CHECKS[name](df)  # every registered algorithm gets a value check here


def test_registry_is_complete_and_listed(capsys):
    assert len(registry.ALGORITHMS) == 17
    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    for name, spec in registry.ALGORITHMS.items():
        assert f"{name}: {spec.summary}" in out
    assert "--sources (vertices" in out and "--labels (labels)" in out

    code, out, _ = run_cli(capsys, "algorithms", "--json")
    assert code == 0
    listing = {d["name"]: d for d in json.loads(out)}
    assert list(listing) == list(registry.ALGORITHMS)
    bfs = listing["bfs"]
    assert bfs["columns"] == list(registry.get("bfs").columns)
    assert [i["flag"] for i in bfs["inputs"]] == ["--source", "--sources"]
    assert set(bfs["options"]) == set(registry.get("bfs").options)
    assert "max_iter" in listing["pagerank"]["params"]
    assert "alpha" not in listing["bfs"]["params"]

    pytest.importorskip("distributed")
    code, out, _ = run_cli(capsys, "list", "--dask", "--json")
    assert code == 0
    dask = {d["name"]: d for d in json.loads(out)}
    assert set(dask) < set(listing) and dask["pagerank"]["options"] == {
        "change_driven": [False, True]}
    assert dask["label_propagation"]["inputs"] == listing["label_propagation"]["inputs"]


# ------------------------------------------------------------------------ inputs and graphs


def test_vertex_inputs_and_params(capsys):
    code, out, err = run_cli(capsys, "run", "bfs", "--source", "33", "--head", "0", "--quiet")
    assert code == 0, err
    rows = [line.split() for line in out.splitlines()[1:-1]]
    by_vertex = {int(r[0]): r for r in rows}
    assert by_vertex[33][1] == "0" and by_vertex[33][2] == "<NA>"

    code, out, err = run_cli(capsys, "run", "personalized_pagerank", "--sources", "5,6,7",
                             *fast("personalized_pagerank"), "--param", "alpha=0.5",
                             "--param", "tol=1e-3")
    assert code == 0, err
    assert out.splitlines()[0].split() == ["vertex", "ppr_0", "ppr_1", "ppr_2"]


def test_labels_file_and_k(capsys, tmp_path):
    seeds = tmp_path / "seeds.parquet"
    pd.DataFrame({"vertex": [0, 33, 16], "label": [1, 0, 2]}).to_parquet(seeds)
    out = tmp_path / "lp.parquet"
    code, _, err = run_cli(capsys, "run", "label_propagation", *fast("label_propagation"),
                           "--labels", seeds, "--out", out)
    assert code == 0, err
    df = pd.read_parquet(out).set_index("vertex")
    assert {"lp_0", "lp_1", "lp_2"} <= set(df.columns)  # k from the labels: 3 classes
    assert df.loc[0, "label"] == 1 and df.loc[33, "label"] == 0 and df.loc[16, "label"] == 2


def test_features_file_and_matrix(capsys, tmp_path):
    features = tmp_path / "x.parquet"
    x = pd.DataFrame({"vertex": np.arange(KARATE_N)[::-1], "a": 1.0, "b": 2.0, "c": 3.0})
    x.to_parquet(features)
    code, out, err = run_cli(capsys, "run", "feature_propagation", *fast("feature_propagation"),
                             "--features", features, "--head", "1")
    assert code == 0, err
    assert out.splitlines()[0].split() == ["vertex", "h_0", "h_1", "h_2"]

    code, out, err = run_cli(capsys, "run", "belief_propagation", *fast("belief_propagation"),
                             "--k", "3", "--potential", "0.8,0.1,0.1;0.1,0.8,0.1;0.1,0.1,0.8")
    assert code == 0, err
    assert "belief_2" in out
    code, _, err = run_cli(capsys, "run", "belief_propagation", *fast("belief_propagation"),
                           "--potential", "0.9,0.1;0.2,0.9")
    assert_one_line_error(code, err, "symmetric")


def test_parquet_graph_columns_kinds_and_multigraph(capsys, tmp_path):
    edges = tmp_path / "edges.parquet"
    pd.DataFrame({"u": [0, 0, 1, 2, 2], "v": [1, 1, 2, 0, 3]}).to_parquet(edges)
    code, _, err = run_cli(capsys, "run", "core_number", "--graph", edges, "--src", "u",
                           "--dst", "v", "--quiet", "--directed")
    assert code == 0, err
    assert "n=4, m=4 (directed" in err  # the parallel 0->1 merged, as cuGraph's Graph does
    code, _, err = run_cli(capsys, "run", "core_number", "--graph", edges, "--src", "u",
                           "--dst", "v", "--quiet", "--multigraph", "--directed")
    assert code == 0, err
    assert "n=4, m=5 (directed" in err
    # belief propagation needs an undirected graph: it gets one without --undirected
    code, _, err = run_cli(capsys, "run", "belief_propagation", "--graph", edges, "--src", "u",
                           "--dst", "v", *fast("belief_propagation"))
    assert code == 0, err
    assert "(undirected" in err


def test_als_on_a_ratings_file(capsys, tmp_path):
    ratings = tmp_path / "ratings.parquet"
    pd.DataFrame({"user": [0, 0, 1, 1, 2, 2], "item": [0, 1, 1, 2, 0, 2],
                  "stars": [5.0, 3.0, 4.0, 1.0, 2.0, 5.0]}).to_parquet(ratings)
    out = tmp_path / "als.parquet"
    code, _, err = run_cli(capsys, "run", "als", "--graph", ratings, "--left", "user",
                           "--right", "item", "--weight", "stars", "--k", "3", *fast("als"),
                           "--out", out)
    assert code == 0, err
    df = pd.read_parquet(out)
    assert len(df) == 6  # users 0..2 and items 0..2 stay apart although their ids overlap
    assert {"lf_0", "lf_1", "lf_2"} <= set(df.columns) and "lf_3" not in df.columns


def test_generate_then_run_on_parquet(capsys, tmp_path):
    edges = tmp_path / "rmat5.parquet"
    code, out, err = run_cli(capsys, "generate", "rmat", "--scale", "5", "--out", edges)
    assert code == 0, err
    assert str(edges) in out and "512 edges" in out
    assert "generating rmat" in err
    df = pd.read_parquet(edges)
    assert list(df.columns) == ["src", "dst"] and len(df) == 512

    code, _, err = run_cli(capsys, "generate", "rmat", "--scale", "5", "--out", edges)
    assert_one_line_error(code, err, "already exists")
    code, _, err = run_cli(capsys, "generate", "rmat", "--scale", "5", "--out", edges,
                           "--force", "--seed", "1", "--weighted")
    assert code == 0, err
    assert list(pd.read_parquet(edges).columns) == ["src", "dst", "weight"]

    ranks = tmp_path / "pr.parquet"
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", edges, "--weight", "weight",
                           *fast("pagerank"), "--out", ranks, "--directed")
    assert code == 0, err
    assert "directed, weights weight" in err
    pr = pd.read_parquet(ranks)
    assert abs(float(pr["pagerank"].sum()) - 1.0) < 1e-4
    assert leftover_temp_files(tmp_path) == []


def test_dataset_by_name(capsys):
    code, out, err = run_cli(capsys, "run", "core_number", "--dataset", "florentine_families",
                             "--quiet")
    assert code == 0, err
    assert "n=15" in err and "15 rows in all" in out
    code, out, err = run_cli(capsys, "run", "bfs", "--graph", "florentine_families", "--quiet")
    assert code == 0, err  # a name also works for --graph; the start: the highest-degree vertex
    assert "(source=" not in err and "n=15" in err


# ----------------------------------------------------------------------------------- output


def test_out_formats_keep_nulls(capsys, tmp_path):
    parquet, csv, js = tmp_path / "b.parquet", tmp_path / "b.csv", tmp_path / "b.json"
    for out in (parquet, csv, js):
        code, _, err = run_cli(capsys, "run", "bfs", "--quiet", "--out", out)
        assert code == 0, err
    df = pd.read_parquet(parquet)
    assert list(df.columns) == ["vertex", "distance", "predecessor"]
    assert df["predecessor"].isna().sum() == 1  # the source's: a null, not -1
    assert str(df["predecessor"].dtype) == "Int64"

    lines = csv.read_text().splitlines()
    assert lines[0] == "vertex,distance,predecessor"
    assert lines[1] == "0,0," and len(lines) == KARATE_N + 1
    assert pd.read_csv(csv)["predecessor"].isna().sum() == 1

    records = json.loads(js.read_text())
    assert len(records) == KARATE_N
    assert records[0] == {"vertex": 0, "distance": 0, "predecessor": None}
    assert leftover_temp_files(tmp_path) == []


def test_out_unknown_format_refused_before_running(capsys, tmp_path):
    out = tmp_path / "pr.txt"
    code, _, err = run_cli(capsys, "run", "pagerank", "--out", out)
    assert_one_line_error(code, err, "'.txt'", ".parquet", ".csv")
    assert "running" not in err and "loading" not in err
    assert not out.exists()
    code, _, err = run_cli(capsys, "generate", "grid", "--scale", "3", "--out", tmp_path / "g")
    assert_one_line_error(code, err, "no extension")


def test_out_refuses_overwrite_then_force(capsys, tmp_path):
    out = tmp_path / "cc.csv"
    out.write_bytes(b"precious")
    code, _, err = run_cli(capsys, "run", "core_number", "--quiet", "--out", out)
    assert_one_line_error(code, err, "already exists", "--force")
    assert out.read_bytes() == b"precious"

    code, _, err = run_cli(capsys, "run", "core_number", "--quiet", "--out", out, "--force")
    assert code == 0, err
    assert list(pd.read_csv(out).columns) == ["vertex", "core_number"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cc.csv"]


def test_prints_rows_to_stdout(capsys):
    code, out, err = run_cli(capsys, "run", "pagerank", *fast("pagerank"), "--head", "0")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["vertex", "pagerank"]
    assert len(lines) == 1 + KARATE_N + 1 and lines[-1] == f"({KARATE_N} rows)"
    code, out, _ = run_cli(capsys, "run", "core_number", "--quiet")
    assert code == 0
    assert len(out.splitlines()) == 1 + 10 + 1 and "34 rows in all" in out


# --------------------------------------------------------------------------------- progress


def test_progress_heartbeat_and_summary(capsys, monkeypatch):
    spec = registry.get("pagerank")

    @functools.wraps(spec.function)  # the CLI reads the parameters from the signature
    def slow(*args, **kwargs):  # long enough for a heartbeat on any backend
        time.sleep(0.2)
        return spec.function(*args, **kwargs)

    monkeypatch.setitem(registry.ALGORITHMS, "pagerank", dataclasses.replace(spec, function=slow))
    argv = ["run", "pagerank", "--no-feature-aware", "--param", "max_iter=3"]
    code, _, err = run_cli(capsys, *argv, "--heartbeat", "0.01")
    assert code == 0, err
    assert "running pagerank (max_iter=3, feature_aware=False)" in err
    assert re.search(r"pagerank still running: \d+\.\d s elapsed", err)
    assert "iterations: 3" in err and "converged:  no" in err
    assert "feature_aware=False" in err
    warnings_shown = [line for line in err.splitlines() if "warning:" in line]
    assert warnings_shown == ["onyx-rapids: warning: pagerank did not converge in 3 "
                              "iterations; raise max_iter or tol for a converged result"]

    monkeypatch.setenv(cli.HEARTBEAT_ENV, "0.01")
    code, _, err = run_cli(capsys, *argv)
    assert code == 0 and "still running" in err
    code, _, err = run_cli(capsys, *argv, "--quiet")
    assert code == 0 and "still running" not in err and "running pagerank" not in err
    assert "iterations: 3" in err  # the summary stays


def test_heartbeat_thread_beats_and_stops():
    stream = io.StringIO()
    with cli.Heartbeat(cli.Progress(stream=stream), "x", 0.005) as beat:
        time.sleep(0.1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == beat.beats >= 2
    assert all(re.fullmatch(r"\[ *\d+\.\d\ds\] x still running: \d+\.\d s elapsed", line)
               for line in lines), lines
    time.sleep(0.03)
    assert stream.getvalue().splitlines() == lines  # stopped
    quiet = io.StringIO()
    with cli.Heartbeat(cli.Progress(quiet=True, stream=quiet), "x", 0.005):
        time.sleep(0.03)
    assert quiet.getvalue() == ""


# ------------------------------------------------------------------------------ info & co.


def test_version(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0
    assert out.strip() == f"onyx-rapids {onyx_rapids.__version__}"


def test_module_entry_point_runs_info():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env.pop("ONYX_RAPIDS_BACKEND", None)  # on a GPU machine the suite may force "gpu"
    proc = subprocess.run([sys.executable, "-m", "onyx_rapids", "info"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "backend:" in proc.stdout and "simulator" in proc.stdout  # the child forces it
    assert "numba:" in proc.stdout


def test_info_json(capsys):
    code, out, _ = run_cli(capsys, "info", "--json")
    assert code == 0
    assert json.loads(out)["backend"] == device.BACKEND


def test_datasets_lists_embedded_graphs(capsys):
    code, out, _ = run_cli(capsys, "datasets")
    assert code == 0
    karate = next(line for line in out.splitlines() if line.startswith("karate"))
    assert karate.split()[1:4] == ["34", "78", "no"]
    assert "les_miserables" in out and "florentine_families" in out


# --------------------------------------------------------------------------------- bad inputs


def test_unsupported_execution_option_refused_by_the_registry(capsys):
    code, _, err = run_cli(capsys, "run", "core_number", "--direction", "push")
    assert_one_line_error(code, err, "core_number does not support", "direction='push'",
                          "fused, block_size")
    assert "loading" not in err  # refused before the graph is read
    code, _, err = run_cli(capsys, "run", "bfs", "--change-driven")
    assert_one_line_error(code, err, "bfs does not support", "change_driven=True")


def test_bad_param_name_lists_the_valid_ones(capsys):
    code, _, err = run_cli(capsys, "run", "pagerank", "--param", "alpah=0.9")
    valid = ", ".join(registry.get("pagerank").params)
    assert_one_line_error(code, err, "pagerank has no parameter 'alpah'", valid)
    assert "alpha" in valid and "max_iter" in valid
    code, _, err = run_cli(capsys, "run", "pagerank", "--param", "fold=true")
    assert_one_line_error(code, err, "execution option", "--fold")
    code, _, err = run_cli(capsys, "run", "pagerank", "--param", "alpha")
    assert_one_line_error(code, err, "name=value")
    code, _, err = run_cli(capsys, "run", "pagerank", "--param", "tol=0")
    assert_one_line_error(code, err, "tol")


def test_literal_param_values():
    assert cli._literal("0.5") == 0.5 and cli._literal("10") == 10
    assert cli._literal("true") is True and cli._literal("None") is None
    assert cli._literal("0.5,0.3") == [0.5, 0.3] and cli._literal("[1, 2]") == [1, 2]
    assert cli._literal("hook") == "hook"


def test_inputs_the_algorithm_does_not_take(capsys, tmp_path):
    code, _, err = run_cli(capsys, "run", "pagerank", "--source", "3")
    assert_one_line_error(code, err, "pagerank does not take --source", "--personalization")
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", tmp_path / "e.parquet",
                           "--source", "u")
    assert_one_line_error(code, err, "--source", "--src")
    code, _, err = run_cli(capsys, "run", "core_number", "--k", "3")
    assert_one_line_error(code, err, "core_number does not take --k")
    code, _, err = run_cli(capsys, "run", "bfs", "--source", "zero")
    assert_one_line_error(code, err, "'zero' is not a vertex id")
    code, _, err = run_cli(capsys, "run", "bfs", "--source", "99", "--quiet")
    assert_one_line_error(code, err, "99")


def test_generate_too_large_is_a_user_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, "generate", "rmat", "--scale", "40", "--out",
                           tmp_path / "huge.parquet")
    assert_one_line_error(code, err, "scale")
    assert list(tmp_path.iterdir()) == []


def test_unknown_algorithm_lists_available(capsys):
    code, _, err = run_cli(capsys, "run", "pagerankk")
    assert_one_line_error(code, err, "unknown algorithm 'pagerankk'", *registry.ALGORITHMS)


def test_missing_and_unreadable_graph_files(capsys, tmp_path):
    code, _, err = run_cli(capsys, "run", "core_number", "--graph", tmp_path / "nope.parquet")
    assert_one_line_error(code, err, "nope.parquet", "no such")
    bogus = tmp_path / "edges.csv"
    bogus.write_text("src,dst\n0,1\n1,2\n")
    code, _, err = run_cli(capsys, "run", "core_number", "--graph", bogus)
    assert_one_line_error(code, err, "edges.csv", "not a readable Parquet file")


def test_misspelled_column_and_dataset(capsys):
    code, _, err = run_cli(capsys, "run", "core_number", "--src", "srcc")
    assert_one_line_error(code, err, "'srcc'", "no such column", "'src'")
    code, _, err = run_cli(capsys, "run", "core_number", "--graph", "karat")
    assert_one_line_error(code, err, "'karat'", "unknown dataset", "karate")
    code, _, err = run_cli(capsys, "run", "core_number", "--dataset", "karat")
    assert_one_line_error(code, err, "'karat'", "unknown dataset", "karate")


def test_missing_labels_or_weights(capsys):
    code, _, err = run_cli(capsys, "run", "label_propagation", "--dataset", "les_miserables")
    assert_one_line_error(code, err, "--labels")
    code, _, err = run_cli(capsys, "run", "multi_manifold_ranking", "--dataset",
                           "florentine_families")
    assert_one_line_error(code, err, "multi_manifold_ranking needs edge weights", "--weight")


def test_usage_errors_exit_2(capsys):
    assert cli.main(["run", "pagerank", "--direction", "sideways"]) == 2
    assert cli.main([]) == 2
    assert cli.main(["generate", "rmat", "--out", "x.parquet"]) == 2  # --scale missing
    _, err = capsys.readouterr()
    assert err.count("onyx-rapids: error:") == 3 and "Traceback" not in err
    code, _, err = run_cli(capsys, "run", "pagerank", "--max-iter", "3")
    assert_one_line_error(code, err, "unrecognized arguments: --max-iter 3", "--param")


def test_change_driven_flag_takes_auto():
    parser = cli.build_parser()
    for argv, value in ((["--change-driven"], True), (["--no-change-driven"], False),
                        (["--change-driven", "auto"], "auto"), ([], None)):
        assert parser.parse_args(["run", "pagerank", *argv]).change_driven == value, argv


def test_change_driven_auto_refused_where_unsupported(capsys):
    code, _, err = run_cli(capsys, "run", "als", "--change-driven", "auto")
    assert_one_line_error(code, err, "als does not support", "change_driven='auto'")


def test_vertex_order_flag_reorders_and_keeps_ids(capsys, tmp_path):
    edges = tmp_path / "edges.parquet"
    pd.DataFrame({"u": [9, 9, 9, 2, 5], "v": [2, 5, 7, 7, 7]}).to_parquet(edges)
    out = tmp_path / "by_id.parquet"
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", edges, "--src", "u", "--dst",
                           "v", "--out", out)
    assert code == 0, err
    out2 = tmp_path / "by_degree.parquet"
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", edges, "--src", "u", "--dst",
                           "v", "--vertex-order", "degree", "--out", out2)
    assert code == 0, err
    assert "numbering the vertices by degree" in err
    a, b = pd.read_parquet(out), pd.read_parquet(out2)
    # 7 and 9 have three edges each, 2 and 5 two: hubs first, ties in id order
    assert a["vertex"].tolist() == [2, 5, 7, 9] and b["vertex"].tolist() == [7, 9, 2, 5]
    pd.testing.assert_series_equal(a.set_index("vertex")["pagerank"],
                                   b.set_index("vertex")["pagerank"].sort_index(), rtol=1e-6)
    code, _, err = run_cli(capsys, "run", "bfs", "--graph", edges, "--src", "u", "--dst", "v",
                           "--placement", "host", "--vertex-order", "degree")
    assert code != 0 and "--vertex-order degree" in err and "host memory" in err


def test_placement_and_device_budget_flags(capsys, tmp_path):
    from onyx_rapids import memory

    edges = tmp_path / "edges.parquet"
    pd.DataFrame({"u": [0, 0, 1, 2, 2], "v": [1, 1, 2, 0, 3]}).to_parquet(edges)
    code, _, err = run_cli(capsys, "run", "bfs", "--graph", edges, "--src", "u", "--dst", "v",
                           "--placement", "host", "--device-budget", "1GB")
    assert code == 0, err
    assert "edges on the host" in err and "host build: CSC" in err  # the chunked build's passes
    assert memory.device_budget() is None  # restored after the run
    code, _, err = run_cli(capsys, "run", "bfs", "--graph", edges, "--src", "u", "--dst", "v",
                           "--device-budget", "lots")
    assert code != 0 and "--device-budget 'lots'" in err
