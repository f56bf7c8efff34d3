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
