"""The harness suites, one module per family of measurements (see benchmarks/harness.py)."""
