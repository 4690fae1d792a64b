"""The command line's `translate`: a typed English sentence through a translator, greedy, with every
head's cross-attention, as JSON:

    python -m core translate TEXT [--model translator|FOLDER] [--format json] [--out FILE]
    -> {"source_tokens", "target_tokens", "cross_attentions": [L][H][T_target][T_source]}

weights rounded as `attend`'s. Row t of a head's matrix is the step that wrote target token t.

`attend --model translator` gives the encoder's self-attention on TEXT, as `attend` gives any model's
(`encoder_attention`); --engine torch reads it from transformers' BART on the same files.
"""

from __future__ import annotations

import json
from dataclasses import replace

from core.export import JSON_DECIMALS
from core.models.result import AttentionResult
from core.translate.engine import TRANSLATOR_KEY, TranslatorEngine, translator_dir

__all__ = ["add_translate_command", "encoder_attention", "translate_json"]


def add_translate_command(commands) -> None:
    command = commands.add_parser(
        "translate",
        help="an English sentence through a translator, with its cross-attention",
        description="Translate TEXT greedily; write both sides' tokens and the cross-attention [L][H][T][S].",
    )
    command.add_argument("text", metavar="TEXT", help="the English sentence")
    command.add_argument(
        "--model", default=TRANSLATOR_KEY, help=f"{TRANSLATOR_KEY} (the one that ships) or a folder"
    )
    command.add_argument("--format", choices=("json",), default="json", help="json (default json)")
    command.add_argument("--out", metavar="FILE", help="write here instead of stdout")


def translate_json(text: str, model: str) -> str:
    done = TranslatorEngine(translator_dir(model)).translate(text)
    return json.dumps(
        {
            "source_tokens": done.source_tokens,
            "target_tokens": done.target_tokens,
            "cross_attentions": done.cross.astype(float).round(JSON_DECIMALS).tolist(),
        }
    )


def encoder_attention(text: str, model: str, engine: str) -> AttentionResult:
    """The translator's encoder self-attention on `text` (engine "numpy", or "torch": transformers)."""
    found = TranslatorEngine(translator_dir(model))
    result = found.encoder_result(text, model)
    if engine != "torch":
        return result
    from core.translate.pretrained import encoder_attention_torch

    attentions, hidden = encoder_attention_torch(translator_dir(model), result.input_ids)
    return replace(result, attentions=attentions, hidden_states=hidden, engine="torch")
