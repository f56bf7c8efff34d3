"""Columns: one column of a frame read as a backend array (:class:`Column`) and validated:
vertex ids (:func:`id_column`: integers, or labels such as strings where the caller takes
them), numeric values as float32 (:func:`numeric_column`,
:func:`finite_float32`: NaN, infinities and float32 overflow refused, naming the first row).
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..device import xp
from .frames import dtype_kind, frame_kind


_INT64_MAX = int(np.iinfo(np.int64).max)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


class Column:
    """One column of a frame: its dtype kind, null count and a conversion to a backend array."""

    def __init__(self, df, kind: str, name):
        self.name = name
        self.frame_kind = kind
        if kind == "arrow":
            import pyarrow as pa

            col = df.column(name)
            t = col.type
            self.dtype = str(t)
            if pa.types.is_boolean(t):
                self.kind = "b"
            elif pa.types.is_signed_integer(t):
                self.kind = "i"
            elif pa.types.is_unsigned_integer(t):
                self.kind = "u"
            elif pa.types.is_floating(t):
                self.kind = "f"
            else:
                self.kind = "O"
            self.nulls = int(col.null_count)
        else:
            col = df[name]
            if frame_kind(col) is not None:
                raise ValueError(f"column {name!r} appears more than once in the frame; rename "
                                 "the duplicates")
            self.dtype = str(col.dtype)
            self.kind = dtype_kind(col.dtype)
            if kind == "cudf":
                self.nulls = int(col.null_count)
            elif self.kind == "f" and isinstance(col.dtype, np.dtype):
                self.nulls = 0  # NaN in a NumPy float column is a value, checked as non-finite
            else:
                self.nulls = int(col.isna().sum())
        self._col = col

    def first_null(self) -> int:
        if self.frame_kind == "arrow":
            import pyarrow.compute as pc

            return int(np.argmax(pc.is_null(self._col).to_numpy(zero_copy_only=False)))
        mask = self._col.isna()
        return int(np.argmax(device.to_host(mask.values if self.frame_kind == "cudf"
                                            else mask.to_numpy())))

    def array(self):
        """The column as a backend array (int64/uint64 for integers, float64/32 for floats)."""
        target = {"i": np.int64, "u": np.uint64, "b": np.bool_}.get(self.kind)
        if self.kind == "f":
            target = np.float32 if self.dtype in ("float32", "float") else np.float64
        if self.frame_kind == "arrow":
            host = self._col.to_numpy()
            return device.asarray(host.astype(target, copy=False) if target else host)
        if self.frame_kind == "cudf":
            values = self._col.values  # a CuPy array, no host copy
            return device.asarray(values.astype(target, copy=False) if target else values)
        return device.asarray(self._col.to_numpy(dtype=target))

    def labels(self):
        """The column's values as a host object array (labels: strings, bytes, categories,
        any Python objects); a categorical or dictionary column gives its values."""
        col = self._col
        if self.frame_kind in ("arrow", "cudf"):
            col = col.to_pandas()
        return np.asarray(col.to_numpy(dtype=object), dtype=object)


def to_int64(a, what: str):
    if a.dtype == np.uint64 and a.size and int(a.max()) > _INT64_MAX:
        raise ValueError(f"{what}: ids above 2**63-1 do not fit in int64; renumber them first")
    return a.astype(np.int64, copy=False)


def id_column(df, kind: str, col, arg: str, where: str = "the edge list", row_offset: int = 0,
              *, labels: bool = False):
    """The vertex ids of column ``col``: an int64 backend array for an integer column; for
    any other column but floats and booleans (strings, bytes, categoricals, objects), a host
    object array of labels when the caller takes ``labels``, else a TypeError.  Nulls are
    refused, naming the first row (counted from ``row_offset``)."""
    c = Column(df, kind, col)
    if c.kind in "fb":
        hint = ""
        if c.kind == "f":
            hint = (" (pandas stores integer columns that had missing values as float64: drop "
                    "those rows, then cast)")
        raise TypeError(
            f"{arg}={col!r}: vertex ids must be integers or labels (strings, say), but the "
            f"column in {where} has dtype {c.dtype}; cast it, e.g. .astype('int64'){hint}"
        )
    if c.kind not in "iu" and not labels:
        raise TypeError(
            f"{arg}={col!r}: the column in {where} has dtype {c.dtype}, but vertex ids here "
            "must be integers (labels such as strings are taken where a graph is built: "
            "Graph.from_edgelist and the other constructors); pass integer ids"
        )
    if c.nulls:
        raise ValueError(
            f"{arg}={col!r}: {c.nulls} null vertex id{'s' if c.nulls != 1 else ''} in {where} "
            f"(first at row {c.first_null() + row_offset}); drop or fill those rows"
        )
    if c.kind not in "iu":
        return c.labels()
    return to_int64(c.array(), f"{arg}={col!r}")


def array_module(a):
    """NumPy for a NumPy array (host data, also on a GPU), else the backend's module."""
    return np if isinstance(a, np.ndarray) else xp


def _flagged_rows(bad):
    """``(count, first)`` of the rows (along axis 0) of a boolean array with a True, or None."""
    if not bool(bad.any()):
        return None
    where = array_module(bad).nonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0]
    return int(where.shape[0]), int(where[0])


def _float32_rows(a):
    """``(a as float32 | None, non-finite rows, rows beyond float32)`` of a numeric array
    (NumPy or backend): the rows as :func:`_flagged_rows` gives them; with non-finite rows
    the conversion is skipped (None, None for the rest)."""
    mod = array_module(a)
    if a.dtype.kind == "f":
        bad = _flagged_rows(~mod.isfinite(a))
        if bad is not None:
            return None, bad, None
    with np.errstate(over="ignore"):  # overflow is reported by the caller, by name
        out = a.astype(np.float32)
    big = None
    if a.dtype.itemsize > 4 or a.dtype.kind in "iu":
        big = _flagged_rows(~mod.isfinite(out))
    return out, None, big


def _float32_failure(what: str, nonfinite, overflow, first_row_offset: int = 0) -> None:
    """The ValueError of :func:`finite_float32` for ``(count, first row)`` of non-finite
    rows or, failing those, of rows beyond the float32 range; nothing when both are None."""
    if nonfinite is not None:
        count, first = nonfinite
        raise ValueError(
            f"{what}: {count} row(s) hold NaN or infinite values (first at row "
            f"{first + first_row_offset}); drop or fill them"
        )
    if overflow is not None:
        count, first = overflow
        raise ValueError(
            f"{what}: {count} row(s) exceed the float32 range (|x| > "
            f"{_FLOAT32_MAX:.3g}; first at row {first + first_row_offset}); rescale "
            "them"
        )


def finite_float32(a, what: str, first_row_offset: int = 0):
    """``a`` (numeric) as float32, or ValueError naming ``what`` for NaN/inf or float32 overflow."""
    out, nonfinite, overflow = _float32_rows(a)
    _float32_failure(what, nonfinite, overflow, first_row_offset)
    return out


def check_float32_blocks(a, what: str, block: int) -> None:
    """:func:`finite_float32`'s checks of a host (NumPy) array, ``block`` rows at a time (no
    float32 copy of the whole array): the same errors, rows counted over all the blocks."""
    nonfinite = overflow = None
    for start in range(0, int(a.shape[0]), block):
        _out, bad, big = _float32_rows(a[start:start + block])
        nonfinite = _add_rows(nonfinite, bad, start)
        overflow = _add_rows(overflow, big, start)
    _float32_failure(what, nonfinite, None if nonfinite is not None else overflow)


def _add_rows(total, hit, start: int):
    """Running ``(count, first row)`` of flagged rows, ``hit`` from a block at ``start``."""
    if hit is None:
        return total
    if total is None:
        return hit[0], hit[1] + start
    return total[0] + hit[0], total[1]


def numeric_column(df, kind: str, col, arg: str, where: str, row_offset: int = 0):
    """One numeric column as a float32 backend array, validated (error rows count from
    ``row_offset``)."""
    c = Column(df, kind, col)
    if c.kind not in "iuf":
        raise TypeError(
            f"{arg}={col!r}: values must be numeric (integer or float), but the column in "
            f"{where} has dtype {c.dtype}; convert it (e.g. pandas.to_numeric) or leave it out"
        )
    if c.nulls:
        raise ValueError(
            f"{arg}={col!r}: {c.nulls} null value{'s' if c.nulls != 1 else ''} in {where} "
            f"(first at row {c.first_null() + row_offset}); drop or fill them"
        )
    return finite_float32(c.array(), f"{arg}={col!r}", row_offset)
