"""The translator's explore views besides the head view (translator.py): the lines of one layer, the
model view of every head, and the translation step by step. Each shows one kind of attention
(cross-attention: French rows, English columns; the encoder's or the decoder's self-attention), so the
same three pictures a reader knows from BERT and GPT-2 work on the attention that reads one sentence
while writing another. Letters: L layers, H heads, T French tokens, S English tokens.
"""

from __future__ import annotations

import html

import numpy as np
import streamlit as st

from core.translate.engine import Translation
from dashboard.charts.decoder import next_token_bars, step_attention
from dashboard.charts.lines import lines_figure
from dashboard.charts.thumbnails import model_grid_figure, thumbnail_grid_png
from dashboard.content import translator as text
from dashboard.presenter import owns_clicker, presenting
from dashboard.views.explore.generate import step_ui
from dashboard.views.explore.widgets import on_grid_select
from dashboard.widgets import chart, chart_filename, md

TOP = 5  # the words each step weighed, most likely first


def kind_of(done: Translation, kind: str) -> tuple[np.ndarray, list[str], list[str]]:
    """One kind of attention of a translation, every layer: ((L, H, rows, cols), row words, column words)."""
    if kind == "encoder":
        return done.encoder, done.source_tokens, done.source_tokens
    if kind == "decoder":
        rows = done.decoder.shape[-1]
        return done.decoder, ["<s>", *done.target_tokens][:rows], ["<s>", *done.target_tokens][:rows]
    return done.cross, done.target_tokens, done.source_tokens


def lines_view(done: Translation, kind: str, layer: int, head: int) -> None:
    """One layer's heads as lines: cross-attention from each French word (left) to the English (right)."""
    weights, rows, cols = kind_of(done, kind)
    all_heads = st.toggle(text.LINES_ALL_HEADS, key="explore_tr_all_heads", help=text.LINES_ALL_HELP)
    fig = lines_figure(
        weights[layer],
        rows,
        key_labels=cols,
        shown_heads=None if all_heads else [head],
        title=text.LINES_TITLE.format(
            layer=layer + 1, heads="every head" if all_heads else f"head {head + 1}", kind=text.KINDS[kind]
        ),
        side_titles=text.SIDES[kind],
    )
    chart(fig, f"explore_tr_lines_{kind}", chart_filename("explore", kind, "lines", f"layer{layer + 1}"))
    st.caption(text.LINES_CAPTION)


def model_view(done: Translation, kind: str, layer: int, head: int) -> None:
    """Every head of one kind as a thumbnail; a click opens it in the head view."""
    weights, _rows, cols = kind_of(done, kind)
    n_layers, n_heads = weights.shape[:2]
    png, cell, gap = thumbnail_grid_png(weights)
    read = weights.mean(axis=2)  # (L, H, cols): each column's share of a head's weight, rows averaged
    hover = [
        text.MODEL_HOVER.format(
            layer=la + 1,
            head=he + 1,
            word=html.escape(cols[int(np.argmax(read[la, he]))]),
            share=float(np.max(read[la, he])),
        )
        for la, he in np.ndindex(n_layers, n_heads)
    ]
    st.caption(text.MODEL_CAPTION.format(kind=text.KINDS[kind]))
    fig = model_grid_figure(png, n_layers, n_heads, cell, gap, hover=hover, selected=(layer, head))
    chart(fig, "explore_model_grid", on_select=on_grid_select, selection_mode="points")


def steps_view(done: Translation, words: dict[int, str], layer: int) -> None:
    """The translation as it is written: at each step the words it weighed, and what every head of
    the chosen layer read in the English while writing."""
    k = step_ui(len(done.target_tokens))
    written, word = done.target_tokens[: k - 1], done.target_tokens[k - 1]
    st.markdown(
        text.STEP_TEXT.format(
            step=k, n=len(done.target_tokens), before=md(" ".join(written)) or "…", word=md(word)
        )
    )
    big = presenting()
    probs = done.next_probs[k - 1]
    top = np.argsort(-probs, kind="stable")[:TOP]
    left, right = st.columns([2, 3])
    with left:
        tokens = [words[int(i)] for i in top]
        fig = next_token_bars(
            tokens,
            [float(probs[i]) for i in top],
            title=text.STEP_TOP_TITLE.format(step=k),
            x_title=text.STEP_TOP_X,
            chosen=tokens.index(word) if word in tokens else None,
            font=20 if big else 13,
            height=520 if big else None,
        )
        chart(fig, "explore_tr_step_top", chart_filename("explore", "translate", f"step{k}", "top"))
    with right:
        fig = step_attention(
            done.cross[layer, :, k - 1],
            done.source_tokens,
            title=text.STEP_READ_TITLE.format(word=html.escape(word), layer=layer + 1),
            x_title=text.STEP_READ_X,
            y_title="head",
            font=20 if big else 13,
            height=520 if big else None,
        )
        chart(
            fig,
            "explore_tr_step_read",
            chart_filename("explore", "translate", f"step{k}", f"layer{layer + 1}"),
        )
    st.caption(text.STEP_HOW + (text.STEP_KEYS if owns_clicker() else text.STEP_KEYS_DECK))
