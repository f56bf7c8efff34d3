"""CuPy/cuSPARSE SpMM as a peer of the spmm suites: the same propagation as ours as one
``csr_matrix @ dense`` product per iteration (float32).  Without a GPU, scipy.sparse runs the
identical code on the CPU, labelled "CPU stand-in" (its times mean nothing)."""

from __future__ import annotations

import numpy as np

from onyx_rapids import device

from . import normalize_rows


def _sparse():
    if device.BACKEND == "gpu":
        import cupyx.scipy.sparse as sp
        return sp, "cupyx.scipy.sparse (cuSPARSE)"
    import scipy.sparse as sp
    return sp, "scipy.sparse (CPU stand-in: no GPU)"


def available() -> str:
    return _sparse()[1]


class Peer:
    def __init__(self, problem):
        sp, self.label = _sparse()
        p = self.problem = problem
        a = sp.csr_matrix((p.data, p.indices, p.indptr), shape=(p.n, p.n))
        if p.diagonal is not None:
            a = (a + sp.diags(p.diagonal)).tocsr()
        self.matrix = a.astype(np.float32)

    def run(self, iterations: int):
        p, a = self.problem, self.matrix
        h = p.start()
        if p.algorithm == "feature_propagation":
            ax = p.alpha * p.x
            for _ in range(iterations):
                h = (1.0 - p.alpha) * (a @ h) + ax
        elif p.algorithm == "label_propagation":
            clamped = h[p.internal]
            for _ in range(iterations):
                h = normalize_rows(p.alpha * normalize_rows(a @ h) + (1.0 - p.alpha) * h)
                h[p.internal] = clamped
        else:  # personalized_pagerank
            cols = device.xp.arange(p.k)
            for _ in range(iterations):
                dangling = p.dangling @ h
                nxt = a @ h
                nxt *= p.alpha
                nxt[p.internal, cols] += p.alpha * dangling + (1.0 - p.alpha)
                h = nxt
        return h
