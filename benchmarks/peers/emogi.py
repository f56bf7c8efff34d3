"""EMOGI's own BFS programs (Min et al., VLDB 2021; github.com/illinois-impact/EMOGI) as a
peer of suite ``hostmem``: built from their source with ``nvcc`` on the GPU machine, fed our
graph in their ``.bel`` format, run as separate processes.

Nothing of theirs is in this repository: point ``EMOGI_SRC`` at a checkout of their
repository (``bfs.cu``, ``bfs_32.cu``, ``helper_*.h``).  The build copies those files to a
temporary directory, applies the one change CUDA 13 needs (``cudaMemAdvise`` takes a
``cudaMemLocation``) and compiles ``nvcc -O3 -arch=sm_XY`` for the GPU present.

``bfs`` reads 8-byte edge ids, ``bfs_32`` 4-byte ones (both read 8-byte files).  Their memory
modes: 0 device memory, 1 managed memory with read-mostly advice (each process starts cold), 2
managed memory with accessed-by advice (the pages stay on the host and are read zero-copy);
kernel type 2 is their merged + aligned warp-per-vertex read over chunks of 8 vertices.  A run
prints its BFS iterations (levels + 1) and its time (CUDA events around the BFS loop).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from onyx_rapids import device

from . import cuda_source

ENV = "EMOGI_SRC"
PROGRAMS = ("bfs", "bfs_32")
MODES = {0: "device", 1: "uvm read-only", 2: "zero-copy"}
_RUN = re.compile(r"run\s+\d+:\s*src\s+(\d+),\s*iteration\s+(\d+),\s*time\s+([0-9.]+)\s*ms")
_built: dict = {}


def available() -> str:
    """A label when the programs can be built here; raises (the peer is skipped) otherwise."""
    cuda_source(ENV, "bfs.cu", "github.com/illinois-impact/EMOGI")
    return "EMOGI bfs / bfs_32 (their source, built with nvcc)"


def build() -> Path:
    """The directory with the built programs (built once per process)."""
    if "dir" in _built:
        return _built["dir"]
    major, minor = device.xp.cuda.Device().compute_capability
    out = Path(tempfile.mkdtemp(prefix="emogi_"))
    src = Path(os.environ[ENV])
    for name in os.listdir(src):
        if name.endswith((".cu", ".h")):
            text = (src / name).read_text()
            # CUDA 13: cudaMemAdvise(ptr, size, advice, cudaMemLocation)
            text = re.sub(r"(cudaMemAdvise\([^;]*?,\s*cudaMemAdvise\w+),\s*device\)",
                          r"\1, cudaMemLocation{cudaMemLocationTypeDevice, device})", text)
            (out / name).write_text(text)
    for program in PROGRAMS:
        subprocess.run(["nvcc", "-O3", f"-arch=sm_{major}{minor}", "-o", str(out / program),
                        str(out / f"{program}.cu")], check=True, capture_output=True, text=True)
    _built["dir"] = out
    return out


def write_bel(g, stem: Path) -> Path:
    """Our graph's CSR (internal ids) as ``STEM.bel.col`` / ``.bel.dst``: a 16-byte header
    (element count, a placeholder), then uint64 offsets / destination ids."""
    bel = Path(f"{stem}.bel")
    for suffix, values in ((".col", g.out_offsets), (".dst", g.out_indices)):
        data = device.to_host(values).astype(np.uint64)
        with open(f"{bel}{suffix}", "wb") as f:
            np.array([data.shape[0], 0], dtype=np.uint64).tofile(f)
            data.tofile(f)
    return bel


def run_bfs(program: str, bel: Path, root: int, mode: int, kernel: int = 2,
            timeout: float = 300.0) -> list:
    """One process of ``program``: [(root, iterations, ms)] of its one run.  (No ``-i``: it
    resets the root to vertex 0.)"""
    exe = build() / program
    proc = subprocess.run([str(exe), "-f", str(bel), "-r", str(int(root)), "-t", str(kernel),
                           "-m", str(mode)], capture_output=True, text=True,
                          timeout=timeout)
    runs = [(int(a), int(b), float(c)) for a, b, c in _RUN.findall(proc.stdout)]
    if proc.returncode != 0 or not runs or runs[0][0] != int(root):
        raise RuntimeError(f"{program} -m {mode} exited {proc.returncode}: "
                           f"{(proc.stdout + proc.stderr)[-400:]}")
    return runs
