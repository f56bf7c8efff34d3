"""Parquet edge lists in: the columns checked (:func:`parquet_edge_columns`), the file read
whole (:func:`read_parquet_edges`) or in chunks of row groups (:func:`parquet_chunks`, for the
host build), its row count from the metadata.  cuDF reads on a GPU with cuDF, pyarrow
otherwise.
"""

from __future__ import annotations

import os

from .frames import _cudf, pair_id_columns, require_column, weight_column_names


def parquet_edge_columns(path, source="src", destination="dst", weight=None):
    """Check a Parquet file or directory for the edge columns; return ``(path, columns)``:
    the path as a str and the distinct column names to read (the id columns -- one each, or
    several for multi-column ids -- then the weights).

    Raises FileNotFoundError for a missing path and ValueError, naming the path, for a file
    that is not Parquet or lacks a column."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike), got "
                        f"{type(path).__name__}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"path={path!r}: no such Parquet file or directory; check the "
                                "path (relative paths start at the working directory)")
    sources, destinations = pair_id_columns(source, destination)
    names = weight_column_names(weight)
    schema = _parquet_call(path, lambda: _parquet_dataset(path).schema)
    where = f"Parquet file {path!r}"
    for col, arg in [(c, "source") for c in sources] + [(c, "destination") for c in
                                                        destinations] + [
        (name, "weight") for name in names
    ]:
        require_column(list(schema.names), col, arg, where)
    return path, list(dict.fromkeys([*sources, *destinations, *names]))


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
