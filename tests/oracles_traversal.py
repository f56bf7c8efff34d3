"""Float64 / integer reference implementations (test oracles) of the traversal algorithms of
docs/algorithms.md (bfs, sssp, weakly and strongly connected components, core number / k-core,
minimum spanning forest), written from that contract alone.

Like ``oracles.py`` they take plain NumPy edge arrays in internal vertex ids (0..n-1): ``src`` and
``dst`` hold the directed edges u -> v, and edge weights are given per edge in the same order.
They share no code with the package's kernels and do not import ``onyx_rapids``; the traversals
are written out by hand (a plain queue BFS, a heapq Dijkstra, a hand-written union-find,
Tarjan's depth-first search, the Batagelj-Zaversnik bucket peeling), so that networkx and scipy
stay independent references for the tests of the oracles themselves (``test_oracles_traversal.py``).

Conventions of the contract:

* bfs hop distances are integers; an unreachable vertex gets 2**31 - 1 (cuGraph's int32 max), or
  2**63 - 1 when n >= 2**31 (the int64 output). The oracles return int64 arrays either way.
* sssp distances are float64 here (the kernel's are float32), ``inf`` when unreachable. Weights
  must be finite and non-negative; parallel edges u -> v count with their MINIMUM weight,
  zero-weight edges are real edges (distance exactly 0 along them), self-loops never shorten a path.
* predecessors: -1 for the source and for unreachable vertices; any valid parent passes
  (``check_predecessors``).
* weakly and strongly connected components are labelled by the smallest ORIGINAL vertex id of
  the component.
* core numbers are those of the simple undirected view: directions dropped, parallel edges merged,
  self-loops removed.
* the minimum spanning forest takes an undirected edge list (each edge once); among edges of equal
  weight the earlier in the list comes first, which makes the forest unique.
"""

from __future__ import annotations

import heapq

import numpy as np

from oracles_learning import _edges  # one validation of edge arrays for all the oracles

UNREACHABLE_INT32 = 2**31 - 1
UNREACHABLE_INT64 = 2**63 - 1


# ---------------------------------------------------------------------------------------------
# helpers


def unreachable_hops(n):
    """The bfs distance of an unreachable vertex: 2**31 - 1, or 2**63 - 1 when n >= 2**31."""
    return UNREACHABLE_INT32 if n < 2**31 else UNREACHABLE_INT64


def _weights(src, weights):
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != src.shape:
        raise ValueError("weights must give one value per edge")
    if not np.all(np.isfinite(w)):
        raise ValueError("sssp edge weights must be finite (no NaN or inf)")
    if np.any(w < 0):
        raise ValueError("sssp edge weights must be non-negative")
    return w


def _sources(n, sources):
    s = np.asarray(sources, dtype=np.int64).ravel()
    if len(s) and (s.min() < 0 or s.max() >= n):
        raise ValueError("sources must be internal ids in 0..n-1")
    return s


def _source(n, source):
    s = int(source)
    if not 0 <= s < n:
        raise ValueError("source must be an internal id in 0..n-1")
    return s


def _out_lists(n, src, dst):
    """Out-neighbour lists (Python lists, parallel edges kept) of the directed graph."""
    order = np.argsort(src, kind="stable")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=offsets[1:])
    nbr = dst[order].tolist()
    off = offsets.tolist()
    return [nbr[off[u]:off[u + 1]] for u in range(n)]


def _min_weight_edges(src, dst, w):
    """The distinct non-loop pairs (u, v), each with the minimum weight over its parallel edges."""
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    if len(src) == 0:
        return src, dst, w
    order = np.lexsort((w, dst, src))
    src, dst, w = src[order], dst[order], w[order]
    first = np.ones(len(src), dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    starts = np.flatnonzero(first)
    return src[starts], dst[starts], np.minimum.reduceat(w, starts)


def _simple_undirected(n, src, dst):
    """Neighbour sets of the simple undirected view (directions dropped, parallels merged,
    self-loops removed)."""
    adj = [set() for _ in range(n)]
    for u, v in zip(src.tolist(), dst.tolist()):
        if u != v:
            adj[u].add(v)
            adj[v].add(u)
    return adj


# ---------------------------------------------------------------------------------------------
# item 9: bfs


def bfs(n, src, dst, source):
    """Hop distances (int64, length n) from ``source`` along directed edges, by a plain FIFO queue
    BFS; unreachable vertices get ``unreachable_hops(n)`` (2**31 - 1 for n < 2**31)."""
    src, dst = _edges(n, src, dst)
    s = _source(n, source)
    out = _out_lists(n, src, dst)
    unreached = unreachable_hops(n)
    dist = [unreached] * n
    dist[s] = 0
    queue = [s]
    head = 0
    while head < len(queue):
        u = queue[head]
        head += 1
        du = dist[u] + 1
        for v in out[u]:
            if dist[v] == unreached:
                dist[v] = du
                queue.append(v)
    return np.array(dist, dtype=np.int64)


def multi_bfs(n, src, dst, sources):
    """k bfs traversals at once: an n x k int64 array whose column f is ``bfs(.., sources[f])``."""
    sources = _sources(n, sources)
    res = np.empty((n, len(sources)), dtype=np.int64)
    for f, s in enumerate(sources.tolist()):
        res[:, f] = bfs(n, src, dst, s)
    return res


# ---------------------------------------------------------------------------------------------
# item 10: sssp


def sssp(n, src, dst, w, source):
    """Shortest-path distances (float64, length n) from ``source``, ``inf`` when unreachable.

    A textbook binary-heap (heapq) Dijkstra with lazy deletion, exact for zero-weight edges.
    Weights must be finite and non-negative (ValueError otherwise); parallel edges u -> v count
    with their minimum weight and self-loops are ignored. Every distance is the minimum over the
    paths of the left-to-right float64 sum of their weights.
    """
    src, dst = _edges(n, src, dst)
    w = _weights(src, w)
    s = _source(n, source)
    u_, v_, w_ = _min_weight_edges(src, dst, w)
    out = [[] for _ in range(n)]
    for u, v, x in zip(u_.tolist(), v_.tolist(), w_.tolist()):
        out[u].append((v, x))
    inf = float("inf")
    dist = [inf] * n
    done = [False] * n
    dist[s] = 0.0
    heap = [(0.0, s)]
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue
        done[u] = True
        for v, x in out[u]:
            nd = d + x
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return np.array(dist, dtype=np.float64)


def multi_sssp(n, src, dst, w, sources):
    """k sssp traversals at once: an n x k float64 array, column f = ``sssp(.., sources[f])``."""
    sources = _sources(n, sources)
    res = np.empty((n, len(sources)), dtype=np.float64)
    for f, s in enumerate(sources.tolist()):
        res[:, f] = sssp(n, src, dst, w, s)
    return res


# ---------------------------------------------------------------------------------------------
# items 9 and 10: the predecessor contract


def check_predecessors(n, src, dst, distance, predecessor, sources, weights=None, rtol=1e-5):
    """Raise AssertionError unless ``predecessor`` is a valid bfs (``weights is None``) or sssp
    predecessor array for the given ``distance`` array.

    ``sources`` is one source (then ``distance`` and ``predecessor`` have length n) or a sequence
    of k sources (then they are n x k, column f belonging to sources[f]; length n allowed for
    k = 1). ``distance`` is taken as given (check it against ``bfs``/``sssp`` separately). Per
    column, the contract is:

    * the source has distance 0 and predecessor -1;
    * an unreachable vertex (bfs: distance ``unreachable_hops(n)``, sssp: inf) has predecessor -1;
    * every other vertex v has a predecessor p in 0..n-1, p != v, with an edge p -> v and
      - bfs:  distance(p) + 1 == distance(v) exactly,
      - sssp: distance(p) + w == distance(v) within ``rtol`` relative to distance(v), where w is the
        minimum weight over the parallel edges p -> v (the weight a shortest path uses);
    * following predecessors from any reachable vertex leads back to the source (needed for sssp,
      where zero-weight edges or the tolerance could otherwise close a cycle of "tight" edges).
    """
    src, dst = _edges(n, src, dst)
    single = np.ndim(sources) == 0
    srcs = _sources(n, [sources] if single else sources)
    k = len(srcs)
    dist = np.asarray(distance)
    pred = np.asarray(predecessor)
    if dist.ndim == 1 and k == 1:
        dist, pred = dist[:, None], pred[:, None]
    assert dist.shape == (n, k), f"distance has shape {dist.shape}, expected {(n, k)}"
    assert pred.shape == (n, k), f"predecessor has shape {pred.shape}, expected {(n, k)}"
    assert np.issubdtype(pred.dtype, np.integer), f"predecessor dtype {pred.dtype} is not integer"
    pred = pred.astype(np.int64)

    weighted = weights is not None
    if weighted:
        u_, v_, w_ = _min_weight_edges(src, dst, _weights(src, weights))
        dist = dist.astype(np.float64)
        assert not np.any(np.isnan(dist)), "distance contains NaN"
        reach = dist != np.inf
    else:
        keep = src != dst
        pairs = np.unique(np.stack([src[keep], dst[keep]]), axis=1)
        u_, v_ = pairs[0], pairs[1]
        w_ = np.ones(len(u_))
        assert np.issubdtype(dist.dtype, np.integer), (
            f"bfs distance dtype {dist.dtype} is not integer")
        dist = dist.astype(np.int64)
        reach = dist != unreachable_hops(n)
    edge_w = {(int(a), int(b)): float(x) for a, b, x in zip(u_.tolist(), v_.tolist(), w_.tolist())}

    for f, s in enumerate(srcs.tolist()):
        d, p, r = dist[:, f], pred[:, f], reach[:, f]
        col = "" if single else f" (column {f}, source {s})"
        assert d[s] == 0, f"source {s} has distance {d[s]}, expected 0{col}"
        assert p[s] == -1, f"source {s} has predecessor {p[s]}, expected -1{col}"
        bad = np.flatnonzero(~r & (p != -1))
        assert len(bad) == 0, (f"unreachable vertex {bad[0]} has predecessor {p[bad[0]]}, "
                               f"expected -1{col}")
        neg = np.flatnonzero(r & (d < 0))
        assert len(neg) == 0, f"vertex {neg[0]} has negative distance {d[neg[0]]}{col}"
        for v in np.flatnonzero(r).tolist():
            if v == s:
                continue
            q = int(p[v])
            assert q != -1, f"reachable vertex {v} (distance {d[v]}) has predecessor -1{col}"
            assert 0 <= q < n, f"vertex {v} has predecessor {q} outside 0..{n - 1}{col}"
            assert q != v, f"vertex {v} is its own predecessor{col}"
            assert (q, v) in edge_w, (
                f"vertex {v} has predecessor {q} but there is no edge {q} -> {v}{col}")
            assert r[q], f"vertex {v} has predecessor {q}, which is unreachable{col}"
            if weighted:
                x = edge_w[(q, v)]
                got = d[q] + x
                assert abs(got - d[v]) <= rtol * abs(d[v]), (
                    f"edge {q} -> {v} is not tight: distance({q}) + w = {d[q]!r} + {x!r} = {got!r} "
                    f"but distance({v}) = {d[v]!r} (rtol {rtol}){col}")
            else:
                assert d[q] + 1 == d[v], (
                    f"vertex {v} has predecessor {q} but distance({q}) + 1 = {d[q] + 1} != "
                    f"distance({v}) = {d[v]}{col}")
        # every predecessor chain ends at the source: 0 unknown, 1 on the current walk, 2 good
        state = np.zeros(n, dtype=np.int8)
        state[s] = 2
        for v in np.flatnonzero(r).tolist():
            walk = []
            x = v
            while state[x] == 0:
                state[x] = 1
                walk.append(x)
                x = int(p[x])
            assert state[x] == 2, (f"the predecessors from vertex {v} run into a cycle through "
                                   f"vertex {x} and never reach the source {s}{col}")
            state[walk] = 2


# ---------------------------------------------------------------------------------------------
# item 11: weakly connected components


def weakly_connected_components(n, src, dst, ids):
    """Labels (length n, dtype of ``ids``): the smallest original id ``ids[u]`` over the weakly
    connected component of each vertex, by a hand-written union-find (path halving, union by
    size)."""
    src, dst = _edges(n, src, dst)
    ids = np.asarray(ids)
    if ids.shape != (n,):
        raise ValueError("ids must give one original id per vertex")
    parent = list(range(n))
    size = [1] * n

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, v in zip(src.tolist(), dst.tolist()):
        a, b = find(u), find(v)
        if a != b:
            if size[a] < size[b]:
                a, b = b, a
            parent[b] = a
            size[a] += size[b]
    return _smallest_ids([find(x) for x in range(n)], ids)


def _smallest_ids(roots, ids):
    """Per vertex, the smallest ``ids[x]`` over the vertices x with its ``roots`` entry (any
    name of its component)."""
    best = {}
    for x, r in enumerate(roots):
        if r not in best or ids[x] < best[r]:
            best[r] = ids[x]
    labels = np.empty(len(roots), dtype=ids.dtype)
    for x, r in enumerate(roots):
        labels[x] = best[r]
    return labels


# ---------------------------------------------------------------------------------------------
# strongly connected components


def strongly_connected_components(n, src, dst, ids):
    """Labels (length n, dtype of ``ids``): the smallest original id ``ids[u]`` over the
    strongly connected component of each vertex (u and v share one when each reaches the
    other along directed edges), by Tarjan's algorithm written without recursion: a depth-first
    search numbers the vertices in visiting order, ``low[v]`` is the smallest number reachable
    from v's subtree by one edge into a vertex still on the stack, and v roots a component
    exactly when ``low[v]`` is its own number, which then pops off the stack."""
    src, dst = _edges(n, src, dst)
    ids = np.asarray(ids)
    if ids.shape != (n,):
        raise ValueError("ids must give one original id per vertex")
    out = _out_lists(n, src, dst)
    number, low, on_stack = [-1] * n, [0] * n, [False] * n
    root, stack, counter = [-1] * n, [], 0
    for start in range(n):
        if number[start] >= 0:
            continue
        work = [(start, 0)]  # (vertex, index of its next out-edge)
        while work:
            v, i = work.pop()
            if i == 0:
                number[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            if i < len(out[v]):
                work.append((v, i + 1))
                w = out[v][i]
                if number[w] < 0:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], number[w])
                continue
            if low[v] == number[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    root[w] = v
                    if w == v:
                        break
            if work:  # back in the parent: its low takes the child's
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return _smallest_ids(root, ids)


# ---------------------------------------------------------------------------------------------
# item 12: core number and k-core


def core_number(n, src, dst):
    """Core numbers (int64, length n) of the simple undirected view, by the Batagelj-Zaversnik
    bucket algorithm: repeatedly remove a vertex of minimum current degree; its core number is
    its degree at removal (never below that of an earlier removed vertex)."""
    src, dst = _edges(n, src, dst)
    adj = _simple_undirected(n, src, dst)
    deg = [len(a) for a in adj]
    maxdeg = max(deg, default=0)
    # vertices sorted by degree, with bin starts, positions and the sorted order (BZ 2003)
    bins = [0] * (maxdeg + 1)
    for d in deg:
        bins[d] += 1
    start = 0
    for d in range(maxdeg + 1):
        bins[d], start = start, start + bins[d]
    pos = [0] * n
    vert = [0] * n
    for v in range(n):
        pos[v] = bins[deg[v]]
        vert[pos[v]] = v
        bins[deg[v]] += 1
    for d in range(maxdeg, 0, -1):
        bins[d] = bins[d - 1]
    bins[0] = 0
    for i in range(n):
        v = vert[i]
        for u in adj[v]:
            if deg[u] > deg[v]:
                du = deg[u]
                pu = pos[u]
                pw = bins[du]
                w = vert[pw]
                if u != w:
                    pos[u], pos[w] = pw, pu
                    vert[pu], vert[pw] = w, u
                bins[du] += 1
                deg[u] -= 1
    return np.array(deg, dtype=np.int64)


def k_core(n, src, dst, k):
    """Membership (bool, length n) of the k-core of the simple undirected view, found by peeling
    alone (independent of ``core_number``): repeatedly delete every vertex whose degree among the
    remaining vertices is below k; the survivors are the vertices with core number >= k."""
    src, dst = _edges(n, src, dst)
    adj = _simple_undirected(n, src, dst)
    deg = [len(a) for a in adj]
    alive = [True] * n
    stack = [v for v in range(n) if deg[v] < k]
    for v in stack:
        alive[v] = False
    while stack:
        v = stack.pop()
        for u in adj[v]:
            if alive[u]:
                deg[u] -= 1
                if deg[u] < k:
                    alive[u] = False
                    stack.append(u)
    return np.array(alive, dtype=bool)


# ---------------------------------------------------------------------------------------------
# issue 36: minimum spanning forest


def minimum_spanning_forest(n, src, dst, weights):
    """Positions (ascending, int64) in the undirected edge list ``src``, ``dst``, ``weights``
    (each edge once, in either orientation; self-loops and parallel edges allowed) of its
    minimum spanning forest, by Kruskal's algorithm: the edges in ascending (weight, position)
    order, each kept when its ends are still in different trees of a hand-written union-find.
    Weights are finite and non-negative; ties go to the earlier position, so the forest is
    unique."""
    src, dst = _edges(n, src, dst)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != src.shape:
        raise ValueError("weights must give one value per edge")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("spanning forest weights must be finite and non-negative")
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    kept = []
    for i in np.lexsort((np.arange(len(w)), w)).tolist():
        a, b = find(int(src[i])), find(int(dst[i]))
        if a != b:
            parent[max(a, b)] = min(a, b)
            kept.append(i)
    return np.sort(np.array(kept, dtype=np.int64))
