"""Partial edge processing (Graprox; an ``Approximation``'s ``edge_fraction`` f < 1): each bulk
pull computes a rotating window of a vertex's in-edges afresh and reuses, for the others, what
they brought when last computed.

A vertex v of in-degree d computes c = ceil(f d) of its in-edges (at least one) in every
iteration after the first (which computes all of them): in iteration t those at positions
``(t c + v OFFSET) mod d, ..`` of its in-edge list, wrapping round, so consecutive windows tile
the list and every in-edge is recomputed within ceil(1 / f) iterations.  Each in-edge keeps
its last value (``edge_stale``, m x k, by CSC position); an unread in-edge brings that value,
a sequential read in place of its source's row (and weight).  The sums are the exact
iteration's with stale terms, so the run keeps the exact fixed point (an asynchronous
iteration) and converges to it, more slowly; it does not scale a partial sum up (an
unbiased estimate, d / c times the window's sum, compounded from iteration to iteration into
ranks that grew without bound on the 2048 grid and road graphs, where c / d is 2 / 4).  The
per-vertex offset (``v`` times :data:`OFFSET`) keeps neighbours from reading the same
relative positions in the same iteration.

The edge function finds an in-edge's position from its edge id: the run's graph is
:class:`Positions`, ``g`` with the CSC positions as its in-edge ids (an edge property the
contribution reads, ``args["weights"]``, is put in CSC order to match).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
from numba import cuda, int64

from ... import device, operators as ops
from ...binding import py_func


#: A vertex's window starts ``v * OFFSET`` positions on (mod its in-degree): an odd constant,
#: so neighbours on a lattice (ids 1 or a row apart) start at different positions.
OFFSET = 40503


@cuda.jit(device=True)
def in_window(v, e, offsets, window, turn):
    """Whether in-edge ``e`` (a CSC position) of ``v`` is computed in iteration ``turn``: every
    in-edge in the first, then the window of c = ``window[v]`` of its d in-edges from position
    ``(turn c + v OFFSET) mod d``."""
    if turn == 0:
        return True
    first = offsets[v]
    d = offsets[v + 1] - first
    c = window[v]
    return (e - first + d - (turn * c + int64(v) * OFFSET) % d) % d < c


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
    ``fn(f, u, v, e, ..)``) over the window (:func:`in_window`), as an ``ops.Edge``
    function: it reads ``edge_offsets``, ``edge_window``, ``edge_turn`` and ``edge_stale``
    (each in-edge's last value, written where it computes one) besides what
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
    source = (f"def partial(f, u, v, e, edge_offsets, edge_window, edge_turn, edge_stale, "
              f"{', '.join(params)}):\n"
              "    if in_window(v, e, edge_offsets, edge_window, edge_turn):\n"
              f"        value = {value}\n"
              "        edge_stale[e, f] = value\n"
              "        return value\n"
              "    return edge_stale[e, f]\n")
    namespace = dict(inner=inner, in_window=in_window)
    exec(source, namespace)
    return cuda.jit(device=True)(namespace["partial"])


def partial_edges(g, contribution, args: dict, fraction: float, x):
    """(graph, edge function, args, edges computed per iteration / m after the first) of a
    run processing ``fraction`` of every vertex's in-edges from rows ``x`` (n x k): ``args``
    with what the edge function reads."""
    view = g.cached(("propagate", "positions"), lambda: Positions(g))
    window = device.xp.ceil(fraction * g.in_degree.astype(np.float64)).astype(np.int64)
    args = dict(args, edge_offsets=g.in_offsets, edge_window=window, edge_turn=0,
                edge_stale=device.zeros((g.m, x.shape[1]), x.dtype))
    if "weights" in args:
        args["weights"] = args["weights"][g.in_edge_ids]
    return view, windowed(contribution), args, int(window.sum()) / max(g.m, 1)
