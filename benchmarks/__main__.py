"""``python -m benchmarks run SUITE ...`` / ``python -m benchmarks list``: the benchmark
harness (benchmarks/harness.py)."""

import sys

from .harness import main

sys.exit(main())
