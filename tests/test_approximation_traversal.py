"""Reduced execution of the traversals (issue 37): ``stop_changed_fraction`` on sssp (one source
on acc, fused or not; k sources' rounds) and on weakly_connected_components' propagation.

At its exact end (a fraction below 1 / n) the result is the exact one; a loose fraction stops
earlier with a row for every vertex, distances never below the exact ones (a reduced
relaxation only overestimates) and labels never joining two components.  Round counts are
compared with margins: under the simulator a round may carry a value several hops.
"""

import time

import numpy as np
import pandas as pd
import pytest

from graphs import assert_refused
import onyx_rapids as onyx
from onyx_rapids import Approximation, datasets, registry

EXACT_END, LOOSE = Approximation(stop_changed_fraction=1e-3), Approximation(
    stop_changed_fraction=0.3)


@pytest.fixture(scope="module")
def grid():
    """A weighted 6 x 6 grid (36 vertices: 1e-3 is below 1 / n)."""
    return onyx.Graph.from_edgelist(datasets.grid_2d(6, 6, weighted=True, seed=1),
                                    directed=False, weight="weight")


def _distances(df):
    return df[[c for c in df.columns if c.startswith("distance")]].to_numpy(np.float64)


def _check_parents(df):
    """Null exactly at the source and the unreached; else a parent whose distance plus the
    edge's weight is at most the vertex's (equal on exact distances)."""
    edges = datasets.grid_2d(6, 6, weighted=True, seed=1)
    w = {(s, d): x for s, d, x in edges.itertuples(index=False)}
    w.update({(d, s): x for (s, d), x in list(w.items())})
    dist = dict(zip(df["vertex"], df["distance"]))
    pred = df.set_index("vertex")["predecessor"]
    assert (pred.isna() == ((pred.index == 0) | ~np.isfinite(df["distance"].to_numpy()))).all()
    for v, p in pred.dropna().items():
        assert np.float32(dist[p]) + np.float32(w[(p, v)]) <= np.float32(dist[v])


def test_registry_declares_the_knob():
    assert registry.get("sssp").knobs() == {"stop_changed_fraction": "a number in (0, 1)"}
    assert registry.get("weakly_connected_components").knobs() == {
        "stop_changed_fraction": "a number in (0, 1)", "merge_similarity": "a number in (0, 1]"}


@pytest.mark.parametrize("call, needles", [
    (lambda g: onyx.sssp(g, 0, approximation=Approximation(stop_top_k=3)),
     ["sssp does not support approximation stop_top_k=3",
      "its approximation knobs are stop_changed_fraction"]),
    (lambda g: onyx.weakly_connected_components(g, approximation=LOOSE),
     ["weakly_connected_components does not support approximation Approximation("
      "stop_changed_fraction=0.3) with method='hook'", "no rounds for stop_changed_fraction"]),
    (lambda g: onyx.sssp(g, 0, approximation=Approximation(stop_changed_fraction=1.5)),
     ["stop_changed_fraction must be a number in (0, 1), got 1.5"]),
], ids=["other-knob", "hook", "out-of-range"])
def test_refusals_name_the_knob(call, needles):
    assert_refused(call, needles)


def _check_sssp(exact, df, info, knob=LOOSE):
    """A row per vertex, distances never below the exact ones, the knob and estimate."""
    assert info.approximation == knob.knobs() == df.attrs["approximation"]
    assert info.estimate["rounds"] == info.iterations and info.converged
    assert (df["vertex"] == exact["vertex"]).all()
    a, e = _distances(df), _distances(exact)
    assert (a >= e).all()
    if "predecessor" in df:
        _check_parents(df)
    return a


@pytest.mark.parametrize("start", [dict(source=0), dict(sources=[0, 35])], ids=["one", "k"])
def test_sssp_exact_end_and_loose_fraction(grid, start):
    """One bucket (the default delta): the loose fraction stops the run's relaxation."""
    exact, info = onyx.sssp(grid, **start, return_info=True)
    end, at_end = onyx.sssp(grid, **start, approximation=EXACT_END, return_info=True)
    pd.testing.assert_frame_equal(end, exact)
    _check_sssp(exact, end, at_end, EXACT_END)
    assert at_end.estimate == dict(stopped_by=None, changed_fraction=0.0,
                                   rounds=at_end.iterations, unrelaxed=0)
    df, loose = onyx.sssp(grid, **start, approximation=LOOSE, return_info=True)
    a = _check_sssp(exact, df, loose)
    estimate = loose.estimate
    assert estimate["stopped_by"] == "stop_changed_fraction" and estimate["unrelaxed"] > 0
    assert 0 < estimate["changed_fraction"] < 0.3 and np.isinf(a).any()
    assert loose.iterations < info.iterations - 2
    print(f"sssp {start}: {loose.iterations} rounds (exact {info.iterations}), "
          f"{np.isinf(a).mean():.2f} unreached, estimate {estimate}")


@pytest.mark.parametrize("fused", [True, False])
def test_sssp_stopped_bucket_does_not_end_the_run(grid, fused):
    """delta = 1: several buckets; a bucket the knob stops leaves its frontier unoffered
    and the run goes on with the next (on the fused kernel as on acc's host loop)."""
    exact = onyx.sssp(grid, 0, delta=1.0)
    df, info = onyx.sssp(grid, 0, delta=1.0, fused=fused, approximation=LOOSE,
                         return_info=True)
    a = _check_sssp(exact, df, info)
    assert info.estimate["stopped_by"] == "stop_changed_fraction"
    assert info.variant["buckets"] > 1 and np.isfinite(a).sum() > 1


def test_wcc_propagation_exact_end_and_loose_fraction():
    """Two paths of 15 (0..14 and 15..29): a loose stop may split them, never join them."""
    src = np.r_[np.arange(14), np.arange(15, 29)]
    g = onyx.Graph.from_edgelist(pd.DataFrame({"src": src, "dst": src + 1}), directed=False)
    pull = dict(method="propagate", direction="pull", return_info=True)  # (a simulated push
    # carries a label along the whole path in one round)
    exact, info = onyx.weakly_connected_components(g, **pull)
    assert exact["labels"].tolist() == [0] * 15 + [15] * 15
    end, at_end = onyx.weakly_connected_components(g, approximation=EXACT_END, **pull)
    pd.testing.assert_frame_equal(end, exact)
    assert at_end.estimate["stopped_by"] is None and at_end.approximation == EXACT_END.knobs()
    df, loose = onyx.weakly_connected_components(g, approximation=LOOSE, **pull)
    assert loose.estimate["stopped_by"] == "stop_changed_fraction"
    assert loose.iterations < info.iterations - 2 and len(df) == g.n
    labels = df["labels"].to_numpy()
    assert set(labels[:15]).isdisjoint(labels[15:])  # no two components joined
    assert set(labels[:15]) <= set(range(15)) and set(labels[15:]) <= set(range(15, 30))
    print(f"wcc: {loose.iterations} rounds (exact {info.iterations}), {len(set(labels))} labels")


# -------------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
@pytest.mark.parametrize("fraction", [1e-5, 1e-4])
def test_grid512_sssp_reduced_execution_on_the_gpu(fraction):
    """Fewer rounds than the exact (fused) run; prints the mean relative distance error over
    the vertices both reach, the fraction wrongly unreached and both times.  A synchronous
    host model of the rounds predicted: 1e-5 (below 3 vertices) cuts a few bucket tails (1%
    of the rounds), 1e-4 stops the first bucket on a dip of its growing front (nearly every
    vertex unreached): the rule pays little on a grid."""
    g = onyx.Graph.from_edgelist(datasets.grid_2d(512, 512, weighted=True, seed=1),
                                 directed=False, weight="weight")
    knob = Approximation(stop_changed_fraction=fraction)
    onyx.sssp(g, 0)  # compile
    onyx.sssp(g, 0, approximation=knob)
    t0 = time.perf_counter()
    exact, info = onyx.sssp(g, 0, return_info=True)
    t1 = time.perf_counter()
    df, approx = onyx.sssp(g, 0, approximation=knob, return_info=True)
    t2 = time.perf_counter()
    a, e = _distances(df)[:, 0], _distances(exact)[:, 0]
    both = np.isfinite(a) & np.isfinite(e) & (e > 0)
    error = float(np.mean((a[both] - e[both]) / e[both]))
    unreached = float(np.mean(~np.isfinite(a) & np.isfinite(e)))
    print(f"grid 512 fraction {fraction}: {approx.iterations} rounds against {info.iterations} "
          f"exact, mean relative error {error:.4f}, wrongly unreached {unreached:.4f}, "
          f"{(t2 - t1) * 1e3:.1f} ms against {(t1 - t0) * 1e3:.1f} ms exact "
          f"({(t1 - t0) / (t2 - t1):.2f}x), estimate {approx.estimate}")
    assert approx.estimate["stopped_by"] == "stop_changed_fraction"
    assert approx.iterations < info.iterations and len(df) == g.n and (a >= e).all()
