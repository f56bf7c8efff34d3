"""Traversal algorithms against cuGraph on one R-MAT graph: run with ``pytest -m gpu`` on a GPU
machine with RAPIDS (cuDF and cuGraph); deselected elsewhere (pyproject: -m 'not gpu ...').

Graph: R-MAT scale 14, edge factor 16, self-loops and duplicate edges dropped (cuGraph's Graph
assumes a simple graph), float32 weights in [0.1, 1); ours and cuGraph's built from the same
cuDF frame.  Directed for bfs, sssp and PageRank; cuGraph's wcc and core numbers need an
undirected graph (of the distinct pairs), ours take the simple undirected view themselves.

Compared: bfs distances exactly, sssp distances within rtol 1e-5, wcc labels as the same
partition, core numbers exactly, PageRank within 1e-5 (max abs) after both are normalized to sum
1, and the columns of multi-source bfs / sssp with separate cuGraph runs.  Where cuGraph writes
predecessor -1 (the source, unreachable vertices), ours is null.  (The benchmark harness's
traversal suite has its own tests in tests/test_bench_harness.py.)

As tests/test_rapids.py: cuDF / cuGraph are imported inside the tests, so that a GPU machine
without them fails loudly (and conftest fails every gpu-marked test off the GPU)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import onyx_rapids
from onyx_rapids import Graph, datasets

pytestmark = pytest.mark.gpu

SCALE, EDGE_FACTOR, SEED = 14, 16, 3
K = 8
UNREACHED_FLOAT = 3e38


@pytest.fixture
def rmat():
    import cudf
    import cugraph

    df = datasets.rmat(SCALE, EDGE_FACTOR, seed=SEED)
    df = df[df["src"] != df["dst"]].drop_duplicates(["src", "dst"]).reset_index(drop=True)
    rng = np.random.default_rng(SEED)
    df["weight"] = (0.1 + 0.9 * rng.random(len(df))).astype(np.float32)
    frame = cudf.from_pandas(df)
    g = Graph.from_edgelist(frame, "src", "dst", weight="weight", directed=True)

    def graph(edges, directed=True, **kwargs):
        G = cugraph.Graph(directed=directed)
        G.from_cudf_edgelist(edges, source="src", destination="dst", **kwargs)
        return G

    low = np.minimum(df["src"].to_numpy(), df["dst"].to_numpy())
    high = np.maximum(df["src"].to_numpy(), df["dst"].to_numpy())
    pairs = pd.DataFrame({"src": low, "dst": high}).drop_duplicates()
    sources = df["src"].value_counts().index.to_numpy()[:K].astype(np.int64)  # high degree
    return SimpleNamespace(
        df=df, g=g, sources=[int(s) for s in sources],
        directed=graph(frame[["src", "dst"]]),
        weighted=graph(frame, edge_attr="weight"),
        undirected=graph(cudf.from_pandas(pairs), directed=False),
        transposed=graph(frame[["src", "dst"]], store_transposed=True),
        weighted_transposed=graph(frame, edge_attr="weight", store_transposed=True),
    )


def _by_vertex(frame, column):
    """(vertex, column) of a result frame as NumPy, sorted by vertex."""
    host = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    host = host.sort_values("vertex")
    return host["vertex"].to_numpy().astype(np.int64), host[column].to_numpy()


def _missing_predecessor(frame, sentinel=None):
    """Sorted by vertex: where the predecessor is missing: null (ours) or ``sentinel``
    (cuGraph's -1)."""
    host = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    column = host.sort_values("vertex")["predecessor"]
    return (column.isna() if sentinel is None else column == sentinel).to_numpy(dtype=bool)


def _same_vertices(a, b):
    np.testing.assert_array_equal(a, b, err_msg="ours and cuGraph's results have other vertices")


def _assert_sssp_close(ours, theirs, what):
    ra = np.isfinite(ours) & (ours < UNREACHED_FLOAT)
    rb = np.isfinite(theirs) & (theirs < UNREACHED_FLOAT)
    assert (ra == rb).all(), f"{what}: {(ra != rb).sum()} vertices reached by one side only"
    np.testing.assert_allclose(ours[ra].astype(np.float64), theirs[rb].astype(np.float64),
                               rtol=1e-5, atol=1e-6, err_msg=what)


def _sssp():
    sssp = getattr(onyx_rapids, "sssp", None)
    assert sssp is not None, "onyx_rapids.sssp does not exist yet (branch sssp)"
    return sssp


@pytest.mark.parametrize("direction", ["auto", "push", "pull"])
def test_bfs_matches_cugraph(rmat, direction):
    import cugraph

    for s in rmat.sources[:3]:
        ours = onyx_rapids.bfs(rmat.g, start=s, direction=direction)  # cuGraph's argument name
        theirs = cugraph.bfs(rmat.directed, start=s)
        v1, d1 = _by_vertex(ours, "distance")
        v2, d2 = _by_vertex(theirs, "distance")
        _same_vertices(v1, v2)
        np.testing.assert_array_equal(_missing_predecessor(ours),
                                      _missing_predecessor(theirs, -1))
        # cuGraph 26.10 gives int64 distances, int64 max when unreached; ours 2^31 - 1
        np.testing.assert_array_equal(d1.astype(np.int64),
                                      np.minimum(d2.astype(np.int64), 2**31 - 1),
                                      err_msg=f"bfs from {s}, direction {direction}")


def test_sssp_matches_cugraph(rmat):
    import cugraph

    sssp = _sssp()
    for s in rmat.sources[:3]:
        ours = sssp(rmat.g, source=s, weight="weight")
        theirs = cugraph.sssp(rmat.weighted, source=s)
        v1, d1 = _by_vertex(ours, "distance")
        v2, d2 = _by_vertex(theirs, "distance")
        _same_vertices(v1, v2)
        np.testing.assert_array_equal(_missing_predecessor(ours),
                                      _missing_predecessor(theirs, -1))
        _assert_sssp_close(d1, d2, f"sssp from {s}")


def test_weakly_connected_components_match_cugraph(rmat):
    import cugraph

    v1, ours = _by_vertex(onyx_rapids.weakly_connected_components(rmat.g), "labels")
    v2, theirs = _by_vertex(cugraph.weakly_connected_components(rmat.undirected), "labels")
    _same_vertices(v1, v2)
    pairs = pd.DataFrame({"ours": ours, "theirs": theirs}).drop_duplicates()
    # the same partition: each of our labels maps to one of theirs and back
    assert pairs["ours"].is_unique and pairs["theirs"].is_unique, (
        f"{len(np.unique(ours))} components vs cuGraph's {len(np.unique(theirs))}, "
        f"{len(pairs)} label pairs")
    assert (ours <= v1).all()  # ours: the smallest original id of the component


def test_core_number_matches_cugraph(rmat):
    import cugraph

    v1, ours = _by_vertex(onyx_rapids.core_number(rmat.g), "core_number")
    v2, theirs = _by_vertex(cugraph.core_number(rmat.undirected), "core_number")
    _same_vertices(v1, v2)
    np.testing.assert_array_equal(ours.astype(np.int64), theirs.astype(np.int64))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("change_driven", [False, True])
def test_pagerank_matches_cugraph(rmat, change_driven, weighted):
    """Both use a weighted graph's weights by default (weight=False: ours ignores them)."""
    import cugraph

    # tolerances as tests/test_rapids.py: ours float32 (1e-7 is above its rounding floor)
    ours = onyx_rapids.pagerank(rmat.g, tol=1e-7, max_iter=500, change_driven=change_driven,
                                weight=None if weighted else False)
    G = rmat.weighted_transposed if weighted else rmat.transposed
    # cuGraph's float32 weighted iteration may hover just above 1e-9 (atomics reorder its
    # sums): its result then is as close as ours, so take it instead of its exception
    theirs = cugraph.pagerank(G, alpha=0.85, tol=1e-9, max_iter=500,
                              fail_on_nonconvergence=False)
    theirs = theirs[0] if isinstance(theirs, tuple) else theirs
    v1, a = _by_vertex(ours, "pagerank")
    v2, b = _by_vertex(theirs, "pagerank")
    _same_vertices(v1, v2)
    a, b = a.astype(np.float64), b.astype(np.float64)
    diff = np.abs(a / a.sum() - b / b.sum())
    assert diff.max() <= 1e-5, (diff.max(), diff.sum())


def test_multi_source_bfs_columns_match_separate_cugraph_runs(rmat):
    import cugraph

    df = onyx_rapids.bfs(rmat.g, sources=rmat.sources)
    assert list(df.columns) == ["vertex"] + [f"distance_{f}" for f in range(K)]
    for f, s in enumerate(rmat.sources):
        v1, d1 = _by_vertex(df, f"distance_{f}")
        v2, d2 = _by_vertex(cugraph.bfs(rmat.directed, start=s), "distance")
        _same_vertices(v1, v2)
        np.testing.assert_array_equal(d1.astype(np.int64),
                                      np.minimum(d2.astype(np.int64), 2**31 - 1),
                                      err_msg=f"column {f} (source {s})")


def test_multi_source_sssp_columns_match_separate_cugraph_runs(rmat):
    import cugraph

    df = _sssp()(rmat.g, sources=rmat.sources)
    for f, s in enumerate(rmat.sources):
        v1, d1 = _by_vertex(df, f"distance_{f}")
        v2, d2 = _by_vertex(cugraph.sssp(rmat.weighted, source=s), "distance")
        _same_vertices(v1, v2)
        _assert_sssp_close(d1, d2, f"column {f} (source {s})")
