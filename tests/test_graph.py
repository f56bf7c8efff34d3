"""Graph construction: CSR/CSC, renumbering, reverse edges and properties against independent
references (Python's stable sort over the input edges, and scipy.sparse count matrices)."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onyx_rapids import device
from onyx_rapids import ids as id_module
from onyx_rapids.construction import device as device_build, layout
from onyx_rapids.graph import Graph

H = device.to_host
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@st.composite
def edge_lists(draw):
    """(src ids, dst ids, weights (m, w) float64 or None) with arbitrary int64 ids drawn from a
    small pool, so duplicates, multi-edges and self-loops are common."""
    pool = draw(st.lists(INT64, min_size=1, max_size=8, unique=True))
    m = draw(st.integers(min_value=1, max_value=30))
    src = draw(st.lists(st.sampled_from(pool), min_size=m, max_size=m))
    dst = draw(st.lists(st.sampled_from(pool), min_size=m, max_size=m))
    w = draw(st.integers(min_value=0, max_value=2))
    weights = None
    if w:
        # No subnormals: CuPy's float64 -> float32 cast flushes them to zero on the GPU.
        values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=32,
                           allow_subnormal=False)
        weights = np.array(draw(st.lists(st.lists(values, min_size=w, max_size=w),
                                         min_size=m, max_size=m)), dtype=np.float64)
    return src, dst, weights


def _frame(src, dst, weights):
    data = {"src": np.array(src, dtype=np.int64), "dst": np.array(dst, dtype=np.int64)}
    names = []
    if weights is not None:
        for j in range(weights.shape[1]):
            data[f"w{j}"] = weights[:, j]
            names.append(f"w{j}")
    return pd.DataFrame(data), names


def _reference(src, dst, weights, directed, multigraph=True):
    """Stored edges in input order (undirected: originals then reversed non-loop copies), as
    internal ids, then the CSR and CSC orders by Python's stable sort. A simple graph keeps
    the first row of each pair (ordered when directed, unordered when not)."""
    vertices = sorted(set(src) | set(dst))
    index = {v: i for i, v in enumerate(vertices)}
    u = [index[x] for x in src]
    v = [index[x] for x in dst]
    w = [] if weights is None else [tuple(row) for row in weights.astype(np.float32)]
    if not multigraph:
        seen, rows = set(), []
        for e in range(len(u)):
            key = (u[e], v[e]) if directed else (min(u[e], v[e]), max(u[e], v[e]))
            if key not in seen:
                seen.add(key)
                rows.append(e)
        u, v = [u[e] for e in rows], [v[e] for e in rows]
        w = [w[e] for e in rows] if w else w
    if not directed:
        loops = [e for e in range(len(u)) if u[e] != v[e]]
        u, v = u + [v[e] for e in loops], v + [u[e] for e in loops]
        if w:
            w = w + [w[e] for e in loops]
    csr = sorted(range(len(u)), key=lambda e: (u[e], v[e]))
    csc = sorted(csr, key=lambda e: (v[e], u[e]))
    return vertices, np.array(u), np.array(v), w, csr, csc


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edges=edge_lists(), directed=st.booleans(), multigraph=st.booleans())
def test_csr_csc_against_references(edges, directed, multigraph):
    src, dst, weights = edges
    df, names = _frame(src, dst, weights)
    g = Graph.from_edgelist(df, weight=names or None, directed=directed, multigraph=multigraph)
    vertices, u, v, w, csr, csc = _reference(src, dst, weights, directed, multigraph)
    n, m = len(vertices), len(u)

    assert (g.n, g.m, g.directed, g.multigraph) == (n, m, directed, multigraph)
    if not multigraph:  # simple: no pair stored twice
        assert len(set(zip(u.tolist(), v.tolist()))) == m
    assert g.index_dtype == np.int32 and g.offset_dtype == np.int32
    assert H(g.vertices).dtype == np.int64 and H(g.vertices).tolist() == vertices

    # Renumbering is ascending and round-trips.
    ids = np.array(src + dst, dtype=np.int64)
    assert np.array_equal(H(g.vertices)[H(g.to_internal(ids))], ids)

    # scipy reference: edge-count matrix, its CSR and CSC offsets, and degrees.
    counts = sp.coo_matrix((np.ones(m), (u, v)), shape=(n, n)).tocsr()  # duplicates summed
    out_deg = np.asarray(counts.sum(axis=1)).ravel().astype(np.int64)
    in_deg = np.asarray(counts.sum(axis=0)).ravel().astype(np.int64)
    out_offsets, out_indices = H(g.out_offsets), H(g.out_indices)
    assert np.array_equal(out_offsets, np.concatenate([[0], np.cumsum(out_deg)]))
    ours = sp.csr_matrix((np.ones(m), out_indices, out_offsets), shape=(n, n))
    assert (ours != counts).nnz == 0
    in_offsets, in_indices = H(g.in_offsets), H(g.in_indices)
    assert np.array_equal(in_offsets, np.concatenate([[0], np.cumsum(in_deg)]))
    ours_csc = sp.csc_matrix((np.ones(m), in_indices, in_offsets), shape=(n, n))
    assert (ours_csc != counts).nnz == 0
    assert np.array_equal(H(g.out_degree), out_deg)
    assert np.array_equal(H(g.in_degree), in_deg)
    assert H(g.out_degree).dtype == np.int32 and H(g.in_degree).dtype == np.int32

    # Exact order: sorted by (source, destination), stable among parallel edges.
    assert out_indices.tolist() == [int(v[e]) for e in csr]
    assert H(g.edge_sources).tolist() == [int(u[e]) for e in csr]
    assert in_indices.tolist() == [int(u[e]) for e in csc]
    if weights is None:
        assert g.edge_weights is None and g.weight_names == []
    else:
        ew = H(g.edge_weights)
        assert ew.dtype == np.float32 and ew.shape == (m, weights.shape[1])
        assert ew.flags.c_contiguous
        assert g.weight_names == names
        assert [tuple(r) for r in ew] == [w[e] for e in csr]

    # in_edge_ids: a permutation mapping CSC entries to CSR entries with equal endpoints.
    ids_ = H(g.in_edge_ids)
    assert np.array_equal(np.sort(ids_), np.arange(m))
    columns = np.repeat(np.arange(n), np.diff(in_offsets))
    assert np.array_equal(H(g.edge_sources)[ids_], in_indices)
    assert np.array_equal(out_indices[ids_], columns)
    if weights is not None:
        assert [tuple(r) for r in H(g.edge_weights)[ids_]] == [w[e] for e in csc]

    # reverse_edge: an involution mapping u->v to v->u (with equal weights when undirected).
    pairs = Counter(zip(u.tolist(), v.tolist()))
    symmetric = all(pairs[(a, b)] == pairs[(b, a)] for a, b in pairs)
    if directed and not symmetric:
        with pytest.raises(ValueError, match="no reverse edge"):
            g.reverse_edge_index()
        return
    rev = H(g.reverse_edge)
    assert rev.dtype == g.offset_dtype
    assert np.array_equal(rev[rev], np.arange(m))
    sources = H(g.edge_sources)
    assert np.array_equal(sources[rev], out_indices)
    assert np.array_equal(out_indices[rev], sources)
    if not directed and weights is not None:
        assert np.array_equal(H(g.edge_weights)[rev], H(g.edge_weights))


@settings(max_examples=30, deadline=None)
@given(edges=edge_lists())
def test_directed_symmetric_input_pairs_like_undirected(edges):
    """A directed graph given both directions of every edge has a reverse_edge_index equal in
    structure to the undirected graph of the same edges."""
    src, dst, _ = edges
    both = pd.DataFrame({"src": src + dst, "dst": dst + src})
    d = Graph.from_edgelist(both, directed=True, multigraph=True)
    u = Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), directed=False,
                            multigraph=True)
    rev = H(d.reverse_edge_index())
    assert np.array_equal(rev[rev], np.arange(d.m))
    assert np.array_equal(H(d.edge_sources)[rev], H(d.out_indices))
    # The undirected multigraph stores loops once, the doubled directed list twice.
    loops = sum(a == b for a, b in zip(src, dst))
    assert d.m == u.m + loops
    # As simple graphs, the two are the same graph.
    ds = Graph.from_edgelist(both, directed=True)
    us = Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), directed=False)
    for name in ("vertices", "out_offsets", "out_indices", "in_offsets", "in_indices",
                 "in_edge_ids"):
        assert np.array_equal(H(getattr(ds, name)), H(getattr(us, name))), name
    assert np.array_equal(H(ds.reverse_edge_index()), H(us.reverse_edge))


def test_small_graph_layout():
    df = pd.DataFrame({"src": [10, 10, -3, 7, 10], "dst": [-3, 7, 7, 7, 7],
                       "w": [0.5, 1.0, 2.0, 3.0, 4.0]})
    g = Graph.from_edgelist(df, weight="w", vertices=[99, 7], multigraph=True, directed=True)
    assert H(g.vertices).tolist() == [-3, 7, 10, 99]
    assert H(g.out_offsets).tolist() == [0, 1, 2, 5, 5]
    assert H(g.out_indices).tolist() == [1, 1, 0, 1, 1]
    assert H(g.edge_weights)[:, 0].tolist() == [2.0, 3.0, 0.5, 1.0, 4.0]  # stable
    assert H(g.in_offsets).tolist() == [0, 1, 5, 5, 5]
    assert H(g.in_indices).tolist() == [2, 0, 1, 2, 2]
    assert H(g.in_edge_ids).tolist() == [2, 0, 1, 3, 4]
    assert H(g.out_degree).tolist() == [1, 1, 3, 0]
    assert H(g.in_degree).tolist() == [1, 4, 0, 0]
    s = g.summary()
    assert s == {"n": 4, "m": 5, "directed": True, "multigraph": True, "weighted": True,
                 "weight_names": ["w"], "sides": None, "max_out_degree": 3,
                 "max_in_degree": 4, "self_loops": 1, "index_dtype": "int32",
                 "offset_dtype": "int32", "placement": "device", "vertex_order": "id",
                 "edge_bytes": 80, "backend": device.BACKEND}
    assert "n=4" in repr(g) and "m=5" in repr(g) and "weights=['w']" in repr(g)
    assert "multigraph=True" in repr(g)
    assert "index_dtype=int32, offset_dtype=int32" in repr(g)
    assert H(g.weight_column()).tolist() == [2.0, 3.0, 0.5, 1.0, 4.0]
    # The simple default merges 10->7 (first row's weight 1.0 kept).
    simple = Graph.from_edgelist(df, weight="w", vertices=[99, 7], directed=True)
    assert simple.m == 4 and not simple.multigraph and "multigraph=False" in repr(simple)
    assert H(simple.edge_weights)[:, 0].tolist() == [2.0, 3.0, 0.5, 1.0]
    assert simple.summary()["multigraph"] is False


def test_undirected_self_loop_stored_once_and_reverse_pairs_twins():
    df = pd.DataFrame({"src": [1, 1, 2, 3], "dst": [2, 2, 1, 3], "w": [1.0, 2.0, 3.0, 4.0]})
    g = Graph.from_edgelist(df, weight="w", directed=False, multigraph=True)
    assert g.m == 2 * 3 + 1
    rev = H(g.reverse_edge)
    w = H(g.edge_weights)[:, 0]
    # Every copy pairs with its own twin: weights agree although the parallel edges differ.
    assert np.array_equal(w[rev], w)
    loop = int(np.nonzero(H(g.edge_sources) == H(g.out_indices))[0][0])
    assert rev[loop] == loop


def test_isolated_vertices_from_vertices_argument():
    df = pd.DataFrame({"src": [5], "dst": [6]})
    g = Graph.from_edgelist(df, vertices=np.array([-100, 6, 2**62], dtype=np.int64), directed=True)
    assert H(g.vertices).tolist() == [-100, 5, 6, 2**62]
    assert H(g.out_degree).tolist() == [0, 1, 0, 0]
    assert H(g.in_degree).tolist() == [0, 0, 1, 0]
    assert Graph.from_edgelist(df, vertices=range(3), directed=True).n == 5
    assert Graph.from_edgelist(df, vertices={7, 8}, directed=True).n == 4
    assert Graph.from_edgelist(df, vertices=[], directed=True).n == 2
    assert Graph.from_edgelist(df, vertices=pd.Series([9], dtype="Int64"), directed=True).n == 3


VERTEX_ARRAYS = ("out_indices", "in_indices", "edge_sources")  # vertex indices: index_dtype
EDGE_POSITION_ARRAYS = ("out_offsets", "in_offsets", "in_edge_ids", "reverse_edge")  # offset_dtype


def test_int64_index_dtype_beyond_int32(monkeypatch):
    df = pd.DataFrame({"src": [1, 2, 3, 3], "dst": [2, 3, 1, 1]})
    small = Graph.from_edgelist(df, directed=False)
    monkeypatch.setattr(layout, "INDEX32_LIMIT", 2)  # below n = 3 and m = 6
    big = Graph.from_edgelist(df, directed=False)
    assert (big.index_dtype, big.offset_dtype) == (np.int64, np.int64)
    assert (small.index_dtype, small.offset_dtype) == (np.int32, np.int32)
    for name in VERTEX_ARRAYS + EDGE_POSITION_ARRAYS:
        a, b = H(getattr(small, name)), H(getattr(big, name))
        assert b.dtype == np.int64, name
        assert np.array_equal(a, b), name
    assert H(big.out_degree).dtype == np.int32
    assert H(big.to_internal([3])).dtype == np.int64


def _mixed_frame():
    """10 vertices, 40 rows (parallel edges, both directions, self-loops), two weights."""
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 10, 40), rng.integers(0, 10, 40)
    src[:3], dst[:3] = 4, 4  # a self-loop, three times
    src[3:8], dst[3:8] = dst[8:13], src[8:13]  # reversed copies
    return pd.DataFrame({"src": src * 5 - 11, "dst": dst * 5 - 11,
                         "w": rng.random(40) + 0.5, "x": rng.integers(1, 5, 40)})


@pytest.mark.parametrize("kw", [dict(directed=True), dict(directed=False),
                                dict(directed=False, multigraph=True),
                                dict(weight=["w", "x"], multigraph=True, directed=True),
                                dict(weight="w", directed=False)])
def test_int32_vertex_indices_beside_int64_offsets(kw, monkeypatch):
    """n <= limit < m: vertex indices stay int32, offsets and edge positions go int64, and
    every array holds what the all-int32 build holds."""
    df = _mixed_frame()
    normal = Graph.from_edgelist(df, **kw)
    monkeypatch.setattr(layout, "INDEX32_LIMIT", 20)
    g = Graph.from_edgelist(df, **kw)
    assert g.n == normal.n == 10 and g.m == normal.m > 20
    assert (normal.index_dtype, normal.offset_dtype) == (np.int32, np.int32)
    assert (g.index_dtype, g.offset_dtype) == (np.int32, np.int64)
    s = g.summary()
    assert (s["index_dtype"], s["offset_dtype"]) == ("int32", "int64")
    assert "index_dtype=int32, offset_dtype=int64" in repr(g)
    # in_edge_ids doubles; so does an undirected multigraph's reverse pairing, the others' is
    # in_edge_ids itself (simple undirected) or not stored (directed)
    wider = 2 if not g.directed and g.multigraph else 1
    assert g.edge_bytes() == normal.edge_bytes() + 4 * g.m * wider
    for name in VERTEX_ARRAYS + EDGE_POSITION_ARRAYS + ("out_degree", "in_degree",
                                                        "edge_weights", "vertices"):
        if name == "reverse_edge" and g.directed:
            continue  # no reverse pairing: the directed graphs here are not symmetric
        a, b = getattr(normal, name), getattr(g, name)
        if a is None:
            assert b is None, name
            continue
        a, b = H(a), H(b)
        want = {"out_degree": np.int32, "in_degree": np.int32, "edge_weights": np.float32,
                "vertices": np.int64}.get(name, np.int32 if name in VERTEX_ARRAYS else np.int64)
        assert b.dtype == want, name
        assert np.array_equal(a, b), name
    # derived graphs follow the rule for their own n and m
    for derived, base in ((g.simple_undirected(), normal.simple_undirected()),
                          (g.reorder("degree"), normal.reorder("degree"))):
        assert derived.index_dtype == np.int32
        assert derived.offset_dtype == (np.int64 if derived.m > 20 else np.int32)
        for name in VERTEX_ARRAYS + EDGE_POSITION_ARRAYS[:3] + ("vertices",):
            np.testing.assert_array_equal(H(getattr(derived, name)), H(getattr(base, name)))
    assert H(g.to_internal(df["src"].to_numpy())).dtype == np.int32
    assert H(g.id_order()).dtype == np.int32


def test_reverse_pairing_of_a_directed_graph_holds_edge_positions(monkeypatch):
    """A directed graph's reverse pairing (computed on first use) and a directed symmetric
    CSR input's are edge positions: offset_dtype, not index_dtype."""
    und = Graph.from_edgelist(_mixed_frame(), directed=False)
    src, dst = H(und.edge_sources), H(und.out_indices)
    df = pd.DataFrame({"src": src, "dst": dst})
    monkeypatch.setattr(layout, "INDEX32_LIMIT", 20)
    for g in (Graph.from_edgelist(df, directed=True), Graph.from_csr(H(und.out_offsets), dst,
                                                      directed=False)):
        assert (g.index_dtype, g.offset_dtype) == (np.int32, np.int64)
        rev = H(g.reverse_edge)
        assert rev.dtype == np.int64
        np.testing.assert_array_equal(rev, H(und.reverse_edge))


def test_edge_bytes_estimate_sizes_each_array():
    assert layout.edge_bytes_estimate(10, 1) == 10 * (4 + 4 + 4 + 4)
    rows = 2**31 + 5  # beyond int32 edge positions: in_edge_ids is int64, the indices stay int32
    assert layout.edge_bytes_estimate(rows, 0) == rows * (4 + 4 + 8)
    assert layout.edge_bytes_estimate(rows, 2, n=2**31 + 1) == rows * (8 + 8 + 8 + 8)


# ---------------------------------------------------------------------- from_csr


def test_from_csr_numpy_matches_scipy_and_edgelist():
    offsets = np.array([0, 2, 2, 5, 6])
    indices = np.array([3, 1, 0, 0, 2, 2])  # unsorted rows, a parallel edge, a self-loop
    weights = np.arange(6, dtype=np.float64)
    g = Graph.from_csr(offsets, indices, weights, multigraph=True)
    assert H(g.vertices).tolist() == [0, 1, 2, 3]
    assert H(g.out_offsets).tolist() == offsets.tolist()
    assert H(g.out_indices).tolist() == [1, 3, 0, 0, 2, 2]
    assert H(g.edge_weights)[:, 0].tolist() == [1.0, 0.0, 2.0, 3.0, 4.0, 5.0]
    assert g.weight_names == ["weight"]
    rows = np.repeat(np.arange(4), np.diff(offsets))
    e = Graph.from_edgelist(pd.DataFrame({"src": rows, "dst": indices, "weight": weights}),
                            weight="weight", vertices=range(4), directed=True)
    g = Graph.from_csr(offsets, indices, weights)
    assert g.m == 5 and H(g.edge_weights)[:, 0].tolist() == [1.0, 0.0, 2.0, 4.0, 5.0]
    for name in ("out_offsets", "out_indices", "in_offsets", "in_indices", "in_edge_ids",
                 "edge_weights"):
        assert np.array_equal(H(getattr(g, name)), H(getattr(e, name))), name


def test_from_csr_scipy_matrix():
    a = sp.random(12, 12, density=0.3, format="csr", random_state=1, dtype=np.float64)
    g = Graph.from_csr(a)
    assert (g.n, g.m) == (12, a.nnz)
    ours = sp.csr_matrix((H(g.edge_weights)[:, 0], H(g.out_indices), H(g.out_offsets)),
                         shape=(12, 12))
    assert abs(ours - a).max() < 1e-6
    assert Graph.from_csr(a, weights=False).edge_weights is None
    assert Graph.from_csr(a.tocoo()).m == a.nnz  # any sparse format is converted
    custom = Graph.from_csr(a, weights={"x": np.ones(a.nnz), "y": np.zeros(a.nnz)})
    assert custom.weight_names == ["x", "y"] and H(custom.edge_weights).shape == (a.nnz, 2)


def test_from_csr_undirected_symmetric():
    a = sp.csr_matrix(np.array([[0, 2.0, 0], [2.0, 1.0, 5.0], [0, 5.0, 0]]))
    g = Graph.from_csr(a, directed=False)
    assert not g.directed and g.m == 5
    rev = H(g.reverse_edge)
    assert np.array_equal(rev[rev], np.arange(5))
    with pytest.raises(ValueError, match=r"directed=False needs a symmetric edge set.*0->1"):
        Graph.from_csr(np.array([0, 1, 1]), np.array([1]), directed=False)
    with pytest.raises(ValueError, match="directed=False needs symmetric weights"):
        Graph.from_csr(sp.csr_matrix(np.array([[0, 2.0], [3.0, 0]])), directed=False)


def test_from_csr_edgeless_and_2d_weights():
    g = Graph.from_csr(np.array([0, 0, 0]), np.array([], dtype=np.int64))
    assert (g.n, g.m) == (2, 0)
    assert H(g.in_offsets).tolist() == [0, 0, 0]
    assert H(g.reverse_edge_index()).size == 0
    w = Graph.from_csr(np.array([0, 1, 2]), np.array([1, 0]), np.ones((2, 3)))
    assert w.weight_names == ["weight_0", "weight_1", "weight_2"]


@pytest.mark.parametrize(
    "args, exc, match",
    [
        ((np.array([1, 2]), np.array([0, 1])), ValueError, r"offsets\[0\] must be 0"),
        ((np.array([0, 2, 1, 3]), np.array([0, 1, 2])), ValueError,
         r"offsets must be non-decreasing.*offsets\[2\]"),
        ((np.array([0, 1, 2]), np.array([0, 1, 1])), ValueError,
         r"offsets\[-1\] = 2 must equal len\(indices\) = 3"),
        ((np.array([0, 1, 2]), np.array([0, 2])), ValueError,
         r"indices must lie in \[0, n\).*indices\[1\] = 2"),
        ((np.array([0, 1, 2]), np.array([-1, 0])), ValueError, r"indices\[0\] = -1"),
        ((np.array([0.0, 1.0]), np.array([0])), TypeError, "offsets must be an integer array"),
        ((np.array([0, 1]), np.array([0.0])), TypeError, "indices must be an integer array"),
        ((np.array([[0, 1]]), np.array([0])), ValueError, "offsets must be one-dimensional"),
        ((np.array([0]), np.array([], dtype=np.int64)), ValueError, "n\\+1 >= 2"),
        ((np.array([0, 1]),), TypeError, "indices is required"),
        ((sp.csr_matrix(np.ones((2, 3))),), ValueError, "must be square"),
        ((sp.csr_matrix(np.ones((2, 2))), np.array([0])), ValueError, "not both"),
        ((np.array([0, 1, 2]), np.array([1, 0]), np.ones(3)), ValueError,
         "weights has 3 rows but there are 2 edges"),
        ((np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0, np.nan])), ValueError,
         "weights: 1 row.*NaN or infinite"),
        ((np.array([0, 1, 2]), np.array([1, 0]), np.array(["a", "b"])), TypeError,
         "weights must be numeric"),
        ((np.array([0, 1, 2]), np.array([1, 0]), {"x": np.ones(3)}), ValueError,
         r"weights\['x'\] must have shape \(2,\)"),
    ],
)
def test_from_csr_rejects_bad_arrays(args, exc, match):
    with pytest.raises(exc, match=match):
        Graph.from_csr(*args)


# ---------------------------------------------------------------------- lookups and properties


@pytest.fixture
def g():
    return Graph.from_edgelist(pd.DataFrame({"src": [30, 10, 20], "dst": [10, 20, 30]}),
                               directed=True)


def test_to_internal(g):
    assert g.to_internal(20) == 1 and isinstance(g.to_internal(20), int)
    assert H(g.to_internal([30, 10])).tolist() == [2, 0]
    assert H(g.to_internal(np.array([[10], [30]], dtype=np.uint8))).tolist() == [[0], [2]]
    assert H(g.to_internal([])).size == 0
    with pytest.raises(ValueError, match=r"ids: 2 ids are not a vertex of this graph: 11, 99"):
        g.to_internal([10, 99, 11])
    with pytest.raises(TypeError, match="ids: vertex ids must be integers"):
        g.to_internal([10.0])
    with pytest.raises(TypeError, match="ids: vertex ids must be integers"):
        g.to_internal(["10"])


def test_vertex_property_from_frame_and_array(g):
    df = pd.DataFrame({"a": [3.0, 1.0, 2.0], "vertex": [30, 10, 20], "b": [30, 10, 20]})
    p = H(g.vertex_property(df))
    assert p.dtype == np.float32 and p.flags.c_contiguous
    assert p.tolist() == [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]]
    assert H(g.vertex_property(df, columns=["b", "a"]))[:, 0].tolist() == [10, 20, 30]
    assert H(g.vertex_property(df, columns="a")).shape == (3, 1)
    one = H(g.vertex_property([1, 2, 3]))
    assert one.shape == (3, 1) and one.dtype == np.float32
    two = H(g.vertex_property(np.ones((3, 4), dtype=np.float64)[:, ::2]))  # strided input
    assert two.shape == (3, 2) and two.flags.c_contiguous


def test_vertex_property_with_pyarrow_table(g):
    import pyarrow as pa

    t = pa.table({"vertex": [20, 10, 30], "x": [2.0, 1.0, 3.0]})
    assert H(g.vertex_property(t))[:, 0].tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "values, kwargs, exc, match",
    [
        (pd.DataFrame({"vertex": [10, 20], "x": [1.0, 2.0]}), {}, ValueError,
         "feats: 1 vertices have no row.*30"),
        (pd.DataFrame({"vertex": [10, 20, 30, 10], "x": [1.0] * 4}), {}, ValueError,
         "feats: vertices appear more than once.*10"),
        (pd.DataFrame({"vertex": [10, 20, 31], "x": [1.0] * 3}), {}, ValueError,
         "feats: 1 id.*not vertices of the graph: 31"),
        (pd.DataFrame({"vertex": [10, 20, 30], "x": [1.0, np.nan, 2.0]}), {}, ValueError,
         "columns='x': 1 row.*NaN or infinite"),
        (pd.DataFrame({"vertex": [10, 20, 30], "x": [1.0, np.inf, 2.0]}), {}, ValueError,
         "NaN or infinite"),
        (pd.DataFrame({"vertex": [10, 20, 30]}), {}, ValueError, "feats: .* no value columns"),
        (pd.DataFrame({"vertx": [10, 20, 30], "x": [1.0] * 3}), {}, ValueError,
         "feats: the feats frame has no 'vertex' column but has 'vertx'; rename it"),
        (pd.DataFrame({"vertex": [10, 20, 30], "x": [1.0] * 3}), {"columns": ["y"]},
         ValueError, "columns='y': no such column"),
        (pd.DataFrame({"vertex": [10, 20, 30], "x": ["a", "b", "c"]}), {}, TypeError,
         "columns='x': values must be numeric"),
        (pd.DataFrame({"vertex": [10.0, 20.0, 30.0], "x": [1.0] * 3}), {}, TypeError,
         "vertex='vertex': vertex ids must be integers"),
        (np.ones(4), {}, ValueError, "feats has 4 rows but the graph has 3 vertices"),
        (np.ones((3, 0)), {}, ValueError, "feats has 0 feature columns"),
        (np.ones((3, 1, 1)), {}, ValueError, "feats must be 1-D"),
        (np.array([1.0, np.nan, 0.0]), {}, ValueError, "feats: 1 row.*NaN or infinite"),
        (np.array([1.0, 1e39, 0.0]), {}, ValueError, "feats: 1 row.*float32 range"),
        (np.array(["a", "b", "c"]), {}, TypeError, "feats must be numeric"),
        (np.ones(3), {"columns": ["x"]}, ValueError, "feats: columns= selects DataFrame"),
    ],
)
def test_vertex_property_rejects(g, values, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        g.vertex_property(values, name="feats", **kwargs)


def test_edge_property(g):
    e = H(g.edge_property(np.array([1, 2, 3])))
    assert e.shape == (3, 1) and e.dtype == np.float32
    f = H(g.edge_property(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0, 0, 1]})))
    assert f.shape == (3, 2) and f.flags.c_contiguous
    with pytest.raises(ValueError, match="ew has 2 rows but the graph has 3 edges"):
        g.edge_property(np.ones(2), name="ew")
    with pytest.raises(ValueError, match="ew has 2 rows but the graph has 3 edges"):
        g.edge_property(pd.DataFrame({"a": [1.0, 2.0]}), name="ew")
    with pytest.raises(ValueError, match="NaN or infinite"):
        g.edge_property(np.array([1.0, np.nan, 0.0]), name="ew")


def test_weight_column_errors(g):
    with pytest.raises(ValueError, match="no edge weights"):
        g.weight_column()
    w = Graph.from_edgelist(pd.DataFrame({"s": [1], "d": [2], "a": [1.0], "b": [2.0]}),
                            source="s", destination="d", weight=["a", "b"], directed=True)
    assert H(w.weight_column("b")).tolist() == [2.0]
    with pytest.raises(ValueError, match="pass name= one of them"):
        w.weight_column()
    with pytest.raises(ValueError, match="name='c': no such weight column"):
        w.weight_column("c")


# ---------------------------------------------------------------------- construction paths


def _numpy_construction(src, dst, weights, extra, directed, multigraph):
    """The graph built the plain way, with NumPy: renumber with np.unique, keep the first row
    of each pair (np.unique's return_index), append the reversed copies of an undirected
    list's non-loop rows after all the rows, lexsort into CSR (source, destination, position)
    and CSC (destination, source, CSR position), pair each edge with its own reversed copy."""
    m = src.shape[0]
    vertices, inverse = np.unique(np.concatenate([src, dst, extra]), return_inverse=True)
    n = vertices.shape[0]
    u, v = inverse[:m], inverse[m:2 * m]
    rows = np.arange(m)
    if not multigraph:
        key = u * n + v if directed else np.minimum(u, v) * n + np.maximum(u, v)
        rows = np.sort(np.unique(key, return_index=True)[1])
    u, v = u[rows], v[rows]
    w = None if weights is None else weights[rows].astype(np.float32)
    twin = None
    if not directed:
        nonloop = np.nonzero(u != v)[0]
        m0 = u.shape[0]
        twin = np.arange(m0 + nonloop.shape[0])
        twin[nonloop], twin[m0:] = np.arange(m0, m0 + nonloop.shape[0]), nonloop
        u, v = np.concatenate([u, v[nonloop]]), np.concatenate([v, u[nonloop]])
        if w is not None:
            w = np.concatenate([w, w[nonloop]])
    csr = np.lexsort((np.arange(u.shape[0]), v, u))
    position = np.empty_like(csr)
    position[csr] = np.arange(csr.shape[0])
    su, sv = u[csr], v[csr]
    csc = np.lexsort((np.arange(csr.shape[0]), su, sv))
    out_degree, in_degree = np.bincount(su, minlength=n), np.bincount(sv, minlength=n)
    return {
        "vertices": vertices,
        "out_offsets": np.concatenate([[0], np.cumsum(out_degree)]),
        "out_indices": sv,
        "edge_sources": su,
        "in_offsets": np.concatenate([[0], np.cumsum(in_degree)]),
        "in_indices": su[csc],
        "in_edge_ids": csc,
        "out_degree": out_degree,
        "in_degree": in_degree,
        "edge_weights": None if w is None else w[csr],
        "reverse_edge": None if twin is None else position[twin[csr]],
    }


def _random_ids(rng, regime: str, pool_size: int, size: int):
    if regime == "dense":  # 0..k-1: renumbered through the table, used unshifted
        return rng.integers(0, pool_size, size)
    if regime == "shifted":  # a dense range far from 0
        return rng.integers(0, pool_size, size) + 10**12
    if regime == "negative":  # a dense range from below 0
        return rng.integers(-pool_size, pool_size // 2 + 1, size)
    if regime == "span32":  # sparse ids within 2**32 of each other: 32-bit sort keys
        return (rng.integers(0, 2**32, pool_size) - 2**31)[rng.integers(0, pool_size, size)]
    pool = rng.integers(-(2**63), 2**63 - 1, pool_size, endpoint=True)  # "wide": int64 keys
    return pool[rng.integers(0, pool_size, size)]


@pytest.mark.parametrize("regime", ["dense", "shifted", "negative", "span32", "wide"])
@pytest.mark.parametrize("knobs", [{}, {"KEY32_MAX_N": 0}, {"DENSE_SPAN_FACTOR": 0},
                                   {"DENSE_SPAN_FACTOR": 10**6, "KEY32_MAX_N": 0},
                                   {"INDEX32_LIMIT": 3}, {"INDEX32_LIMIT": 40}])
def test_construction_matches_plain_numpy_build(regime, knobs, monkeypatch):
    """Every construction path (table or sort renumbering, 32- or 64-bit pair keys, the
    one-sort simple undirected build, int32 or int64 vertex indices and offsets, mixed) gives
    the arrays of the plain
    NumPy build above: duplicates, parallel edges both ways, self-loops, isolated ids given as
    vertices=, zero to two weight columns whose first row per pair must be the one kept."""
    for name, value in knobs.items():
        module = {"KEY32_MAX_N": device_build, "DENSE_SPAN_FACTOR": id_module,
                  "INDEX32_LIMIT": layout}[name]
        monkeypatch.setattr(module, name, value)
    rng = np.random.default_rng(["dense", "shifted", "negative", "span32", "wide"].index(regime))
    for trial in range(12):
        m = int(rng.integers(1, 600))
        pool = int(rng.integers(1, 80))
        src = _random_ids(rng, regime, pool, m)
        dst = _random_ids(rng, regime, pool, m) if trial % 3 else src[rng.permutation(m)]
        if regime in ("span32", "wide"):  # share one pool: the sparse draws rarely collide
            ids = np.unique(np.concatenate([src, dst]))
            src, dst = ids[rng.integers(0, ids.size, m)], ids[rng.integers(0, ids.size, m)]
        loops = rng.random(m) < 0.1
        dst[loops] = src[loops]
        extra = np.concatenate([_random_ids(rng, regime, pool + 5, int(rng.integers(0, 5))),
                                src[:2]])
        k = trial % 3
        weights = rng.integers(0, 4, (m, k)).astype(np.float64) if k else None
        data = {"src": src, "dst": dst}
        names = [f"w{j}" for j in range(k)]
        for j, name in enumerate(names):
            data[name] = weights[:, j]
        df = pd.DataFrame(data)
        for directed in (True, False):
            for multigraph in (True, False):
                g = Graph.from_edgelist(df, weight=names or None, directed=directed,
                                        multigraph=multigraph, vertices=extra)
                want = _numpy_construction(src, dst, weights, extra, directed, multigraph)
                case = (regime, knobs, trial, directed, multigraph)
                assert (g.n, g.m) == (want["vertices"].size, want["out_indices"].size), case
                limit = knobs.get("INDEX32_LIMIT", 2**31 - 1)
                vtype = np.int64 if g.n > limit else np.int32  # vertex indices
                etype = np.int64 if g.m > limit else np.int32  # offsets, edge positions
                assert (g.index_dtype, g.offset_dtype) == (vtype, etype), case
                for name, expected in want.items():
                    if name == "reverse_edge":
                        got = None if directed else g.reverse_edge
                    else:
                        got = getattr(g, name)
                    if expected is None:
                        assert got is None, (case, name)
                        continue
                    got = H(got)
                    dtype = {"vertices": np.int64, "edge_weights": np.float32,
                             "out_degree": np.int32, "in_degree": np.int32,
                             "out_indices": vtype, "in_indices": vtype,
                             "edge_sources": vtype}.get(name, etype)
                    assert got.dtype == dtype, (case, name, got.dtype)
                    assert np.array_equal(got, expected), (case, name)
