"""Suites ``spmm``, ``scaling`` and ``convergence`` (undirected-mode graphs).

spmm / scaling: feature_propagation (APPNP, alpha 0.1), personalized_pagerank (k sources,
alpha 0.85) and label_propagation (k classes, 1% labelled, alpha 0.85, clamped) with k
features, ours against the peers doing the same propagation (:class:`Problem`, the matrix in
our internal vertex order):

* APPNP: ``H <- 0.9 M H + 0.1 X``, ``M = D^-1/2 (A + I) D^-1/2`` on the simple undirected graph;
* PPR: ``X <- 0.85 (P X + t dangling) + 0.15 t``, P the pull CSR with values 1/outdeg(u);
* LP: ``L <- normalize(0.85 normalize(A L) + 0.15 L)``, labelled rows reset, A the pull CSR.

ms is the marginal time of one iteration, (N-iteration call - 1-iteration call) / (N - 1),
each the median of ``repeat`` calls after a warm-up (ours with tol 1e-12: no early stop).
Check: ours (N iterations) against each peer, relative L2 <= 1e-3.  ``params`` carries the
roofline lower bound of bytes per iteration (CSR read once, X read and Y written once) and, on
a GPU, the fraction of the measured copy bandwidth.  label_propagation at k = 1 is trivial and
reads ``n/a``.  scaling runs the same over several graphs and ks and plots ms vs edges / k.

convergence: each algorithm with a ``change_driven`` option, run to convergence (tol 1e-6,
max_iter 100, the library's defaults otherwise) with ``change_driven="auto"`` ("ours"),
``True`` (CD) and ``False`` (bulk); rows hold iterations, converged and (auto) the iterations
run change-driven; the auto and CD results must agree with bulk (catalog.AGREE).
"""

from __future__ import annotations

import statistics

import numpy as np

from onyx_rapids import device

from .. import catalog
from ..catalog import call, make_inputs
from ..common import compare, free_memory, timed, time_calls

FORMULATIONS = ("feature_propagation", "personalized_pagerank", "label_propagation")
ALPHA = {"feature_propagation": 0.1, "personalized_pagerank": 0.85, "label_propagation": 0.85}
PREFIX = {"feature_propagation": "h_", "personalized_pagerank": "ppr_", "label_propagation": "lp_"}
ITERATIONS = {False: 10, True: 2}
CHECK_TOL = 1e-3
CONVERGENCE = dict(tol=1e-6, max_iter=100)


def algorithms():
    return tuple(a for a in catalog.algorithms() if a in FORMULATIONS)


def convergence_algorithms():
    return tuple(a for a, e in catalog.algorithms().items()
                 if "change_driven" in e.options and e.iterative and e.graph != "bipartite")


class Problem:
    """One (algorithm, graph, k): our inputs and the peers' matrix (backend CSR arrays)."""

    def __init__(self, algorithm: str, g, k: int):
        xp = device.xp
        self.algorithm, self.g, self.k, self.n = algorithm, g, k, int(g.n)
        self.alpha = ALPHA[algorithm]
        self.inputs = make_inputs(catalog.get(algorithm), g, k)
        self.diagonal = None
        if algorithm == "feature_propagation":
            s = g.simple_undirected()
            self.x = next(v for v in self.inputs.values() if getattr(v, "ndim", 0) == 2)
            deg = xp.diff(s.out_offsets).astype(np.float64)
            inv = 1.0 / xp.sqrt(deg + 1.0)
            rows = xp.repeat(xp.arange(s.n), deg.astype(np.int64))
            self.indptr, self.indices, self.m = s.out_offsets, s.out_indices, int(s.m)
            self.data = (inv[rows] * inv[s.out_indices]).astype(np.float32)
            self.diagonal = (inv * inv).astype(np.float32)
            self.edge_index = (rows, s.out_indices)
            return
        self.indptr, self.indices, self.m = g.in_offsets, g.in_indices, int(g.m)
        if algorithm == "personalized_pagerank":
            ids = self.inputs["sources"]
            outdeg = xp.diff(g.out_offsets).astype(np.float64)
            self.data = xp.where(outdeg > 0, 1.0 / xp.maximum(outdeg, 1.0), 0.0)[
                g.in_indices].astype(np.float32)
            self.dangling = (outdeg == 0).astype(np.float32)
        else:
            labels = self.inputs["labels"]
            ids = labels["vertex"].to_numpy()
            self.classes = device.asarray(labels["label"].to_numpy().astype(np.int64))
            self.data = xp.ones(self.m, dtype=np.float32)
        self.internal = device.asarray(np.asarray(device.to_host(g.to_internal(ids)),
                                                  dtype=np.int64))

    def start(self):
        xp = device.xp
        if self.algorithm == "feature_propagation":
            return self.x
        if self.algorithm == "label_propagation":
            x0 = xp.full((self.n, self.k), 1.0 / self.k, dtype=np.float32)
            x0[self.internal] = 0.0
            x0[self.internal, self.classes] = 1.0
            return x0
        x0 = xp.zeros((self.n, self.k), dtype=np.float32)
        x0[self.internal, xp.arange(self.k)] = 1.0
        return x0

    def ours(self, iterations: int):
        tol = None if self.algorithm == "feature_propagation" else 1e-12
        entry = catalog.get(self.algorithm)
        return call(entry, self.g, self.inputs, iterations=iterations, tol=tol,
                    alpha=self.alpha, **catalog.unweighted(entry))

    def matrix(self, frame):
        """Our result's n x k columns (internal order = frame order)."""
        from ..common import column
        return device.xp.stack([column(frame, f"{PREFIX[self.algorithm]}{j}")
                                for j in range(self.k)], axis=1)

    def min_bytes(self) -> int:
        i = int(np.dtype(self.indices.dtype).itemsize)
        return i * (self.n + 1) + i * self.m + 8 * self.n * self.k


def copy_bandwidth(run):
    """Device-to-device copy bandwidth in bytes/s (once per run; None without a GPU)."""
    if not hasattr(run, "bandwidth"):
        run.bandwidth = None
        if device.BACKEND == "gpu":
            src = device.xp.ones(256 << 18, dtype=np.float32)  # 256 MiB
            dst = device.xp.empty_like(src)
            timed(lambda: device.xp.copyto(dst, src))
            ms = statistics.median(timed(lambda: device.xp.copyto(dst, src))[1]
                                   for _ in range(10))
            run.bandwidth = 2 * src.nbytes / (ms / 1e3)
            del src, dst
    return run.bandwidth


def _marginal(run, row, fn, iterations):
    """ms per iteration of fn(iterations) into ``row``: (warm-up result of the N call)."""
    _, _, one = time_calls(lambda: fn(1), run.repeat)
    out, first, full = time_calls(lambda: fn(iterations), run.repeat)
    one, full = statistics.median(one), statistics.median(full)
    ms = (full - one) / (iterations - 1) if iterations > 1 else full
    row.update(ms=ms if ms > 0 else full / iterations, first_call_ms=first, repeats=run.repeat)
    row["params"] = {**(row["params"] or {}), "one_iter_ms": one, "full_ms": full}
    return out


def measure(run, spec, g, stats) -> None:
    graph, iterations = spec.text, ITERATIONS[run.quick]
    bandwidth = copy_bandwidth(run)
    for name in run.algorithms:
        for k in run.ks:
            case, tag = f"k={k}", f"{name} k={k} on {graph}"
            if name == "label_propagation" and k == 1:
                run.row(graph, name, case, case, "ours", "ours", k=k, status="n/a: label "
                        "propagation with k = 1 is trivial (every probability is 1)")
                continue
            problem = Problem(name, g, k)
            params = {"k": k, "iterations": iterations, "min_bytes": problem.min_bytes()}
            ours = run.row(graph, name, case, case, "ours", "ours", k=k, params=params)
            run.log(f"{tag}: ours, 1 and {iterations} iterations")
            try:
                frame, info = _marginal(run, ours, problem.ours, iterations)
                mine = problem.matrix(frame)
                del frame
            except Exception as e:
                run.error(ours, e, "ours")
                continue
            if bandwidth:
                ours["params"]["roofline"] = problem.min_bytes() / (ours["ms"] / 1e3) / bandwidth
            ran = info.get("iterations", iterations)
            checks, failed = [], ran != iterations
            for peer_name in ("cusparse", "torch"):
                free_memory()  # the previous peer's cached blocks would starve this one at large k
                mod, label = run.peer(peer_name)
                row = run.row(graph, name, case, case, peer_name, "peer", k=k, label=label,
                              params=dict(params))
                if mod is None:
                    row["status"] = f"skipped: {label}"
                    continue
                try:
                    peer = mod.Peer(problem)
                    row["label"] = peer.label
                    result = _marginal(run, row, peer.run, iterations)
                    theirs = _backend(result)
                    c = compare("rel_l2", mine, theirs, against=peer.label, tol=CHECK_TOL)
                    del peer, result, theirs
                except Exception as e:
                    run.error(row, e, peer_name)
                    continue
                run.check(row, c, tag)
                checks.append(c)
                failed |= not c["ok"]
            if ran != iterations:
                run.log.fail(f"{tag}: ours ran {ran} iterations, not {iterations}")
            if checks or failed:
                ours.update(check="FAILED" if failed else "ok",
                            check_against=", ".join(c["against"] for c in checks),
                            check_detail="; ".join(f"{c['against']}: relative L2 "
                                                   f"{c['value']:.3g}" for c in checks)
                            + ("" if ran == iterations else f"; ran {ran} iterations"))
            else:
                ours["check"] = "unchecked: no peer ran"
            del mine, problem
            free_memory()


def _backend(a):
    if hasattr(a, "detach"):
        if a.device.type == "cuda":
            return device.xp.from_dlpack(a.detach().contiguous())
        return device.asarray(a.detach().cpu().numpy())
    return device.xp.asarray(a)


def measure_convergence(run, spec, g, stats) -> None:
    graph = spec.text
    for name in run.algorithms:
        entry = catalog.get(name)
        for k in (1,) if name == "pagerank" else run.ks:
            case, tag = f"k={k}", f"{name} k={k} on {graph} to convergence"
            if name == "label_propagation" and k == 1:
                run.row(graph, name, case, "CD", "ours", "ours", k=k, status="n/a: trivial")
                continue
            inputs = make_inputs(entry, g, k)
            results = {}
            for mode, cd in (("auto", "auto"), ("CD", True), ("bulk", False)):
                row = run.row(graph, name, case, mode, "ours", "ours" if cd == "auto"
                              else "variant", k=k, params=dict(CONVERGENCE, change_driven=cd))
                out = run.timed(row, lambda: call(entry, g, inputs, change_driven=cd,
                                                  iterations=CONVERGENCE["max_iter"],
                                                  tol=CONVERGENCE["tol"]))
                if out is not None:
                    frame, info = out
                    row["params"].update(iterations=info.get("iterations"),
                                         converged=info.get("converged"))
                    if info.get("modes") is not None:
                        row["params"]["cd_iterations"] = info["modes"].count("change-driven")
                    run.log(f"{tag}: {mode} {info.get('iterations')} iterations, "
                            f"{row['ms']:.3f} ms")
                    results[mode] = (row, catalog.result_matrix(entry, frame, k))
            metric, tol = catalog.agreement_metric(name)
            for mode in ("auto", "CD"):
                if mode in results and "bulk" in results:
                    run.check([results[mode][0], results["bulk"][0]],
                              compare(metric, results[mode][1], results["bulk"][1],
                                      against="bulk", tol=tol), f"{tag} ({mode})")
            del results
            free_memory()
