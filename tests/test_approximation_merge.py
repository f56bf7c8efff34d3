"""Approximate graph representation (issue 37, knob ``merge_similarity``,
:mod:`onyx_rapids.algorithms._merged`): the groups against a NumPy / SciPy reference of the
Jaccard rule, the merged graph cached, PageRank against the float64 oracle on the merged graph,
the exact ends (twins for PageRank, every value for weakly connected components), results in
original ids, refusals and RunInfo.
"""

import time

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import oracles
from graphs import csr_edges, pandas
import onyx_rapids as onyx
from onyx_rapids import Approximation, datasets, device
from onyx_rapids.algorithms import _merged

ALPHA, TOL = 0.85, 1e-7

#: true twins: 0 and 1 (N[0] = N[1] = {0, 1, 2, 3}), 8 and 9 (a second component); 10 isolated
TWINS = pd.DataFrame({"src": [0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 4, 8],
                      "dst": [1, 2, 3, 2, 3, 4, 5, 5, 6, 7, 7, 9]})


def merge(threshold):
    return Approximation(merge_similarity=threshold)



@pytest.fixture(scope="module")
def twins():
    return onyx.Graph.from_edgelist(TWINS, vertices=[10])


@pytest.fixture(scope="module")
def tangle():
    """16 vertices, 3 components and an isolated vertex: triangles, a clique, leaves."""
    rng = np.random.default_rng(5)
    src = np.r_[rng.integers(0, 8, 14), rng.integers(8, 14, 9), 14]
    dst = np.r_[rng.integers(0, 8, 14), rng.integers(8, 14, 9), 8]
    return onyx.Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), vertices=[15])


def reference_groups(g, threshold):
    """Groups by the rule in NumPy / SciPy: edges u-v (u != v) whose closed neighbourhoods'
    Jaccard similarity is >= threshold, their components numbered by smallest member."""
    src, dst = csr_edges(g)
    a = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(g.n, g.n)).astype(bool)
    closed = (a + sp.identity(g.n, format="csr", dtype=bool)).astype(np.int64)
    common = (closed @ closed.T).toarray()
    size = np.asarray(closed.sum(axis=1)).ravel()
    u, v = src[src < dst], dst[src < dst]
    keep = common[u, v] / (size[u] + size[v] - common[u, v]) >= threshold
    _, label = connected_components(sp.csr_matrix((np.ones(keep.sum()), (u[keep], v[keep])),
                                                  shape=(g.n, g.n)), directed=False)
    first = {}
    return np.array([first.setdefault(x, len(first)) for x in label])


@pytest.mark.parametrize("threshold", [1.0, 0.6, 0.4, 0.25])
def test_groups_follow_the_jaccard_rule(tangle, threshold):
    group, k = _merged.groups(tangle.simple_undirected(), threshold)
    expected = reference_groups(tangle, threshold)
    assert device.to_host(group).tolist() == expected.tolist() and k == expected.max() + 1


def test_pagerank_equals_the_oracle_on_the_merged_graph(tangle):
    df, info = onyx.pagerank(tangle, alpha=ALPHA, tol=TOL, approximation=merge(0.4),
                             return_info=True)
    m, _ = _merged.merged(tangle, 0.4)
    h, group = m.graph, device.to_host(m.group)
    src, dst = csr_edges(h)
    sizes = np.bincount(group, minlength=h.n) / tangle.n
    x = oracles.pagerank(h.n, src, dst, weights=device.to_host(h.edge_weights[:, 0]),
                         alpha=ALPHA, teleport=sizes)
    degree = device.to_host(tangle.simple_undirected().out_degree).astype(np.float64)
    total = np.bincount(group, weights=degree)[group]
    expected = x[group] * np.where(total > 0, degree / np.maximum(total, 1), 1.0)
    assert info.estimate["merged_vertices"] == h.n < tangle.n
    np.testing.assert_allclose(df["pagerank"].to_numpy(), expected, atol=1e-6)
    assert abs(df["pagerank"].sum() - 1) < 1e-5


def test_twins_only_is_exact_for_pagerank(twins):
    df, info = onyx.pagerank(twins, alpha=ALPHA, tol=TOL, approximation=merge(1.0),
                             return_info=True)
    assert (info.estimate["merged_vertices"], info.estimate["merged_edges"]) == (9, 18)
    exact = onyx.pagerank(twins, alpha=ALPHA, tol=TOL)
    np.testing.assert_allclose(df["pagerank"].to_numpy(), exact["pagerank"].to_numpy(),
                               atol=1e-6)


@pytest.mark.parametrize("threshold, method", [(0.2, "hook"), (1.0, "propagate")])
def test_components_are_exact(tangle, threshold, method):
    exact = pandas(onyx.weakly_connected_components(tangle))
    df = pandas(onyx.weakly_connected_components(tangle, method=method,
                                                 approximation=merge(threshold)))
    assert df["vertex"].tolist() == exact["vertex"].tolist()
    assert df["labels"].tolist() == exact["labels"].tolist()


def test_string_ids_get_a_row_each_and_sources_map_to_groups():
    edges = datasets.load_edges("karate").head(40)
    names = {v: f"v{v}" for v in pd.unique(edges[["src", "dst"]].to_numpy().ravel())}
    g = onyx.Graph.from_edgelist(edges.replace(names))
    ppr = pandas(onyx.personalized_pagerank(g, sources=["v0", "v5"], approximation=merge(0.5),
                                            alpha=ALPHA, tol=1e-5))
    assert sorted(ppr["vertex"]) == sorted(names.values())
    assert np.allclose(ppr[["ppr_0", "ppr_1"]].sum().to_numpy(), 1, atol=1e-5)
    labels = pandas(onyx.weakly_connected_components(g, approximation=merge(0.5)))
    assert labels.equals(pandas(onyx.weakly_connected_components(g)))


def test_merged_graph_is_built_once_per_threshold(monkeypatch, twins):
    g = onyx.Graph.from_edgelist(TWINS)
    builds = []
    build = _merged._build
    monkeypatch.setattr(_merged, "_build", lambda *a: builds.append(a[1]) or build(*a))
    infos = [onyx.weakly_connected_components(g, approximation=merge(t), return_info=True)[1]
             for t in (0.5, 0.5, 0.9)]
    assert builds == [0.5, 0.9]
    assert [i.estimate["merge_build_ms"] > 0 for i in infos] == [True, False, True]
    assert infos[1].estimate["merge_build_ms"] == 0.0


def test_run_info_records_the_knob_and_keeps_the_others(tangle):
    knob = Approximation(merge_similarity=0.4, stop_changed_fraction=0.5)
    df, info = onyx.pagerank(tangle, alpha=ALPHA, tol=TOL, approximation=knob,
                             return_info=True)
    assert info.approximation == df.attrs["approximation"] == knob.knobs()
    assert info.estimate["stopped_by"] == "stop_changed_fraction"
    assert {"merged_vertices", "merged_edges", "merge_build_ms"} <= set(info.estimate)


@pytest.mark.parametrize("call, needle", [
    (lambda g: onyx.bfs(g, 0, approximation=merge(0.5)),
     "bfs does not support approximation merge_similarity=0.5: its approximation knobs are "
     "none"),
    (lambda g: onyx.sssp(g, 0, approximation=merge(0.5)),
     "sssp does not support approximation merge_similarity=0.5"),
    (lambda g: merge(0), "merge_similarity must be a number in (0, 1], got 0"),
    (lambda g: merge(1.5), "merge_similarity must be a number in (0, 1], got 1.5"),
    (lambda g: merge("0.5"), "merge_similarity must be a number in (0, 1], got '0.5'"),
])
def test_refusals_name_the_knob(twins, call, needle):
    with pytest.raises(ValueError) as e:
        call(twins)
    assert needle in str(e.value)


@pytest.mark.gpu
def test_rmat16_merge_half_on_the_gpu():
    """PageRank with merge_similarity 0.5 on R-MAT 16 (undirected): prints the merged sizes,
    the build time, the normalized L1 error against the exact run and both times (the second
    call of each: kernels built, the merged graph cached)."""
    g = onyx.Graph.from_edgelist(datasets.rmat(16, seed=3))
    runs = {}
    for name, kw in (("exact", {}), ("merge 0.5", dict(approximation=merge(0.5)))):
        for _ in range(2):
            started = time.perf_counter()
            df, info = onyx.pagerank(g, return_info=True, **kw)
            seconds = time.perf_counter() - started
            runs.setdefault(name + " first", info)
        runs[name] = (df["pagerank"].to_numpy(), info, seconds)
    (reference, _, t_exact), (rank, info, t_merged) = runs["exact"], runs["merge 0.5"]
    error = np.abs(rank - reference).sum() / np.abs(reference).sum()
    built = runs["merge 0.5 first"].estimate["merge_build_ms"]
    print(f"R-MAT 16 merge_similarity 0.5: {info.estimate['merged_vertices']:,} of {g.n:,} "
          f"vertices, {info.estimate['merged_edges']:,} of {g.m:,} edges, built in "
          f"{built:.1f} ms; {t_merged * 1e3:.1f} ms against exact {t_exact * 1e3:.1f} ms; "
          f"normalized L1 error {error:.3e}")
    assert info.estimate["merged_vertices"] < g.n and info.estimate["merge_build_ms"] == 0
    assert len(rank) == g.n and abs(rank.sum() - 1) < 1e-4 and error < 0.5
