"""The collaborative warp operations, one by one, on exactly 32 threads (simulator or GPU)."""

import numpy as np
import pytest
from numba import cuda

from onyx_rapids import device
from onyx_rapids.kernels import collective as co


@cuda.jit
def _segment_kernel(x, T, segment, sums, maxes, anys):
    lane = cuda.laneid
    f = lane % T
    gmask = co.lane_group_mask(lane, T)
    sums[lane] = co.group_segment_sum(x[lane], f, segment, T, gmask)
    maxes[lane] = co.group_segment_max(x[lane], f, segment, T, gmask)
    anys[lane] = 1 if co.group_any(x[lane] > 0.9, gmask) else 0


@pytest.mark.parametrize("T, segment", [(32, 32), (32, 5), (16, 3), (8, 8), (4, 3), (2, 1)])
def test_group_segment_reductions(T, segment):
    x = np.random.default_rng(T * 100 + segment).random(32).astype(np.float32)
    sums, maxes, anys = (device.zeros(32, t) for t in (np.float32, np.float32, np.int32))
    _segment_kernel[1, 32](device.asarray(x), T, segment, sums, maxes, anys)
    for lane in range(32):
        f = lane % T
        if f // segment * segment + segment > T:
            continue  # a partial last segment: callers never read it
        start = lane - f % segment
        assert device.to_host(sums)[lane] == pytest.approx(x[start:start + segment].sum(), rel=1e-5)
        assert device.to_host(maxes)[lane] == x[start:start + segment].max()
        group = x[lane - f:lane - f + T]
        assert device.to_host(anys)[lane] == int((group > 0.9).any())


@cuda.jit
def _scan_kernel(deg, incl, found, slots):
    lane = cuda.laneid
    inclusive = co.warp_inclusive_scan(deg[lane])
    incl[lane] = inclusive
    found[lane] = co.warp_upper_lane(inclusive - deg[lane], slots[lane])


def test_warp_scan_and_lane_search():
    rng = np.random.default_rng(3)
    deg = rng.integers(0, 4, 32).astype(np.int32)
    deg[[0, 31]] = [0, 2]
    total = int(deg.sum())
    slots = rng.integers(0, total, 32).astype(np.int32)
    incl, found = device.zeros(32, np.int32), device.zeros(32, np.int32)
    _scan_kernel[1, 32](device.asarray(deg), incl, found, device.asarray(slots))
    assert np.array_equal(device.to_host(incl), np.cumsum(deg))
    excl = np.cumsum(deg) - deg
    expected = np.searchsorted(excl, slots, side="right") - 1
    assert np.array_equal(device.to_host(found), expected)
    # the lane found owns the slot: it has edges and its range holds it
    assert (deg[expected] > 0).all()


def test_host_group_mask():
    assert co.group_mask(4, 13) == 0xF << 12
    assert co.group_mask(32, 7) == 0xFFFFFFFF


def _spd_rows(groups, d, seed):
    """Rows [A (d x d, row-major), b]: A = M M^T, SPD, of varied conditioning; float64."""
    r = np.random.default_rng(seed)
    rows = []
    for _ in range(groups):
        m = r.standard_normal((d, d + 2))
        rows.append(np.concatenate([(m @ m.T).ravel(), r.standard_normal(d)]))
    return np.array(rows)


def _expected(rows, d, lam):
    out = []
    for row in rows:
        a = row[:d * d].reshape(d, d) + lam * np.eye(d)
        out.append(np.linalg.solve(a, row[d * d:]))
    return np.array(out)


@cuda.jit
def _solve_kernel(rows, T, d, lam, out):
    lane = cuda.laneid
    f = lane % T
    group = lane // T
    a = 0.0
    if f < d * d + d:
        a = rows[group, f]
    a = co.group_spd_solve(a, f, d, lam)
    if f >= d * d and f < d * d + d:
        out[group, f - d * d] = a


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_group_spd_solve_matches_numpy(d):
    T = 1 << (d * d + d - 1).bit_length()  # next power of two of d*d + d
    groups, lam = 32 // T, 0.1
    rows = _spd_rows(groups, d, seed=d)
    out = device.zeros((groups, d), np.float64)
    _solve_kernel[1, 32](device.asarray(rows), T, d, lam, out)
    np.testing.assert_allclose(device.to_host(out), _expected(rows, d, lam), rtol=1e-9,
                               atol=1e-12)


@cuda.jit
def _block_solve_kernel(rows, T, d, lam, out):
    g = cuda.threadIdx.x // T
    f = cuda.threadIdx.x - g * T
    buf = cuda.shared.array(128, np.float64)
    a = 0.0
    if f < d * d + d:
        a = rows[g, f]
    a = co.block_spd_solve(a, f, d, lam, g * T, buf)
    if f >= d * d and f < d * d + d:
        out[g, f - d * d] = a


@pytest.mark.parametrize("d", [6, 7])
def test_block_spd_solve_matches_numpy(d):
    T, lam = 64, 0.5  # 42 and 56 entries: two groups of 64 threads in a block of 128
    rows = _spd_rows(2, d, seed=10 + d)
    out = device.zeros((2, d), np.float64)
    _block_solve_kernel[1, 128](device.asarray(rows), T, d, lam, out)
    np.testing.assert_allclose(device.to_host(out), _expected(rows, d, lam), rtol=1e-9,
                               atol=1e-12)
