"""Stand-ins shared by the benchmark tests: a ``cugraph`` module whose Graph keeps NumPy arrays
(each test adds the algorithms it needs)."""

import types

import numpy as np
import pandas as pd


class FakeCugraphGraph:
    """cugraph.Graph on NumPy arrays: ``from_cudf_edgelist`` renumbers the vertex ids (``ids``,
    sorted) and keeps the edges as positions ``s``, ``d`` (both directions when undirected) with
    float64 weights ``w`` (None unweighted) and ``store_transposed``."""

    def __init__(self, directed=True):
        self.directed = directed

    def from_cudf_edgelist(self, df, source="source", destination="destination", edge_attr=None,
                           renumber=True, store_transposed=False):
        s, d = df[source].to_numpy(), df[destination].to_numpy()
        self.ids = np.unique(np.r_[s, d])
        s, d = np.searchsorted(self.ids, s), np.searchsorted(self.ids, d)
        w = None if edge_attr is None else df[edge_attr].to_numpy().astype(np.float64)
        if not self.directed:
            s, d = np.r_[s, d], np.r_[d, s]
            w = None if w is None else np.r_[w, w]
        self.s, self.d, self.w = s, d, w
        self.store_transposed = store_transposed

    def nodes(self):
        return pd.Series(self.ids)

    def number_of_vertices(self):
        return len(self.ids)


def fake_cugraph_module():
    """A ``cugraph`` module of version "stand-in" with FakeCugraphGraph as its ``Graph`` and no
    algorithms yet."""
    mod = types.ModuleType("cugraph")
    mod.__version__ = "stand-in"
    mod.Graph = FakeCugraphGraph
    return mod
