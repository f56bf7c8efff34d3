import numpy as np
import pandas as pd
import pytest
from numba import cuda

from graphs import build, csr_edges
from onyx_rapids import Execution, Graph, device, frontier, operators as ops

rng = np.random.default_rng(11)


@cuda.jit(device=True)
def scaled(f, u, v, e, x, w):
    return x[u, f] * w[e, 0]


@cuda.jit(device=True)
def plus_one_if_big(f, v, x, cutoff):
    if x[v, f] > cutoff:
        x[v, f] += 1.0
        return True
    return False


@cuda.jit(device=True)
def double(f, v, x):
    x[v, f] *= 2.0
    return True


@cuda.jit(device=True)
def double_acc(f, v, acc):
    acc[v, f] *= 2.0
    return True


def _setup(k, seed):
    g = build("directed", seed=seed)
    src, dst = csr_edges(g)
    r = np.random.default_rng(seed)
    x = r.random((g.n, k)).astype(np.float32) + 0.5
    w = r.random((g.m, 1)).astype(np.float32) + 0.1
    active = r.random(g.n) < 0.6
    return g, src, dst, x, w, active


MAPPINGS = [(1, True), (3, True), (8, True), (40, True), (3, False), (40, False)]
CASES = [("sum", k, fa) for k, fa in MAPPINGS] + [
    (reduce, k, fa) for reduce in ("min", "max") for k, fa in [(1, True), (3, True), (3, False)]]


@pytest.mark.parametrize("direction", ["push", "pull"])
@pytest.mark.parametrize("reduce, k, fa", CASES)
def test_edgemap_matches_numpy(reduce, k, fa, direction):
    g, src, dst, x, w, active = _setup(k, seed=k)
    start = (rng.random((g.n, k)) * 2).astype(np.float32)
    out = device.asarray(start.copy())
    act_out = frontier.empty(g.n)
    ops.edgemap(g, scaled, "acc", dict(x=device.asarray(x), w=device.asarray(w), acc=out),
                reduce=reduce, active_in=frontier.from_vertices(g.n, np.flatnonzero(active)),
                active_out=act_out, direction=direction, options=ops.MapOptions(feature_aware=fa))
    expected = start.astype(np.float64)
    contributions = x[src] * w[:, :1]
    chosen = active[src]
    if reduce == "sum":
        np.add.at(expected, dst[chosen], contributions[chosen])
        reached = np.zeros(g.n, bool)
        reached[dst[chosen]] = True
    else:
        ufunc = np.minimum if reduce == "min" else np.maximum
        ufunc.at(expected, dst[chosen], contributions[chosen])
        reached = (expected != start).any(axis=1)
    assert np.allclose(device.to_host(out), expected, rtol=1e-5, atol=1e-5)
    assert np.array_equal(device.to_host(frontier.to_mask(act_out, g.n)), reached)


@pytest.mark.parametrize("k, fa", [(4, True), (40, True), (4, False)])
def test_vertexmap_progress_and_activation(k, fa):
    g = build("directed", seed=2)
    x0 = rng.random((g.n, k)).astype(np.float32)
    active = rng.random(g.n) < 0.7
    x = device.asarray(x0.copy())
    out = frontier.empty(g.n)
    ops.vertexmap(g, [plus_one_if_big, double], dict(x=x, cutoff=0.8), k=k,
                  active_in=frontier.from_vertices(g.n, np.flatnonzero(active)), active_out=out,
                  options=ops.MapOptions(feature_aware=fa))
    big = x0 > 0.8
    step1 = np.where(big & active[:, None], x0 + 1, x0)
    proceeds = active & big.any(axis=1)  # any_feature_updated gates the second step
    expected = np.where(proceeds[:, None], step1 * 2, step1)
    assert np.allclose(device.to_host(x), expected)
    assert np.array_equal(device.to_host(frontier.to_mask(out, g.n)), proceeds)


# (64, 64), (96, 96), (128, 32): groups wider than a warp whose segments are whole warps
# (block_segment_sum's shuffle path; 96 leaves a padding warp); (40, 20) straddles warps
@pytest.mark.parametrize("k, segment, fa", [(6, 3, True), (6, 6, True), (5, 5, True),
                                            (40, 20, True), (64, 64, True), (96, 96, True),
                                            (128, 32, True), (6, 2, False)])
def test_normalize_segments(k, segment, fa):
    g = build("directed", seed=4)
    values = rng.random((g.n, k)).astype(np.float32)
    values[0] = 0.0  # a zero row stays zero
    src = device.asarray(values)
    dst = device.zeros((g.n, k), np.float32)
    ops.normalize(g, "src", dict(src=src, dst=dst), k=k, segment=segment, into="dst",
                  options=ops.MapOptions(feature_aware=fa))
    rows = values.reshape(g.n, k // segment, segment).astype(np.float64)
    sums = rows.sum(axis=2, keepdims=True)
    expected = np.where(sums != 0, rows / np.where(sums != 0, sums, 1), rows).reshape(g.n, k)
    assert np.allclose(device.to_host(dst), expected, atol=1e-6)


@pytest.mark.parametrize("fa", [True, False])
def test_fold_matches_unfolded_and_fold_order_is_checked(fa):
    g, src, dst, x, w, _ = _setup(4, seed=9)
    args = dict(x=device.asarray(x), w=device.asarray(w))
    a = dict(args, acc=device.zeros((g.n, 4), np.float32))
    b = dict(args, acc=device.zeros((g.n, 4), np.float32))
    ops.edgemap(g, scaled, "acc", a, direction="pull", options=ops.MapOptions(feature_aware=fa))
    ops.vertexmap(g, double_acc, a, k=4, options=ops.MapOptions(feature_aware=fa))
    ops.foldmap(g, [ops.Edge(scaled, "acc"), ops.Vertex(double_acc)], b, k=4,
                options=ops.MapOptions(feature_aware=fa))
    expected = np.zeros((g.n, 4))
    np.add.at(expected, dst, x[src] * w)
    assert np.allclose(device.to_host(a["acc"]), 2 * expected, atol=1e-5)
    assert np.allclose(device.to_host(b["acc"]), 2 * expected, atol=1e-5)
    with pytest.raises(ValueError, match="illegal fold in pull"):
        ops.foldmap(g, [ops.Vertex(double), ops.Edge(scaled, "acc")], b, k=4, direction="pull")
    with pytest.raises(ValueError, match="illegal fold in push"):
        ops.foldmap(g, [ops.Edge(scaled, "acc"), ops.Vertex(double)], b, k=4, direction="push")


def test_kernel_cache_hits_and_misses():
    g, _, _, x, w, _ = _setup(2, seed=1)
    args = dict(x=device.asarray(x), w=device.asarray(w), acc=device.zeros((g.n, 2), np.float32))
    ops.KERNEL_CACHE.clear()
    ops.edgemap(g, scaled, "acc", args, options=ops.MapOptions(feature_aware=False))
    ops.edgemap(g, scaled, "acc", args, options=ops.MapOptions(feature_aware=False))
    assert ops.kernel_cache_info()["hits"] == 1 and ops.kernel_cache_info()["misses"] == 1
    ops.edgemap(g, scaled, "acc", args, k=1,
                options=ops.MapOptions(feature_aware=False))  # another k
    assert ops.kernel_cache_info()["misses"] == 2

    def make(c):
        @cuda.jit(device=True)
        def shifted(f, u, v, e, x):
            return x[u, f] + c
        return shifted

    ops.edgemap(g, make(1.0), "acc", args, options=ops.MapOptions(feature_aware=False))
    ops.edgemap(g, make(2.0), "acc", args,
                options=ops.MapOptions(feature_aware=False))  # a new closure constant
    assert ops.kernel_cache_info()["misses"] == 4


def test_foldmap_plans_are_equal_for_equal_calls_and_compile_nothing():
    g, _, _, x, w, _ = _setup(4, seed=1)
    args = dict(x=device.asarray(x), w=device.asarray(w), acc=device.zeros((g.n, 4), np.float32))
    steps = [ops.Edge(scaled, "acc"), ops.Vertex(double_acc)]

    def plan(k, fa=True):
        checked = ops._check_steps(g, steps, args, k=k, direction="pull", scratch=0,
                                   active_in=None, active_out=None)
        return ops._plan(g, checked, ops.MapOptions(feature_aware=fa), all_active=True,
                         has_active_out=False)

    ops.KERNEL_CACHE.clear()
    first, second = plan(4), plan(4)
    assert first == second and hash(first.key) == hash(second.key)
    assert ops.kernel_cache_info()["misses"] == 0  # planning compiles and launches nothing
    smaller = plan(2)
    assert smaller != first and smaller.key != first.key
    assert (smaller.spec.k, smaller.spec.group, first.spec.k, first.spec.group) == (2, 2, 4, 4)
    assert plan(4, fa=False).spec.mapping == "nfa" != first.spec.mapping
    ops.foldmap(g, steps, args, k=4, direction="pull")  # the call runs exactly that plan
    assert list(ops.KERNEL_CACHE.entries) == [first.key]
    with pytest.raises(ValueError, match="illegal fold in push direction"):
        ops._check_steps(g, steps, args, k=4, direction="push", scratch=0,
                         active_in=None, active_out=None)


def test_generated_source_can_be_dumped(tmp_path, monkeypatch):
    g, _, _, x, w, _ = _setup(2, seed=1)
    monkeypatch.setenv("ONYX_RAPIDS_DUMP_KERNELS", str(tmp_path))
    ops.KERNEL_CACHE.clear()
    args = dict(x=device.asarray(x), w=device.asarray(w), acc=device.zeros((g.n, 2), np.float32))
    ops.edgemap(g, scaled, "acc", args, direction="pull",
                options=ops.MapOptions(feature_aware=False))
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and "def kernel(" in files[0].read_text()


def test_map_options_take_an_executions_fields():
    e = Execution(feature_aware=False, block_size=64, width=2, edge_access="merged", fused=True)
    assert ops.MapOptions.of(e, scratch=4) == ops.MapOptions(
        feature_aware=False, block_size=64, width=2, edge_access="merged", scratch=4)
    assert ops.MapOptions.of(Execution()) == ops.MapOptions()


@pytest.mark.parametrize("call, error, match", [
    (lambda g, a: ops.foldmap(g, [ops.Vertex(double)], a, k=0), ValueError, "k"),
    (lambda g, a: ops.edgemap(g, scaled, "acc", a, reduce="mean"), ValueError, "reduce"),
    (lambda g, a: ops.edgemap(g, scaled, "acc", a, direction="up"), ValueError, "direction"),
    (lambda g, a: ops.edgemap(g, scaled, "nope", a), ValueError, "nope"),
    (lambda g, a: ops.edgemap(g, scaled, "acc", {"acc": a["acc"], "x": a["x"]}), ValueError, "'w'"),
    (lambda g, a: ops.vertexmap(g, double, a, k=2, active_in=np.zeros(3, np.int64)), ValueError,
     "active_in"),
    (lambda g, a: ops.vertexmap(g, double, a, k=2,
                                options=ops.MapOptions(block_size=48)), ValueError, "block_size"),
    (lambda g, a: ops.vertexmap(g, double, [1, 2], k=2), TypeError, "args"),
    (lambda g, a: ops.vertexmap(g, double, dict(a, x=[1.0]), k=2), TypeError, "args\\['x'\\]"),
    (lambda g, a: ops.vertexmap(g, 42, a, k=2), TypeError, "function"),
    (lambda g, a: ops.normalize(g, "x", a, k=2, segment=3), ValueError, "segment"),
    (lambda g, a: ops.vertexmap(g, double, a, k=2, feature_aware=False), TypeError,
     "feature_aware"),  # how to run is one options value, not loose keywords
])
def test_bad_operator_inputs(call, error, match):
    g, _, _, x, w, _ = _setup(2, seed=1)
    args = dict(x=device.asarray(x), w=device.asarray(w), acc=device.zeros((g.n, 2), np.float32))
    with pytest.raises(error, match=match):
        call(g, args)


@pytest.mark.parametrize("k", [1, 4])
@pytest.mark.parametrize("reduce", ["sum", "min"])
def test_pull_with_a_warp_sharing_each_vertex(k, reduce):
    """Dense in-edges: several groups of a warp split one vertex's edges, then combine."""
    r = np.random.default_rng(k)
    n, m = 8, 200
    g = Graph.from_edgelist(pd.DataFrame({"src": r.integers(0, n, m), "dst": r.integers(0, n, m)}),
                            multigraph=True,  # keep the parallel edges: 25 in-edges a vertex
                            directed=True)
    src, dst = csr_edges(g)
    assert g.m == m
    x = r.random((n, k)).astype(np.float32)
    w = r.random((m, 1)).astype(np.float32)
    out = device.zeros((n, k), np.float32) if reduce == "sum" else device.full((n, k), 9.0, np.float32)
    ops.edgemap(g, scaled, "acc", dict(x=device.asarray(x), w=device.asarray(w), acc=out),
                reduce=reduce, direction="pull")
    expected = np.zeros((n, k)) if reduce == "sum" else np.full((n, k), 9.0)
    (np.add if reduce == "sum" else np.minimum).at(expected, dst, x[src] * w)
    assert np.allclose(device.to_host(out), expected, rtol=1e-5)


@cuda.jit(device=True)
def leave_doubled(f, v, x, scratch):
    scratch[f] = 2.0 * x[v, f]
    return True


@cuda.jit(device=True)
def take_neighbour(f, v, out, scratch, k):
    out[v, f] = scratch[(f + 1) % k]
    return True


@pytest.mark.parametrize("k, fa", [(4, True), (40, True), (4, False)])
def test_foldmap_scratch_hands_values_between_steps(k, fa):
    g = build("directed", seed=7)
    x = rng.random((g.n, k)).astype(np.float32)
    out = device.zeros((g.n, k), np.float32)
    ops.foldmap(g, [ops.Vertex(leave_doubled), ops.Vertex(take_neighbour)],
                dict(x=device.asarray(x), out=out, k=k), k=k,
                options=ops.MapOptions(scratch=k, feature_aware=fa))
    assert np.allclose(device.to_host(out), 2 * np.roll(x, -1, axis=1))
    with pytest.raises(ValueError, match="scratch"):
        ops.foldmap(g, [ops.Vertex(leave_doubled)], dict(x=device.asarray(x)), k=k)
    with pytest.raises(ValueError, match="48 KiB"):
        ops.foldmap(g, [ops.Vertex(leave_doubled)], dict(x=device.asarray(x)), k=k,
                    options=ops.MapOptions(scratch=100_000))


@pytest.mark.parametrize("k, segment, fa", [(6, 3, True), (5, 5, True), (40, 20, True),
                                            (64, 32, True), (96, 96, True), (6, 2, False)])
def test_log_normalize_is_a_shifted_softmax(k, segment, fa):
    g = build("directed", seed=4)
    logs = (rng.random((g.n, k)) * 50 - 1e5).astype(np.float32)  # exp() would underflow
    dst = device.zeros((g.n, k), np.float32)
    ops.vertexmap(g, [ops.Normalize("src", "dst", segment, log=True)],
                  dict(src=device.asarray(logs), dst=dst), k=k,
                  options=ops.MapOptions(feature_aware=fa))
    rows = logs.reshape(g.n, k // segment, segment).astype(np.float64)
    e = np.exp(rows - rows.max(axis=2, keepdims=True))
    expected = (e / e.sum(axis=2, keepdims=True)).reshape(g.n, k)
    assert np.allclose(device.to_host(dst), expected, atol=1e-6)


@cuda.jit(device=True)
def even_vertex(f, v):
    return v % 2 == 0


@pytest.mark.parametrize("d, fa", [(2, True), (4, True), (6, True), (3, False)])
def test_solve_step_solves_each_row_and_respects_progress(d, fa):
    g = build("directed", seed=d)
    k = d * d + d
    r = np.random.default_rng(100 + d)
    rows = []
    for _ in range(g.n):
        m = r.standard_normal((d, d + 1))
        rows.append(np.concatenate([(m @ m.T).ravel(), r.standard_normal(d)]))
    rows = np.array(rows, dtype=np.float32)
    before = r.random((g.n, d)).astype(np.float32)
    x = device.asarray(before.copy())
    args = dict(stats=device.asarray(rows), x=x, lam=0.25)
    ops.vertexmap(g, [ops.Vertex(even_vertex), ops.Solve("stats", "x", ridge="lam")], args,
                  k=k, options=ops.MapOptions(feature_aware=fa))
    got = device.to_host(x)
    for v in range(g.n):
        if v % 2:
            assert np.array_equal(got[v], before[v])  # progress off: left as it was
        else:
            a = rows[v, :d * d].astype(np.float64).reshape(d, d) + 0.25 * np.eye(d)
            want = np.linalg.solve(a, rows[v, d * d:].astype(np.float64))
            np.testing.assert_allclose(got[v], want, rtol=2e-4, atol=1e-5)


def test_solve_step_rejects_bad_shapes():
    g = build("directed", seed=1)
    stats = device.zeros((g.n, 6), np.float32)
    x = device.zeros((g.n, 2), np.float32)
    with pytest.raises(ValueError, match="k = d\\*d \\+ d"):
        ops.vertexmap(g, [ops.Solve("stats", "x", ridge="lam")], dict(stats=stats, x=x, lam=0.1),
                      k=5)
    with pytest.raises(ValueError, match="ridge 'lam' must name a float scalar"):
        ops.vertexmap(g, [ops.Solve("stats", "x", ridge="lam")], dict(stats=stats, x=x), k=6)
    with pytest.raises(ValueError, match="Solve destination 'x'"):
        ops.vertexmap(g, [ops.Solve("stats", "x", ridge="lam")],
                      dict(stats=stats, x=device.zeros((g.n, 1), np.float32), lam=0.1), k=6)


def test_profile_kernels_counts_each_launch_and_stops_after():
    k = 2
    g, _, _, x, _, _ = _setup(k, seed=5)
    x = device.asarray(x)
    with ops.profile_kernels() as times:
        for _ in range(3):
            ops.vertexmap(g, double, dict(x=x), k=k)
        ops.vertexmap(g, double, dict(x=x), k=k, options=ops.MapOptions(feature_aware=False))
    assert sorted(n for n, _ in times.values()) == [1, 3]
    assert all(ms >= 0 for _, ms in times.values())
    assert {spec.mapping for spec in times} == {"warp", "nfa"}
    ops.vertexmap(g, double, dict(x=x), k=k)  # outside the block: not recorded
    assert not ops.KERNEL_TIMES.enabled and not ops.KERNEL_TIMES.entries


@cuda.jit(device=True)
def row_total_through_lanes(f, u, v, e, x, k, lanes):
    total = 0.0
    if lanes != 0:  # share the source's row over the property's lanes
        mine = x[u, f]
        for j in range(k):
            total += ops.group_broadcast(mine, lanes, f, j)
    else:
        for j in range(k):
            total += x[u, j]
    return total * (f + 1)


@pytest.mark.parametrize("k, fa, direction", [(3, True, "pull"), (8, True, "pull"),
                                              (3, True, "push"), (40, True, "pull"),
                                              (3, False, "pull")])
def test_lanes_share_values_among_a_property_features(k, fa, direction):
    g, src, dst, x, _, _ = _setup(k, seed=20 + k)
    acc = device.zeros((g.n, k), np.float32)
    ops.edgemap(g, row_total_through_lanes, "acc", dict(x=device.asarray(x), acc=acc, k=k),
                direction=direction, options=ops.MapOptions(feature_aware=fa))
    expected = np.zeros((g.n, k))
    np.add.at(expected, dst, x[src].sum(axis=1, dtype=np.float64)[:, None] * np.arange(1, k + 1))
    np.testing.assert_allclose(device.to_host(acc), expected, rtol=1e-4)


def test_lanes_is_reserved():
    g, _, _, x, _, _ = _setup(2, seed=1)
    with pytest.raises(ValueError, match="'lanes' is reserved"):
        ops.vertexmap(g, double, dict(x=device.asarray(x), lanes=1), k=2)


@cuda.jit(device=True)
def lanes_seen(f, v, seen, lanes):
    seen[v, f] = lanes
    return True


@pytest.mark.parametrize("k, fa", [(3, True), (40, True), (3, False)])
def test_lanes_names_the_property_lanes_or_zero(k, fa):
    g, _, _, _, _, _ = _setup(k, seed=2)
    seen = device.zeros((g.n, k), np.int64)
    ops.vertexmap(g, lanes_seen, dict(seen=seen), k=k, options=ops.MapOptions(feature_aware=fa))
    got = device.to_host(seen)
    if fa and k <= 32:
        T = ops.next_pow2(k)
        base = (np.arange(g.n) * T) % 32  # one group per vertex in a vertex-only kernel
        np.testing.assert_array_equal(got, np.repeat((((1 << k) - 1) << base)[:, None], k, 1))
    else:
        assert not got.any()


@pytest.fixture
def split_everything(monkeypatch):
    """Pull kernels treat every vertex with in-edges as heavy, in chunks of 2 rounds."""
    monkeypatch.setattr(ops, "HEAVY_ROUNDS", 1)
    monkeypatch.setattr(ops, "HEAVY_MEAN", 0)
    monkeypatch.setattr(ops, "CHUNK_ROUNDS", 2)


SPLIT_CASES = [c for c in CASES if c[2]]  # feature-aware mappings split heavy vertices


@pytest.mark.parametrize("reduce, k, fa", SPLIT_CASES)
def test_pull_splits_heavy_vertices_into_chunks(reduce, k, fa, split_everything):
    with ops.profile_kernels() as times:
        test_edgemap_matches_numpy(reduce, k, fa, "pull")
    assert sum(n for spec, (n, _) in times.items() if spec.chunk_kernel) == 1
    main = [spec for spec in times if not spec.chunk_kernel]
    assert len(main) == 1 and main[0].heavy == main[0].coop and main[0].chunk > 0


def test_folded_pull_reads_the_chunks_aggregates(split_everything):
    with ops.profile_kernels() as times:
        test_fold_matches_unfolded_and_fold_order_is_checked(True)
    assert any(spec.chunk_kernel for spec in times)


def test_no_split_without_heavy_vertices_or_for_nfa():
    g, _, _, x, w, _ = _setup(3, seed=3)
    args = dict(x=device.asarray(x), w=device.asarray(w), acc=device.zeros((g.n, 3), np.float32))
    with ops.profile_kernels() as times:
        ops.edgemap(g, scaled, "acc", args, direction="pull")  # tiny in-degrees: none heavy
        ops.edgemap(g, scaled, "acc", args, direction="pull",
                    options=ops.MapOptions(feature_aware=False))
    assert len(times) == 2 and not any(s.chunk_kernel or s.heavy for s in times)


def test_heavy_vertices_need_a_multiple_of_the_mean_in_degree(monkeypatch):
    """A vertex is heavy from HEAVY_ROUNDS x coop in-edges and HEAVY_MEAN x the mean in-degree
    (2 here): the hub of a star (21 in-edges) is cut into chunks up to HEAVY_MEAN 10 and not
    from 11 on, and the sums are the same either way."""
    monkeypatch.setattr(ops, "HEAVY_ROUNDS", 1)
    monkeypatch.setattr(ops, "CHUNK_ROUNDS", 2)
    ring = np.arange(20)
    src = np.r_[ring, ring]
    dst = np.r_[(ring + 1) % 20, np.zeros(20, np.int64)]  # a ring, and every vertex -> 0
    g = Graph.from_edgelist(pd.DataFrame({"src": src, "dst": dst}), multigraph=True, directed=True)
    x = rng.random((g.n, 2)).astype(np.float32)
    expected = np.zeros((g.n, 2))
    np.add.at(expected, dst, x[src])
    w = np.ones((g.m, 1), np.float32)
    for mean, heavy in ((0, 2), (4, 8), (10, 20), (11, 0)):
        monkeypatch.setattr(ops, "HEAVY_MEAN", mean)
        acc = device.zeros((g.n, 2), np.float32)
        with ops.profile_kernels() as times:
            ops.edgemap(g, scaled, "acc", dict(x=device.asarray(x), w=device.asarray(w),
                                               acc=acc), direction="pull")
        spec = next(s for s in times if not s.chunk_kernel)
        assert spec.coop == 2 and spec.heavy == heavy, mean
        assert any(s.chunk_kernel for s in times) == (heavy > 0)
        if heavy:
            owners, _ = ops._heavy_chunks(g, spec.heavy, spec.chunk)
            assert set(device.to_host(owners).tolist()) == {0}
        assert np.allclose(device.to_host(acc), expected, rtol=1e-5)


@cuda.jit(device=True)
def halve_into(f, v, x, y):
    y[v, f] = 0.5 * x[v, f]
    return f == 0  # progress off for the other features: MaxChange still sees every vertex


@pytest.mark.parametrize("k, fa, width, fold", [(1, True, None, True), (3, True, None, False),
                                                (8, True, 2, True), (40, True, 4, False),
                                                (40, True, 1, True), (3, False, None, True)])
def test_max_change_step_matches_numpy(k, fa, width, fold):
    g, src, dst, x, w, _ = _setup(k, seed=20 + k)
    x[3, k - 1] = -7.5  # the largest |y| is a negative entry's
    y0 = rng.random((g.n, k)).astype(np.float32)
    weight = rng.integers(1, 1000, g.n).astype(np.int32)
    threshold = float(np.median(np.abs(0.5 * x).max(axis=1)))  # about half the rows move
    args = dict(x=device.asarray(x), w=device.asarray(w), y=device.asarray(y0),
                acc=device.zeros((g.n, k), np.float32), stop=device.zeros(2, np.float32),
                moved=device.zeros(1, np.int64), threshold=threshold,
                weight=device.asarray(weight), sums=device.zeros(k, np.float64))
    steps = [ops.Vertex(halve_into),
             ops.MaxChange("y", "x", "stop", moved="moved", threshold="threshold",
                           weight="weight", sums="sums")]
    if fold:  # after an edge step, in the folded pull kernel
        ops.foldmap(g, [ops.Edge(scaled, "acc")] + steps, args, k=k,
                    options=ops.MapOptions(feature_aware=fa, width=width))
    else:
        ops.vertexmap(g, steps, args, k=k, options=ops.MapOptions(feature_aware=fa, width=width))
    y = 0.5 * x
    expected = [np.abs(y - x).max(), np.abs(y).max()]
    np.testing.assert_array_equal(device.to_host(args["stop"]), np.float32(expected))
    movers = (np.abs(y - x) > threshold).any(axis=1)  # each moved row's weight once
    assert 0 < movers.sum() < g.n
    assert int(device.to_host(args["moved"])[0]) == int(weight[movers].sum())
    # the L1 change of each feature, in float64 (PageRank's stop test)
    np.testing.assert_allclose(device.to_host(args["sums"]),
                               np.abs(y.astype(np.float64) - x).sum(axis=0), rtol=1e-12)
    if fold:
        np.testing.assert_allclose(device.to_host(args["acc"]),
                                   _pull_sums(g, src, dst, x, w), rtol=1e-5)


def _pull_sums(g, src, dst, x, w):
    out = np.zeros_like(x, dtype=np.float64)
    np.add.at(out, dst, x[src] * w[:, :1])
    return out


def test_max_change_nan_counts_as_infinite_and_stop_keeps_larger_values():
    g, _, _, x, _, _ = _setup(4, seed=5)
    x[7, 2] = np.nan
    args = dict(x=device.asarray(x), y=device.zeros((g.n, 4), np.float32),
                stop=device.asarray(np.float32([1e30, 0.0])))
    steps = [ops.Vertex(halve_into), ops.MaxChange("y", "x", "stop")]
    ops.vertexmap(g, steps, args, k=4)
    assert device.to_host(args["stop"]).tolist() == [np.inf, np.inf]
    x[7, 2] = 1.0
    big = np.float32([1e30, 2e30])  # maxima are combined with what `into` holds
    args = dict(args, x=device.asarray(x), stop=device.asarray(big.copy()))
    ops.vertexmap(g, steps, args, k=4)
    np.testing.assert_array_equal(device.to_host(args["stop"]), big)


def test_max_change_in_a_vertexmap_measures_only_its_active_vertices():
    g, _, _, x, _, _ = _setup(3, seed=8)
    active = np.zeros(g.n, bool)
    active[[1, 4, 5]] = True
    y0 = np.full((g.n, 3), 100.0, np.float32)  # what inactive rows keep: far from x
    args = dict(x=device.asarray(x), y=device.asarray(y0), stop=device.zeros(2, np.float32),
                sums=device.zeros(3, np.float64))
    ops.vertexmap(g, [ops.Vertex(halve_into), ops.MaxChange("y", "x", "stop", sums="sums")],
                  args, k=3, active_in=frontier.from_mask(device.asarray(active)))
    y = device.to_host(args["y"])
    np.testing.assert_array_equal(y[~active], y0[~active])
    d = np.abs(0.5 * x[active].astype(np.float64) - x[active])
    np.testing.assert_allclose(device.to_host(args["sums"]), d.sum(axis=0), rtol=1e-12)
    assert device.to_host(args["stop"])[0] == np.float32(d.max())


def test_max_change_refuses_push_and_a_bad_into():
    g, _, _, x, w, _ = _setup(2, seed=6)
    args = dict(x=device.asarray(x), w=device.asarray(w), y=device.asarray(x.copy()),
                acc=device.zeros((g.n, 2), np.float32), stop=device.zeros(2, np.float32))
    with pytest.raises(ValueError, match="MaxChange runs in pull"):
        ops.foldmap(g, [ops.Vertex(halve_into), ops.MaxChange("y", "x", "stop"),
                        ops.Edge(scaled, "acc")], args, k=2, direction="push")
    for bad in (device.zeros(2, np.float64), device.zeros(3, np.float32)):
        with pytest.raises(ValueError, match="MaxChange into 'stop' must name a float32"):
            ops.vertexmap(g, [ops.MaxChange("y", "x", "stop")], dict(args, stop=bad), k=2)
    with pytest.raises(ValueError, match="MaxChange old 'nope' is not in args"):
        ops.vertexmap(g, [ops.MaxChange("y", "nope", "stop")], args, k=2)
    for bad in (device.zeros(2, np.float32), device.zeros(3, np.float64)):
        with pytest.raises(ValueError, match="MaxChange sums 's' must name a float64 device "
                                             "array of k = 2"):
            ops.vertexmap(g, [ops.MaxChange("y", "x", "stop", sums="s")], dict(args, s=bad),
                          k=2)
    moved = dict(moved=device.zeros(1, np.int64), t=0.5, deg=device.zeros(g.n, np.int32))
    for key, bad, message in (("moved", device.zeros(1, np.int32),
                               "moved 'moved' must name an int64"),
                              ("t", device.zeros(1, np.float32),
                               "threshold 't' must name a number"),
                              ("deg", device.zeros(g.n, np.float32), "weight 'deg' must name an "
                               "integer device array of n"),
                              ("deg", device.zeros(g.n + 1, np.int32), "weight 'deg' must name")):
        with pytest.raises(ValueError, match=message):
            ops.vertexmap(g, [ops.MaxChange("y", "x", "stop", moved="moved", threshold="t",
                                            weight="deg")], {**args, **moved, key: bad}, k=2)


def test_host_ids_set_the_same_bits_as_a_mask():
    for n, ids in [(70, [0, 3, 31, 32, 69, 3]), (5, []), (64, [63]), (100, list(range(0, 100, 3)))]:
        mask = np.zeros(n, dtype=bool)
        mask[ids] = True
        expected = device.to_host(frontier.from_mask(device.asarray(mask)))
        got = device.to_host(frontier.from_vertices(n, np.asarray(ids, dtype=np.int64)))
        assert got.dtype == np.uint32 and np.array_equal(got, expected), (n, ids)
    with pytest.raises(ValueError, match=r"internal ids in \[0, 5\)"):
        frontier.from_vertices(5, [5])
