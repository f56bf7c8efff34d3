"""pytest plugin for the NetworkX test run of ``tests/test_networkx_suite.py`` (loaded in its
subprocess with ``-p networkx_suite_plugin``).

It counts the calls NetworkX's dispatcher hands to the "onyx" backend (its DEBUG record
"Using backend 'onyx' for call to ...") and writes them as JSON to ``$ONYX_NX_SUITE_CALLS``,
so the test can check that the backend ran and did not just fall back to NetworkX; and, as
``tests/conftest.py`` does, it shortens the GIL switch interval that the CUDA simulator's
threads hand values over.
"""

import json
import logging
import os
import sys
from collections import Counter

sys.setswitchinterval(0.0005)


class _CallCounter(logging.Handler):
    """Counts "Using backend 'onyx' for call to '<name>'" records by name."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.calls = Counter()

    def emit(self, record):
        if (isinstance(record.msg, str) and record.msg.startswith("Using backend '%s' for call")
                and record.args and record.args[0] == "onyx"):
            self.calls[record.args[1]] += 1


_COUNTER = _CallCounter()


def pytest_configure(config):
    logger = logging.getLogger("networkx.utils.backends")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(_COUNTER)


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("ONYX_NX_SUITE_CALLS")
    if path:
        with open(path, "w") as f:
            json.dump(dict(_COUNTER.calls), f)
