"""The float64 oracles of ``oracles_learning`` checked against independent references
(networkx, dense linear algebra, brute-force enumeration) on small seeded random graphs."""

import numpy as np
import networkx as nx
import pytest

import oracles_learning as ol

SEEDS = [0, 1, 2]


def _random_digraph(rng, n, m, dangling=2, simple=False):
    """Directed edges (internal ids); the last ``dangling`` vertices have no out-edges."""
    src = rng.integers(0, n - dangling, m)
    dst = rng.integers(0, n, m)
    if simple:
        pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
        src, dst = pairs[:, 0], pairs[:, 1]
    return src.astype(np.int64), dst.astype(np.int64)


def _both_directions(u, v):
    u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
    return np.concatenate([u, v]), np.concatenate([v, u])


def _random_tree(rng, n):
    return [(int(rng.integers(0, i)), i) for i in range(1, n)]


def _random_potential(rng, k):
    a = rng.random((k, k)) + 0.2
    return a + a.T


# ----------------------------------------------------------------------------- personalized PR


@pytest.mark.parametrize("seed", SEEDS)
def test_ppr_matches_networkx(seed):
    rng = np.random.default_rng(seed)
    n = 14
    src, dst = _random_digraph(rng, n, 40, simple=True)  # networkx DiGraph merges parallels
    sources = rng.choice(n, size=3, replace=False)
    sources[2] = n - 1  # a dangling source
    x = ol.personalized_pagerank(n, src, dst, sources)
    assert x.shape == (n, 3)
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    for f, s in enumerate(sources.tolist()):
        ref = nx.pagerank(G, alpha=0.85, personalization={s: 1}, dangling={s: 1},
                          tol=1e-15, max_iter=100_000)
        ref = np.array([ref[v] for v in range(n)])
        assert np.abs(x[:, f] - ref).sum() < 1e-9
        assert abs(x[:, f].sum() - 1) < 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_ppr_matches_linear_solve_multigraph(seed):
    rng = np.random.default_rng(seed + 10)
    n = 11
    src, dst = _random_digraph(rng, n, 35, dangling=3)
    src[:2], dst[:2] = 4, 4  # a self-loop, twice (a multi-edge)
    src[2:4], dst[2:4] = 0, 5  # a parallel edge
    alpha = 0.7
    sources = np.array([0, n - 1, 4, 0])
    x = ol.personalized_pagerank(n, src, dst, sources, alpha=alpha)
    C = np.zeros((n, n))  # C[u, v] = number of edges u -> v
    for u, v in zip(src, dst):
        C[u, v] += 1
    out = C.sum(axis=1)
    P = np.divide(C, out[:, None], out=np.zeros_like(C), where=out[:, None] > 0)
    d = (out == 0).astype(float)
    for f, s in enumerate(sources):
        e = np.zeros(n)
        e[s] = 1
        ref = np.linalg.solve(np.eye(n) - alpha * P.T - alpha * np.outer(e, d), (1 - alpha) * e)
        assert np.abs(x[:, f] - ref).sum() < 1e-10


# ----------------------------------------------------------------------------- APPNP


def _dense_a_hat(n, src, dst):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(src.tolist(), dst.tolist()))
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    A = nx.to_numpy_array(G, nodelist=range(n), weight=None)
    AI = A + np.eye(n)
    Dm = np.diag(AI.sum(axis=1) ** -0.5)
    return Dm @ AI @ Dm


@pytest.mark.parametrize("seed", SEEDS)
def test_appnp_dense_and_closed_form(seed):
    rng = np.random.default_rng(seed + 20)
    n, k = 13, 4
    src, dst = _random_digraph(rng, n, 30, dangling=0)
    src[:3], dst[:3] = [2, 2, 5], [2, 7, 7]  # a self-loop and a parallel edge
    X = rng.normal(size=(n, k))
    alpha = 0.1 + 0.2 * rng.random()
    A_hat = _dense_a_hat(n, src, dst)
    assert np.allclose(ol.gcn_normalized_adjacency(n, src, dst), A_hat, atol=1e-15)
    for K in (0, 1, 3, 10):
        H = ol.feature_propagation(n, src, dst, X, alpha=alpha, iterations=K)
        ref = X.copy()
        for _ in range(K):
            ref = (1 - alpha) * A_hat @ ref + alpha * X
        assert np.allclose(H, ref, rtol=0, atol=1e-12)
        T = (1 - alpha) * A_hat
        closed = np.linalg.matrix_power(T, K) @ X + alpha * sum(
            (np.linalg.matrix_power(T, i) @ X for i in range(K)), np.zeros_like(X))
        assert np.allclose(H, closed, rtol=0, atol=1e-12)
    h1 = ol.feature_propagation(n, src, dst, X[:, 0], alpha=alpha)
    assert h1.shape == (n,)
    assert np.allclose(h1, ol.feature_propagation(n, src, dst, X, alpha=alpha)[:, 0])


# ----------------------------------------------------------------------------- ALS


def test_bipartite_sides():
    src, dst = _both_directions([4, 1, 3], [1, 5, 2])
    assert ol.bipartite_sides(6, src, dst).tolist() == [0, 0, 0, 1, 1, 1]
    src, dst = _both_directions([0, 1, 2], [1, 2, 0])
    with pytest.raises(ValueError):
        ol.bipartite_sides(3, src, dst)
    with pytest.raises(ValueError):
        ol.bipartite_sides(2, np.array([0, 1]), np.array([0, 1]))


def _normal_equation(lf, nbrs, ws, lam, k):
    if not nbrs:
        return np.zeros(k)
    A = lam * np.eye(k)
    b = np.zeros(k)
    for u, w in zip(nbrs, ws):
        A += np.outer(lf[u], lf[u])
        b += w * lf[u]
    return np.linalg.solve(A, b)


@pytest.mark.parametrize("seed", SEEDS)
def test_als_half_steps_solve_normal_equations(seed):
    rng = np.random.default_rng(seed + 30)
    users, items, k, lam = 4, 5, 3, 0.1 + rng.random()
    n = users + items + 1  # the last vertex (an item) has no ratings
    pairs = [(u, users + i) for u in range(users) for i in range(items) if rng.random() < 0.6]
    pairs += [(0, users)] if (0, users) not in pairs else []
    r = rng.integers(1, 6, len(pairs)).astype(float)
    u, v = np.array(pairs).T
    src, dst = _both_directions(u, v)
    w = np.concatenate([r, r])
    sides = np.array([0] * users + [1] * (items + 1))
    init = rng.random((n, k))
    lf = ol.als(n, src, dst, w, sides, k, lam=lam, iterations=1, init=init)
    new = init.copy()
    for x in range(users):  # side 0 from side 1 of init
        nb = [(b, rr) for (a, b), rr in zip(pairs, r) if a == x]
        new[x] = _normal_equation(init, [b for b, _ in nb], [rr for _, rr in nb], lam, k)
    for y in range(users, n):  # side 1 from the new side 0
        nb = [(a, rr) for (a, b), rr in zip(pairs, r) if b == y]
        new[y] = _normal_equation(new, [a for a, _ in nb], [rr for _, rr in nb], lam, k)
    assert np.allclose(lf, new, rtol=1e-12, atol=1e-12)
    assert np.all(lf[n - 1] == 0)
    # sides found by 2-colouring agree (vertex 0 is a user, lowest id of its component)
    assert np.allclose(ol.als(n, src, dst, w, None, k, lam=lam, iterations=2, init=init),
                       ol.als(n, src, dst, w, sides, k, lam=lam, iterations=2, init=init))
    # the default lf^0
    lf0 = ol.als(n, src, dst, w, sides, k, iterations=0, seed=seed)
    assert np.array_equal(lf0, np.random.default_rng(seed).random((n, k), dtype=np.float32))
    with pytest.raises(ValueError):
        ol.als(n, src, dst, w, np.zeros(n, dtype=int), k)


# ----------------------------------------------------------------------------- belief propagation


def _bp_vs_exact(n, tree_edges, k, rng):
    u, v = np.array(tree_edges, dtype=np.int64).reshape(-1, 2).T
    src, dst = _both_directions(u, v)
    perm = rng.permutation(len(src))  # edge order must not matter
    src, dst = src[perm], dst[perm]
    phi = rng.random((n, k)) + 0.05
    Psi = _random_potential(rng, k)
    b = ol.belief_propagation(n, src, dst, phi, Psi)
    exact = ol.exact_marginals(n, tree_edges, phi, Psi)
    assert np.abs(b - exact).max() <= 1e-8


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", SEEDS)
def test_bp_exact_on_trees(k, seed):
    rng = np.random.default_rng(seed + 40 + k)
    n = 8
    _bp_vs_exact(n, [(i, i + 1) for i in range(n - 1)], k, rng)  # a path
    _bp_vs_exact(n, [(0, i) for i in range(1, n)], k, rng)  # a star
    m = int(rng.integers(2, 10))
    _bp_vs_exact(m, _random_tree(rng, m), k, rng)  # a random tree
    _bp_vs_exact(9, _random_tree(rng, 9), k, rng)


def test_bp_forest_with_isolated_vertex():
    rng = np.random.default_rng(7)
    edges = [(0, 2), (2, 3), (4, 5)]  # vertex 1 is isolated: its belief is normalize(phi)
    _bp_vs_exact(6, edges, 3, rng)


def test_exact_marginals_independent_pair():
    phi = np.array([[1.0, 3.0], [2.0, 2.0]])
    Psi = np.array([[2.0, 1.0], [1.0, 2.0]])
    # p(x0, x1) ∝ phi0(x0) phi1(x1) Psi(x0, x1): P(x0=0) = (2*2 + 2*1) / (6 + 3*2*1 + 3*2*2) = 6/24
    ex = ol.exact_marginals(2, [(0, 1)], phi, Psi)
    assert np.allclose(ex[0], [6 / 24, 18 / 24])
    assert np.allclose(ex[1], [(2 * 2 + 3 * 2 * 1) / 24, (2 * 1 + 3 * 2 * 2) / 24])


def test_bp_star_1e5_leaves_finite():
    rng = np.random.default_rng(11)
    leaves, k = 10**5, 2
    n = leaves + 1
    src, dst = _both_directions(np.zeros(leaves, dtype=np.int64), np.arange(1, n))
    phi = rng.random((n, k)) + 0.05
    Psi = np.array([[1.0, 0.6], [0.6, 1.0]])
    b = ol.belief_propagation(n, src, dst, phi, Psi, max_iter=3)
    assert np.all(np.isfinite(b))
    assert np.allclose(b.sum(axis=1), 1.0)
    # a star's BP is exact after 2 iterations: the centre's log-belief, summed independently
    msg = phi[1:] @ Psi
    logc = np.log(phi[0]) + np.log(msg / msg.sum(axis=1, keepdims=True)).sum(axis=0)
    centre = np.exp(logc - logc.max())
    assert np.allclose(b[0], centre / centre.sum(), rtol=0, atol=1e-8)


def test_bp_input_errors():
    src, dst = _both_directions([0], [1])
    with pytest.raises(ValueError):
        ol.belief_propagation(2, src, dst, np.ones((2, 2)), np.array([[1.0, 2.0], [1.0, 1.0]]))
    with pytest.raises(ValueError):
        ol.belief_propagation(2, np.array([0]), np.array([1]), np.ones((2, 2)), np.ones((2, 2)))


# ----------------------------------------------------------------------------- MMR and MML


@pytest.mark.parametrize("seed", SEEDS)
def test_mmr_linear_fixed_point(seed):
    rng = np.random.default_rng(seed + 50)
    n, k, alpha = 12, 3, 0.6 + 0.3 * rng.random()
    src, dst = _random_digraph(rng, n, 30, dangling=0)
    dst[dst == n - 1] = 0  # vertex n-1 has no in-neighbours
    src[:2], dst[:2] = 3, 6  # a parallel edge
    W = rng.random((len(src), k)) + 0.1
    mm0 = rng.random((n, k))
    x = ol.multi_manifold_ranking(n, src, dst, W, mm0, alpha=alpha)
    for f in range(k):
        A = np.zeros((n, n))
        for e, (u, v) in enumerate(zip(src, dst)):
            A[v, u] += W[e, f]
        s = A.sum(axis=1)
        M = np.divide(A, s[:, None], out=np.zeros_like(A), where=s[:, None] > 0)
        ref = np.linalg.solve(np.eye(n) - alpha * M, (1 - alpha) * mm0[:, f])
        assert np.allclose(x[:, f], ref, rtol=1e-10, atol=1e-10)
    assert np.allclose(x[n - 1], (1 - alpha) * mm0[n - 1])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("J", [1, 3])
def test_mml_linear_fixed_point(seed, J):
    rng = np.random.default_rng(seed + 60 + J)
    n, k = 12, 2
    src, dst = _random_digraph(rng, n, 32, dangling=0)
    dst[dst == n - 1] = 0  # vertex n-1 has no in-neighbours
    W = rng.random((len(src), J)) + 0.1
    if J > 1:
        W[dst == 2, 1] = 0.0  # modality 1 contributes 0 at vertex 2
    mm0 = rng.random((n, k))
    alphas = None if seed == 0 else rng.random(J) * (0.9 / J)
    x = ol.multimodal_learning(n, src, dst, W, mm0, alphas=alphas)
    a = np.full(J, 0.8 / J) if alphas is None else alphas
    M = np.zeros((n, n))
    for j in range(J):
        A = np.zeros((n, n))
        for e, (u, v) in enumerate(zip(src, dst)):
            A[v, u] += W[e, j]
        s = A.sum(axis=1)
        M += a[j] * np.divide(A, s[:, None], out=np.zeros_like(A), where=s[:, None] > 0)
    ref = np.linalg.solve(np.eye(n) - M, (1 - a.sum()) * mm0)
    assert np.allclose(x, ref, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError):
        ol.multimodal_learning(n, src, dst, W, mm0, alphas=np.full(J, 1.0 / J))
