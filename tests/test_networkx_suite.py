"""NetworkX's own tests as ours: the test modules of every function the "onyx" backend
implements, run against it as nx-cugraph and graphblas-algorithms run them
(``NETWORKX_TEST_BACKEND=onyx NETWORKX_FALLBACK_TO_NX=True``).

In that mode NetworkX converts the graph of every dispatchable call to an OnyxGraph, calls
the backend (falling back to NetworkX's own code where ``can_run`` says no or the backend
raises NotImplementedError) and converts results back, so each of its assertions checks our
answer.  The run is a subprocess (NetworkX's conftest sets the dispatcher up at start); it
needs the entry points, which ``pip install -e '.[test]'`` registers, and fails without them.
``tests/networkx_skips.txt`` lists the tests deselected, each with its reason.  Every CI run
runs all the modules but the few :data:`HEAVY` tests, whose calls other tests of the modules
make on smaller inputs; the ``slow`` test runs those (docs/networkx.md gives the cost under the
simulator).
"""

import json
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

nx = pytest.importorskip("networkx")

from _onyx_rapids_nx import FUNCTIONS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SKIPS = Path(__file__).resolve().parent / "networkx_skips.txt"

#: NetworkX's test modules (relative to the networkx package) of the implemented functions.
MODULES = (
    "algorithms/link_analysis/tests/test_pagerank.py",
    "algorithms/traversal/tests/test_bfs.py",
    "algorithms/shortest_paths/tests/test_unweighted.py",
    "algorithms/shortest_paths/tests/test_weighted.py",
    "algorithms/shortest_paths/tests/test_generic.py",
    "algorithms/components/tests/test_connected.py",
    "algorithms/components/tests/test_weakly_connected.py",
    "algorithms/tests/test_core.py",
)

#: Tests the CI run leaves to the slow test, each with the tests that reach the same backend
#: calls in the CI run (CI time under the simulator).
HEAVY = {
    # 13 s of the 47: all-pairs lengths by the generic dispatcher, unweighted and weighted, on
    # a 7-cycle and a 4 x 4 grid (16 sources each)
    "algorithms/shortest_paths/tests/test_generic.py::TestGenericPath::"
    "test_all_pairs_shortest_path_length":
        "test_unweighted.py::TestUnweightedPath::test_all_pairs_shortest_path_length (the same "
        "grid and cycle), test_weighted.py::TestWeightedPath::test_all_pairs_dijkstra_path_length "
        "(weighted, on the cycle), test_generic.py::TestGenericPath::"
        "test_single_source_shortest_path_length (the dispatcher's weight and method keywords, "
        "weighted on the grid too)",
}

#: Tests of those modules that pass with networkx 3.6.1 (211), less a margin for versions
#: that drop a few and less the HEAVY ones; a run below it means tests went missing.
MIN_PASSED = 199


def skipped_tests() -> list[str]:
    """The node ids of tests/networkx_skips.txt (each line: node id, then ``# reason``)."""
    ids = []
    for line in SKIPS.read_text().splitlines():
        entry, _, reason = line.partition("#")
        if entry.strip():
            assert reason.strip(), f"{SKIPS.name}: {entry.strip()} has no reason"
            ids.append(entry.strip())
    return ids


def test_skip_list_names_tests_of_the_modules():
    for node in [*skipped_tests(), *HEAVY]:
        assert node.split("::")[0] in MODULES, f"{node} is not in MODULES"
    assert not set(HEAVY) & set(skipped_tests())


def _run_networkx_tests(tmp_path, targets, deselect):
    """NetworkX's tests ``targets`` (modules or node ids) against the backend, less
    ``deselect``: (number passed, the backend's calls by name); fails unless all pass."""
    found = entry_points(group="networkx.backends", name="onyx")
    assert found, ("the 'onyx' entry point of group networkx.backends is not installed; "
                   "fix: pip install -e '.[test]' (it registers the NetworkX backend)")
    assert entry_points(group="networkx.backend_info", name="onyx"), \
        "the 'onyx' networkx.backend_info entry point is not installed; pip install -e ."
    nx_dir = Path(nx.__file__).parent
    calls = tmp_path / "calls.json"
    env = dict(os.environ, NETWORKX_TEST_BACKEND="onyx", NETWORKX_FALLBACK_TO_NX="True",
               ONYX_NX_SUITE_CALLS=str(calls),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests"),
                                           os.environ.get("PYTHONPATH", "")]))
    args = [sys.executable, "-m", "pytest", "-q", "--rootdir", str(nx_dir), "-o", "addopts=",
            "-p", "no:cacheprovider", "-p", "no:logging", "-p", "networkx_suite_plugin",
            *targets]
    for node in deselect:
        args += ["--deselect", node]
    run = subprocess.run(args, cwd=nx_dir, env=env, capture_output=True, text=True,
                         timeout=900)
    tail = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, f"NetworkX's tests failed with the onyx backend:\n{tail}"
    passed = re.search(r"(\d+) passed", run.stdout)
    assert passed, tail
    return int(passed.group(1)), json.loads(calls.read_text()), tail


def test_networkx_test_modules_pass_with_the_onyx_backend(tmp_path):
    passed, ran, tail = _run_networkx_tests(tmp_path, MODULES, [*skipped_tests(), *HEAVY])
    assert passed >= MIN_PASSED, tail
    idle = sorted(set(FUNCTIONS) - set(ran))
    assert not idle, f"NetworkX's tests never reached the onyx backend for {idle}: {ran}"


@pytest.mark.slow  # CI runs the tests HEAVY names for each of these (see there)
def test_the_heavy_networkx_tests_pass_with_the_onyx_backend(tmp_path):
    passed, ran, tail = _run_networkx_tests(tmp_path, list(HEAVY), [])
    assert passed == len(HEAVY) and ran, tail
