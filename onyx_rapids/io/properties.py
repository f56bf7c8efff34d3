"""Vertex and edge properties in: arrays and frames as rows x k float32 matrices
(:func:`read_property_array`, :func:`read_table_matrix`), and the label columns of a seed
frame (:func:`label_columns`).  Per-vertex frames are aligned by id
(:mod:`~onyx_rapids.io.vertex_frames`).
"""

from __future__ import annotations

import numpy as np

from ..device import xp
from .arrays import as_array
from .columns import finite_float32, numeric_column
from .frames import (column_names, is_frame, is_series, key_column, num_rows, require_frame,
                     series_column, value_columns)
from .vertex_frames import read_vertex_frame


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
    a = as_array(values, name)
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
    return xp.ascontiguousarray(finite_float32(a.astype(np.float64) if a.dtype.kind == "b"
                                                else a, name))


def read_table_matrix(df, rows: int, what: str, name: str = "values", columns=None):
    """A frame of ``rows`` rows (no key column) as a rows x k float32 matrix, columns in order."""
    kind = require_frame(df, name)
    where = f"the {name} frame"
    chosen = value_columns(df, kind, columns, (), name, where)
    if num_rows(df, kind) != rows:
        raise ValueError(f"{name} has {num_rows(df, kind)} rows but the graph has {rows} {what}")
    cols = [numeric_column(df, kind, c, "columns", where) for c in chosen]
    return xp.ascontiguousarray(xp.stack(cols, axis=1))


def label_columns(df) -> list:
    """The label columns of a seed frame: ``label`` (one partition) or ``label_0``.. (P)."""
    if is_series(df):
        return [series_column(df)]
    kind = require_frame(df, "labels")
    cols = column_names(df, kind)
    names = [c for c in cols if c not in (key_column(cols), "side")]
    if "label" in names:
        return ["label"]
    numbered = sorted((c for c in names if isinstance(c, str) and c.startswith("label_")
                       and c[6:].isdigit()), key=lambda c: int(c[6:]))
    if not numbered or [int(c[6:]) for c in numbered] != list(range(len(numbered))):
        raise ValueError(f"labels: the frame needs a 'label' column, or 'label_0'..'label_<P-1>' "
                         f"for P partitions (it has {names})")
    return numbered
