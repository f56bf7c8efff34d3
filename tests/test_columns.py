"""The one-pass column reduction behind PageRank's stop test and dangling mass."""

import numpy as np
import pytest

from onyx_rapids import device, properties as props


@pytest.mark.parametrize("n, k", [(37, 1), (29, 3), (16, 32), (11, 33), (9, 70)])
def test_l1_change_and_dot_matches_float64(n, k):
    rng = np.random.default_rng(n * 100 + k)
    a = rng.random((n, k), dtype=np.float32)
    b = rng.random((n, k), dtype=np.float32)
    w = (rng.random(n) < 0.4).astype(np.float64) * rng.random(n)
    dot = device.zeros(k, np.float32)
    change = props.l1_change_and_dot(device.asarray(a), device.asarray(b), device.asarray(w),
                                     dot)
    l1 = np.abs(a.astype(np.float64) - b).sum(axis=0)
    assert change == pytest.approx(l1.max(), rel=1e-12)
    np.testing.assert_allclose(device.to_host(dot), w @ a.astype(np.float64), rtol=1e-6)


def test_l1_change_and_dot_of_equal_arrays_and_of_no_rows():
    a = device.asarray(np.arange(12, dtype=np.float32).reshape(4, 3))
    dot = device.zeros(3, np.float32)
    assert props.l1_change_and_dot(a, a.copy(), device.asarray(np.ones(4)), dot) == 0.0
    np.testing.assert_array_equal(device.to_host(dot), [18.0, 22.0, 26.0])
    empty = device.zeros((0, 2), np.float32)
    assert props.l1_change_and_dot(empty, empty, device.zeros(0, np.float64), dot[:2]) == 0.0
    np.testing.assert_array_equal(device.to_host(dot)[:2], [0.0, 0.0])


@pytest.mark.parametrize("shapes", [((4, 3), (4, 2), (4,)), ((4, 3), (4, 3), (3,)),
                                    ((12,), (12,), (12,))])
def test_l1_change_and_dot_rejects_mismatched_shapes(shapes):
    a, b, w = (device.zeros(s, np.float32 if len(s) > 1 or i < 2 else np.float64)
               for i, s in enumerate(shapes))
    with pytest.raises(ValueError, match="one n x k shape and n weights"):
        props.l1_change_and_dot(a, b, w, device.zeros(3, np.float32))
