"""Peers: the libraries a user would pick instead of ours, each in its own module, imported
only when a suite asks for it.  :func:`load` returns the module and its label, or None and the
reason it is skipped (recorded in the run's ``skipped_peers``): the library does not import.
A peer that runs out of device memory on one measurement is skipped there, with that reason.

* :mod:`.cugraph`: RAPIDS cuGraph (traversal, multisource, construction);
* :mod:`.cusparse`: CuPy/cuSPARSE SpMM (scipy.sparse as a labelled CPU stand-in without a GPU);
* :mod:`.torch`: PyTorch Geometric's APPNP, or ``torch.sparse.mm``;
* :mod:`.emogi`, :mod:`.simdx`: the seeds' own BFS programs, built from their source with nvcc.
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

from ..common import error_text

NAMES = ("cugraph", "cusparse", "torch")


def load(name: str):
    """(module, label) when the peer's library imports, else (None, skip reason)."""
    try:
        mod = importlib.import_module(f".{name}", __name__)
        return mod, mod.available()
    except Exception as e:
        return None, f"{name} not installed ({error_text(e)})"


def cuda_source(env: str, marker: str, url: str) -> Path:
    """The checkout a source-built peer's ``env`` names (``marker`` must exist in it), where
    a GPU and nvcc are present; raises (the peer is skipped) saying which is missing."""
    from onyx_rapids import device

    if device.BACKEND != "gpu":
        raise RuntimeError("no GPU")
    src = os.environ.get(env)
    if not src or not (Path(src) / marker).exists():
        raise RuntimeError(f"set {env} to a checkout of {url}")
    if shutil.which("nvcc") is None:
        raise RuntimeError("nvcc not on PATH")
    return Path(src)


def normalize_rows(x):
    """Each row divided by its sum, a zero row left zero (NumPy, CuPy or torch)."""
    s = x.sum(1)[:, None]
    s[s == 0] = 1
    return x / s
