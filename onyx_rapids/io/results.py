"""Result frames out: per-vertex (:func:`to_frame`), per-edge (:func:`to_edge_frame`) and
per chosen vertex pair (:func:`to_pair_frame`), as cuDF
DataFrames on a GPU with cuDF installed and pandas DataFrames otherwise
(:mod:`~onyx_rapids.io.staging`); :func:`to_pandas` of either.

Vertex ids are the original ones: integers as int64 columns, and the labels of a graph built
from labelled ids (:class:`onyx_rapids.ids.LabelColumn`) as a pandas ``object`` column, or a
cuDF string column on a GPU.  cuDF holds no other Python objects: labels that are not all
strings (bytes, tuples, mixed types) make the frame a pandas one, also where cuDF is installed.
"""

from __future__ import annotations

import numpy as np

from ..device import xp
from ..ids import LabelColumn
from .arrays import as_array
from .frames import _cudf
from .staging import Masked, Sides, pandas_column, pandas_frame


def _frame(columns: dict, blocks=(), pandas: bool = False):
    """The result frame of ``columns`` (name -> array, :class:`Masked` or :class:`Sides`):
    cuDF on a GPU with cuDF installed unless ``pandas`` (a private switch: the benchmarks time
    the pandas path beside cuDF), else pandas (:func:`pandas_frame`; ``blocks`` as there).
    Nulls come only from :class:`Masked` columns: a NaN value stays NaN on both paths."""
    cudf = None if pandas else _cudf()
    if cudf is not None and any(isinstance(v, LabelColumn) and not v.labels.strings
                                for v in columns.values()):
        cudf = None  # labels cuDF cannot hold: a pandas frame
    if cudf is not None:
        import pandas as pd

        data = {}
        for key, value in columns.items():
            if isinstance(value, (Sides, LabelColumn)):
                data[key] = cudf.from_pandas(pd.Series(pandas_column(value)))
            elif isinstance(value, Masked):
                values = value.values
                if values.dtype.kind in "iu":
                    values = values.astype(np.int64)
                data[key] = cudf.Series(xp.ascontiguousarray(values), nan_as_null=False).where(
                    cudf.Series(xp.ascontiguousarray(value.valid)))  # null where not valid
            else:  # a NaN stays a NaN, as in the pandas frame (and cuDF need not count them)
                data[key] = cudf.Series(xp.ascontiguousarray(value), nan_as_null=False)
        return cudf.DataFrame(data)
    return pandas_frame(columns, blocks)


def _result_columns(columns: dict, rows: int, what: str, reserved: tuple,
                    blocks: list | None = None) -> dict:
    """``columns`` checked and expanded to {column name: array, :class:`Masked`}; each
    ``name*`` entry is also appended to ``blocks`` (when given) as ``(names, n x k array,
    n x k valid or None)``, so that :func:`pandas_frame` can move it as one block."""
    if not isinstance(columns, dict):
        raise TypeError(f"columns must be a dict {{name: array}}, got {type(columns).__name__}")
    out = {}
    for key, values in columns.items():
        if not isinstance(key, str):
            raise TypeError(f"columns: names must be strings, got {key!r}")
        if isinstance(values, LabelColumn):  # vertex ids of a labelled graph
            if values.shape[0] != rows:
                raise ValueError(f"columns[{key!r}] has {values.shape[0]} rows; it needs "
                                 f"{rows} rows (one per {what[:-1]})")
            if key in out or key in reserved:
                raise ValueError(f"columns: the column name {key!r} occurs twice; rename one")
            out[key] = values
            continue
        valid = None
        if isinstance(values, tuple):
            if len(values) != 2:
                raise TypeError(f"columns[{key!r}]: a column with nulls is a (values, valid) "
                                f"pair of arrays, got a tuple of {len(values)} items")
            values, valid = values
            valid = as_array(valid, f"columns[{key!r}] (valid mask)")
            if valid.dtype != np.bool_:
                raise TypeError(f"columns[{key!r}]: the valid mask must be boolean (True where "
                                f"the value exists), got dtype {valid.dtype}")
        a = as_array(values, f"columns[{key!r}]")
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
                parts = [Masked(p, valid[:, j]) for j, p in enumerate(parts)]
        else:
            if a.ndim != 1:
                raise ValueError(f"columns[{key!r}] has shape {tuple(a.shape)}; name a 2-D "
                                 f"array with a trailing '*' ({key + '_*'!r} gives "
                                 f"{key}_0, {key}_1, ...)")
            names, parts = [key], [a if valid is None else Masked(a, valid)]
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


def identity_ids(g) -> bool:
    """Whether ``g``'s original ids are its internal ones (``vertices`` is ``0..n-1``, no
    sides, no labels): results then need no gather back to original ids.  Checked once per graph
    (:meth:`~onyx_rapids.graph.Graph.cached`).

    >>> import pandas as pd
    >>> from onyx_rapids.graph import Graph
    >>> identity_ids(Graph.from_edgelist(pd.DataFrame({"src": [0, 1], "dst": [1, 2]})))
    True
    >>> identity_ids(Graph.from_edgelist(pd.DataFrame({"src": [5, 9], "dst": [9, 7]})))
    False
    """
    def check():
        v = g.vertices
        kind = getattr(getattr(v, "dtype", None), "kind", None)  # ids of any type: not 0..n-1
        labelled = getattr(g.id_map, "labels", None) is not None  # codes stand for labels
        if labelled or g.sides is not None or kind not in ("i", "u") or tuple(v.shape) != (g.n,):
            return False
        return g.n == 0 or (int(v[0]) == 0 and int(v[-1]) == g.n - 1
                            and bool((v == xp.arange(g.n, dtype=v.dtype)).all()))

    return g.cached(("results", "identity ids"), check)


def to_frame(g, columns: dict):
    """A result frame: ``vertex`` (original ids, internal order) then the given columns.

    ``columns`` maps names to 1-D arrays of n rows; a name ending in ``*`` takes an n x k array
    and expands it as ``name0 .. name{k-1}`` without the star (``{"lp_*": a}`` gives ``lp_0``,
    ``lp_1``, ...). A value may be a pair ``(values, valid)`` of arrays of one shape: the
    column is null where ``valid`` is False (pandas nullable ``Int64`` for integers,
    ``Float32``/``Float64`` for floats, ``boolean``; cuDF nulls), e.g. a BFS predecessor that
    does not exist. For a bipartite graph (:meth:`~onyx_rapids.graph.Graph.from_bipartite`)
    the frame starts with ``side`` (the side's name, a categorical) and then ``vertex``, the
    keys that :func:`read_vertex_frame` reads back. A column of vertex ids is
    ``g.id_map.column(codes)`` (:meth:`onyx_rapids.ids.VertexIds.column`: the ids, or the
    labels of a labelled graph). A cuDF DataFrame on a GPU with cuDF installed, pandas
    otherwise (and for labels cuDF cannot hold; module docstring).

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
        out["side"] = Sides(g.sides, g.side_names)
    id_map = getattr(g, "id_map", None)  # (a partition's rows, onyx_rapids.dask, have none)
    out["vertex"] = g.vertices if id_map is None else id_map.column(g.vertices)
    out.update(_result_columns(columns, g.n, "vertices", tuple(out), blocks))
    return _frame(out, blocks, pandas=pandas)


def to_edge_frame(g, columns: dict | None = None, source: str = "src",
                  destination: str = "dst"):
    """The edges in CSR order: ``source`` and ``destination`` (original ids), the weight columns
    by their names, then ``columns`` (m rows each, ``*`` expands as in :func:`to_frame`)."""
    out = {
        source: g.id_map.column(g.vertices[g.edge_sources]),
        destination: g.id_map.column(g.vertices[g.out_indices]),
    }
    reserved, blocks = (source, destination), []
    if g.edge_weights is not None:
        for j, wname in enumerate(g.weight_names):
            out[wname] = g.edge_weights[:, j]
        reserved = reserved + tuple(g.weight_names)
        blocks.append((list(g.weight_names), g.edge_weights, None))
    out.update(_result_columns(columns or {}, g.m, "edges", reserved, blocks))
    return _frame(out, blocks)


def to_pair_frame(g, sources, destinations, columns: dict | None = None):
    """A frame of vertex pairs (a minimum spanning forest's edges): ``src`` and ``dst``, the
    original ids (labels of a labelled graph) of the internal vertices ``sources`` and
    ``destinations``, then ``columns`` (one row per pair, ``*`` expands as in
    :func:`to_frame`).

    >>> import numpy as np, pandas as pd
    >>> from onyx_rapids.graph import Graph
    >>> g = Graph.from_edgelist(pd.DataFrame({"src": [5, 9], "dst": [9, 7]}))
    >>> df = to_pair_frame(g, g.to_internal([5]), g.to_internal([9]), {"weight": np.ones(1)})
    >>> list(df.columns), len(df)
    (['src', 'dst', 'weight'], 1)
    """
    out = {"src": g.id_map.column(g.vertices[sources]),
           "dst": g.id_map.column(g.vertices[destinations])}
    blocks = []
    out.update(_result_columns(columns or {}, int(sources.shape[0]), "pairs", tuple(out),
                               blocks))
    return _frame(out, blocks)
