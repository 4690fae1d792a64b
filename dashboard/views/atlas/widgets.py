"""The atlas page's widgets: what the numbers are measured on, the grid's statistic, the role
filter, the grid itself with its click-to-open link, the table of heads and the explanations.
Each *_ui function draws and returns its values; the numbers come from compute.py."""

from __future__ import annotations

from collections import Counter
from urllib.parse import quote

import numpy as np
import pandas as pd
import streamlit as st

from core.measures.atlas import ALL_ROLES, DECODER_STATS, STATS, HeadAtlas
from dashboard import long_work
from dashboard.charts.atlas import role_grid, stat_grid
from dashboard.charts.explore import escape_label
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.content import atlas as text
from dashboard.engines import load_engine
from dashboard.presenter import presenting
from dashboard.views.atlas.compute import Measured, atlas_ready, computing, corpus_atlas
from dashboard.widgets import chart, chart_filename

EXPLORE_TEXT_CHARS = 2000  # a sentence carried to the explore page is cut to this many characters


def _md_brackets(label: str) -> str:
    """Our own labels ("[CLS] sink") in markdown: brackets escaped so they never read as links."""
    return str(label).replace("[", "\\[").replace("]", "\\]")


def source_ui() -> str:
    """Built-in corpus or the user's sentence."""
    return (
        st.segmented_control(
            "Measured on",
            ("corpus", "sentence"),
            format_func={"corpus": "Built-in corpus", "sentence": "Your sentence"}.get,
            key="atlas_on",
            required=True,
            help="The corpus: the same few hundred sentences for every model. Your sentence: the same "
            "statistics on one sentence you type.",
        )
        or "corpus"
    )


def stat_ui(decoder: bool) -> str:
    """The grid's statistic, among those of this kind of model (a decoder has no [CLS], [SEP] or
    next token; an encoder no first-token sink or induction score). A choice the model lacks (from a
    link, or kept from the last model) falls back to the role map, with a line that says so."""
    choices = (text.ROLE_STAT, *(DECODER_STATS if decoder else STATS))

    def label(name: str) -> str:
        return text.ROLE_STAT_LABEL.capitalize() if name == text.ROLE_STAT else text.STAT_TEXT[name].title

    ss = st.session_state
    if ss.get("atlas_stat", text.ROLE_STAT) not in choices:
        kind = "a decoder" if decoder else "an encoder"
        st.caption(f"{_md_brackets(label(ss['atlas_stat']))} is not measured on {kind}: showing roles.")
        ss["atlas_stat"] = text.ROLE_STAT
    return st.selectbox("Grid shows", choices, format_func=label, key="atlas_stat")


def sentence_ui(max_chars: int) -> str:
    return st.text_area(
        "Your sentence",
        key="atlas_text",
        max_chars=max_chars,
        height=80,
        placeholder="Type a sentence, e.g. The keys to the cabinet are on the table.",
    )


ROLES_PILLS = "atlas_roles_pills"  # the widget; "atlas_roles" (in the link) keeps the whole choice
ROLES_OFFERED = "atlas_roles_offered"  # the slugs the pills offered on the last run


def _on_roles_change() -> None:
    """Callback: the pills' new selection, plus the chosen roles this model has no head of (not
    offered, so not in the pills, but kept for the next model that has them)."""
    ss = st.session_state
    offered = ss.get(ROLES_OFFERED) or []
    kept = {s for s in ss.get("atlas_roles") or [] if s not in offered} | set(ss.get(ROLES_PILLS) or [])
    ss["atlas_roles"] = [t.slug for t in text.ROLE_TEXT.values() if t.slug in kept]


def roles_ui(roles: np.ndarray, order: tuple[str, ...]) -> list[str]:
    """The role filter (pills with each role's head count, for the roles this model has, in `order`:
    the atlas's roles); returns the roles chosen among them (none = all). Chosen roles the model
    lacks stay chosen in "atlas_roles" (and the link), and come back with a model that has them."""
    counts = Counter(roles.ravel())
    slugs = [text.ROLE_TEXT[role].slug for role in order if counts[role]]
    ss = st.session_state
    wanted = list(ss.get("atlas_roles") or [])
    ss[ROLES_OFFERED] = slugs
    ss[ROLES_PILLS] = [s for s in wanted if s in slugs]  # set before the widget is drawn
    chosen = st.pills(
        "Show roles",
        slugs,
        selection_mode="multi",
        format_func=lambda s: f"{text.ROLE_BY_SLUG[s]} · {counts[text.ROLE_BY_SLUG[s]]}",
        key=ROLES_PILLS,
        on_change=_on_roles_change,
        help=text.FILTER_HELP,
    )
    if absent := [text.ROLE_BY_SLUG[s] for s in wanted if s not in slugs]:
        names = ", ".join(_md_brackets(role) for role in absent)
        st.caption(f"Also chosen, but no head of this model has the role: {names}.")
    return [text.ROLE_BY_SLUG[s] for s in chosen or []]


def explore_url(model: str, engine: str, layer: int, head: int, sentence: str | None) -> str:
    """The explore page's head view of this head (0-indexed in the URL); user text only URL-encoded."""
    url = f"explore?view=head&layer={layer}&head={head}&model={quote(model, safe='')}&engine={engine}"
    return url + (f"&text={quote(sentence[:EXPLORE_TEXT_CHARS], safe='')}" if sentence else "")


def _hover(atlas: HeadAtlas, roles: np.ndarray) -> list[str]:
    shown = {name: text.printed_text(name, atlas.stat(name)) for name in atlas.stats}
    lines = []
    for layer in range(atlas.n_layers):
        for head in range(atlas.n_heads):
            numbers = "<br>".join(
                f"{text.STAT_TEXT[name].label}: {shown[name][layer, head]}" for name in atlas.stats
            )
            lines.append(f"<b>Layer {layer + 1}, head {head + 1}</b> · {roles[layer, head]}<br>{numbers}")
    return lines


def grid_ui(atlas: HeadAtlas, roles: np.ndarray, shown: np.ndarray, stat: str, measured_on: str) -> None:
    """The layers x heads grid of `stat` (or the role map), clickable."""
    sizing = PRESENTER if presenting() else PAGE
    hover = _hover(atlas, roles)
    if stat == text.ROLE_STAT:
        title = f"Role of each head · {measured_on}"
        fig = role_grid(
            roles,
            shown,
            hover,
            order=ALL_ROLES,
            cells={r: t.cell for r, t in text.ROLE_TEXT.items()},
            colors={r: t.color for r, t in text.ROLE_TEXT.items()},
            title=escape_label(title),
            sizing=sizing,
        )
    else:
        info = text.STAT_TEXT[stat]
        title = f"{info.title} · {measured_on}"
        fig = stat_grid(
            atlas.stat(stat),
            shown,
            hover,
            title=escape_label(title),
            cells=text.printed_text(stat, atlas.stat(stat)),
            share=info.share,
            sizing=sizing,
        )
    name = chart_filename("atlas", stat, atlas.model.rsplit("/", 1)[-1])
    chart(fig, "atlas_grid", name, on_select=_on_grid_select, selection_mode="points")


def _on_grid_select() -> None:
    """Callback: a click on a grid cell picks that head (its point's customdata is [layer, head])."""
    event = st.session_state.get("atlas_grid")
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    for point in points:
        data = point.get("customdata")  # a typed array may arrive as {"0": l, "1": h}
        if isinstance(data, dict):
            data = [data.get("0"), data.get("1")]
        if isinstance(data, list) and len(data) == 2 and all(isinstance(v, int | float) for v in data):
            st.session_state["atlas_pick"] = (int(data[0]), int(data[1]))
            return


def pick_link_ui(atlas: HeadAtlas, roles: np.ndarray, model: str, engine: str, sentence: str | None) -> None:
    """After a click on the grid: the head's role and a link that opens it on explore."""
    pick = st.session_state.get("atlas_pick")
    if not pick or not (0 <= pick[0] < atlas.n_layers and 0 <= pick[1] < atlas.n_heads):
        st.caption(text.GRID_CAPTION)
        return
    layer, head = pick
    cols = st.columns([3, 2], vertical_alignment="center")
    cols[0].markdown(f"**Layer {layer + 1}, head {head + 1}**: {_md_brackets(roles[layer, head])}")
    cols[1].link_button(
        f"Open layer {layer + 1}, head {head + 1} on explore",
        explore_url(model, engine, layer, head, sentence),
        icon=":material/open_in_new:",
        type="primary",
    )


def head_table(
    atlas: HeadAtlas, roles: np.ndarray, model: str, engine: str, sentence: str | None
) -> pd.DataFrame:
    rows = []
    for layer in range(atlas.n_layers):
        for head in range(atlas.n_heads):
            row = {"layer": layer + 1, "head": head + 1, "role": roles[layer, head]}
            # printed(): a value just under a role threshold never prints as the threshold
            row |= {name: float(text.printed(name, atlas.stat(name)[layer, head])) for name in atlas.stats}
            row["explore"] = explore_url(model, engine, layer, head, sentence)
            rows.append(row)
    return pd.DataFrame(rows)


def table_ui(
    atlas: HeadAtlas, roles: np.ndarray, shown: np.ndarray, model: str, engine: str, sentence
) -> None:
    """Every head shown by the filter, with all statistics; sortable by any column."""
    table = head_table(atlas, roles, model, engine, sentence)
    table = table[shown.ravel()].reset_index(drop=True)
    config = {
        "layer": st.column_config.NumberColumn("layer", format="%d", width=52),
        "head": st.column_config.NumberColumn("head", format="%d", width=52),
        "role": st.column_config.TextColumn("role", width=118),
        **{
            name: st.column_config.NumberColumn(
                text.STAT_TEXT[name].label,
                format=text.STAT_TEXT[name].fmt,
                help=text.STAT_TEXT[name].title,
                width="small",
            )
            for name in atlas.stats
        },
        "explore": st.column_config.LinkColumn("explore", display_text="Open ↗", width=72),
    }
    st.dataframe(
        table,
        column_config=config,
        column_order=("layer", "head", "role", "explore", *atlas.stats),  # the link in view at any width
        hide_index=True,
        key="atlas_table",
        height=min(38 + 35 * len(table), 460),
    )


def explain_ui(atlas: HeadAtlas) -> None:
    """What each of the atlas's statistics means and how roles are named (the thresholds, one line
    each): a decoder's statistics and roles for a decoder, an encoder's for an encoder."""
    left, right = st.columns(2)
    overrides = text.DECODER_EXPLAIN if atlas.decoder else {}
    with left:
        every = "every token after the first" if atlas.decoder else "every token"
        st.markdown(f"**What the numbers mean** (per head, averaged over {every})")
        lines = (
            f"- **{_md_brackets(text.STAT_TEXT[name].label)}**: "
            f"{overrides.get(name, text.STAT_TEXT[name].explain)}"
            for name in atlas.stats
        )
        st.markdown("\n".join(lines))
    with right:
        st.markdown("**How a head's role is named**")
        rules = text.DECODER_ROLE_RULE_LINES if atlas.decoder else text.ROLE_RULE_LINES
        st.markdown("\n".join(f"- {line}" for line in rules))
        st.caption(text.INTRO_SOURCE_DECODER if atlas.decoder else text.INTRO_SOURCE)


# ---- the corpus atlas, asked for first when it would take long (dashboard/long_work.py) -------------


def atlas_work(model_key: str, engine: str) -> long_work.Work:
    """One pass per corpus sentence (a decoder's induction test, one pass more, is within the prior)."""
    return long_work.Work.over("atlas", model_key, load_engine(model_key, engine), text.corpus())


def atlas_may_start(model_key: str, engine: str) -> bool:
    """Whether the corpus atlas may be read now: ready, short to measure here, or asked for."""
    if atlas_ready(model_key, engine):
        return True
    work = atlas_work(model_key, engine)
    note = text.PREPARE.format(command=long_work.prepare_command(model_key))
    ask = text.ASK_WHAT.format(n=work.runs)
    return long_work.may_start(work, model_key, ask, text.BUTTON.format(n=work.runs), note)


def read_atlas(model_key: str, engine: str) -> Measured:
    """The corpus atlas, with a counting bar when it is measured now (atlas_may_start first)."""
    if atlas_ready(model_key, engine):
        return corpus_atlas(model_key, engine)
    lock = computing(model_key, engine)
    with long_work.counting(atlas_work(model_key, engine), text.PROGRESS, first=lock) as progress:
        return corpus_atlas(model_key, engine, progress=progress)
