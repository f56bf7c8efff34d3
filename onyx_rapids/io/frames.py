"""Frames: what kind of table an input is (pandas, cuDF, pyarrow) and the checks of its column
names, the parts every reader of frames shares.

cuDF is imported only where a GPU backend asks for it (:func:`_cudf`).
"""

from __future__ import annotations

import difflib

import numpy as np

from .. import device
from ..messages import listing


def frame_kind(obj) -> str | None:
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
    return frame_kind(obj) is not None


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


def require_frame(df, arg: str) -> str:
    """The kind of ``df`` (:func:`frame_kind`); TypeError naming ``arg`` for anything else."""
    kind = frame_kind(df)
    if kind is None:
        raise TypeError(
            f"{arg} must be a pandas or cuDF DataFrame or a pyarrow Table, got "
            f"{type(df).__module__}.{type(df).__name__}; wrap your data, e.g. "
            "pandas.DataFrame({'src': [...], 'dst': [...]})"
            + (" (for CSR arrays use Graph.from_csr)" if arg == "df" else "")
        )
    return kind


def column_names(df, kind: str) -> list:
    """The column names of a frame of ``kind``."""
    return list(df.column_names) if kind == "arrow" else list(df.columns)


def num_rows(df, kind: str) -> int:
    """The rows of a frame of ``kind``."""
    return int(df.num_rows) if kind == "arrow" else int(len(df))


def frame_rows(df) -> int:
    """The rows of an edge frame (pandas, cuDF, pyarrow); TypeError naming ``df`` otherwise."""
    return num_rows(df, require_frame(df, "df"))


def frame_rows_slice(df, a: int, b: int):
    """Rows ``a`` to ``b`` of an edge frame, of the same kind (a chunk of a larger list)."""
    if require_frame(df, "df") == "arrow":
        return df.slice(a, b - a)
    return df.iloc[a:b]


def require_column(names: list, col, arg: str, where: str) -> None:
    """ValueError naming ``arg``, the columns there are and the closest matches, unless
    ``col`` is one of ``names`` (the columns of ``where``)."""
    if has_column(names, col):
        return
    strings = [c for c in names if isinstance(c, str)]
    close = difflib.get_close_matches(str(col), strings, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}? Pass" if close else "; pass"
    raise ValueError(
        f"{arg}={col!r}: no such column in {where} (columns: {listing(repr(c) for c in names)})"
        f"{hint} {arg}= the name of one of its columns"
    )


def check_column_name(col, arg: str) -> None:
    """TypeError naming ``arg`` unless ``col`` is one column name (not None, not a list, not a
    bool)."""
    if isinstance(col, (list, tuple, set, dict)) or col is None:
        raise TypeError(f"{arg} must be a single column name, got {col!r}")
    if isinstance(col, (bool, np.bool_)):
        raise TypeError(f"{arg}={col!r}: pass the name of a column (a str, e.g. {arg}='"
                        f"{'w' if arg == 'weight' else 'src'}'), not a flag")


def id_column_names(col, arg: str) -> list:
    """The id columns an id argument names: one name, or a list of names (multi-column ids,
    as cuGraph takes them: each vertex a tuple of their values); checked."""
    if isinstance(col, (list, tuple)):
        names = list(col)
        if not names:
            raise ValueError(f"{arg}=[] names no column; pass {arg}= a column name (or a list "
                             "of names for multi-column ids)")
        for name in names:
            check_column_name(name, arg)
        if len(set(map(repr, names))) != len(names):
            raise ValueError(f"{arg}={col!r} names a column more than once")
        return names
    check_column_name(col, arg)
    return [col]


def pair_id_columns(source, destination, arg_names=("source", "destination")):
    """``(source names, destination names)`` (:func:`id_column_names`): the same number of
    columns on both sides, ValueError naming the arguments otherwise."""
    a, b = id_column_names(source, arg_names[0]), id_column_names(destination, arg_names[1])
    if len(a) != len(b):
        raise ValueError(f"{arg_names[0]} names {len(a)} column(s) and {arg_names[1]} "
                         f"{len(b)}; multi-column ids need as many columns on each side")
    return a, b


def weight_column_names(weight) -> list:
    """The weight columns a ``weight`` argument names (None, a name or a list of names),
    checked: at least one when given, each once; ``weight=True``/``False`` refused with the
    fix (a column's name, or None)."""
    if weight is None:
        return []
    if isinstance(weight, (bool, np.bool_)):
        raise TypeError(f"weight={weight!r}: a graph's weights come from columns; pass the "
                        "weight column's name (e.g. weight='w') or a list of names, or "
                        "weight=None for an unweighted graph")
    if not isinstance(weight, (str, list, tuple)) and not np.isscalar(weight):
        raise TypeError(f"weight must be a column name or a list of names, got "
                        f"{type(weight).__name__} {weight!r}")
    names = list(weight) if isinstance(weight, (list, tuple)) else [weight]
    if not names:
        raise ValueError("weight=[] names no column; pass weight=None for an unweighted graph")
    for name in names:
        check_column_name(name, "weight")
    dupes = sorted({repr(c) for c in names if names.count(c) > 1})
    if dupes:
        raise ValueError(f"weight names the column(s) {', '.join(dupes)} more than once; list "
                         "each weight column once")
    return names


def dtype_kind(dtype) -> str:
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


def has_column(names: list, col) -> bool:
    """Whether ``col`` is one of ``names`` (False for an unhashable ``col``)."""
    try:
        return col in names
    except TypeError:  # unhashable
        return False


#: The id column's name NetworkX users hold (``nx.to_pandas_edgelist``, node attribute
#: frames): a frame without a ``vertex`` column is keyed by a ``node`` column.
NODE = "node"


def key_column(names: list, vertex: str = "vertex"):
    """The id column among a frame's column ``names``: ``vertex`` when present, else ``node``
    (NetworkX's name, for the default ``vertex``), else None (the index keys the rows)."""
    if has_column(names, vertex):
        return vertex
    if vertex == "vertex" and has_column(names, NODE):
        return NODE
    return None


def series_column(series):
    """The column name a Series keyed by its index becomes: its name, else ``"value"``."""
    return series.name if series.name is not None else "value"


def value_columns(df, kind: str, columns, exclude, name: str, where: str) -> list:
    """The value columns of a frame: ``columns`` (a name or a list, checked), else all but the
    key columns ``exclude``; ValueError naming ``name`` when there are none."""
    names = column_names(df, kind)
    if columns is None:
        chosen = [c for c in names if c not in exclude]
    else:
        chosen = list(columns) if isinstance(columns, (list, tuple)) else [columns]
        for col in chosen:
            check_column_name(col, "columns")
            require_column(names, col, "columns", where)
    if not chosen:
        raise ValueError(f"{name}: {where} has no value columns"
                         + (f" besides {', '.join(map(repr, exclude))}" if exclude else "")
                         + "; add at least one feature column")
    return chosen


def _cudf():
    """The cudf module when the backend is the GPU and cuDF imports, else None."""
    if device.BACKEND != "gpu":
        return None
    try:
        import cudf
    except Exception:
        return None
    return cudf
