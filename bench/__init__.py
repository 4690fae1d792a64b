"""Benchmarks. `python -m bench` runs them all and prints the table the README shows.

Each module in BENCHMARKS exposes run(quick: bool) -> list[Row]. Figures are medians measured on
this machine in one run; targets come from the issues. No unit test asserts a time.
"""
