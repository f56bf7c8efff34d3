"""Concurrent union-find over a symmetric CSR (weakly connected components by hooking), with
Afforest's neighbour sampling (Sutton et al., IPDPS 2018).

Every vertex starts as its own tree (``parent[v] = v``).  ``union(u, v)`` finds both roots and
hooks the larger root under the smaller one with a compare-and-swap, which succeeds only while
the larger is still a root; a failed swap means another thread hooked it first, and the thread
climbs on from the root it was hooked to.  The edges are taken in Afforest's order: every vertex
unions with its first neighbour, then its second (``link_neighbour``, a compression after
each); by then most vertices of a large component share one root, the *giant*, found by
sampling; ``link_rest`` then walks the remaining edges of the vertices outside the giant only
(an edge from the giant to another component is walked from the other side).  Hooking larger under smaller keeps ``parent[x] <= x``, so the
root of every tree is the smallest id in it, and at the end the smallest id of each component.
``find`` halves paths as it climbs (each visited entry is pointed at its grandparent: a racy
write, but any ancestor is a correct parent, so every interleaving keeps the forest valid).
A final pass points every vertex straight at its root.
"""

from __future__ import annotations

from numba import cuda

from .disk_cache import persist


@cuda.jit(device=True, inline=True)
def find(parent, x):
    """The root of ``x``'s tree, halving the path on the way."""
    p = parent[x]
    while p != x:
        gp = parent[p]
        if gp != p:
            parent[x] = gp  # ancestor of x either way
        x = p
        p = gp
    return x


@cuda.jit(device=True, inline=True)
def union(parent, u, v):
    """Hook the larger of the two roots under the smaller, retrying while others hook first."""
    ru = find(parent, u)
    rv = find(parent, v)
    while ru != rv:
        big = ru if ru > rv else rv
        small = rv if ru > rv else ru
        seen = cuda.atomic.cas(parent, big, big, small)
        if seen == big:
            return  # hooked
        # big was hooked by another thread to seen (< big): climb on from there
        ru = find(parent, seen)
        rv = small


@persist
@cuda.jit
def link_neighbour(offsets, indices, parent, r):
    """Union every vertex with its ``r``-th neighbour (Afforest's sampling rounds)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, parent.shape[0], stride):
        p = offsets[v] + r
        if p < offsets[v + 1]:
            union(parent, v, indices[p])


@persist
@cuda.jit
def link_rest(offsets, indices, parent, r, giant):
    """Union every vertex outside the component rooted at ``giant`` with its neighbours from
    the ``r``-th on.  (An edge between the giant and another component is walked from the
    other side; edges inside the giant are not needed.)"""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, parent.shape[0], stride):
        if parent[v] == giant:
            continue
        for p in range(offsets[v] + r, offsets[v + 1]):
            union(parent, v, indices[p])


@persist
@cuda.jit
def compress(parent):
    """Point every vertex at its root (the trees no longer change)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for v in range(start, parent.shape[0], stride):
        root = parent[v]
        while parent[root] != root:
            root = parent[root]
        parent[v] = root
