"""Benchmarks: `make bench` runs every module's `run()` and writes bench/RESULTS.md."""
