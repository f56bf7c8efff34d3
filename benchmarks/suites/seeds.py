"""The seeds' own BFS programs beside ours in suite ``traversal``: SIMD-X's
(:mod:`benchmarks.peers.simdx`) and EMOGI's in device memory (:mod:`benchmarks.peers.emogi`),
from the same root on the same graph (our CSR written in their formats once per graph), one
process per run: a warm-up process, then ``--repeat`` timed ones; the time is what each
program reports for its BFS.  Rows join the bfs group of the case (``default``: from the hub,
``random source``), so the best of cuGraph, SIMD-X and EMOGI is the alternative.

Checked: SIMD-X's own comparison with its CPU BFS says "Result correct" in every run; EMOGI's
BFS iterations equal our deepest level + 1 (as suite hostmem checks it).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np

from onyx_rapids import device

from .. import peers
from ..common import UNREACHED_HOPS, median

NAMES = ("simdx", "emogi")
EMOGI_DEVICE_MODE = 0


class SeedFiles:
    """The seeds' peers of a run (loaded once, skips recorded) and one graph's files in their
    formats, written on first use and removed by :meth:`close`."""

    def __init__(self, run, g):
        self.run, self.g, self.folder, self.files = run, g, None, {}
        for name in NAMES:
            if name not in run.peers:
                run.peers[name] = peers.load(name)
                if run.peers[name][0] is None:
                    run.skip(name, run.peers[name][1])

    def symmetric(self) -> bool:
        """Whether the graph holds every edge in both directions (SIMD-X's condition)."""
        if "symmetric" not in self.files:
            self.files["symmetric"] = self.run.peer("simdx")[0].symmetric(self.g)
        return self.files["symmetric"]

    def get(self, name: str):
        if name not in self.files:
            if self.folder is None:
                self.folder = Path(tempfile.mkdtemp(prefix="seeds_graph_"))
            mod = self.run.peer(name)[0]
            writer = mod.write_csr if name == "simdx" else mod.write_bel
            self.files[name] = writer(self.g, self.folder / "graph")
        return self.files[name]

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder, self.files = None, {}


def _timed_runs(run, row, fn, what):
    """repeat + 1 processes of ``fn() -> (ms, record)``: the records, or None after an error."""
    try:
        out = [fn() for _ in range(run.repeat + 1)]
    except Exception as e:
        run.error(row, e, what)
        return None
    times = [ms for ms, _ in out[1:]]
    row.update(first_call_ms=out[0][0], times_ms=times, repeats=len(times), ms=median(times))
    return [rec for _, rec in out]


def seed_rows(run, graph, g, case, source, hops, seeds: SeedFiles) -> None:
    """SIMD-X's and EMOGI's rows of bfs ``case`` from ``source`` (an original id); ``hops``:
    our distances (internal order)."""
    root = int(g.to_internal(source))
    h = device.to_host(hops).astype(np.int64)
    levels = int(h[h < UNREACHED_HOPS].max()) + 1
    mod, label = run.peer("simdx")
    if mod is not None:
        row = run.row(graph, "bfs", case, "simdx", "simdx", "peer", label=label,
                      params={"root": root, "block_size": mod.BLOCK_SIZE,
                              "switch_iter": mod.SWITCH_ITER})
        if not seeds.symmetric():
            row["status"] = ("n/a: SIMD-X's program is a BFS of symmetric graphs (its pull "
                             "phase reads the CSR as in-edges); this graph is directed")
        else:
            recs = _timed_runs(run, row, lambda: (lambda r: (r["ms"], r))(
                mod.run_bfs(seeds.get("simdx"), root)), "SIMD-X bfs")
            if recs is not None:
                row["params"].update(iterations=sorted({r["iterations"] for r in recs}),
                                     our_levels=levels)
                wrong = sum(not r["correct"] for r in recs)
                run.check(row, {"against": "its own CPU BFS", "metric": "runs wrong",
                                "value": wrong, "ok": wrong == 0}, f"SIMD-X bfs on {graph}")
    mod, label = run.peer("emogi")
    if mod is None:
        return
    for program in mod.PROGRAMS:
        row = run.row(graph, "bfs", case, f"emogi {program} device", "emogi", "peer",
                      label=label, params={"program": program, "mode": EMOGI_DEVICE_MODE,
                                           "kernel": 2, "root": root})
        recs = _timed_runs(run, row, lambda: (lambda r: (r[2], r))(mod.run_bfs(
            program, seeds.get("emogi"), root, EMOGI_DEVICE_MODE)[0]), f"EMOGI {program}")
        if recs is not None:
            got = {i for _r, i, _ms in recs}
            run.check(row, {"against": "our bfs levels + 1", "metric": "iterations",
                            "value": sorted(got), "reference": levels, "ok": got == {levels}},
                      f"EMOGI {program} on {graph}")
