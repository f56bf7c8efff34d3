"""Feature propagation, APPNP (ALGORITHMS.md item 3).

    H^0 = X,   H^i = (1 - alpha) A_hat H^{i-1} + alpha X,   A_hat = D^-1/2 (A + I) D^-1/2

over the simple undirected graph (directions dropped, parallel edges once, self-loops dropped),
D the degree of A + I (PyG's gcn_norm), a fixed number of iterations.  The edge step brings
h(u) / sqrt(d_u d_v); the vertex step adds the self-loop term h(v) / d_v and the teleport.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import device, operators as ops, properties as props
from ._common import Info, finish, resolve_pull_fold


@cuda.jit(device=True)
def normalized_neighbour(f, u, v, e, h, inv_sqrt_degree):
    return h[u, f] * inv_sqrt_degree[u, 0] * inv_sqrt_degree[v, 0]


@cuda.jit(device=True)
def teleport_mix(f, v, acc, h, h_next, x, inv_sqrt_degree, alpha):
    self_loop = h[v, f] * inv_sqrt_degree[v, 0] * inv_sqrt_degree[v, 0]
    h_next[v, f] = (1.0 - alpha) * (acc[v, f] + self_loop) + alpha * x[v, f]
    acc[v, f] = 0.0
    return True


def feature_propagation(g, features, alpha=0.1, iterations=10, *, feature_aware=True,
                        fold=True, direction="auto", block_size=None, return_info=False):
    """APPNP propagation of ``features`` (a frame keyed by ``vertex`` or an n x k array).

    Returns ``vertex``, ``h_0``..``h_{k-1}``.

    Example::

        >>> X = np.random.default_rng(0).random((g.n, 16), dtype=np.float32)
        >>> feature_propagation(g, X, iterations=10)   # doctest: +SKIP
    """
    if not (0 <= alpha <= 1):
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    if int(iterations) != iterations or iterations < 0:
        raise ValueError(f"iterations must be a non-negative integer, got {iterations!r}")
    direction = resolve_pull_fold(direction, False, fold, "feature_propagation")
    x = g.vertex_property(features, name="features")
    k = x.shape[1]
    simple = g.simple_undirected()
    degree = device.xp.diff(simple.out_offsets).astype(np.float64) + 1.0  # A + I
    args = dict(x=x, alpha=float(alpha), acc=props.vertex_property(g, k),
                h_next=props.vertex_property(g, k),
                inv_sqrt_degree=props.column(1.0 / device.xp.sqrt(degree)))
    opts = dict(k=k, feature_aware=feature_aware, block_size=block_size)
    h = props.copy(x)
    info = Info(variant=dict(feature_aware=feature_aware, fold=fold, direction=direction))
    for info.iterations in range(1, int(iterations) + 1):
        call = dict(args, h=h)
        if fold:
            ops.foldmap(simple, [ops.Edge(normalized_neighbour, "acc"), ops.Vertex(teleport_mix)],
                        call, direction="pull", **opts)
        else:
            ops.edgemap(simple, normalized_neighbour, "acc", call, direction=direction, **opts)
            ops.vertexmap(simple, teleport_mix, call, **opts)
        h, args["h_next"] = args["h_next"], h
    info.converged = True  # a fixed number of iterations, as APPNP
    return finish(g, "feature_propagation", {"h_*": h}, info, return_info)
