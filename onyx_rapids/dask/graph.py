"""A graph partitioned across Dask workers: 1-D by destination vertex ranges (pull).

Vertices are renumbered globally (0..n-1, ascending in the original ids, as a single-GPU
:class:`~onyx_rapids.Graph`) and cut into ``P`` ranges ``[cuts[p], cuts[p+1])`` holding about as
many in-edges each.  Partition ``p`` keeps the in-edges of its range as an ordinary
:class:`~onyx_rapids.Graph` on local ids: its own vertices first (``v - lo``), then its *ghosts*,
the sources outside the range (sorted by global id, so the ghosts that partition ``q`` owns are
one block of rows).  Every iteration the owners send the rows of those ghosts
(:mod:`onyx_rapids.dask.run`).  Each partition also knows which of its own rows every other
partition needs (``send``) and the global out-degree and out-weights of its local vertices
(PageRank's shares), summed across the partitions at build time.

Everything below the public class runs on the workers; the client holds only the sorted vertex
ids (n of them) and futures.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import device, io
from ..construction import device as device_build
from ..graph import Graph as _Graph

#: Buckets of the vertex range per partition in the in-edge histogram that places the cuts.
BUCKETS_PER_PARTITION = 256


class Partition:
    """One worker's share of a :class:`Graph` (see the module doc)."""

    def __init__(self, index, cuts, ghosts, graph, original):
        self.index = index
        self.cuts = cuts
        self.lo, self.hi = int(cuts[index]), int(cuts[index + 1])
        self.n_own = self.hi - self.lo
        self.ghosts = ghosts  # global ids, sorted, host
        self.graph = graph  # local ids: own rows first, then ghosts
        self.own_ids = original[self.lo:self.hi]  # original ids (host)
        self.ghost_ids = original[ghosts]
        # the ghost rows partition q owns: local rows n_own + [start, end)
        bounds = np.searchsorted(ghosts, cuts)
        self.recv = {q: (self.n_own + int(bounds[q]), self.n_own + int(bounds[q + 1]))
                     for q in range(len(cuts) - 1) if bounds[q + 1] > bounds[q]}
        # what the local in-edges add to their sources' out-degree and out-weights
        self.local_out = _local_out_sums(graph)
        self.send = {}  # q -> own local rows (device) that q keeps as ghosts, in its order
        self.out_degree = None  # global out-degree of the local vertices (n_local, float64)
        self.out_weights = None  # global out-weight sums (n_local x w, float64) or None

    @property
    def n_local(self) -> int:
        return self.graph.n

    def local_ids(self, global_ids):
        """Local rows of global vertex ids (own or ghost; host arrays)."""
        ids = np.asarray(global_ids, dtype=np.int64)
        own = (ids >= self.lo) & (ids < self.hi)
        return np.where(own, ids - self.lo, self.n_own + np.searchsorted(self.ghosts, ids))


class Graph:
    """A graph partitioned across the workers of a Dask ``Client`` (see the module doc).

    Build one with :meth:`from_edgelist` (a Dask, dask-cuDF, pandas or cuDF edge frame) or
    :meth:`from_parquet`; run :mod:`onyx_rapids.dask`'s algorithms on it.  The conventions are
    :meth:`onyx_rapids.Graph.from_edgelist`'s: simple unless ``multigraph=True`` (parallel edges
    merged keeping the first row's weights, an undirected u-v listed both ways stored once),
    undirected by default (cuGraph/NetworkX convention: each edge stored both ways; pass
    ``directed=True`` for a directed graph), ids are renumbered in ascending order.

    Attributes: ``n``, ``m`` (edges stored, both directions of an undirected edge counted as in
    the single-GPU graph), ``vertices`` (sorted original ids, host), ``cuts`` (the partition
    ranges over internal ids), ``npartitions``, ``partitions`` (futures of the partitions),
    ``client``.

    Example::

        >>> from onyx_rapids import dask as odask                       # doctest: +SKIP
        >>> client = odask.local_cluster()                              # doctest: +SKIP
        >>> g = odask.Graph.from_edgelist(edges, "src", "dst", client=client)  # doctest: +SKIP
        >>> g.npartitions, g.n, g.m                                     # doctest: +SKIP
        (2, 34, 156)
    """

    def __init__(self, client, vertices, cuts, partitions, *, m, directed, multigraph,
                 weight_names):
        self.client = client
        self.vertices = vertices
        self.n = int(vertices.shape[0])
        self.m = int(m)
        self.cuts = cuts
        self.partitions = partitions
        self.npartitions = len(partitions)
        self.directed = directed
        self.multigraph = multigraph
        self.weight_names = list(weight_names)
        self.homes = [None] * self.npartitions  # the worker each partition was built on
        self._undirected = None

    @classmethod
    def from_edgelist(cls, df, source="src", destination="dst", weight=None, directed=False,
                      multigraph=False, *, client=None, npartitions=None, vertices=None):
        """A partitioned graph from an edge frame.

        Parameters
        ----------
        df : dask DataFrame (dask-cuDF too), pandas or cuDF DataFrame
            One row per edge; its partitions are read where they lie (a pandas or cuDF frame
            is split into one partition per worker first).
        source, destination, weight, multigraph, vertices
            As :meth:`onyx_rapids.Graph.from_edgelist`.
        directed : bool
            Undirected by default (cuGraph/NetworkX convention); pass ``directed=True`` for a
            directed graph (the default before 0.2), as :meth:`onyx_rapids.Graph.from_edgelist`.
        client : distributed.Client, optional
            The cluster to run on (default: the current client, :func:`distributed.get_client`).
        npartitions : int, optional
            Graph partitions (default: one per worker).  More partitions than workers is
            allowed (several on a worker).
        """
        client = _client(client)
        npartitions = _npartitions(client, npartitions)
        directed = _flag(directed, "directed")
        multigraph = _flag(multigraph, "multigraph")
        names = [] if weight is None else ([weight] if isinstance(weight, str) else list(weight))
        frames = _frame_futures(client, df, [source, destination] + names)
        extra = None if vertices is None else device.to_host(io.read_vertex_ids(vertices,
                                                                                "vertices"))
        return _build(client, frames, source, destination, names, directed=directed,
                      multigraph=multigraph, extra=extra, npartitions=npartitions)

    @classmethod
    def from_parquet(cls, path, source="src", destination="dst", weight=None, directed=False,
                     multigraph=False, *, client=None, npartitions=None, vertices=None):
        """A partitioned graph from a Parquet file or a directory of Parquet files, read by
        the workers (``dask.dataframe.read_parquet``: each row group where a worker reads
        it); the arguments are :meth:`from_edgelist`'s (undirected by default; pass
        ``directed=True`` for a directed graph)."""
        import dask.dataframe as dd

        path, columns = io.parquet_edge_columns(path, source, destination, weight)
        return cls.from_edgelist(dd.read_parquet(path, columns=columns), source, destination,
                                 weight, directed, multigraph, client=_client(client),
                                 npartitions=npartitions, vertices=vertices)

    def simple_undirected(self) -> "Graph":
        """The simple undirected view (directions dropped, parallel edges once, self-loops
        dropped, weights dropped), partitioned on the same cuts: feature propagation's and
        the components' graph, built once and kept."""
        if self._undirected is None:
            frames = [self.client.submit(_local_edges, part) for part in self.partitions]
            self._undirected = _build(self.client, frames, "src", "dst", [], directed=False,
                                      multigraph=False, extra=np.arange(self.n),
                                      npartitions=self.npartitions, cuts=self.cuts,
                                      drop_loops=True, original=self.vertices)
        return self._undirected

    def to_internal(self, ids, name: str):
        """Global internal ids of original vertex ids (host), naming ``name`` in the error
        when one is not a vertex."""
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise ValueError(f"{name}: vertex ids must be integers, got dtype {ids.dtype}")
        ids = ids.astype(np.int64).ravel()
        pos = np.searchsorted(self.vertices, ids)
        bad = (pos >= self.n) | (self.vertices[np.minimum(pos, self.n - 1)] != ids)
        if bad.any():
            raise ValueError(f"{name}: {ids[bad][:5].tolist()} not a vertex of this graph")
        return pos

    def summary(self) -> dict:
        sizes = self.client.gather([self.client.submit(_sizes, p) for p in self.partitions])
        return dict(n=self.n, m=self.m, directed=self.directed, multigraph=self.multigraph,
                    weights=self.weight_names, npartitions=self.npartitions,
                    partitions=[dict(zip(("vertices", "ghosts", "in_edges"), s))
                                for s in sizes])

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"onyx_rapids.dask.Graph(n={self.n}, m={self.m}, {kind}, "
                f"{self.npartitions} partitions)")


# ---------------------------------------------------------------------------- build (client)

def _client(client):
    if client is not None:
        return client
    from distributed import get_client

    try:
        return get_client()
    except ValueError as e:
        raise ValueError("client: no Dask client given and none is running; pass client=, or "
                         "start one with onyx_rapids.dask.local_cluster()") from e


def _npartitions(client, npartitions):
    if npartitions is None:
        return max(1, len(client.nthreads()))
    if isinstance(npartitions, bool) or not isinstance(npartitions, (int, np.integer)) \
            or npartitions < 1:
        raise ValueError(f"npartitions must be a positive integer, got {npartitions!r}")
    return int(npartitions)


def _flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _frame_futures(client, df, columns):
    """Futures of the edge frame's partitions (the named columns only)."""
    import dask.dataframe as dd

    if not isinstance(df, dd.DataFrame):
        if not io.is_frame(df):
            raise ValueError(f"df: a Dask, dask-cuDF, pandas or cuDF DataFrame, got "
                             f"{type(df).__name__}")
        workers = max(1, len(client.nthreads()))
        df = dd.from_pandas(df, npartitions=min(workers, max(1, len(df))), sort=False)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"df: no column {missing[0]!r} (columns: {list(df.columns)})")
    for arg, name in zip(("source", "destination"), columns):
        if np.dtype(df[name].dtype).kind not in "iu":
            raise TypeError(f"{arg}={name!r}: vertex ids must be integers, but the column has "
                            f"dtype {df[name].dtype}; a partitioned graph takes integer ids "
                            "only: map labels such as strings to integers first (e.g. "
                            "pandas.factorize over both columns), or build a single-GPU "
                            "onyx_rapids.Graph, which renumbers labels")
    return client.compute(df[columns].to_delayed())


def _build(client, frames, source, destination, weights, *, directed, multigraph, extra,
           npartitions, cuts=None, drop_loops=False, original=None):
    """The partitions of the edges in ``frames`` (futures); ``original``: the vertices'
    original ids when the frames hold internal ones (a view of a built graph)."""
    submit = client.submit
    rows = client.gather([submit(_rows, f) for f in frames])
    if sum(rows) == 0:
        raise ValueError("df: the edge list is empty (0 rows); a graph needs at least one edge")
    row0 = np.concatenate([[0], np.cumsum(rows)])
    args = (source, destination, weights)
    ids = client.gather([submit(_ids, f, *args, int(row0[i]))
                         for i, f in enumerate(frames) if rows[i]])
    vertices = np.unique(np.concatenate(ids + ([] if extra is None else [extra])))
    n = vertices.shape[0]
    at = client.scatter(vertices, broadcast=True, hash=False)
    names = at if original is None else client.scatter(original, broadcast=True, hash=False)
    if cuts is None:
        buckets = min(n, BUCKETS_PER_PARTITION * npartitions)
        hist = sum(client.gather([submit(_head_histogram, f, at, source, destination, buckets,
                                         directed) for f in frames]))
        cuts = _cuts(hist, n, npartitions)
    split = [submit(_split, f, at, cuts, *args, int(row0[i]), directed, drop_loops)
             for i, f in enumerate(frames)]
    parts, home = [], _homes(client, npartitions)
    for p in range(npartitions):
        pieces = [submit(operator.getitem, s, p) for s in split]
        parts.append(submit(_partition, p, cuts, names, weights, multigraph, *pieces,
                            workers=home[p], allow_other_workers=False))
    parts = _exchange_ghosts(client, parts, home)
    m = sum(client.gather([submit(_edges, part) for part in parts]))
    graph = Graph(client, vertices if original is None else original, cuts, parts, m=m,
                  directed=directed, multigraph=multigraph, weight_names=weights)
    graph.homes = [None if h is None else h[0] for h in home]
    return graph


def _cuts(hist, n, P):
    """Partition starts: cut the vertex buckets where the in-edge count passes p/P of all."""
    buckets = hist.shape[0]
    starts = (np.arange(buckets + 1, dtype=np.int64) * n) // buckets
    total = np.concatenate([[0], np.cumsum(hist)])
    at = np.searchsorted(total, np.arange(1, P) * total[-1] / P)
    inner = np.maximum.accumulate(starts[np.minimum(at, buckets)])
    return np.concatenate([[0], inner, [n]]).astype(np.int64)


def _homes(client, P):
    """Partition p's worker (a one-address list): the workers in turn, so P partitions on W
    workers put ceil(P / W) on none and every worker to use.  The build's tasks are held to
    them (Dask would otherwise run a partition where its inputs lie, all on one worker)."""
    workers = sorted(client.nthreads())
    return [[workers[p % len(workers)]] if workers else None for p in range(P)]


def _exchange_ghosts(client, parts, home):
    """Tell every owner which of its rows the others keep as ghosts, and sum the global
    out-degree / out-weights of every vertex from the partitions' in-edges (then send the
    owners' sums back for the ghosts)."""
    P = len(parts)

    def submit(fn, *args, at):
        return client.submit(fn, *args, workers=home[at], allow_other_workers=False)

    asks = [[submit(_ask, parts[p], q, at=p) for q in range(P)] for p in range(P)]
    parts = [submit(_with_sends, parts[q], {p: asks[p][q] for p in range(P) if p != q}, at=q)
             for q in range(P)]
    sums = [{p: submit(_own_out_sums, parts[q], p, at=q) for p in range(P) if p != q}
            for q in range(P)]
    return [submit(_with_ghost_sums, parts[p], {q: sums[q][p] for q in range(P) if q != p},
                   at=p) for p in range(P)]


# ---------------------------------------------------------------------------- build (workers)

def _rows(frame) -> int:
    return int(len(frame))


def _ids(frame, source, destination, weights, row0):
    """The distinct ids of a frame (host), after the single-GPU graph's checks."""
    src, dst, _, _ = io.read_edgelist(frame, source, destination, weights or None,
                                      row_offset=row0)
    return device.to_host(device.xp.unique(device.xp.concatenate([src, dst])))


def _positions(vertices, ids):
    return device.xp.searchsorted(device.asarray(vertices), ids)


def _head_histogram(frame, vertices, source, destination, buckets, directed):
    """In-edges per bucket of the vertex range (both ends of an undirected edge)."""
    if len(frame) == 0:
        return np.zeros(buckets, dtype=np.int64)
    src, dst, _, _ = io.read_edgelist(frame, source, destination, None)
    n = vertices.shape[0]
    heads = [dst] if directed else [dst, src]
    counts = sum(device.xp.bincount(_positions(vertices, h) * buckets // n, minlength=buckets)
                 for h in heads)
    return device.to_host(counts).astype(np.int64)


def _split(frame, vertices, cuts, source, destination, weights, row0, directed, drop_loops):
    """The frame's edges as P pieces, piece p holding the in-edges of partition p's range:
    (row, source, destination global ids, weights); an undirected edge goes to both ends'
    owners (a self-loop once)."""
    xp = device.xp
    P = len(cuts) - 1
    if len(frame) == 0:
        return [None] * P
    src, dst, w, _ = io.read_edgelist(frame, source, destination, weights or None,
                                      row_offset=row0)
    src, dst = _positions(vertices, src), _positions(vertices, dst)
    row = xp.arange(row0, row0 + src.shape[0], dtype=np.int64)
    if drop_loops:
        keep = src != dst
        src, dst, row = src[keep], dst[keep], row[keep]
        w = None if w is None else w[keep]
    if not directed:
        loop = src == dst
        back = ~loop
        src, dst = xp.concatenate([src, dst[back]]), xp.concatenate([dst, src[back]])
        row = xp.concatenate([row, row[back]])
        if w is not None:
            w = xp.concatenate([w, w[back]])
    owner = xp.searchsorted(device.asarray(cuts), dst, side="right") - 1
    order = xp.argsort(owner, kind="stable")
    bounds = device.to_host(xp.searchsorted(owner[order], xp.arange(P + 1)))
    pieces = []
    for p in range(P):
        sel = order[bounds[p]:bounds[p + 1]]
        pieces.append((row[sel], src[sel], dst[sel], None if w is None else w[sel]))
    return pieces


def _partition(index, cuts, original, weights, multigraph, *pieces):
    """Partition ``index`` from its pieces: edges in row order (the first row of parallel
    edges keeps its weights), local ids, the local graph."""
    xp = device.xp
    pieces = [p for p in pieces if p is not None and p[0].shape[0]]
    lo, hi = int(cuts[index]), int(cuts[index + 1])
    if pieces:
        row = xp.concatenate([p[0] for p in pieces])
        src = xp.concatenate([p[1] for p in pieces])
        dst = xp.concatenate([p[2] for p in pieces])
        w = None if not weights else xp.concatenate([p[3] for p in pieces])
        order = xp.argsort(row, kind="stable")
        src, dst = src[order], dst[order]
        w = None if w is None else w[order]
    else:
        src = dst = xp.zeros(0, dtype=np.int64)
        w = None if not weights else xp.zeros((0, len(weights)), dtype=np.float32)
    outside = (src < lo) | (src >= hi)
    ghosts = device.to_host(xp.unique(src[outside]))
    n_own = hi - lo
    local_src = xp.where(outside, n_own + xp.searchsorted(device.asarray(ghosts), src),
                         src - lo)
    n_local = n_own + ghosts.shape[0]
    graph = _Graph.from_buffers(device_build.build(
        xp.arange(n_local, dtype=np.int64), local_src, dst - lo, w, list(weights),
        directed=True, multigraph=multigraph))
    return Partition(index, cuts, ghosts, graph, original)


def _ask(part, q):
    """The ghosts ``part`` keeps of partition q's range (global ids) and what their local
    out-edges add to their out-degree and out-weights."""
    if q == part.index or q not in part.recv:
        return None
    a, b = part.recv[q]
    degree, weights = part.local_out
    return (part.ghosts[a - part.n_own:b - part.n_own], degree[a:b],
            None if weights is None else weights[a:b])


def _local_out_sums(g):
    from ..properties import out_weight_sums

    degree = out_weight_sums(g)
    if g.edge_weights is None:
        return degree, None
    xp = device.xp
    return degree, xp.stack([out_weight_sums(g, g.edge_weights[:, j])
                             for j in range(g.edge_weights.shape[1])], axis=1)


def _with_sends(part, asks):
    """The partition with its send lists and its own vertices' global out-sums."""
    new = _copy(part)
    degree, weights = part.local_out
    new.out_degree = degree.copy()
    new.out_weights = None if weights is None else weights.copy()
    for p, ask in asks.items():
        if ask is None:
            continue
        ids, d, w = ask
        rows = device.asarray(ids - part.lo)
        new.send[p] = rows
        new.out_degree[rows] += d  # rows are distinct within one ask
        if w is not None:
            new.out_weights[rows] += w
    return new


def _own_out_sums(part, p):
    rows = part.send.get(p)
    if rows is None:
        return None
    return part.out_degree[rows], None if part.out_weights is None else part.out_weights[rows]


def _with_ghost_sums(part, sums):
    new = _copy(part)
    new.out_degree = part.out_degree.copy()
    new.out_weights = None if part.out_weights is None else part.out_weights.copy()
    for q, got in sums.items():
        if got is None or q not in part.recv:
            continue
        a, b = part.recv[q]
        new.out_degree[a:b] = got[0]
        if got[1] is not None:
            new.out_weights[a:b] = got[1]
    return new


def _copy(part):
    new = object.__new__(Partition)
    new.__dict__.update(part.__dict__)
    new.send = dict(part.send)
    return new


def _edges(part) -> int:
    return part.graph.m


def _sizes(part):
    return part.n_own, int(part.ghosts.shape[0]), part.graph.m


def _local_edges(part):
    """A partition's edges as a pandas frame of global ids (the undirected view's input)."""
    import pandas as pd

    g = part.graph
    src_local = device.to_host(g.edge_sources)
    dst_local = device.to_host(g.out_indices)
    to_global = np.concatenate([np.arange(part.lo, part.hi), part.ghosts]).astype(np.int64)
    return pd.DataFrame({"src": to_global[src_local], "dst": to_global[dst_local]})
