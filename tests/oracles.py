"""Float64 reference implementations (test oracles), written from docs/algorithms.md alone.

They take plain NumPy edge arrays in internal vertex ids (0..n-1) and share no code with the
package's kernels.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def pagerank(n, src, dst, weights=None, alpha=0.85, tol=1e-12, max_iter=10_000, teleport=None):
    """PageRank by the iteration of docs/algorithms.md, run to a tight L1 tolerance; ``teleport``
    (a distribution, also the start) replaces the uniform 1/n."""
    w = np.ones(len(src)) if weights is None else np.asarray(weights, dtype=np.float64)
    outw = np.bincount(src, weights=w, minlength=n)
    scale = np.divide(w, outw[src], out=np.zeros_like(w), where=outw[src] != 0)
    P = sp.csr_matrix((scale, (dst, src)), shape=(n, n))  # P[v, u] = w(u,v) / outw(u)
    dangling = outw == 0
    t = np.full(n, 1.0 / n) if teleport is None else np.asarray(teleport, dtype=np.float64)
    pr = t.copy()
    for _ in range(max_iter):
        nxt = (1 - alpha) * t + alpha * (P @ pr + pr[dangling].sum() * t)
        done = np.abs(nxt - pr).sum() < tol
        pr = nxt
        if done:
            break
    return pr


def label_propagation(n, src, dst, lp0, labelled, k, weights=None, alpha=0.85, clamp=True,
                      tol=1e-12, max_iter=10_000):
    """Label propagation of docs/algorithms.md in float64; lp0 is n x P*k."""
    lp0 = np.asarray(lp0, dtype=np.float64)
    K = lp0.shape[1]
    P = K // k
    w = np.ones((len(src), P)) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w.reshape(len(src), P)

    def normalize(x):
        x = x.reshape(n, P, k)
        s = x.sum(axis=2, keepdims=True)
        return np.where(s != 0, x / np.where(s != 0, s, 1), x).reshape(n, K)

    lp = lp0.copy()
    for _ in range(max_iter):
        aggr = np.zeros((n, K))
        contrib = np.repeat(w, k, axis=1) * lp[src]
        np.add.at(aggr, dst, contrib)
        nxt = normalize(alpha * normalize(aggr) + (1 - alpha) * lp)
        if clamp:
            nxt[labelled] = lp0[labelled]
        done = np.abs(nxt - lp).max() <= tol * max(1.0, np.abs(nxt).max())
        lp = nxt
        if done:
            break
    return lp
