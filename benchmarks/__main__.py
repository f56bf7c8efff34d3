"""``python -m benchmarks list`` / ``python -m benchmarks run SUITE ...``: the only command line
of the benchmarks (benchmarks/harness.py)."""

import sys

from .harness import main

sys.exit(main())
