"""PyTorch (Geometric) as a peer of the spmm suites: PyG's ``APPNP(K, alpha, cached=True)``
for feature_propagation when torch_geometric imports, otherwise (and for personalized_pagerank
and label_propagation) ``torch.sparse.mm`` on a torch CSR of the same matrix plus torch
elementwise operations."""

from __future__ import annotations

import numpy as np

from onyx_rapids import device

from . import normalize_rows


def _modules():
    import torch
    try:
        import torch_geometric
        from torch_geometric.nn import APPNP  # noqa: F401
    except Exception:
        torch_geometric = None
    return torch, torch_geometric


def available() -> str:
    torch, pyg = _modules()
    return f"torch {torch.__version__}" + (f", torch_geometric {pyg.__version__}" if pyg else "")


class Peer:
    def __init__(self, problem):
        torch, pyg = _modules()
        self.torch, p = torch, problem
        self.problem = p
        self.dev = torch.device("cuda" if device.BACKEND == "gpu" and torch.cuda.is_available()
                                else "cpu")

        def t(a):
            if device.BACKEND == "gpu":
                return torch.from_dlpack(a).to(self.dev)
            return torch.from_numpy(np.ascontiguousarray(a)).to(self.dev)

        self.x0 = t(p.start())
        self.appnp = pyg is not None and p.algorithm == "feature_propagation"
        if self.appnp:
            from torch_geometric.nn import APPNP
            self.label = f"torch_geometric {pyg.__version__} APPNP"
            self.edge_index = torch.stack([t(a).long() for a in p.edge_index])
            self.module = lambda k: APPNP(K=k, alpha=p.alpha, cached=True)
            self.modules = {}
            return
        self.label = f"torch {torch.__version__} sparse CSR mm"
        crow, col, vals = t(p.indptr).long(), t(p.indices).long(), t(p.data)
        if p.diagonal is not None:  # A + diag, through COO
            ar = torch.arange(p.n, device=self.dev)
            rows = torch.repeat_interleave(ar, crow[1:] - crow[:-1])
            coo = torch.sparse_coo_tensor(torch.stack([torch.cat([rows, ar]),
                                                       torch.cat([col, ar])]),
                                          torch.cat([vals, t(p.diagonal)]), (p.n, p.n))
            self.matrix = coo.coalesce().to_sparse_csr()
        else:
            self.matrix = torch.sparse_csr_tensor(crow, col, vals, size=(p.n, p.n))
        if p.algorithm != "feature_propagation":
            self.rows = t(p.internal).long()
            self.clamped = self.x0[self.rows].clone()
        if p.algorithm == "personalized_pagerank":
            self.dangling = t(p.dangling)
            self.cols = torch.arange(p.k, device=self.dev)

    def run(self, iterations: int):
        torch, p = self.torch, self.problem
        with torch.no_grad():
            h = self.x0
            if self.appnp:
                if iterations not in self.modules:
                    self.modules[iterations] = self.module(iterations)
                h = self.modules[iterations](self.x0, self.edge_index)
            for _ in range(0 if self.appnp else iterations):
                if p.algorithm == "feature_propagation":
                    h = (1.0 - p.alpha) * (self.matrix @ h) + p.alpha * self.x0
                elif p.algorithm == "label_propagation":
                    h = normalize_rows(p.alpha * normalize_rows(self.matrix @ h)
                                       + (1.0 - p.alpha) * h)
                    h[self.rows] = self.clamped
                else:
                    dangling = self.dangling @ h
                    nxt = (self.matrix @ h) * p.alpha
                    nxt[self.rows, self.cols] += p.alpha * dangling + (1.0 - p.alpha)
                    h = nxt
            if self.dev.type == "cuda":
                torch.cuda.synchronize()
        return h
