"""Cleaning text that comes from a user (a text box, a link, the command line): one helper for
every page and tokenizer.

A str may hold lone surrogates (U+D800–U+DFFF), which UTF-8 cannot encode: such text makes
Streamlit fail when it sends a page back to the browser, and tokenizers refuse it, so they become
U+FFFD on the way in. A browser enforces a text box's max_chars, but any client can send more over
the websocket or in a link, so the length is capped here as well.
"""

from __future__ import annotations

import re

_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_input(text: object, max_chars: int | None = None) -> tuple[str, bool]:
    """Any object -> (a str safe to process and to send back, True if it was cut).

    None becomes "", anything else its str(); lone surrogates become U+FFFD; at most `max_chars`
    characters are kept (None: all).
    """
    text = "" if text is None else str(text)
    text = _SURROGATES.sub("\ufffd", text)
    if max_chars is None or len(text) <= max_chars:
        return text, False
    return text[:max_chars], True
