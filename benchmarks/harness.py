"""The benchmark harness: ``python -m benchmarks run SUITE`` (see ``python -m benchmarks list``)
and its API :func:`run_suite`.

A run builds each graph once (benchmarks/graphs.py), lets the suite measure it, checks every
result against a peer or an oracle in the same run (a failure makes the exit status 1), and
writes ``run-<suite>_<device>_<date>[_<tag>][_quick]`` ``.parquet`` (one row per graph,
algorithm, case, variant and implementation, with the graph statistics, versions and device),
``.json`` (settings, environment, graphs, rows, details, skipped peers, failures), ``.md``
(ours against the best alternative, where we lose, every row) and ``_<graph>.png`` plots
(plus ``_k.png`` / ``_m.png`` lines when a run sweeps k or graph size).

Row columns: suite, graph, algorithm, case (what compared rows share), variant,
implementation, role (``ours``: the group's reference; ``peer``: another library;
``variant``: another variant of ours), label, k, unit, ms (median), first_call_ms, repeats,
times_ms, status (``ok``, ``error: ...``, ``skipped: ...``, ``n/a: ...``), check (``ok``,
``FAILED``, ``error``, ``unchecked: ...``, ``-``), check_against, check_detail, params,
speedup_vs_ours (ours ms / row ms), ratio_vs_ours (row ms / ours ms), best_alternative.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import onyx_rapids as onyx
from onyx_rapids import memory

from . import common, graphs, peers
from .suites import (ablation, approximate, construction, hostmem, multigpu, networkx,
                     outofcore, spmm, traversal, tuning)


@dataclass(frozen=True)
class Suite:
    name: str
    summary: str
    measure: object          # measure(run, spec, g, stats)
    algorithms: object       # () -> tuple of names (from the registry)
    graphs: str
    quick_graphs: str
    repeat: int = 3
    undirected: bool = True
    unit: str = "ms/call"
    alternative: str = "best peer"
    peers: tuple = ()
    ks: tuple = ()
    quick_ks: tuple = ()
    settings: dict = field(default_factory=dict)
    plot_value: str = "ms"  # the size-sweep plot's y: ms, or a params key (gb_s)
    prepare: object = None   # prepare(spec, undirected=, log=) -> (input, stats); default:
    #                          graphs.build (the input is a Graph)
    finish: object = None    # finish(rows): columns computed from every row (after speedups)
    report: object = None    # report(report) -> Markdown lines instead of "ours against ..."
    plot: object = None      # plot(report, slugs, plt, save) instead of the bar / sweep plots


R = "rmat:22:16"
SUITES = {s.name: s for s in (
    Suite("traversal", "bfs, sssp, wcc, core_number, k_core, pagerank, personalized_pagerank "
          "at the defaults, strongly_connected_components, minimum_spanning_tree and "
          "betweenness_centrality from k sources (--ks), ours vs cuGraph (CPU oracle / "
          "certificate without it)", traversal.measure, traversal.algorithms,
          f"{R},grid:2048", "rmat:5:4,grid:4", 5, False, peers=("cugraph",), ks=(256,),
          quick_ks=(4,)),
    Suite("multisource", "bfs / sssp from k sources at once vs k single-source calls of ours "
          "and of cuGraph", traversal.measure_multi, traversal.multi_algorithms, R, "rmat:5:4",
          3, False, peers=("cugraph",), ks=(8, 32, 128), quick_ks=(2, 3)),
    Suite("spmm", "feature_propagation, personalized_pagerank, label_propagation with k "
          "features per iteration, ours vs cuSPARSE SpMM and PyTorch (Geometric)",
          spmm.measure, spmm.algorithms, R, "rmat:4:4,grid:4", 3, unit="ms/iteration",
          peers=("cusparse", "torch"), ks=(1, 32, 128), quick_ks=(1, 2)),
    Suite("scaling", "the spmm measurement over graph sizes and k, with ms-vs-edges and "
          "ms-vs-k plots", spmm.measure, spmm.algorithms,
          "rmat:16:16,rmat:18:16,rmat:20:16,rmat:22:16", "rmat:3:2,rmat:4:2", 3,
          unit="ms/iteration", peers=("cusparse", "torch"), ks=(1, 4, 32, 128),
          quick_ks=(1, 2)),
    Suite("convergence", "change_driven='auto' vs bulk and change-driven to convergence (tol "
          "1e-6, max_iter 100): iterations and time, results agree", spmm.measure_convergence,
          spmm.convergence_algorithms, R, "rmat:4:4", 3, alternative="bulk or change-driven",
          ks=(1, 32, 128), quick_ks=(2,)),
    Suite("ablation", "our variants of each algorithm (the registry's FA/NFA x CD/NCD x fold "
          "x direction matrix; filter x fused for traversals) against its defaults",
          ablation.measure, ablation.algorithms,
          f"{R},grid:4096,ratings:1048576:65536:33554432", "rmat:3:2", 3,
          unit="ms/iteration", alternative="best other variant", ks=(4,), quick_ks=(2,)),
    Suite("profile", "one call per variant split into each generated kernel and the rest",
          ablation.measure_profile, ablation.algorithms, R, "rmat:3:2", 1, unit="ms/call",
          alternative="(none)", ks=(4,), quick_ks=(2,)),
    Suite("construction", "graph construction from an edge frame (ours vs cuGraph), first-call "
          "(compile) time of every algorithm, result-frame time", construction.measure,
          construction.algorithms, R, "rmat:4:4", 3, False, peers=("cugraph",), ks=(4,),
          quick_ks=(2,)),
    Suite("hostmem", "EMOGI: bfs, sssp, wcc, pagerank, feature_propagation with the edges in "
          "device memory, in pinned host memory read zero-copy (aligned / merged / naive "
          "reads) and in managed memory (UVM, cold), against pinned memcpy bandwidth",
          hostmem.measure, hostmem.algorithms, "rmat:22:16,er:4194304:16",
          "rmat:4:4,grid:4", 3, False, alternative="unified memory", plot_value="gb_s",
          peers=("emogi",)),
    Suite("outofcore", "EMOGI at scale: an R-MAT edge list written to Parquet, built in chunks "
          "straight into host memory (time, device and host peaks), then bfs, wcc, pagerank "
          "on the host graph against the same graph moved to the device",
          outofcore.measure, outofcore.algorithms, "rmat:26:36", "rmat:5:4", 2, False,
          alternative="device placement", prepare=outofcore.prepare),
    Suite("multigpu", "onyx_rapids.dask on every GPU of the machine (1 partition, one per "
          "worker, change-driven exchange) against the single-GPU call: build from Parquet, "
          "pagerank, label_propagation (k = --ks), bfs; the iteration driver alone (driver)",
          multigpu.measure, multigpu.algorithms,
          "rmat:20:16,rmat:21:16", "rmat:4:4", 3, alternative="dask", ks=(32,),
          quick_ks=(2,)),
    Suite("networkx", "NetworkX's functions through its dispatch: NetworkX itself, "
          "graphblas-algorithms and onyx (backend='onyx'), end to end and on a converted graph, "
          "conversion separately, on social-like (R-MAT) and road-like (grid) nx.Graphs",
          networkx.measure, networkx.algorithms, networkx.specs_for_sizes([1e4, 1e5]),
          "rmat:4:4,grid:4", 3, alternative="best other backend", prepare=networkx.prepare),
    Suite("approximate", "every approximation knob the registry declares, per algorithm, "
          "swept: speedup over our exact call against inaccuracy, with the loosened-tolerance "
          "curve (tol x10..x1e4), and issue 37's goals",
          approximate.measure, approximate.algorithms, "rmat:22,grid:2048,er:4194304:16",
          "rmat:3:4", 5, False, alternative="exact call", ks=(4,), quick_ks=(2,),
          finish=approximate.finish, report=approximate.report, plot=approximate.plot),
    Suite("tuning", "the autotuner's training table (issue 38): every configuration of each "
          "tuned algorithm's pool (onyx_rapids.tuning.pool) timed and checked against the "
          "defaults on the training corpus (--graphs: the held-out set, "
          "benchmarks.suites.tuning.HELD_OUT), with the graphs' attributes and their cost",
          tuning.measure, tuning.algorithms, tuning.TRAINING, "rmat:4:4,grid:4", 3, False,
          alternative="best configuration", ks=(32,), quick_ks=(2,)),
)}


class Run:
    """One harness run: settings, the log, the peers, rows, details, skipped peers."""

    def __init__(self, suite: Suite, *, algorithms, repeat, quick, ks, variants, log):
        self.suite, self.algorithms, self.repeat, self.quick = suite, algorithms, repeat, quick
        self.ks, self.variants, self.log = ks, variants, log
        self.first_calls = not quick  # traversal's first-call rows (run_suite: --no-first-calls)
        self.peer_limit_s = None  # traversal: cuGraph betweenness's time limit (--peer-limit)
        self.random_count = None  # tuning: the pools' random configurations (--random)
        self.rows, self.details, self.skipped, self.peers = [], [], {}, {}
        for name in suite.peers:
            mod, label = peers.load(name)
            self.peers[name] = (mod, label)
            if mod is None:
                self.skip(name, label)

    def skip(self, name: str, reason: str) -> None:
        if name not in self.skipped:
            self.skipped[name] = reason
            self.log(f"peer {name} skipped: {reason}")

    def peer(self, name: str):
        return self.peers.get(name, (None, None))

    def row(self, graph, algorithm, case, variant, implementation, role, **values) -> dict:
        row = {"suite": self.suite.name, "graph": graph, "algorithm": algorithm, "case": case,
               "variant": variant, "implementation": implementation, "role": role,
               "label": f"onyx_rapids {onyx.__version__}" if implementation == "ours" else None,
               "k": None, "unit": self.suite.unit, "ms": None, "first_call_ms": None,
               "repeats": 0, "times_ms": None, "status": "ok", "check": "-",
               "check_against": None, "check_detail": None, "params": None}
        row.update(values)
        self.rows.append(row)
        return row

    def timed(self, row: dict, fn, *, repeat=None, what="ours"):
        """Warm-up + timed calls into ``row``; the warm-up result, or None after an error
        (recorded and failed, or skipped for a peer out of memory)."""
        try:
            out, first, times = common.time_calls(fn, self.repeat if repeat is None else repeat)
        except Exception as e:
            self.error(row, e, what)
            return None
        row.update(first_call_ms=first, times_ms=times, repeats=len(times),
                   ms=common.median(times))
        return out

    def error(self, row: dict, e: BaseException, what: str) -> None:
        if row["role"] == "peer" and common.out_of_memory(e):
            row.update(status=f"skipped: out of device memory ({common.error_text(e)})")
            common.free_memory()
            return
        row.update(status=f"error: {common.error_text(e)}", check="error")
        self.log(traceback.format_exc())
        self.log.fail(f"{row['algorithm']} ({row['case']}, {row['variant']}) on {row['graph']}: "
                      f"{what} raised {common.error_text(e)}")

    def check(self, rows, record: dict, label: str) -> bool:
        """Record a check (common.compare's record) on ``rows``; fail when it is not ok."""
        text, ok = common.detail(record), bool(record.get("ok"))
        for r in rows if isinstance(rows, (list, tuple)) else [rows]:
            r.update(check="ok" if ok else "FAILED", check_against=record.get("against"),
                     check_detail=text)
        if not ok:
            self.log.fail(f"{label}: differs from {record.get('against')}: {text}")
        return ok


# ------------------------------------------------------------------------------ results


def _key(r):
    return (r["graph"], r["algorithm"], r["case"])


def finish_rows(rows: list[dict]) -> None:
    groups = {}
    for r in rows:
        groups.setdefault(_key(r), []).append(r)
    for group in groups.values():
        ours = next((r for r in group if r["role"] == "ours"), None)
        base = ours["ms"] if ours is not None and ours["status"] == "ok" else None
        for r in group:
            ok = base and r["ms"] and r["status"] == "ok"
            r["speedup_vs_ours"] = base / r["ms"] if ok else None
            r["ratio_vs_ours"] = r["ms"] / base if ok else None
            r["best_alternative"] = False
        alts = [r for r in group if r["role"] != "ours" and r["status"] == "ok" and r["ms"]
                and r["check"] not in ("FAILED", "error")]
        if alts:
            min(alts, key=lambda r: r["ms"])["best_alternative"] = True


def comparison(rows: list[dict]) -> list[dict]:
    out = {}
    for r in rows:
        e = out.setdefault(_key(r), {"graph": r["graph"], "algorithm": r["algorithm"],
                                     "case": r["case"], "ours": None, "best": None, "alts": []})
        if r["role"] == "ours":
            e["ours"] = r
        else:
            e["alts"].append(r)
            if r["best_alternative"]:
                e["best"] = r
    return list(out.values())


def _name(r) -> str:
    return r["variant"] if r["implementation"] == "ours" else (r["label"] or
                                                               r["implementation"])


def _cell(r) -> str:
    if r is None:
        return "—"
    return common.ms_text(r["ms"]) if r["status"] == "ok" else r["status"].split(":")[0]


def markdown(report: dict) -> str:
    suite = SUITES[report["suite"]]
    env, s = report["environment"], report["settings"]
    dev, alt, unit = env["device"], suite.alternative, suite.unit
    lines = [f"# onyx_rapids benchmark: {suite.name} ({dev.get('device')}, {report['date']})",
             "", f"Backend {dev.get('backend')}; driver {dev.get('driver')}; "
             + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
             + f"; git {env['git'].get('commit')} (dirty files: {env['git'].get('dirty_files')})"
             f"; `python -m benchmarks {' '.join(report['argv'])}`", "",
             f"{suite.summary}.  {unit}: median of {s['repeat']} timed calls after a warm-up, "
             f"device synchronized" + ("." if suite.report else
                                       f"; ratio = {alt} / ours (below 1: **we lose**)."), ""]
    if dev.get("backend") != "gpu":
        lines += ["**No GPU: kernels ran under the Numba CUDA simulator; these times test the "
                  "harness and mean nothing.**", ""]
    lines += ["| graph | n | m (stored) | directed | weighted | max degree | build ms |",
              "|---|---:|---:|---|---|---:|---:|"]
    for spec, st in report["graphs"].items():
        lines.append(f"| {spec} | {st['n']:,} | {st['m']:,} | {st['directed']} | "
                     f"{st['weighted']} | {st['max_degree']:,} | "
                     f"{common.fmt(st.get('build_ms'), '.1f')} |")
    if suite.report is not None:
        lines += [""] + suite.report(report)
    else:
        lines += ["", f"## Ours against the {alt}", "",
                  f"| graph | algorithm | case | ours {unit} | {alt} | {unit} | ratio | check | |",
                  "|---|---|---|---:|---|---:|---:|---|---|"]
        losses = []
        for e in comparison(report["rows"]):
            best, ours = e["best"], e["ours"]
            ratio = best["ratio_vs_ours"] if best else None
            name = _name(best) if best else "; ".join(
                f"{_name(r)} {_cell(r)}" for r in e["alts"]) or "none"
            lose = ratio is not None and ratio < 1
            if lose:
                losses.append(f"{e['algorithm']} ({e['case']}) on {e['graph']}: {name} "
                              f"{common.ms_text(best['ms'])} vs ours "
                              f"{common.ms_text(ours['ms'])}")
            lines.append(f"| {e['graph']} | {e['algorithm']} | {e['case']} | {_cell(ours)} | "
                         f"{name} | {_cell(best)} | "
                         f"{common.fmt(ratio, '.3g')}{'x' if ratio else ''} | "
                         f"{ours['check'] if ours else '—'} | {'**we lose**' if lose else ''} |")
        lines += ["", "## Where we lose", ""] + ([f"- {x}" for x in losses] or ["Nowhere."])
    lines += ["", "## Every row", "", f"| graph | algorithm | case | variant | implementation | "
              f"{unit} | first call ms | status | check | against | detail |",
              "|---|---|---|---|---|---:|---:|---|---|---|---|"]
    for r in report["rows"]:
        lines.append(f"| {r['graph']} | {r['algorithm']} | {r['case']} | {r['variant']} | "
                     f"{r['label'] or r['implementation']} | {common.ms_text(r['ms'])} | "
                     f"{common.fmt(r['first_call_ms'], '.1f')} | {r['status']} | {r['check']} |"
                     f" {r['check_against'] or ''} | {r['check_detail'] or ''} |")
    lines += ["", "Skipped peers: " + ("; ".join(f"{k}: {v}" for k, v in
                                                 report["skipped_peers"].items()) or "none")]
    lines += ["", "Plots: " + (", ".join(Path(p).name for p in report["plots"]) or
                               report.get("plot_note") or "none")]
    lines += (["", "## FAILED", ""] + [f"- {f}" for f in report["failures"]]
              if report["failures"] else ["", "All checks passed."])
    return "\n".join(lines) + "\n"


def _series(rows, x_key, value="ms"):
    """{(algorithm, label): [(x, ms or params[value])]} of passing rows."""
    out = {}
    for r in rows:
        if r["status"] == "ok" and r["ms"] and r["check"] not in ("FAILED", "error"):
            y = r["ms"] if value == "ms" else (r["params"] or {}).get(value)
            if y is None:
                continue
            label = r["variant"] if r["implementation"] == "ours" else r["implementation"]
            out.setdefault((r["algorithm"], label), []).append((x_key(r), y))
    return out


def _auto_limit_edges(report: dict):
    """The edge count m at which a graph's edge arrays reach the ``auto`` case's limit (half
    the --device-budget), from the measured graphs' bytes per edge; None without that case."""
    rows = [r for r in report["rows"] if r["case"] == "auto" and r.get("params")]
    if not report["settings"].get("device_budget") or not rows:
        return None
    per_edge = [r["params"]["edge_bytes"] / report["graphs"][r["graph"]]["m"] for r in rows
                if report["graphs"].get(r["graph"], {}).get("m")]
    return rows[0]["params"]["auto_limit_bytes"] / float(np.median(per_edge)) if per_edge \
        else None


def draw_plots(report: dict, stem: Path, slugs: dict) -> tuple[list, str | None]:
    plt, why = common.pyplot()
    if plt is None:
        return [], why
    suite, paths = SUITES[report["suite"]], []

    def save(fig, suffix):
        fig.tight_layout()
        path = stem.with_name(f"{stem.name}_{suffix}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(str(path))

    if suite.plot is not None:
        suite.plot(report, slugs, plt, save)
        return paths, (None if paths else "no plot: no row was measured")
    entries = comparison(report["rows"])
    for graph, slug in slugs.items():
        mine = [e for e in entries if e["graph"] == graph and e["ours"] and e["ours"]["ms"]]
        if not mine:
            continue
        fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(mine) + 2), 4.5))
        x = np.arange(len(mine))
        ax.bar(x - 0.2, [e["ours"]["ms"] for e in mine], 0.4, label="ours")
        ax.bar(x + 0.2, [e["best"]["ms"] if e["best"] else np.nan for e in mine], 0.4,
               label=suite.alternative)
        ax.set_xticks(x)
        ax.set_xticklabels([f"{e['algorithm']}\n{e['case']}" for e in mine], rotation=30,
                           ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel(suite.unit)
        ax.set_title(f"{suite.name} on {graph}", fontsize=9)
        ax.legend(fontsize=7)
        save(fig, slug)
    rows = report["rows"]
    sweeps = [("k", lambda r: r["k"], "k")] if len({r["k"] for r in rows} - {None}) > 1 else []
    if suite.name in ("scaling", "hostmem") and len(report["graphs"]) > 1:
        sweeps.append(("m", lambda r: report["graphs"][r["graph"]]["m"], "edges m (stored)"))
    for suffix, key, xlabel in sweeps:
        groups = {}
        for r in rows:  # one panel per (graph, algorithm) for k; per (algorithm, k) for m
            panel = (r["graph"], r["algorithm"]) if suffix == "k" else (r["algorithm"], r["k"])
            groups.setdefault(panel, []).append(r)
        groups = {p: _series(rs, key, suite.plot_value) for p, rs in groups.items()}
        groups = {p: s for p, s in groups.items() if any(len(v) > 1 for v in s.values())}
        if not groups:
            continue
        fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 4), squeeze=False)
        for ax, (panel, series) in zip(axes[0], groups.items()):
            for (_, label), pts in series.items():
                ax.plot(*zip(*sorted(pts)), marker="o", label=label)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel(xlabel)
            ax.set_ylabel(suite.unit if suite.plot_value == "ms" else suite.plot_value)
            ax.set_title(" ".join(str(p) for p in panel), fontsize=8)
            limit = _auto_limit_edges(report) if suffix == "m" else None
            if limit:
                ax.axvline(limit, color="grey", linestyle="--", linewidth=1,
                           label="edges at half the device budget (auto: host beyond)")
            ax.legend(fontsize=6)
        save(fig, suffix)
    return paths, (None if paths else "no plot: no row was measured (every row n/a, skipped or failed)")


# ------------------------------------------------------------------------------ running


def resolve(suite: Suite, algorithms=None, quick=False, ks=None, graphs_text=None):
    """(algorithm list, ks, graph specs) of a run, ValueError naming the bad value."""
    known = tuple(suite.algorithms())
    if algorithms is None:
        chosen = list(known)
    else:
        from .catalog import ALIASES, algorithms as table
        names = [ALIASES.get(a.strip(), a.strip()) for a in algorithms if a.strip()]
        allowed = tuple(table()) if suite.name in ("ablation", "profile",
                                                   "construction") else known
        bad = [a for a in names if a not in allowed]
        if bad or not names:
            raise ValueError(f"--algorithms: unknown {bad} for suite {suite.name}; choose from "
                             + ", ".join(allowed))
        chosen = names
    ks = tuple(ks) if ks else (suite.quick_ks if quick else suite.ks)
    if any(int(k) < 1 for k in ks):
        raise ValueError(f"--ks must be positive integers, got {list(ks)}")
    specs = graphs.parse_specs(graphs_text or (suite.quick_graphs if quick else suite.graphs))
    return chosen, tuple(int(k) for k in ks), specs


def run_suite(name: str, *, graphs_text=None, algorithms=None, repeat=None, out="benchmarks/"
              "results", tag="", quick=False, ks=None, variants=None, argv=(), quiet=False,
              device_budget=None, sizes=None, nx_max_edges=None, first_calls=True,
              peer_limit=None, random_count=None, confirm=None):
    """Run a suite; (exit status, report).  ``first_calls`` (traversal only): False leaves out
    a full run's first-call rows (each a fresh process that builds the graph again);
    ``peer_limit`` (traversal only, seconds): cuGraph's betweenness estimated to take longer
    for its calls is not run (benchmarks.suites.structure).  Bad arguments raise ValueError.
    ``device_budget`` (hostmem only): the budget of its ``auto`` case.  ``sizes`` (networkx
    only, edge counts): its graphs instead of ``graphs_text``; ``nx_max_edges`` (networkx only):
    NetworkX itself is not run on larger graphs.  ``random_count`` (tuning only): the random
    configurations of each pool (default :data:`onyx_rapids.tuning.POOL_RANDOM`);
    ``confirm`` (tuning only): a file of ``train --confirm-set``, whose configurations are
    timed instead of the pools (rows ``confirm``)."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
    suite = SUITES[name]
    if device_budget is not None:
        if name != "hostmem":
            raise ValueError(f"--device-budget is an option of the hostmem suite, not {name}")
        device_budget = memory.parse_bytes(device_budget, "--device-budget")
        if device_budget <= 0:
            raise ValueError(f"--device-budget must be positive, got {device_budget}")
    if (sizes is not None or nx_max_edges is not None) and name != "networkx":
        raise ValueError(f"--sizes and --nx-max-edges are options of the networkx suite, not "
                         f"{name}")
    if sizes is not None:
        if graphs_text:
            raise ValueError("give --sizes or --graphs, not both")
        graphs_text = networkx.specs_for_sizes(sizes)
    if not first_calls and name != "traversal":
        raise ValueError(f"--no-first-calls is an option of the traversal suite, not {name}")
    if peer_limit is not None and (name != "traversal" or not peer_limit > 0):
        raise ValueError(f"--peer-limit is a positive number of seconds of the traversal "
                         f"suite, got {peer_limit!r} for {name}")
    if nx_max_edges is not None and nx_max_edges < 0:
        raise ValueError(f"--nx-max-edges must be >= 0, got {nx_max_edges}")
    if random_count is not None and (name != "tuning" or random_count < 0):
        raise ValueError(f"--random is a count >= 0 of the tuning suite, got {random_count!r} "
                         f"for {name}")
    if confirm is not None:
        confirm = _confirm_file(confirm, name)
    chosen, ks, specs = resolve(suite, algorithms, quick, ks, graphs_text)
    repeat = repeat if repeat is not None else (1 if quick else suite.repeat)
    if repeat < 1:
        raise ValueError(f"--repeat must be >= 1, got {repeat}")
    log = common.Log(quiet)
    env = common.environment()
    now = datetime.datetime.now(datetime.timezone.utc)
    run = Run(suite, algorithms=chosen, repeat=repeat, quick=quick, ks=ks,
              variants=[v.strip().lower() for v in variants] if variants else None, log=log)
    run.device_budget, run.nx_max_edges = device_budget, nx_max_edges
    run.first_calls = first_calls and not quick
    run.peer_limit_s = peer_limit
    run.random_count = random_count
    run.confirm = confirm
    report = {"suite": name, "argv": list(argv), "date": now.date().isoformat(),
              "timestamp": now.isoformat(timespec="seconds"), "environment": env,
              "settings": {"graphs": [s.text for s in specs], "algorithms": chosen,
                           "repeat": repeat, "ks": list(ks), "quick": quick, "tag": tag,
                           "variants": variants, "unit": suite.unit,
                           "device_budget": device_budget, "nx_max_edges": nx_max_edges,
                           "random_count": random_count, "confirm": confirm is not None,
                           "graph_mode": "undirected" if suite.undirected else "directed"},
              "graphs": {}, "rows": run.rows, "details": run.details,
              "skipped_peers": run.skipped, "plots": [], "plot_note": None,
              "failures": log.failures}
    log(f"suite {name} on {env['device'].get('device')}: graphs "
        f"{', '.join(s.text for s in specs)}; algorithms {', '.join(chosen)}; repeat {repeat}")
    slugs = {}
    for spec in specs:
        slugs[spec.text] = spec.slug + "-2" * list(slugs.values()).count(spec.slug)
        try:
            g, st = (suite.prepare or graphs.build)(spec, undirected=suite.undirected, log=log)
        except Exception as e:
            log(traceback.format_exc())
            log.fail(f"graph {spec.text}: construction raised {common.error_text(e)}")
            continue
        report["graphs"][spec.text] = st
        try:
            suite.measure(run, spec, g, st)
        except Exception as e:  # a bug of the suite: keep what was measured
            log(traceback.format_exc())
            log.fail(f"graph {spec.text}: the {name} suite raised {common.error_text(e)}")
        del g
        common.free_memory()
    finish_rows(run.rows)
    if suite.finish is not None:
        suite.finish(run.rows)
    stem = common.stem(out, name, env["device"].get("device"), report["date"], tag, quick)
    try:
        report["plots"], report["plot_note"] = draw_plots(report, stem, slugs)
    except Exception as e:
        report["plot_note"] = f"no plot: plotting raised {common.error_text(e)}"
    if report["plot_note"]:
        log(report["plot_note"])
    table = common.results_table(report)
    try:
        common.write_parquet(common.suffixed(stem, ".parquet"), table)
    except Exception as e:
        log.fail(f"writing {stem}.parquet raised {common.error_text(e)}")
    report["ok"] = not log.failures
    report["elapsed_s"] = time.perf_counter() - log.t0
    text = markdown(report)
    common.write_json(common.suffixed(stem, ".json"), report)
    common.suffixed(stem, ".md").write_text(text)
    log(f"wrote {stem}.{{parquet,json,md}}")
    if not quiet:
        print(text, flush=True)
    for f in log.failures:
        print(f"FAILED: {f}", flush=True)
    return (1 if log.failures else 0), report


def _confirm_file(path, suite: str) -> dict:
    """The configurations of a ``train --confirm-set`` file: algorithm -> graph -> JSON texts,
    ``{}`` first (the reference the others are checked against); ValueError naming the file
    and what is wrong."""
    if suite != "tuning":
        raise ValueError(f"--confirm is an option of the tuning suite, not {suite}")
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"--confirm {path}: {type(e).__name__}: {e}") from None
    if not isinstance(doc, dict) or not all(
            isinstance(graphs_, dict) and all(isinstance(c, list) and c and c[0] == "{}"
                                              and all(isinstance(x, str) for x in c)
                                              for c in graphs_.values())
            for graphs_ in doc.values()):
        raise ValueError(f"--confirm {path}: not a file of 'train --confirm-set' (algorithm "
                         "-> graph -> configurations, '{}' first)")
    return doc


def list_text() -> str:
    lines = ["Suites (python -m benchmarks run SUITE [--graphs SPEC,...] [--algorithms A,...] "
             "[--ks K,...] [--variants V,...] [--repeat N] [--out DIR] [--tag T] [--quick]):"]
    for s in SUITES.values():
        lines.append(f"  {s.name:<12} {s.summary}; graphs {s.graphs} (--quick {s.quick_graphs})"
                     + (f"; ks {','.join(map(str, s.ks))}" if s.ks else ""))
    lines += ["", "Graph specs (--graphs, comma-separated):"]
    lines += [f"  {syntax:<32} {text}" for syntax, text in graphs.KINDS.values()]
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description="onyx_rapids benchmark harness (benchmarks/"
                                            "harness.py): ours against the peers a user would "
                                            "pick, every result checked in the same run.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,run,train}")
    sub.add_parser("list", help="the suites and graph specs")
    r = sub.add_parser("run", help="run a suite; write Parquet, JSON, Markdown and plots")
    r.add_argument("suite", choices=list(SUITES))
    r.add_argument("--graphs", help="comma-separated graph specs (default: the suite's)")
    r.add_argument("--algorithms", help="comma-separated subset (default: the suite's)")
    r.add_argument("--ks", help="comma-separated k values (features, sources, classes)")
    r.add_argument("--variants", help="ablation/profile: comma-separated variant names "
                                      "(e.g. FA/NCD/pull,NFA/NCD/pull; default all); "
                                      "approximate: the knobs to sweep (default all)")
    r.add_argument("--repeat", type=int, help="timed calls after the warm-up")
    r.add_argument("--out", default="benchmarks/results")
    r.add_argument("--tag", default="", help="appended to the output file names")
    r.add_argument("--quick", action="store_true", help="tiny graphs and settings (tests)")
    r.add_argument("--device-budget", help="hostmem: the device budget of its auto case, e.g. "
                                           "1.5GB (bfs / pagerank where auto places each graph)")
    r.add_argument("--sizes", help="networkx: comma-separated edge counts (e.g. 1e4,1e5,1e6,1e7): "
                                   "an R-MAT and a grid graph of about each")
    r.add_argument("--nx-max-edges", type=float, help="networkx: run NetworkX itself only up to "
                                                      "this many edges (larger: 'not run')")
    r.add_argument("--no-first-calls", action="store_true",
                   help="traversal: leave out the first-call rows (a fresh process per "
                        "algorithm and graph, which builds the graph again)")
    r.add_argument("--peer-limit", type=float,
                   help="traversal: seconds cuGraph's betweenness may take for its calls "
                        "(estimated from 4 sources; longer: 'not run')")
    r.add_argument("--each-graph", action="store_true",
                   help="one run per graph, one after another in this process (kernels "
                        "compiled once): each its own files, tagged TAG-GRAPH, written as it "
                        "ends, so a run stopped midway keeps the graphs it finished")
    r.add_argument("--confirm", metavar="FILE",
                   help="tuning: time again the configurations of 'train --confirm-set' "
                        "FILE instead of the pools")
    r.add_argument("--random", type=int, metavar="N",
                   help="tuning: random configurations in each pool besides the defaults and "
                        "the one-option changes (default 16)")
    t = sub.add_parser("train", help="tuning: train the models on 'tuning' suite runs and "
                                     "score them on held-out runs (the held-out table)")
    t.add_argument("--train", required=True, nargs="+", metavar="RESULTS",
                   help="results of 'run tuning' on the training corpus (each run's .parquet "
                        "or its .json)")
    t.add_argument("--held-out", required=True, nargs="+", metavar="RESULTS",
                   help="results of 'run tuning --graphs <held-out set>'")
    t.add_argument("--model", default="onyx_rapids/data/tuning/model.json",
                   help="where the model file goes (default: the package's)")
    t.add_argument("--out", default="benchmarks/results")
    t.add_argument("--tag", default="")
    t.add_argument("--attributes", default="full", choices=list(tuning.ATTRIBUTE_MODES),
                   help="the attributes the saved model reads (default full)")
    t.add_argument("--confirm-set", metavar="FILE",
                   help="write the held-out finalists to time again (run tuning --confirm "
                        "FILE) and stop")
    t.add_argument("--confirm", nargs="+", metavar="RESULTS",
                   help="results of 'run tuning --confirm': score on those times")
    t.add_argument("--pool-scored", metavar="ALGO,...",
                   help="with --confirm: algorithms still scored on the pools")
    args = p.parse_args(argv)
    if args.command == "list":
        print(list_text())
        return 0
    if args.command == "train":
        try:
            report = tuning.train_and_evaluate(args.train, args.held_out, model_path=args.model,
                                               out=args.out, tag=args.tag,
                                               attributes=args.attributes,
                                               confirm_paths=args.confirm,
                                               confirm_path=args.confirm_set,
                                               pool_scored=[a for a in (args.pool_scored or
                                                                        "").split(",") if a])
            if args.confirm_set:
                return 0
        except (ValueError, FileNotFoundError) as e:
            t.error(str(e))
        print(report["markdown"])
        return 0
    try:
        ks = [int(x) for x in args.ks.split(",") if x.strip()] if args.ks else None
        sizes = networkx.parse_sizes(args.sizes) if args.sizes is not None else None
        limit = int(args.nx_max_edges) if args.nx_max_edges is not None else None
        algorithms = args.algorithms.split(",") if args.algorithms else None
        runs = [(args.graphs, args.tag)]
        if args.each_graph:
            if sizes is not None and args.graphs:
                raise ValueError("give --sizes or --graphs, not both")
            _, _, specs = resolve(SUITES[args.suite], algorithms, args.quick, ks,
                                  args.graphs if sizes is None else
                                  networkx.specs_for_sizes(sizes))
            runs = [(spec.text, "-".join(filter(None, (args.tag, spec.slug))))
                    for spec in specs]
            sizes = None
        status = 0
        for graphs_text, tag in runs:
            code, _ = run_suite(
                args.suite, graphs_text=graphs_text, repeat=args.repeat, out=args.out,
                algorithms=algorithms, tag=tag, quick=args.quick, ks=ks, argv=argv,
                device_budget=args.device_budget, sizes=sizes, nx_max_edges=limit,
                first_calls=not args.no_first_calls, peer_limit=args.peer_limit,
                random_count=args.random, confirm=args.confirm,
                variants=args.variants.split(",") if args.variants else None)
            status = max(status, code)
    except ValueError as e:
        r.error(str(e))
    return status
