"""Sentence B on the explore page: which views read it, how this model reads a pair (one line), the
two sentences marked on the head, lines and model views (dashboard/charts/segments.py), and each
head's share of attention that crosses between them (core.measures.pairs), stated for the head
shown and ranked: "heads that read across the pair".

A result holds a pair when its token type ids mark a sentence B (BERT) or when the page joined A
and B for a decoder, which has no segment ids (meta "pair_start": B's first token; dashboard/
engine_input.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.measures.analysis import TokenView
from core.measures.pairs import (
    B,
    CrossShares,
    cross_shares,
    rank_cross,
    segments_from_start,
    segments_from_types,
)
from core.models.result import AttentionResult
from core.text import clean_input
from dashboard.charts import segments
from dashboard.charts.thumbnails import thumbnail_geometry
from dashboard.content import pairs as text
from dashboard.views.explore.results import specials_text
from dashboard.views.explore.widgets import PAIR_KEY
from dashboard.widgets import md

PAIR_VIEWS = ("head", "lines", "model")  # the views that read sentence B; the others read A alone


def parse_pair(raw: str) -> tuple[str, str | None]:
    """A link's `pair` (sentence B), cleaned and capped, with a note when it was cut."""
    pair, cut = clean_input(raw, text.MAX_PAIR_CHARS)
    return pair, text.PAIR_CUT.format(most=text.MAX_PAIR_CHARS) if cut else None


def sentence_b(view_name: str) -> tuple[str | None, str | None]:
    """Sentence B as the view reads it (None: A alone) and the one line to say why B is not read
    (only spaces; a view that reads one sentence)."""
    raw = str(st.session_state.get(PAIR_KEY) or "")
    if not raw:
        return None, None
    if not raw.strip():
        return None, text.ONLY_SPACES
    if view_name not in PAIR_VIEWS:
        return None, text.OTHER_VIEWS
    return raw.strip(), None


@dataclass(frozen=True)
class PairSplit:
    segments: np.ndarray  # int (T,): 0 for A's tokens, 1 for B's, -1 for special tokens
    causal: bool  # a decoder: A's tokens cannot read B's


def page_input(sentence: str, view_name: str) -> str | tuple[str, str]:
    """What the view reads: the sentence, or the (A, B) pair (dashboard.engines.compute_attention
    takes either); the one line why sentence B is left out, when it is."""
    b, note = sentence_b(view_name)
    if note:
        st.caption(note)
    return sentence if b is None else (sentence, b)


def translator_note() -> None:
    """The translator's one line, when the link gave a sentence B."""
    if str(st.session_state.get(PAIR_KEY) or "").strip():
        st.caption(text.HOW_TRANSLATOR)


def pair_split(result: AttentionResult) -> PairSplit | None:
    """The two sentences of this result, or None when it reads one sentence."""
    if "pair_start" in result.meta:
        start = min(int(result.meta["pair_start"]), result.n_tokens)
        return PairSplit(segments_from_start(result.special_mask, start), causal=True)
    types = result.token_type_ids
    if types is None or not (np.asarray(types) > 0).any():
        return None
    return PairSplit(segments_from_types(types, result.special_mask), causal=result.decoder)


def shares_of(result: AttentionResult, split: PairSplit) -> CrossShares:
    return cross_shares(result.attentions, split.segments, causal=split.causal)


def b_first_item(view: TokenView, split: PairSplit) -> int:
    """The first shown item of sentence B (view.n_items when none is shown)."""
    items = (i for i, (start, _stop) in enumerate(view.shown_spans) if split.segments[start] == B)
    return next(items, view.n_items)


def mark(fig: go.Figure, result: AttentionResult, view: TokenView, kind: str) -> go.Figure:
    """The two sentences marked on a head heatmap (kind "heatmap") or a lines figure ("lines"); the
    figure unchanged when the result reads one sentence."""
    split = pair_split(result)
    if split is None:
        return fig
    draw = segments.mark_heatmap if kind == "heatmap" else segments.mark_lines
    return draw(fig, b_first_item(view, split), view.n_items)


def mark_model(fig: go.Figure, result: AttentionResult, view: TokenView, cell: int, gap: int) -> go.Figure:
    """The model view's grid with the A/B boundary across each thumbnail and each head's crossing
    share in its hover; unchanged when the result reads one sentence."""
    split = pair_split(result)
    if split is None:
        return fig
    shares = shares_of(result, split)
    line = text.HOVER_LINE_CAUSAL if split.causal else text.HOVER_LINE
    lines = [
        line.format(cross=c, a_to_b=a, b_to_a=b)
        for c, a, b in zip(shares.cross.ravel(), shares.a_to_b.ravel(), shares.b_to_a.ravel(), strict=True)
    ]
    pool, repeat = thumbnail_geometry(view.n_items)  # how the grid drew W items in a cell's pixels
    edge = b_first_item(view, split) * repeat / pool
    return segments.mark_grid(fig, result.n_layers, result.n_heads, cell, gap, edge, lines)


def how_line(result: AttentionResult) -> str:
    """One line: how this model reads a pair."""
    split = pair_split(result)
    return text.HOW_DECODER if (split is not None and split.causal) or result.decoder else text.HOW_SEGMENTS


def statement_ui(result: AttentionResult, view_name: str, layer: int, head: int) -> None:
    """The line above the view: the crossing share of the head shown (head view), of the layer's head
    that crosses most (lines) or of the model's (model); on a decoder first the line saying it reads
    the pair as one text (BERT's joining is said in the ranking)."""
    split = pair_split(result)
    if split is None:
        return
    if split.causal:  # not the model's own way of reading two sentences: said above the chart
        st.caption(how_line(result))
    shares = shares_of(result, split)
    if shares.n_b == 0:
        st.caption(text.NO_B_TOKENS)
        return
    ranked, shown = rank_cross(shares), ""
    if view_name == "head":
        rank = next(i for i, h in enumerate(ranked, start=1) if (h.layer, h.head) == (layer, head))
        chosen, line = ranked[rank - 1], text.HEAD_STATEMENT_CAUSAL if split.causal else text.HEAD_STATEMENT
    elif view_name == "lines":
        chosen, line, rank = next(h for h in ranked if h.layer == layer), text.LAYER_STATEMENT, 0
        if chosen.head != head and not st.session_state.get("explore_lines_all_heads"):
            shown = text.LAYER_SHOWN.format(head=head + 1, cross=shares.cross[layer, head])
    else:
        chosen, line, rank = ranked[0], text.MODEL_STATEMENT, 1
    st.markdown(
        line.format(
            layer=chosen.layer + 1,
            head=chosen.head + 1,
            cross=chosen.cross,
            a_to_b=chosen.a_to_b,
            b_to_a=chosen.b_to_a,
            rank=rank,
            n=len(ranked),
            shown=shown,
            crosses=text.CROSSES_CAUSAL if split.causal else text.CROSSES,
        )
    )


def ranking_ui(result: AttentionResult) -> None:
    """The heads that read across the pair, the largest share first, in a closed expander."""
    split = pair_split(result)
    if split is None:
        return
    shares = shares_of(result, split)
    if shares.n_b == 0:
        return
    specials = md(specials_text(result))
    note = text.SPECIALS_NOTE.format(specials=specials) if specials else ""
    caption = text.RANKING_CAPTION_CAUSAL if split.causal else text.RANKING_CAPTION
    rows = [
        {
            "rank": rank,
            "layer": h.layer + 1,
            "head": h.head + 1,
            "cross": 100 * h.cross,  # percent, whole numbers on screen as in the statement
            "a_to_b": 100 * h.a_to_b,
            "b_to_a": 100 * h.b_to_a,
        }
        for rank, h in enumerate(rank_cross(shares)[: text.RANKING_TOP], start=1)
    ]
    percent = st.column_config.NumberColumn(format="%.0f%%")
    with st.expander(text.RANKING_LABEL, icon=":material/compare_arrows:"):
        st.caption(caption.format(how=how_line(result), specials=note))
        st.dataframe(
            pd.DataFrame(rows).rename(columns=text.RANKING_COLUMNS),
            hide_index=True,
            column_config={text.RANKING_COLUMNS[c]: percent for c in ("cross", "a_to_b", "b_to_a")},
        )
