"""Per-vertex frames in, aligned by vertex id, never by position (:func:`read_vertex_frame`):
keyed by a ``vertex`` column (or ``node``, NetworkX's name, when there is no ``vertex``), else
by the index, never by a frame's default RangeIndex (row positions: refused with the fix);
for a bipartite graph by
(``side``, ``vertex``).  A dict keyed by vertex (:func:`from_mapping`) reads as a Series (or,
with rows of values, as a frame) indexed by its keys.  Ids not in the graph, repeated and
missing vertices are refused by name.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

import numpy as np

from .. import device
from ..ids import is_labels as ids_are_labels
from ..messages import listing
from ..device import xp
from .arrays import as_array
from .columns import Column, id_column, numeric_column, to_int64
from .frames import (NODE, column_names, dtype_kind, frame_kind, has_column, is_frame,
                     is_series, key_column, num_rows, series_column, value_columns)


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
                         f"({listing(values)}); use {left!r} or {right!r} (or 0/1)")
    return device.asarray(codes)


def is_keyed(values) -> bool:
    """Whether ``values`` is keyed by vertex id: a DataFrame, Series or pyarrow Table, or a
    dict (any Mapping) whose keys are vertex ids."""
    return is_frame(values) or is_series(values) or isinstance(values, Mapping)


def _is_row(value) -> bool:
    """Whether a dict value is a row of several values (a list, tuple or array) rather than
    one value."""
    return isinstance(value, (list, tuple)) or getattr(value, "ndim", 0) > 0


def from_mapping(values, name: str, column: str = "value"):
    """A dict keyed by vertex id as a pandas object keyed by its index: one value per key gives
    a Series named ``column``; rows of values (lists, tuples, arrays of one length) give a
    DataFrame, one column per position; a dict of columns with a ``vertex`` (or ``node``) key
    (``{"vertex": [..], "x": [..]}``) is that frame.  Keys ``(side, id)`` (a bipartite graph's)
    give a two-level index.  Anything else comes back as it is.

    >>> from_mapping({0: 1.0, 33: 1.0}, "personalization").to_dict()
    {0: 1.0, 33: 1.0}
    >>> from_mapping({0: [1.0, 2.0], 1: [3.0, 4.0]}, "features").shape
    (2, 2)
    """
    if not isinstance(values, Mapping):
        return values
    import pandas as pd

    if not values:
        raise ValueError(f"{name}: the dict is empty; give at least one vertex: value pair")
    rows = [_is_row(v) for v in values.values()]
    if key_column(list(values)) is not None and all(rows):  # columns, as pandas.DataFrame's
        return pd.DataFrame(values)
    if not any(rows):
        keys = list(values)
        index = (pd.MultiIndex.from_tuples(keys) if all(isinstance(k, tuple) for k in keys)
                 else pd.Index(keys))
        return pd.Series(list(values.values()), index=index, name=column)
    widths = {len(v) if _is_row(v) else None for v in values.values()}
    if len(widths) != 1 or None in widths:
        raise ValueError(f"{name}: a dict keyed by vertex needs one value per vertex, or rows of "
                         f"one length (features), got row lengths {sorted(map(str, widths))}")
    frame = pd.DataFrame([list(v) for v in values.values()])
    keys = list(values)
    frame.index = (pd.MultiIndex.from_tuples(keys) if all(isinstance(k, tuple) for k in keys)
                   else pd.Index(keys))
    return frame


def positional_index(index) -> bool:
    """Whether ``index`` is a default RangeIndex (unnamed, 0, 1, 2, ...: row positions), as a
    frame or Series built without an index has."""
    return (type(index).__name__ == "RangeIndex" and getattr(index, "name", None) is None
            and index.start == 0 and index.step == 1)


def _ambiguous(df, series: bool, vertices) -> bool:
    """Whether a default RangeIndex may not be read as vertex ids: always for a frame (one of
    its columns may hold the ids: the issue's ``{node, label}`` frame), and for a Series
    (whose index is its only key; pandas gives a Series made from a dict keyed 0, 1, 2, ...
    this index too) unless reading it by position in ``vertices`` (host ids in internal
    order) names the same vertices."""
    if not positional_index(df.index):
        return False
    rows = len(df.index)
    return not series or rows > len(vertices) or \
        not np.array_equal(vertices[:rows], np.arange(rows))


def _refuse_positions(name: str, where: str, series: bool, vertex: str) -> None:
    """The error of a frame or Series whose only key would be its default RangeIndex."""
    if series:
        raise ValueError(
            f"{name}: the Series has a default RangeIndex (0, 1, 2, ...), which reads as vertex "
            "ids only where those are also the vertices' positions, and here they are not; "
            "index it by vertex id (pandas.Series(values, index=vertex_ids), or a dict "
            "{vertex: value}), or pass its .to_numpy() for values in Graph.vertices order"
        )
    raise ValueError(
        f"{name}: {where} has no {vertex!r} column and its index is a default RangeIndex (row "
        f"positions, not vertex ids); name the id column {vertex!r} (or 'node'), or set it as "
        "the index (df.set_index('<id column>'))"
    )


def keyed_pandas(values, name: str, vertices, column: str = "value"):
    """A pandas DataFrame with a ``vertex`` id column from any input keyed by vertex (a frame
    with a ``vertex`` or ``node`` column or an id index, a Series, a dict), for readers that
    look ids up on the host (the partitioned graphs of :mod:`onyx_rapids.dask`, whose
    ``vertices``, host ids in order, it is for); a default RangeIndex is refused as
    :func:`read_vertex_frame` refuses it."""
    values = from_mapping(values, name, column)
    series = is_series(values)
    frame = values.to_frame(name=series_column(values)) if series else values
    if hasattr(frame, "to_pandas") and frame_kind(frame) != "pandas":
        frame = frame.to_pandas()
    key = None if series else key_column(list(frame.columns))
    if key is not None:
        return frame.rename(columns={key: "vertex"})
    if _ambiguous(frame, series, np.asarray(vertices)):
        _refuse_positions(name, f"the {name} frame", series, "vertex")
    return frame.rename_axis("vertex").reset_index()


def _index_labels(index, name: str, where: str):
    """The labels of a labelled graph's vertices given by a frame's or Series's index (of any
    dtype; a MultiIndex gives tuples) as a host object array; nulls refused."""
    import pandas as pd

    labels = np.empty(len(index), dtype=object)
    labels[:] = list(_host_objects(index) if getattr(index, "nlevels", 1) == 1
                     else index.to_pandas() if hasattr(index, "to_pandas") else index)
    nulls = pd.isna(labels)
    if nulls.any():
        raise ValueError(f"{name}: {int(nulls.sum())} null vertex label(s) in the index of "
                         f"{where} (first at row {int(np.argmax(nulls))}); drop those rows")
    return labels


def _index_keys(g, df, kind: str, name: str, where: str, vertex: str, side: str):
    """(ids, side codes | None) from the index of a pandas/cuDF frame without a ``vertex``
    column."""
    names = column_names(df, kind)
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
        if levels != 1 and g.id_map.labels is None:
            raise ValueError(f"{name}: {keyed}, but it is a MultiIndex of {levels} levels; add "
                             f"a {vertex!r} column, or index the rows by vertex id alone")
        id_level = index  # a labelled graph's MultiIndex: tuple labels (dict keys (a, b))
    if g.id_map.labels is not None:
        ids = _index_labels(id_level, name, where)
    elif dtype_kind(id_level.dtype) not in "iu":
        raise TypeError(
            f"{name}: {keyed}, but the index has dtype {id_level.dtype}; vertex ids must be "
            f"integers: add a {vertex!r} column, or set_index({vertex!r}) on the id column"
            " (labels such as strings name vertices only of a graph built from labelled ids)"
        )
    else:
        ids = to_int64(as_array(id_level, f"{name} (index)"), f"{name} (index)")
    codes = None
    if side_level is not None:
        codes = _side_codes(g, side_level, f"{name} (index level 0, the side)", where)
    return ids, codes, f"the index ({keyed})"


def read_vertex_frame(g, df, columns=None, *, name: str = "values", vertex: str = "vertex",
                      side: str = "side", complete: bool = True, dtype=np.float32):
    """Per-vertex values aligned by vertex id, never by position.

    ``df`` is keyed by its ``vertex`` column (original ids) when it has one (a pandas/cuDF
    DataFrame or a pyarrow Table), else by a ``node`` column (NetworkX's name for it); a
    pandas/cuDF DataFrame with neither, or a Series, is keyed by its index. A frame's default
    (unnamed 0, 1, 2, ...) RangeIndex is row positions, and is refused with the fix; so is a
    Series's, unless the positions are the ids too (pandas gives ``pd.Series({0: a, 1: b})``
    that index). A
    dict ``{vertex: value}`` (or ``{vertex: [values]}``) reads as a Series (a frame) indexed
    by its keys (:func:`from_mapping`). For a bipartite graph the keys are (side, vertex): a
    ``side`` column (side names as :func:`to_frame` writes them, or 0/1) next to the id
    column, a two-level (side, vertex) index, or dict keys ``(side, id)``. Ids not in the
    graph and repeated vertices raise ValueError naming them.

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
    >>> ids, x = read_vertex_frame(g, pd.DataFrame({"node": [20], "x": [5.0]}), complete=False)
    >>> ids.tolist(), x.tolist()
    ([1], [[5.0]])
    """
    df = from_mapping(df, name)
    series = is_series(df)
    if series:
        df = df.to_frame(name=series_column(df))
    elif frame_kind(df) is None:
        raise TypeError(
            f"{name} must be a pandas or cuDF DataFrame or Series, a pyarrow Table or a dict "
            f"keyed by vertex, got {type(df).__module__}.{type(df).__name__}; e.g. "
            "pandas.DataFrame({'vertex': [...], 'x': [...]}), pandas.Series(values, "
            "index=vertex_ids) or {vertex: value}"
        )
    kind = frame_kind(df)
    where = f"the {name} frame"
    names = column_names(df, kind)
    bipartite = g.sides is not None
    key = None if series else key_column(names, vertex)
    if key is not None:
        if key == "vertex" and has_column(names, NODE) and columns is None:
            raise ValueError(
                f"{name}: {where} has both a 'vertex' and a 'node' column; keep one id column "
                "(or pass columns= to choose the value columns)"
            )
        if bipartite and not has_column(names, side):
            raise ValueError(
                f"{name}: the graph is bipartite ({g.side_names[0]!r}, {g.side_names[1]!r}), "
                f"where an id may name a vertex on each side, so {where} needs a {side!r} "
                f"column next to {key!r} (side names, or 0/1), as io.to_frame writes it"
            )
        exclude = (key, side) if bipartite else (key,)
        keys = f"column {key!r}"
    else:
        close = difflib.get_close_matches(str(vertex), [c for c in names if isinstance(c, str)],
                                          n=1, cutoff=0.6)
        if close and columns is None:  # a misspelt key column must not become a feature
            raise ValueError(
                f"{name}: {where} has no {vertex!r} column but has {close[0]!r}; rename it to "
                f"{vertex!r} to key the rows by it, or pass columns= to key them by the index"
            )
        if kind == "arrow":
            raise ValueError(f"{name}: {where} (a pyarrow Table, which has no index) has no "
                             f"{vertex!r} column; name the id column {vertex!r} (or 'node')")
        if positional_index(df.index) and _ambiguous(  # the ids' head only where needed
                df, series, g.id_map.original(xp.arange(min(len(df.index), g.n)))):
            _refuse_positions(name, where, series, vertex)
        exclude = ()
        keys = None
    chosen = value_columns(df, kind, columns, exclude, name, where)
    if num_rows(df, kind) == 0:
        raise ValueError(f"{name}: {where} is empty")
    if keys is None:
        ids, codes, keys = _index_keys(g, df, kind, name, where, vertex, side)
    else:
        ids = id_column(df, kind, key, "vertex", where, labels=g.id_map.labels is not None)
        codes = None
        if bipartite:
            col = df.column(side) if kind == "arrow" else df[side]
            codes = _side_codes(g, col, f"side={side!r}", where)
    pos, known = g.id_map.locate(ids, codes)
    if not bool(known.all()):
        bad = ~known
        bad_ids = ids[device.to_host(bad)] if ids_are_labels(ids) else device.to_host(ids[bad])
        if codes is None:
            unknown = list(dict.fromkeys(repr(i) if ids_are_labels(ids) else i
                                         for i in bad_ids.tolist()))
            if not ids_are_labels(ids):
                unknown.sort()
        else:
            pairs = zip(device.to_host(codes[bad]).tolist(), bad_ids.tolist())
            unknown = sorted({f"{g.side_names[c]} {i}" for c, i in pairs})
        raise ValueError(f"{name}: {len(unknown)} id(s) in {keys} are not vertices of the "
                         f"graph: {listing(unknown)}; drop those rows")
    sorted_pos = xp.sort(pos)
    dup = sorted_pos[1:][sorted_pos[1:] == sorted_pos[:-1]]
    if dup.shape[0]:
        dupes = g.describe_vertices(xp.unique(dup))
        raise ValueError(f"{name}: vertices appear more than once in {keys}: "
                         f"{listing(dupes)}; keep one row per vertex")
    if complete and pos.shape[0] != g.n:
        seen = xp.zeros(g.n, dtype=bool)
        seen[pos] = True
        missing = g.describe_vertices(xp.nonzero(~seen)[0])
        raise ValueError(f"{name}: {len(missing)} vertices have no row in {where}: "
                         f"{listing(missing)}; give every vertex exactly one row")
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        cols = [numeric_column(df, kind, c, "columns", where) for c in chosen]
    else:
        cols = []
        for c in chosen:
            col = Column(df, kind, c)
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
