"""The pandas result frame, its bytes moved to the host once (:func:`pandas_frame`): result
columns staged on the device per dtype, one copy per dtype to page-locked host memory, and the
frame assembled over those buffers without further copies.  Also the column kinds a result
frame holds besides plain arrays: :class:`Masked` (with nulls), :class:`Sides` and the labels
of a labelled graph's ids (:class:`onyx_rapids.ids.LabelColumn`, an ``object`` column).
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..device import xp
from ..ids import LabelColumn


class Masked:
    """A result column with nulls: ``values`` where ``valid`` is True, null elsewhere."""

    def __init__(self, values, valid):
        self.values = values
        self.valid = valid


class Sides:
    """A bipartite graph's side column: int8 codes and the two side names."""

    def __init__(self, codes, names):
        self.codes = codes
        self.names = list(names)


def pandas_column(value):
    import pandas as pd

    if isinstance(value, Sides):
        codes = device.to_host(value.codes).astype(np.int8)
        return pd.Categorical.from_codes(codes, categories=value.names)
    if isinstance(value, LabelColumn):
        return value.values()
    if isinstance(value, Masked):
        values = device.to_host(value.values)
        missing = ~device.to_host(value.valid)
        if values.dtype.kind in "iu":
            return pd.arrays.IntegerArray(values.astype(np.int64), missing)
        if values.dtype.kind == "b":
            return pd.arrays.BooleanArray(values, missing)
        return pd.arrays.FloatingArray(values, missing)
    return device.to_host(value)


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
    """Whether :func:`pandas_frame` stages ``value`` itself: numeric and boolean plain columns,
    nullable integer, boolean and float32/float64 columns, the side column."""
    if isinstance(value, Sides):
        return True
    if isinstance(value, LabelColumn):  # Python objects: the frame is made column by column
        return False
    if isinstance(value, Masked):
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


def pandas_frame(columns: dict, blocks=()):
    """A pandas DataFrame of result columns, their bytes moved to the host once.

    Columns are staged on the device by dtype: each dtype gets one fresh C-contiguous (c, n)
    buffer, one row per column -- its plain columns first (an n x k ``blocks`` entry,
    ``(names, array, valid)`` from :func:`~onyx_rapids.io.results._result_columns`, goes in by
    one transpose, :func:`onyx_rapids.device.transpose_into`), then the int64 (integers),
    boolean or float values of the columns with nulls; their null masks (``~valid``) fill rows
    of the boolean buffer.  Each buffer crosses to the host in one copy, started as soon as it is staged
    (:func:`onyx_rapids.device.to_host_pinned_async`: page-locked memory on a GPU; no copy
    under the simulator, where the staging buffers already are host memory).  The frame is
    assembled over those host buffers while the copies run, without further copies: per
    dtype, the plain rows are the frame's 2-D block as they are; each nullable column is a
    pandas masked array over its value row and mask row.  It is returned once the copies are
    done.  The frame owns the buffers (never memory of the graph or of the caller's arrays).
    The side column of a bipartite graph is a categorical, as :func:`pandas_column` makes it.

    Where pandas lacks ``pandas.api.internals.create_dataframe_from_blocks`` (pandas < 3),
    ``pd.DataFrame(..., copy=False)`` takes the staged columns, also without copying (one
    block per column).  Columns of other dtypes (strings, say) make the whole frame column by
    column, as :func:`pandas_column` gives them."""
    import pandas as pd

    if not all(_stageable(v) for v in columns.values()):
        return pd.DataFrame({k: pandas_column(v) for k, v in columns.items()})
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
        if isinstance(value, Sides):
            arrays[name] = pandas_column(value)  # before the copies start: it waits for its own
        elif isinstance(value, Masked):
            items.append(_Rows([name], value.values[:, None], value.valid[:, None]))
        else:
            items.append(_Rows([name], value[:, None]))
        i += 1
    rows = next(iter(columns.values()))
    rows = (rows.codes if isinstance(rows, Sides) else
            rows.values if isinstance(rows, Masked) else rows).shape[0]

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
    """The pandas frame of :func:`pandas_frame` over its host buffers (``host``: dtype ->
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
