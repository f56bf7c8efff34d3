"""Register aggregates (``Edge(.., store=False)`` read by ``Vertex(.., aggregate=...)`` or a
``Normalize`` source): the folded pull gives the stored aggregate's result in every mapping and
width, heavy vertices included (their scratch rows are reset for the next launch), and the
misuses are refused by name."""

import numpy as np
import pytest
from numba import cuda

from graphs import csr_edges
from onyx_rapids import device, operators as ops
from test_operators import _setup, scaled


@cuda.jit(device=True)
def mix(f, v, acc, out, x):
    out[v, f] = 0.5 * acc + x[v, f]
    return True


@cuda.jit(device=True)
def mix_array(f, v, acc, out, x):
    out[v, f] = 0.5 * acc[v, f] + x[v, f]
    return True


@cuda.jit(device=True)
def scaled_rows(f, u, v, e, rows, w):
    return rows[u, f] * w[e, 0]


@cuda.jit(device=True)
def lowest(f, v, acc, out):
    out[v, f] = acc
    return True


@pytest.fixture
def heavy_everywhere(monkeypatch):
    """Small graphs get heavy vertices: their in-edges go through the chunk kernel."""
    monkeypatch.setattr(ops, "HEAVY_ROUNDS", 1)
    monkeypatch.setattr(ops, "HEAVY_MEAN", 1.5)
    monkeypatch.setattr(ops, "CHUNK_ROUNDS", 2)


def _expected(g, x, w, reduce="sum"):
    src, dst = csr_edges(g)
    values = x[src].astype(np.float64) * w[:, :1]
    if reduce == "sum":
        out = np.zeros((g.n, x.shape[1]))
        np.add.at(out, dst, values)
        return out
    out = np.full((g.n, x.shape[1]), np.inf)
    np.minimum.at(out, dst, values)
    return out


@pytest.mark.parametrize("k, width, fa", [(1, 1, True), (3, 1, True), (6, 2, True),
                                          (8, 4, True), (40, 4, True), (40, 1, True),
                                          (5, 1, False)])
def test_register_aggregate_equals_the_stored_one(heavy_everywhere, k, width, fa):
    g, _, _, x, w, _ = _setup(k, seed=5)
    args = dict(x=device.asarray(x), w=device.asarray(w))
    expected = 0.5 * _expected(g, x, w) + x
    runs = []
    for store in (True, False, False):  # the second register launch reuses the scratch
        call = dict(args, acc=device.zeros((g.n, k), np.float32),
                    out=device.zeros((g.n, k), np.float32))
        with ops.profile_kernels() as times:
            ops.foldmap(g, [ops.Edge(scaled, "acc", store=store),
                            ops.Vertex(mix if not store else mix_array,
                                       aggregate="acc" if not store else None)],
                        call, k=k, options=ops.MapOptions(width=width, feature_aware=fa))
        if fa:
            assert any(s.chunk_kernel for s in times)  # heavy vertices took the chunk path
        if not store:  # the stored array was neither written nor read
            assert not device.to_host(call["acc"]).any()
        runs.append(device.to_host(call["out"]))
    np.testing.assert_allclose(runs[0], expected, rtol=1e-5)
    # (the chunk kernel's float atomics add in any order on a GPU; a scratch row left
    # unreset would double the heavy vertices' sums)
    for run in runs[1:]:
        np.testing.assert_allclose(run, runs[0], rtol=1e-6)


def test_min_register_aggregate_and_its_scratch_reset(heavy_everywhere):
    g, _, _, x, w, _ = _setup(3, seed=8)
    args = dict(x=device.asarray(x), w=device.asarray(w))
    expected = _expected(g, x, w, "min")
    for x_scale in (1.0, 2.0):  # a stale minimum from the first launch would win the second
        call = dict(args, x=device.asarray(x * x_scale), out=device.zeros((g.n, 3), np.float32))
        ops.foldmap(g, [ops.Edge(scaled, "acc", reduce="min", store=False),
                        ops.Vertex(lowest, aggregate="acc")], call, k=3)
        got = device.to_host(call["out"]).astype(np.float64)
        has_in = np.isfinite(expected).all(axis=1)
        np.testing.assert_allclose(got[has_in], x_scale * expected[has_in], rtol=1e-6)
        assert np.isinf(got[~has_in]).all()


@pytest.mark.parametrize("k, segment, width", [(6, 3, 1), (8, 4, 2), (8, 8, 4)])
def test_normalize_reads_a_register_aggregate(heavy_everywhere, k, segment, width):
    g, _, _, x, w, _ = _setup(k, seed=9)
    call = dict(rows=device.asarray(x), w=device.asarray(w),
                prob=device.zeros((g.n, k), np.float32))
    ops.foldmap(g, [ops.Edge(scaled_rows, "acc", store=False),
                    ops.Normalize("acc", "prob", segment)], call, k=k,
                    options=ops.MapOptions(width=width))
    rows = _expected(g, x, w).reshape(g.n, k // segment, segment)
    sums = rows.sum(axis=2, keepdims=True)
    expected = np.where(sums != 0, rows / np.where(sums != 0, sums, 1), rows)
    np.testing.assert_allclose(device.to_host(call["prob"]), expected.reshape(g.n, k),
                               atol=1e-6)


def test_vertexmap_aggregate_reads_the_array():
    g, _, _, x, w, _ = _setup(3, seed=2)
    acc = device.asarray(np.arange(g.n * 3, dtype=np.float32).reshape(g.n, 3))
    call = dict(x=device.asarray(x), acc=acc, out=device.zeros((g.n, 3), np.float32))
    ops.vertexmap(g, ops.Vertex(mix, aggregate="acc"), call, k=3)
    np.testing.assert_allclose(device.to_host(call["out"]),
                               0.5 * device.to_host(acc) + x, rtol=1e-6)


@pytest.mark.parametrize("steps, direction, match", [
    ([ops.Edge(scaled, "acc", store=False)], "pull", r"\['acc'\] are read by no"),
    ([ops.Vertex(mix, aggregate="acc"), ops.Edge(scaled, "acc", store=False)], "push",
     "needs direction='pull'"),
    ([ops.Edge(scaled, "acc", store=False), ops.Vertex(mix_array)], "pull",
     "'acc' is the register aggregate"),
    ([ops.Edge(scaled, "acc", store=False), ops.Vertex(mix, aggregate="total")], "pull",
     "aggregate='total': mix has no parameter"),
    ([ops.Edge(scaled, "acc", store=False), ops.Vertex(mix, aggregate="acc"),
      ops.Normalize("out", "acc")], "pull", "'acc' is the register aggregate"),
])
def test_register_misuse_is_refused(steps, direction, match):
    g, _, _, x, w, _ = _setup(3, seed=1)
    call = dict(x=device.asarray(x), w=device.asarray(w), out=device.zeros((g.n, 3), np.float32))
    with pytest.raises(ValueError, match=match):
        ops.foldmap(g, steps, call, k=3, direction=direction)


def test_gather_misuse_is_refused():
    g, _, _, x, w, _ = _setup(3, seed=1)
    call = dict(x=device.asarray(x), out=device.zeros((g.n, 3), np.float32))
    with pytest.raises(ValueError, match="Gather sums its rows; reduce='min'"):
        ops.foldmap(g, [ops.Gather("x", "out", reduce="min")], call, k=3)
    with pytest.raises(ValueError, match="Gather rows 'acc' is a register aggregate"):
        ops.foldmap(g, [ops.Edge(scaled, "acc", store=False), ops.Gather("acc", "out"),
                        ops.Vertex(mix, aggregate="acc")], dict(call, w=device.asarray(w)), k=3)


def test_heavy_row_is_reserved():
    g, _, _, x, w, _ = _setup(3, seed=1)
    with pytest.raises(ValueError, match="'heavy_row' is reserved"):
        ops.edgemap(g, scaled, "acc", dict(x=device.asarray(x), w=device.asarray(w),
                                          acc=device.zeros((g.n, 3), np.float32),
                                          heavy_row=device.zeros(g.n, np.int32)))
