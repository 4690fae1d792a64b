"""URL <-> session-state sync and input cleaning, one helper for every page, so a copied link
reproduces a view.

A page describes its links once, as a `PageLinks` table of `UrlParam`s (query parameter, session
key, default, parser), and calls, on every run:

    links = PageLinks("explore", (int_param("layer", "explore_layer", 0, 0, 999), ...), keep=(...))
    notes = links.read_url()     # the session's first run only: the link's values into session state
    links.restore()              # widget state Streamlit dropped while another page was shown
    ...draw the page...
    links.write_url(model=key)   # session state back into the link (defaults left out)
    links.save()                 # in a `finally`: a copy of the widgets' state for the next visit

URL values are user input: every parser validates and falls back to the default, returning a
message to show instead of raising. Text is cleaned by core.text.clean_input (re-exported here).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import streamlit as st

from core.text import clean_input

Parsed = tuple[object, str | None]  # (value, a note for the page when the link's value was not used)


# ---- cleaning text held by widgets ----------------------------------------------------------------


def clean_widget_text(key: str, max_chars: int, what: str = "text") -> str | None:
    """Clean the text held by the widget `key` in session state, before the widget is drawn this run.
    Returns a message for the page when the text had to be cut, else None."""
    if key not in st.session_state:
        return None
    raw = st.session_state[key]
    text, cut = clean_input(raw, max_chars)
    if text != raw:
        st.session_state[key] = text
    return f"The {what} was cut to its first {max_chars:,} characters." if cut else None


# ---- parsing one URL value ------------------------------------------------------------------------


def parse_int(name: str, raw: str | None, default: int | None, lo: int, hi: int) -> Parsed:
    """`raw` as an integer within [lo, hi], or `default` with a message why."""
    if raw is None or raw == "":
        return default, None
    instead = f"showing {default} instead" if default is not None and lo <= default <= hi else "ignoring it"
    try:
        value = int(raw)
    except ValueError:  # also for numbers of more than 4,300 digits
        return default, f"The link's `{name}` value is not a whole number; {instead}."
    if not lo <= value <= hi:
        shown = value if abs(value) < 10**12 else "(a huge number)"
        return default, f"The link's `{name}` value {shown} is outside {lo}–{hi}; {instead}."
    return value, None


def parse_clamped_int(name: str, raw: str | None, default: int, lo: int, hi: int) -> Parsed:
    """`raw` as an integer, moved into [lo, hi] when outside it (the nearest valid value), with a
    message saying so; `default` with a message when it is not a whole number."""
    if raw is None or raw == "":
        return default, None
    try:
        value = int(raw)
    except ValueError:
        return default, f"The link's `{name}` value is not a whole number; using {default}."
    if lo <= value <= hi:
        return value, None
    nearest = min(max(value, lo), hi)
    shown = value if abs(value) < 10**12 else "(a huge number)"
    side = f"below {lo}" if value < lo else f"above {hi}"
    return nearest, f"The link's `{name}` value {shown} is {side}; using {nearest}, the nearest valid value."


def parse_choice(name: str, raw: str | None, choices: Sequence[str], default: str) -> Parsed:
    """`raw` if it is one of `choices`, else `default` with a message why."""
    if raw is None or raw == "":
        return default, None
    if raw in choices:
        return raw, None
    return default, f"The link asks for an unknown `{name}`; showing “{default}” instead."


# The readers of the current URL, for pages that read a parameter outside a table.


def read_int_param(name: str, default: int, lo: int, hi: int) -> tuple[int, str | None]:
    """The integer query parameter `name` within [lo, hi], or `default` with a message why."""
    return parse_int(name, st.query_params.get(name), default, lo, hi)  # type: ignore[return-value]


def read_choice_param(name: str, choices: Sequence[str], default: str) -> tuple[str, str | None]:
    """The query parameter `name` if it is one of `choices`, else `default` with a message why."""
    return parse_choice(name, st.query_params.get(name), choices, default)  # type: ignore[return-value]


def read_text_param(name: str, default: str, max_chars: int) -> str:
    """Free text from the URL, capped in length (the page shows it as plain text only)."""
    raw = st.query_params.get(name)
    return default if raw is None else clean_input(raw, max_chars)[0]


def write_params(**values: object) -> None:
    """Mirror the current view into the URL; None removes a parameter. Writes only on change,
    since every write to st.query_params is sent to the browser."""
    for name, value in values.items():
        if value is None:
            if name in st.query_params:
                del st.query_params[name]
            continue
        text = str(value)
        if st.query_params.get(name) != text:
            st.query_params[name] = text


# ---- a page's links as a table --------------------------------------------------------------------


@dataclass(frozen=True)
class UrlParam:
    """One query parameter of a page's links and the session-state key that holds its value."""

    name: str  # in the URL
    key: str  # in st.session_state
    default: object  # when the link has none; left out of links unless keep_default
    parse: Callable[[str], Parsed]  # the link's text -> (value, note); a bad value gives the default
    show: Callable[[object], str] = str  # the value -> the link's text
    keep_default: bool = False  # links carry the default too


def int_param(
    name: str, key: str, default: int | None, lo: int, hi: int, *, keep_default: bool = False
) -> UrlParam:
    """An integer in [lo, hi]; a default of None means "not set" (and is never written)."""
    return UrlParam(
        name, key, default, lambda raw: parse_int(name, raw, default, lo, hi), keep_default=keep_default
    )


def clamped_int_param(name: str, key: str, default: int, lo: int, hi: int) -> UrlParam:
    """An integer in [lo, hi]; a value outside becomes the nearest one in it (parse_clamped_int)."""
    return UrlParam(name, key, default, lambda raw: parse_clamped_int(name, raw, default, lo, hi))


def position_param(name: str, key: str) -> UrlParam:
    """A layer or head (0-indexed in links): any whole number is kept here, and the page checks it
    against the model once the model is known (position_note), so the message names the model's
    own range."""

    def parse(raw: str) -> Parsed:
        try:
            return int(raw), None
        except ValueError:  # also for numbers of more than 4,300 digits
            return 0, f"The link's `{name}` value is not a whole number; showing {name} 1."

    return UrlParam(name, key, 0, parse, keep_default=True)


def position_note(
    name: str, value: int, size: int, what: str, first_shown: int = 1
) -> tuple[int, str | None]:
    """A link's layer or head against the model's `size` of them: (the value, or the nearest one
    the model has, and a note naming the model's range when it had to move). On screen they are
    numbered from `first_shown` (1; 0 where layer 0 is the embeddings)."""
    if 0 <= value < size:
        return value, None
    nearest = 0 if value < 0 else size - 1
    shown = value if abs(value) < 10**12 else "(a huge number)"
    last = first_shown + size - 1
    return nearest, (
        f"The link's `{name}` value {shown} is outside this model's {what}: {what} {first_shown}–{last} "
        f"on screen, 0–{size - 1} in links. Showing {name} {nearest + first_shown}, the nearest."
    )


def choice_param(
    name: str, key: str, default: str, choices: Sequence[str], *, keep_default: bool = False
) -> UrlParam:
    """One of `choices`, kept as the string the link carries."""
    return UrlParam(
        name, key, default, lambda raw: parse_choice(name, raw, choices, default), keep_default=keep_default
    )


def flag_param(name: str, key: str, default: bool = False, *, strict: bool = False) -> UrlParam:
    """A bool, "1" or "0" in links. Strict: any other value is reported and gives the default;
    otherwise any value but "1" means off."""

    def parse(raw: str) -> Parsed:
        if raw in ("0", "1"):
            return raw == "1", None
        if strict and raw != "":
            return default, parse_choice(name, raw, ("0", "1"), "1" if default else "0")[1]
        return (default if strict else False), None

    return UrlParam(name, key, default, parse, show=lambda on: "1" if on else "0")


def text_param(
    name: str, key: str, default: str, max_chars: int, clean: Callable[[str], str] | None = None
) -> UrlParam:
    """Free text, cleaned (core.text.clean_input, then `clean` if given) and capped in length."""

    def parse(raw: str) -> Parsed:
        text = clean_input(raw, max_chars)[0]
        return (clean(text) if clean else text), None

    return UrlParam(name, key, default, parse)


@dataclass(frozen=True)
class PageLinks:
    """A page's query parameters and the widget state kept across visits to other pages.

    The link is read once per session (the first run), so the user's later choices are not undone
    by the URL; it is written on every run, so it always describes what is shown.
    """

    page: str  # the prefix of the page's session keys: "explore", "learn"
    params: tuple[UrlParam, ...]
    keep: tuple[str, ...] = ()  # widget keys Streamlit drops when a run does not draw the widget

    @property
    def _read_flag(self) -> str:
        return f"{self.page}_url_read"

    def url_was_read(self) -> bool:
        return bool(st.session_state.get(self._read_flag))

    def read_url(self) -> list[str]:
        """On the session's first run, set every parameter's session key from the link (or its
        default) and return the notes about values that could not be used. Later runs: []."""
        ss = st.session_state
        if ss.get(self._read_flag):
            return []
        ss[self._read_flag] = True
        notes = []
        for param in self.params:
            raw = st.query_params.get(param.name)
            value, note = (param.default, None) if raw is None else param.parse(raw)
            ss[param.key] = value
            if note:
                notes.append(note)
        return notes

    def restore(self, defaults: Mapping[str, object] | None = None) -> None:
        """Bring back the widget state `save` kept, for keys Streamlit dropped while the widgets were
        not drawn (another page, a run that stopped early); keys never saved get `defaults`."""
        ss = st.session_state
        saved = ss.get(f"{self.page}_saved", {})
        defaults = defaults or {}
        for key in (*self.keep, *defaults):
            if key not in ss and (key in saved or key in defaults):
                ss[key] = saved[key] if key in saved else defaults[key]

    def save(self) -> None:
        """Keep a copy of the `keep` widgets' state under another key (call it at the end of a run)."""
        ss = st.session_state
        ss[f"{self.page}_saved"] = {key: ss[key] for key in self.keep if key in ss}

    def write_url(self, **overrides: object) -> None:
        """Mirror session state into the link. Each parameter's value comes from its session key, or
        from `overrides` (name -> value) when the page knows better (e.g. the model actually shown);
        None, or the default (unless keep_default), leaves the parameter out."""
        values: dict[str, object] = {}
        for param in self.params:
            value = overrides[param.name] if param.name in overrides else st.session_state.get(param.key)
            omit = value is None or (value == param.default and not param.keep_default)
            values[param.name] = None if omit else param.show(value)
        values.update({name: value for name, value in overrides.items() if name not in values})
        write_params(**values)


# ---- widgets bound to a canonical value -------------------------------------------------------------
# A widget whose options depend on the data (a slider over this model's layers, a picker over this
# sentence's tokens) gets a key that names those options (`signature`), so Streamlit never keeps a
# value the new options lack; its first value is seeded from the page's canonical session key.


def signature(*parts: object) -> str:
    """A short stable name for what a widget's options depend on."""
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()[:10]


def bound_key(page: str, name: str, sig: object, value: object) -> str:
    """The key of `page`'s widget showing canonical state `name` whose options depend on `sig`,
    seeded with `value` the first time."""
    key = f"{page}_w_{name}_{sig}"
    if key not in st.session_state:
        st.session_state[key] = value
    return key


def reset_widgets(page: str, name: str) -> None:
    """Forget `page`'s bound widgets for `name`, so they are seeded again from the canonical value."""
    prefix = f"{page}_w_{name}_"
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[key]
