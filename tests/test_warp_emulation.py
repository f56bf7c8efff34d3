"""Warp intrinsics checked against NumPy.

The kernels use only numba-cuda's real API, so this file runs unchanged on a GPU and under the
simulator (where :mod:`onyx_rapids.kernels.warp_emulation` supplies the intrinsics).  The few
tests about misuse (caller outside its mask, a lane named in the mask that exited, a lane that
never arrives) launch the faulty kernel only under the simulator: on a GPU it is undefined
behaviour and may hang.  There they check the well-defined variant instead.
"""

import numpy as np
import pytest

from onyx_rapids import device  # first: picks the backend and installs the emulation
from onyx_rapids.kernels import warp_emulation
from numba import cuda

FULL = 0xFFFFFFFF
EVEN_LANES = 0x55555555
LANES = np.arange(32)


def _launch(kernel, grid, block, *args):
    """Run ``kernel``; return its array arguments, in order, as host arrays after the launch."""
    dev = [device.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    kernel[grid, block](*dev)
    device.synchronize()
    return [device.to_host(d) for d, a in zip(dev, args) if isinstance(a, np.ndarray)]


def _values(rng, n, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-1.0, 1.0, n).astype(dtype)
    return rng.integers(-1000, 1000, n).astype(dtype)


def _bits(flags):
    """uint32 ballot of each row of a (warps, 32) boolean array."""
    bits = np.asarray(flags, dtype=np.uint64) << LANES.astype(np.uint64)
    return bits.sum(axis=1).astype(np.uint32)


def _assert_close(actual, expected, dtype):
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(actual, expected)


@cuda.jit
def _xor_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    offset = 16
    while offset > 0:
        v += cuda.shfl_xor_sync(FULL, v, offset)
        offset //= 2
    out[i] = v


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_shfl_xor_butterfly_sum_per_warp_two_blocks(dtype):
    x = _values(np.random.default_rng(1), 128, dtype)
    (out,) = _launch(_xor_sum, 2, 64, x, np.zeros_like(x))[1:]
    # Every lane of each of the 4 warps (2 per block) holds its own warp's sum: no mixing.
    expected = np.repeat(x.reshape(4, 32).sum(axis=1, dtype=np.float64), 32)
    _assert_close(out, expected, dtype)


@cuda.jit
def _inclusive_scan(x, out):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    delta = 1
    while delta < 32:
        up = cuda.shfl_up_sync(FULL, v, delta)
        if lane >= delta:
            v += up
        delta *= 2
    out[i] = v


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_shfl_up_inclusive_scan_matches_cumsum(dtype):
    x = _values(np.random.default_rng(2), 96, dtype)
    (out,) = _launch(_inclusive_scan, 1, 96, x, np.zeros_like(x))[1:]
    _assert_close(out, np.cumsum(x.reshape(3, 32), axis=1, dtype=np.float64).ravel(), dtype)


@cuda.jit
def _shift_and_reduce(x, delta, up, down, total):
    i = cuda.grid(1)
    v = x[i]
    up[i] = cuda.shfl_up_sync(FULL, v, delta)
    down[i] = cuda.shfl_down_sync(FULL, v, delta)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(FULL, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        total[i // 32] = v


def test_shfl_up_down_shift_keep_own_value_out_of_range_and_reduce():
    rng = np.random.default_rng(3)
    x = rng.integers(-1000, 1000, 64).astype(np.int32)
    delta = int(rng.integers(1, 32))
    up, down, total = _launch(
        _shift_and_reduce, 1, 64, x, delta, np.zeros_like(x), np.zeros_like(x),
        np.zeros(2, np.int64),
    )[1:]
    w = x.reshape(2, 32)
    src_up = np.where(LANES >= delta, LANES - delta, LANES)
    src_down = np.where(LANES + delta < 32, LANES + delta, LANES)
    np.testing.assert_array_equal(up.reshape(2, 32), w[:, src_up])
    np.testing.assert_array_equal(down.reshape(2, 32), w[:, src_down])
    np.testing.assert_array_equal(total, w.sum(axis=1))


@cuda.jit
def _gather(x, src, root, gathered, broadcast):
    i = cuda.grid(1)
    v = x[i]
    gathered[i] = cuda.shfl_sync(FULL, v, src[i])
    broadcast[i] = cuda.shfl_sync(FULL, v, root)


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_shfl_sync_permutation_arbitrary_sources_and_broadcast(dtype):
    rng = np.random.default_rng(4)
    x = _values(rng, 128, dtype)
    # Warps 0 and 2 read a permutation of their lanes, warps 1 and 3 arbitrary lanes (repeats).
    src = np.concatenate(
        [rng.permutation(32), rng.integers(0, 32, 32), rng.permutation(32), rng.integers(0, 32, 32)]
    ).astype(np.int32)
    root = int(rng.integers(0, 32))
    gathered, broadcast = _launch(
        _gather, 2, 64, x, src, root, np.zeros_like(x), np.zeros_like(x)
    )[2:]
    w, src = x.reshape(4, 32), src.reshape(4, 32)
    np.testing.assert_array_equal(gathered.reshape(4, 32), np.take_along_axis(w, src, axis=1))
    np.testing.assert_array_equal(broadcast.reshape(4, 32), np.repeat(w[:, [root]], 32, axis=1))


@cuda.jit
def _votes(pred, ballot, all_true, any_true):
    i = cuda.grid(1)
    p = pred[i] != 0
    ballot[i] = cuda.ballot_sync(FULL, p)
    all_true[i] = cuda.all_sync(FULL, p)
    any_true[i] = cuda.any_sync(FULL, p)


def test_ballot_all_any_with_random_predicates():
    rng = np.random.default_rng(5)
    flags = rng.random((4, 32)) < 0.5
    flags[0, 31] = True  # the top bit, negative in the GPU's int32 ballot
    flags[1] = True  # all true
    flags[2] = False
    flags[2, rng.integers(0, 32)] = True  # exactly one true
    flags[3] = False  # none true
    pred = (flags * rng.integers(1, 100, flags.shape)).astype(np.int32).ravel()
    n = pred.size
    ballot, all_true, any_true = _launch(
        _votes, 1, n, pred, np.zeros(n, np.uint32), np.full(n, 7, np.int32), np.full(n, 7, np.int32)
    )[1:]
    np.testing.assert_array_equal(ballot, np.repeat(_bits(flags), 32))
    np.testing.assert_array_equal(all_true, np.repeat(flags.all(axis=1), 32).astype(np.int32))
    np.testing.assert_array_equal(any_true, np.repeat(flags.any(axis=1), 32).astype(np.int32))


@cuda.jit
def _half_warp_sums(x, out):
    i = cuda.grid(1)
    v = x[i]
    # Both halves shuffle at the same time, each in its own branch with its own mask.
    if cuda.laneid < 16:
        offset = 8
        while offset > 0:
            v += cuda.shfl_xor_sync(0x0000FFFF, v, offset)
            offset //= 2
    else:
        offset = 8
        while offset > 0:
            v += cuda.shfl_xor_sync(0xFFFF0000, v, offset)
            offset //= 2
    out[i] = v


def test_divergent_half_warps_shuffle_within_their_masks():
    x = np.random.default_rng(6).integers(-1000, 1000, 64).astype(np.int32)
    (out,) = _launch(_half_warp_sums, 1, 64, x, np.zeros_like(x))[1:]
    np.testing.assert_array_equal(out, np.repeat(x.reshape(4, 16).sum(axis=1), 16))


@cuda.jit
def _even_lanes(x, pred, rotated, xored, ballot):
    i = cuda.grid(1)
    lane = cuda.laneid
    if lane % 2 == 0:
        v = x[i]
        rotated[i] = cuda.shfl_sync(EVEN_LANES, v, (lane + 2) % 32)
        xored[i] = cuda.shfl_xor_sync(EVEN_LANES, v, 6)
        ballot[i] = cuda.ballot_sync(EVEN_LANES, pred[i] != 0)


def test_even_lanes_only_with_mask_0x55555555():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1000, 64).astype(np.int32)
    pred = rng.integers(0, 2, 64).astype(np.int32)
    pred[1::2] = 1  # odd lanes' predicates must not show in the ballot
    sentinel = -12345
    rotated, xored, ballot = _launch(
        _even_lanes, 1, 64, x, pred, np.full(64, sentinel, np.int32),
        np.full(64, sentinel, np.int32), np.zeros(64, np.uint32),
    )[2:]
    w, even = x.reshape(2, 32), LANES % 2 == 0
    rot, xo, bal = rotated.reshape(2, 32), xored.reshape(2, 32), ballot.reshape(2, 32)
    np.testing.assert_array_equal(rot[:, even], w[:, (LANES[even] + 2) % 32])
    np.testing.assert_array_equal(xo[:, even], w[:, LANES[even] ^ 6])
    expected_bits = _bits(pred.reshape(2, 32).astype(bool) & even)
    np.testing.assert_array_equal(bal[:, even], np.repeat(expected_bits[:, None], 16, axis=1))
    assert (rot[:, ~even] == sentinel).all() and (xo[:, ~even] == sentinel).all()
    assert (bal[:, ~even] == 0).all()


@cuda.jit
def _partial_warp(x, scan, bits, first):
    i = cuda.threadIdx.x
    lane = cuda.laneid
    n = min(32, cuda.blockDim.x - (i // 32) * 32)  # lanes of this warp that exist
    mask = FULL if n == 32 else (1 << n) - 1
    v = x[i]
    delta = 1
    while delta < n:
        up = cuda.shfl_up_sync(mask, v, delta)
        if lane >= delta:
            v += up
        delta *= 2
    scan[i] = v
    bits[i] = cuda.ballot_sync(mask, x[i] > 0)
    first[i] = cuda.shfl_sync(mask, x[i], 0)


def test_block_of_48_threads_partial_second_warp():
    x = np.random.default_rng(8).integers(-50, 50, 48).astype(np.int32)
    scan, bits, first = _launch(
        _partial_warp, 1, 48, x, np.zeros_like(x), np.zeros(48, np.uint32), np.zeros_like(x)
    )[1:]
    np.testing.assert_array_equal(scan, np.concatenate([np.cumsum(x[:32]), np.cumsum(x[32:])]))
    positive = np.zeros((2, 32), bool)
    positive[0], positive[1, :16] = x[:32] > 0, x[32:] > 0
    np.testing.assert_array_equal(bits, np.repeat(_bits(positive), [32, 16]))
    np.testing.assert_array_equal(first, np.repeat([x[0], x[32]], [32, 16]))


@cuda.jit
def _repeated(x, sums, ballots, final):
    i = cuda.grid(1)
    lane = cuda.laneid
    v = x[i]
    for it in range(10):
        v = cuda.shfl_sync(FULL, v, (lane + 1) % 32)  # rotate the warp's values by one lane
        s = v * (lane + 1)
        offset = 16
        while offset > 0:
            s += cuda.shfl_xor_sync(FULL, s, offset)
            offset //= 2
        sums[it, i] = s
        ballots[it, i] = cuda.ballot_sync(FULL, (v + it) % 3 == 0)
        cuda.syncwarp()
    final[i] = v


def test_repeated_intrinsics_in_a_loop():
    x = np.random.default_rng(9).integers(0, 1000, 64).astype(np.int32)
    sums, ballots, final = _launch(
        _repeated, 1, 64, x, np.zeros((10, 64), np.int64), np.zeros((10, 64), np.uint32),
        np.zeros_like(x),
    )[1:]
    w = x.reshape(2, 32).astype(np.int64)
    for it in range(10):
        v = np.roll(w, -(it + 1), axis=1)  # v[l] = w[(l + it + 1) % 32]
        np.testing.assert_array_equal(sums[it], np.repeat((v * (LANES + 1)).sum(axis=1), 32))
        np.testing.assert_array_equal(ballots[it], np.repeat(_bits((v + it) % 3 == 0), 32))
    np.testing.assert_array_equal(final.reshape(2, 32), np.roll(w, -10, axis=1))


@cuda.jit
def _compact(x, keep, lanemask, out, counts):
    i = cuda.grid(1)
    lane = cuda.laneid
    lanemask[i] = cuda.lanemask_lt()
    k = keep[i] != 0
    votes = cuda.ballot_sync(FULL, k)
    if k:
        out[i - lane + cuda.popc(votes & cuda.lanemask_lt())] = x[i]
    if lane == 0:
        counts[i // 32] = cuda.popc(votes)


def test_lanemask_lt_and_warp_compaction():
    rng = np.random.default_rng(10)
    x = rng.integers(1, 1000, 64).astype(np.int32)
    keep = (rng.random(64) < 0.4).astype(np.int32)
    keep[31] = 1
    lanemask, out, counts = _launch(
        _compact, 1, 64, x, keep, np.zeros(64, np.uint32), np.zeros_like(x), np.zeros(2, np.int32)
    )[2:]
    np.testing.assert_array_equal(lanemask, np.tile((1 << LANES) - 1, 2).astype(np.uint32))
    for w in range(2):
        kept = x[32 * w : 32 * w + 32][keep[32 * w : 32 * w + 32] != 0]
        assert counts[w] == kept.size
        np.testing.assert_array_equal(out[32 * w : 32 * w + kept.size], kept)


@cuda.jit
def _read_lane_1(x, mask, out):
    i = cuda.grid(1)
    out[i] = cuda.shfl_sync(mask, x[i], 1)


def test_caller_outside_its_mask():
    x = np.random.default_rng(11).integers(-1000, 1000, 32).astype(np.int32)
    (out,) = _launch(_read_lane_1, 1, 32, x, FULL, np.zeros_like(x))[1:]
    np.testing.assert_array_equal(out, np.full(32, x[1]))
    if device.is_simulator():
        # Lane 0 calls with a mask that leaves it out (undefined behaviour on a GPU).
        with pytest.raises(RuntimeError, match="lane 0 .* is not in its mask"):
            _launch(_read_lane_1, 1, 32, x, 0xFFFFFFFE, np.zeros_like(x))


@cuda.jit
def _after_early_exit(x, mask, out):
    i = cuda.grid(1)
    if cuda.laneid >= 16:
        return
    out[i] = cuda.shfl_xor_sync(mask, x[i], 1)


def test_lanes_named_in_mask_that_exited():
    x = np.random.default_rng(12).integers(-1000, 1000, 32).astype(np.int32)
    (out,) = _launch(_after_early_exit, 1, 32, x, 0x0000FFFF, np.zeros_like(x))[1:]
    np.testing.assert_array_equal(out[:16], x[:16][LANES[:16] ^ 1])
    if device.is_simulator():
        # The full mask names lanes 16..31, which returned (undefined behaviour on a GPU).
        lane = r"(1[6-9]|2\d|3[01])"  # the lanes of 16..31 that had exited by then
        message = rf"lanes \[{lane}(, {lane})*\] named in the mask exited"
        with pytest.raises(RuntimeError, match=message):
            _launch(_after_early_exit, 1, 32, x, FULL, np.zeros_like(x))


@cuda.jit
def _stuck(x, faulty, out):
    i = cuda.grid(1)
    if faulty and cuda.laneid >= 16:
        cuda.syncthreads()  # never meets the lanes below, which wait in syncwarp
    else:
        cuda.syncwarp(FULL)
    out[i] = x[i]


def test_lane_that_never_arrives_times_out(monkeypatch):
    x = np.random.default_rng(13).integers(-1000, 1000, 32).astype(np.int32)
    (out,) = _launch(_stuck, 1, 32, x, 0, np.zeros_like(x))[1:]
    np.testing.assert_array_equal(out, x)
    if device.is_simulator():
        monkeypatch.setattr(warp_emulation, "TIMEOUT_S", 0.3)
        with pytest.raises(RuntimeError, match=r"lanes \[16, .*31\] did not arrive within 0.3 s"):
            _launch(_stuck, 1, 32, x, 1, np.zeros_like(x))


@cuda.jit
def _activemask(out):
    i = cuda.threadIdx.x
    warp = i // 32
    n = min(32, cuda.blockDim.x - warp * 32)
    live = min(n, 20) if warp == 0 else n  # warp 0 drops its lanes 20..31
    if cuda.laneid >= live:
        return
    mask = FULL if live == 32 else (1 << live) - 1
    while cuda.activemask() & ~mask:
        pass  # until the dropped lanes have exited (at once on a GPU)
    out[i] = cuda.activemask()
    cuda.syncwarp(mask)  # no lane exits before every lane has read the mask


def test_activemask_excludes_exited_and_missing_lanes():
    (out,) = _launch(_activemask, 1, 48, np.zeros(48, np.uint32))
    own = (1 << (np.arange(48) % 32)).astype(np.uint32)
    live = np.repeat([0xFFFFF, 0, 0xFFFF], [20, 12, 16]).astype(np.uint32)
    ran = live != 0
    if device.is_simulator():
        # The simulator cannot see divergence: every live lane of the warp counts as active.
        np.testing.assert_array_equal(out, live)
    else:
        # A GPU guarantees only that the caller is active and exited/missing lanes are not.
        assert ((out[ran] & own[ran]) != 0).all()
        assert (out[ran] & ~live[ran] == 0).all()
    assert (out[~ran] == 0).all()


@cuda.jit
def _syncwarp_exchange(x, out):
    i = cuda.threadIdx.x
    buf = cuda.shared.array(64, dtype=np.int32)
    buf[i] = x[i]
    cuda.syncwarp()
    out[i] = buf[i ^ 31]  # a lane of the same warp


def test_syncwarp_orders_shared_memory_within_warp_and_install_is_idempotent():
    warp_emulation.install()
    warp_emulation.install()
    x = np.random.default_rng(14).integers(-1000, 1000, 64).astype(np.int32)
    (out,) = _launch(_syncwarp_exchange, 1, 64, x, np.zeros_like(x))[1:]
    np.testing.assert_array_equal(out, x[np.arange(64) ^ 31])
    if device.is_simulator():
        from numba.cuda.simulator.kernel import BlockThread
        from numba.cuda.simulator.kernelapi import FakeCUDAModule

        assert FakeCUDAModule.shfl_sync is warp_emulation.shfl_sync
        assert not hasattr(BlockThread.run.__wrapped__, "_records_exit")  # wrapped only once


def test_simulator_shared_array_is_one_array_however_threads_race(monkeypatch):
    """Threads that reach a ``cuda.shared.array`` line together must get the same array: the
    simulator allocates on first use, and unlocked, threads racing through a slow allocation
    each got a private copy (numpy.empty is slowed here so that every thread is inside it)."""
    import threading
    import time

    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(0.01)  # releases the GIL: the other threads reach the allocation too
        return empty(*args, **kwargs)

    monkeypatch.setattr(np, "empty", slow_empty)
    shared = FakeCUDAShared(0)
    start = threading.Barrier(16)
    got = [None] * 16

    def take(i):
        start.wait()
        got[i] = warp_emulation._shared_array(shared, (3, 2), np.int64)

    threads = [threading.Thread(target=take, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(a is got[0] for a in got) and got[0].shape == (3, 2)
    if device.is_simulator():  # installed: kernels' cuda.shared.array is this function
        assert FakeCUDAShared.array is warp_emulation._shared_array
