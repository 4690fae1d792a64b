"""generate's sampling options on the command line: --temperature, --top-k, --top-p and --seed,
read into the keyword arguments of DecoderNumpy.generate (core/models/sampling.py does the
arithmetic). Without --temperature generation is greedy, and top-k and top-p would change nothing,
so giving them alone is a mistake the command line names."""

from __future__ import annotations

import argparse

from core.models.sampling import TOP_K_OFF, TOP_P_OFF, sampling_problem


def add_sampling_arguments(generate: argparse.ArgumentParser) -> None:
    generate.add_argument("--temperature", type=float, metavar="T", help="sample at T > 0 (default: greedy)")
    generate.add_argument(
        "--top-k", type=int, default=TOP_K_OFF, metavar="K", help="then keep the K likeliest (default 0: off)"
    )
    generate.add_argument(
        "--top-p",
        type=float,
        default=TOP_P_OFF,
        metavar="P",
        help="then keep the fewest likeliest tokens whose probability reaches P, 0 < P ≤ 1 (default 1: off)",
    )
    generate.add_argument("--seed", type=int, default=0, metavar="S", help="the sampling seed (default 0)")


def sampling_usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the command line's sampling options, in one sentence, or None."""
    problem = sampling_problem(args.temperature, args.top_k, args.top_p)
    if problem is not None:  # named as the command line spells them
        for what, flag in (("the temperature", "--temperature"), ("top-k", "--top-k"), ("top-p", "--top-p")):
            if problem.startswith(what):
                return flag + problem[len(what) :]
        return problem
    if args.temperature is None and (args.top_k != TOP_K_OFF or args.top_p != TOP_P_OFF):
        return (
            "--top-k and --top-p cut the distribution a token is drawn from: give --temperature T to "
            "sample (without it, generation is greedy: always the likeliest token)"
        )
    return None


def sampling_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of DecoderNumpy.generate for these options."""
    return {"temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p, "seed": args.seed}
