"""What a call costs besides its kernels: the profile mode (ONYX_RAPIDS_PROFILE, info.timings),
pagerank's one-vertex personalization on personalized_pagerank's engine, bfs's per-graph
workspaces and its result without a gather on 0..n-1 ids; on a GPU, a report of bfs per call,
pagerank(personalization=) against personalized_pagerank and the call phases on one R-MAT
graph (run with -s; ONYX_RAPIDS_COST_SCALE picks the scale, 20 by default)."""

import os

import numpy as np
import pandas as pd
import pytest

import onyx_rapids as onyx
from onyx_rapids import device, profiling
from onyx_rapids.io import to_pandas
from onyx_rapids.io.results import identity_ids

PHASES = ["compile", "kernels", "result", "setup", "total"]


@pytest.fixture(scope="module")
def ring():
    """Five vertices, ids 5..13 (not 0..n-1), a chord 9 -> 13."""
    return onyx.Graph.from_edgelist(
        pd.DataFrame({"src": [5, 9, 7, 11, 9, 13], "dst": [9, 7, 11, 13, 13, 5]}),
        directed=True)


@pytest.fixture(scope="module")
def path():
    """0 -> 1 -> 2 -> 3 and 1 -> 3: ids 0..n-1."""
    return onyx.Graph.from_edgelist(pd.DataFrame({"src": [0, 1, 2, 1], "dst": [1, 2, 3, 3]}),
                                    directed=True)


# -- profile mode ------------------------------------------------------------------------------


def test_profile_mode_gives_the_phases_of_a_call(monkeypatch, path):
    monkeypatch.setenv("ONYX_RAPIDS_PROFILE", "1")
    df, info = onyx.bfs(path, source=0, return_info=True)
    assert sorted(info.timings) == PHASES
    t = info.timings
    assert all(v >= 0 for v in t.values())
    assert t["kernels"] > 0 and t["result"] > 0  # the traversal launched, the frame was built
    assert t["setup"] + t["kernels"] + t["result"] + t["compile"] == pytest.approx(t["total"])
    assert info["timings"] == t and df.attrs["timings"] == t  # as a mapping and in attrs


def test_profile_mode_is_off_by_default(monkeypatch, path):
    monkeypatch.delenv("ONYX_RAPIDS_PROFILE", raising=False)
    _, info = onyx.bfs(path, source=0, return_info=True)
    assert info.timings is None and "timings" not in info
    monkeypatch.setenv("ONYX_RAPIDS_PROFILE", "0")
    assert not profiling.enabled()
    calls = []
    monkeypatch.setattr(profiling.device, "synchronize", lambda: calls.append(1))
    onyx.bfs(path, source=0)
    assert calls == []  # an unprofiled call adds no synchronization


def test_profiled_launches_leave_no_record_behind(monkeypatch, path):
    monkeypatch.setenv("ONYX_RAPIDS_PROFILE", "1")
    onyx.pagerank(path, tol=1e-3)
    assert not profiling.active()
    assert profiling.timings() is None


def test_call_seconds_times_first_and_repeated_calls(path):
    report = profiling.call_seconds(onyx.bfs, path, source=0, repeat=2)
    assert sorted(report) == ["first", "median", "min", "phases"]
    assert 0 < report["min"] <= report["median"]
    assert sorted(report["phases"]) == PHASES
    assert "ONYX_RAPIDS_PROFILE" not in os.environ
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        profiling.call_seconds(onyx.bfs, path, source=0, repeat=0)


# -- pagerank(personalization=<one vertex>) ---------------------------------------------------


@pytest.mark.parametrize("fused, given", [
    (None, pd.DataFrame({"vertex": [9], "p": [2.5]})),
    (False, pd.Series([0.3], index=[9])),
    (None, {9: 1}),
    (True, pd.DataFrame({"node": [9], "p": [0.5]})),
])
def test_one_vertex_personalization_is_personalized_pagerank(ring, fused, given):
    ppr, ppr_info = onyx.personalized_pagerank(ring, [9], tol=1e-2, fused=fused,
                                               return_info=True)
    pr, info = onyx.pagerank(ring, personalization=given, tol=1e-2, fused=fused,
                             return_info=True)
    np.testing.assert_array_equal(pr["pagerank"].to_numpy(), ppr["ppr_0"].to_numpy())
    assert info.iterations == ppr_info.iterations and info.fused == ppr_info.fused


def test_one_vertex_personalization_agrees_with_the_distribution_path(ring):
    """The same distribution given as an n-vector (an array in Graph.vertices order) runs the
    distribution path; it agrees within the documented tolerance."""
    ppr = onyx.personalized_pagerank(ring, [9], tol=1e-2)
    one_hot = (device.to_host(ring.vertices) == 9).astype(np.float32)
    full = onyx.pagerank(ring, personalization=one_hot, tol=1e-2)
    np.testing.assert_allclose(full["pagerank"].to_numpy(), ppr["ppr_0"].to_numpy(), atol=1e-6)


@pytest.mark.parametrize("given, message", [
    (pd.DataFrame({"vertex": [9], "p": [0.0]}), "must not all be zero"),
    (pd.DataFrame({"vertex": [9], "p": [-1.0]}), "finite and non-negative"),
    (pd.DataFrame({"vertex": [99], "p": [1.0]}), "99"),
    (pd.DataFrame({"vertex": [9], "p": [1.0], "q": [1.0]}), "one value column"),
    ({99: 1.0}, "personalization: .*99"),
    ({9: float("nan")}, "NaN or infinite"),
    (pd.Series([1.0]), "RangeIndex"),
])
def test_one_row_personalization_is_still_checked(ring, given, message):
    with pytest.raises(ValueError, match=message):
        onyx.pagerank(ring, personalization=given)


# -- bfs per call ------------------------------------------------------------------------------


def test_identity_ids_are_recognized_once(ring, path):
    assert identity_ids(path) and not identity_ids(ring)
    assert path.cached(("results", "identity ids"), lambda: None) is True


@pytest.mark.parametrize("graph", ["ring", "path"])
def test_bfs_result_without_gather_matches_original_ids(request, graph):
    g = request.getfixturevalue(graph)
    source = int(device.to_host(g.vertices)[0])
    df = to_pandas(onyx.bfs(g, source=source))
    expected = {"ring": {5: (0, None), 7: (2, 9), 9: (1, 5), 11: (3, 7), 13: (2, 9)},
                "path": {0: (0, None), 1: (1, 0), 2: (2, 1), 3: (2, 1)}}[graph]
    got = {int(v): (int(d), None if pd.isna(p) else int(p))
           for v, d, p in zip(df["vertex"], df["distance"], df["predecessor"])}
    assert got == expected
    assert str(df["predecessor"].dtype) == "Int64"


def _workspaces(g) -> list:
    """The acc workspaces the graph holds (Graph.cached under ("acc", "workspaces", ...))."""
    return [ws for key, pool in g._cache.items() if key[:2] == ("acc", "workspaces")
            for ws in pool]


def test_bfs_reuses_its_workspace_between_calls(ring):
    first = to_pandas(onyx.bfs(ring, source=5, fused=True))
    workspaces = _workspaces(ring)
    assert len(workspaces) == 1
    again = to_pandas(onyx.bfs(ring, source=5, fused=True))
    assert _workspaces(ring) == workspaces  # the same one, given back
    pd.testing.assert_frame_equal(first, again)
    other = to_pandas(onyx.bfs(ring, source=13, fused=False))  # a used workspace, reset
    assert dict(zip(other["vertex"], other["distance"])) == {13: 0, 5: 1, 9: 2, 7: 3, 11: 4}
    assert _workspaces(ring) == workspaces


# -- on a GPU: the costs on one R-MAT graph ------------------------------------------------------


@pytest.fixture(scope="module")
def rmat():
    scale = int(os.environ.get("ONYX_RAPIDS_COST_SCALE", "20"))
    g = onyx.Graph.from_edgelist(onyx.datasets.rmat(scale, seed=1), directed=False)
    hub = int(device.to_host(g.vertices)[int(device.to_host(g.out_degree).argmax())])
    return scale, g, hub


@pytest.mark.gpu
def test_gpu_bfs_per_call(rmat):
    scale, g, hub = rmat
    report = profiling.call_seconds(onyx.bfs, g, source=hub, repeat=10)
    print(f"\nR-MAT {scale}: bfs from the hub: median {report['median'] * 1e3:.2f} ms, "
          f"min {report['min'] * 1e3:.2f} ms; profiled phases (ms): "
          + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in report["phases"].items()))
    assert len(_workspaces(g)) == 1  # every call ran on the one workspace
    assert report["median"] <= report["first"]
    phases = report["phases"]
    assert phases["compile"] < 0.05  # warm: nothing compiles again
    assert phases["kernels"] > 0 and phases["result"] > 0


@pytest.mark.gpu
def test_gpu_pagerank_personalization_costs_personalized_pagerank(rmat):
    scale, g, hub = rmat
    one = pd.DataFrame({"vertex": [hub], "p": [1.0]})
    pr = profiling.call_seconds(onyx.pagerank, g, personalization=one, repeat=5)
    ppr = profiling.call_seconds(onyx.personalized_pagerank, g, [hub], repeat=5)
    print(f"\nR-MAT {scale}: pagerank(personalization=<hub>) {pr['median'] * 1e3:.2f} ms, "
          f"personalized_pagerank([hub]) {ppr['median'] * 1e3:.2f} ms")
    assert pr["median"] <= 1.15 * ppr["median"] + 1e-3  # the same engine, the same iterations
    a = to_pandas(onyx.pagerank(g, personalization=one))["pagerank"].to_numpy()
    b = to_pandas(onyx.personalized_pagerank(g, [hub]))["ppr_0"].to_numpy()
    np.testing.assert_allclose(a, b, atol=1e-6)  # heavy vertices add up with atomics
