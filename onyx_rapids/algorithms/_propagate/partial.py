"""Partial edge processing (Graprox; an ``Approximation``'s ``edge_fraction`` f < 1): each bulk
pull reads a rotating window of a vertex's in-edges and scales what they bring up to an
estimate of the whole sum.

A vertex v of in-degree d reads c = ceil(f d) of its in-edges (at least one) in every
iteration: in iteration t (from 0) those at positions ``(t c + v OFFSET) mod d, ..`` of its
in-edge list, wrapping round, so consecutive windows tile the list and every in-edge is read
within ceil(1 / f) iterations.  The per-vertex offset (``v`` times :data:`OFFSET`) keeps
neighbours from reading the same relative positions in the same iteration: on a lattice,
where every vertex's list holds the same directions in the same order, windows in step read
mass from one side only in an iteration, and a float64 emulation of PageRank on a weighted
64 x 64 grid at f = 0.5 grew without bound (the sum of ranks 4,160 after 100 iterations;
with the offset 1.3, L1 0.47 from the exact ranks).  What the window brings is multiplied by d / c: the processed partial
sum scaled up, an unbiased estimate of the sum over every in-edge (over d / c consecutive
iterations of unchanged rows, exactly that sum on average).

The edge function finds an in-edge's position from its edge id: the run's graph is
:class:`Positions`, ``g`` with the CSC positions as its in-edge ids (an edge property the
contribution reads, ``args["weights"]``, is put in CSC order to match).  Unread in-edges cost
their source index only (no row, no weight is loaded).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
from numba import cuda, int64

from ... import device, operators as ops
from ...binding import py_func


#: A vertex's window starts ``v * OFFSET`` positions on (mod its in-degree): an odd constant
#: far from the small periods of lattices (Knuth's multiplicative-hash spirit, kept in int64).
OFFSET = 40503


@cuda.jit(device=True)
def window_scale(v, e, offsets, window, turn):
    """d / c when in-edge ``e`` (a CSC position) of ``v`` is in iteration ``turn``'s window
    of its c = ``window[v]`` of d in-edges (from position ``(turn c + v OFFSET) mod d``),
    else 0."""
    first = offsets[v]
    d = offsets[v + 1] - first
    c = window[v]
    if (e - first + d - (turn * c + int64(v) * OFFSET) % d) % d >= c:
        return np.float32(0.0)
    return np.float32(d) / np.float32(c)


class Positions:
    """``g`` whose in-edge ids are the CSC positions (an edge function's ``e`` is then the
    in-edge's position); what it caches is kept apart from ``g``'s under keys of its own."""

    def __init__(self, g):
        self.graph = g
        self.in_edge_ids = device.xp.arange(g.m, dtype=g.in_edge_ids.dtype)

    def __getattr__(self, name):  # everything else is g's
        return getattr(self.graph, name)

    def cached(self, key, build):
        return self.graph.cached(("propagate", "positions", key), build)


@functools.lru_cache(maxsize=None)
def windowed(contribution):
    """The edge function of ``contribution`` (an ``ops.Gather`` or an edge function
    ``fn(f, u, v, e, ..)``) over the window (:func:`window_scale`), as an ``ops.Edge``
    function: it reads ``edge_offsets``, ``edge_window`` and ``edge_turn`` besides what
    ``contribution`` reads."""
    gather = isinstance(contribution, ops.Gather)
    inner = contribution.weight if gather else contribution
    params = () if inner is None else \
        tuple(inspect.signature(py_func(inner)).parameters)[3 if gather else 4:]
    reads = ", ".join(params)
    if gather:
        value = f"{contribution.rows}[u, f]" + (f" * inner(u, v, e, {reads})" if inner else "")
        params = (contribution.rows,) + params
    else:
        value = f"inner(f, u, v, e, {reads})"
    source = (f"def partial(f, u, v, e, edge_offsets, edge_window, edge_turn, "
              f"{', '.join(params)}):\n"
              "    s = window_scale(v, e, edge_offsets, edge_window, edge_turn)\n"
              "    if s == 0:\n"
              "        return s\n"
              f"    return {value} * s\n")
    namespace = dict(inner=inner, window_scale=window_scale)
    exec(source, namespace)
    return cuda.jit(device=True)(namespace["partial"])


def partial_edges(g, contribution, args: dict, fraction: float):
    """(graph, edge function, args, edges read per iteration / m) of a run processing
    ``fraction`` of every vertex's in-edges: ``args`` with what the edge function reads."""
    view = g.cached(("propagate", "positions"), lambda: Positions(g))
    window = device.xp.ceil(fraction * g.in_degree.astype(np.float64)).astype(np.int64)
    args = dict(args, edge_offsets=g.in_offsets, edge_window=window, edge_turn=0)
    if "weights" in args:
        args["weights"] = args["weights"][g.in_edge_ids]
    return view, windowed(contribution), args, int(window.sum()) / max(g.m, 1)
