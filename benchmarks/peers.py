"""SpMM-peer benchmark (issue 5): feature_propagation (APPNP, k features),
personalized_pagerank (k sources) and label_propagation (k classes) per iteration, ours against
CuPy/cuSPARSE SpMM and PyTorch (Geometric) doing the same propagation, with a roofline column
and scaling plots; and (``--convergence``) our time to convergence, change-driven against bulk.

    python -m benchmarks.peers [--algorithms feature_propagation,personalized_pagerank,
                                             label_propagation]
                               [--families rmat,grid] [--ks 1,4,32,128,256] [--scale 22]
                               [--edge-factor 16] [--grid-side 4096] [--seed 0]
                               [--iterations 10] [--repeat 3] [--copy-mib 1024] [--no-pyg]
                               [--check-tol 1e-3] [--out benchmarks/results] [--tag ...] [--quick]
    python -m benchmarks.peers --scaling edges [--scaling-scales 16,17,...,22] [--scaling-k 32]
    python -m benchmarks.peers --scaling k [--ks 1,2,4,...,256] [--families rmat]
    python -m benchmarks.peers --convergence [--algorithms pagerank,personalized_pagerank,
                                              label_propagation] [--families ...] [--ks ...]
                               [--convergence-tol 1e-6] [--convergence-max-iter 100] [--repeat 3]

Graphs: the families of benchmarks/ablation.py, built by its ``build_family`` (same generator
parameters): ``rmat`` (Graph500 R-MAT a=0.57, b=c=0.19, permuted, scale ``--scale``, edge factor
``--edge-factor``, symmetrized: m counts both directions) and ``grid`` (``--grid-side`` squared,
4-neighbour).  Both undirected.

What is compared (one iteration; ``X`` is n x k float32, rows in our internal vertex order):

* feature_propagation (APPNP, alpha 0.1): ``H <- (1 - alpha) M H + alpha X`` with
  ``M = D^-1/2 (A + I) D^-1/2`` over the simple undirected graph (``g.simple_undirected()``,
  D the degree of A + I), i.e. PyG's gcn_norm.  The peer's CSR is built once (timed apart, as
  graph construction) from the simple graph's ``out_offsets`` / ``out_indices`` (symmetric, so
  the same as its in-CSR), values ``1/sqrt(d_u d_v)``, plus the diagonal ``1/d_v``: one SpMM
  ``M @ H`` (n x n CSR times n x k dense) and one elementwise update per iteration.
* personalized_pagerank (alpha 0.85, k sources s_f): ``X <- alpha (P X + t D) + (1 - alpha) t``
  with ``P = A^T D_out^-1`` stored as the transposed (pull) CSR: row v lists v's in-neighbours u
  (``g.in_offsets`` / ``g.in_indices``, parallel edges kept as ours keeps them) with value
  ``1 / outdeg(u)``; ``D_f = sum of X[u, f] over dangling u`` (a 1 x n by n x k product), ``t``
  one-hot at s_f (added by a scatter of k values, not a dense n x k matrix).  X starts one-hot.
  Ours also computes its convergence test (max L1 change) every iteration; the peer does not.
* label_propagation (ALGORITHMS.md item 4; P = 1 partition of k classes, unweighted, alpha
  0.85, clamped): ``L <- normalize(alpha normalize(A L) + (1 - alpha) L)``, then the labelled
  rows reset to their one-hot rows of ``L^0``; ``normalize`` divides each row by its sum and
  leaves a zero row zero, as ours does (so a vertex without in-neighbours keeps its row).  ``A``
  is the pull CSR of ones (row v lists v's in-neighbours, ``g.in_offsets`` / ``g.in_indices``,
  parallel edges kept), as ours aggregates over N-(v).  The labelled vertices are
  benchmarks/foundation.py's ``lp_labels(g, k)``: a fixed random 1% (at least one), each with a
  random class; ``L^0`` is their one-hot rows and 1/k elsewhere.  k = 1 is trivial (every
  probability is 1: ours stops after one iteration), so that row reads ``n/a: ...`` and nothing
  runs.

Peers: ``cusparse``: ``cupyx.scipy.sparse.csr_matrix @ cupy`` dense (cuSPARSE SpMM), float32.
Without CuPy (the simulator) ``scipy.sparse`` runs the identical code path on the CPU, labelled
"scipy.sparse (CPU stand-in)" everywhere: it tests the harness, its times mean nothing.
``pyg``: with ``torch_geometric``, feature_propagation runs ``torch_geometric.nn.APPNP(K,
alpha, cached=True)`` on the simple graph's edge_index (its gcn_norm is the same M);
personalized_pagerank and label_propagation run ``torch.sparse.mm`` on the same matrix plus
torch elementwise operations (PyG's ``LabelPropagation`` iterates another formula: symmetric
normalization, no row normalization); with torch alone all three use ``torch.sparse.mm`` (a
torch sparse CSR of the same matrix); without torch the peer is skipped and the reason ("not
installed: ...") is printed and recorded.

Ours: the library's defaults (``feature_aware=True``; feature_propagation folded,
personalized_pagerank unfolded pull, label_propagation unfolded pull with float32 aggregates;
the PageRank and label propagation with ``tol=1e-12`` so they never stop early).

Timing (benchmarks/foundation.py's ``_timed``: device synchronized before and after): for ours
and every peer, a 1-iteration call and an N-iteration call (``--iterations``), each one warm-up
then ``--repeat`` timed calls, median.  ``ms/it`` in the table is the marginal time of an
iteration, ``(median N-call - median 1-call) / (N - 1)``: set-up, our result frame (a device to
pandas copy without cuDF) and the peer's output allocation cancel out.  The JSON also holds both
medians and ``full/N``.  Speedups are peer ms/it over ours (above 1: ours faster).

Roofline: the bytes an iteration must move at least, a LOWER BOUND:

    B = i (n + 1) + i m  +  4 n k  +  4 n k

(CSR offsets and column indices read once, i = bytes of an index, 4 for int32; the n x k float32
input read once; the n x k output written once; edge values, degrees, gathers repeated per edge
and the teleport vector are not counted).  m is the edges of the matrix walked: the simple
graph's (no self-loops) for feature_propagation, ``g.m`` for the others.  The
roofline fraction is ``(B / (ms/it)) / copy_bandwidth``, with the copy bandwidth measured in
the same run: ``cupy.copyto`` of ``--copy-mib`` MiB device to device, 2 x size bytes (read +
write) over the median of 10 timed copies after a warm-up.  Under the simulator: "not
measured" and no fraction.

Checks: per (algorithm, graph, k), ours (N iterations) against each peer (N iterations) on the
same inputs: max |ours - peer| and ||ours - peer|| / ||peer|| (relative L2, float64, block-wise
over columns); relative L2 above ``--check-tol`` (1e-3) or NaN is a failure: printed as FAILED
at once and at the end, the check cell reads FAILED, and the exit status is 1 (the files are
still written).  A peer that raises is a failure too.

Scaling (``--scaling``): ``edges``: R-MAT scales ``--scaling-scales`` (default 16..22: 2^20..2^26
input edges, m about twice that) at k ``--scaling-k`` (32); ``k``: one graph (the first of
``--families``) at ks ``--ks`` (default 1,2,4,...,256).  Each writes the table and a PNG of
ms/it (log-log) for ours and each peer, named as the JSON with ``.png``.

Convergence (``--convergence``; no peers, no bandwidth): on each of ``--families``,
``--algorithms`` (default pagerank, personalized_pagerank, label_propagation; the PageRank at
k = 1 only, the others at each k of ``--ks``, label_propagation k = 1 again ``n/a``) with the
inputs above, ours runs to convergence at ``tol=--convergence-tol`` (1e-6) and ``max_iter=
--convergence-max-iter`` (100, the library's default), everything else the library's default,
once with ``change_driven=False`` (bulk) and once with ``change_driven=True`` (CD).  For each:
iterations and converged (``return_info=True``), the median ms of ``--repeat`` calls after a
warm-up (``_timed``; the result frame included), and the ratio bulk ms / CD ms, set against
issue 5's target ``CD_TARGET`` (change-driven time to convergence 3x under the bulk iteration):
the table marks a ratio below 3x ``**miss**``.  Check: the two results agree, the PageRanks'
L1 distance of each column scaled to sum 1 (the largest over the columns) <= 1e-3, label
propagation's max abs difference of the probabilities <= 1e-3; a disagreement (or a call that
raises) is a failure as above.  The JSON's measurements hold ``bulk`` and ``cd``
(``iterations``, ``converged``, ``median_ms``, ``first_call_ms``), ``ratio`` and ``check``; the
Markdown table shows them.  ``--iterations``, ``--copy-mib``, ``--check-tol`` and ``--no-pyg``
play no part.

Output under ``--out``: ``peers_<device-slug>_<date>[_scaling-<mode>|_convergence][_<tag>]
[_quick].{json,md}`` (the Markdown also printed) and the plot.  ``--quick``: tiny graphs (R-MAT
scale 4, edge factor 4, 4 x 4 grid), ks 1,2, 2 iterations, repeat 1, 16 MiB copy; scaling
scales 4,5 and ks 1,2,4; convergence max_iter 10.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

import onyx_rapids as onyx
from onyx_rapids import device

from .ablation import build_family, make_inputs
from .foundation import (Bench, _choose, _column, _fmt, _free_device_memory, _git, _slug, _timed,
                         write_report)
from .foundation import _int_list as _positive_ints

ALGORITHMS = ("feature_propagation", "personalized_pagerank", "label_propagation")
CONVERGENCE_ALGORITHMS = ("pagerank", "personalized_pagerank", "label_propagation")
FAMILIES = ("rmat", "grid")
SCALING_MODES = ("edges", "k")
PEERS = ("cusparse", "pyg")
RESULT_PREFIX = {"feature_propagation": "h_", "personalized_pagerank": "ppr_",
                 "label_propagation": "lp_"}
APPNP_ALPHA = 0.1
PPR_ALPHA = 0.85
PPR_TOL = 1e-12  # no early stop: ours runs exactly the peer's iterations
LP_ALPHA = 0.85
LP_TOL = 1e-12  # as PPR_TOL
CHECK_BLOCK = 32  # columns compared at a time (float64 copies of n x 32)

DEFAULTS = dict(scale=22, edge_factor=16, grid_side=4096, ks="1,4,32,128,256", iterations=10,
                repeat=3, copy_mib=1024, scaling_scales="16,17,18,19,20,21,22", scaling_k=32,
                convergence_max_iter=100)
QUICK = dict(scale=4, edge_factor=4, grid_side=4, ks="1,2", iterations=2, repeat=1, copy_mib=16,
             scaling_scales="4,5", scaling_k=2, convergence_max_iter=10)
SCALING_KS = {False: "1,2,4,8,16,32,64,128,256", True: "1,2,4"}

#: issue 5's targets: per iteration at k >= MIN_K, ours at least this many times the peer
TARGETS = {"cusparse": 3.0, "pyg": 2.0}
TARGET_MIN_K = 32
#: issue 5's reference: cuSPARSE SpMM through CuPy on an H200, R-MAT scale 22, ms per SpMM
H200_SPMM_MS = {32: 39.7, 128: 155.0}
H200_REFERENCE_SCALE = 22
#: issue 5's target for --convergence: change-driven time to convergence at least this many
#: times under the bulk iteration's (ratio bulk ms / change-driven ms)
CD_TARGET = 3.0
#: --convergence: bulk and change-driven results agree (metric, tolerance)
#: (L1: of each column scaled to sum 1, the largest over the columns)
CONVERGENCE_AGREE = {"pagerank": ("L1", 1e-3), "personalized_pagerank": ("L1", 1e-3),
                     "label_propagation": ("max abs", 1e-3)}


def not_applicable(algorithm: str, k: int):
    """Why (algorithm, k) is not measured (a row reading this), or None."""
    if algorithm == "label_propagation" and k == 1:
        return ("n/a: label_propagation with k = 1 is trivial (every probability is 1: ours "
                "stops after one iteration, nothing changes)")
    return None


# ------------------------------------------------------------------------------ arguments


def _int_list(text, what: str, p) -> list[int]:
    return _positive_ints(text, what, p, allow_empty=False)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.peers",
                                description="onyx_rapids against SpMM peers (see the module "
                                            "docstring).")
    p.add_argument("--algorithms",
                   help="comma-separated subset of " + ",".join(ALGORITHMS) + " (default: all; "
                        "--convergence: of " + ",".join(CONVERGENCE_ALGORITHMS) + ")")
    p.add_argument("--families", default="rmat",
                   help="comma-separated subset of " + ",".join(FAMILIES) + " (default rmat)")
    p.add_argument("--ks", help=f"features / sources (default {DEFAULTS['ks']}; "
                                f"--scaling k: {SCALING_KS[False]})")
    p.add_argument("--scale", type=int, help=f"R-MAT scale (default {DEFAULTS['scale']})")
    p.add_argument("--edge-factor", type=int,
                   help=f"R-MAT input edges per vertex (default {DEFAULTS['edge_factor']})")
    p.add_argument("--grid-side", type=int,
                   help=f"grid rows = columns (default {DEFAULTS['grid_side']})")
    p.add_argument("--seed", type=int, default=0, help="graph generator seed (default 0)")
    p.add_argument("--iterations", type=int,
                   help=f"N of the full run (default {DEFAULTS['iterations']}; >= 2 for the "
                        "marginal ms/it)")
    p.add_argument("--repeat", type=int, help=f"timed calls (default {DEFAULTS['repeat']})")
    p.add_argument("--copy-mib", type=int,
                   help=f"size of the bandwidth copy (default {DEFAULTS['copy_mib']})")
    p.add_argument("--check-tol", type=float, default=1e-3,
                   help="largest relative L2 difference from a peer (default 1e-3)")
    p.add_argument("--no-pyg", action="store_true", help="skip the PyTorch (Geometric) peer")
    p.add_argument("--scaling", choices=SCALING_MODES,
                   help="edges: R-MAT scales --scaling-scales at k --scaling-k; k: one graph at "
                        "--ks; each writes a plot")
    p.add_argument("--scaling-scales",
                   help=f"R-MAT scales of --scaling edges (default {DEFAULTS['scaling_scales']})")
    p.add_argument("--scaling-k", type=int,
                   help=f"k of --scaling edges (default {DEFAULTS['scaling_k']})")
    p.add_argument("--convergence", action="store_true",
                   help="time to convergence of ours, change-driven against bulk, on --families "
                        "at --ks (no peers)")
    p.add_argument("--convergence-tol", type=float, default=1e-6,
                   help="tol of the --convergence runs (default 1e-6)")
    p.add_argument("--convergence-max-iter", type=int,
                   help="max_iter of the --convergence runs (default "
                        f"{DEFAULTS['convergence_max_iter']}, the library's; quick "
                        f"{QUICK['convergence_max_iter']})")
    p.add_argument("--out", default="benchmarks/results", help="output folder")
    p.add_argument("--tag", default="", help="appended to the output file names")
    p.add_argument("--quick", action="store_true",
                   help="tiny run for tests: R-MAT scale 4 / edge factor 4, 4 x 4 grid, ks 1,2, "
                        "2 iterations, repeat 1 (explicit options still win)")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    base = QUICK if args.quick else DEFAULTS
    if args.ks is None and args.scaling == "k":
        args.ks = SCALING_KS[args.quick]
    for key, value in base.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.convergence and args.scaling:
        p.error("--convergence and --scaling are separate modes: give one")
    allowed = CONVERGENCE_ALGORITHMS if args.convergence else ALGORITHMS
    args.algorithms = _choose(args.algorithms or ",".join(allowed), allowed, "--algorithms", p)
    args.families = _choose(args.families, FAMILIES, "--families", p)
    args.ks = _int_list(args.ks, "--ks", p)
    args.scaling_scales = _int_list(args.scaling_scales, "--scaling-scales", p)
    for key in ("scale", "edge_factor", "grid_side", "iterations", "repeat", "copy_mib",
                "scaling_k", "convergence_max_iter"):
        if getattr(args, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be >= 1, got {getattr(args, key)}")
    if not args.check_tol > 0:
        p.error(f"--check-tol must be positive, got {args.check_tol}")
    if not 0 < args.convergence_tol < float("inf"):
        p.error(f"--convergence-tol must be positive and finite, got {args.convergence_tol}")
    if args.scaling == "edges" and max(args.scaling_scales) > 30:
        p.error(f"--scaling-scales: scale {max(args.scaling_scales)} is too large (<= 30)")
    # ablation.build_family reads these (ratings graph, not built here)
    args.users, args.items, args.ratings = 1, 1, 1
    return args


# ------------------------------------------------------------------------------ roofline


def min_bytes(n: int, m: int, k: int, index_bytes: int = 4, value_bytes: int = 4) -> int:
    """Lower bound on the bytes one propagation iteration moves: CSR offsets (n + 1) and column
    indices (m) read once, the n x k input read once and the n x k output written once.

    >>> min_bytes(3, 4, 2)   # 4*4 + 4*4 + 4*3*2 + 4*3*2
    80
    """
    return index_bytes * (n + 1) + index_bytes * m + 2 * value_bytes * n * k


def roofline_fraction(nbytes, ms, bandwidth):
    """``nbytes / (ms / 1e3)`` as a fraction of ``bandwidth`` (bytes/s); None when either time
    or bandwidth is missing."""
    if not ms or not bandwidth or ms <= 0:
        return None
    return nbytes / (ms / 1e3) / bandwidth


def copy_bandwidth(mib: int, repeat: int = 10) -> dict:
    """Device-to-device copy bandwidth (bytes/s: 2 x size over the median copy); under the
    simulator "not measured"."""
    if device.BACKEND != "gpu":
        return {"bytes_per_s": None, "reason": "not measured: no GPU (simulator backend)"}
    cp = device.xp
    nbytes = int(mib) << 20
    src = cp.ones(nbytes // 4, dtype=np.float32)
    dst = cp.empty_like(src)
    _timed(lambda: cp.copyto(dst, src))  # warm-up
    times = [_timed(lambda: cp.copyto(dst, src))[1] for _ in range(repeat)]
    ms = statistics.median(times)
    del src, dst
    _free_device_memory()
    return {"bytes_per_s": 2 * nbytes / (ms / 1e3), "copy_bytes": nbytes, "median_ms": ms,
            "repeat": repeat, "method": "cupy.copyto device to device, 2 x size / median"}


# ------------------------------------------------------------------------------ the problem


class Problem:
    """One (algorithm, graph, k): inputs and the peer matrix (CSR arrays on the backend)."""

    def __init__(self, algorithm: str, g, k: int):
        xp = device.xp
        self.algorithm, self.g, self.k = algorithm, g, k
        inputs = make_inputs(algorithm, g, k, {})
        if algorithm == "feature_propagation":
            s = g.simple_undirected()
            self.x = inputs["features"]  # n x k float32, internal order
            deg = xp.diff(s.out_offsets).astype(np.float64) + 1.0
            inv = 1.0 / xp.sqrt(deg)
            rows = xp.repeat(xp.arange(s.n), xp.diff(s.out_offsets).astype(np.int64))
            self.indptr, self.indices = s.out_offsets, s.out_indices
            self.data = (inv[rows] * inv[s.out_indices]).astype(np.float32)
            self.diagonal = (inv * inv).astype(np.float32)
            self.edge_index = (rows, s.out_indices)  # PyG: source row, target column
            self.m = int(s.m)
        elif algorithm == "personalized_pagerank":
            self.sources = inputs["sources"]  # original ids
            self.internal = device.asarray(
                np.asarray(device.to_host(g.to_internal(self.sources)), dtype=np.int64))
            outdeg = xp.diff(g.out_offsets).astype(np.float64)
            inv = xp.where(outdeg > 0, 1.0 / xp.where(outdeg > 0, outdeg, 1.0), 0.0)
            self.indptr, self.indices = g.in_offsets, g.in_indices
            self.data = inv[g.in_indices].astype(np.float32)
            self.diagonal = None
            self.dangling = (outdeg == 0).astype(np.float32)
            self.m = int(g.m)
        else:  # label_propagation: unweighted pull CSR (row v: v's in-neighbours), labelled rows
            self.labels = inputs["labels"]  # vertex (original id), label: foundation.lp_labels
            self.internal = device.asarray(np.asarray(device.to_host(
                g.to_internal(self.labels["vertex"].to_numpy())), dtype=np.int64))
            self.classes = device.asarray(self.labels["label"].to_numpy().astype(np.int64))
            self.indptr, self.indices = g.in_offsets, g.in_indices
            self.data = xp.ones(int(g.m), dtype=np.float32)
            self.diagonal = None
            self.m = int(g.m)
        self.n = int(g.n)
        self.index_bytes = int(np.dtype(self.indices.dtype).itemsize)

    def start(self):
        """The iteration's input X^0 (n x k float32, backend array)."""
        if self.algorithm == "feature_propagation":
            return self.x
        if self.algorithm == "label_propagation":  # lp^0: uniform 1/k, one-hot where labelled
            x0 = device.xp.full((self.n, self.k), 1.0 / self.k, dtype=np.float32)
            x0[self.internal] = 0.0
            x0[self.internal, self.classes] = 1.0
            return x0
        x0 = device.xp.zeros((self.n, self.k), dtype=np.float32)
        x0[self.internal, device.xp.arange(self.k)] = 1.0
        return x0


def run_ours(problem: Problem, iterations: int):
    g, k = problem.g, problem.k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if problem.algorithm == "feature_propagation":
            return onyx.feature_propagation(g, problem.x, alpha=APPNP_ALPHA,
                                            iterations=iterations, return_info=True)
        if problem.algorithm == "label_propagation":
            return onyx.label_propagation(g, problem.labels, k, alpha=LP_ALPHA, tol=LP_TOL,
                                          max_iter=iterations, return_info=True)
        return onyx.personalized_pagerank(g, problem.sources, alpha=PPR_ALPHA, tol=PPR_TOL,
                                          max_iter=iterations, return_info=True)


def ours_columns(problem: Problem, frame, cols):
    return device.xp.stack([_column(frame, f"{RESULT_PREFIX[problem.algorithm]}{j}")
                            for j in cols], axis=1)


# ------------------------------------------------------------------------------ peers


def sparse_module():
    """(module, label): cupyx.scipy.sparse on a GPU, scipy.sparse as the CPU stand-in."""
    if device.BACKEND == "gpu":
        import cupyx.scipy.sparse as sp
        return sp, "cupyx.scipy.sparse (cuSPARSE)"
    import scipy.sparse as sp
    return sp, "scipy.sparse (CPU stand-in: no CuPy)"


class CuSparsePeer:
    name = "cusparse"

    def __init__(self, problem: Problem):
        sp, self.label = sparse_module()
        p = problem
        a = sp.csr_matrix((p.data, p.indices, p.indptr), shape=(p.n, p.n))
        if p.diagonal is not None:
            a = (a + sp.diags(p.diagonal)).tocsr()
        self.matrix = a.astype(np.float32)
        self.problem = p
        if p.algorithm == "personalized_pagerank":
            self.cols = device.xp.arange(p.k)
        if p.algorithm == "label_propagation":
            self.clamped = p.start()[p.internal]  # the labelled rows of lp^0

    def run(self, iterations: int):
        return cusparse_propagate(self, iterations)


def cusparse_propagate(peer: CuSparsePeer, iterations: int):
    """``iterations`` SpMM iterations of the peer (module level so tests can patch it)."""
    p, a = peer.problem, peer.matrix
    h = p.start()
    if p.algorithm == "feature_propagation":
        ax = APPNP_ALPHA * p.x
        for _ in range(iterations):
            h = (1.0 - APPNP_ALPHA) * (a @ h) + ax
        return h
    if p.algorithm == "label_propagation":
        for _ in range(iterations):
            h = normalize_rows(LP_ALPHA * normalize_rows(a @ h) + (1.0 - LP_ALPHA) * h)
            h[p.internal] = peer.clamped
        return h
    for _ in range(iterations):
        dangling = p.dangling @ h  # (k,)
        nxt = a @ h
        nxt *= PPR_ALPHA
        nxt[p.internal, peer.cols] += PPR_ALPHA * dangling + (1.0 - PPR_ALPHA)
        h = nxt
    return h


def normalize_rows(x):
    """Each row of ``x`` divided by its sum, a zero row left zero (as ours' ``Normalize``);
    NumPy, CuPy or torch."""
    s = x.sum(1)[:, None]
    s[s == 0] = 1
    return x / s


def import_torch():
    """(torch, torch_geometric or None, reason): reason is None when torch imports."""
    try:
        import torch
    except Exception as e:
        return None, None, f"not installed: torch ({type(e).__name__}: {e})"
    try:
        import torch_geometric  # noqa: F401
        from torch_geometric.nn import APPNP  # noqa: F401
        pyg = torch_geometric
    except Exception:
        pyg = None
    return torch, pyg, None


def _to_torch(torch, a, dev):
    if device.BACKEND == "gpu":
        return torch.from_dlpack(a).to(dev)
    return torch.from_numpy(np.ascontiguousarray(a)).to(dev)


class TorchPeer:
    name = "pyg"

    def __init__(self, problem: Problem, torch, pyg):
        self.torch, self.problem = torch, problem
        p = problem
        self.dev = torch.device("cuda" if device.BACKEND == "gpu" and torch.cuda.is_available()
                                else "cpu")
        t = lambda a: _to_torch(torch, a, self.dev)  # noqa: E731
        self.x0 = t(p.start())
        self.use_appnp = pyg is not None and p.algorithm == "feature_propagation"
        if self.use_appnp:
            self.label = f"torch_geometric {pyg.__version__} APPNP (cached gcn_norm)"
            src, dst = p.edge_index
            self.edge_index = torch.stack([t(src).long(), t(dst).long()])
            self.modules = {}
        else:
            why = "" if pyg is not None else ", torch_geometric not installed"
            self.label = f"torch {torch.__version__} sparse CSR mm{why}"
            crow, col = t(p.indptr).long(), t(p.indices).long()
            vals = t(p.data)
            if p.diagonal is not None:  # A + diag as COO, then CSR
                n = p.n
                rows = torch.repeat_interleave(torch.arange(n, device=self.dev),
                                               crow[1:] - crow[:-1])
                ar = torch.arange(n, device=self.dev)
                coo = torch.sparse_coo_tensor(torch.stack([torch.cat([rows, ar]),
                                                           torch.cat([col, ar])]),
                                              torch.cat([vals, t(p.diagonal)]), (n, n))
                self.matrix = coo.coalesce().to_sparse_csr()
            else:
                self.matrix = torch.sparse_csr_tensor(crow, col, vals, size=(p.n, p.n))
            if p.algorithm == "personalized_pagerank":
                self.dangling = t(p.dangling)
                self.rows = t(p.internal).long()
                self.cols = torch.arange(p.k, device=self.dev)
            if p.algorithm == "label_propagation":
                self.rows = t(p.internal).long()
                self.clamped = self.x0[self.rows].clone()

    def run(self, iterations: int):
        torch, p = self.torch, self.problem
        with torch.no_grad():
            if self.use_appnp:
                if iterations not in self.modules:
                    from torch_geometric.nn import APPNP
                    self.modules[iterations] = APPNP(K=iterations, alpha=APPNP_ALPHA,
                                                     cached=True)
                out = self.modules[iterations](self.x0, self.edge_index)
            elif p.algorithm == "feature_propagation":
                h = self.x0
                for _ in range(iterations):
                    h = (1.0 - APPNP_ALPHA) * (self.matrix @ h) + APPNP_ALPHA * self.x0
                out = h
            elif p.algorithm == "label_propagation":
                h = self.x0
                for _ in range(iterations):
                    h = normalize_rows(LP_ALPHA * normalize_rows(self.matrix @ h)
                                       + (1.0 - LP_ALPHA) * h)
                    h[self.rows] = self.clamped
                out = h
            else:
                h = self.x0
                for _ in range(iterations):
                    dangling = self.dangling @ h
                    nxt = (self.matrix @ h) * PPR_ALPHA
                    nxt[self.rows, self.cols] += PPR_ALPHA * dangling + (1.0 - PPR_ALPHA)
                    h = nxt
                out = h
            if self.dev.type == "cuda":
                torch.cuda.synchronize()
        return out


def to_backend(a):
    """A peer's result as a backend (CuPy / NumPy) array."""
    if hasattr(a, "detach"):  # torch
        if a.device.type == "cuda":
            return device.xp.from_dlpack(a.detach().contiguous())
        return device.asarray(a.detach().cpu().numpy())
    return device.asarray(np.asarray(a)) if device.BACKEND != "gpu" else a


# ------------------------------------------------------------------------------ measuring


def _time(fn, repeat: int):
    """(result of the warm-up call, warm-up ms, median ms of ``repeat`` calls)."""
    out, first = _timed(fn)
    times = [_timed(fn)[1] for _ in range(repeat)]
    return out, first, statistics.median(times)


def _per_iter(one_ms, full_ms, iterations: int) -> dict:
    marginal = (full_ms - one_ms) / (iterations - 1) if iterations > 1 else full_ms
    return {"one_iter_ms": one_ms, "full_ms": full_ms, "full_per_iter_ms": full_ms / iterations,
            "ms_per_iter": marginal if marginal > 0 else full_ms / iterations}


def compare(problem: Problem, frame, peer_result, tol: float) -> dict:
    """max |ours - peer| and relative L2 over all columns, block-wise in float64."""
    xp = device.xp
    peer = to_backend(peer_result)
    diff_sq = ref_sq = 0.0
    max_abs = 0.0
    for start in range(0, problem.k, CHECK_BLOCK):
        cols = range(start, min(problem.k, start + CHECK_BLOCK))
        a = ours_columns(problem, frame, cols).astype(np.float64)
        b = peer[:, cols.start:cols.stop].astype(np.float64)
        d = a - b
        diff_sq += float((d * d).sum())
        ref_sq += float((b * b).sum())
        if d.size:
            max_abs = max(max_abs, float(xp.abs(d).max()))
        del a, b, d
    rel = diff_sq ** 0.5 / ref_sq ** 0.5 if ref_sq > 0 else diff_sq ** 0.5
    return {"max_abs": max_abs, "rel_l2": rel, "tol": tol, "ok": bool(rel <= tol)}  # NaN fails


def measure(bench: Bench, args, family: str, g, stats: dict, algorithm: str, k: int,
            peers: dict, bandwidth) -> dict:
    label = f"{algorithm} k={k} on {family}"
    row = {"algorithm": algorithm, "family": family, "k": k, "n": int(g.n),
           "graph_m": int(g.m), "iterations": args.iterations, "repeat": args.repeat,
           "scale": stats.get("scale"), "peers": {}}
    why = not_applicable(algorithm, k)
    if why:
        row["na"] = why
        bench.log(f"{label}: {why}")
        return row
    problem = Problem(algorithm, g, k)
    row["m"] = problem.m
    row["min_bytes"] = min_bytes(problem.n, problem.m, k, problem.index_bytes)
    row["index_bytes"] = problem.index_bytes
    bench.log(f"{label}: ours, 1 and {args.iterations} iterations")
    try:
        _, first1, one = _time(lambda: run_ours(problem, 1), args.repeat)
        (frame, info), first, full = _time(lambda: run_ours(problem, args.iterations),
                                           args.repeat)
    except Exception as e:
        bench.log(traceback.format_exc())
        bench.fail(f"{label}: ours raised {type(e).__name__}: {e}")
        row["ours"] = {"error": f"{type(e).__name__}: {e}"}
        return row
    row["ours"] = {**_per_iter(one, full, args.iterations), "first_call_ms": first,
                   "ran_iterations": int(info.get("iterations", args.iterations)),
                   "variant": info.get("variant")}
    if row["ours"]["ran_iterations"] != args.iterations:
        bench.fail(f"{label}: ours ran {row['ours']['ran_iterations']} iterations, not "
                   f"{args.iterations}")
    row["ours"]["roofline"] = roofline_fraction(row["min_bytes"], row["ours"]["ms_per_iter"],
                                                bandwidth)
    for name, make in peers.items():
        cell = row["peers"][name] = {}
        if isinstance(make, str):  # skipped: the reason
            cell["skipped"] = make
            continue
        out_of_memory = None
        try:
            t0 = time.perf_counter()
            peer = make(problem)
            device.synchronize()
            cell["build_ms"] = (time.perf_counter() - t0) * 1e3
            cell["label"] = peer.label
            bench.log(f"{label}: {peer.label}")
            _, _, one = _time(lambda: peer.run(1), args.repeat)
            result, pfirst, full = _time(lambda: peer.run(args.iterations), args.repeat)
            cell.update(_per_iter(one, full, args.iterations), first_call_ms=pfirst)
            cell["roofline"] = roofline_fraction(row["min_bytes"], cell["ms_per_iter"], bandwidth)
            cell["speedup"] = cell["ms_per_iter"] / row["ours"]["ms_per_iter"]
            cell["check"] = compare(problem, frame, result, args.check_tol)
            del result, peer
        except Exception as e:
            if not _out_of_memory(e):
                bench.log(traceback.format_exc())
                cell["error"] = f"{type(e).__name__}: {e}"
                bench.fail(f"{label}: peer {name} raised {cell['error']}")
                continue
            out_of_memory = f"out of device memory ({type(e).__name__}: {e})"
        if out_of_memory:  # the peer cannot run at this size here: skipped, not a failure
            label_kept = cell.get("label")
            cell.clear()
            cell.update(skipped=out_of_memory, **({"label": label_kept} if label_kept else {}))
            bench.log(f"{label}: peer {name} skipped: {out_of_memory}")
            peer = None  # the exception (and its frames) are gone: free what they held
            _free_device_memory(torch_cache=True)
            continue
        c = cell["check"]
        if not c["ok"]:
            bench.fail(f"{label}: ours differs from {cell['label']}: relative L2 "
                       f"{c['rel_l2']:.3g} > {c['tol']:g} (max abs {c['max_abs']:.3g})")
        bench.log(f"{label}: ours {row['ours']['ms_per_iter']:.3f} ms/it, {name} "
                  f"{cell['ms_per_iter']:.3f} ms/it ({cell['speedup']:.2f}x), rel L2 "
                  f"{c['rel_l2']:.2e}")
    del frame, problem
    _free_device_memory()
    return row


def _out_of_memory(error: BaseException) -> bool:
    """CuPy's ``OutOfMemoryError``, torch's ``OutOfMemoryError`` (a RuntimeError) or a CUDA
    allocation failure: the peer needs more device memory than is free (PyG's APPNP keeps an
    m x k message array: 68 GB at k = 128 on R-MAT scale 22)."""
    return ("OutOfMemory" in type(error).__name__ or isinstance(error, MemoryError)
            or "out of memory" in str(error).lower())


def make_peers(args) -> dict:
    """name -> factory(problem), or the reason the peer is skipped (printed and recorded)."""
    peers = {"cusparse": CuSparsePeer}
    if args.no_pyg:
        peers["pyg"] = "skipped: --no-pyg"
    else:
        torch, pyg, reason = import_torch()
        peers["pyg"] = reason if reason else (lambda p: TorchPeer(p, torch, pyg))
    for name, value in peers.items():
        if isinstance(value, str):
            print(f"peer {name} skipped: {value}", flush=True)
    return peers


# ------------------------------------------------------------------------------ convergence


def result_names(algorithm: str, k: int) -> list[str]:
    if algorithm == "pagerank":
        return ["pagerank"]
    return [f"{RESULT_PREFIX[algorithm]}{j}" for j in range(k)]


def converge(algorithm: str, g, inputs: dict, k: int, change_driven: bool, args):
    """One call of ours to convergence (library defaults but tol, max_iter, change_driven):
    (frame, info)."""
    opts = dict(tol=args.convergence_tol, max_iter=args.convergence_max_iter,
                change_driven=change_driven, return_info=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "did not converge": recorded
        if algorithm == "pagerank":
            return onyx.pagerank(g, **opts)
        if algorithm == "personalized_pagerank":
            return onyx.personalized_pagerank(g, inputs["sources"], **opts)
        return onyx.label_propagation(g, inputs["labels"], k, **opts)


def agreement(algorithm: str, k: int, bulk, cd) -> dict:
    """Bulk against change-driven result frames, block-wise over columns in float64: the
    PageRanks' largest column L1 distance (each column scaled to sum 1), LP's max abs."""
    xp = device.xp
    names = result_names(algorithm, k)
    metric, tol = CONVERGENCE_AGREE[algorithm]
    worst = [0.0]
    for start in range(0, len(names), CHECK_BLOCK):
        cols = names[start:start + CHECK_BLOCK]
        a, b = (xp.stack([_column(f, c) for c in cols], axis=1).astype(np.float64)
                for f in (bulk, cd))
        if algorithm == "label_propagation":
            d = xp.abs(a - b).max(axis=0)
        else:
            d = xp.abs(a / a.sum(axis=0) - b / b.sum(axis=0)).sum(axis=0)
        worst.append(float(d.max()))
        del a, b, d
    value = float(np.max(worst))  # NaN propagates, and fails
    return {"metric": metric, "value": value, "tol": tol, "ok": bool(value <= tol)}


def measure_convergence(bench: Bench, args, family: str, g, stats: dict, algorithm: str,
                        k: int) -> dict:
    """Ours to convergence, bulk and change-driven: iterations, converged, median ms, the ratio
    bulk ms / change-driven ms and the agreement of the two results."""
    label = f"{algorithm} k={k} on {family} to convergence"
    row = {"algorithm": algorithm, "family": family, "k": k, "n": int(g.n), "m": int(g.m),
           "scale": stats.get("scale"), "tol": args.convergence_tol,
           "max_iter": args.convergence_max_iter, "repeat": args.repeat}
    why = not_applicable(algorithm, k)
    if why:
        row["na"] = why
        bench.log(f"{label}: {why}")
        return row
    inputs = make_inputs(algorithm, g, k, {})
    frames = {}
    for mode, cd in (("bulk", False), ("cd", True)):
        cell = row[mode] = {"change_driven": cd}
        try:
            (frame, info), first, ms = _time(
                lambda: converge(algorithm, g, inputs, k, cd, args), args.repeat)
        except Exception as e:
            bench.log(traceback.format_exc())
            cell["error"] = f"{type(e).__name__}: {e}"
            bench.fail(f"{label}: {mode} raised {cell['error']}")
            continue
        frames[mode] = frame
        cell.update(iterations=int(info["iterations"]), converged=bool(info["converged"]),
                    median_ms=ms, first_call_ms=first, direction=info.get("direction"))
        bench.log(f"{label}: {mode} {cell['iterations']} iterations "
                  f"({'converged' if cell['converged'] else 'NOT converged'}), {ms:.3f} ms")
    if len(frames) == 2:
        row["ratio"] = row["bulk"]["median_ms"] / row["cd"]["median_ms"]
        try:
            c = row["check"] = agreement(algorithm, k, frames["bulk"], frames["cd"])
        except Exception as e:
            bench.log(traceback.format_exc())
            c = row["check"] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            bench.fail(f"{label}: the agreement check raised {c['error']}")
        else:
            if not c["ok"]:
                bench.fail(f"{label}: bulk and change-driven results differ: {c['metric']} "
                           f"{c['value']:.3g} > {c['tol']:g}")
    del frames
    _free_device_memory()
    return row


def _convergence_points(args):
    """(algorithm, k) measured on each graph: PageRank once (k = 1), the others at --ks."""
    return [(a, k) for a in args.algorithms for k in ([1] if a == "pagerank" else args.ks)]


# ------------------------------------------------------------------------------ report


def _check_cell(row: dict) -> str:
    if "na" in row:
        return row["na"]
    if "error" in row.get("ours", {}):
        return f"FAILED (ours raised: {row['ours']['error']})"
    bad, good = [], []
    for name, cell in row["peers"].items():
        if "error" in cell:
            bad.append(f"{name} raised")
        elif "check" in cell:
            c = cell["check"]
            (good if c["ok"] else bad).append(f"{name} rel L2 {c['rel_l2']:.1e}")
    if row["ours"].get("ran_iterations", row["iterations"]) != row["iterations"]:
        bad.append("iterations differ")
    if bad:
        return "FAILED (" + "; ".join(bad) + ")"
    return "ok (" + "; ".join(good) + ")" if good else "ok (no peer)"


def _speedup_cell(cell: dict, k: int, target: float) -> str:
    s = cell.get("speedup")
    if s is None:
        return "—"
    text = f"{s:.2f}x"
    if k >= TARGET_MIN_K:
        text += f" ({'meets' if s >= target else 'below'} {target:g}x)"
    return text


def _peer_ms(cell: dict) -> str:
    if "skipped" in cell:  # the reason is in the "Peers:" line and the JSON
        return ("skipped: out of device memory" if cell["skipped"].startswith("out of device")
                else "skipped")
    if "error" in cell:
        return "FAILED"
    return _fmt(cell.get("ms_per_iter"))


def table_rows(report: dict) -> list[dict]:
    rows = []
    for r in report["measurements"]:
        ours = r.get("ours", {})
        cs, pyg = r["peers"].get("cusparse", {}), r["peers"].get("pyg", {})
        ref = (H200_SPMM_MS.get(r["k"]) if r["family"] == "rmat"
               and r.get("scale") == H200_REFERENCE_SCALE else None)
        rows.append({
            "algorithm": r["algorithm"], "graph": r["family"] + (
                f" s{r['scale']}" if r.get("scale") is not None else ""),
            "k": r["k"], "ours": _fmt(ours.get("ms_per_iter")), "cusparse": _peer_ms(cs),
            "cusparse_speedup": _speedup_cell(cs, r["k"], TARGETS["cusparse"]),
            "pyg": _peer_ms(pyg), "pyg_speedup": _speedup_cell(pyg, r["k"], TARGETS["pyg"]),
            "roofline": _fmt(ours.get("roofline"), ".1%") if ours.get("roofline") is not None
            else "not measured", "h200_ref": _fmt(ref, ".1f"), "check": _check_cell(r)})
    return rows


def markdown(report: dict) -> str:
    s, dev = report["settings"], report["device"]
    cs_label = report["peer_labels"].get("cusparse", "cuSPARSE")
    stand_in = "stand-in" in cs_label
    cs_head = "scipy CPU stand-in" if stand_in else "cuSPARSE"
    bw = report["bandwidth"]
    lines = [
        f"# onyx_rapids against SpMM peers ({dev.get('device')}, {report['date']})", "",
        f"Backend {dev.get('backend')}; cupy {dev.get('cupy')}; git {report['git'].get('commit')}"
        f" (dirty files: {report['git'].get('dirty_files')}); `python -m benchmarks.peers "
        f"{' '.join(report['argv'])}`", "",
        f"Mode: {s['scaling'] or 'table'}; {s['iterations']} iterations per full run, median of "
        f"{s['repeat']} calls after a warm-up; ms/it = (N-iteration call - 1-iteration call) / "
        "(N - 1); speedup = peer ms/it / ours (above 1: ours faster).", "",
        f"Peers: {cs_head} = {cs_label}; PyG = {report['peer_labels'].get('pyg', '—')}.", "",
        "Roofline: B = i(n+1) + i m + 8 n k bytes (CSR read once, X read once, Y written once: a "
        "lower bound) per ms/it, as a fraction of the copy bandwidth "
        + (f"{bw['bytes_per_s'] / 1e9:.0f} GB/s measured in this run ({bw['method']})."
           if bw.get("bytes_per_s") else f"({bw.get('reason')})."), "",
        f"Targets (issue 5): at k >= {TARGET_MIN_K}, ours >= {TARGETS['cusparse']:g}x cuSPARSE "
        f"and >= {TARGETS['pyg']:g}x PyG per iteration.  Reference: cuSPARSE SpMM on an H200, "
        f"R-MAT scale {H200_REFERENCE_SCALE}: "
        + ", ".join(f"k={k} {ms} ms" for k, ms in H200_SPMM_MS.items())
        + " (column 'H200 ref SpMM', on rmat at that scale).", "",
        "Graphs: " + "; ".join(f"{name}: n={st['n']:,} m={st['m']:,}"
                              for name, st in report["graphs"].items()), "",
        f"| algorithm | graph | k | ours ms/it | {cs_head} ms/it | ours/{cs_head} speedup | "
        "PyG ms/it | ours/PyG speedup | roofline fraction (ours) | H200 ref SpMM ms | check |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for t in report["table"]:
        lines.append(f"| {t['algorithm']} | {t['graph']} | {t['k']} | {t['ours']} | "
                     f"{t['cusparse']} | {t['cusparse_speedup']} | {t['pyg']} | "
                     f"{t['pyg_speedup']} | {t['roofline']} | {t['h200_ref']} | {t['check']} |")
    if report.get("plot"):
        pl = report["plot"]
        lines += ["", f"Plot: {Path(pl['path']).name}" if pl.get("path")
                  else f"Plot not drawn: {pl.get('reason')}"]
    if report["failures"]:
        lines += ["", "## FAILED", ""] + [f"- {f}" for f in report["failures"]]
    return "\n".join(lines) + "\n"


def _ratio_cell(ratio) -> str:
    if ratio is None:
        return "—"
    met = ratio >= CD_TARGET
    return f"{ratio:.2f}x ({'meets' if met else '**miss**: below'} {CD_TARGET:g}x)"


def convergence_rows(report: dict) -> list[dict]:
    rows = []
    for r in report["measurements"]:
        t = {"algorithm": r["algorithm"], "graph": r["family"] + (
            f" s{r['scale']}" if r.get("scale") is not None else ""), "k": r["k"]}
        for mode in ("bulk", "cd"):
            cell = r.get(mode, {})
            t[f"{mode}_iterations"] = cell.get("iterations", "—")
            t[f"{mode}_converged"] = ("FAILED" if "error" in cell else "—" if not cell
                                      else "yes" if cell["converged"] else "**no**")
            t[f"{mode}_ms"] = _fmt(cell.get("median_ms"))
        t["ratio"] = _ratio_cell(r.get("ratio"))
        c = r.get("check")
        errors = [f"{mode} raised" for mode in ("bulk", "cd") if "error" in r.get(mode, {})]
        t["check"] = (r["na"] if "na" in r else f"FAILED ({'; '.join(errors)})" if errors
                      else f"FAILED (check raised: {c['error']})" if "error" in c
                      else f"{'ok' if c['ok'] else 'FAILED'} ({c['metric']} {c['value']:.1e})")
        rows.append(t)
    return rows


def convergence_markdown(report: dict) -> str:
    s, dev = report["settings"], report["device"]
    ratios = [r["ratio"] for r in report["measurements"] if r.get("ratio") is not None]
    met = sum(x >= CD_TARGET for x in ratios)
    lines = [
        f"# onyx_rapids time to convergence, change-driven against bulk ({dev.get('device')}, "
        f"{report['date']})", "",
        f"Backend {dev.get('backend')}; cupy {dev.get('cupy')}; git {report['git'].get('commit')}"
        f" (dirty files: {report['git'].get('dirty_files')}); `python -m benchmarks.peers "
        f"{' '.join(report['argv'])}`", "",
        f"Mode: convergence.  Ours to convergence at tol {s['convergence_tol']:g} (max_iter "
        f"{s['convergence_max_iter']}), the library's defaults otherwise, with "
        "change_driven=False (bulk) and True (CD); ms = median of "
        f"{s['repeat']} calls after a warm-up (result frame included); ratio = bulk ms / CD ms.",
        "",
        f"Target (issue 5): change-driven time to convergence {CD_TARGET:g}x under the bulk "
        f"iteration, i.e. ratio >= {CD_TARGET:g}x; **miss** marks a ratio below it.  Met in "
        f"{met} of {len(ratios)} rows.", "",
        "Check: the bulk and CD results agree: " + "; ".join(
            f"{a} {m} <= {t:g}" for a, (m, t) in CONVERGENCE_AGREE.items())
        + " (L1 of each column scaled to sum 1, the largest over the columns; max abs over "
        "every probability).", "",
        "Graphs: " + "; ".join(f"{name}: n={st['n']:,} m={st['m']:,}"
                              for name, st in report["graphs"].items()), "",
        "| algorithm | graph | k | bulk iterations | bulk converged | bulk ms | CD iterations | "
        "CD converged | CD ms | bulk / CD | check |",
        "|---|---|---:|---:|---|---:|---:|---|---:|---|---|",
    ]
    for t in report["table"]:
        lines.append(f"| {t['algorithm']} | {t['graph']} | {t['k']} | {t['bulk_iterations']} | "
                     f"{t['bulk_converged']} | {t['bulk_ms']} | {t['cd_iterations']} | "
                     f"{t['cd_converged']} | {t['cd_ms']} | {t['ratio']} | {t['check']} |")
    if report["failures"]:
        lines += ["", "## FAILED", ""] + [f"- {f}" for f in report["failures"]]
    return "\n".join(lines) + "\n"


def plot_scaling(report: dict, path: Path) -> dict:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:
        return {"path": None, "reason": f"matplotlib not available: {type(e).__name__}: {e}"}
    mode = report["settings"]["scaling"]
    algorithms = list(dict.fromkeys(r["algorithm"] for r in report["measurements"]))
    fig, axes = plt.subplots(1, len(algorithms), figsize=(6 * len(algorithms), 4.5),
                             squeeze=False)
    for ax, algorithm in zip(axes[0], algorithms):
        rows = [r for r in report["measurements"] if r["algorithm"] == algorithm and "na" not in r]
        xs = [r["m"] if mode == "edges" else r["k"] for r in rows]
        series = {"ours": [r.get("ours", {}).get("ms_per_iter") for r in rows]}
        for name in PEERS:
            series[report["peer_labels"].get(name, name)] = [
                r["peers"].get(name, {}).get("ms_per_iter") for r in rows]
        for name, ys in series.items():
            pts = [(x, y) for x, y in zip(xs, ys) if y]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("edges m (stored)" if mode == "edges" else "k")
        ax.set_ylabel("ms / iteration")
        ax.set_title(algorithm + (f", k={rows[0]['k']}" if mode == "edges" and rows else
                                  f", {rows[0]['family']}" if rows else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"{report['device'].get('device')}: ms/iteration vs {mode}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return {"path": str(path)}


# ------------------------------------------------------------------------------ main


def _graph_points(args):
    """(family, namespace for build_family, ks) of every graph the run builds."""
    if args.scaling == "edges":
        out = []
        for scale in args.scaling_scales:
            ns = argparse.Namespace(**vars(args))
            ns.scale = scale
            out.append(("rmat", ns, [args.scaling_k]))
        return out
    if args.scaling == "k":
        return [(args.families[0], args, args.ks)]
    return [(family, args, args.ks) for family in args.families]


def main(argv=None) -> int:
    args = parse_args(argv)
    bench = Bench()
    info = device.info()
    now = datetime.datetime.now(datetime.timezone.utc)
    peers = {} if args.convergence else make_peers(args)
    mode = ("convergence" if args.convergence else
            f"scaling-{args.scaling}" if args.scaling else "table")
    report = {
        "benchmark": "peers", "mode": mode, "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"), "device": info, "git": _git(),
        "argv": list(sys.argv[1:] if argv is None else argv),
        "settings": {k: v for k, v in vars(args).items()
                     if k not in ("users", "items", "ratings")},
        "peer_labels": {name: (v if isinstance(v, str) else None) for name, v in peers.items()},
        "targets": {"speedup": TARGETS, "min_k": TARGET_MIN_K, "h200_spmm_ms": H200_SPMM_MS,
                    "h200_reference_scale": H200_REFERENCE_SCALE, "cd_ratio": CD_TARGET},
        "bandwidth": {}, "graphs": {}, "measurements": [], "table": [], "plot": {},
        "failures": bench.failures,
    }
    report["settings"].update(appnp_alpha=APPNP_ALPHA, ppr_alpha=PPR_ALPHA, ppr_tol=PPR_TOL,
                              lp_alpha=LP_ALPHA, lp_tol=LP_TOL)
    if args.convergence:
        report["settings"]["convergence_agree"] = {
            a: {"metric": m, "tol": t} for a, (m, t) in CONVERGENCE_AGREE.items()}
        report["bandwidth"] = {"bytes_per_s": None, "reason": "not measured: --convergence"}
        bw = None
    else:
        bench.log(f"backend {info['backend']} ({info.get('device')}); measuring copy bandwidth")
        report["bandwidth"] = copy_bandwidth(args.copy_mib)
        bw = report["bandwidth"].get("bytes_per_s")
        bench.log(f"copy bandwidth: {bw / 1e9:.0f} GB/s" if bw else report["bandwidth"]["reason"])
    for family, ns, ks in _graph_points(args):
        key = family if args.scaling != "edges" else f"rmat-s{ns.scale}"
        try:
            g, stats, _ = build_family(bench, ns, family)
        except Exception as e:
            bench.log(traceback.format_exc())
            bench.fail(f"{key}: graph construction raised {type(e).__name__}: {e}")
            continue
        report["graphs"][key] = stats
        if args.convergence:
            for algorithm, k in _convergence_points(args):
                report["measurements"].append(
                    measure_convergence(bench, args, family, g, stats, algorithm, k))
        for algorithm in [] if args.convergence else args.algorithms:
            for k in ks:
                row = measure(bench, args, family, g, stats, algorithm, k, peers, bw)
                report["measurements"].append(row)
                for name, cell in row["peers"].items():
                    if cell.get("label"):
                        report["peer_labels"][name] = cell["label"]
        del g
        _free_device_memory()
    report["table"] = convergence_rows(report) if args.convergence else table_rows(report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = f"{_slug(info.get('device'))}_{report['date']}"
    if mode != "table":
        suffix += f"_{mode}"
    if args.tag:
        suffix += f"_{_slug(args.tag)}"
    if args.quick:
        suffix += "_quick"
    if args.scaling:
        try:
            report["plot"] = plot_scaling(report, out / f"peers_{suffix}.png")
        except Exception as e:
            report["plot"] = {"path": None, "reason": f"plotting raised {type(e).__name__}: {e}"}
        bench.log(f"plot: {report['plot'].get('path') or report['plot'].get('reason')}")
    report["ok"] = not bench.failures
    report["elapsed_s"] = time.perf_counter() - bench.t0
    text = convergence_markdown(report) if args.convergence else markdown(report)
    return write_report(bench, report, out / f"peers_{suffix}", text)


if __name__ == "__main__":
    sys.exit(main())
