"""Models trained on the train page, saved for the explore page: where they go, and which folders
count as one.

Each session saves its model in TRAINED_ROOT/<random id>/... (dashboard/views/train/session.py).
Hosted mode loads no local folder (dashboard/hosted.py), with one exception: a folder inside
TRAINED_ROOT that holds a model, that is, a model this server trained. Its name carries a random id
(uuid4), so only the session that trained it, or someone it shared the link with, can name it, and
it is a few hundred kilobytes, so loading it costs the demo nothing it cannot afford.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from core.models.shipped import SHIPPED_KEY
from core.translate.engine import TRANSLATOR_KEY, is_translator
from dashboard.content.explore import LETTERS_BECAME
from dashboard.widgets import md

TRAINED_ROOT = Path(tempfile.gettempdir()) / "attention-explorer-trained"


def is_trained_folder(key: object) -> bool:
    """Whether `key` (a model as a link or the picker names it) is a folder this server's train page
    saved a model in."""
    if not isinstance(key, str) or not key.startswith("/") or ".." in key or len(key) > 500:
        return False
    try:
        path = Path(key).resolve()
        return path.is_relative_to(TRAINED_ROOT.resolve()) and (path / "model.safetensors").is_file()
    except (OSError, ValueError, RuntimeError):
        return False


def is_translator_here(model: str) -> bool:
    """The shipped translator, or one this server's train page saved (its second task)."""
    return model == TRANSLATOR_KEY or (is_trained_folder(model) and is_translator(model))


def reads_letters(model: str) -> bool:
    """The shipped letter GPT-2, or a letter model this server's train page made: the pages offer them
    runs of letters, not English, before the model is loaded."""
    return model == SHIPPED_KEY or (is_trained_folder(model) and not is_translator(model))


LETTERS_SHOWN = 24  # letters quoted when a text was turned into letters


def letters_became(tokenizer, text: str) -> str | None:
    """For a model that reads letters only: one line on what `text` became when it held anything but
    letters (the tokenizer's own normalizer says what it keeps); None when nothing was dropped."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)  # a transformers tokenizer's own
    letters = backend.normalizer.normalize_str(text) if backend.normalizer is not None else text
    if letters == text.strip().lower():
        return None
    shown = letters if len(letters) <= LETTERS_SHOWN else letters[:LETTERS_SHOWN] + "…"
    return LETTERS_BECAME.format(n=len(letters), shown=f"“{md(shown)}”" if letters else "nothing")
