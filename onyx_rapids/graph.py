"""Graph: a directed multigraph held as CSR (out-edges) and CSC (in-edges) on the device.

A :class:`Graph` is built once, by one of its ``from_*`` constructors, from backend arrays alone
(:data:`onyx_rapids.device.xp`: CuPy on a GPU, NumPy under the simulator): renumbering, sorting
and the offset scans are whole-array operations, never Python loops over edges. Everything that
knows DataFrames, Parquet, SciPy or cuGraph lives in :mod:`onyx_rapids.io`; the constructors
here call into it and then hand plain id arrays to :meth:`Graph._from_ids`.

Layout (``index_dtype`` is int32 while n and m fit in int32, int64 beyond):

* ``vertices`` (n, int64): original ids in internal order, which is ascending id order;
* ``out_offsets`` (n+1) / ``out_indices`` (m): CSR, edges sorted by (source, destination),
  stable among parallel edges; self-loops and parallel edges are kept;
* ``in_offsets`` (n+1) / ``in_indices`` (m, the source) / ``in_edge_ids`` (m): CSC, entries
  sorted by (destination, source, CSR position); ``in_edge_ids`` is the CSR position of each CSC
  entry, so edge properties stored in CSR order can be read in pull mode;
* ``out_degree`` / ``in_degree`` (n, int32);
* ``edge_weights`` (m, w) float32 in CSR order, or None; ``weight_names`` (w names);
* ``reverse_edge`` (m): the CSR position of each edge's reverse. An undirected graph stores every
  input edge u-v as u->v and v->u (a self-loop once) and pairs the two copies; a directed graph
  computes the pairing on first use, and fails if some edge has no reverse.
"""

from __future__ import annotations

import numpy as np

from . import device
from .device import xp

__all__ = ["Graph"]

# Largest n and m that int32 index arrays hold; a module global so tests can lower it.
_INDEX32_LIMIT = int(np.iinfo(np.int32).max)
_SHOW = 10  # how many offending items an error message names


def _index_dtype(n: int, m: int) -> np.dtype:
    return np.dtype(np.int32) if max(n, m) <= _INDEX32_LIMIT else np.dtype(np.int64)


def _listing(items, total: int) -> str:
    shown = ", ".join(str(x) for x in items[:_SHOW])
    return shown + (f", ... ({total} in all)" if total > _SHOW else "")


def _offsets(degree, dtype) -> object:
    offsets = xp.zeros(degree.shape[0] + 1, dtype=dtype)
    if degree.shape[0]:
        offsets[1:] = xp.cumsum(degree)
    return offsets


def _bincount(values, n: int):
    if values.shape[0] == 0:
        return xp.zeros(n, dtype=np.int64)
    return xp.bincount(values, minlength=n)


class Graph:
    """A directed multigraph in CSR and CSC form on the device; see the module docstring.

    Build one with :meth:`from_edgelist`, :meth:`from_parquet`, :meth:`from_csr` or
    :meth:`from_cugraph`; the initializer only gathers finished buffers.
    """

    def __init__(
        self,
        *,
        vertices,
        out_offsets,
        out_indices,
        in_offsets,
        in_indices,
        in_edge_ids,
        out_degree,
        in_degree,
        edge_weights=None,
        weight_names=(),
        directed: bool = True,
        reverse_edge=None,
    ):
        self.vertices = vertices
        self.n = int(vertices.shape[0])
        self.m = int(out_indices.shape[0])
        self.directed = bool(directed)
        self.index_dtype = np.dtype(out_indices.dtype)
        self.out_offsets = out_offsets
        self.out_indices = out_indices
        self.in_offsets = in_offsets
        self.in_indices = in_indices
        self.in_edge_ids = in_edge_ids
        self.out_degree = out_degree
        self.in_degree = in_degree
        self.edge_weights = edge_weights
        self.weight_names = list(weight_names)
        self._reverse_edge = reverse_edge
        self._edge_sources = None

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_edgelist(
        cls,
        df,
        source="src",
        destination="dst",
        weight=None,
        directed: bool = True,
        vertices=None,
    ) -> "Graph":
        """A graph from an edge frame: a pandas or cuDF DataFrame, or a pyarrow Table.

        ``source`` and ``destination`` name integer vertex-id columns (any integer dtype,
        negative and int64 ids allowed); ids are renumbered to 0..n-1 in ascending order.
        ``weight`` is None, a column name, or a list of names (one float32 weight column each,
        in ``edge_weights[:, j]``). ``directed=False`` stores each edge u-v in both directions.
        ``vertices`` adds ids that may have no edges (isolated vertices).

        >>> import pandas as pd
        >>> df = pd.DataFrame({"src": [10, 10, -3], "dst": [-3, 7, 7], "w": [0.5, 1.0, 2.0]})
        >>> g = Graph.from_edgelist(df, weight="w", vertices=[99])
        >>> g.n, g.m, device.to_host(g.vertices).tolist()
        (4, 3, [-3, 7, 10, 99])
        >>> device.to_host(g.out_offsets).tolist(), device.to_host(g.out_indices).tolist()
        ([0, 1, 1, 3, 3], [1, 0, 1])
        """
        from . import io

        directed = _check_directed(directed)
        src, dst, weights, names = io.read_edgelist(df, source, destination, weight)
        extra = None if vertices is None else io.read_vertex_ids(vertices, "vertices")
        return cls._from_ids(src, dst, weights, names, directed=directed, extra_vertices=extra)

    @classmethod
    def from_parquet(
        cls,
        path,
        source="src",
        destination="dst",
        weight=None,
        directed: bool = True,
        vertices=None,
    ) -> "Graph":
        """A graph from a Parquet file (or a directory of them), reading only the named columns.

        Uses ``cudf.read_parquet`` on a GPU with cuDF installed, ``pyarrow.parquet`` otherwise;
        the arguments mean what they mean in :meth:`from_edgelist`.

        >>> g = Graph.from_parquet("edges.parquet", source="u", destination="v",
        ...                        weight="rating", directed=False)  # doctest: +SKIP
        """
        from . import io

        directed = _check_directed(directed)
        table = io.read_parquet_edges(path, source, destination, weight)
        src, dst, weights, names = io.read_edgelist(table, source, destination, weight)
        extra = None if vertices is None else io.read_vertex_ids(vertices, "vertices")
        return cls._from_ids(src, dst, weights, names, directed=directed, extra_vertices=extra)

    @classmethod
    def from_csr(cls, offsets, indices=None, weights=None, directed: bool = True) -> "Graph":
        """A graph on vertices 0..n-1 from CSR arrays (NumPy or CuPy) or a SciPy sparse matrix.

        ``offsets`` (n+1) and ``indices`` (m) are validated (offsets[0] == 0, non-decreasing,
        offsets[-1] == m, 0 <= indices < n) and edges are re-sorted by destination within each
        row. ``weights`` is an (m,) or (m, w) array or a dict {name: (m,) array}. A SciPy (or
        CuPy) sparse matrix may be passed as ``offsets`` alone: its stored values become the
        weight column ``"weight"`` unless ``weights=False`` (or other weights are given).
        ``directed=False`` expects the symmetric structure of an undirected graph (each u->v
        has a v->u of the same weight) and stores it as given.

        >>> import numpy as np
        >>> g = Graph.from_csr(np.array([0, 2, 3, 3]), np.array([2, 1, 0]))
        >>> g.n, g.m, device.to_host(g.in_offsets).tolist()
        (3, 3, [0, 1, 2, 3])
        >>> import scipy.sparse as sp
        >>> a = sp.csr_matrix(np.array([[0, 2.0], [2.0, 0]]))
        >>> Graph.from_csr(a, directed=False).weight_names
        ['weight']
        """
        from . import io

        directed = _check_directed(directed)
        offsets, indices, weights, names = io.read_csr(offsets, indices, weights)
        n = int(offsets.shape[0]) - 1
        m = int(indices.shape[0])
        src = xp.searchsorted(offsets, xp.arange(m, dtype=np.int64), side="right") - 1
        vertices = xp.arange(n, dtype=np.int64)
        return cls._assemble(
            vertices, src.astype(np.int64), indices.astype(np.int64), weights, names,
            directed=directed, symmetric_input=not directed,
        )

    @classmethod
    def from_cugraph(cls, G) -> "Graph":
        """A graph from a single-GPU ``cugraph.Graph``, on the device with no host round trip.

        Reads the edge list ``G`` keeps in original ids (``G.view_edge_list()``, a device
        frame) and its vertex list (isolated vertices included); undirected edges are stored
        both ways as in :meth:`from_edgelist`. cuGraph drops parallel edges unless ``G`` is a
        ``cugraph.MultiGraph``.

        >>> import cudf, cugraph  # doctest: +SKIP
        >>> G = cugraph.Graph(directed=True)  # doctest: +SKIP
        >>> G.from_cudf_edgelist(cudf.DataFrame({"src": [0, 5], "dst": [5, 9]}),
        ...                      source="src", destination="dst")  # doctest: +SKIP
        >>> Graph.from_cugraph(G).n  # doctest: +SKIP
        3
        """
        from . import io

        src, dst, weights, names, directed, extra = io.read_cugraph(G)
        return cls._from_ids(src, dst, weights, names, directed=directed, extra_vertices=extra)

    # ------------------------------------------------------------------ building

    @classmethod
    def _from_ids(cls, src_ids, dst_ids, weights, weight_names, *, directed,
                  extra_vertices=None, symmetric_input=False) -> "Graph":
        """Renumber original int64 ids, symmetrize an undirected edge list, then assemble."""
        parts = [src_ids, dst_ids]
        if extra_vertices is not None and extra_vertices.size:
            parts.append(extra_vertices.reshape(-1))
        vertices = xp.unique(xp.concatenate(parts))
        src = xp.searchsorted(vertices, src_ids).astype(np.int64)
        dst = xp.searchsorted(vertices, dst_ids).astype(np.int64)
        twins = None
        if not directed and not symmetric_input:
            # Each non-loop edge gets a reversed copy; twins[e] is the pre-sort position of the
            # copy paired with e, so reverse_edge pairs an edge with its own copy.
            m0 = int(src.shape[0])
            nonloop = xp.nonzero(src != dst)[0]
            copies = xp.arange(m0, m0 + nonloop.shape[0], dtype=np.int64)
            twins = xp.concatenate([xp.arange(m0, dtype=np.int64), nonloop.astype(np.int64)])
            twins[nonloop] = copies
            src, dst = xp.concatenate([src, dst[nonloop]]), xp.concatenate([dst, src[nonloop]])
            if weights is not None:
                weights = xp.concatenate([weights, weights[nonloop]])
        return cls._assemble(vertices, src, dst, weights, weight_names, directed=directed,
                             twins=twins, symmetric_input=symmetric_input and not directed)

    @classmethod
    def _assemble(cls, vertices, src, dst, weights, weight_names, *, directed, twins=None,
                  symmetric_input=False) -> "Graph":
        """Sort internal (src, dst) pairs into CSR and CSC; ``twins`` pairs reverse copies."""
        n = int(vertices.shape[0])
        m = int(src.shape[0])
        itype = _index_dtype(n, m)
        order = xp.argsort(src * n + dst, kind="stable")
        src_sorted = src[order]
        dst_sorted = dst[order]
        out_degree = _bincount(src_sorted, n)
        in_degree = _bincount(dst_sorted, n)
        # CSC: sort CSR positions by (destination, source); stability keeps CSR order for ties.
        csc = xp.argsort(dst_sorted * n + src_sorted, kind="stable")
        if weights is not None:
            weights = xp.ascontiguousarray(weights[order].astype(np.float32, copy=False))
        reverse = None
        if twins is not None:
            position = xp.empty(m, dtype=itype)
            position[order] = xp.arange(m, dtype=itype)
            reverse = position[twins[order]]
        g = cls(
            vertices=vertices.astype(np.int64, copy=False),
            out_offsets=_offsets(out_degree, itype),
            out_indices=dst_sorted.astype(itype),
            in_offsets=_offsets(in_degree, itype),
            in_indices=src_sorted[csc].astype(itype),
            in_edge_ids=csc.astype(itype),
            out_degree=out_degree.astype(np.int32),
            in_degree=in_degree.astype(np.int32),
            edge_weights=weights,
            weight_names=weight_names,
            directed=directed,
            reverse_edge=reverse,
        )
        g._edge_sources = src_sorted.astype(itype)
        if symmetric_input:
            reverse, missing = g._pair_reverse_edges()
            if missing is not None:
                raise ValueError(
                    "directed=False needs a symmetric edge set (every u->v with a v->u), but "
                    f"{g._describe_edges(missing)} have no reverse edge; pass directed=True, or "
                    "add the reverse edges"
                )
            if weights is not None:
                differ = xp.nonzero(xp.any(weights != weights[reverse], axis=1))[0]
                if differ.shape[0]:
                    raise ValueError(
                        "directed=False needs symmetric weights, but the weights of "
                        f"{g._describe_edges(differ)} differ from their reverse edge's; pass "
                        "directed=True, or make the weights symmetric"
                    )
            g._reverse_edge = reverse
        return g

    # ------------------------------------------------------------------ derived arrays

    def simple_undirected(self) -> "Graph":
        """The simple undirected view: directions dropped, parallel edges merged, self-loops
        removed, every vertex kept (the graph of APPNP's A and of core numbers). Cached.

        >>> Graph.from_edgelist(pd.DataFrame({"src": [1, 2, 2], "dst": [2, 1, 2]})
        ...                     ).simple_undirected().m   # doctest: +SKIP
        2
        """
        if getattr(self, "_simple", None) is None:
            src = self.edge_sources.astype(np.int64)
            dst = self.out_indices.astype(np.int64)
            keep = src != dst
            low = xp.minimum(src[keep], dst[keep])
            high = xp.maximum(src[keep], dst[keep])
            pairs = xp.unique(low * self.n + high)
            low, high = pairs // self.n, pairs % self.n
            self._simple = Graph._from_ids(self.vertices[low], self.vertices[high], None, [],
                                           directed=False, extra_vertices=self.vertices)
        return self._simple

    @property
    def edge_sources(self):
        """The internal source vertex of each edge, in CSR order (m,)."""
        if self._edge_sources is None:
            positions = xp.arange(self.m, dtype=np.int64)
            rows = xp.searchsorted(self.out_offsets, positions, side="right") - 1
            self._edge_sources = rows.astype(self.index_dtype)
        return self._edge_sources

    @property
    def reverse_edge(self):
        """CSR position of each edge's reverse (m,); see :meth:`reverse_edge_index`."""
        return self.reverse_edge_index()

    def reverse_edge_index(self):
        """CSR position of each edge's reverse, computed on first use and cached.

        Parallel edges pair up one to one in CSR order (the k-th u->v with the k-th v->u); a
        self-loop is its own reverse. Raises ValueError naming edges that have no reverse.
        """
        if self._reverse_edge is None:
            reverse, missing = self._pair_reverse_edges()
            if missing is not None:
                raise ValueError(
                    f"reverse_edge_index: {self._describe_edges(missing)} have no reverse edge; "
                    "build the graph with directed=False, or add the reverse edges"
                )
            self._reverse_edge = reverse
        return self._reverse_edge

    def _pair_reverse_edges(self):
        """(reverse, None) when every edge has a partner, else (None, positions without one)."""
        n, m = self.n, self.m
        src = self.edge_sources.astype(np.int64)
        dst = self.out_indices.astype(np.int64)
        keys = src * n + dst  # ascending: CSR order is (source, destination)
        reverse_keys = dst * n + src
        lo = xp.searchsorted(keys, reverse_keys, side="left")
        hi = xp.searchsorted(keys, reverse_keys, side="right")
        rank = xp.arange(m, dtype=np.int64) - xp.searchsorted(keys, keys, side="left")
        paired = rank < (hi - lo)
        if m and not bool(paired.all()):
            return None, xp.nonzero(~paired)[0]
        return (lo + rank).astype(self.index_dtype), None

    def _describe_edges(self, positions) -> str:
        """'3 edges (a->b, ...)' in original ids, for error messages."""
        total = int(positions.shape[0])
        shown = positions[:_SHOW]
        u = device.to_host(self.vertices[self.edge_sources[shown]]).tolist()
        v = device.to_host(self.vertices[self.out_indices[shown]]).tolist()
        pairs = [f"{a}->{b}" for a, b in zip(u, v)]
        return f"{total} edge{'s' if total != 1 else ''} ({_listing(pairs, total)})"

    # ------------------------------------------------------------------ lookups and properties

    def to_internal(self, ids):
        """Internal indices (``index_dtype``) of original vertex ids; a scalar gives an int.

        Raises TypeError for non-integer ids and ValueError naming ids not in the graph.
        """
        from . import io

        arr = io.read_vertex_ids(ids, "ids")
        flat = arr.reshape(-1)
        pos = xp.searchsorted(self.vertices, flat)
        found = self.vertices[xp.minimum(pos, self.n - 1)] == flat
        if flat.shape[0] and not bool(found.all()):
            missing = device.to_host(flat[~found])
            missing = np.unique(missing)
            raise ValueError(
                f"ids: {missing.size} id{'s are' if missing.size != 1 else ' is'} not a vertex "
                f"of this graph: {_listing(missing.tolist(), missing.size)}; pass ids from "
                "Graph.vertices (or add them with vertices= when building the graph)"
            )
        pos = pos.astype(self.index_dtype)
        if arr.ndim == 0:
            return int(pos[0])
        return pos.reshape(arr.shape)

    def vertex_property(self, values, columns=None, name: str = "values"):
        """An n x k float32 C-contiguous array in internal vertex order.

        ``values`` is a DataFrame (pandas, cuDF, pyarrow Table) with a ``vertex`` column listing
        every vertex exactly once, whose other columns (or the given ``columns``, in order) are
        the k features; or an array-like of n rows (1-D is n x 1) in ``vertices`` order.
        ``name`` is the argument name that error messages use.
        """
        from . import io

        if io.is_frame(values):
            return io.read_vertex_frame(self, values, columns=columns, name=name)
        if columns is not None:
            raise ValueError(
                f"{name}: columns= selects DataFrame columns, but {name} is an array; "
                "drop columns= or pass a DataFrame keyed by 'vertex'"
            )
        return io.read_property_array(values, self.n, "vertices", name)

    def edge_property(self, values, columns=None, name: str = "values"):
        """An m x k float32 C-contiguous array in CSR edge order.

        ``values`` is an array-like of m rows (1-D is m x 1), or a DataFrame of m rows whose
        columns (or the given ``columns``) are the k features, rows in CSR order.
        """
        from . import io

        if io.is_frame(values):
            return io.read_table_matrix(values, self.m, "edges", name, columns=columns)
        if columns is not None:
            raise ValueError(
                f"{name}: columns= selects DataFrame columns, but {name} is an array; "
                "drop columns="
            )
        return io.read_property_array(values, self.m, "edges", name)

    def weight_column(self, name=None):
        """One weight column as a contiguous (m,) float32 array; ``name`` may be omitted when the
        graph has exactly one."""
        if self.edge_weights is None:
            raise ValueError("this graph has no edge weights; build it with weight=<column>")
        if name is None:
            if len(self.weight_names) != 1:
                raise ValueError(
                    f"name: the graph has {len(self.weight_names)} weight columns "
                    f"{self.weight_names}; pass name= one of them"
                )
            j = 0
        elif name in self.weight_names:
            j = self.weight_names.index(name)
        else:
            raise ValueError(f"name={name!r}: no such weight column; the graph has "
                             f"{self.weight_names}")
        return xp.ascontiguousarray(self.edge_weights[:, j])

    # ------------------------------------------------------------------ descriptions

    def summary(self) -> dict:
        """Facts about the graph as plain Python values."""
        loops = int((self.edge_sources == self.out_indices).sum()) if self.m else 0
        return {
            "n": self.n,
            "m": self.m,
            "directed": self.directed,
            "weighted": self.edge_weights is not None,
            "weight_names": list(self.weight_names),
            "max_out_degree": int(self.out_degree.max()) if self.n else 0,
            "max_in_degree": int(self.in_degree.max()) if self.n else 0,
            "self_loops": loops,
            "index_dtype": str(self.index_dtype),
            "backend": device.BACKEND,
        }

    def __repr__(self) -> str:
        weights = f", weights={self.weight_names}" if self.weight_names else ""
        return (
            f"Graph(n={self.n}, m={self.m}, directed={self.directed}{weights}, "
            f"index_dtype={self.index_dtype}, backend={device.BACKEND})"
        )


def _check_directed(directed) -> bool:
    if not isinstance(directed, (bool, np.bool_)):
        raise TypeError(f"directed must be True or False, got {directed!r}")
    return bool(directed)
