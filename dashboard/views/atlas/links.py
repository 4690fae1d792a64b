"""The atlas page's links: its query parameters as one dashboard.state.PageLinks table.

URL parameters: model, engine (dashboard.model_pick), text (the user's own sentence), on ("corpus"
or "sentence": what the numbers are measured on), stat (the grid shown: "role" or a statistic of
core.measures.atlas.ALL_STATS), roles (the role filter: comma-separated slugs such as "cls,prev").
A link with a text and no `on` opens on that sentence. Read on the session's first run; written on
every run.
"""

from __future__ import annotations

import streamlit as st

from core.measures.atlas import ALL_STATS
from core.translate.engine import TRANSLATOR_KEY
from dashboard.content.atlas import ROLE_BY_SLUG, ROLE_STAT
from dashboard.hosted import Limits
from dashboard.model_pick import model_url_params
from dashboard.state import PageLinks, Parsed, UrlParam, choice_param, text_param

STAT_CHOICES = (ROLE_STAT, *ALL_STATS)  # a link may name either kind's; stat_ui keeps the model's
ON_CHOICES = ("corpus", "sentence")
MAX_ROLE_CHARS = 200  # a roles list in a link: longer ones are cut before reading

# Widgets whose keys hold the page state: Streamlit drops a widget's key when a run does not draw it
# (another page, a run that stopped early), so PageLinks keeps a copy.
KEEP = ("atlas_model", "atlas_engine", "atlas_on", "atlas_stat", "atlas_roles", "atlas_text")


def parse_roles(raw: str) -> Parsed:
    """Comma-separated role slugs -> the known ones, in order, without repeats; unknown ones are
    left out with a note."""
    slugs = [s.strip() for s in str(raw)[:MAX_ROLE_CHARS].split(",") if s.strip()]
    known = list(dict.fromkeys(s for s in slugs if s in ROLE_BY_SLUG))
    if len(known) == len(set(slugs)):
        return known, None
    names = ", ".join(f"`{slug}`" for slug in ROLE_BY_SLUG)
    return known, f"The link's `roles` names a role the atlas does not have (it knows {names}); ignoring it."


def page_links(limits: Limits) -> PageLinks:
    return PageLinks(
        "atlas",
        (
            *model_url_params("atlas", limits),
            text_param("text", "atlas_text", "", limits.max_text_chars),
            choice_param("on", "atlas_on", "corpus", ON_CHOICES),
            choice_param("stat", "atlas_stat", ROLE_STAT, STAT_CHOICES),
            UrlParam("roles", "atlas_roles", [], parse_roles, show=",".join),
        ),
        keep=KEEP,
    )


def init_state(limits: Limits) -> list[str]:
    """Seed the page state from the link once per session; return notes about bad URL values."""
    links = page_links(limits)
    if links.url_was_read():
        return []
    notes = links.read_url()
    ss = st.session_state
    if "on" not in st.query_params and str(ss.get("atlas_text", "")).strip():
        ss["atlas_on"] = "sentence"  # a shared link with a sentence opens on it
    return notes


def write_url(limits: Limits, model: str | None = None) -> None:
    """The URL says what is shown; the sentence only while it is what the numbers are measured on."""
    ss = st.session_state
    overrides: dict[str, object] = {} if model is None else {"model": model}
    if ss.get("atlas_on") != "sentence":
        overrides["text"] = None
    page_links(limits).write_url(**overrides)


def write_translator_url(limits: Limits) -> None:
    """The translator's atlas (views/atlas/translator.py): the model alone, since it is measured on its
    own corpus with no statistic to pick, role filter or engine to choose; the other parameters stay
    in the session for the next model."""
    page_links(limits).write_url(model=TRANSLATOR_KEY, engine=None, text=None, on=None, stat=None, roles=None)
