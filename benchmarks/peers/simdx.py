"""SIMD-X's own BFS program (Liu and Huang, USENIX ATC 2019; github.com/asherliu/simd-x) as a
peer of suite ``traversal``: built from their source with ``nvcc`` on the GPU machine, fed our
graph's CSR in their binary format, run as separate processes.

Nothing of theirs is in this repository: point ``SIMDX_SRC`` at a checkout of their repository
(``test/optimal/bfs_low_diameter/bfs.cu`` with ``lib/`` and ``cpu_alg/``).  The build copies
those files to a temporary directory, applies the changes sm_70+ needs (the pre-Volta warp
intrinsics ``__shfl``, ``__shfl_up``, ``__shfl_down``, ``__shfl_xor``, ``__ballot``, ``__any``,
``__all`` become their ``_sync`` forms with a full mask; ``cudaThreadSynchronize`` becomes
``cudaDeviceSynchronize``) and compiles ``nvcc -O3 -arch=sm_XY -D__VOTE__``.

Input: ``beg_pos`` (n + 1 int64 offsets), ``csr`` (m int64 column ids) and a weight file of m
int64 (the program reads one; an invalid path crashes it).  Arguments ``beg_pos csr weight
source blk_size switch_iter`` (the authors use blk_size 128; ``switch_iter`` 1, the only
setting that gives correct distances on sm_90, per ../shared/peers/README.md).  Its push
phase hands over to a pull phase once the frontier's edges pass a fraction of m (even with
``switch_iter`` 0), and the pull phase reads the CSR as in-edges: the program is a BFS of
symmetric graphs only (:func:`symmetric`).  A run prints ``Total iteration: L``, ``Total
time: S second(s).`` (host wall time around the BFS) and, after its own CPU BFS, ``Result
correct`` or ``Result wrong! ...`` (:func:`parse`).
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

ENV = "SIMDX_SRC"
PROGRAM = Path("test/optimal/bfs_low_diameter")
BLOCK_SIZE = 128
SWITCH_ITER = 1
_INTRINSIC = re.compile(r"\b__(shfl|shfl_up|shfl_down|shfl_xor|ballot|any|all)\s*\(")
_ITERATIONS = re.compile(r"Total iteration:\s*(-?\d+)")
_TIME = re.compile(r"Total time:\s*([0-9.eE+-]+)\s*second")
_built: dict = {}


def available() -> str:
    """A label when the program can be built here; raises (the peer is skipped) otherwise."""
    cuda_source(ENV, str(PROGRAM / "bfs.cu"), "github.com/asherliu/simd-x")
    return "SIMD-X bfs_low_diameter (their source, built with nvcc)"


def patch(text: str) -> str:
    """Their source with the sm_70+ changes (see the module docstring)."""
    text = _INTRINSIC.sub(lambda m: f"__{m.group(1)}_sync(0xffffffff, ", text)
    return text.replace("cudaThreadSynchronize", "cudaDeviceSynchronize")


def build() -> Path:
    """The built program (built once per process)."""
    if "exe" in _built:
        return _built["exe"]
    major, minor = device.xp.cuda.Device().compute_capability
    out = Path(tempfile.mkdtemp(prefix="simdx_"))
    src = Path(os.environ[ENV])
    for folder in ("lib", "cpu_alg", str(PROGRAM)):
        (out / folder).mkdir(parents=True, exist_ok=True)
        for path in (src / folder).iterdir():
            if path.is_file() and path.suffix in (".cu", ".cuh", ".h", ".hpp"):
                (out / folder / path.name).write_text(patch(path.read_text(errors="replace")))
    exe = out / "bfs"
    subprocess.run(["nvcc", "-O3", f"-arch=sm_{major}{minor}", "-D__VOTE__",
                    f"-I{out / 'lib'}", f"-I{out / 'cpu_alg'}", f"-I{out / PROGRAM}",
                    "-o", str(exe), str(out / PROGRAM / "bfs.cu")],
                   check=True, capture_output=True, text=True)
    _built["exe"] = exe
    return exe


def write_csr(g, stem: Path) -> tuple:
    """Our graph's CSR (internal ids) as ``STEM.beg_pos``, ``STEM.csr`` and ``STEM.weight``
    (int64; weights all 1): the three paths."""
    paths = tuple(Path(f"{stem}.{s}") for s in ("beg_pos", "csr", "weight"))
    device.to_host(g.out_offsets).astype(np.int64).tofile(paths[0])
    indices = device.to_host(g.out_indices).astype(np.int64)
    indices.tofile(paths[1])
    np.ones(indices.shape[0], dtype=np.int64).tofile(paths[2])
    return paths


def parse(text: str) -> dict:
    """{iterations, ms, correct} of one run's output; ValueError when a line is missing."""
    it, tm = _ITERATIONS.search(text), _TIME.search(text)
    if it is None or tm is None or ("Result correct" not in text and "Result wrong" not in text):
        raise ValueError(f"SIMD-X output lacks its iteration, time or result line: "
                         f"{text[-400:]!r}")
    return {"iterations": int(it.group(1)), "ms": float(tm.group(1)) * 1e3,
            "correct": "Result correct" in text}


def symmetric(g) -> bool:
    """Whether every stored edge u -> v of ``g`` has its reverse v -> u (an undirected graph,
    or a directed one holding both directions)."""
    if not g.directed:
        return True
    xp = device.xp
    src, dst = g.edge_sources.astype(np.int64), g.out_indices.astype(np.int64)
    return bool(xp.array_equal(xp.sort(src * g.n + dst), xp.sort(dst * g.n + src)))


def run_bfs(files: tuple, root: int, *, timeout: float = 600.0) -> dict:
    """One process from ``root`` (an internal id) on a symmetric graph: :func:`parse`'s
    record."""
    proc = subprocess.run([str(build()), *map(str, files), str(int(root)), str(BLOCK_SIZE),
                           str(SWITCH_ITER)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"SIMD-X bfs exited {proc.returncode}: "
                           f"{(proc.stdout + proc.stderr)[-400:]}")
    return parse(proc.stdout)
