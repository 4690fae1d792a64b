"""Command line: one sentence's attention from a BERT, as JSON, CSV or NPZ; and what the model does
with it: each head's effect when ablated, and each token's importance by leave-one-out.

    python -m core attend "The trophy would not fit in the suitcase." [--pair "It was too big."]
        [--model bundled|HUB_ID|./FOLDER] [--engine numpy|torch] [--format json|csv|npz] [--out FILE]
    python -m core ablate TEXT [--model M] [--engine E] [--format json|csv] [--out FILE]
    python -m core attribute TEXT [--model M] [--engine E] [--format json|csv] [--out FILE]
    python -m core fill "The [MASK] sat on the mat." [--model M] [--top 5] [--format json] [--out FILE]
    python -m core nextword TEXT --model GPT2 [--top 5] [--out FILE]
    python -m core generate TEXT --model GPT2 [--tokens 20] [--temperature T [--top-k K] [--top-p P] --seed S]
    python -m core induction --model GPT2 [--length 50] [--seed 0] [--out FILE]
    python -m core choose PREFIX --options " trophy" " suitcase" --model smollm2 [--format json] [--out FILE]
    python -m core translate TEXT [--model translator|FOLDER] [--out FILE]
    python -m core patch CLEAN CORRUPT [--model M] [--options A B] [--what heads|residual|paths]
        [--to L.H,... --via q|k|v] [--out FILE]
    python -m core circuit --model smollm2 --task ioi [--prompts 8] [--seed 0] [--out FILE] (docs/circuits.md)
    python -m core train --out DIR [--task letters|translate] [--seed 0] [--steps N] [--layers 2]
        [--heads 4] [--lr LR]
    python -m core prepare [--model smollm2 ...] [--check] [--format text|json]   (docs/prepare.md)

ablate's JSON: {"model", "engine", "tokens", "effect": [L][H]}, effect being how far the model's output
moves with that head alone ablated (core/measures/ablation.py): for a BERT 1 − cos of the sentence
embedding (the mean-pooled last layer, L2-normalised), for a decoder the total variation of its
next-token probabilities; CSV: layer,head,effect. attribute's JSON: {"model", "engine", "tokens", "loo":
[T], "attention": [T], "rollout": [T], "norms": [T], "spearman": {"attention", "rollout", "norms"}}, null
at [CLS] and [SEP] (core/measures/attribution.py; a decoder's attention is read from its last
position); CSV: index,token,loo,attention,rollout,norms. ablate and attribute run on any model, fill
on a BERT. fill's JSON: {"model", "tokens", "masks": [{"index", "predictions": [{"token",
"probability"}]}]}, from the model's masked-LM head in NumPy (core/models/masked_lm.py); a model
without one is an error.

The decoder commands run a GPT-2 or a Llama such as smollm2 (core/models/decoder.py; tokens decoded
to text, " Paris" not "ĠParis"). nextword's JSON: {"tokens", "next": [{"token", "prob"}]}, most
likely first. generate's: {"tokens" (the prompt), "generated", "steps": [{"token", "top": [{"token",
"prob"}], "kept", "n_kept", "attentions": [L][H][t]}]}, greedy unless a temperature is given (then
sampled, seeded, after top-k then top-p: core/models/sampling.py; kept: the distribution drawn from),
step i's attentions being the predicting position's weights over the t tokens it saw. induction's:
{"length", "seed", "ids", "scores": [L][H], "loss_first", "loss_repeat"} (core/measures/induction.py),
ids being the tokens it drew. choose's: {"prefix_tokens", "options": [{"text", "tokens", "logprob"}],
"verdict"}, logprob being the sum of the natural-log probabilities of the option's tokens after
PREFIX (core/measures/choice.py).

train trains a small GPT-2 from scratch on letters in NumPy (core/train/) and saves it in DIR as a
GPT-2 checkpoint with its training record; its JSON: {"steps", "seconds", "loss_first", "loss_repeat",
"induction": [[L][H]], "previous_token": [[L][H]], "settings", "out"}, one entry per snapshot. With
--task translate it trains an English-to-French translator (core/translate/) and saves a BART
checkpoint; its JSON: {"steps", "seconds", "loss", "exact_match", "alignment": [[L][H]], "probe",
"settings", "out"}, exact match and each cross-attention head's alignment on held-out pairs.

JSON: {"model": str, "engine": str, "tokens": [str], "attentions": [L][H][T][T]} (ARCHITECTURE.md),
weights rounded to 8 decimals. CSV: one row per weight, with a header:
layer,head,from_index,from_token,to_index,to_token,weight (row = the token that attends, "from";
column = the token attended to, "to"; layers and heads 0-indexed). NPZ: the arrays tokens,
attentions (L, H, T, T), hidden_states (L + 1, T, D), special_mask, word_ids (-1 for special tokens),
token_type_ids, and model and engine as strings.

The NumPy engine (default) never imports torch; --engine torch uses core.models.pretrained. Errors go to
stderr as one line starting "error:", with exit status 2 for a wrong command line and 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from core.circuit_cli import add_circuit_command, circuit_json
from core.export import JSON_DECIMALS, to_csv, to_json, to_npz  # noqa: F401 (the CLI's writers)
from core.measures.patch_cli import add_patch_command, patch_json
from core.prepare import add_prepare_command, prepare_command
from core.sampling_cli import add_sampling_arguments, sampling_options, sampling_usage_problem
from core.translate.cli import add_translate_command, encoder_attention, translate_json
from core.translate.engine import is_translator

ENGINES = ("numpy", "torch")
DECODER_HELP = "a decoder: smollm2, letters, a Hub id (gpt2) or a folder"
FORMATS = ("json", "csv", "npz")


class UsageError(Exception):
    """The command line is wrong (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage + message over several lines; we want one
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description="Attention Explorer's computation, from the shell.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    attend = commands.add_parser(
        "attend",
        help="write a sentence's attention weights (every layer and head)",
        description="Run a BERT on TEXT and write its tokens and attention weights [layer][head][from][to].",
    )
    attend.add_argument("text", metavar="TEXT", help="the sentence")
    attend.add_argument("--pair", metavar="TEXT2", help="a second sentence (token type 1), as BERT pairs")
    _add_common(attend, FORMATS)
    ablate = commands.add_parser(
        "ablate",
        help="each head's effect on the sentence embedding when it alone is ablated",
        description="Zero each head in turn; write 1 - cos(embedding, embedding without it) [layer][head].",
    )
    ablate.add_argument("text", metavar="TEXT", help="the sentence")
    _add_common(ablate, ("json", "csv"))
    attribute = commands.add_parser(
        "attribute",
        help="each token's leave-one-out importance beside attention, rollout and norms",
        description="Drop each token in turn, measure the embedding's change, and compare with attention.",
    )
    attribute.add_argument("text", metavar="TEXT", help="the sentence")
    _add_common(attribute, ("json", "csv"))
    fill = commands.add_parser(
        "fill",
        help="the words a masked-LM BERT predicts for each [MASK]",
        description="Run a masked-LM BERT on TEXT and write its most likely words for every [MASK].",
    )
    fill.add_argument("text", metavar="TEXT", help="the sentence, with one or more [MASK]")
    fill.add_argument("--top", type=int, default=5, metavar="K", help="predictions per [MASK] (default 5)")
    _add_common(fill, ("json",), engines=("numpy",))
    _add_decoder_commands(commands)
    add_translate_command(commands)
    add_patch_command(commands)
    add_circuit_command(commands)
    add_prepare_command(commands)
    return parser


def _add_decoder_commands(commands) -> None:
    nextword = commands.add_parser(
        "nextword",
        help="a decoder's likeliest next tokens after TEXT",
        description="Run a GPT-2 on TEXT and write the tokens it finds likeliest to come next.",
    )
    nextword.add_argument("text", metavar="TEXT", help="the text so far")
    nextword.add_argument("--top", type=int, default=5, metavar="K", help="how many (default 5)")
    generate = commands.add_parser(
        "generate",
        help="a decoder extends TEXT token by token, with each step's attention",
        description="Let a GPT-2 continue TEXT (greedy, or sampled with --temperature and --seed).",
    )
    generate.add_argument("text", metavar="TEXT", help="the prompt")
    generate.add_argument("--tokens", type=int, default=20, metavar="N", help="how many (default 20)")
    add_sampling_arguments(generate)
    induction = commands.add_parser(
        "induction",
        help="each head's prefix-matching score on repeated random tokens",
        description="Run a GPT-2 on random tokens repeated twice: induction scores, the loss on each copy.",
    )
    induction.add_argument("--length", type=int, default=50, metavar="N", help="one copy (default 50)")
    induction.add_argument("--seed", type=int, default=0, metavar="S", help="the tokens' seed (default 0)")
    choose = commands.add_parser(
        "choose",
        help="which continuation of PREFIX a decoder prefers: each option's log-probability",
        description="Score each option after PREFIX: the sum of the log-probabilities of its tokens.",
    )
    choose.add_argument("prefix", metavar="PREFIX", help="the text before the options")
    choose.add_argument(
        "--options", nargs="+", required=True, metavar="TEXT", help='e.g. " trophy" " suitcase"'
    )
    for command in (nextword, generate, induction, choose):
        _add_common(command, ("json",), engines=("numpy",), model_help=DECODER_HELP)
    _add_train_command(commands)


def _add_train_command(commands) -> None:
    train = commands.add_parser(
        "train",
        help="train a small GPT-2 on letters, or a small translator, from scratch in NumPy, and save it",
        description="Train a small GPT-2 on random letters with repeats (--task letters), or a small "
        "English-to-French translator on a grammar's sentence pairs (--task translate); save the model "
        "and its record in DIR.",
    )
    train.add_argument("--out", required=True, metavar="DIR", help="the folder to save the model in")
    train.add_argument(
        "--task", choices=("letters", "translate"), default="letters", help="(default letters)"
    )
    for flag, kind, what in (
        ("--seed", int, "the weights' and data's seed"),
        ("--steps", int, "training steps"),
        ("--layers", int, "blocks (the translator: encoder and decoder layers each)"),
        ("--heads", int, "heads per block"),
        ("--lr", float, "the peak learning rate"),
    ):
        train.add_argument(flag, type=kind, default=None, help=f"{what} (default: the task's)")
    train.add_argument("--format", choices=("json",), default="json", help="json (default json)")


def _train(args) -> str:
    """Train, save, and return the record as JSON."""
    import json
    from dataclasses import replace

    from core.train.trainer import Trainer, TrainSettings
    from core.translate.trainer import TranslateSettings, Translator

    given = {
        k: getattr(args, k)
        for k in ("seed", "steps", "layers", "heads", "lr")
        if getattr(args, k) is not None
    }
    steps, layers, heads = given.get("steps", 1), given.get("layers", 1), given.get("heads", 1)
    if not 1 <= steps <= 100_000 or layers not in (1, 2, 3, 4) or not 1 <= heads <= 16:
        raise UsageError("--steps must be in 1..100000, --layers in 1..4, --heads in 1..16")
    task = (TranslateSettings, Translator) if args.task == "translate" else (TrainSettings, Trainer)
    settings = replace(task[0](), **given)
    try:
        settings.check()
    except ValueError as err:
        raise UsageError(str(err)) from None
    trainer = task[1](settings)
    trainer.run()
    out = trainer.save(Path(args.out).expanduser())
    record = trainer.record()
    return json.dumps({**(record.curves() if args.task == "letters" else record), "out": str(out)})


def _add_common(
    command: argparse.ArgumentParser, formats: tuple[str, ...], engines=ENGINES, model_help: str | None = None
) -> None:
    command.add_argument(
        "--model",
        metavar="PATH_OR_ID",
        default="bundled",
        help=model_help
        or '"bundled" (default, offline all-MiniLM-L6-v2), a Hub id, or a folder (/..., ./..., ~/...)',
    )
    engine_help = " or ".join(engines) + " (default numpy)"
    command.add_argument("--engine", choices=engines, default="numpy", help=engine_help)
    command.add_argument(
        "--format", choices=formats, default="json", help=f"{', '.join(formats)} (default json)"
    )
    command.add_argument("--out", metavar="FILE", help="write here instead of standard output")


def load_engine(engine: str, model: str):
    """The loaded engine; both raise core.models.errors.ModelError subclasses with messages for the user."""
    if engine == "numpy":
        from core.models.architectures import load_engine as load_numpy_engine

        return load_numpy_engine(model)
    # transformers draws a progress bar on stderr while loading; the CLI keeps stderr for errors
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from core.models.architectures import load_torch_engine  # torch is imported only when it loads

    return load_torch_engine(model)


def attend(engine: str, model: str, text: str, pair: str | None):
    from core.models.bert import check_text

    check_text(text, "TEXT")
    if pair is not None:
        check_text(pair, "the --pair text")
    if is_translator(model):  # its encoder's self-attention
        if pair is not None:
            raise UsageError("--pair joins two sentences as BERT does; the translator reads one sentence")
        return encoder_attention(text, model, engine)
    loaded = load_engine(engine, model)
    if _is_decoder(loaded):
        if pair is not None:
            raise UsageError("--pair joins two sentences as BERT does; a decoder reads one text")
        return loaded.run(text)
    return loaded.run(text, pair)


def _is_decoder(engine) -> bool:
    from core.models.architectures import is_decoder

    return is_decoder(engine)


def _behaviour(args) -> tuple[str, object]:
    """(what to write, the result) for ablate, attribute and fill."""
    from core.export import ablation_csv, ablation_json, attribution_csv, attribution_json
    from core.measures.ablation import head_effects
    from core.measures.attribution import attribution
    from core.models.bert import check_text

    check_text(args.text, "TEXT")
    if args.command == "fill" and not 1 <= args.top <= 100:
        raise UsageError(f"--top must be in 1..100, got {args.top}")
    engine = load_engine(args.engine, args.model)
    if args.command == "fill" and _is_decoder(engine):
        raise UsageError("fill needs a BERT's masked-LM head; a decoder predicts the next word: nextword")
    result = engine.run(args.text)
    if args.command == "fill":
        from core.export import fill_json
        from core.models.masked_lm import fill_masks

        fills = fill_masks(engine, result, args.top)
        if not fills:
            print("note: the text has no [MASK] token", file=sys.stderr)
        return fill_json(result, fills), result
    if args.command == "ablate":
        effects = head_effects(engine, result)
        return (ablation_json if args.format == "json" else ablation_csv)(result, effects), result
    found = attribution(engine, result)
    return (attribution_json if args.format == "json" else attribution_csv)(result, found), result


def _decoder(args) -> tuple[str, None]:
    """(what to write, no result) for nextword, generate and induction."""
    from core import export
    from core.measures.induction import induction
    from core.models.bert import check_text

    if args.command in ("nextword", "generate"):
        check_text(args.text, "TEXT")
    for flag, value, lo, hi in (
        ("--top", getattr(args, "top", 5), 1, 100),
        ("--tokens", getattr(args, "tokens", 1), 1, 1024),
    ):
        if not lo <= value <= hi:
            raise UsageError(f"{flag} must be in {lo}..{hi}, got {value}")
    if args.command == "generate" and (problem := sampling_usage_problem(args)) is not None:
        raise UsageError(problem)
    engine = load_engine("numpy", args.model)
    if not _is_decoder(engine):
        raise UsageError(
            f"{args.command} needs a decoder such as gpt2 (--model gpt2); {engine.name} is a BERT"
        )
    if args.command == "nextword":
        prompt = [engine.decode(i) for i in engine.encode(args.text).ids]
        return export.nextword_json(prompt, engine.next_tokens(args.text, args.top)), None
    if args.command == "generate":
        found = engine.generate(args.text, args.tokens, **sampling_options(args))
        return export.generate_json(found), None
    if args.command == "choose":
        from core.measures.choice import choose

        return export.choose_json(*choose(engine, check_text(args.prefix, "PREFIX"), args.options)), None
    return export.induction_json(induction(engine, args.length, args.seed)), None


def write_output(data: str | bytes, out: str | None) -> None:
    if out is not None:
        path = Path(out).expanduser()
        path.write_bytes(data) if isinstance(data, bytes) else path.write_text(data, encoding="utf-8")
        return
    if isinstance(data, bytes):
        if sys.stdout.isatty():
            raise UsageError("npz output is binary: give --out FILE (or redirect standard output)")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(data)
        if not data.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()


def _one_line(err: BaseException) -> str:
    return (" ".join(str(err).split()) or type(err).__name__)[:500]


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError(
                "choose a command: attend, ablate, attribute, fill, nextword, generate, induction, choose, "
                "translate, patch, circuit, train or prepare"
            )
        result = None
        if args.command == "attend":
            result = attend(args.engine, args.model, args.text, args.pair)
            data = {"json": to_json, "csv": to_csv, "npz": to_npz}[args.format](result)
        elif args.command in ("train", "prepare"):
            data = _train(args) if args.command == "train" else prepare_command(args)
        elif args.command in ("translate", "patch"):
            data = translate_json(args.text, args.model) if args.command == "translate" else patch_json(args)
        elif args.command == "circuit":  # python -m core circuit --model M --task ioi (docs/circuits.md)
            data = circuit_json(args)
        elif args.command in ("nextword", "generate", "induction", "choose"):
            data, result = _decoder(args)
        else:
            data, result = _behaviour(args)
        write_output(data, None if args.command == "train" else args.out)  # train's --out is its folder
        if result is not None and result.truncated:
            print(f"note: the text was cut to the model's {result.n_tokens} tokens", file=sys.stderr)
        return 0
    except UsageError as err:
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `python -m core attend ... | head`: stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as err:  # the CLI's contract: any failure is one line on stderr
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
