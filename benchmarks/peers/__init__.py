"""Peers: the libraries a user would pick instead of ours, each in its own module, imported
only when a suite asks for it.  :func:`load` returns the module and its label, or None and the
reason it is skipped (recorded in the run's ``skipped_peers``): the library does not import.
A peer that runs out of device memory on one measurement is skipped there, with that reason.

* :mod:`.cugraph`: RAPIDS cuGraph (traversal, multisource, construction);
* :mod:`.cusparse`: CuPy/cuSPARSE SpMM (scipy.sparse as a labelled CPU stand-in without a GPU);
* :mod:`.torch`: PyTorch Geometric's APPNP, or ``torch.sparse.mm``.
"""

from __future__ import annotations

import importlib

from ..common import error_text

NAMES = ("cugraph", "cusparse", "torch")


def load(name: str):
    """(module, label) when the peer's library imports, else (None, skip reason)."""
    try:
        mod = importlib.import_module(f".{name}", __name__)
        return mod, mod.available()
    except Exception as e:
        return None, f"{name} not installed ({error_text(e)})"


def normalize_rows(x):
    """Each row divided by its sum, a zero row left zero (NumPy, CuPy or torch)."""
    s = x.sum(1)[:, None]
    s[s == 0] = 1
    return x / s
