"""Several consecutive features per thread (``width``): every generated pull shape gives the
one-feature result, the chooser's rule, and the widths a kernel cannot take are refused."""

import warnings

import numpy as np
import pandas as pd
import pytest

import oracles_learning
from graphs import build, csr_edges
from onyx_rapids import Execution, device, operators as ops
from onyx_rapids import bfs, feature_propagation, label_propagation, personalized_pagerank
from test_operators import _setup, scaled

rng = np.random.default_rng(5)


@pytest.mark.parametrize("k, width", [(4, 2), (8, 4), (12, 4), (6, 2)])  # T = 2, 2, 4 (of 3), 4
@pytest.mark.parametrize("reduce", ["sum", "max"])
def test_edge_pull_matches_one_feature_per_thread(k, width, reduce):
    g, _, _, x, w, active = _setup(k, seed=7)
    results = []
    for wd in (1, width):
        acc = device.zeros((g.n, k), np.float32)
        args = dict(x=device.asarray(x), w=device.asarray(w), acc=acc)
        with ops.profile_kernels() as times:
            ops.edgemap(g, scaled, "acc", args, reduce=reduce, direction="pull",
                        options=ops.MapOptions(width=wd))
        assert [s.width for s in times] == [wd]
        results.append(device.to_host(acc))
    np.testing.assert_array_equal(results[0], results[1])
    assert np.abs(results[0]).sum() > 0


@pytest.mark.parametrize("k, segment, width, log", [(8, 4, 2, False), (8, 8, 4, False),
                                                    (12, 4, 4, False), (8, 4, 2, True),
                                                    (8, 8, 4, True)])
def test_normalize_with_several_features_per_thread(k, segment, width, log):
    g = build("directed", seed=4)
    values = rng.random((g.n, k)).astype(np.float32)
    if log:
        values = values * 50 - 1e5  # exp() of these alone would underflow
    else:
        values[0] = 0.0  # a zero row stays zero
    dst = device.zeros((g.n, k), np.float32)
    ops.vertexmap(g, [ops.Normalize("src", "dst", segment, log=log)],
                  dict(src=device.asarray(values), dst=dst), k=k,
                  options=ops.MapOptions(width=width))
    rows = values.reshape(g.n, k // segment, segment).astype(np.float64)
    if log:
        e = np.exp(rows - rows.max(axis=2, keepdims=True))
        expected = e / e.sum(axis=2, keepdims=True)
    else:
        sums = rows.sum(axis=2, keepdims=True)
        expected = np.where(sums != 0, rows / np.where(sums != 0, sums, 1), rows)
    assert np.allclose(device.to_host(dst), expected.reshape(g.n, k), atol=1e-6)


def test_heavy_vertex_chunks_with_several_features_per_thread(monkeypatch):
    monkeypatch.setattr(ops, "HEAVY_ROUNDS", 1)
    monkeypatch.setattr(ops, "HEAVY_MEAN", 0)
    monkeypatch.setattr(ops, "CHUNK_ROUNDS", 2)
    g, src, dst, x, w, _ = _setup(8, seed=3)
    acc = device.zeros((g.n, 8), np.float32)
    args = dict(x=device.asarray(x), w=device.asarray(w), acc=acc)
    with ops.profile_kernels() as times:
        ops.edgemap(g, scaled, "acc", args, direction="pull", options=ops.MapOptions(width=4))
    assert any(s.chunk_kernel and s.width == 4 for s in times)
    expected = np.zeros((g.n, 8))
    np.add.at(expected, dst, x[src].astype(np.float64) * w[:, :1])
    assert np.allclose(device.to_host(acc), expected, atol=1e-5)


def test_algorithms_agree_across_widths_and_with_the_oracle():
    g = build("undirected", seed=2)
    src, dst = csr_edges(g)
    sources = device.to_host(g.vertices)[[0, 1, 2, 3]]
    # alpha 0.6: a third of the default's iterations (CI time), the same width-4 kernels
    expected = oracles_learning.personalized_pagerank(g.n, src, dst, [0, 1, 2, 3], alpha=0.6)
    got = personalized_pagerank(g, sources, alpha=0.6, width=4, fused=False)  # LP: width 2
    got = got.to_pandas() if hasattr(got, "to_pandas") else got
    ppr = got[[f"ppr_{i}" for i in range(4)]].to_numpy(np.float64)
    assert np.abs(ppr - expected).sum(axis=0).max() <= 1e-4
    X = rng.random((g.n, 8)).astype(np.float32)
    one = feature_propagation(g, X, iterations=3, width=1)
    four = feature_propagation(g, X, iterations=3, width=4)
    np.testing.assert_allclose(four.to_numpy()[:, 1:], one.to_numpy()[:, 1:], atol=1e-6)
    labels = {"vertex": device.to_host(g.vertices)[[0, 5]], "label": [0, 3]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 3 iterations: enough to compare
        lp1 = label_propagation(g, pd.DataFrame(labels), 4, width=1, max_iter=3)
        lp2 = label_propagation(g, pd.DataFrame(labels), 4, width=2, max_iter=3)
    np.testing.assert_allclose(lp2.to_numpy()[:, 1:5].astype(float),
                               lp1.to_numpy()[:, 1:5].astype(float), atol=1e-6)


def test_chooser_rule():
    checked = lambda k, segment=None: ops._Checked(  # noqa: E731
        k=k, direction="pull", args={}, functions=(),
        specs=(ops.codegen.StepSpec("normalize", segment=segment),) if segment else (),
        dtypes=(), has_edges=True)
    assert [ops._width(checked(k), True, None) for k in (1, 16, 32, 64, 96, 128, 256)] == \
        [1, 1, 4, 4, 4, 4, 4]
    assert ops._width(checked(96, segment=6), True, None) == 2  # 4 splits a segment
    assert ops._width(checked(34), True, None) == 2
    assert ops._width(checked(128), False, None) == 1
    with pytest.raises(ValueError, match=r"width=4: k=6 .* possible here: \[1, 2\]"):
        ops._width(checked(6), True, 4)


def test_bad_widths_are_refused():
    g = build("undirected", seed=2)
    with pytest.raises(ValueError, match="width .* must be None, 1, 2 or 4, got 3"):
        Execution(width=3)
    with pytest.raises(ValueError, match="width=4: k=6"):
        feature_propagation(g, rng.random((g.n, 6)).astype(np.float32), width=4)
    with pytest.raises(ValueError, match="fused=True with width=2"):
        personalized_pagerank(g, device.to_host(g.vertices)[:1], fused=True, width=2)
    with pytest.raises(ValueError, match="does not support .*width"):
        bfs(g, source=int(device.to_host(g.vertices)[0]), width=2)
