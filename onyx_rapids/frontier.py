"""Active sets as uint32 bit-vectors: bit ``v`` of word ``v // 32`` is vertex ``v``.

Bits past ``n`` in the last word are always zero, so counts and emptiness tests need no mask.
"""

from __future__ import annotations

import numpy as np

from . import device


def words(n: int) -> int:
    return (int(n) + 31) // 32


def empty(n: int):
    """A bit-vector with no vertex active."""
    return device.zeros(words(n), np.uint32)


def full(n: int):
    """A bit-vector with every vertex ``0..n-1`` active."""
    bits = device.full(words(n), 0xFFFFFFFF, np.uint32)
    tail = n % 32
    if tail:
        bits[-1] = (1 << tail) - 1
    return bits


def from_vertices(n: int, vertices):
    """A bit-vector with the given internal vertex ids active.

    Ids given on the host (a NumPy array, list or int: a traversal's sources) set their words
    with one small scatter; device ids go through a boolean mask of n."""
    xp = device.xp
    if not hasattr(vertices, "__cuda_array_interface__"):
        ids = np.asarray(vertices, dtype=np.int64).ravel()
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
            raise ValueError(f"vertices must be internal ids in [0, {n}), got {ids}")
        cells, where = np.unique(ids >> 5, return_inverse=True)
        values = np.zeros(cells.size, dtype=np.uint32)
        np.bitwise_or.at(values, where, np.left_shift(np.uint32(1), (ids & 31).astype(np.uint32)))
        bits = xp.zeros(words(n), dtype=np.uint32)
        if cells.size:
            bits[device.asarray(cells)] = device.asarray(values)
        return bits
    ids = xp.asarray(vertices, dtype=np.int64).ravel()
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
        raise ValueError(f"vertices must be internal ids in [0, {n}), got {device.to_host(ids)}")
    mask = xp.zeros(words(n) * 32, dtype=np.bool_)
    mask[ids] = True
    return _pack(mask)


def from_mask(mask):
    """A bit-vector from a boolean array of length n (True: active)."""
    xp = device.xp
    n = int(mask.shape[0])
    padded = xp.zeros(words(n) * 32, dtype=np.bool_)
    padded[:n] = mask
    return _pack(padded)


def _pack(mask):
    xp = device.xp
    w = mask.reshape(-1, 32).astype(np.uint32)
    shifts = xp.arange(32, dtype=np.uint32)
    return (w << shifts).sum(axis=1, dtype=np.uint32).astype(np.uint32)


def to_mask(bits, n: int):
    """Boolean array of length ``n``: True where the vertex is active."""
    xp = device.xp
    shifts = xp.arange(32, dtype=np.uint32)
    mask = ((bits[:, None] >> shifts) & 1).astype(np.bool_).ravel()
    return mask[:n]


def to_vertices(bits, n: int):
    """Sorted internal ids of the active vertices."""
    return device.xp.flatnonzero(to_mask(bits, n))


def count(bits) -> int:
    """Number of active vertices."""
    xp = device.xp
    b = bits.astype(np.uint64)
    # SWAR popcount, the same on NumPy and CuPy
    b = b - ((b >> 1) & 0x55555555)
    b = (b & 0x33333333) + ((b >> 2) & 0x33333333)
    b = (b + (b >> 4)) & 0x0F0F0F0F
    b = (b * 0x01010101) & 0xFFFFFFFF
    return int(xp.sum(b >> 24))


def any_active(bits) -> bool:
    return bool(bits.any())


def clear(bits):
    bits.fill(0)
    return bits
