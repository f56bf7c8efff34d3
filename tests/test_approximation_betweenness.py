"""Betweenness from fewer sources (issue 37's ``source_fraction``): at 1 the exact call bit for
bit, below it the call on the first ceil(fraction x s) of its sources (at least 2), scaled as
that many sampled sources, with a row for every vertex; refusals name the knob."""

import time

import numpy as np
import pandas as pd
import pytest

from graphs import assert_refused, pandas
import onyx_rapids as onyx
from onyx_rapids import Approximation, datasets, registry
from onyx_rapids.algorithms.betweenness_centrality import sample_sources


@pytest.fixture(scope="module")
def karate():
    """A 14-vertex slice of the karate club (its first 24 edges): small for the simulator."""
    return onyx.Graph.from_edgelist(datasets.load_edges("karate").head(24), directed=False)


def _bc(df):
    return df.set_index("vertex")["betweenness_centrality"].sort_index()


def test_registry_declares_the_knob():
    for name in ("betweenness_centrality", "edge_betweenness_centrality"):
        assert registry.get(name).knobs() == {"source_fraction": "a number in (0, 1]"}


def test_fraction_one_is_the_exact_call(karate):
    exact = onyx.betweenness_centrality(karate, k=8, seed=3)
    same, info = onyx.betweenness_centrality(
        karate, k=8, seed=3, approximation=Approximation(source_fraction=1.0), return_info=True)
    pd.testing.assert_frame_equal(pandas(exact), pandas(same))
    assert info.estimate == {"sources": 8, "exact_sources": 8}


def test_fraction_runs_the_first_sources(karate):
    chosen = list(sample_sources(karate, 8, seed=3))
    half, info = onyx.betweenness_centrality(
        karate, k=8, seed=3, approximation=Approximation(source_fraction=0.3),
        return_info=True)
    assert info.estimate == {"sources": 3, "exact_sources": 8}  # ceil(0.3 x 8)
    assert info.approximation == {"source_fraction": 0.3}
    first = onyx.betweenness_centrality(karate, sources=chosen[:3])
    assert len(half) == karate.n
    np.testing.assert_allclose(_bc(half).to_numpy(), _bc(first).to_numpy(), rtol=1e-12)


def test_every_source_draws_a_seeded_sample(karate):
    knob = Approximation(source_fraction=0.25)
    a = onyx.betweenness_centrality(karate, seed=5, approximation=knob)
    count = -(-karate.n // 4)  # ceil(0.25 n)
    b = onyx.betweenness_centrality(karate, k=count, seed=5)  # the same draw
    np.testing.assert_allclose(_bc(a).to_numpy(), _bc(b).to_numpy(), rtol=1e-12)
    exact = onyx.betweenness_centrality(karate)
    assert not np.allclose(_bc(a).to_numpy(), _bc(exact).to_numpy())  # an estimate


def test_at_least_two_sources_and_edge_betweenness(karate):
    df, info = onyx.edge_betweenness_centrality(
        karate, k=4, seed=1, approximation=Approximation(source_fraction=0.01),
        return_info=True)
    assert info.estimate["sources"] == 2 and np.isfinite(df["betweenness_centrality"]).all()
    assert len(df) == karate.m // 2


@pytest.mark.gpu
def test_rmat16_fewer_sources_on_the_gpu():
    """R-MAT 16, 512 sampled sources against a quarter of them: the first 128 of the same
    draw (equal to passing them as ``sources``), one batch of lanes instead of two, and an
    estimate close to the full sample on the top vertices; prints both times."""
    g = onyx.Graph.from_edgelist(datasets.rmat(16, seed=3))
    knob = Approximation(source_fraction=0.25)
    runs = {}
    for name, kw in (("exact", {}), ("quarter", dict(approximation=knob))):
        for _ in range(2):  # the second call: kernels built
            started = time.perf_counter()
            df, info = onyx.betweenness_centrality(g, k=512, seed=7, return_info=True, **kw)
            runs[name] = (_bc(df), info, time.perf_counter() - started)
    (full, _, t_full), (quarter, info, t_quarter) = runs["exact"], runs["quarter"]
    same = onyx.betweenness_centrality(g, sources=list(sample_sources(g, 512, seed=7))[:128])
    np.testing.assert_allclose(quarter.to_numpy(), _bc(same).to_numpy(), rtol=1e-9)
    assert info.estimate == {"sources": 128, "exact_sources": 512}
    top = full.nlargest(20).index
    print(f"R-MAT 16 betweenness, 512 sources {t_full * 1e3:.1f} ms, a quarter "
          f"{t_quarter * 1e3:.1f} ms; top-20 relative error "
          f"{float((quarter[top] - full[top]).abs().sum() / full[top].sum()):.3f}")
    assert len(quarter) == g.n and np.isfinite(quarter.to_numpy()).all()
    assert float((quarter[top] - full[top]).abs().sum() / full[top].sum()) < 0.25


@pytest.mark.parametrize("call, needles", [
    (lambda g: onyx.betweenness_centrality(g, approximation=Approximation(edge_fraction=0.5)),
     ["betweenness_centrality does not support approximation edge_fraction=0.5",
      "its approximation knobs are source_fraction"]),
    (lambda g: onyx.betweenness_centrality(g, approximation=Approximation(source_fraction=0)),
     ["source_fraction must be a number in (0, 1], got 0"]),
    (lambda g: onyx.betweenness_centrality(g, approximation=Approximation(source_fraction="x")),
     ["source_fraction", "got 'x'"]),
])
def test_refusals_name_the_knob(call, needles):
    assert_refused(call, needles)
