"""The README's Python examples run as pasted: each ```python block of README.md in a fresh
interpreter (a new process, a temporary working directory), on whatever backend this machine
has (the CUDA simulator in CI; the interpreter first shortens its GIL switch interval, as
tests/conftest.py does, then runs the block's file as ``__main__``).  A block preceded by the comment
``<!-- readme-test: needs-networkx-backend NAME -->`` runs where NetworkX lists the backend
NAME among its installed backends (its ``networkx.backends`` entry point), and is reported as
skipped, with that reason, elsewhere.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_BLOCK = re.compile(r"(?:<!--\s*readme-test:\s*(?P<marker>[^>]*?)\s*-->\s*\n)?"
                    r"^```python\n(?P<code>.*?)^```", re.S | re.M)
MARKERS = ("needs-networkx-backend",)
TIMEOUT_S = 300
#: How the fresh interpreter runs a block's file: as ``python FILE`` would (``__main__``,
#: sys.argv [FILE]), after the GIL switch interval of tests/conftest.py, which makes the
#: CUDA simulator's warp hand-offs cheaper (README.md:24 took 35 s at the default, 10 s so).
RUNNER = ("import runpy, sys; sys.setswitchinterval(0.0005); del sys.argv[0]; "
          "runpy.run_path(sys.argv[0], run_name='__main__')")


def blocks(text: str) -> list[tuple[int, str, str | None]]:
    """(line number, code, marker or None) of every ```python block of ``text``."""
    out = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start("code"))
        out.append((line, m.group("code"), m.group("marker")))
    return out


def networkx_backends() -> set:
    """The NetworkX backends installed here (entry points), empty without NetworkX."""
    try:
        from networkx.utils import backends
    except ImportError:
        return set()
    return set(backends.backends)


def missing_requirement(marker: str | None) -> str | None:
    """Why a block marked ``marker`` cannot run here, or None when it can."""
    if marker is None:
        return None
    kind, _, arg = marker.partition(" ")
    if kind == "needs-networkx-backend":
        return None if arg in networkx_backends() else (
            f"NetworkX backend {arg!r} is not installed (installed: "
            f"{sorted(networkx_backends()) or 'none'})")
    raise ValueError(f"README.md: unknown readme-test marker {marker!r}; known: {MARKERS}")


BLOCKS = blocks(README.read_text())


def test_readme_has_the_examples():
    """The extraction finds every block (a fence typo would silently drop one)."""
    assert len(BLOCKS) == README.read_text().count("```python")
    assert len(BLOCKS) >= 4
    for _, code, marker in BLOCKS:
        assert code.strip()
        assert marker is None or marker.split(" ")[0] in MARKERS


def test_extraction_reads_markers():
    text = ("x\n```python\nprint(1)\n```\n<!-- readme-test: needs-networkx-backend zz -->\n"
            "```python\nprint(2)\n```\n")
    assert blocks(text) == [(2, "print(1)\n", None),
                            (6, "print(2)\n", "needs-networkx-backend zz")]
    assert "not installed" in missing_requirement("needs-networkx-backend zz")
    with pytest.raises(ValueError, match="unknown readme-test marker"):
        missing_requirement("needs-gpu")


@pytest.mark.parametrize("line,code,marker", BLOCKS, ids=[f"README.md:{b[0]}" for b in BLOCKS])
def test_readme_example_runs(line, code, marker, tmp_path):
    why = missing_requirement(marker)
    if why:
        pytest.skip(why)
    script = tmp_path / f"readme_{line}.py"
    script.write_text(code)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get(
        "PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    assert proc.returncode == 0, (f"README.md line {line}: the example exited "
                                  f"{proc.returncode}:\n{proc.stderr[-3000:]}")
    assert proc.stdout.strip(), f"README.md line {line}: the example printed nothing"
