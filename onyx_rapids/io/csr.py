"""CSR input: offsets, indices and weights arrays, or a SciPy / CuPy sparse matrix, validated
into backend arrays (:func:`read_csr`), or checked on the host where they are
(:func:`read_csr_on_host`: :class:`HostCSR`, for the host build).
"""

from __future__ import annotations

import numpy as np

from ..device import xp
from .arrays import int_array, numeric_array
from .columns import array_module


def _is_sparse(obj) -> bool:
    top = type(obj).__module__
    return (top.startswith("scipy.sparse") or top.startswith("cupyx.scipy.sparse")) and hasattr(
        obj, "tocsr"
    )


def _weight_arrays(weights, m: int, block: int | None = None):
    """CSR weights (m,), (m, w) or {name: (m,)} as (m, w) float32 and their names.

    ``block``: host (NumPy) weights are checked on the host ``block`` rows at a time and kept
    as given, as a :class:`HostWeights` in place of the array (the same errors)."""
    if isinstance(weights, dict):
        if not weights:
            raise ValueError("weights={} names no weight; pass weights=None for none")
        names = [str(k) for k in weights]
        cols = []
        for key, values in weights.items():
            a = numeric_array(values, f"weights[{key!r}]", block)
            if a.ndim != 1 or a.shape[0] != m:
                raise ValueError(f"weights[{key!r}] must have shape ({m},) (one value per edge), "
                                 f"got {tuple(a.shape)}")
            cols.append(a)
        if block is not None:
            return HostWeights([c.reshape(-1, 1) for c in cols]), names
        return xp.ascontiguousarray(xp.stack(cols, axis=1)), names
    a = numeric_array(weights, "weights", block)
    if a.ndim == 1:
        a, names = a.reshape(-1, 1), ["weight"]
    elif a.ndim == 2:
        names = [f"weight_{j}" for j in range(a.shape[1])]
    else:
        raise ValueError(f"weights must be 1-D (m,) or 2-D (m, w), got shape {tuple(a.shape)}")
    if a.shape[0] != m:
        raise ValueError(f"weights has {a.shape[0]} rows but there are {m} edges (len(indices)); "
                         "give one row per edge")
    if a.shape[1] == 0:
        raise ValueError("weights has 0 columns; pass weights=None for an unweighted graph")
    if block is not None:
        return HostWeights([a]), names
    return xp.ascontiguousarray(a), names


class HostWeights:
    """CSR weights kept in host memory as given (2-D column groups, any numeric dtype, checked
    by :func:`read_csr_on_host`), read as float32 blocks of rows."""

    def __init__(self, groups):
        self.groups = groups  # (m, k) NumPy arrays, side by side

    def block(self, a: int, b: int) -> np.ndarray:
        """Rows a..b-1 as a C-contiguous (b-a, w) float32 NumPy array (each group converted
        on its own, as the device reader converts each column)."""
        with np.errstate(over="ignore"):  # checked: nothing overflows
            parts = [g[a:b].astype(np.float32) for g in self.groups]
        return np.ascontiguousarray(parts[0] if len(parts) == 1 else np.concatenate(parts, 1))


class HostCSR:
    """CSR input checked on the host (:func:`read_csr_on_host`): ``offsets`` (n+1, int64
    NumPy), ``indices`` (m, NumPy, its integer dtype as given), ``weights`` (a
    :class:`HostWeights` or None), ``names``, ``n`` and ``m``."""

    def __init__(self, offsets, indices, weights, names, n: int, m: int):
        self.offsets, self.indices, self.weights = offsets, indices, weights
        self.names, self.n, self.m = names, n, m


def csr_inputs(offsets, indices=None, weights=None):
    """The CSR parts of :func:`read_csr`'s arguments, not yet read: ``(offsets, indices,
    weights)``, a SciPy/CuPy sparse matrix unpacked (``indptr``, ``indices``, and its values
    as the weights unless ``weights`` is False or given), ``weights=False`` as None.  Raises
    the argument errors of :func:`read_csr`."""
    if _is_sparse(offsets):
        matrix = offsets
        if indices is not None:
            raise ValueError("indices: pass either a sparse matrix alone, or offsets and "
                             "indices arrays, not both")
        shape = tuple(matrix.shape)
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"offsets: the sparse matrix must be square (n x n), got shape "
                             f"{shape}")
        matrix = matrix.tocsr()
        offsets, indices = matrix.indptr, matrix.indices
        if weights is None:
            weights = matrix.data
        elif weights is False:
            weights = None
    elif indices is None:
        raise TypeError("indices is required: call Graph.from_csr(offsets, indices), or pass a "
                        "SciPy sparse matrix as the only argument")
    if weights is False:
        weights = None
    return offsets, indices, weights


def _is_device_data(values) -> bool:
    top = type(values).__module__.split(".")[0]
    return hasattr(values, "__cuda_array_interface__") or top in ("cupy", "cupyx", "cudf")


def csr_on_device(offsets, indices, weights) -> bool:
    """Whether any CSR part (of :func:`csr_inputs`) is device data: a CuPy array or a cuDF
    Series (NumPy arrays, lists, pandas Series and SciPy matrices are host data)."""
    parts = [offsets, indices] + (list(weights.values()) if isinstance(weights, dict)
                                  else [weights])
    return any(_is_device_data(p) for p in parts if p is not None)


def csr_size(offsets, indices, weights):
    """``(n, m, weight columns)`` of host CSR parts (of :func:`csr_inputs`) without reading
    them, for ``placement="auto"``; None when they cannot be told (the reader then names the
    problem)."""
    try:
        n, m = len(offsets) - 1, len(indices)
        if weights is None:
            columns = 0
        elif isinstance(weights, dict):
            columns = len(weights)
        else:
            shape = np.shape(weights)
            columns = int(shape[1]) if len(shape) == 2 else 1
    except (TypeError, ValueError, IndexError):
        return None
    return int(n), int(m), columns


def _check_offsets(off, m: int) -> int:
    """n, after checking int64 CSR offsets (NumPy or backend) against ``m`` entries."""
    if off.shape[0] < 2:
        raise ValueError(f"offsets must have n+1 >= 2 entries (a graph needs a vertex), got "
                         f"{off.shape[0]}")
    n = int(off.shape[0]) - 1
    if int(off[0]) != 0:
        raise ValueError(f"offsets[0] must be 0, got {int(off[0])}")
    drops = array_module(off).nonzero(off[1:] < off[:-1])[0]
    if drops.shape[0]:
        i = int(drops[0])
        raise ValueError(f"offsets must be non-decreasing, but offsets[{i + 1}] = "
                         f"{int(off[i + 1])} < offsets[{i}] = {int(off[i])}")
    if int(off[-1]) != m:
        raise ValueError(f"offsets[-1] = {int(off[-1])} must equal len(indices) = {m}")
    return n


def _check_indices(blocks, n: int) -> None:
    """Check CSR indices given as ``(first position, array)`` blocks (NumPy or backend) to lie
    in [0, n); the error names the first bad one and counts all."""
    count, first = 0, None
    for start, ind in blocks:
        bad = array_module(ind).nonzero((ind < 0) | (ind >= n))[0]
        if bad.shape[0]:
            if first is None:
                i = int(bad[0])
                first = (start + i, int(ind[i]))
            count += int(bad.shape[0])
    if count:
        raise ValueError(f"indices must lie in [0, n) = [0, {n}), but indices[{first[0]}] = "
                         f"{first[1]} ({count} out of range)")


def read_csr(offsets, indices=None, weights=None):
    """Validate CSR input; return (offsets int64, indices int64, weights (m, w) | None, names).

    ``offsets`` may be a SciPy/CuPy sparse matrix (then ``indices`` is None and its values are
    the weights unless ``weights`` is False or given).  The arrays become backend arrays
    (:func:`read_csr_on_host` checks host data without moving it).
    """
    offsets, indices, weights = csr_inputs(offsets, indices, weights)
    off = int_array(offsets, "offsets")
    ind = int_array(indices, "indices")
    n = _check_offsets(off, int(ind.shape[0]))
    m = int(ind.shape[0])
    if m:
        _check_indices([(0, ind)], n)
    w, names = (None, []) if weights is None else _weight_arrays(weights, m)
    return off, ind, w, names


def read_csr_on_host(offsets, indices, weights, block: int) -> HostCSR:
    """:func:`read_csr` of host CSR parts (of :func:`csr_inputs`: NumPy arrays, lists, pandas
    Series) without moving them to the device: the same checks, in the same order and with
    the same errors, run on the host, the indices and weights ``block`` entries at a time.
    The offsets become int64 (n+1); the indices and weights are kept as given, not copied.
    """
    if csr_on_device(offsets, indices, weights):
        raise TypeError("read_csr_on_host takes host data; device arrays (CuPy, cuDF) are "
                        "read by read_csr")
    off = int_array(offsets, "offsets", host=True)
    ind = int_array(indices, "indices", host=True, convert=False)
    m = int(ind.shape[0])
    n = _check_offsets(off, m)
    _check_indices(((a, ind[a:a + block]) for a in range(0, m, block)), n)
    w, names = (None, []) if weights is None else _weight_arrays(weights, m, block)
    return HostCSR(off, ind, w, names, n, m)
