"""Embedded small graphs and deterministic synthetic graph generators.

Everything here produces edge lists as pandas DataFrames with int64 ``src`` and ``dst`` columns
(and a float32 ``weight`` column where the graph has weights); turning them into a
:class:`~onyx_rapids.graph.Graph` is the job of the ingestion layer.

Embedded graphs ship as Parquet files in ``onyx_rapids/data/`` (sources, citations and licences
in ``onyx_rapids/data/README.md``).  An undirected graph is stored with each edge listed once,
``src < dst``, sorted by ``(src, dst)``; whoever builds a graph from it adds the reverse edges.

>>> from onyx_rapids import datasets
>>> [d["name"] for d in datasets.list_datasets()]
['karate', 'les_miserables', 'florentine_families']
>>> datasets.load_edges(datasets.DEFAULT_GRAPH).shape
(78, 3)

Generators are deterministic (same arguments, seed and NumPy version: identical output; NumPy
does not promise identical streams across its releases), vectorized, and fill their output in
chunks of :data:`CHUNK_EDGES` edges so that scratch memory stays bounded however large the graph:

>>> df = datasets.rmat(10, seed=1)
>>> len(df), df["src"].dtype.name
(16384, 'int64')
>>> df.equals(datasets.rmat(10, seed=1))
True

Each generator draws the topology, the weights and (for R-MAT) the vertex permutation from
independent streams spawned from ``numpy.random.default_rng(seed)``, so ``weighted=True`` returns
the same edges as ``weighted=False`` plus a weight column.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import secrets
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "CHUNK_EDGES",
    "DEFAULT_GRAPH",
    "GENERATOR_KINDS",
    "dataset_path",
    "erdos_renyi",
    "generate",
    "grid_2d",
    "list_datasets",
    "load_edges",
    "load_labels",
    "rmat",
    "write_parquet",
]

DEFAULT_GRAPH = "karate"

#: Edges generated per chunk; part of the definition of a generator's output for a given seed.
CHUNK_EDGES = 1 << 22

_DATA_DIR = Path(__file__).resolve().parent / "data"

# Weights are uniform in [WEIGHT_LOW, 1.0): bounded away from zero so that shortest paths and
# normalizations never meet a zero weight.
_WEIGHT_LOW = 0.1


# --------------------------------------------------------------------------------------------
# Embedded graphs


@dataclasses.dataclass(frozen=True)
class _Dataset:
    name: str
    file: str
    n: int
    m: int
    directed: bool
    weighted: bool
    description: str
    labels_file: str | None = None


_DATASETS = {
    d.name: d
    for d in (
        _Dataset(
            name="karate",
            file="karate_club.parquet",
            n=34,
            m=78,
            directed=False,
            weighted=True,
            description=(
                "Zachary's karate club (1977): friendships among 34 members of a university "
                "club; weight = number of contexts of interaction. Labels: the club each member "
                "joined after the split (0 = 'Mr. Hi', 1 = 'Officer')."
            ),
            labels_file="karate_club_labels.parquet",
        ),
        _Dataset(
            name="les_miserables",
            file="les_miserables.parquet",
            n=77,
            m=254,
            directed=False,
            weighted=True,
            description=(
                "Co-appearance of characters in Hugo's Les Miserables (Knuth, Stanford "
                "GraphBase); weight = number of co-appearances. Labels: character names."
            ),
            labels_file="les_miserables_vertices.parquet",
        ),
        _Dataset(
            name="florentine_families",
            file="florentine_families.parquet",
            n=15,
            m=20,
            directed=False,
            weighted=False,
            description=(
                "Marriage ties among 15 Renaissance Florentine families (Padgett; Breiger and "
                "Pattison 1986). Labels: family names."
            ),
            labels_file="florentine_families_vertices.parquet",
        ),
    )
}


def _lookup(name) -> _Dataset:
    try:
        return _DATASETS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown dataset name={name!r}; available: {', '.join(_DATASETS)}"
        ) from None


def list_datasets() -> list[dict]:
    """Describe the embedded graphs: one dict per graph, with keys ``name``, ``n`` (vertices),
    ``m`` (edges as stored: an undirected edge counts once), ``directed``, ``weighted``,
    ``has_labels`` and ``description``.

    >>> [(d["name"], d["n"], d["m"]) for d in list_datasets()][0]
    ('karate', 34, 78)
    """
    return [
        {
            "name": d.name,
            "n": d.n,
            "m": d.m,
            "directed": d.directed,
            "weighted": d.weighted,
            "has_labels": d.labels_file is not None,
            "description": d.description,
        }
        for d in _DATASETS.values()
    ]


def dataset_path(name: str) -> Path:
    """Path of the Parquet edge file of the embedded graph ``name``.

    >>> dataset_path("karate").name
    'karate_club.parquet'
    """
    return _DATA_DIR / _lookup(name).file


def load_edges(name: str = DEFAULT_GRAPH) -> pd.DataFrame:
    """Edges of the embedded graph ``name``: int64 ``src``, ``dst`` (vertex ids ``0..n-1``) and,
    for weighted graphs, float32 ``weight``.  Undirected graphs list each edge once, src < dst.

    >>> df = load_edges("karate")
    >>> list(df.columns), len(df)
    (['src', 'dst', 'weight'], 78)
    """
    return pd.read_parquet(dataset_path(name))


def load_labels(name: str = DEFAULT_GRAPH) -> pd.DataFrame:
    """Vertex table of the embedded graph ``name``, one row per vertex, sorted by ``vertex``.

    For ``"karate"`` the columns are ``vertex`` and ``club`` (0 = 'Mr. Hi', 1 = 'Officer': the
    club each member joined after the split, the ground truth for community detection); for the
    other graphs ``vertex`` and ``name``.

    >>> labels = load_labels("karate")
    >>> list(labels.columns), int(labels["club"].sum())
    (['vertex', 'club'], 17)
    """
    d = _lookup(name)
    if d.labels_file is None:  # pragma: no cover - every shipped graph has one today
        with_labels = [k for k, v in _DATASETS.items() if v.labels_file is not None]
        raise ValueError(f"dataset name={name!r} has no labels; these do: {', '.join(with_labels)}")
    return pd.read_parquet(_DATA_DIR / d.labels_file)


# --------------------------------------------------------------------------------------------
# Argument checks


def _check_int(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_probability(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


# Copies of the edge list that generating a graph and then using it hold at once: the generated
# columns, and the renumbered and sorted copies that building a Graph (or writing Parquet)
# makes. The memory check below refuses sizes that cannot fit, before anything is allocated.
_MEMORY_COPIES = 3


def _available_memory() -> int | None:
    """Bytes of host memory this process can still take: /proc/meminfo's MemAvailable (else
    free pages by os.sysconf), capped by a cgroup memory limit; None when unknown."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            pass
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),  # cgroup v2
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
         "/sys/fs/cgroup/memory/memory.usage_in_bytes"),  # cgroup v1
    ):
        try:
            with open(limit_file) as f:
                limit = f.read().strip()
            if limit == "max":
                break
            with open(usage_file) as f:
                usage = int(f.read().strip())
            if int(limit) < 1 << 60:  # v1 writes a huge number for "no limit"
                found.append(max(0, int(limit) - usage))
            break
        except (OSError, ValueError):
            continue
    return min(found) if found else None


def _format_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def _edge_bytes(edges: int, weighted: bool, extra: int = 0) -> int:
    """Host memory that ``edges`` generated edges need: int64 src and dst (+ float32 weight),
    times :data:`_MEMORY_COPIES`, plus ``extra`` bytes."""
    return edges * (16 + (4 if weighted else 0)) * _MEMORY_COPIES + extra


def _check_memory(what: str, edges: int, weighted: bool, extra: int = 0,
                  fits=None) -> None:
    """ValueError, before anything is allocated, when the graph cannot fit in host memory.

    ``what`` names the call and its size arguments; ``fits`` (optional: a str, or a callable
    returning one, called only on refusal) says what to do instead."""
    need = _edge_bytes(edges, weighted, extra)
    available = _available_memory()
    if available is None or need <= available:
        return
    per_edge = 16 + (4 if weighted else 0)
    raise ValueError(
        f"{what} would need about {_format_bytes(need)} of host memory ({edges:,} edges x "
        f"{per_edge} bytes x {_MEMORY_COPIES} copies for generating, renumbering and sorting "
        f"them), but only {_format_bytes(available)} are available; "
        + ((fits() if callable(fits) else fits) or "choose a smaller graph")
    )


def _largest_scale(edges_per_vertex: float, weighted: bool, extra_per_vertex: int = 8) -> int:
    """The largest scale (2**scale vertices, ``edges_per_vertex`` edges each) whose memory
    estimate fits what is available now (0: none)."""
    available = _available_memory()
    scale = 0
    while scale < 40 and available is not None:
        n = 1 << (scale + 1)
        need = _edge_bytes(int(edges_per_vertex * n), weighted, extra_per_vertex * n)
        if need > available:
            break
        scale += 1
    return scale


def _edge_frame(src: np.ndarray, dst: np.ndarray, weight: np.ndarray | None) -> pd.DataFrame:
    columns = {"src": src, "dst": dst}
    if weight is not None:
        columns["weight"] = weight
    # copy=False keeps one buffer per column instead of consolidating (a second full copy).
    return pd.DataFrame(columns, copy=False)


def _uniform_weights(rng: np.random.Generator, m: int) -> np.ndarray:
    """float32 weights uniform in [0.1, 1.0), drawn in chunks."""
    weight = np.empty(m, dtype=np.float32)
    below_one = np.nextafter(np.float32(1.0), np.float32(0.0))
    for lo in range(0, m, CHUNK_EDGES):
        w = weight[lo : lo + CHUNK_EDGES]
        rng.random(out=w, dtype=np.float32)
        w *= np.float32(1.0 - _WEIGHT_LOW)
        w += np.float32(_WEIGHT_LOW)
        np.minimum(w, below_one, out=w)  # float32 rounding could otherwise reach 1.0
    return weight


# --------------------------------------------------------------------------------------------
# Generators


def rmat(
    scale: int,
    edge_factor: int = 16,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    weighted: bool = False,
    permute: bool = True,
    noise: float = 0.0,
) -> pd.DataFrame:
    """R-MAT / Kronecker graph as generated by the Graph500 benchmark.

    ``n = 2**scale`` vertices, ``m = edge_factor * n`` directed edges.  Each edge descends
    ``scale`` levels of the adjacency matrix, picking at every level the top-left, top-right,
    bottom-left or bottom-right quadrant with probabilities ``a``, ``b``, ``c`` and
    ``d = 1 - a - b - c`` (Graph500: 0.57, 0.19, 0.19, 0.05); the first level picks the most
    significant bit of ``src`` (row) and ``dst`` (column).  As in Graph500, self-loops and
    duplicate edges are kept in the edge list (``Graph.from_edgelist`` merges them into a simple
    graph unless ``multigraph=True``), and
    with ``permute=True`` vertex ids are relabelled by a uniformly random permutation so that
    degree does not correlate with id.  The permutation comes from its own random stream:
    ``permute=False`` returns the same edges under the identity labelling.  Graph500 also
    shuffles the edge order; edges here are independent draws, so their order is already random.

    ``noise > 0`` gives the noisy stochastic Kronecker graph of Seshadhri, Pinar and Kolda
    (2013), which smooths the oscillating degree distribution of plain R-MAT: at each level one
    ``mu`` uniform in ``[-noise, noise]`` shifts the probabilities to
    ``a - 2*mu*a/(a+d)``, ``b + mu``, ``c + mu``, ``d - 2*mu*d/(a+d)``;
    ``noise`` must lie in ``[0, min((a+d)/2, b, c)]``.

    Returns a DataFrame with int64 ``src``, ``dst`` in ``[0, n)`` and, if ``weighted``, float32
    ``weight`` uniform in [0.1, 1.0).  Scale 22 (67M edges) takes a few seconds on one core;
    scratch memory is a few chunks of :data:`CHUNK_EDGES` edges besides the output.

    >>> df = rmat(8, edge_factor=4, seed=3, weighted=True)
    >>> len(df), int(df[["src", "dst"]].max().max()) < 256
    (1024, True)
    >>> rmat(8, seed=3).equals(rmat(8, seed=3))
    True
    """
    scale = _check_int("scale", scale, 1)
    if scale > 40:
        raise ValueError(f"scale must be <= 40 (2**scale vertices), got {scale}")
    edge_factor = _check_int("edge_factor", edge_factor, 1)
    a = _check_probability("a", a)
    b = _check_probability("b", b)
    c = _check_probability("c", c)
    if a + b + c >= 1.0:
        raise ValueError(
            f"a + b + c must be < 1 so that d = 1 - a - b - c > 0, got a={a}, b={b}, c={c}"
        )
    d = 1.0 - a - b - c
    max_noise = min((a + d) / 2, b, c)
    is_real = isinstance(noise, numbers.Real) and not isinstance(noise, bool)
    if not is_real or not 0 <= noise <= max_noise:
        raise ValueError(
            f"noise must be in [0, min((a+d)/2, b, c)] = [0, {max_noise:.6g}], got {noise!r}"
        )
    seed = _check_int("seed", seed, 0)

    n = 1 << scale
    m = edge_factor * n
    _check_memory(f"rmat(scale={scale}, edge_factor={edge_factor})", m, weighted,
                  extra=8 * n if permute else 0,
                  fits=lambda: f"choose scale <= {_largest_scale(edge_factor, weighted)} (or a "
                               "smaller edge_factor), or generate on a machine with more memory")
    edge_rng, weight_rng, perm_rng, noise_rng = np.random.default_rng(seed).spawn(4)

    # Per-level quadrant thresholds on one uniform u: u < a -> (0,0), < a+b -> (0,1),
    # < a+b+c -> (1,0), else (1,1).  Row bit = [u >= a+b]; column bit = [u>=a]^[u>=a+b]^[u>=a+b+c].
    if noise > 0:
        mu = noise_rng.uniform(-noise, noise, size=scale)
        level_a = a - 2 * mu * a / (a + d)
        level_b = b + mu
        level_c = c + mu
    else:
        level_a, level_b, level_c = (np.full(scale, p) for p in (a, b, c))
    thresholds = np.stack([level_a, level_a + level_b, level_a + level_b + level_c], axis=1)
    thresholds = thresholds.astype(np.float32)

    src = np.empty(m, dtype=np.int64)
    dst = np.empty(m, dtype=np.int64)
    chunk = min(m, CHUNK_EDGES)
    u = np.empty(chunk, dtype=np.float32)
    row_bit = np.empty(chunk, dtype=bool)
    col_bit = np.empty(chunk, dtype=bool)
    for lo in range(0, m, CHUNK_EDGES):
        hi = min(m, lo + CHUNK_EDGES)
        s, t = src[lo:hi], dst[lo:hi]
        uu, rb, cb = u[: hi - lo], row_bit[: hi - lo], col_bit[: hi - lo]
        s[:] = 0
        t[:] = 0
        for t_a, t_ab, t_abc in thresholds:
            edge_rng.random(out=uu, dtype=np.float32)
            np.greater_equal(uu, t_ab, out=rb)
            np.greater_equal(uu, t_a, out=cb)
            np.logical_xor(cb, rb, out=cb)
            np.left_shift(s, 1, out=s)
            np.bitwise_or(s, rb, out=s)
            np.greater_equal(uu, t_abc, out=rb)
            np.logical_xor(cb, rb, out=cb)
            np.left_shift(t, 1, out=t)
            np.bitwise_or(t, cb, out=t)

    if permute:
        perm = perm_rng.permutation(n)
        scratch = np.empty(chunk, dtype=np.int64)
        for ids in (src, dst):
            for lo in range(0, m, CHUNK_EDGES):
                part = ids[lo : lo + CHUNK_EDGES]
                np.take(perm, part, out=scratch[: len(part)])
                part[:] = scratch[: len(part)]

    weight = _uniform_weights(weight_rng, m) if weighted else None
    return _edge_frame(src, dst, weight)


def _pair_from_index(index: np.ndarray, n: int, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Map linear indices over the vertex pairs without self-loops, ordered pairs
    (``directed``) or pairs ``src < dst``, to the pairs, numbered in (src, dst) order."""
    if directed:
        src, r = np.divmod(index, n - 1)
        dst = r + (r >= src)
        return src, dst
    # Number the pairs from the end and reflect the ids (v -> n-1-v), so that increasing
    # indices come out sorted by (src, dst).
    index = n * (n - 1) // 2 - 1 - index
    i = np.floor((1.0 + np.sqrt(1.0 + 8.0 * index.astype(np.float64))) / 2.0).astype(np.int64)
    for _ in range(2):  # repair float rounding of the square root
        i -= i * (i - 1) // 2 > index
        i += (i + 1) * i // 2 <= index
    j = index - i * (i - 1) // 2
    return (n - 1) - i, (n - 1) - j


def erdos_renyi(
    n: int,
    m: int | None = None,
    p: float | None = None,
    seed: int = 0,
    directed: bool = True,
    weighted: bool = False,
) -> pd.DataFrame:
    """Erdos-Renyi random graph on ``n`` vertices, without self-loops; give exactly one of:

    * ``m``: G(n, m) sampled *with replacement*: ``m`` edges, each uniform over the
      ``n*(n-1)`` ordered pairs (``directed``) or the ``n*(n-1)/2`` unordered pairs, drawn
      independently, so duplicate edges can occur (rarely, when ``m << n**2``);
    * ``p``: exact G(n, p): each possible edge present independently with probability ``p``, no
      duplicates (geometric skipping over the pairs, Batagelj and Brandes 2005); needs
      ``n <= 2**31``.

    Undirected graphs list each edge once with ``src < dst``.  G(n, p) output is sorted by
    ``(src, dst)``; G(n, m) output is in draw order.

    >>> df = erdos_renyi(100, m=500, seed=2)
    >>> len(df), bool((df["src"] != df["dst"]).all())
    (500, True)
    >>> len(erdos_renyi(5, p=1.0, directed=False))
    10
    """
    n = _check_int("n", n, 0)
    if (m is None) == (p is None):
        raise ValueError(
            f"give exactly one of m (edge count) or p (edge probability); got m={m!r}, p={p!r}"
        )
    seed = _check_int("seed", seed, 0)
    edge_rng, weight_rng = np.random.default_rng(seed).spawn(2)
    pairs = n * (n - 1) if directed else n * (n - 1) // 2

    if m is not None:
        m = _check_int("m", m, 0)
        if m > 0 and n < 2:
            raise ValueError(f"n must be >= 2 to place m={m} edges without self-loops, got n={n}")
        _check_memory(f"erdos_renyi(n={n}, m={m})", m, weighted, fits="choose a smaller m")
        src = np.empty(m, dtype=np.int64)
        dst = np.empty(m, dtype=np.int64)
        for lo in range(0, m, CHUNK_EDGES):
            s, t = src[lo : lo + CHUNK_EDGES], dst[lo : lo + CHUNK_EDGES]
            s[:] = edge_rng.integers(0, n, size=len(s), dtype=np.int64)
            t[:] = edge_rng.integers(0, n - 1, size=len(t), dtype=np.int64)
            t += t >= s  # skip the diagonal: uniform over the other n - 1 vertices
            if not directed:
                lo_id = np.minimum(s, t)
                np.maximum(s, t, out=t)
                s[:] = lo_id
    else:
        p = _check_probability("p", p)
        if n > 1 << 31:
            raise ValueError(f"n must be <= 2**31 with p (pair indices fit in int64), got n={n}")
        _check_memory(f"erdos_renyi(n={n}, p={p})", int(p * pairs), weighted,
                      fits="choose a smaller n or p")
        chunks = [(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))]
        position = -1  # index of the last edge placed
        expected = p * pairs
        draw = int(min(CHUNK_EDGES, expected + 6 * math.sqrt(expected) + 16))
        while p > 0 and position < pairs - 1:
            gaps = edge_rng.geometric(p, size=draw).astype(np.int64, copy=False)
            np.minimum(gaps, pairs + 1, out=gaps)  # any gap this long ends the graph: no overflow
            positions = position + np.cumsum(gaps)
            past_end = np.flatnonzero(positions >= pairs)
            if len(past_end):
                positions = positions[: past_end[0]]
            chunks.append(_pair_from_index(positions, n, directed))
            if len(past_end):
                break
            position = int(positions[-1])
        src = np.concatenate([s for s, _ in chunks])
        dst = np.concatenate([t for _, t in chunks])
        del chunks
        m = len(src)

    weight = _uniform_weights(weight_rng, m) if weighted else None
    return _edge_frame(src, dst, weight)


def grid_2d(rows: int, cols: int, weighted: bool = False, seed: int = 0) -> pd.DataFrame:
    """Road-like 4-neighbour grid: vertex ``r*cols + c`` for row ``r``, column ``c``, joined to
    its right and lower neighbours.  Undirected, each edge listed once with ``src < dst``, sorted
    by ``(src, dst)``: ``2*rows*cols - rows - cols`` edges.  ``seed`` only drives the weights
    (float32, uniform in [0.1, 1.0), when ``weighted``).

    >>> grid_2d(2, 3)
       src  dst
    0    0    1
    1    0    3
    2    1    2
    3    1    4
    4    2    5
    5    3    4
    6    4    5
    """
    rows = _check_int("rows", rows, 1)
    cols = _check_int("cols", cols, 1)
    seed = _check_int("seed", seed, 0)
    n = rows * cols
    # Scratch: candidate src/dst (2n each, int64) and the keep mask.
    _check_memory(f"grid_2d(rows={rows}, cols={cols})", 2 * n, weighted, extra=40 * n,
                  fits="choose fewer rows or columns")
    vertex = np.arange(n, dtype=np.int64)
    # Candidate (right, down) neighbour per vertex, flattened so that the output comes out
    # sorted by (src, dst) without a sort.
    src = np.repeat(vertex, 2)
    dst = np.empty(2 * n, dtype=np.int64)
    dst[0::2] = vertex + 1
    dst[1::2] = vertex + cols
    keep = np.empty(2 * n, dtype=bool)
    keep[0::2] = vertex % cols != cols - 1
    keep[1::2] = vertex < n - cols
    src, dst = src[keep], dst[keep]
    weight = _uniform_weights(np.random.default_rng(seed), len(src)) if weighted else None
    return _edge_frame(src, dst, weight)


GENERATOR_KINDS = ("rmat", "kronecker", "erdos_renyi", "grid")


def generate(kind: str, scale: int, seed: int = 0, weighted: bool = False) -> pd.DataFrame:
    """Synthetic graph with ``2**scale`` vertices, by name (for the CLI and benchmarks):

    * ``"rmat"`` / ``"kronecker"`` (alias): :func:`rmat` with Graph500 parameters, 16n edges;
    * ``"erdos_renyi"``: directed G(n, m) with ``m = 16n``;
    * ``"grid"``: :func:`grid_2d` with ``2**(scale//2)`` rows and ``2**(scale - scale//2)``
      columns.

    >>> len(generate("grid", 4)), len(generate("kronecker", 4))
    (24, 256)
    """
    if kind not in GENERATOR_KINDS:
        raise ValueError(
            f"unknown generator kind={kind!r}; choose one of {', '.join(GENERATOR_KINDS)}"
        )
    scale = _check_int("scale", scale, 1)
    n = 1 << scale
    # edges and scratch bytes per vertex of each kind (grid: about 2 edges per vertex)
    per_vertex, extra = {"grid": (2, 40), "erdos_renyi": (16, 0)}.get(kind, (16, 8))
    _check_memory(f"generate({kind!r}, scale={scale})", per_vertex * n, weighted,
                  extra=extra * n,
                  fits=lambda: f"choose scale <= {_largest_scale(per_vertex, weighted, extra)}, "
                               "or generate on a machine with more memory")
    if kind in ("rmat", "kronecker"):
        return rmat(scale, seed=seed, weighted=weighted)
    if kind == "erdos_renyi":
        return erdos_renyi(n, m=16 * n, seed=seed, weighted=weighted)
    return grid_2d(1 << (scale // 2), 1 << (scale - scale // 2), weighted=weighted, seed=seed)


# --------------------------------------------------------------------------------------------
# Output


def write_parquet(df: pd.DataFrame, path, overwrite: bool = False) -> Path:
    """Write ``df`` (without its index) to the Parquet file ``path`` atomically: the data go to
    a temporary file in the same directory, which is fsynced and then renamed into place, so a
    reader never sees a partial file.  Parent directories are created.  An existing ``path``
    raises FileExistsError unless ``overwrite=True``.  Returns the path.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "graphs" / "grid.parquet"
    >>> write_parquet(grid_2d(3, 3), out).name
    'grid.parquet'
    >>> len(pd.read_parquet(out))
    12
    """
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    path = Path(path)
    exists = f"{path} already exists; pass overwrite=True to replace it"
    if path.exists() and not overwrite:
        raise FileExistsError(exists)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Not tempfile.mkstemp: its 0600 mode would stick to the final file; "x" honours the umask.
    tmp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        with open(tmp, "xb") as f:
            df.to_parquet(f, index=False)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() refuses to clobber a file that appeared since the check above.
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise FileExistsError(exists) from None
            except OSError:  # filesystem without hard links
                os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
