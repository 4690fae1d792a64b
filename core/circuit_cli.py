"""The command line's `circuit`: the indirect-object circuit of a decoder, found by path patching
(core/measures/circuit.py), as JSON:

    python -m core circuit --model M --task ioi [--prompts N] [--seed S] [--format json] [--out FILE]
    -> {"model", "task", "prompts": [{"text", "io", "s", "corrupt", ...}], "logit_diff_clean",
        "logit_diff_corrupt", "direct": [L][H], "classes": {"name_mover": [[l, h]], ...},
        "faithfulness", "evidence": {...}, "record": {"command", "seed", "prompts", "seconds",
        "commit", "version", "date"}}

The search's steps and a progress line go to stderr; errors are one line there (core/__main__.py).
References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593; Goldowsky-Dill et al. 2023, "Localizing Model
Behavior with Path Patching", arXiv 2304.05969.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

__all__ = ["MAX_PROMPTS", "add_circuit_command", "circuit_json", "record"]

MAX_PROMPTS = 64  # each prompt is a forward pass per sender and step: 64 is already an hour on SmolLM2


def add_circuit_command(commands) -> None:
    command = commands.add_parser(
        "circuit",
        help="find the indirect-object circuit of a decoder by path patching (Wang et al. 2022)",
        description="Generate the IOI task in the model's tokenizer, then find its name movers, negative "
        "name movers, S-inhibition, induction, duplicate-token and previous-token heads by path patching "
        "(clean against three other names), and the circuit's faithfulness. Progress on stderr.",
    )
    command.add_argument(
        "--model", default="smollm2", help="a decoder: smollm2 (default), a Hub id or a folder"
    )
    command.add_argument("--task", choices=("ioi",), default="ioi", help="ioi, the indirect object (default)")
    command.add_argument(
        "--prompts", type=int, default=8, metavar="N", help="prompts of the task (default 8)"
    )
    command.add_argument("--seed", type=int, default=0, metavar="S", help="the prompts' seed (default 0)")
    command.add_argument("--format", choices=("json",), default="json", help="json (default json)")
    command.add_argument("--out", metavar="FILE", help="write here instead of standard output")


class _Line:
    """The step being run and how far the search is, on one stderr line (a line a step in a log)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live, self.step, self.start, self.shown = self.stream.isatty(), "", time.monotonic(), 0.0

    def say(self, words: str) -> None:
        self.step = words
        self.stream.write(
            ("\r\x1b[K" if self.live else "") + f"circuit: {words}" + ("" if self.live else "\n")
        )
        self.stream.flush()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.live or (done < total and now - self.shown < 0.2):
            return
        self.shown = now
        self.stream.write(f"\r\x1b[K circuit: {self.step} ({100 * done // max(total, 1)}%)")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _commit() -> str | None:
    """The checkout's commit (short), or None outside a git checkout."""
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = found.stdout.strip() if found.returncode == 0 else ""
    return commit or None


def _version() -> str | None:
    """The product's version: the installed package's, or pyproject.toml's in a checkout."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attention-explorer")
    except PackageNotFoundError:
        pass
    try:
        project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text("utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return project.get("project", {}).get("version")


def record(args, seconds: float) -> dict:
    """How the result was made: the command, its seed and prompts, the time it took, the code's commit
    and version, and the date (UTC)."""
    command = f"python -m core circuit --model {args.model} --task {args.task} --prompts {args.prompts} "
    return {
        "command": command + f"--seed {args.seed} --format json",
        "seed": args.seed,
        "prompts": args.prompts,
        "seconds": round(seconds, 1),
        "commit": _commit(),
        "version": _version(),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def circuit_json(args, stream: TextIO | None = None) -> str:
    """The circuit command's JSON for parsed arguments (core/__main__.py's); the search is imported
    here, when the command runs, so that `python -m core` starts as fast as before."""
    from core.measures.circuit import find_circuit
    from core.models.architectures import is_decoder, load_engine

    if not 1 <= args.prompts <= MAX_PROMPTS:
        raise ValueError(f"--prompts must be in 1..{MAX_PROMPTS}, got {args.prompts}")
    engine = load_engine(args.model)
    if not is_decoder(engine):
        raise ValueError(
            f"the circuit search needs a decoder such as smollm2 or gpt2; {engine.name} is a BERT"
        )
    line = _Line(stream)
    start = time.perf_counter()
    found = find_circuit(engine, prompts=args.prompts, seed=args.seed, progress=line, say=line.say)
    found["record"] = record(args, time.perf_counter() - start)
    return json.dumps(found)
