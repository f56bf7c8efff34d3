"""The layout every build produces, and the policy that sizes and places it.

Arrays of vertex indices (values in [0, n): ``out_indices``, ``in_indices``, the edge sources)
take :func:`vertex_dtype` of n, int32 while n fits in int32, int64 beyond; arrays of edge
positions or counts (values in [0, m]: the offsets, ``in_edge_ids``, ``reverse_edge``) take
:func:`edge_dtype` of m, int32 while m fits, int64 beyond.  So a graph of more than 2**31 edges
on fewer than 2**31 vertices keeps 4-byte vertex indices beside 8-byte offsets.

Here too: :class:`Buffers`, what every builder returns (the keyword arguments of
``Graph.__init__``); :func:`edge_bytes_estimate` and :func:`auto_placement`, the sizes that
``placement="auto"`` decides by; and the array helpers that the device and the host build
share (:func:`edge_rows`, :func:`run_heads`, :func:`row_blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import device, memory
from ..device import xp

# Largest n that int32 vertex-index arrays, and largest m that int32 offset / edge-position
# arrays, hold (:func:`vertex_dtype`, :func:`edge_dtype`); a module global so tests can lower it.
INDEX32_LIMIT = int(np.iinfo(np.int32).max)


def vertex_dtype(n: int) -> np.dtype:
    """The dtype of arrays holding vertex indices (values in [0, n)): int32 while n fits."""
    return np.dtype(np.int32) if n <= INDEX32_LIMIT else np.dtype(np.int64)


def edge_dtype(m: int) -> np.dtype:
    """The dtype of arrays holding edge positions or counts (values in [0, m]: offsets,
    ``in_edge_ids``, ``reverse_edge``): int32 while m fits."""
    return np.dtype(np.int32) if m <= INDEX32_LIMIT else np.dtype(np.int64)


def edge_bytes_estimate(rows: int, weight_columns: int, n: int | None = None) -> int:
    """Edge-array bytes of a graph of ``rows`` stored edge rows before merging: two vertex-index
    arrays (``out_indices``, ``in_indices``: :func:`vertex_dtype` of ``n``; n unknown, before
    the ids are read: int32, as any graph of fewer than 2**31 vertices has), one edge-position
    array (``in_edge_ids``: :func:`edge_dtype` of ``rows``, int64 from 2**31 rows) and a
    float32 array per weight column."""
    vertex = vertex_dtype(0 if n is None else int(n)).itemsize
    edge = edge_dtype(int(rows)).itemsize
    return int(rows) * (2 * vertex + edge + 4 * weight_columns)


def auto_placement(edge_bytes: int, on_device: bool) -> str:
    """"device" when the edge arrays take at most :data:`memory.AUTO_FRACTION` of the device
    memory the library may use (counting their own bytes as usable when they are already
    there), else "host"."""
    counted = on_device and device.BACKEND == "gpu"  # the simulator tracks no usage
    usable = memory.device_available() + (edge_bytes if counted else 0)
    return "device" if edge_bytes <= memory.AUTO_FRACTION * usable else "host"


@dataclass(eq=False)
class Buffers:
    """A finished graph's arrays and labels, as a builder returns them: the keyword arguments
    of ``Graph.__init__`` (:meth:`arguments`), whose docstring tells what each holds.

    ``edge_sources`` (the source of each edge in CSR order) is given when the build has it, so
    the graph need not derive it again."""

    vertices: Any
    out_offsets: Any
    out_indices: Any
    in_offsets: Any
    in_indices: Any
    in_edge_ids: Any
    out_degree: Any
    in_degree: Any
    edge_weights: Any = None
    weight_names: Any = ()
    directed: bool = True
    reverse_edge: Any = None
    multigraph: bool = False
    sides: Any = None
    side_names: Any = None
    placement: str = "device"
    vertex_order: str = "id"
    edge_sources: Any = None
    labels: Any = None  # the VertexLabels of labelled ids (vertices then holds their codes)

    @property
    def n(self) -> int:
        return int(self.vertices.shape[0])

    @property
    def m(self) -> int:
        return int(self.out_indices.shape[0])

    @property
    def offset_dtype(self) -> np.dtype:
        return np.dtype(self.out_offsets.dtype)

    def arguments(self) -> dict:
        """The fields as keyword arguments (the arrays themselves, never copies)."""
        return dict(vars(self))


def edge_rows(offsets, a: int, b: int, dtype):
    """The row (source vertex) of each CSR position a..b-1 of ``offsets``, as ``dtype``."""
    positions = xp.arange(a, b, dtype=np.int64)
    return (xp.searchsorted(offsets, positions, side="right") - 1).astype(dtype, copy=False)


def run_heads(sorted_keys):
    """Mask of the first entry of each run of equal ``sorted_keys``, or None when every entry
    starts a run (all keys distinct)."""
    m = int(sorted_keys.shape[0])
    if m < 2:
        return None
    head = xp.empty(m, dtype=np.bool_)
    head[0] = True
    xp.not_equal(sorted_keys[1:], sorted_keys[:-1], out=head[1:])
    if bool(head.all()):
        return None
    return head


def row_blocks(offsets, block: int):
    """``(v0, v1)`` ranges of whole rows holding about ``block`` entries each (a row longer
    than ``block`` is a block of its own); ``offsets`` on the host."""
    n = offsets.shape[0] - 1
    v0 = 0
    while v0 < n:
        v1 = int(np.searchsorted(offsets, offsets[v0] + block, side="right")) - 1
        v1 = min(max(v1, v0 + 1), n)
        yield v0, v1
        v0 = v1
