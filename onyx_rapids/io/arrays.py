"""Array-likes (lists, NumPy, CuPy, pandas / cuDF Series, pyarrow arrays) read as backend
arrays without a host round trip for device data: :func:`as_array`, vertex ids
(:func:`read_vertex_ids`), integer and numeric arrays.
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..messages import listing
from ..device import xp
from .columns import check_float32_blocks, finite_float32, id_column, to_int64
from .frames import column_names, dtype_kind, frame_kind, key_column


def as_array(values, arg: str, *, host: bool = False):
    """Any array-like (lists, NumPy, CuPy, pandas/cuDF Series, pyarrow arrays) as a backend
    array, without a host round trip for device data. Raises ValueError for nulls.

    ``host=True``: host data stays a NumPy array (not copied to the device); device data
    (CuPy, cuDF) is still a backend array."""
    put = (lambda a: a) if host else device.asarray
    top = type(values).__module__.split(".")[0]
    if top in ("pandas", "cudf") and hasattr(values, "isna") and hasattr(values, "dtype"):
        nulls = int(values.null_count) if top == "cudf" else int(values.isna().sum())
        if nulls and not (top == "pandas" and isinstance(values.dtype, np.dtype)):
            raise ValueError(f"{arg}: {nulls} null value(s); drop or fill them")
        if top == "cudf":
            return device.asarray(values.values)
        kind = dtype_kind(values.dtype)
        target = {"i": np.int64, "u": np.uint64, "f": np.float64, "b": np.bool_}.get(kind)
        return _put_numeric(values.to_numpy(dtype=target) if target else values.to_numpy(), put)
    if top == "pyarrow" and hasattr(values, "null_count"):
        if values.null_count:
            raise ValueError(f"{arg}: {values.null_count} null value(s); drop or fill them")
        return _put_numeric(values.to_numpy(zero_copy_only=False), put)
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{arg} must be numbers or an array of them, got a string {values!r}")
    if hasattr(values, "__cuda_array_interface__") or type(values).__module__.startswith(
        "cupy"
    ):
        return device.asarray(values)
    if isinstance(values, (set, frozenset)) or (
        not hasattr(values, "__len__") and not hasattr(values, "__array__")
        and hasattr(values, "__iter__")
    ):
        values = list(values)
    try:
        array = np.asarray(values)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{arg} could not be read as an array ({e})") from e
    return _put_numeric(array, put)


def _put_numeric(array, put):
    """Numbers through ``put`` (to the device); anything else (labels, strings) stays a host
    array: the caller reads labels or names the bad dtype."""
    return put(array) if array.dtype.kind in "biuf" else array


def read_vertex_ids(values, arg: str = "vertices", *, labels: bool = False):
    """Vertex ids as an int64 backend array; a scalar stays 0-d.

    ``values`` is a scalar, list, range, set, NumPy/CuPy array, pandas/cuDF Series or Index
    (their values; the index of a Series is ignored), any iterable, or a DataFrame with a
    ``vertex`` column (such as a result frame). TypeError for floats (integral ones included)
    and booleans, and for other non-integers unless ``labels``: then labels (strings, bytes,
    categories, any hashable; a str or bytes is one label) come back as a host object array
    (:func:`onyx_rapids.ids.is_labels`).  ValueError for nulls; both name ``arg``.

    >>> import pandas as pd
    >>> read_vertex_ids(pd.Series([7, 3], index=[0, 1]), "sources").tolist()  # doctest: +SKIP
    [7, 3]
    """
    kind = frame_kind(values)
    if kind is not None:
        names = column_names(values, kind)
        key = key_column(names)
        if key is None:
            raise TypeError(f"{arg}: a DataFrame of ids needs a 'vertex' (or 'node') column (it "
                            f"has {listing(repr(c) for c in names)}); pass a list, array or "
                            "Series of ids, or df['<id column>']")
        return id_column(values, kind, key, arg, f"the {arg} frame", labels=labels)
    if isinstance(values, (str, bytes)):
        if labels:
            return np.array(values, dtype=object)
        raise TypeError(f"{arg}: vertex ids must be integers, got the string {values!r}; labels "
                        "such as strings name vertices only of a graph built from labelled ids")
    a = as_array(values, arg)
    if labels and isinstance(values, (list, tuple)) and a.ndim > 1:  # tuples as labels
        a = np.empty(len(values), dtype=object)
        a[:] = list(values)
    if a.size == 0:
        return xp.zeros(a.shape, dtype=np.int64)
    if a.dtype.kind not in "iu":
        if labels and a.dtype.kind not in "fb":
            return _labels(a, arg)
        raise TypeError(f"{arg}: vertex ids must be integers{' or labels' if labels else ''}, "
                        f"got dtype {a.dtype}; cast them to an integer type (floats are not "
                        "accepted as ids, even integral ones)"
                        + ("" if labels else "; labels such as strings name vertices only of "
                           "a graph built from labelled ids"))
    return to_int64(a, arg)


def _labels(a, arg: str):
    """Labels: the non-numeric array ``a`` as a host object array; nulls refused."""
    import pandas as pd

    out = np.asarray(a, dtype=object)
    nulls = int(pd.isna(out.reshape(-1)).sum())
    if nulls:
        raise ValueError(f"{arg}: {nulls} null id(s); drop them")
    return out


def read_extra_vertices(vertices):
    """The ``vertices=`` of a graph build (ids that may have no edges): integers as an int64
    backend array, labels as a host object array (:func:`read_vertex_ids`); a bare str or
    bytes is refused, as one label is easily meant as a list of characters."""
    if isinstance(vertices, (str, bytes)):
        raise TypeError(f"vertices must be a list (or array) of ids, got the single label "
                        f"{vertices!r}; wrap it: [{vertices!r}]")
    return read_vertex_ids(vertices, "vertices", labels=True)


def int_array(values, arg: str, *, host: bool = False, convert: bool = True):
    """A 1-D integer array as int64 (``convert=False``: checked to fit int64, kept as given);
    ``host=True`` keeps host data on the host (see :func:`as_array`)."""
    a = as_array(values, arg, host=host)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{arg} must be an integer array, got dtype {a.dtype}; cast it, e.g. "
                        ".astype('int64')")
    if a.ndim != 1:
        raise ValueError(f"{arg} must be one-dimensional, got shape {tuple(a.shape)}")
    out = to_int64(a, arg)
    return out if convert else a


def numeric_array(values, arg: str, block: int | None = None):
    """A numeric array as float32, checked (:func:`finite_float32`); ``block``: host data
    checked on the host in blocks of rows and returned as given."""
    a = as_array(values, arg, host=block is not None)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{arg} must be numeric (integer or float), got dtype {a.dtype}")
    if a.ndim == 0:
        raise ValueError(f"{arg} must be an array, got a scalar")
    if block is None:
        return finite_float32(a, arg)
    check_float32_blocks(a, arg, block)
    return a
