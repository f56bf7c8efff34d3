"""The SpMM-peer benchmark script (benchmarks/peers.py) on tiny graphs under the simulator: it
writes well-formed JSON / Markdown (and the scaling plot), records why a peer was skipped, fails
loudly when a peer's result disagrees with ours, computes the roofline bound as documented and
refuses bad arguments; label propagation's problem, peer and ours follow a float64 reference
iteration; ``--convergence`` writes its table and fails when bulk and change-driven results
disagree.  No timing assertions; scipy.sparse stands in for cuSPARSE here."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # benchmarks/ is not part of the installed package
    sys.path.insert(0, str(ROOT))

import onyx_rapids  # noqa: E402
from benchmarks import peers  # noqa: E402
from onyx_rapids.graph import Graph  # noqa: E402

TINY = ["--quick", "--scale", "3", "--edge-factor", "2", "--ks", "1", "--iterations", "2"]
SKIP_REASON = "not installed: torch (test)"


@pytest.fixture(autouse=True)
def _no_torch(monkeypatch):
    """The PyG peer is skipped the same way whether or not torch is installed here."""
    monkeypatch.setattr(peers, "import_torch", lambda: (None, None, SKIP_REASON))


def _outputs(tmp_path, pattern="peers_*_quick"):
    js, md = sorted(tmp_path.glob(pattern + ".json")), sorted(tmp_path.glob(pattern + ".md"))
    assert len(js) == 1 and len(md) == 1, (js, md)
    return json.loads(js[0].read_text()), md[0].read_text(), js[0]


def test_quick_run_writes_files_and_records_skipped_peer(tmp_path, capsys):
    rc = peers.main(TINY + ["--algorithms", "feature_propagation", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    report, md, path = _outputs(tmp_path)
    assert path.name.startswith("peers_") and path.name.endswith("_quick.json")
    for key in ("benchmark", "date", "timestamp", "device", "git", "argv", "settings",
                "peer_labels", "targets", "bandwidth", "graphs", "measurements", "table",
                "failures", "ok", "elapsed_s"):
        assert key in report, key
    assert report["benchmark"] == "peers" and report["ok"] is True and report["failures"] == []
    assert report["device"]["backend"] == onyx_rapids.device.BACKEND
    assert report["settings"]["iterations"] == 2 and report["settings"]["ks"] == [1]
    [row] = report["measurements"]
    assert (row["algorithm"], row["family"], row["k"]) == ("feature_propagation", "rmat", 1)
    assert row["ours"]["ms_per_iter"] > 0 and row["ours"]["ran_iterations"] == 2
    cs = row["peers"]["cusparse"]
    assert cs["label"] == peers.sparse_module()[1]
    assert cs["check"]["ok"] and cs["check"]["rel_l2"] < 1e-5
    if onyx_rapids.device.BACKEND == "gpu":  # the copy bandwidth is measured in the run
        assert report["bandwidth"]["bytes_per_s"] > 0 and row["ours"]["roofline"] > 0
    else:
        assert report["bandwidth"]["bytes_per_s"] is None
        assert "not measured" in report["bandwidth"]["reason"]
        assert row["ours"]["roofline"] is None and "stand-in" in cs["label"]
    assert row["peers"]["pyg"] == {"skipped": SKIP_REASON}
    assert report["peer_labels"]["pyg"] == SKIP_REASON
    assert f"peer pyg skipped: {SKIP_REASON}" in out
    # the documented lower bound, with the simple graph's m for APPNP
    assert row["min_bytes"] == peers.min_bytes(row["n"], row["m"], 1, row["index_bytes"])
    # Markdown: the table with its columns, the targets and the H200 reference
    assert "| algorithm | graph | k | ours ms/it |" in md
    assert "PyG ms/it" in md and "roofline fraction" in md and "H200 ref SpMM" in md
    assert "39.7" in md and "155" in md and ">= 3x" in md and ">= 2x" in md
    assert SKIP_REASON in md and "not measured" in md and "FAILED" not in md
    [t] = report["table"]
    assert t["check"].startswith("ok")


def test_wrong_peer_fails_loudly(tmp_path, capsys, monkeypatch):
    def wrong(peer, iterations):
        return peer.problem.start() + 1.0

    monkeypatch.setattr(peers, "cusparse_propagate", wrong)
    rc = peers.main(TINY + ["--algorithms", "personalized_pagerank", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1
    report, md, _ = _outputs(tmp_path)
    assert report["ok"] is False and len(report["failures"]) == 1
    assert "differs from" in report["failures"][0]
    assert "FAILED" in out and "## FAILED" in md
    assert report["table"][0]["check"].startswith("FAILED")
    assert report["measurements"][0]["peers"]["cusparse"]["check"]["ok"] is False


def test_peer_that_raises_fails(tmp_path, capsys, monkeypatch):
    def broken(peer, iterations):
        raise RuntimeError("boom")

    monkeypatch.setattr(peers, "cusparse_propagate", broken)
    rc = peers.main(TINY + ["--algorithms", "personalized_pagerank", "--out", str(tmp_path)])
    capsys.readouterr()
    assert rc == 1
    report, md, _ = _outputs(tmp_path)
    assert "boom" in report["failures"][0]
    assert report["table"][0]["cusparse"] == "FAILED"


def test_scaling_edges_writes_plot(tmp_path, capsys):
    rc = peers.main(["--quick", "--scaling", "edges", "--scaling-scales", "2,3",
                     "--scaling-k", "1", "--edge-factor", "2", "--iterations", "2",
                     "--algorithms", "personalized_pagerank", "--out", str(tmp_path)])
    capsys.readouterr()
    assert rc == 0
    report, _, path = _outputs(tmp_path, "peers_*_scaling-edges_quick")
    assert sorted(report["graphs"]) == ["rmat-s2", "rmat-s3"]
    assert [r["scale"] for r in report["measurements"]] == [2, 3]
    try:
        import matplotlib  # noqa: F401
    except ImportError:  # CI's fresh venv: the run still succeeds and says why there is no plot
        assert report["plot"]["path"] is None
        assert report["plot"]["reason"].startswith("matplotlib not available")
        return
    png = Path(report["plot"]["path"])
    assert png == path.with_suffix(".png") and png.stat().st_size > 1000


def test_scaling_k_defaults():
    args = peers.parse_args(["--quick", "--scaling", "k"])
    assert args.ks == [1, 2, 4]
    args = peers.parse_args(["--scaling", "k"])
    assert args.ks == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    args = peers.parse_args([])
    assert args.ks == [1, 4, 32, 128, 256] and args.scale == 22 and args.families == ["rmat"]
    assert args.scaling_scales == [16, 17, 18, 19, 20, 21, 22] and args.scaling_k == 32


def test_roofline_arithmetic():
    # n=3, m=4, k=2, int32 indices, float32 values: offsets 4*4 + indices 4*4 + X 4*3*2 + Y 4*3*2
    assert peers.min_bytes(3, 4, 2) == 16 + 16 + 24 + 24 == 80
    assert peers.min_bytes(3, 4, 2, index_bytes=8) == 32 + 32 + 48
    # 80 bytes in 1e-3 ms = 8e7 B/s, half of 1.6e8 B/s
    assert peers.roofline_fraction(80, 1e-3, 1.6e8) == pytest.approx(0.5)
    assert peers.roofline_fraction(80, 1.0, None) is None
    assert peers.roofline_fraction(80, None, 1e9) is None
    # H200 reference: RMAT 22 (n = 2^22, m = 2^27 stored), k = 32 in 39.7 ms
    n, m = 1 << 22, 1 << 27
    b = peers.min_bytes(n, m, 32)
    assert b == 4 * (n + 1) + 4 * m + 8 * n * 32
    assert peers.roofline_fraction(b, 39.7, 4.0e12) == pytest.approx(b / 0.0397 / 4.0e12)


def test_copy_bandwidth_not_measured_on_simulator():
    bw = peers.copy_bandwidth(1)
    if onyx_rapids.device.BACKEND == "gpu":  # measured there: a positive rate
        assert bw["bytes_per_s"] > 0
    else:
        assert bw["bytes_per_s"] is None and bw["reason"].startswith("not measured")


@pytest.mark.parametrize("argv", [
    ["--ks", "0"], ["--ks", "a,b"], ["--ks", ""], ["--families", "moon"],
    ["--algorithms", "pagerank"], ["--iterations", "0"], ["--repeat", "0"],
    ["--scaling", "vertices"], ["--scaling-scales", "3,-1"], ["--check-tol", "0"],
    ["--scaling", "edges", "--scaling-scales", "31"], ["--copy-mib", "0"],
])
def test_argument_errors(argv, capsys):
    with pytest.raises(SystemExit) as e:
        peers.parse_args(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize("argv, option", [
    (["--convergence", "--convergence-tol", "0"], "--convergence-tol"),
    (["--convergence-tol", "-1e-6"], "--convergence-tol"),
    (["--convergence", "--convergence-tol", "nan"], "--convergence-tol"),
    (["--convergence", "--convergence-tol", "inf"], "--convergence-tol"),
    (["--convergence", "--convergence-max-iter", "0"], "--convergence-max-iter"),
    (["--convergence", "--scaling", "k"], "--convergence and --scaling"),
    (["--convergence", "--algorithms", "feature_propagation"], "--algorithms"),
    (["--algorithms", "pagerank"], "--algorithms"),
])
def test_convergence_argument_errors_name_the_option(argv, option, capsys):
    with pytest.raises(SystemExit) as e:
        peers.parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "error" in err and option in err, err


def test_convergence_defaults():
    args = peers.parse_args([])
    assert args.algorithms == list(peers.ALGORITHMS) and "label_propagation" in args.algorithms
    assert args.convergence is False and args.convergence_tol == 1e-6
    args = peers.parse_args(["--convergence"])
    assert args.algorithms == ["pagerank", "personalized_pagerank", "label_propagation"]
    assert args.convergence_tol == 1e-6 and args.convergence_max_iter == 100
    assert args.ks == [1, 4, 32, 128, 256] and args.families == ["rmat"]
    args = peers.parse_args(["--convergence", "--quick", "--algorithms", "label_propagation"])
    assert args.convergence_max_iter == 10 and args.algorithms == ["label_propagation"]


def test_peer_matrix_matches_dense_formula():
    """The cuSPARSE peer's matrices are the documented ones (checked densely on a tiny graph)."""
    import pandas as pd
    from onyx_rapids.graph import Graph

    df = pd.DataFrame({"src": [0, 0, 1, 2, 2, 3], "dst": [1, 2, 2, 0, 3, 3]})
    g = Graph.from_edgelist(df, "src", "dst", directed=True)
    to = onyx_rapids.device.to_host
    # feature propagation: D^-1/2 (A + I) D^-1/2 of the simple undirected graph
    p = peers.Problem("feature_propagation", g, 2)
    m = to(peers.CuSparsePeer(p).matrix.toarray())
    a = np.zeros((4, 4))
    for u, v in [(0, 1), (0, 2), (1, 2), (2, 3)]:
        a[u, v] = a[v, u] = 1
    a += np.eye(4)
    d = 1 / np.sqrt(a.sum(axis=1))
    np.testing.assert_allclose(m, d[:, None] * a * d[None, :], rtol=1e-6)
    # PPR: row v, column u = (#edges u->v) / outdeg(u); vertex 3's self-loop counts
    p = peers.Problem("personalized_pagerank", g, 2)
    m = to(peers.CuSparsePeer(p).matrix.toarray())
    out = np.zeros((4, 4))
    for u, v in df.itertuples(index=False):
        out[u, v] += 1
    np.testing.assert_allclose(m, (out / out.sum(axis=1, keepdims=True)).T, rtol=1e-6)
    np.testing.assert_array_equal(to(p.dangling), np.zeros(4))


# ------------------------------------------------------------------------------ label propagation

#: a directed graph with ids that are not internal indices: 7 has no in-neighbours, 3 -> 5 is a
#: parallel edge, 9 has a self-loop; 11 and 5 are labelled
LP_EDGES = [(7, 3), (7, 5), (3, 5), (3, 5), (5, 9), (9, 9), (9, 3), (5, 11), (11, 2), (2, 3),
            (13, 2), (2, 13)]
LP_LABELS = {11: 0, 5: 2}


def lp_reference(g, k, iterations, alpha=0.85):
    """ALGORITHMS.md item 4 in float64, dense: rows in g's internal order."""
    to = onyx_rapids.device.to_host
    internal = lambda ids: to(g.to_internal(np.asarray(ids, dtype=np.int64)))  # noqa: E731
    a = np.zeros((g.n, g.n))
    for u, v in LP_EDGES:  # aggr(v) sums lp(u) over the edges u -> v (parallel ones twice)
        a[internal([v])[0], internal([u])[0]] += 1.0
    lp0 = np.full((g.n, k), 1.0 / k)
    labelled = internal(list(LP_LABELS))
    lp0[labelled] = np.eye(k)[list(LP_LABELS.values())]

    def normalize(x):
        s = x.sum(axis=1, keepdims=True)
        return np.divide(x, s, out=np.zeros_like(x), where=s != 0)

    lp = lp0.copy()
    for _ in range(iterations):
        lp = normalize(alpha * normalize(a @ lp) + (1 - alpha) * lp)
        lp[labelled] = lp0[labelled]
    return lp, lp0


@pytest.fixture
def lp_problem(monkeypatch):
    import pandas as pd

    g = Graph.from_edgelist(pd.DataFrame(LP_EDGES, columns=["src", "dst"]), "src", "dst",
                            directed=True)
    frame = pd.DataFrame({"vertex": list(LP_LABELS), "label": list(LP_LABELS.values())})
    monkeypatch.setattr(peers, "make_inputs", lambda algorithm, g, k, context: {"labels": frame})
    return peers.Problem("label_propagation", g, 3)


def test_lp_problem_peer_and_ours_follow_the_float64_reference(lp_problem):
    p, to = lp_problem, onyx_rapids.device.to_host
    ref, lp0 = lp_reference(p.g, 3, 12)
    np.testing.assert_array_equal(to(p.start()), lp0.astype(np.float32))
    assert p.m == 12 and p.algorithm == "label_propagation"
    peer = to(peers.to_backend(peers.CuSparsePeer(p).run(12)))
    assert peer.dtype == np.float32
    np.testing.assert_allclose(peer, ref, atol=2e-6)
    frame, info = peers.run_ours(p, 12)
    assert info["iterations"] == 12
    ours = to(peers.ours_columns(p, frame, range(3)))
    np.testing.assert_allclose(ours, ref, atol=2e-6)
    # vertex 7 (no in-neighbours) keeps its uniform row; the labelled rows stay one-hot
    seven = int(to(p.g.to_internal(np.asarray([7])))[0])
    np.testing.assert_allclose(ours[seven], 1 / 3, rtol=1e-6)
    np.testing.assert_array_equal(ours[to(p.internal)], lp0[to(p.internal)])
    assert ref[seven].tolist() == [1 / 3] * 3 and not np.allclose(ref, lp0, atol=1e-2)
    c = peers.compare(p, frame, peers.CuSparsePeer(p).run(12), 1e-3)
    assert c["ok"] and c["rel_l2"] < 1e-5


def test_lp_peer_matrix_is_the_pull_csr(lp_problem):
    to = onyx_rapids.device.to_host
    g = lp_problem.g
    internal = lambda i: int(to(g.to_internal(np.asarray([i])))[0])  # noqa: E731
    expected = np.zeros((g.n, g.n))
    for u, v in LP_EDGES:
        expected[internal(v), internal(u)] += 1
    np.testing.assert_array_equal(to(peers.CuSparsePeer(lp_problem).matrix.toarray()), expected)


def test_lp_rows_in_the_quick_run(tmp_path, capsys):
    rc = peers.main(TINY + ["--ks", "1,2", "--algorithms", "label_propagation", "--out",
                            str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    report, md, _ = _outputs(tmp_path)
    one, two = report["measurements"]
    assert (one["algorithm"], one["k"], two["k"]) == ("label_propagation", 1, 2)
    assert one["na"].startswith("n/a: label_propagation with k = 1 is trivial")
    assert "ours" not in one and one["peers"] == {}
    assert two["ours"]["ran_iterations"] == 2 and two["ours"]["ms_per_iter"] > 0
    cs = two["peers"]["cusparse"]
    assert cs["check"]["ok"] and cs["check"]["rel_l2"] < 1e-5
    assert two["m"] == two["graph_m"]  # the pull CSR walks every stored edge
    assert two["min_bytes"] == peers.min_bytes(two["n"], two["m"], 2, two["index_bytes"])
    t1, t2 = report["table"]
    assert t1["check"] == one["na"] and t1["ours"] == "—"
    assert t2["check"].startswith("ok") and t2["algorithm"] == "label_propagation"
    assert "| label_propagation | rmat s3 | 1 | — |" in md
    assert "| label_propagation | rmat s3 | 2 |" in md and "FAILED" not in md
    assert report["settings"]["lp_alpha"] == 0.85


def test_lp_peer_without_clamping_fails(tmp_path, capsys, monkeypatch):
    def unclamped(peer, iterations):  # the iteration, but labelled rows drift
        a, h = peer.matrix, peer.problem.start()
        for _ in range(iterations):
            h = peers.normalize_rows(0.85 * peers.normalize_rows(a @ h) + 0.15 * h)
        return h

    monkeypatch.setattr(peers, "cusparse_propagate", unclamped)
    rc = peers.main(TINY + ["--ks", "2", "--algorithms", "label_propagation", "--out",
                            str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1
    report, md, _ = _outputs(tmp_path)
    [row] = report["measurements"]
    assert row["peers"]["cusparse"]["check"]["ok"] is False
    assert "label_propagation k=2 on rmat: ours differs from" in report["failures"][0]
    assert report["table"][0]["check"].startswith("FAILED") and "## FAILED" in md
    assert "FAILED" in out


# ------------------------------------------------------------------------------ convergence

CONV = ["--quick", "--convergence", "--scale", "3", "--edge-factor", "2"]


def test_convergence_writes_its_table(tmp_path, capsys):
    rc = peers.main(CONV + ["--ks", "1,2", "--algorithms", "pagerank,label_propagation",
                            "--convergence-max-iter", "100", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    report, md, path = _outputs(tmp_path, "peers_*_convergence_quick")
    assert path.name.startswith("peers_") and report["mode"] == "convergence"
    assert report["ok"] is True and report["failures"] == [] and report["peer_labels"] == {}
    assert "pyg skipped" not in out  # no peers in this mode
    assert report["settings"]["convergence_tol"] == 1e-6
    assert report["targets"]["cd_ratio"] == 3.0
    rows = report["measurements"]
    assert [(r["algorithm"], r["k"]) for r in rows] == [
        ("pagerank", 1), ("label_propagation", 1), ("label_propagation", 2)]
    assert rows[1]["na"].startswith("n/a") and "bulk" not in rows[1]
    for r in (rows[0], rows[2]):
        for mode, cd in (("bulk", False), ("cd", True)):
            cell = r[mode]
            assert cell["change_driven"] is cd and cell["converged"] is True
            assert 1 < cell["iterations"] < 100 and cell["median_ms"] > 0
        assert r["ratio"] == pytest.approx(r["bulk"]["median_ms"] / r["cd"]["median_ms"])
        assert r["check"]["ok"] and r["check"]["value"] <= 1e-3
    assert rows[0]["check"]["metric"] == "L1" and rows[2]["check"]["metric"] == "max abs"
    header = ("| algorithm | graph | k | bulk iterations | bulk converged | bulk ms | "
              "CD iterations | CD converged | CD ms | bulk / CD | check |")
    assert header in md and "FAILED" not in md
    for r, t in zip(rows, report["table"]):
        if "na" in r:
            assert t["ratio"] == "—" and t["check"] == r["na"]
            continue
        assert t["bulk_iterations"] == r["bulk"]["iterations"] and t["cd_converged"] == "yes"
        mark = "meets 3x" if r["ratio"] >= 3 else "**miss**: below 3x"
        assert t["ratio"] == f"{r['ratio']:.2f}x ({mark})" and t["check"].startswith("ok")
        assert f"| {t['algorithm']} | rmat s3 | {t['k']} | {t['bulk_iterations']} | yes |" in md


def test_convergence_ratio_marks_misses():
    assert peers._ratio_cell(2.99) == "2.99x (**miss**: below 3x)"
    assert peers._ratio_cell(3.0) == "3.00x (meets 3x)"
    assert peers._ratio_cell(None) == "—"


def test_convergence_agreement_metrics():
    import pandas as pd

    pr = pd.DataFrame({"pagerank": [0.25, 0.5, 0.25]})
    # scaled to sum 1 before the L1: a multiple agrees, a shifted mass does not
    assert peers.agreement("pagerank", 1, pr, pr * 2.0)["ok"]
    c = peers.agreement("pagerank", 1, pr, pd.DataFrame({"pagerank": [0.25, 0.499, 0.251]}))
    assert not c["ok"] and c["value"] == pytest.approx(0.002)
    ppr = pd.DataFrame({"ppr_0": [1.0, 0.0], "ppr_1": [0.5, 0.5]})
    worse = ppr.assign(ppr_1=[0.6, 0.4])  # the largest column L1 counts
    assert peers.agreement("personalized_pagerank", 2, ppr, worse)["value"] == pytest.approx(0.2)
    lp = pd.DataFrame({"lp_0": [0.5, 0.2], "lp_1": [0.5, 0.8]})
    c = peers.agreement("label_propagation", 2, lp, lp.assign(lp_1=[0.5, 0.8011]))
    assert not c["ok"] and c["value"] == pytest.approx(0.0011) and c["metric"] == "max abs"
    assert peers.agreement("label_propagation", 2, lp, lp.assign(lp_1=[0.5, 0.8009]))["ok"]
    assert not peers.agreement("label_propagation", 2, lp, lp.assign(lp_0=[np.nan, 0.2]))["ok"]


@pytest.mark.parametrize("algorithm, column", [("label_propagation", "lp_1"),
                                               ("personalized_pagerank", "ppr_0")])
def test_convergence_disagreement_fails(tmp_path, capsys, monkeypatch, algorithm, column):
    real = peers.converge

    def drifting(algorithm, g, inputs, k, change_driven, args):
        frame, info = real(algorithm, g, inputs, k, change_driven, args)
        if change_driven:  # a change-driven result 0.01 off at one vertex
            bump = np.zeros(len(frame))
            bump[0] = 0.01
            series = type(frame[column])  # pandas, or cuDF where RAPIDS is installed
            frame[column] = frame[column] + series(bump, index=frame.index)
        return frame, info

    monkeypatch.setattr(peers, "converge", drifting)
    rc = peers.main(CONV + ["--ks", "2", "--algorithms", algorithm, "--convergence-max-iter",
                            "3", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1
    report, md, _ = _outputs(tmp_path, "peers_*_convergence_quick")
    [row] = report["measurements"]
    assert row["check"]["ok"] is False and row["check"]["value"] > 1e-3
    assert row["bulk"]["iterations"] == row["cd"]["iterations"] == 3
    assert row["bulk"]["converged"] is False
    [failure] = report["failures"]
    assert failure.startswith(
        f"{algorithm} k=2 on rmat to convergence: bulk and change-driven results differ")
    assert report["table"][0]["check"].startswith("FAILED") and "## FAILED" in md
    assert "| **no** |" in md and "FAILED" in out


def test_convergence_call_that_raises_fails(tmp_path, capsys, monkeypatch):
    def broken(algorithm, g, inputs, k, change_driven, args):
        raise RuntimeError("cd boom")

    monkeypatch.setattr(peers, "converge", broken)
    rc = peers.main(CONV + ["--algorithms", "pagerank", "--out", str(tmp_path)])
    capsys.readouterr()
    assert rc == 1
    report, md, _ = _outputs(tmp_path, "peers_*_convergence_quick")
    assert len(report["failures"]) == 2 and all("cd boom" in f for f in report["failures"])
    t = report["table"][0]
    assert t["check"] == "FAILED (bulk raised; cd raised)" and t["ratio"] == "—"


class OutOfMemoryError(RuntimeError):
    """Named as CuPy's and torch's allocation failures are."""


def test_peer_out_of_device_memory_is_skipped_not_failed(tmp_path, capsys, monkeypatch):
    def too_big(peer, iterations):
        raise OutOfMemoryError("Out of memory allocating 68,719,476,736 bytes")

    monkeypatch.setattr(peers, "cusparse_propagate", too_big)
    rc = peers.main(TINY + ["--algorithms", "feature_propagation", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    report, md, _ = _outputs(tmp_path)
    cell = report["measurements"][0]["peers"]["cusparse"]
    assert cell == {"skipped": "out of device memory (OutOfMemoryError: Out of memory "
                               "allocating 68,719,476,736 bytes)",
                    "label": peers.sparse_module()[1]}
    assert report["failures"] == []
    assert report["table"][0]["cusparse"] == "skipped: out of device memory"
    assert "skipped: out of device memory" in md


@pytest.mark.parametrize("error, oom", [(MemoryError(), True),
                                        (RuntimeError("CUDA out of memory. Tried to"), True),
                                        (OutOfMemoryError("x"), True),
                                        (RuntimeError("boom"), False)])
def test_out_of_memory_recognition(error, oom):
    assert peers._out_of_memory(error) is oom
