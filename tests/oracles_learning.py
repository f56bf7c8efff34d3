"""Float64 reference implementations (test oracles) of the graph-learning algorithms of
docs/algorithms.md (PPR, APPNP, ALS, BP, MMR, MML), written from that contract alone.

Like ``oracles.py`` they take plain NumPy edge arrays in internal vertex ids (0..n-1): ``src`` and
``dst`` hold the directed edges u -> v (an undirected graph is given with both directions), and
edge properties are given per edge in the same order. They share no code with the package's
kernels and do not import ``onyx_rapids``.

Convergence, unless an item says otherwise (docs/algorithms.md, Notation): stop after iteration i when
max_{v,f} |x^i(v)_f - x^{i-1}(v)_f| <= tol * max(1, max_{v,f} |x^i(v)_f|), or when i = max_iter.
"""

from __future__ import annotations

import itertools
from collections import deque

import numpy as np
import scipy.sparse as sp


# ---------------------------------------------------------------------------------------------
# helpers


def _edges(n, src, dst):
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    if src.shape != dst.shape:
        raise ValueError("src and dst must have the same length")
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError("edge endpoints must be internal ids in 0..n-1")
    return src, dst


def _converged(new, old, tol):
    """docs/algorithms.md's default rule: max change <= tol * max(1, max |x|)."""
    if new.size == 0:
        return True
    return np.abs(new - old).max() <= tol * max(1.0, np.abs(new).max())


def _in_matrix(n, src, dst, values):
    """Sparse M with M[v, u] = sum over edges u -> v of values (parallel edges add up)."""
    return sp.csr_matrix((np.asarray(values, dtype=np.float64), (dst, src)), shape=(n, n))


# ---------------------------------------------------------------------------------------------
# item 2: personalized PageRank


def personalized_pagerank(n, src, dst, sources, alpha=0.85, tol=1e-12, max_iter=10_000):
    """Personalized PageRank of docs/algorithms.md, float64; returns n x k (k = len(sources)).

    Feature f is personalized to s_f = sources[f]; all k features iterate together from
    x^0_f = e_{s_f}:

        x^i_f = alpha * ( P^T x^{i-1}_f + D_f^{i-1} e_{s_f} ) + (1-alpha) e_{s_f}

    with (P^T x)(v) = sum_{u in N-(v)} x(u) / outdeg(u) (parallel edges each count) and
    D_f = sum of x_f over the dangling vertices (outdeg 0): dangling mass returns to the source.
    Stops when every feature's L1 change sum_v |x^i_f(v) - x^{i-1}_f(v)| < tol, or at max_iter.
    """
    src, dst = _edges(n, src, dst)
    sources = np.asarray(sources, dtype=np.int64).ravel()
    if len(sources) and (sources.min() < 0 or sources.max() >= n):
        raise ValueError("sources must be internal ids in 0..n-1")
    k = len(sources)
    outdeg = np.bincount(src, minlength=n).astype(np.float64)
    PT = _in_matrix(n, src, dst, 1.0 / outdeg[src])  # PT[v, u] = (#edges u->v) / outdeg(u)
    dangling = outdeg == 0
    E = np.zeros((n, k))
    E[sources, np.arange(k)] = 1.0
    x = E.copy()
    for _ in range(max_iter):
        D = x[dangling].sum(axis=0)  # one value per feature
        nxt = alpha * (PT @ x + E * D) + (1 - alpha) * E
        done = bool(np.all(np.abs(nxt - x).sum(axis=0) < tol))
        x = nxt
        if done:
            break
    return x


# ---------------------------------------------------------------------------------------------
# item 3: feature propagation (APPNP)


def gcn_normalized_adjacency(n, src, dst):
    """A_hat = D^{-1/2} (A + I) D^{-1/2} as a dense float64 n x n matrix (docs/algorithms.md).

    A is the binary adjacency of the simple undirected graph (directions dropped, weights ignored,
    parallel edges once, self-loops dropped) and D the degree of A + I.
    """
    src, dst = _edges(n, src, dst)
    A = np.zeros((n, n))
    keep = src != dst
    A[src[keep], dst[keep]] = 1.0
    A[dst[keep], src[keep]] = 1.0
    AI = A + np.eye(n)
    d = AI.sum(axis=1)
    s = 1.0 / np.sqrt(d)
    return s[:, None] * AI * s[None, :]


def feature_propagation(n, src, dst, X, alpha=0.1, iterations=10):
    """APPNP of docs/algorithms.md, float64; X is n x k (a 1-D X gives a 1-D result).

        H^0 = X,   H^i = (1 - alpha) * A_hat H^{i-1} + alpha * X,   i = 1..K (K = iterations),
        A_hat = D^{-1/2} (A + I) D^{-1/2},

    A the binary adjacency of the simple undirected graph (directions dropped, weights ignored,
    parallel edges counted once, self-loops dropped), D the degree of A + I (PyG's gcn_norm).
    A fixed number of iterations; no convergence test.
    """
    src, dst = _edges(n, src, dst)
    X = np.asarray(X, dtype=np.float64)
    flat = X.ndim == 1
    X = X.reshape(n, -1)
    keep = src != dst
    u = np.concatenate([src[keep], dst[keep]])
    v = np.concatenate([dst[keep], src[keep]])
    A = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
    A.data[:] = 1.0  # parallel edges (and both stored directions) once
    AI = (A + sp.eye(n, format="csr")).tocsr()
    d = np.asarray(AI.sum(axis=1)).ravel()
    s = sp.diags(1.0 / np.sqrt(d))
    A_hat = (s @ AI @ s).tocsr()
    H = X.copy()
    for _ in range(int(iterations)):
        H = (1 - alpha) * (A_hat @ H) + alpha * X
    return H.ravel() if flat else H


# ---------------------------------------------------------------------------------------------
# item 5: ALS


def bipartite_sides(n, src, dst):
    """Sides (int array of 0/1) of docs/algorithms.md: 2-colour each (weakly connected)
    component of the undirected view, its lowest internal id on side 0 (an isolated vertex is on
    side 0). Raises ValueError when the graph is not bipartite (a self-loop included)."""
    src, dst = _edges(n, src, dst)
    if np.any(src == dst):
        raise ValueError("graph is not bipartite: it has a self-loop")
    und = sp.csr_matrix((np.ones(2 * len(src)), (np.concatenate([src, dst]),
                                                 np.concatenate([dst, src]))), shape=(n, n))
    indptr, indices = und.indptr, und.indices
    side = np.full(n, -1, dtype=np.int64)
    for root in range(n):  # ascending: the first vertex met of a component is its lowest id
        if side[root] >= 0:
            continue
        side[root] = 0
        queue = deque([root])
        while queue:
            u = queue.popleft()
            for w in indices[indptr[u]:indptr[u + 1]]:
                if side[w] < 0:
                    side[w] = 1 - side[u]
                    queue.append(w)
                elif side[w] == side[u]:
                    raise ValueError("graph is not bipartite")
    return side


def als_half_step(n, src, dst, ratings, lf, update, lam=0.1):
    """One ALS half-step: every vertex with update[v] True gets

        lf_new(v) = (IC(v) + lam I)^{-1} sc(v),
        sc(v) = sum_{u in N-(v)} w(u,v) lf(u),   IC(v) = sum_{u in N-(v)} lf(u) lf(u)^T,

    from the values lf (n x k); a vertex without in-neighbours gets 0. Others keep lf.
    """
    src, dst = _edges(n, src, dst)
    lf = np.asarray(lf, dtype=np.float64)
    k = lf.shape[1]
    w = np.asarray(ratings, dtype=np.float64).ravel()
    sc = np.zeros((n, k))
    np.add.at(sc, dst, w[:, None] * lf[src])
    IC = np.zeros((n, k, k))
    np.add.at(IC, dst, lf[src][:, :, None] * lf[src][:, None, :])
    indeg = np.bincount(dst, minlength=n)
    out = lf.copy()
    idx = np.flatnonzero(np.asarray(update, dtype=bool))
    out[idx] = 0.0
    solve = idx[indeg[idx] > 0]
    if len(solve):
        out[solve] = np.linalg.solve(IC[solve] + lam * np.eye(k), sc[solve][:, :, None])[:, :, 0]
    return out


def als(n, src, dst, ratings, sides, k, lam=0.1, iterations=10, init=None, seed=0):
    """Alternating least squares of docs/algorithms.md, float64; returns lf as n x k.

    sides: 0/1 per vertex (None: ``bipartite_sides``); every edge must join the two sides.
    lf^0 = init, or numpy.random.default_rng(seed).random((n, k), dtype=float32) in internal order.
    One iteration updates side 0 from side 1, then side 1 from the new side 0, each vertex by

        lf_new(v) = (IC(v) + lam I)^{-1} sc(v),
        sc(v) = sum_{u in N-(v)} w(u,v) lf(u),   IC(v) = sum_{u in N-(v)} lf(u) lf(u)^T (k x k);

    a vertex with no in-neighbours gets lf = 0. Runs exactly ``iterations`` iterations.
    """
    src, dst = _edges(n, src, dst)
    if sides is None:
        sides = bipartite_sides(n, src, dst)
    sides = np.asarray(sides).ravel()
    if sides.shape != (n,) or not np.all((sides == 0) | (sides == 1)):
        raise ValueError("sides must hold 0 or 1 for each of the n vertices")
    if np.any(sides[src] == sides[dst]):
        raise ValueError("an edge joins two vertices of the same side: not bipartite")
    if init is None:
        lf = np.random.default_rng(seed).random((n, k), dtype=np.float32).astype(np.float64)
    else:
        lf = np.array(init, dtype=np.float64).reshape(n, k)
    for _ in range(int(iterations)):
        lf = als_half_step(n, src, dst, ratings, lf, sides == 0, lam)
        lf = als_half_step(n, src, dst, ratings, lf, sides == 1, lam)
    return lf


# ---------------------------------------------------------------------------------------------
# item 6: belief propagation


def reverse_edges(src, dst):
    """rev[e] = index of the reverse edge of e (the j-th copy of u->v pairs with the j-th copy of
    v->u; a self-loop is its own reverse). ValueError when some edge has no reverse."""
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    m = len(src)
    order_f = np.lexsort((np.arange(m), dst, src))  # edges by (u, v), stable
    order_r = np.lexsort((np.arange(m), src, dst))  # edges by (v, u) of their reverse, stable
    if not (np.array_equal(src[order_f], dst[order_r]) and np.array_equal(dst[order_f], src[order_r])):
        raise ValueError("every directed edge needs its reverse (an undirected graph)")
    rev = np.empty(m, dtype=np.int64)
    rev[order_f] = order_r
    return rev


def _log_normalize(logx):
    """Row-wise log of normalize(exp(logx))."""
    mx = logx.max(axis=1, keepdims=True)
    return logx - (mx + np.log(np.exp(logx - mx).sum(axis=1, keepdims=True)))


def belief_propagation(n, src, dst, priors, potential, tol=1e-12, max_iter=10_000):
    """Sum-product belief propagation of docs/algorithms.md, float64; returns n x k beliefs.

    priors phi (n x k, > 0), potential Psi (k x k, positive, symmetric; ValueError otherwise),
    messages m_uv (k values per directed edge; each edge's reverse is found by ``reverse_edges``):

        m^0 = 1/k,   b^0(v) = normalize(phi(v)),
        m^i_uv = normalize( (b^{i-1}(u) o m^{i-1}_vu^{o-1}) Psi ),
        b^i(v) = normalize( phi(v) o prod_{u in N-(v)} m^i_uv )   (no in-neighbours: normalize(phi)).

    Computed in log space (messages and beliefs stored as logs, renormalized every step), so it
    stays finite at degrees of 10^5. Stops on the beliefs with the default rule.
    """
    src, dst = _edges(n, src, dst)
    phi = np.asarray(priors, dtype=np.float64).reshape(n, -1)
    k = phi.shape[1]
    Psi = np.asarray(potential, dtype=np.float64)
    if Psi.shape != (k, k):
        raise ValueError("potential must be k x k")
    if not np.all(Psi > 0) or not np.allclose(Psi, Psi.T, rtol=0, atol=0):
        raise ValueError("potential must be positive and symmetric")
    if not np.all(phi > 0):
        raise ValueError("priors must be positive")
    rev = reverse_edges(src, dst)
    log_phi = _log_normalize(np.log(phi))
    log_m = np.full((len(src), k), -np.log(k))
    log_b = log_phi.copy()
    b = np.exp(log_b)
    for _ in range(max_iter):
        r = log_b[src] - log_m[rev]  # log (b^{i-1}(u) o m^{i-1}_vu^{o-1})
        r = np.exp(r - r.max(axis=1, keepdims=True))
        msg = r @ Psi
        log_m = np.log(msg / msg.sum(axis=1, keepdims=True))
        acc = log_phi.copy()
        np.add.at(acc, dst, log_m)
        log_b = _log_normalize(acc)
        nb = np.exp(log_b)
        nb /= nb.sum(axis=1, keepdims=True)
        done = _converged(nb, b, tol)
        b = nb
        if done:
            break
    return b


def exact_marginals(n, edges_undirected, priors, potential):
    """Exact single-vertex marginals of the pairwise MRF

        p(x) ∝ prod_v phi_v(x_v) * prod_{{u,v} in edges_undirected} Psi(x_u, x_v)

    by enumerating all k^n assignments (n <= 10); edges_undirected lists each edge once as (u, v).
    Returns n x k.
    """
    if n > 10:
        raise ValueError("exact_marginals enumerates k^n assignments: n must be <= 10")
    phi = np.asarray(priors, dtype=np.float64).reshape(n, -1)
    k = phi.shape[1]
    Psi = np.asarray(potential, dtype=np.float64)
    X = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64).reshape(-1, n)
    logp = np.zeros(len(X))
    for v in range(n):
        logp += np.log(phi[v, X[:, v]])
    for u, v in np.asarray(edges_undirected, dtype=np.int64).reshape(-1, 2):
        logp += np.log(Psi[X[:, u], X[:, v]])
    p = np.exp(logp - logp.max())
    p /= p.sum()
    out = np.zeros((n, k))
    for v in range(n):
        out[v] = np.bincount(X[:, v], weights=p, minlength=k)
    return out


# ---------------------------------------------------------------------------------------------
# item 7: multi-manifold ranking


def multi_manifold_ranking(n, src, dst, W, mm0, alpha=0.85, tol=1e-12, max_iter=10_000):
    """Multi-manifold ranking of docs/algorithms.md, float64; W is m x k positive, mm0 n x k.

        waggr(v) = sum_{u in N-(v)} w(u,v) o mm^{i-1}(u),
        haggr(v) = (sum_{u in N-(v)} w(u,v))^{o-1}   (computed once),
        mm^i(v) = alpha * waggr(v) o haggr(v) + (1 - alpha) * mm^0(v)
                  (the first term is 0 for a vertex with no in-neighbours).

    Stops with the default rule.
    """
    src, dst = _edges(n, src, dst)
    mm0 = np.asarray(mm0, dtype=np.float64).reshape(n, -1)
    k = mm0.shape[1]
    W = np.asarray(W, dtype=np.float64).reshape(len(src), k)
    if not np.all(W > 0):
        raise ValueError("multi_manifold_ranking needs positive edge weights")
    wsum = np.zeros((n, k))
    np.add.at(wsum, dst, W)
    haggr = np.divide(1.0, wsum, out=np.zeros_like(wsum), where=wsum > 0)
    mm = mm0.copy()
    for _ in range(max_iter):
        waggr = np.zeros((n, k))
        np.add.at(waggr, dst, W * mm[src])
        nxt = alpha * waggr * haggr + (1 - alpha) * mm0
        done = _converged(nxt, mm, tol)
        mm = nxt
        if done:
            break
    return mm


# ---------------------------------------------------------------------------------------------
# item 8: multimodal learning


def normalize_modalities(n, src, dst, W):
    """W (m x J, >= 0) normalized per modality over each vertex's in-edges: sum_{u in N-(v)}
    w_j(u,v) = 1 wherever v's in-weights of modality j are not all zero (else they stay 0)."""
    src, dst = _edges(n, src, dst)
    W = np.asarray(W, dtype=np.float64).reshape(len(src), -1)
    if np.any(W < 0) or not np.all(np.isfinite(W)):
        raise ValueError("multimodal_learning needs finite non-negative edge weights")
    tot = np.zeros((n, W.shape[1]))
    np.add.at(tot, dst, W)
    t = tot[dst]
    return np.divide(W, t, out=np.zeros_like(W), where=t > 0)


def multimodal_learning(n, src, dst, W, mmode0, alphas=None, tol=1e-12, max_iter=10_000):
    """Multimodal learning of docs/algorithms.md, float64; W is m x J, mmode0 n x k.

    W is first normalized per modality j so that sum_{u in N-(v)} w_j(u,v) = 1 for every v whose
    in-weights of modality j are not all zero (otherwise modality j contributes 0 at v).
    alphas: J coefficients >= 0 with sum < 1 (default 0.8 / J each).

        AGGR(v) = sum_{u in N-(v)} w(u,v)^T mmode^{i-1}(u)          (J x k),
        mmode^i(v) = alpha . AGGR(v) + (1 - sum_j alpha_j) * mmode^0(v).

    Stops with the default rule.
    """
    src, dst = _edges(n, src, dst)
    mm0 = np.asarray(mmode0, dtype=np.float64).reshape(n, -1)
    Wn = normalize_modalities(n, src, dst, W)
    J = Wn.shape[1]
    a = np.full(J, 0.8 / J) if alphas is None else np.asarray(alphas, dtype=np.float64).ravel()
    if a.shape != (J,) or np.any(a < 0) or a.sum() >= 1:
        raise ValueError("alphas must be J values >= 0 with sum < 1")
    coef = Wn @ a  # alpha . AGGR(v) = sum_u (sum_j alpha_j w_j(u,v)) mmode(u)
    M = _in_matrix(n, src, dst, coef)
    x = mm0.copy()
    for _ in range(max_iter):
        nxt = M @ x + (1 - a.sum()) * mm0
        done = _converged(nxt, x, tol)
        x = nxt
        if done:
            break
    return x
