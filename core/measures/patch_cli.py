"""The command line's `patch`: activation patching across a minimal pair (core/measures/patching.py),
as JSON:

    python -m core patch CLEAN CORRUPT [--model M] [--options A B] [--what heads|residual]
        [--position N] [--focus WORD] [--layer N] [--format json] [--out FILE]
    -> {"model", "metric", "tokens_clean", "tokens_corrupt", "metric_clean", "metric_corrupt",
        "restored": [L][H] (heads) or [L][T] (residual)}

The base run is CLEAN; each cell copies one component from the CORRUPT run: a head's output (its
slice of the input to W^O) at every position, or only at --position N (0-indexed token), or the
hidden state entering a layer at one position (--what residual). restored = (m_patched - m_clean) /
(m_corrupt - m_clean). m, "metric" in the JSON:
- a decoder with --options A B: log p(A) - log p(B) for the next token after the text, each option
  read by its first token; without options, the total variation of the next-token distribution
  from the clean run's (so metric_clean is 0);
- a BERT: the pronoun test, cos(focus, A) - cos(focus, B) after --layer N (default the last; 0 is
  the embeddings), --focus naming the word whose vector is read (e.g. it).
The two sentences must tokenize to the same length; errors are one line on stderr (core/__main__.py).
"""

from __future__ import annotations

import json

from core.export import JSON_DECIMALS

__all__ = ["add_patch_command", "patch_json"]


def add_patch_command(commands) -> None:
    command = commands.add_parser(
        "patch",
        help="which heads or positions carry a minimal pair's difference to the answer (activation patching)",
        description="Run CLEAN; patch each component from CORRUPT into it alone; write the fraction of "
        "the difference in the answer it restores [layer][head] or [layer][position].",
    )
    command.add_argument("clean", metavar="CLEAN", help="the base sentence")
    command.add_argument("corrupt", metavar="CORRUPT", help="the same sentence with one word changed")
    command.add_argument(
        "--model", default="bundled", help="bundled (a BERT), letters, smollm2, a Hub id or a folder"
    )
    command.add_argument(
        "--options",
        nargs=2,
        metavar=("A", "B"),
        help='a decoder: two next words (" trophy" " suitcase"); '
        "a BERT: the target and rival words of the pronoun test",
    )
    command.add_argument("--what", choices=("heads", "residual"), default="heads", help="(default heads)")
    command.add_argument("--position", type=int, metavar="N", help="heads: patch only token N (0-indexed)")
    command.add_argument("--focus", metavar="WORD", help="a BERT: the word whose vector is read (e.g. it)")
    command.add_argument(
        "--layer", type=int, metavar="N", help="a BERT: after which layer (default the last)"
    )
    command.add_argument("--format", choices=("json",), default="json", help="json (default json)")
    command.add_argument("--out", metavar="FILE", help="write here instead of standard output")


def _metric(engine, args, clean_ids):
    """(m, what m is in words) for the engine and the flags; ValueError for flags that do not fit."""
    from core.measures.patching import next_token_shift, option_metric, pronoun_metric
    from core.models.architectures import is_decoder

    if is_decoder(engine):
        if args.focus is not None or args.layer is not None:
            raise ValueError(
                "--focus and --layer choose a BERT's pronoun test; a decoder is scored on its next token"
            )
        if args.options:
            metric, _ = option_metric(engine, args.options)
            return (
                metric,
                f"log p({args.options[0]!r}) - log p({args.options[1]!r}), first tokens, next token",
            )
        return next_token_shift(
            engine, engine.hidden_states(clean_ids)
        ), "total variation from the clean next-token distribution"
    if args.focus is None or not args.options:
        raise ValueError("a BERT is scored by the pronoun test: give --focus WORD and --options TARGET RIVAL")
    layer = engine.n_layers if args.layer is None else args.layer
    metric = pronoun_metric(engine.run(args.clean), args.focus, *args.options, layer)
    return (
        metric,
        f"cos({args.focus}, {args.options[0]}) - cos({args.focus}, {args.options[1]}) after layer {layer}",
    )


def patch_json(args) -> str:
    """The patch command's JSON for parsed arguments (core/__main__.py's). The measure and the engines
    are imported here, when the command runs, so that `python -m core` starts as fast as before."""
    from core.measures.patching import encode_pair, patch_heads, patch_residual
    from core.models.architectures import is_decoder, load_engine
    from core.models.bert import check_text

    check_text(args.clean, "CLEAN")
    check_text(args.corrupt, "CORRUPT")
    if args.options and not all(option.strip() for option in args.options):
        raise ValueError("--options: an option is empty; type a word (for a decoder, with its leading space)")
    if args.what == "residual" and args.position is not None:
        raise ValueError("--position chooses where heads are patched; the residual grid has every position")
    engine = load_engine(args.model)
    clean, corrupt = encode_pair(engine, args.clean, args.corrupt)
    metric, described = _metric(engine, args, clean.ids)
    if args.what == "heads":
        found = patch_heads(engine, clean.ids, corrupt.ids, metric, args.position)
    else:
        found = patch_residual(engine, clean.ids, corrupt.ids, metric)
    tokens = (
        ([engine.decode(i) for i in e.ids] for e in (clean, corrupt))
        if is_decoder(engine)
        else (list(e.tokens) for e in (clean, corrupt))
    )
    tokens_clean, tokens_corrupt = tokens
    return json.dumps(
        {
            "model": engine.name,
            "metric": described,
            "tokens_clean": tokens_clean,
            "tokens_corrupt": tokens_corrupt,
            "metric_clean": round(found.metric_clean, JSON_DECIMALS),
            "metric_corrupt": round(found.metric_corrupt, JSON_DECIMALS),
            "restored": found.restored.round(JSON_DECIMALS).tolist(),
        }
    )
