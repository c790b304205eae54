"""Scout benchmarks: run ``python -m bench.run`` (see bench/run.py)."""
