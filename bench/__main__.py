"""python -m bench [--quick] [--only NAME ...]: run the benchmarks and print the README's table."""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import cpu_neighbours, format_table  # noqa: E402

# module names under bench/, in the order the table shows them
BENCHMARKS = [
    "learn_rerun",
    "learn_browser",
    "bert_speed",
    "gpt2_speed",
    "smollm2_speed",
    "train",
    "translate",
    "patching",
    "paths",
    "circuit",
    "explore_server",
    "explore_browser",
    "explore_flow",
    "first_open",
    "neuron",
    "behaviour",
    "representations",
    "cost",
    "compare",
    "atlas",
    "load",
    "classroom",
    "train_live",
    "cold_start",
    "cloud",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="fewer repeats (a smoke run, not for the README)"
    )
    parser.add_argument("--only", nargs="*", default=None, help="run only these benchmark modules")
    parser.add_argument(
        "--beside",
        type=int,
        default=0,
        metavar="N",
        help="run N CPU-bound processes beside the benchmarks (the issue's 'under load': 2)",
    )
    args = parser.parse_args()
    names = args.only or BENCHMARKS
    rows = []
    with cpu_neighbours(args.beside):
        for name in names:
            start = time.perf_counter()
            module = importlib.import_module(f"bench.{name}")
            rows.extend(module.run(quick=args.quick))
            print(f"[bench] {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if args.beside:
        print(f"With {args.beside} CPU-bound processes beside the benchmarks.")
    print(f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
