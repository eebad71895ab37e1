"""Benchmarks (run as scripts: bench/bench_*.py) and what they share with the tests.

- batches: run directories and corpora in our layout and the reference's exact shapes
"""
