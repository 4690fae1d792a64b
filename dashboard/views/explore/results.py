"""The explore page's results: the session's current result (with hosted mode's bound on new texts
per minute), the token view the toggles ask for, and the model view's cached thumbnail grid.

The arrays live in dashboard.engines' shared cache; a session remembers only which input it shows.
"""

from __future__ import annotations

import html

import numpy as np
import streamlit as st

from core.measures.analysis import HeadLink, TokenView, head_stats, rank_heads_specific, token_view
from core.measures.claims import may_claim
from core.models.result import AttentionResult
from dashboard.charts.thumbnails import thumbnail_grid_png
from dashboard.content.explore import THUMBNAIL_HOVER, THUMBNAIL_NEXT, THUMBNAIL_SPECIAL
from dashboard.engines import compute_attention, session_result
from dashboard.hosted import Limits
from dashboard.on_screen import added_token_list, attention_kind


def result_for(model_key: str, engine: str, text: str, limits: Limits) -> AttentionResult:
    """The result for this session's current input (engines.session_result), and which input it is,
    for the views that derive from it."""
    ss = st.session_state
    key = (model_key, engine, text, limits.max_tokens)
    result = session_result("explore", model_key, engine, text, limits)
    ss["explore_result_key"] = key  # only once it ran: tests and the page read what is shown
    return result


def shown_source() -> tuple[str, str, str, int]:
    """(model key, engine, text, max tokens) of the result the page shows: the key of the cached
    arrays the views derive from it."""
    return tuple(st.session_state["explore_result_key"])


def shown_token_view(result: AttentionResult, merge: bool, hide: bool) -> TokenView:
    """The tokens as the toggles show them: word pieces merged, [CLS]/[SEP] hidden."""
    return token_view(
        result.tokens, result.word_ids, result.special_mask, merge_words=merge, hide_special=hide
    )


def link_ranking(result: AttentionResult, view: TokenView, focus: int, target: int) -> list[HeadLink]:
    """Every head ranked by how specifically shown item `focus` looks at shown item `target`
    (core.measures.analysis.rank_heads_specific); [CLS]/[SEP] rows are not among "the other tokens",
    nor, in a causal decoder, the rows before the target, which cannot see it."""
    # one layer at a time: the shown (L, H, W, W) array, without a merged copy of every layer at once
    shown = np.stack([view.matrix(result.attentions[layer]) for layer in range(result.n_layers)])
    special = [bool(result.special_mask[start]) for start, _stop in view.shown_spans]
    return rank_heads_specific(shown, focus, target, special, causal=result.decoder)


@st.cache_data(max_entries=32, show_spinner=False)
def model_grid_data(
    model_key: str, engine: str, text: str, merge: bool, hide: bool, max_tokens: int = 512
) -> tuple[bytes, int, int, list[str]]:
    """The model view's PNG and hover texts (a few hundred kB at most), cached per view."""
    result = compute_attention(model_key, engine, text, max_tokens)
    view = shown_token_view(result, merge, hide)
    png, cell, gap = thumbnail_grid_png(view.matrix(result.attentions))
    stats = head_stats(result.attentions, result.special_mask)
    next_share = may_claim("next_token_share", attention_kind(result))
    specials = html.escape(specials_text(result))
    hover = [
        THUMBNAIL_HOVER.format(
            layer=layer + 1,
            head=head + 1,
            special=THUMBNAIL_SPECIAL.format(specials=specials, share=stats["to_special"][layer, head])
            if specials
            else "",
            previous=stats["to_previous"][layer, head],
            self=stats["to_self"][layer, head],
            next=THUMBNAIL_NEXT.format(share=stats["to_next"][layer, head]) if next_share else "",
            entropy=stats["entropy"][layer, head],
        )
        for layer in range(result.n_layers)
        for head in range(result.n_heads)
    ]
    return png, cell, gap, hover


def specials_text(result: AttentionResult) -> str:
    """The special tokens of this result as one name: "[CLS]/[SEP]", "<s>", or "" (none)."""
    return "/".join(added_token_list(result))
