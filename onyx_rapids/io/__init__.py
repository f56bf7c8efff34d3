"""Adapters in and out: the only package that knows cuDF, pandas, pyarrow, Parquet, SciPy and
cuGraph.

In: edge lists (:mod:`~onyx_rapids.io.edges`: :func:`read_edgelist` of a pandas / cuDF
DataFrame or pyarrow Table, :func:`read_cugraph`, checks: :func:`cugraph_edges`), Parquet
files (:mod:`~onyx_rapids.io.parquet`: :func:`read_parquet_edges`, :func:`parquet_chunks`), CSR
input (:mod:`~onyx_rapids.io.csr`: :func:`read_csr` of NumPy / CuPy arrays or SciPy / CuPy
sparse matrices; :func:`read_csr_on_host` checks host arrays where they are), vertex ids
(:mod:`~onyx_rapids.io.arrays`: :func:`read_vertex_ids`), per-vertex frames
(:mod:`~onyx_rapids.io.vertex_frames`: :func:`read_vertex_frame`) and property arrays
(:mod:`~onyx_rapids.io.properties`: :func:`read_property_array`). Each validates its input
completely and returns backend arrays (:data:`onyx_rapids.device.xp`), so that a
:class:`~onyx_rapids.graph.Graph` is never half built from bad input. Per-vertex pandas/cuDF
input is aligned by vertex id -- a ``vertex`` (or ``node``) column, else the index (never a
default RangeIndex; dicts keyed by vertex too) (with ``side`` for a
bipartite graph) -- never by position; NumPy/CuPy arrays are positional, in ``Graph.vertices``
order.  The frames' and columns' own checks are :mod:`~onyx_rapids.io.frames` and
:mod:`~onyx_rapids.io.columns`.

Out (:mod:`~onyx_rapids.io.results`): :func:`to_frame` (per-vertex results; ``(values,
valid)`` pairs become nullable columns), :func:`to_edge_frame` (per-edge) and
:func:`to_pair_frame` (chosen vertex pairs: a spanning forest's edges), as cuDF
DataFrames on a GPU with cuDF installed and pandas DataFrames otherwise (the pandas frame is
staged by :mod:`~onyx_rapids.io.staging`).

cuDF, cuGraph, CuPy, SciPy (and pandas and pyarrow, to keep ``import onyx_rapids`` light) are
imported inside the functions that need them.  Everything the rest of the library uses is
named here (``io.<name>``).
"""

from .arrays import read_extra_vertices, read_vertex_ids
from .csr import csr_inputs, csr_on_device, csr_size, read_csr, read_csr_on_host
from .edges import cugraph_edges, read_cugraph, read_edgelist, read_networkx
from .frames import (_cudf, check_column_name, frame_rows, frame_rows_slice, is_frame, is_series,
                     key_column, pair_id_columns, require_frame, weight_column_names)
from .parquet import parquet_chunks, parquet_edge_columns, parquet_row_count, read_parquet_edges
from .properties import label_columns, read_property_array, read_table_matrix
from .results import _to_frame, to_edge_frame, to_frame, to_pair_frame, to_pandas
from .vertex_frames import (from_mapping, is_keyed, keyed_pandas, positional_index,
                            read_vertex_frame)

__all__ = [
    "is_frame",
    "is_series",
    "check_column_name",
    "read_edgelist",
    "read_networkx",
    "read_parquet_edges",
    "read_csr",
    "read_csr_on_host",
    "csr_inputs",
    "read_cugraph",
    "cugraph_edges",
    "read_extra_vertices",
    "read_vertex_ids",
    "read_vertex_frame",
    "from_mapping",
    "is_keyed",
    "key_column",
    "keyed_pandas",
    "positional_index",
    "read_property_array",
    "read_table_matrix",
    "to_frame",
    "to_edge_frame",
    "to_pair_frame",
]
