"""The atlas page on the translator trained here (issue 38 §3, `?model=translator`): its heads in their
three kinds (the encoder's, the decoder's, the cross-attention) measured on a fixed corpus of the
grammar's sentence pairs (core/translate/atlas.py), one grid of roles and scores, a table with a link
per head to the explore page (`explore?model=translator&kind=K&layer=L&head=H`, 0-indexed), and the
thresholds. The page branches here once the shared model picker (dashboard.model_pick.model_choice_ui,
which lists the translator among the page's own models) has chosen it: the corpus atlas's cache and
accumulator are an encoder's or a decoder's, not an encoder-decoder's, and this atlas takes half a
second to measure (kept per process, per version of the model file).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.translate.atlas import (
    ALIGNER_SCORE,
    BROAD_ENTROPY,
    CORPUS_PAIRS,
    EVAL_SEED,
    KIND_ROLES,
    KIND_STATS,
    KINDS,
    ROLE_SHARE,
    TranslatorAtlas,
    corpus_pairs,
    measure,
)
from core.translate.engine import TRANSLATOR_KEY
from dashboard.charts.atlas_translator import Panel, kinds_grid
from dashboard.charts.heatmap import PAGE, PRESENTER, escape_label
from dashboard.content import atlas_translator as text
from dashboard.engines import explore_models, translator_engine, translator_version
from dashboard.hosted import Limits
from dashboard.model_pick import model_label
from dashboard.presenter import presenting
from dashboard.views.atlas import links
from dashboard.widgets import chart, chart_filename, copy_link_ui, md

PICK_KEY, GRID_KEY = "atlas_tr_pick", "atlas_tr_grid"
# every kind's statistics, the table's columns: the aligners' numbers first, the shares, the spread
ALL_STATS = ("alignment", "reordered", "to_end", "to_start", "to_self", "to_prev", "to_next", "spread")
ORDER = tuple(dict.fromkeys(role for kind in KINDS for role in KIND_ROLES[kind]))  # the colour scale's
# the threshold each statistic's role is read at (printed); the shares' is ROLE_SHARE; reordered names none
THRESHOLDS = {"alignment": ALIGNER_SCORE, "spread": BROAD_ENTROPY, "reordered": None}


def offered(limits: Limits) -> bool:
    """Whether this copy holds the translator (it ships; hosted too: under a megabyte)."""
    return TRANSLATOR_KEY in explore_models(limits)


# keyed by the weights file's version (cache_data would otherwise keep a retrained file's old atlas);
# the engine it measures is dashboard.engines' one, cached per version too
@st.cache_data(max_entries=2, show_spinner=False)
def _atlas(version: tuple[int, int] | None) -> TranslatorAtlas:
    engine = translator_engine()
    vocab = engine.tokenizer.get_vocab()
    return measure(engine.params, engine.config, corpus_pairs(CORPUS_PAIRS, EVAL_SEED), vocab, seed=EVAL_SEED)


def measured() -> TranslatorAtlas:
    """The shipped translator's atlas, measured once per version of its weights file."""
    with st.spinner("Measuring the translator's heads…"):
        return _atlas(translator_version())


def printed(name: str, value: float, decimals: int) -> str:
    """`value` to `decimals` places, never rounded up onto its role's threshold (0.6996 is not an
    aligner: it prints 0.69, not 0.70), so a printed number never contradicts a role."""
    threshold, step = THRESHOLDS.get(name, ROLE_SHARE), 10.0**-decimals
    if threshold is not None and value < threshold <= float(f"{value:.{decimals}f}"):
        value = threshold - step
    return f"{value:.{decimals}f}"


def _cells(atlas: TranslatorAtlas, kind: str, roles: np.ndarray) -> np.ndarray:
    """Each head's cell: its role, the number the role is read from, and a cross head's reordered."""
    stats = atlas.kinds[kind].stats
    cells = np.empty(roles.shape, dtype=object)
    for (layer, head), role in np.ndenumerate(roles):
        names = ("alignment", "reordered") if kind == "cross" else (text.ROLE_CELL_STAT[role],)
        lines = [f"<b>{escape_label(text.ROLE_TEXT[role].cell)}</b>"]
        lines += [
            f"{escape_label(text.STAT_TEXT[name].cell)} {printed(name, stats[name][layer, head], 2)}"
            for name in names
        ]
        cells[layer, head] = "<br>".join(lines)
    return cells


def _hover(atlas: TranslatorAtlas, kind: str, roles: np.ndarray) -> list[str]:
    stats = atlas.kinds[kind].stats
    return [
        f"<b>{escape_label(text.KIND_TITLES[kind])}<br>layer {layer + 1}, head {head + 1}</b> · "
        f"{escape_label(role)}<br>"
        + "<br>".join(
            f"{escape_label(text.STAT_TEXT[name].label)}: {printed(name, stats[name][layer, head], 3)}"
            for name in KIND_STATS[kind]
        )
        for (layer, head), role in np.ndenumerate(roles)
    ]


def grid_ui(atlas: TranslatorAtlas, roles: dict[str, np.ndarray]) -> None:
    panels = [
        Panel(
            escape_label(text.KIND_TITLES[kind]),
            roles[kind],
            _cells(atlas, kind, roles[kind]),
            _hover(atlas, kind, roles[kind]),
        )
        for kind in KINDS
    ]
    fig = kinds_grid(
        panels,
        order=ORDER,
        colors={role: text.ROLE_TEXT[role].color for role in ORDER},
        title=escape_label(text.GRID_TITLE.format(n=atlas.n_pairs)),
        sizing=PRESENTER if presenting() else PAGE,
    )
    chart(fig, GRID_KEY, chart_filename("atlas", "translator"), on_select=_on_select, selection_mode="points")


def _on_select() -> None:
    """Callback: a click on a cell picks that head (its point's customdata is [panel, layer, head])."""
    event = st.session_state.get(GRID_KEY) or {}
    for point in event.get("selection", {}).get("points", []):
        data = point.get("customdata")  # a typed array may arrive as {"0": k, "1": l, "2": h}
        if isinstance(data, dict):
            data = [data.get(str(i)) for i in range(3)]
        if isinstance(data, list) and len(data) == 3 and all(isinstance(v, int | float) for v in data):
            st.session_state[PICK_KEY] = (KINDS[int(data[0]) % len(KINDS)], int(data[1]), int(data[2]))
            return


def explore_url(kind: str, layer: int, head: int) -> str:
    """The explore page on one head of the translator (0-indexed in the URL)."""
    return f"explore?model={TRANSLATOR_KEY}&kind={kind}&layer={layer}&head={head}"


def pick_ui(roles: dict[str, np.ndarray]) -> None:
    """After a click on the grid: the head's role and a link that opens it on explore."""
    pick = st.session_state.get(PICK_KEY)
    valid = isinstance(pick, tuple) and len(pick) == 3 and pick[0] in roles
    if not valid or not all(0 <= v < n for v, n in zip(pick[1:], roles[pick[0]].shape, strict=True)):
        if not presenting():  # hovering and clicking are the reader's, not the room's
            st.caption(text.GRID_CAPTION)
        return
    kind, layer, head = pick
    cols = st.columns([3, 2], vertical_alignment="center")
    name = text.KIND_TITLES[kind].split(":")[0]
    role = md(roles[kind][layer, head])
    cols[0].markdown(text.PICKED.format(kind=name, layer=layer + 1, head=head + 1, role=role))
    cols[1].link_button(
        text.OPEN.format(kind=text.KIND_SHORT[kind], layer=layer + 1, head=head + 1),
        explore_url(kind, layer, head),
        icon=":material/open_in_new:",
        type="primary",
    )


def head_table(atlas: TranslatorAtlas, kind: str, roles: np.ndarray) -> pd.DataFrame:
    """One row a head of one kind: its layer and head (from 1), role, explore link and statistics."""
    stats = atlas.kinds[kind].stats
    rows = []
    for (layer, head), role in np.ndenumerate(roles):
        row = {"layer": layer + 1, "head": head + 1, "role": role, "explore": explore_url(kind, layer, head)}
        rows.append(
            row | {name: float(printed(name, stats[name][layer, head], 3)) for name in KIND_STATS[kind]}
        )
    return pd.DataFrame(rows)


def table_ui(atlas: TranslatorAtlas, roles: dict[str, np.ndarray]) -> None:
    """A tab a kind, each a sortable table of its heads with every statistic of that kind."""
    for kind, tab in zip(KINDS, st.tabs([text.KIND_TITLES[kind] for kind in KINDS]), strict=True):
        config = {
            "layer": st.column_config.NumberColumn("layer", format="%d", width=52),
            "head": st.column_config.NumberColumn("head", format="%d", width=52),
            "role": st.column_config.TextColumn("role", width=118),
            "explore": st.column_config.LinkColumn("explore", display_text="Open ↗", width=72),
            **{
                name: st.column_config.NumberColumn(text.STAT_TEXT[name].label, format="%.3f", width="small")
                for name in KIND_STATS[kind]
            },
        }
        tab.dataframe(
            head_table(atlas, kind, roles[kind]),
            column_config=config,
            hide_index=True,
            key=f"atlas_tr_{kind}",
        )


def explain_ui() -> None:
    left, right = st.columns(2)
    with left:
        st.markdown(text.MEANS)
        st.markdown(
            "\n".join(f"- **{md(text.STAT_TEXT[n].label)}**: {text.STAT_TEXT[n].explain}" for n in ALL_STATS)
        )
    with right:
        st.markdown(text.RULES)
        st.markdown("\n".join(f"- {line}" for line in text.ROLE_RULE_LINES))


def render(limits: Limits) -> None:
    """The translator's atlas, from the page's title to its link."""
    if not presenting():
        st.title(text.TITLE)
        st.markdown(text.INTRO)
    if st.session_state.get("atlas_on") == "sentence":
        st.caption(text.ON_SENTENCE)
    atlas = measured()
    roles = {kind: atlas.roles(kind) for kind in KINDS}
    grid_ui(atlas, roles)
    pick_ui(roles)
    plain, reordered = atlas.by_position
    corpus = text.CORPUS.format(
        n=atlas.n_pairs, seed=atlas.seed, aligned=atlas.n_aligned, reordered=atlas.n_reordered
    )
    corpus += " " + text.YARDSTICK.format(plain=plain, reordered=reordered)
    if presenting():  # one line under the grid on a projector; the whole story folded below
        line = text.PRESENTER_LINE.format(
            n=atlas.n_pairs, score=ALIGNER_SCORE, plain=plain, reordered=reordered
        )
        st.markdown(line)
        table_ui(atlas, roles)
        with st.expander(text.EXPLAIN_LABEL):
            st.caption(corpus)
            explain_ui()
    else:
        st.caption(corpus)
        table_ui(atlas, roles)
        explain_ui()
    links.write_translator_url(limits)
    with st.sidebar:  # after the link is written: it names what is on screen
        enc, dec = atlas.kinds["encoder"].shape, atlas.kinds["decoder"].shape
        st.caption(
            f"{enc[0]} encoder + {dec[0]} decoder layers × {dec[1]} heads · {model_label(TRANSLATOR_KEY)}"
        )
        copy_link_ui()
