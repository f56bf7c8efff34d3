"""Adapters in and out: the only module that knows cuDF, pandas, pyarrow, Parquet, SciPy and cuGraph.

In: :func:`read_edgelist` (pandas / cuDF DataFrame or pyarrow Table), :func:`read_parquet_edges`,
:func:`read_csr` (NumPy / CuPy arrays, SciPy / CuPy sparse matrices; :func:`read_csr_on_host`
checks host arrays where they are), :func:`read_cugraph` (checks: :func:`cugraph_edges`),
:func:`read_vertex_ids`, :func:`read_vertex_frame` and :func:`read_property_array`. Each validates
its input completely and returns backend arrays (:data:`onyx_rapids.device.xp`), so that a
:class:`~onyx_rapids.graph.Graph` is never half built from bad input. Per-vertex pandas/cuDF
input is aligned by vertex id -- a ``vertex`` column, else the index (with ``side`` for a
bipartite graph) -- never by position; NumPy/CuPy arrays are positional, in ``Graph.vertices``
order.

Out: :func:`to_frame` (per-vertex results; ``(values, valid)`` pairs become nullable columns)
and :func:`to_edge_frame` (per-edge), as cuDF DataFrames on a GPU with cuDF installed and
pandas DataFrames otherwise.

cuDF, cuGraph, CuPy, SciPy (and pandas and pyarrow, to keep ``import onyx_rapids`` light) are
imported inside the functions that need them.
"""

from __future__ import annotations

import difflib
import os

import numpy as np

from . import device
from .device import xp

__all__ = [
    "is_frame",
    "is_series",
    "check_column_name",
    "read_edgelist",
    "read_parquet_edges",
    "read_csr",
    "read_csr_on_host",
    "csr_inputs",
    "read_cugraph",
    "cugraph_edges",
    "read_vertex_ids",
    "read_vertex_frame",
    "read_property_array",
    "read_table_matrix",
    "to_frame",
    "to_edge_frame",
]

_SHOW = 10  # how many offending items an error message names
_INT64_MAX = int(np.iinfo(np.int64).max)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _listing(items, total=None) -> str:
    items = list(items)
    total = len(items) if total is None else total
    shown = ", ".join(str(x) for x in items[:_SHOW])
    return shown + (f", ... ({total} in all)" if total > _SHOW else "")


# ---------------------------------------------------------------------- frames and columns


def _frame_kind(obj) -> str | None:
    """'pandas', 'cudf' or 'arrow' for DataFrames and pyarrow Tables (subclasses too), else None."""
    for cls in type(obj).__mro__:
        top = cls.__module__.split(".")[0]
        if cls.__name__ == "DataFrame" and top in ("pandas", "cudf"):
            return top
        if cls.__name__ == "Table" and top == "pyarrow":
            return "arrow"
    return None


def is_frame(obj) -> bool:
    """True for pandas and cuDF DataFrames and pyarrow Tables."""
    return _frame_kind(obj) is not None


def _series_kind(obj) -> str | None:
    """'pandas' or 'cudf' for their Series (subclasses too), else None."""
    for cls in type(obj).__mro__:
        top = cls.__module__.split(".")[0]
        if cls.__name__ == "Series" and top in ("pandas", "cudf"):
            return top
    return None


def is_series(obj) -> bool:
    """True for pandas and cuDF Series."""
    return _series_kind(obj) is not None


def _require_frame(df, arg: str) -> str:
    kind = _frame_kind(df)
    if kind is None:
        raise TypeError(
            f"{arg} must be a pandas or cuDF DataFrame or a pyarrow Table, got "
            f"{type(df).__module__}.{type(df).__name__}; wrap your data, e.g. "
            "pandas.DataFrame({'src': [...], 'dst': [...]})"
            + (" (for CSR arrays use Graph.from_csr)" if arg == "df" else "")
        )
    return kind


def _column_names(df, kind: str) -> list:
    return list(df.column_names) if kind == "arrow" else list(df.columns)


def _num_rows(df, kind: str) -> int:
    return int(df.num_rows) if kind == "arrow" else int(len(df))


def frame_rows(df) -> int:
    """The rows of an edge frame (pandas, cuDF, pyarrow); TypeError naming ``df`` otherwise."""
    return _num_rows(df, _require_frame(df, "df"))


def frame_rows_slice(df, a: int, b: int):
    """Rows ``a`` to ``b`` of an edge frame, of the same kind (a chunk of a larger list)."""
    if _require_frame(df, "df") == "arrow":
        return df.slice(a, b - a)
    return df.iloc[a:b]


def _require_column(names: list, col, arg: str, where: str) -> None:
    """ValueError naming ``arg``, the columns there are and the closest matches."""
    try:
        present = col in names
    except TypeError:  # unhashable
        present = False
    if present:
        return
    strings = [c for c in names if isinstance(c, str)]
    close = difflib.get_close_matches(str(col), strings, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}? Pass" if close else "; pass"
    raise ValueError(
        f"{arg}={col!r}: no such column in {where} (columns: {_listing(repr(c) for c in names)})"
        f"{hint} {arg}= the name of one of its columns"
    )


def _check_name(col, arg: str) -> None:
    if isinstance(col, (list, tuple, set, dict)) or col is None:
        raise TypeError(f"{arg} must be a single column name, got {col!r}")


def check_column_name(col, arg: str) -> None:
    """TypeError naming ``arg`` unless ``col`` is one column name (not None, not a list)."""
    _check_name(col, arg)


def _weight_names(weight) -> list:
    if weight is None:
        return []
    names = list(weight) if isinstance(weight, (list, tuple)) else [weight]
    if not names:
        raise ValueError("weight=[] names no column; pass weight=None for an unweighted graph")
    for name in names:
        _check_name(name, "weight")
    dupes = sorted({repr(c) for c in names if names.count(c) > 1})
    if dupes:
        raise ValueError(f"weight names the column(s) {', '.join(dupes)} more than once; list "
                         "each weight column once")
    return names


class _Column:
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
            if _frame_kind(col) is not None:
                raise ValueError(f"column {name!r} appears more than once in the frame; rename "
                                 "the duplicates")
            self.dtype = str(col.dtype)
            self.kind = _pandas_like_kind(col.dtype)
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


def _pandas_like_kind(dtype) -> str:
    """Kind letter of a pandas or cuDF dtype: 'i', 'u', 'f', 'b', or 'O' for anything else."""
    if isinstance(dtype, np.dtype):
        return dtype.kind if dtype.kind in "iufb" else "O"
    import pandas as pd

    api = pd.api.types
    if api.is_bool_dtype(dtype):
        return "b"
    if api.is_integer_dtype(dtype):
        return "u" if api.is_unsigned_integer_dtype(dtype) else "i"
    if api.is_float_dtype(dtype):
        return "f"
    return "O"


def _to_int64(a, what: str):
    if a.dtype == np.uint64 and a.size and int(a.max()) > _INT64_MAX:
        raise ValueError(f"{what}: ids above 2**63-1 do not fit in int64; renumber them first")
    return a.astype(np.int64, copy=False)


def _id_column(df, kind: str, col, arg: str, where: str = "the edge list", row_offset: int = 0):
    c = _Column(df, kind, col)
    if c.kind not in "iu":
        hint = ""
        if c.kind == "f":
            hint = (" (pandas stores integer columns that had missing values as float64: drop "
                    "those rows, then cast)")
        raise TypeError(
            f"{arg}={col!r}: vertex ids must be integers, but the column in {where} has dtype "
            f"{c.dtype}; cast it to an integer type, e.g. .astype('int64'){hint}"
        )
    if c.nulls:
        raise ValueError(
            f"{arg}={col!r}: {c.nulls} null vertex id{'s' if c.nulls != 1 else ''} in {where} "
            f"(first at row {c.first_null() + row_offset}); drop or fill those rows"
        )
    return _to_int64(c.array(), f"{arg}={col!r}")


def _module(a):
    """NumPy for a NumPy array (host data, also on a GPU), else the backend's module."""
    return np if isinstance(a, np.ndarray) else xp


def _flagged_rows(bad):
    """``(count, first)`` of the rows (along axis 0) of a boolean array with a True, or None."""
    if not bool(bad.any()):
        return None
    where = _module(bad).nonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0]
    return int(where.shape[0]), int(where[0])


def _float32_rows(a):
    """``(a as float32 | None, non-finite rows, rows beyond float32)`` of a numeric array
    (NumPy or backend): the rows as :func:`_flagged_rows` gives them; with non-finite rows
    the conversion is skipped (None, None for the rest)."""
    mod = _module(a)
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
    """The ValueError of :func:`_finite_float32` for ``(count, first row)`` of non-finite
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


def _finite_float32(a, what: str, first_row_offset: int = 0):
    """``a`` (numeric) as float32, or ValueError naming ``what`` for NaN/inf or float32 overflow."""
    out, nonfinite, overflow = _float32_rows(a)
    _float32_failure(what, nonfinite, overflow, first_row_offset)
    return out


def _check_float32_blocks(a, what: str, block: int) -> None:
    """:func:`_finite_float32`'s checks of a host (NumPy) array, ``block`` rows at a time (no
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


def _numeric_column(df, kind: str, col, arg: str, where: str, row_offset: int = 0):
    """One numeric column as a float32 backend array, validated (error rows count from
    ``row_offset``)."""
    c = _Column(df, kind, col)
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
    return _finite_float32(c.array(), f"{arg}={col!r}", row_offset)


# ---------------------------------------------------------------------- edge lists


def read_edgelist(df, source="src", destination="dst", weight=None, *,
                  arg_names=("source", "destination"), where="the edge list", row_offset=0):
    """Validate an edge frame; return (src int64, dst int64, weights (m, w) float32 | None, names).

    ``df`` is a pandas or cuDF DataFrame or a pyarrow Table; the ids are the original ones.
    ``arg_names`` are the names error messages give the two id arguments (``("left",
    "right")`` for :meth:`~onyx_rapids.graph.Graph.from_bipartite`); ``where`` names the
    edge list and ``row_offset`` is the row number of ``df``'s first row in it (a chunk of a
    larger file), for the messages.
    """
    kind = _require_frame(df, "df")
    src_arg, dst_arg = arg_names
    _check_name(source, src_arg)
    _check_name(destination, dst_arg)
    names = _weight_names(weight)
    columns = _column_names(df, kind)
    _require_column(columns, source, src_arg, where)
    _require_column(columns, destination, dst_arg, where)
    for name in names:
        _require_column(columns, name, "weight", where)
    if _num_rows(df, kind) == 0:
        raise ValueError("df: the edge list is empty (0 rows); a graph needs at least one edge "
                         "(for a graph without edges use Graph.from_csr)")
    src = _id_column(df, kind, source, src_arg, where, row_offset)
    dst = _id_column(df, kind, destination, dst_arg, where, row_offset)
    weights = None
    if names:
        cols = [_numeric_column(df, kind, name, "weight", where, row_offset) for name in names]
        weights = xp.ascontiguousarray(xp.stack(cols, axis=1))
    return src, dst, weights, [str(name) for name in names]


def _cudf():
    """The cudf module when the backend is the GPU and cuDF imports, else None."""
    if device.BACKEND != "gpu":
        return None
    try:
        import cudf
    except Exception:
        return None
    return cudf


def parquet_edge_columns(path, source="src", destination="dst", weight=None):
    """Check a Parquet file or directory for the edge columns; return ``(path, columns)``:
    the path as a str and the distinct column names to read (source, destination, weights).

    Raises FileNotFoundError for a missing path and ValueError, naming the path, for a file
    that is not Parquet or lacks a column."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got "
                        f"{type(path).__name__}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"path={path!r}: no such Parquet file or directory; check the "
                                "path (relative paths start at the working directory)")
    _check_name(source, "source")
    _check_name(destination, "destination")
    names = _weight_names(weight)
    schema = _parquet_call(path, lambda: _parquet_dataset(path).schema)
    where = f"Parquet file {path!r}"
    for col, arg in [(source, "source"), (destination, "destination")] + [
        (name, "weight") for name in names
    ]:
        _require_column(list(schema.names), col, arg, where)
    return path, list(dict.fromkeys([source, destination, *names]))


def _parquet_dataset(path: str):
    import pyarrow.dataset as ds

    return ds.dataset(path, format="parquet")


def _parquet_call(path: str, call):
    """``call()``, with pyarrow's failures to read ``path`` as a ValueError naming it."""
    import pyarrow as pa

    try:
        return call()
    except (pa.ArrowException, OSError) as e:
        raise ValueError(f"path={path!r} is not a readable Parquet file ({e}); write the edge "
                         "list with DataFrame.to_parquet or pyarrow.parquet.write_table") from e


def read_parquet_edges(path, source="src", destination="dst", weight=None):
    """Read the source, destination and weight columns of a Parquet file or directory.

    Returns a cuDF DataFrame (GPU backend with cuDF) or a pyarrow Table, for
    :func:`read_edgelist`; errors as :func:`parquet_edge_columns`.
    """
    path, wanted = parquet_edge_columns(path, source, destination, weight)
    import pyarrow.parquet as pq

    cudf = _cudf()
    if cudf is not None:
        return _parquet_call(path, lambda: cudf.read_parquet(path, columns=wanted))
    return _parquet_call(path, lambda: pq.read_table(path, columns=wanted))


def parquet_row_count(path: str) -> int:
    """Rows of a Parquet file or directory, from its metadata (no data read)."""
    return int(_parquet_call(path, lambda: _parquet_dataset(path).count_rows()))


def parquet_chunks(path: str, columns: list, chunk_rows: int):
    """The ``columns`` of a Parquet file or directory in chunks of about ``chunk_rows`` rows,
    in file order (a directory's files in the order ``pyarrow.dataset`` lists them, as
    ``read_table`` reads them); yields ``(first_row, frame)``.

    A chunk is whole row groups of one file, read at once: by ``cudf.read_parquet`` (decoded
    on the device) on a GPU with cuDF, else by pyarrow with its threads; a row group larger
    than ``chunk_rows`` is read in batches of ``chunk_rows`` rows instead."""
    import pyarrow.parquet as pq

    cudf = _cudf()
    start = 0
    for name in _parquet_call(path, lambda: _parquet_dataset(path).files):
        reader = _parquet_call(name, lambda: pq.ParquetFile(name))
        sizes = [reader.metadata.row_group(i).num_rows
                 for i in range(reader.metadata.num_row_groups)]
        group, rows = [], 0
        for i, size in enumerate(sizes + [None]):
            if group and (size is None or rows + size > chunk_rows):
                if cudf is not None:
                    frame = _parquet_call(name, lambda: cudf.read_parquet(
                        name, columns=columns, row_groups=[group]))
                else:
                    frame = _parquet_call(name, lambda: reader.read_row_groups(
                        group, columns=columns, use_threads=True))
                yield start, frame
                start, group, rows = start + rows, [], 0
            if size is None:
                break
            if size > chunk_rows:  # a row group larger than a chunk: batches of it
                batches = reader.iter_batches(batch_size=chunk_rows, row_groups=[i],
                                              columns=columns)
                for batch in batches:
                    if batch.num_rows:
                        yield start, _arrow_table(batch)
                        start += batch.num_rows
            elif size:
                group.append(i)
                rows += size


def _arrow_table(batch):
    import pyarrow as pa

    return pa.Table.from_batches([batch])


# ---------------------------------------------------------------------- arrays


def _is_sparse(obj) -> bool:
    top = type(obj).__module__
    return (top.startswith("scipy.sparse") or top.startswith("cupyx.scipy.sparse")) and hasattr(
        obj, "tocsr"
    )


def _as_array(values, arg: str, *, host: bool = False):
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
        kind = _pandas_like_kind(values.dtype)
        target = {"i": np.int64, "u": np.uint64, "f": np.float64, "b": np.bool_}.get(kind)
        return put(values.to_numpy(dtype=target) if target else values.to_numpy())
    if top == "pyarrow" and hasattr(values, "null_count"):
        if values.null_count:
            raise ValueError(f"{arg}: {values.null_count} null value(s); drop or fill them")
        return put(values.to_numpy(zero_copy_only=False))
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
    # Non-numeric data stays on the host: the caller names the bad dtype.
    return put(array) if array.dtype.kind in "biuf" else array


def read_vertex_ids(values, arg: str = "vertices"):
    """Vertex ids as an int64 backend array; a scalar stays 0-d.

    ``values`` is a scalar, list, range, set, NumPy/CuPy array, pandas/cuDF Series or Index
    (their values; the index of a Series is ignored), any iterable, or a DataFrame with a
    ``vertex`` column (such as a result frame). TypeError for non-integers (integral floats
    included), ValueError for nulls; both name ``arg``.

    >>> import pandas as pd
    >>> read_vertex_ids(pd.Series([7, 3], index=[0, 1]), "sources").tolist()  # doctest: +SKIP
    [7, 3]
    """
    kind = _frame_kind(values)
    if kind is not None:
        names = _column_names(values, kind)
        if "vertex" not in names:
            raise TypeError(f"{arg}: a DataFrame of ids needs a 'vertex' column (it has "
                            f"{_listing(repr(c) for c in names)}); pass a list, array or Series "
                            "of ids, or df['<id column>']")
        return _id_column(values, kind, "vertex", arg, f"the {arg} frame")
    a = _as_array(values, arg)
    if a.size == 0:
        return xp.zeros(a.shape, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{arg}: vertex ids must be integers, got dtype {a.dtype}; cast them to "
                        "an integer type (floats are not accepted as ids, even integral ones)")
    return _to_int64(a, arg)


def _int_array(values, arg: str, *, host: bool = False, convert: bool = True):
    """A 1-D integer array as int64 (``convert=False``: checked to fit int64, kept as given);
    ``host=True`` keeps host data on the host (see :func:`_as_array`)."""
    a = _as_array(values, arg, host=host)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{arg} must be an integer array, got dtype {a.dtype}; cast it, e.g. "
                        ".astype('int64')")
    if a.ndim != 1:
        raise ValueError(f"{arg} must be one-dimensional, got shape {tuple(a.shape)}")
    out = _to_int64(a, arg)
    return out if convert else a


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
            a = _numeric_array(values, f"weights[{key!r}]", block)
            if a.ndim != 1 or a.shape[0] != m:
                raise ValueError(f"weights[{key!r}] must have shape ({m},) (one value per edge), "
                                 f"got {tuple(a.shape)}")
            cols.append(a)
        if block is not None:
            return HostWeights([c.reshape(-1, 1) for c in cols]), names
        return xp.ascontiguousarray(xp.stack(cols, axis=1)), names
    a = _numeric_array(weights, "weights", block)
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


def _numeric_array(values, arg: str, block: int | None = None):
    """A numeric array as float32, checked (:func:`_finite_float32`); ``block``: host data
    checked on the host in blocks of rows and returned as given."""
    a = _as_array(values, arg, host=block is not None)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{arg} must be numeric (integer or float), got dtype {a.dtype}")
    if a.ndim == 0:
        raise ValueError(f"{arg} must be an array, got a scalar")
    if block is None:
        return _finite_float32(a, arg)
    _check_float32_blocks(a, arg, block)
    return a


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
    drops = _module(off).nonzero(off[1:] < off[:-1])[0]
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
        bad = _module(ind).nonzero((ind < 0) | (ind >= n))[0]
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
    off = _int_array(offsets, "offsets")
    ind = _int_array(indices, "indices")
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
    off = _int_array(offsets, "offsets", host=True)
    ind = _int_array(indices, "indices", host=True, convert=False)
    m = int(ind.shape[0])
    n = _check_offsets(off, m)
    _check_indices(((a, ind[a:a + block]) for a in range(0, m, block)), n)
    w, names = (None, []) if weights is None else _weight_arrays(weights, m, block)
    return HostCSR(off, ind, w, names, n, m)


def cugraph_edges(G):
    """Check a single-GPU cugraph.Graph and name what to read from it.

    Returns ``(edges, source, destination, weight, names, directed, vertices)``: the edge
    list ``G`` keeps in original ids (``G.view_edge_list()``, a cuDF frame on the device;
    each undirected edge once), its source, destination and weight column names (``weight``
    None when ``G`` is unweighted), the weight names the graph takes (``[G.weight_column or
    "weight"]``, or []), whether ``G`` is directed, and its vertex ids (an int64 backend
    array, isolated vertices included) or None.  :func:`read_cugraph` reads the columns whole;
    ``Graph.from_cugraph(placement="host")`` reads the frame in chunks.
    """
    try:
        import cugraph
    except Exception as e:
        raise ImportError(f"Graph.from_cugraph needs cuGraph, which did not import ({e})") from e
    if not isinstance(G, cugraph.Graph):
        raise TypeError(f"G must be a cugraph.Graph, got {type(G).__module__}."
                        f"{type(G).__name__}; for edge frames use Graph.from_edgelist")
    if getattr(G, "is_multi_gpu", lambda: False)():
        raise ValueError("G is a multi-GPU (dask) cuGraph graph; build a single-GPU "
                         "cugraph.Graph, or read its edge list with Graph.from_edgelist")
    if G.is_renumbered():
        raise TypeError("G has non-integer or multi-column vertex ids (cuGraph renumbered them "
                        "in Python); onyx_rapids needs integer vertex ids")
    if not hasattr(G, "decompress_to_edgelist"):
        raise ImportError("this cuGraph version lacks Graph.decompress_to_edgelist; upgrade "
                          "cuGraph, or pass G.view_edge_list() to Graph.from_edgelist")
    directed = bool(G.is_directed())
    weighted = bool(G.is_weighted())
    # The edge list G keeps in original ids, each undirected edge once (a device frame). Not
    # decompress_to_edgelist(): after a cuGraph algorithm that wants transposed storage (such
    # as pagerank) it returns the edges reversed, with nothing on G saying so (seen with
    # cuGraph 26.10).
    edges = G.view_edge_list()
    columns = list(edges.columns)
    weight = columns[2] if weighted and len(columns) > 2 else None
    names = [] if weight is None else [str(getattr(G, "weight_column", None) or "weight")]
    vertices = None
    if hasattr(G, "extract_vertex_list"):
        vertices = read_vertex_ids(G.extract_vertex_list(return_unrenumbered_vertices=True),
                                   "G.extract_vertex_list()")
    return edges, columns[0], columns[1], weight, names, directed, vertices


def read_cugraph(G):
    """Edges and vertices of a single-GPU cugraph.Graph in original ids, on the device.

    Returns (src int64, dst int64, weights (m, 1) float32 | None, names, directed, vertices);
    undirected edges come once each (the caller stores both directions).  The checks are
    :func:`cugraph_edges`'.
    """
    edges, source, destination, weight, names, directed, vertices = cugraph_edges(G)
    src, dst, weights, _ = read_edgelist(edges, source, destination, weight)
    return src, dst, weights, names, directed, vertices


# ---------------------------------------------------------------------- properties


def read_property_array(values, rows: int, what: str, name: str = "values", *, g=None):
    """An array-like of ``rows`` rows (1-D is rows x 1) as a rows x k float32 C-contiguous array.

    ``what`` ('vertices' or 'edges') and ``name`` (the argument) appear in error messages.
    NumPy/CuPy arrays and lists are positional. Per-vertex pandas/cuDF Series and DataFrames
    are aligned by vertex id (:func:`read_vertex_frame`), which needs the graph ``g``; without
    it they are refused, never read by position. Per-edge frames and Series are in CSR order.
    """
    if what == "vertices" and (is_series(values) or is_frame(values)):
        if g is not None:
            return read_vertex_frame(g, values, name=name)
        raise TypeError(
            f"{name}: a {type(values).__module__.split('.')[0]} {type(values).__name__} is "
            "aligned by vertex id (its 'vertex' column or its index), which needs the graph; "
            "pass it through Graph.vertex_property, or pass a NumPy/CuPy array in "
            "Graph.vertices order"
        )
    if is_frame(values):
        return read_table_matrix(values, rows, what, name)
    a = _as_array(values, name)
    if a.dtype.kind not in "iufb":
        raise TypeError(f"{name} must be numeric, got dtype {a.dtype}")
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2:
        raise ValueError(f"{name} must be 1-D ({what}) or 2-D ({what} x features), got shape "
                         f"{tuple(a.shape)}")
    if a.shape[0] != rows:
        raise ValueError(f"{name} has {a.shape[0]} rows but the graph has {rows} {what}; give "
                         f"one row per {what[:-1]}, in the graph's internal order")
    if a.shape[1] == 0:
        raise ValueError(f"{name} has 0 feature columns; give at least one")
    return xp.ascontiguousarray(_finite_float32(a.astype(np.float64) if a.dtype.kind == "b"
                                                else a, name))


def _value_columns(df, kind: str, columns, exclude, name: str, where: str) -> list:
    names = _column_names(df, kind)
    if columns is None:
        chosen = [c for c in names if c not in exclude]
    else:
        chosen = list(columns) if isinstance(columns, (list, tuple)) else [columns]
        for col in chosen:
            _check_name(col, "columns")
            _require_column(names, col, "columns", where)
    if not chosen:
        raise ValueError(f"{name}: {where} has no value columns"
                         + (f" besides {', '.join(map(repr, exclude))}" if exclude else "")
                         + "; add at least one feature column")
    return chosen


def read_table_matrix(df, rows: int, what: str, name: str = "values", columns=None):
    """A frame of ``rows`` rows (no key column) as a rows x k float32 matrix, columns in order."""
    kind = _require_frame(df, name)
    where = f"the {name} frame"
    chosen = _value_columns(df, kind, columns, (), name, where)
    if _num_rows(df, kind) != rows:
        raise ValueError(f"{name} has {_num_rows(df, kind)} rows but the graph has {rows} {what}")
    cols = [_numeric_column(df, kind, c, "columns", where) for c in chosen]
    return xp.ascontiguousarray(xp.stack(cols, axis=1))


def label_columns(df) -> list:
    """The label columns of a seed frame: ``label`` (one partition) or ``label_0``.. (P)."""
    if is_series(df):
        return [_series_column(df)]
    kind = _require_frame(df, "labels")
    names = [c for c in _column_names(df, kind) if c not in ("vertex", "side")]
    if "label" in names:
        return ["label"]
    numbered = sorted((c for c in names if isinstance(c, str) and c.startswith("label_")
                       and c[6:].isdigit()), key=lambda c: int(c[6:]))
    if not numbered or [int(c[6:]) for c in numbered] != list(range(len(numbered))):
        raise ValueError(f"labels: the frame needs a 'label' column, or 'label_0'..'label_<P-1>' "
                         f"for P partitions (it has {names})")
    return numbered


def _series_column(series):
    """The column name a Series keyed by its index becomes: its name, else ``"value"``."""
    return series.name if series.name is not None else "value"


def _has_column(names: list, col) -> bool:
    try:
        return col in names
    except TypeError:  # unhashable
        return False


def _host_objects(values):
    """A pandas/cuDF Series or Index, or a pyarrow array, as a NumPy object array (host)."""
    import pandas as pd

    top = type(values).__module__.split(".")[0]
    if top != "pandas" and hasattr(values, "to_pandas"):
        values = values.to_pandas()
    return pd.Series(values).to_numpy(dtype=object)


def _side_codes(g, values, arg: str, where: str):
    """0/1 per row from side labels: the graph's side names, 'left'/'right' or 0/1."""
    import pandas as pd

    host = _host_objects(values)
    nulls = pd.isna(host)
    if nulls.any():
        raise ValueError(f"{arg}: {int(nulls.sum())} null side(s) in {where} (first at row "
                         f"{int(np.argmax(nulls))}); drop or fill them")
    left, right = g.side_names
    codes = np.full(host.shape[0], -1, dtype=np.int8)
    for code, label in ((0, left), (1, right), (0, "left"), (1, "right"), (0, 0), (1, 1)):
        hit = np.asarray(host == label, dtype=bool)  # elementwise on an object array
        codes[(codes < 0) & hit] = code
    bad = codes < 0
    if bad.any():
        values = sorted({repr(x) for x in host[bad]})
        raise ValueError(f"{arg}: {int(bad.sum())} row(s) of {where} name no side of the graph "
                         f"({_listing(values)}); use {left!r} or {right!r} (or 0/1)")
    return device.asarray(codes)


def _index_keys(g, df, kind: str, name: str, where: str, vertex: str, side: str):
    """(ids, side codes | None) from the index of a pandas/cuDF frame without a ``vertex``
    column."""
    names = _column_names(df, kind)
    close = difflib.get_close_matches(str(vertex), [c for c in names if isinstance(c, str)],
                                      n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    keyed = f"{where} has no {vertex!r} column{hint}, so its index gives the vertex ids"
    index = df.index
    levels = int(getattr(index, "nlevels", 1))
    side_level = None
    if g.sides is not None:
        if levels != 2:
            raise ValueError(
                f"{name}: the graph is bipartite, so per-vertex rows are keyed by ({side!r}, "
                f"{vertex!r}); {keyed}, but it is not a ({side}, {vertex}) MultiIndex; add "
                f"{side!r} and {vertex!r} columns (as io.to_frame writes them), or "
                f"set_index([{side!r}, {vertex!r}])"
            )
        side_level, id_level = index.get_level_values(0), index.get_level_values(1)
    else:
        if levels != 1:
            raise ValueError(f"{name}: {keyed}, but it is a MultiIndex of {levels} levels; add "
                             f"a {vertex!r} column, or index the rows by vertex id alone")
        id_level = index
    if _pandas_like_kind(id_level.dtype) not in "iu":
        raise TypeError(
            f"{name}: {keyed}, but the index has dtype {id_level.dtype}; vertex ids must be "
            f"integers: add a {vertex!r} column, or set_index({vertex!r}) on the id column"
        )
    ids = _to_int64(_as_array(id_level, f"{name} (index)"), f"{name} (index)")
    codes = None
    if side_level is not None:
        codes = _side_codes(g, side_level, f"{name} (index level 0, the side)", where)
    return ids, codes, f"the index ({keyed})"


def read_vertex_frame(g, df, columns=None, *, name: str = "values", vertex: str = "vertex",
                      side: str = "side", complete: bool = True, dtype=np.float32):
    """Per-vertex values aligned by vertex id, never by position.

    ``df`` is keyed by its ``vertex`` column (original ids) when it has one (a pandas/cuDF
    DataFrame or a pyarrow Table); a pandas/cuDF DataFrame without one, or a Series, is keyed
    by its index. For a bipartite graph the keys are (side, vertex): a ``side`` column (side
    names as :func:`to_frame` writes them, or 0/1) next to ``vertex``, or a two-level
    (side, vertex) index. Ids not in the graph and repeated vertices raise ValueError naming
    them.

    With ``complete=True`` every vertex must appear exactly once (ValueError naming the
    missing ones) and the result is an n x k C-contiguous array in internal order. With
    ``complete=False`` a subset may appear (each at most once) and the result is
    ``(internal_ids, values)`` with values k columns wide. The value columns are all but the
    keys (in order), or ``columns``; a Series is one column. ``dtype`` is float32 by default;
    an integer dtype reads integer columns (labels, say) exactly.

    >>> import pandas as pd
    >>> from onyx_rapids.graph import Graph
    >>> g = Graph.from_edgelist(pd.DataFrame({"src": [30, 10], "dst": [10, 20]}))
    >>> read_vertex_frame(g, pd.Series([3.0, 1.0, 2.0], index=[30, 10, 20])).ravel().tolist()
    [1.0, 2.0, 3.0]
    """
    if is_series(df):
        df = df.to_frame(name=_series_column(df))
    elif _frame_kind(df) is None:
        raise TypeError(
            f"{name} must be a pandas or cuDF DataFrame or Series, or a pyarrow Table, got "
            f"{type(df).__module__}.{type(df).__name__}; e.g. pandas.DataFrame({{'vertex': "
            "[...], 'x': [...]}) or pandas.Series(values, index=vertex_ids)"
        )
    kind = _frame_kind(df)
    where = f"the {name} frame"
    names = _column_names(df, kind)
    bipartite = g.sides is not None
    if _has_column(names, vertex) or kind == "arrow":
        _require_column(names, vertex, "vertex", where)
        if bipartite and not _has_column(names, side):
            raise ValueError(
                f"{name}: the graph is bipartite ({g.side_names[0]!r}, {g.side_names[1]!r}), "
                f"where an id may name a vertex on each side, so {where} needs a {side!r} "
                f"column next to {vertex!r} (side names, or 0/1), as io.to_frame writes it"
            )
        exclude = (vertex, side) if bipartite else (vertex,)
        keys = f"column {vertex!r}"
    else:
        close = difflib.get_close_matches(str(vertex), [c for c in names if isinstance(c, str)],
                                          n=1, cutoff=0.6)
        if close and columns is None:  # a misspelt key column must not become a feature
            raise ValueError(
                f"{name}: {where} has no {vertex!r} column but has {close[0]!r}; rename it to "
                f"{vertex!r} to key the rows by it, or pass columns= to key them by the index"
            )
        exclude = ()
        keys = None
    chosen = _value_columns(df, kind, columns, exclude, name, where)
    if _num_rows(df, kind) == 0:
        raise ValueError(f"{name}: {where} is empty")
    if keys is None:
        ids, codes, keys = _index_keys(g, df, kind, name, where, vertex, side)
    else:
        ids = _id_column(df, kind, vertex, "vertex", where)
        codes = None
        if bipartite:
            col = df.column(side) if kind == "arrow" else df[side]
            codes = _side_codes(g, col, f"side={side!r}", where)
    pos, known = g.id_map.locate(ids, codes)
    if not bool(known.all()):
        bad = ~known
        if codes is None:
            unknown = np.unique(device.to_host(ids[bad])).tolist()
        else:
            pairs = zip(device.to_host(codes[bad]).tolist(), device.to_host(ids[bad]).tolist())
            unknown = sorted({f"{g.side_names[c]} {i}" for c, i in pairs})
        raise ValueError(f"{name}: {len(unknown)} id(s) in {keys} are not vertices of the "
                         f"graph: {_listing(unknown)}; drop those rows")
    sorted_pos = xp.sort(pos)
    dup = sorted_pos[1:][sorted_pos[1:] == sorted_pos[:-1]]
    if dup.shape[0]:
        dupes = g.describe_vertices(xp.unique(dup))
        raise ValueError(f"{name}: vertices appear more than once in {keys}: "
                         f"{_listing(dupes)}; keep one row per vertex")
    if complete and pos.shape[0] != g.n:
        seen = xp.zeros(g.n, dtype=bool)
        seen[pos] = True
        missing = g.describe_vertices(xp.nonzero(~seen)[0])
        raise ValueError(f"{name}: {len(missing)} vertices have no row in {where}: "
                         f"{_listing(missing)}; give every vertex exactly one row")
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        cols = [_numeric_column(df, kind, c, "columns", where) for c in chosen]
    else:
        cols = []
        for c in chosen:
            col = _Column(df, kind, c)
            if col.kind not in "iu":
                raise TypeError(f"columns={c!r}: expected integers in {where}, got dtype "
                                f"{col.dtype}")
            if col.nulls:
                raise ValueError(f"columns={c!r}: {col.nulls} null value(s) in {where} (first "
                                 f"at row {col.first_null()}); drop or fill them")
            cols.append(col.array())
    values = xp.stack(cols, axis=1).astype(dtype, copy=False)
    if not complete:
        return pos.astype(g.index_dtype), xp.ascontiguousarray(values)
    out = xp.empty((g.n, len(chosen)), dtype=dtype)
    out[pos] = values
    return out


# ---------------------------------------------------------------------- results out


class _Masked:
    """A result column with nulls: ``values`` where ``valid`` is True, null elsewhere."""

    def __init__(self, values, valid):
        self.values = values
        self.valid = valid


class _Sides:
    """A bipartite graph's side column: int8 codes and the two side names."""

    def __init__(self, codes, names):
        self.codes = codes
        self.names = list(names)


def _pandas_column(value):
    import pandas as pd

    if isinstance(value, _Sides):
        codes = device.to_host(value.codes).astype(np.int8)
        return pd.Categorical.from_codes(codes, categories=value.names)
    if isinstance(value, _Masked):
        values = device.to_host(value.values)
        missing = ~device.to_host(value.valid)
        if values.dtype.kind in "iu":
            return pd.arrays.IntegerArray(values.astype(np.int64), missing)
        if values.dtype.kind == "b":
            return pd.arrays.BooleanArray(values, missing)
        return pd.arrays.FloatingArray(values, missing)
    return device.to_host(value)


def _frame(columns: dict, blocks=(), pandas: bool = False):
    """The result frame of ``columns`` (name -> array, :class:`_Masked` or :class:`_Sides`):
    cuDF on a GPU with cuDF installed unless ``pandas`` (a private switch: the benchmarks time
    the pandas path beside cuDF), else pandas (:func:`_pandas_frame`; ``blocks`` as there).
    Nulls come only from :class:`_Masked` columns: a NaN value stays NaN on both paths."""
    cudf = None if pandas else _cudf()
    if cudf is not None:
        import pandas as pd

        data = {}
        for key, value in columns.items():
            if isinstance(value, _Sides):
                data[key] = cudf.from_pandas(pd.Series(_pandas_column(value)))
            elif isinstance(value, _Masked):
                values = value.values
                if values.dtype.kind in "iu":
                    values = values.astype(np.int64)
                data[key] = cudf.Series(xp.ascontiguousarray(values), nan_as_null=False).where(
                    cudf.Series(xp.ascontiguousarray(value.valid)))  # null where not valid
            else:  # a NaN stays a NaN, as in the pandas frame (and cuDF need not count them)
                data[key] = cudf.Series(xp.ascontiguousarray(value), nan_as_null=False)
        return cudf.DataFrame(data)
    return _pandas_frame(columns, blocks)


class _Rows:
    """Consecutive result columns staged together: ``columns`` (n x c, a device array or view)
    and, for columns with nulls, ``valid`` of the same shape; ``dtype`` as staged (int64 for
    integers with nulls)."""

    def __init__(self, names, columns, valid=None):
        self.names, self.columns, self.valid = list(names), columns, valid
        kind = columns.dtype.kind
        self.dtype = np.dtype(np.int64) if valid is not None and kind in "iu" else columns.dtype
        self.start = self.mask_start = 0  # first rows in the staging buffers (values, masks)


def _stageable(value) -> bool:
    """Whether :func:`_pandas_frame` stages ``value`` itself: numeric and boolean plain columns,
    nullable integer, boolean and float32/float64 columns, the side column."""
    if isinstance(value, _Sides):
        return True
    if isinstance(value, _Masked):
        dtype = value.values.dtype
        return dtype.kind in "iub" or dtype in (np.float32, np.float64)
    return value.dtype.kind in "biufc"


def _blocks_api():
    """pandas' ``create_dataframe_from_blocks`` (pandas >= 3), or None."""
    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:
        return None
    return create_dataframe_from_blocks


def _pandas_frame(columns: dict, blocks=()):
    """A pandas DataFrame of result columns, their bytes moved to the host once.

    Columns are staged on the device by dtype: each dtype gets one fresh C-contiguous (c, n)
    buffer, one row per column -- its plain columns first (an n x k ``blocks`` entry,
    ``(names, array, valid)`` from :func:`_result_columns`, goes in by one transpose,
    :func:`onyx_rapids.device.transpose_into`), then the int64 (integers), boolean or float
    values of the columns with nulls; their null masks (``~valid``) fill rows of the boolean
    buffer.  Each buffer crosses to the host in one copy, started as soon as it is staged
    (:func:`onyx_rapids.device.to_host_pinned_async`: page-locked memory on a GPU; no copy
    under the simulator, where the staging buffers already are host memory).  The frame is
    assembled over those host buffers while the copies run, without further copies: per
    dtype, the plain rows are the frame's 2-D block as they are; each nullable column is a
    pandas masked array over its value row and mask row.  It is returned once the copies are
    done.  The frame owns the buffers (never memory of the graph or of the caller's arrays).
    The side column of a bipartite graph is a categorical, as :func:`_pandas_column` makes it.

    Where pandas lacks ``pandas.api.internals.create_dataframe_from_blocks`` (pandas < 3),
    ``pd.DataFrame(..., copy=False)`` takes the staged columns, also without copying (one
    block per column).  Columns of other dtypes (strings, say) make the whole frame column by
    column, as :func:`_pandas_column` gives them."""
    import pandas as pd

    if not all(_stageable(v) for v in columns.values()):
        return pd.DataFrame({k: _pandas_column(v) for k, v in columns.items()})
    names = list(columns)
    first = {b[0][0]: b for b in blocks if b[0]}
    items, arrays, i = [], {}, 0
    while i < len(names):
        name, value = names[i], columns[names[i]]
        block = first.get(name)
        if block is not None and names[i:i + len(block[0])] == list(block[0]):
            bnames, array, valid = block
            items.append(_Rows(bnames, array, valid))
            i += len(bnames)
            continue
        if isinstance(value, _Sides):
            arrays[name] = _pandas_column(value)  # before the copies start: it waits for its own
        elif isinstance(value, _Masked):
            items.append(_Rows([name], value.values[:, None], value.valid[:, None]))
        else:
            items.append(_Rows([name], value[:, None]))
        i += 1
    rows = next(iter(columns.values()))
    rows = (rows.codes if isinstance(rows, _Sides) else
            rows.values if isinstance(rows, _Masked) else rows).shape[0]

    # Row layout: per dtype, the plain columns, then the values of columns with nulls; then
    # the masks of those (boolean rows after any boolean values).
    count, flag = {}, np.dtype(np.bool_)

    def take(dtype, c):
        start = count.get(dtype, 0)
        count[dtype] = start + c
        return start

    for plain in (True, False):
        for item in items:
            if (item.valid is None) == plain:
                item.start = take(item.dtype, len(item.names))
    for item in items:
        if item.valid is not None:
            item.mask_start = take(flag, len(item.names))

    # Per dtype: stage its buffer (transposes, int64 casts, masks on the device) and start its
    # copy, which runs while the next buffer is staged and the frame is assembled.
    host, waits = {}, []
    try:
        for dt in count:
            staged = xp.empty((count[dt], rows), dtype=dt)
            for item in items:
                c = len(item.names)
                if item.dtype == dt:
                    device.transpose_into(staged[item.start:item.start + c], item.columns)
                if dt == flag and item.valid is not None:
                    missing = staged[item.mask_start:item.mask_start + c]
                    if c == 1:
                        xp.logical_not(item.valid.T, out=missing)
                    else:
                        device.transpose_into(missing, item.valid)
                        xp.logical_not(missing, out=missing)
            (host[dt],), wait = device.to_host_pinned_async([staged])
            waits.append(wait)
            del staged
        return _assemble(names, items, arrays, host, rows, waits)
    finally:
        for wait in waits:  # also on errors: no pinned block goes back to the pool mid-copy
            wait()


def _assemble(names, items, arrays, host, rows, waits):
    """The pandas frame of :func:`_pandas_frame` over its host buffers (``host``: dtype ->
    (c, n) array, each row a column), ``arrays`` (name -> pandas array) beside them.  Built
    while the copies into the buffers are under way: nothing here reads them (pandas' masked
    arrays and blocks take them as they are), and the pandas < 3 fallback first calls
    ``waits``."""
    import pandas as pd

    flag = np.dtype(np.bool_)
    position = {name: i for i, name in enumerate(names)}
    plain_locs = {}
    for item in sorted(items, key=lambda it: it.start):
        if item.valid is None:
            plain_locs.setdefault(item.dtype, []).extend(position[n] for n in item.names)
    for item in items:
        if item.valid is None:
            continue
        for j, name in enumerate(item.names):
            values = host[item.dtype][item.start + j]
            missing = host[flag][item.mask_start + j]
            if item.dtype.kind == "i":
                arrays[name] = pd.arrays.IntegerArray(values, missing)
            elif item.dtype.kind == "b":
                arrays[name] = pd.arrays.BooleanArray(values, missing)
            else:
                arrays[name] = pd.arrays.FloatingArray(values, missing)
    make = _blocks_api()
    if make is None:  # pandas < 3: no copy with copy=False (and no consolidation)
        for wait in waits:
            wait()
        data = dict(arrays)
        for dt, locs in plain_locs.items():
            data.update({names[loc]: host[dt][r] for r, loc in enumerate(locs)})
        return pd.DataFrame({name: data[name] for name in names}, copy=False)
    parts = [(host[dt][:len(locs)], np.asarray(locs, dtype=np.intp))
             for dt, locs in plain_locs.items()]
    parts += [(array, np.asarray([position[name]], dtype=np.intp))
              for name, array in arrays.items()]
    return make(parts, index=pd.RangeIndex(rows), columns=pd.Index(names))


def _result_columns(columns: dict, rows: int, what: str, reserved: tuple,
                    blocks: list | None = None) -> dict:
    """``columns`` checked and expanded to {column name: array, :class:`_Masked`}; each
    ``name*`` entry is also appended to ``blocks`` (when given) as ``(names, n x k array,
    n x k valid or None)``, so that :func:`_pandas_frame` can move it as one block."""
    if not isinstance(columns, dict):
        raise TypeError(f"columns must be a dict {{name: array}}, got {type(columns).__name__}")
    out = {}
    for key, values in columns.items():
        if not isinstance(key, str):
            raise TypeError(f"columns: names must be strings, got {key!r}")
        valid = None
        if isinstance(values, tuple):
            if len(values) != 2:
                raise TypeError(f"columns[{key!r}]: a column with nulls is a (values, valid) "
                                f"pair of arrays, got a tuple of {len(values)} items")
            values, valid = values
            valid = _as_array(valid, f"columns[{key!r}] (valid mask)")
            if valid.dtype != np.bool_:
                raise TypeError(f"columns[{key!r}]: the valid mask must be boolean (True where "
                                f"the value exists), got dtype {valid.dtype}")
        a = _as_array(values, f"columns[{key!r}]")
        if a.ndim == 0 or a.shape[0] != rows:
            raise ValueError(f"columns[{key!r}] has shape {tuple(a.shape)}; it needs {rows} rows "
                             f"(one per {what[:-1]})")
        if valid is not None and tuple(valid.shape) != tuple(a.shape):
            raise ValueError(f"columns[{key!r}]: the valid mask has shape {tuple(valid.shape)} "
                             f"but the values have shape {tuple(a.shape)}; give one flag per "
                             "value")
        if key.endswith("*"):
            prefix = key[:-1]
            if not prefix:
                raise ValueError("columns: '*' needs a prefix, e.g. {'lp_*': array}")
            if a.ndim > 2:
                raise ValueError(f"columns[{key!r}] must be 1-D or 2-D, got shape "
                                 f"{tuple(a.shape)}")
            a = a.reshape(rows, -1)
            names = [f"{prefix}{j}" for j in range(a.shape[1])]
            parts = [a[:, j] for j in range(a.shape[1])]
            if valid is not None:
                valid = valid.reshape(rows, -1)
                parts = [_Masked(p, valid[:, j]) for j, p in enumerate(parts)]
        else:
            if a.ndim != 1:
                raise ValueError(f"columns[{key!r}] has shape {tuple(a.shape)}; name a 2-D "
                                 f"array with a trailing '*' ({key + '_*'!r} gives "
                                 f"{key}_0, {key}_1, ...)")
            names, parts = [key], [a if valid is None else _Masked(a, valid)]
        for col, part in zip(names, parts):
            if col in out or col in reserved:
                raise ValueError(f"columns: the column name {col!r} occurs twice; rename one")
            out[col] = part
        if key.endswith("*") and blocks is not None:
            blocks.append((names, a, valid))
    return out


def to_pandas(df):
    """A pandas copy of a result frame (pandas frames are returned as they are). Integer
    columns with nulls (bfs/sssp ``predecessor``) stay nullable ``Int64`` instead of turning
    into floats, as cuDF's plain ``to_pandas()`` would make them.

    >>> import pandas as pd
    >>> to_pandas(pd.DataFrame({"a": [1]}))["a"].tolist()
    [1]
    """
    import pandas as pd

    if isinstance(df, pd.DataFrame):
        return df
    out = df.to_pandas()
    for name in df.columns:
        column = df[name]
        try:
            integer = np.dtype(column.dtype).kind in "iu"
        except TypeError:  # categorical and other extension dtypes
            continue
        if integer and column.null_count:
            out[name] = column.to_pandas(nullable=True)
    return out


def to_frame(g, columns: dict):
    """A result frame: ``vertex`` (original ids, internal order) then the given columns.

    ``columns`` maps names to 1-D arrays of n rows; a name ending in ``*`` takes an n x k array
    and expands it as ``name0 .. name{k-1}`` without the star (``{"lp_*": a}`` gives ``lp_0``,
    ``lp_1``, ...). A value may be a pair ``(values, valid)`` of arrays of one shape: the
    column is null where ``valid`` is False (pandas nullable ``Int64`` for integers,
    ``Float32``/``Float64`` for floats, ``boolean``; cuDF nulls), e.g. a BFS predecessor that
    does not exist. For a bipartite graph (:meth:`~onyx_rapids.graph.Graph.from_bipartite`)
    the frame starts with ``side`` (the side's name, a categorical) and then ``vertex``, the
    keys that :func:`read_vertex_frame` reads back. A cuDF DataFrame on a GPU with cuDF
    installed, pandas otherwise.

    >>> import numpy as np, pandas as pd
    >>> from onyx_rapids.graph import Graph
    >>> g = Graph.from_edgelist(pd.DataFrame({"src": [5, 9], "dst": [9, 7]}))
    >>> list(to_frame(g, {"rank": np.zeros(3), "h_*": np.ones((3, 2))}).columns)
    ['vertex', 'rank', 'h_0', 'h_1']
    >>> pred = (np.array([0, 2, 0]), np.array([False, True, False]))
    >>> to_frame(g, {"predecessor": pred})["predecessor"].tolist()  # doctest: +SKIP
    [<NA>, 2, <NA>]
    """
    return _to_frame(g, columns)


def _to_frame(g, columns: dict, pandas: bool = False):
    """:func:`to_frame`; ``pandas=True`` builds the pandas frame even where cuDF is installed
    (a private switch for the benchmarks)."""
    out, blocks = {}, []
    if g.sides is not None:
        out["side"] = _Sides(g.sides, g.side_names)
    out["vertex"] = g.vertices
    out.update(_result_columns(columns, g.n, "vertices", tuple(out), blocks))
    return _frame(out, blocks, pandas=pandas)


def to_edge_frame(g, columns: dict | None = None, source: str = "src",
                  destination: str = "dst"):
    """The edges in CSR order: ``source`` and ``destination`` (original ids), the weight columns
    by their names, then ``columns`` (m rows each, ``*`` expands as in :func:`to_frame`)."""
    out = {
        source: g.vertices[g.edge_sources],
        destination: g.vertices[g.out_indices],
    }
    reserved, blocks = (source, destination), []
    if g.edge_weights is not None:
        for j, wname in enumerate(g.weight_names):
            out[wname] = g.edge_weights[:, j]
        reserved = reserved + tuple(g.weight_names)
        blocks.append((list(g.weight_names), g.edge_weights, None))
    out.update(_result_columns(columns or {}, g.m, "edges", reserved, blocks))
    return _frame(out, blocks)
