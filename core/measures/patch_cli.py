"""The command line's `patch`: activation patching across a minimal pair (core/measures/patching.py),
as JSON:

    python -m core patch CLEAN CORRUPT [--model M] [--options A B] [--what heads|residual|paths]
        [--position N] [--focus WORD] [--layer N] [--to L.H,... --via q|k|v] [--format json] [--out FILE]
    -> {"model", "metric", "tokens_clean", "tokens_corrupt", "metric_clean", "metric_corrupt",
        "restored": [L][H] (heads, paths) or [L][T] (residual)}, and for paths "to": [[l, h]], "via"

The base run is CLEAN; each cell copies one component from the CORRUPT run: a head's output (its
slice of the input to W^O) at every position, or only at --position N (0-indexed token), or the
hidden state entering a layer at one position (--what residual), or a head's output along chosen paths
only (--what paths, path patching, core/measures/paths.py: to the logits, every later head held at
its clean output; with --to L.H,... --via q|k|v, to those receivers' queries, keys or values; null
for a head that cannot reach them). restored = (m_patched - m_clean) / (m_corrupt - m_clean). m,
"metric" in the JSON:
- a decoder with --options A B: log p(A) - log p(B) for the next token after the text, each option
  read by its first token; without options, the total variation of the next-token distribution
  from the clean run's (so metric_clean is 0);
- a BERT: the pronoun test, cos(focus, A) - cos(focus, B) after --layer N (default the last; 0 is
  the embeddings), --focus naming the word whose vector is read (e.g. it).
The two sentences must tokenize to the same length; errors are one line on stderr (core/__main__.py).
"""

from __future__ import annotations

import json

import numpy as np

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
    command.add_argument(
        "--what", choices=("heads", "residual", "paths"), default="heads", help="(default heads)"
    )
    command.add_argument(
        "--to", metavar="L.H,...", help="paths: the receiver heads, layer.head, 0-indexed (e.g. 9.6,9.9)"
    )
    command.add_argument("--via", choices=("q", "k", "v"), help="paths: what the receivers read")
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


def _receivers(args) -> list[tuple[int, int]]:
    """--to's heads as (layer, head) pairs (not yet checked against a model); ValueError for flags
    that do not go together or a head not written layer.head."""
    if (args.to is not None or args.via is not None) and args.what != "paths":
        raise ValueError("--to and --via choose the receivers of path patching: add --what paths")
    if (args.to is None) != (args.via is None):
        raise ValueError(
            "--to and --via go together: the receiver heads (--to 9.6,9.9) and what they read (--via q)"
        )
    pairs = []
    for text in args.to.split(",") if args.to is not None else ():
        layer, dot, head = text.strip().partition(".")
        if not (dot and layer.isdigit() and head.isdigit()):
            raise ValueError(
                f"--to takes heads as layer.head, 0-indexed, separated by commas (e.g. 9.6,9.9); got {text!r}"
            )
        pairs.append((int(layer), int(head)))
    return pairs


def _paths(engine, args, clean_ids, corrupt_ids, receivers):
    """(PathPatching, what m is in words) for --what paths on a decoder with --options."""
    from core.measures.patching import option_metric
    from core.measures.paths import PathItem, path_patch
    from core.models.architectures import is_decoder

    if not is_decoder(engine):
        raise ValueError(
            f"path patching runs on a decoder (GPT-2, the Llama family): {engine.name} is a BERT"
        )
    if not args.options or args.focus is not None or args.layer is not None:
        raise ValueError(
            "path patching's metric is log p(A) - log p(B) of the next token: give --options A B"
        )
    _, (answer, rival) = option_metric(engine, args.options)
    item = PathItem(list(clean_ids), list(corrupt_ids), answer, rival)
    found = path_patch(engine, [item], to=receivers, via=args.via)
    a, b = args.options
    return found, f"log p({a!r}) - log p({b!r}), first tokens, next token, along the paths"


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
    if args.what != "heads" and args.position is not None:
        raise ValueError(
            f"--position chooses where heads are patched; the {args.what} grid has every position"
        )
    receivers = _receivers(args)
    engine = load_engine(args.model)
    clean, corrupt = encode_pair(engine, args.clean, args.corrupt)
    if args.what == "paths":
        found, described = _paths(engine, args, clean.ids, corrupt.ids, receivers)
    else:
        metric, described = _metric(engine, args, clean.ids)
    if args.what == "heads":
        found = patch_heads(engine, clean.ids, corrupt.ids, metric, args.position)
    elif args.what == "residual":
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
            "restored": [
                [None if np.isnan(v) else v for v in row]
                for row in found.restored.round(JSON_DECIMALS).tolist()
            ],
        }
        | ({"to": [list(pair) for pair in receivers], "via": args.via} if args.what == "paths" else {})
    )
