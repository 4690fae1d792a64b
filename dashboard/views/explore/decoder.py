"""The explore page's reading views for a decoder: next word (the likeliest next tokens), logit lens
(each layer read through the unembedding) and attention sinks (each head's share on the first
token). Which views a model has: `views_for` (encoders lack these, decoders lack the Q/K view).

The numbers come from core/measures/decoder_reads.py on the shown result; the lens runs on the
NumPy engine (its final layer norm and unembedding), whichever engine computed the attention: the
two agree within 1e-5 (the parity badge).
Letters: L layers, H heads, T tokens, W shown positions, V vocabulary.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.measures.analysis import piece_text
from core.measures.decoder_reads import first_token_share, likeliest, logit_lens, settled_rows
from core.models.result import AttentionResult
from dashboard.charts.ablation import effect_grid
from dashboard.charts.decoder import lens_heatmap, next_token_bars, shown_token
from dashboard.charts.heatmap import PAGE, PRESENTER
from dashboard.content import decoder as text
from dashboard.content.explore import VIEWS
from dashboard.engines import compute_attention, load_engine, model_reading
from dashboard.presenter import presenting
from dashboard.views.explore.results import shown_source
from dashboard.widgets import chart, chart_filename, csv_download, md

DECODER_VIEWS = ("nextword", "generate", "lens", "sinks", "induction")
# The sinks grid on a 1920 x 1080 projector, under the bar and the summary line: a 30-layer model's
# grid at effect_grid's one-screen height ran past the bottom edge from layer 27 on
SINKS_PRESENTER_PX = 760
ENCODER_VIEWS = ("qk",)
TOP = 5
TAIL = 6  # the next word's sentence quotes the text's last tokens, after "…" when there are more
LENS_PAGE, LENS_ROOM = 16, 12  # positions the lens shows: the last ones of the text


def views_for(decoder: bool) -> list[str]:
    """The explore views this kind of model has, in the picker's order."""
    skip = ENCODER_VIEWS if decoder else DECODER_VIEWS
    return [view for view in VIEWS if view not in skip]


def wrong_kind_note(view: str, decoder: bool) -> str:
    """The one line for a link's view that this kind of model does not have."""
    return (text.ENCODER_ONLY if decoder else text.DECODER_ONLY).format(view=VIEWS[view])


def _numpy_engine():
    """The NumPy engine of the shown model (loaded once per process; the page already loaded it
    unless the PyTorch reference computed the attention)."""
    return load_engine(shown_source()[0], "numpy")


# ---- next word -------------------------------------------------------------------------------------


def nextword_view(result: AttentionResult) -> None:
    """The five likeliest next tokens after the text, as bars, with how they are computed."""
    engine = _numpy_engine()
    ids, probs = likeliest(result.next_token_logits, TOP)
    tokens = [engine.decode(i) for i in ids]
    big = presenting()
    tail = md("".join(engine.decode(i) for i in result.input_ids[-TAIL:]).lstrip())
    cut = text.NEXT_CUT if len(result.input_ids) > TAIL else ""  # "…" only where the quote is cut
    st.markdown(text.NEXT_SENTENCE.format(cut=cut, tail=tail, token=md(shown_token(tokens[0])), p=probs[0]))
    fig = next_token_bars(
        tokens,
        probs,
        title=text.NEXT_TITLE.format(n=TOP),
        x_title=text.NEXT_X,
        font=22 if big else 14,
        height=520 if big else None,
    )
    chart(fig, "explore_nextword", chart_filename("explore", "next-word"))
    pieces = text.NEXT_PIECES[model_reading(shown_source()[0], "numpy", engine.tokenizer).pieces]
    st.caption(text.NEXT_CAPTION.format(vocab=int(result.next_token_logits.shape[0]), pieces=pieces))


# ---- logit lens ------------------------------------------------------------------------------------


@st.cache_data(max_entries=8, show_spinner=False)
def lens_of(model_key: str, engine: str, sentence: str, max_tokens: int, last: int) -> tuple:
    """(guessed tokens (L + 1, W) as text, their probabilities, the W position labels) for the
    last `last` positions of the shown input."""
    result = compute_attention(model_key, engine, sentence, max_tokens)
    numpy_engine = load_engine(model_key, "numpy")
    lens = logit_lens(numpy_engine, np.asarray(result.hidden_states[:, -last:], dtype=np.float32))
    guesses = np.vectorize(numpy_engine.decode, otypes=[object])(lens.top_ids)
    return guesses, lens.top_probs, [piece_text(t) for t in result.tokens[-last:]], lens.top_ids


def lens_view(result: AttentionResult) -> None:
    """Each layer's top guess for the next token at the last positions, shaded by probability."""
    big = presenting()
    last = min(result.n_tokens, LENS_ROOM if big else LENS_PAGE)
    guesses, probs, positions, top_ids = lens_of(*shown_source(), last)
    rows = [text.LENS_EMBEDDINGS] + [text.LENS_LAYER.format(n=i + 1) for i in range(result.n_layers)]
    fig = lens_heatmap(
        guesses,
        probs,
        positions,
        rows,
        title=text.LENS_TITLE,
        x_title=text.LENS_X,
        y_title=text.LENS_Y,
        bar_title=text.LENS_BAR,
        font=20 if big else 14,
        height=min(860, 170 + 56 * len(rows)) if big else None,
    )
    chart(fig, "explore_lens", chart_filename("explore", "logit-lens"))
    if last < result.n_tokens:
        st.caption(text.LENS_LONG.format(n=last, total=result.n_tokens))
    st.caption(text.LENS_CAPTION)
    st.markdown(lens_findings(top_ids, result.input_ids[-last:]))


def lens_findings(top_ids: np.ndarray, input_ids: np.ndarray) -> str:
    """What the lens grid shows, computed from it: where the final guesses settle, and how often the
    embeddings row only names the position's own token."""
    n, n_rows = top_ids.shape[1], top_ids.shape[0]
    settled = settled_rows(top_ids)
    early = settled < n_rows - 1
    if not early.any():
        line = text.LENS_SETTLED_NONE.format(n=n)
    else:
        row = int(np.median(settled[early]))
        median = "the embeddings" if row == 0 else text.LENS_LAYER.format(n=row)
        counts = {"n": n, "median": median, "early": int(early.sum()), "late": int((~early).sum())}
        line = (text.LENS_SETTLED if counts["late"] else text.LENS_SETTLED_ALL).format(**counts)
    own = int((top_ids[0] == input_ids).sum())
    return line + (" " + text.LENS_ECHO.format(own=own, n=n) if own else "")


# ---- attention sinks -------------------------------------------------------------------------------


def sink_line(result: AttentionResult, layer: int, head: int) -> str | None:
    """The head view's line for a decoder: this head's share on the first token (None: one token)."""
    if result.n_tokens < 2:
        return None
    share = float(first_token_share(result.attentions[layer : layer + 1, head : head + 1])[0, 0])
    return text.SINK_HEAD.format(share=share, first=md(piece_text(result.tokens[0])))


def sinks_view(result: AttentionResult) -> None:
    """Every head's mean weight on the first token, as a layer × head grid, with one summary line."""
    if result.n_tokens < 2:
        st.info(text.SINK_ONE_TOKEN)
        return
    shares = first_token_share(result.attentions).astype(np.float64)  # (L, H)
    layer, head = np.unravel_index(int(np.argmax(shares)), shares.shape)
    st.markdown(
        text.SINK_SUMMARY.format(
            n_sinks=int((shares > 0.5).sum()),
            n_heads=shares.size,
            layer=layer + 1,
            head=head + 1,
            share=shares[layer, head],
        )
    )
    fig = effect_grid(
        shares,
        title=text.SINK_TITLE,
        bar_title=text.SINK_BAR,
        layer_axis=f"layer (1–{result.n_layers})",
        head_axis=f"head (1–{result.n_heads})",
        sizing=PRESENTER if presenting() else PAGE,
        room=SINKS_PRESENTER_PX if presenting() else None,
    )
    fig.update_traces(zmax=1.0)  # a share: the same scale for every text
    name = chart_filename("explore", "sinks")
    chart(fig, "explore_sinks", name)
    rows, cols = [str(i + 1) for i in range(result.n_layers)], [str(i + 1) for i in range(result.n_heads)]
    csv_download(shares, rows, cols, name, "explore_sinks_csv", corner="layer \\ head (from 1)")
    st.caption(text.SINK_CAPTION.format(first=md(piece_text(result.tokens[0]))))
