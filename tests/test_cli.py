"""The onyx-rapids command line, called in-process through cli.main (and once as a process)."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from onyx_rapids import cli, device

# Where the test is about the command line rather than the numbers, run the cheap variant: every
# kernel launch costs under the CUDA simulator.
FAST = ["--no-feature-aware", "--quiet"]


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *needles):
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("onyx-rapids: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def leftover_temp_files(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp") or
            p.name.startswith(".")]


# ------------------------------------------------------------------------------- info, datasets


def test_module_entry_point_runs_info():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "onyx_rapids", "info"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "backend:" in proc.stdout and "simulator" in proc.stdout  # the child forces it
    assert "numba:" in proc.stdout


def test_info_json(capsys):
    import json

    code, out, _ = run_cli(capsys, "info", "--json")
    assert code == 0
    assert json.loads(out)["backend"] == device.BACKEND


def test_datasets_lists_embedded_graphs(capsys):
    code, out, _ = run_cli(capsys, "datasets")
    assert code == 0
    karate = next(line for line in out.splitlines() if line.startswith("karate"))
    assert karate.split()[1:4] == ["34", "78", "no"]
    assert "les_miserables" in out and "florentine_families" in out


# ------------------------------------------------------------------------------------------ run


def test_run_pagerank_default_graph_out(capsys, tmp_path):
    out = tmp_path / "pr.parquet"
    code, stdout, err = run_cli(capsys, "run", "pagerank", "--out", out)  # feature-aware default
    assert code == 0, err
    assert stdout == ""
    df = pd.read_parquet(out)
    assert list(df.columns) == ["vertex", "pagerank"]
    assert len(df) == 34
    assert sorted(df["vertex"]) == list(range(34))
    assert abs(float(df["pagerank"].sum()) - 1.0) < 1e-4
    for key in ("backend:", "n=34", "algorithm:", "pagerank", "variant:", "feature_aware=True",
                "iterations:", "converged:  yes", "wall time:"):
        assert key in err, key
    assert "running pagerank" in err  # progress line
    assert leftover_temp_files(tmp_path) == []


def test_run_prints_rows_to_stdout(capsys):
    code, out, err = run_cli(capsys, "run", "pagerank", *FAST, "--head", "0")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["vertex", "pagerank"]
    ranks = [float(line.split()[1]) for line in lines[1:-1]]
    assert len(ranks) == 34
    assert abs(sum(ranks) - 1.0) < 1e-4
    assert lines[-1] == "(34 rows)"
    assert "running pagerank" not in err  # --quiet
    assert "backend:" in err  # the summary stays

    code, out, _ = run_cli(capsys, "run", "pagerank", *FAST, "--max-iter", "2")
    assert code == 0
    assert len(out.splitlines()) == 1 + 10 + 1 and "34 rows in all" in out


def test_run_label_propagation_default_seeds(capsys, tmp_path):
    out = tmp_path / "lp.parquet"
    code, _, err = run_cli(capsys, "run", "label_propagation", *FAST, "--out", out)
    assert code == 0, err
    df = pd.read_parquet(out).set_index("vertex")
    assert len(df) == 34
    assert df.loc[0, "label"] == 0 and df.loc[33, "label"] == 1
    assert {"lp_0", "lp_1"} <= set(df.columns)


def test_run_label_propagation_labels_file(capsys, tmp_path):
    seeds = tmp_path / "seeds.parquet"
    pd.DataFrame({"vertex": [0, 33], "label": [1, 0]}).to_parquet(seeds)  # swapped classes
    out = tmp_path / "lp.parquet"
    code, _, err = run_cli(capsys, "run", "label_propagation", *FAST, "--labels", seeds,
                           "--max-iter", "3", "--out", out)
    assert code == 0, err
    df = pd.read_parquet(out).set_index("vertex")
    assert df.loc[0, "label"] == 1 and df.loc[33, "label"] == 0


def test_out_refuses_overwrite_then_force(capsys, tmp_path):
    out = tmp_path / "pr.parquet"
    out.write_bytes(b"precious")
    code, _, err = run_cli(capsys, "run", "pagerank", *FAST, "--max-iter", "2", "--out", out)
    assert_one_line_error(code, err, "already exists", "--force")
    assert out.read_bytes() == b"precious"

    code, _, err = run_cli(capsys, "run", "pagerank", *FAST, "--max-iter", "2", "--out", out,
                           "--force")
    assert code == 0, err
    assert list(pd.read_parquet(out).columns) == ["vertex", "pagerank"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pr.parquet"]


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
                           *FAST, "--out", ranks)
    assert code == 0, err
    assert "m=512" in err and "directed" in err
    pr = pd.read_parquet(ranks)
    assert abs(float(pr["pagerank"].sum()) - 1.0) < 1e-4
    assert leftover_temp_files(tmp_path) == []


def test_variant_flags(capsys):
    code, _, err = run_cli(capsys, "run", "pagerank", "--no-feature-aware", "--change-driven",
                           "--quiet", "--max-iter", "3")
    assert code == 0, err
    assert "feature_aware=False change_driven=True" in err
    assert "direction=auto" in err  # change-driven PageRank: push or pull each iteration
    assert "converged:  no" in err
    assert "warning: pagerank did not converge" in err


def test_dataset_by_name(capsys):
    code, out, err = run_cli(capsys, "run", "pagerank", "--graph", "florentine_families", *FAST,
                             "--max-iter", "2")
    assert code == 0, err
    assert "n=15" in err and "15 rows in all" in out


# --------------------------------------------------------------------------------- bad inputs


def test_unknown_algorithm_lists_available(capsys):
    code, _, err = run_cli(capsys, "run", "pagerankk")
    assert_one_line_error(code, err, "unknown algorithm 'pagerankk'", "pagerank",
                          "label_propagation")


def test_missing_parquet_path(capsys, tmp_path):
    missing = tmp_path / "nope.parquet"
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", missing, *FAST)
    assert_one_line_error(code, err, "nope.parquet", "no such")


def test_not_a_parquet_file(capsys, tmp_path):
    bogus = tmp_path / "edges.csv"
    bogus.write_text("src,dst\n0,1\n1,2\n")
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", bogus, *FAST)
    assert_one_line_error(code, err, "edges.csv", "not a readable Parquet file")


def test_misspelled_source_column(capsys):
    code, _, err = run_cli(capsys, "run", "pagerank", "--source", "srcc", *FAST)
    assert_one_line_error(code, err, "'srcc'", "no such column", "'src'")


def test_unknown_dataset_name(capsys):
    code, _, err = run_cli(capsys, "run", "pagerank", "--graph", "karat", *FAST)
    assert_one_line_error(code, err, "'karat'", "unknown dataset", "karate")


def test_label_propagation_needs_labels_off_karate(capsys):
    code, _, err = run_cli(capsys, "run", "label_propagation", "--graph", "les_miserables",
                           *FAST)
    assert_one_line_error(code, err, "--labels")


@pytest.mark.parametrize("argv, needle", [
    (["run", "pagerank", "--k", "3"], "pagerank does not take --k"),
    (["run", "pagerank", "--tol", "0"], "tol must be positive"),
    (["generate", "blob", "--scale", "3", "--out", "x.parquet"], "unknown generator kind"),
])
def test_other_bad_options(capsys, argv, needle):
    code, _, err = run_cli(capsys, *argv)
    assert_one_line_error(code, err, needle)


def test_usage_errors_exit_2(capsys):
    assert cli.main(["run", "pagerank", "--direction", "sideways"]) == 2
    assert cli.main([]) == 2
    assert cli.main(["generate", "rmat", "--out", "x.parquet"]) == 2  # --scale missing
    capsys.readouterr()
