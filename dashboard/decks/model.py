"""Decks: a lecture as an ordered list of slides. A slide is one view of the product (a page and its
link parameters), a short title, and a few lines of the teacher's own text shown with it.

One format for every deck: the built-in ones (dashboard/content/decks/NAME.json), a teacher's saved
file, and a shared link, which carries the same JSON compressed in `?deck=` (`LINK_PREFIX` tells it
from a built-in name). Nothing is stored on the server. A file or a link is user input:
`parse_deck` keeps every slide it can use and says, in one message, what it left out or cut; the
slide's numbers are never stored, each page computes them live from the parameters.

No streamlit here: the bar and the editor (dashboard/decks/bar.py, dashboard/views/deck/) draw it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from core.text import clean_input

MAX_SLIDES = 40
MAX_TITLE = 80  # characters of a deck's or a slide's title
MAX_TEXT = 400  # characters of a slide's text: a few lines under the bar, not a page
MAX_LINES = 4
MAX_PARAMS = 24  # link parameters of one slide
MAX_VALUE = 2_000  # characters of one parameter's value (a sentence; the pages cap their own)
MAX_JSON_BYTES = 200_000  # a deck file, or a link's deck once decompressed
MAX_LINK_CHARS = 8_000  # the `deck` value of a shared link: what browsers and proxies carry safely
LINK_PREFIX = "1."  # a shared deck's `deck` value: "1." + base64url(zlib(JSON)); names start with a letter
RESERVED = ("deck", "slide", "present")  # the deck's own link parameters, never a slide's
BUILTIN_DIR = Path(__file__).resolve().parents[1] / "content" / "decks"
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_PARAM = re.compile(r"^[a-z][a-z0-9_]{0,23}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # every control character but \n
_SHOWN_PROBLEMS = 4


@dataclass(frozen=True)
class Slide:
    page: str  # a page's URL path: "learn", "explore", "compare", "atlas", "cost"
    params: tuple[tuple[str, str], ...]  # the view's link parameters, in order
    title: str
    text: str = ""

    def query(self) -> dict[str, str]:
        return dict(self.params)

    def as_dict(self) -> dict:
        return {"page": self.page, "params": self.query(), "title": self.title, "text": self.text}


@dataclass(frozen=True)
class Deck:
    title: str
    slides: tuple[Slide, ...]
    needs: tuple[str, ...] = ()  # what a built-in deck needs besides its pages ("decoder")

    def as_dict(self) -> dict:
        return {"title": self.title, "slides": [s.as_dict() for s in self.slides]}


@dataclass
class _Problems:
    """What parsing left out or cut, gathered into one message."""

    found: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.found.append(text)

    def message(self) -> str | None:
        if not self.found:
            return None
        shown = "; ".join(self.found[:_SHOWN_PROBLEMS])
        more = len(self.found) - _SHOWN_PROBLEMS
        tail = f"; and {more} more" if more > 0 else ""
        return f"Part of this deck could not be used as it was, and the rest works: {shown}{tail}."


def quoted(value: object, limit: int = 30) -> str:
    """A short, printable rendering of a user's value for a message (which md() escapes)."""
    text = _CONTROL.sub("", clean_input(value, 200)[0]).replace("\n", " ")
    return f"“{text[:limit]}…”" if len(text) > limit else f"“{text}”"


def clean_text(raw: object, limit: int, lines: int = 1) -> tuple[str, bool]:
    """Plain text for a title (one line) or a slide's text (up to `lines` lines): control characters
    removed, white space trimmed, at most `limit` characters. Returns (text, cut)."""
    text = clean_input(raw if isinstance(raw, str) else "", None)[0]
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    rows = [row.strip() for row in text.split("\n")] if lines > 1 else [text.replace("\n", " ").strip()]
    rows = [row for row in rows if row]
    kept = "\n".join(rows[:lines])
    cut = len(rows) > lines or len(kept) > limit
    return kept[:limit].strip(), cut


def _params(raw: object, where: str, problems: _Problems) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        problems.add(f"{where}'s parameters are not a list of names and values (left out)")
        return ()
    kept: list[tuple[str, str]] = []
    for name, value in raw.items():
        if name in RESERVED:
            continue  # a deck inside a slide: the deck's own parameters come from the deck
        if not isinstance(name, str) or not _PARAM.match(name):
            problems.add(f"{where} has a parameter named {quoted(name)}, which no page reads (left out)")
        elif isinstance(value, bool) or not isinstance(value, str | int | float):
            problems.add(f"{where}'s parameter `{name}` is not a single value (left out)")
        elif len(kept) == MAX_PARAMS:
            problems.add(f"{where} has more than {MAX_PARAMS} parameters (the rest left out)")
            break
        else:
            text, cut = clean_input(str(value), MAX_VALUE)
            if cut:
                problems.add(f"{where}'s parameter `{name}` was cut to {MAX_VALUE:,} characters")
            kept.append((name, text))
    return tuple(kept)


def _slide(raw: object, number: int, pages: Collection[str], problems: _Problems) -> Slide | None:
    where = f"slide {number}"
    if not isinstance(raw, Mapping):
        problems.add(f"{where} is not a slide (left out)")
        return None
    page = raw.get("page")
    if not isinstance(page, str) or page not in pages:
        problems.add(f"{where} names a page {quoted(page)} that this app does not have (left out)")
        return None
    title, cut_title = clean_text(raw.get("title"), MAX_TITLE)
    text, cut_text = clean_text(raw.get("text"), MAX_TEXT, MAX_LINES)
    if cut_title:
        problems.add(f"{where}'s title was cut to {MAX_TITLE} characters")
    if cut_text:
        problems.add(f"{where}'s text was cut to {MAX_LINES} lines of at most {MAX_TEXT} characters")
    return Slide(page, _params(raw.get("params"), where, problems), title or f"Slide {number}", text)


def parse_deck(data: object, pages: Collection[str]) -> tuple[Deck | None, str | None]:
    """A deck from decoded JSON, keeping only slides on `pages`. Returns (deck or None when no slide
    is left, one message about whatever was left out or cut, or None)."""
    problems = _Problems()
    if not isinstance(data, Mapping) or not isinstance(data.get("slides"), list):
        return None, "This is not a deck: a deck is a JSON object with a title and a list of slides."
    raw_slides = data["slides"]
    if len(raw_slides) > MAX_SLIDES:
        problems.add(
            f"it has {len(raw_slides):,} slides, past the {MAX_SLIDES} a deck holds (the rest left out)"
        )
    slides = [_slide(raw, i + 1, pages, problems) for i, raw in enumerate(raw_slides[:MAX_SLIDES])]
    title, cut = clean_text(data.get("title"), MAX_TITLE)
    if cut:
        problems.add(f"its title was cut to {MAX_TITLE} characters")
    needs = data.get("needs", [])
    needs = tuple(n for n in needs if isinstance(n, str)) if isinstance(needs, list) else ()
    kept = tuple(s for s in slides if s is not None)
    if not kept:
        found = problems.message()
        return None, "This deck has no slide this app can show." + (f" {found}" if found else "")
    return Deck(title or "Untitled deck", kept, needs), problems.message()


def deck_from_json(data: str | bytes, pages: Collection[str]) -> tuple[Deck | None, str | None]:
    """A deck from a file's or a link's JSON text (at most MAX_JSON_BYTES)."""
    if len(data) > MAX_JSON_BYTES:
        return None, f"This deck is {len(data):,} bytes, past the {MAX_JSON_BYTES:,} a deck may have."
    try:
        decoded = json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None, "This is not a deck file: it is not valid JSON (it may be cut or changed)."
    return parse_deck(decoded, pages)


def deck_to_json(deck: Deck) -> str:
    """The deck as the JSON a teacher saves (and a link carries)."""
    return json.dumps(deck.as_dict(), ensure_ascii=False, indent=1)


# ---- links -----------------------------------------------------------------------------------------


def encode_link(deck: Deck) -> str:
    """The `deck` value that carries the whole deck (may be longer than MAX_LINK_CHARS: check)."""
    compact = json.dumps(deck.as_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    packed = base64.urlsafe_b64encode(zlib.compress(compact, 9)).decode("ascii").rstrip("=")
    return LINK_PREFIX + packed


def decode_link(value: str, pages: Collection[str]) -> tuple[Deck | None, str | None]:
    """The deck a shared link's `deck` value carries, or None with the reason."""
    damaged = "This link's deck is damaged (cut or changed on the way); ask for the link again."
    if len(value) > MAX_LINK_CHARS + len(LINK_PREFIX):
        return (
            None,
            f"This link's deck is longer than the {MAX_LINK_CHARS:,} characters a deck link may have.",
        )
    body = value[len(LINK_PREFIX) :]
    try:
        packed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        unpacker = zlib.decompressobj()
        data = unpacker.decompress(packed, MAX_JSON_BYTES + 1)  # never more than this: no zip bomb
    except (ValueError, binascii.Error, zlib.error):
        return None, damaged
    if len(data) > MAX_JSON_BYTES:
        return None, f"This link's deck unpacks to more than the {MAX_JSON_BYTES:,} bytes a deck may have."
    if not unpacker.eof:
        return None, damaged
    return deck_from_json(data, pages)


# ---- the built-in decks ----------------------------------------------------------------------------


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.json") if _NAME.match(p.stem))


def builtin_deck(name: str, pages: Collection[str], have: Collection[str] = ()) -> Deck | None:
    """The built-in deck `name` when it can be given here: every slide's page exists and everything
    it needs is in `have` ("decoder": a decoder loads offline); otherwise None."""
    if name not in builtin_names():
        return None
    data = json.loads((BUILTIN_DIR / f"{name}.json").read_text(encoding="utf-8"))
    slides = data.get("slides", [])
    if any(s.get("page") not in pages for s in slides) or not set(data.get("needs", [])) <= set(have):
        return None
    deck, problem = parse_deck(data, pages)
    if problem:  # our own file: tests/dashboard/test_decks.py keeps every one clean
        raise ValueError(f"dashboard/content/decks/{name}.json: {problem}")
    return deck


def builtin_decks(pages: Collection[str], have: Collection[str] = ()) -> dict[str, Deck]:
    """Every built-in deck that can be given here, by name."""
    decks = {name: builtin_deck(name, pages, have) for name in builtin_names()}
    return {name: deck for name, deck in decks.items() if deck is not None}
