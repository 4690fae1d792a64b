"""The learn page's translator mode (`/learn?model=translator`): the cross-attention step of the
English → French translator trained in this project (models/translator, core/translate/), on a
sentence the user types, with its real numbers, stop by stop (translator_steps.py draws them).

State: `learn_tr_text` (the sentence box), `learn_tr_layer` and `learn_tr_head` (None until the page
opens: then the head that aligned best in training), `learn_tr_target` (the French word followed,
as a word reference: "noir", "le#2"; None: the page's choice, a word written out of the English
order) and the learn page's `learn_step`. links.py mirrors them into `text`, `layer`, `head`,
`target` and `step`. A sentence the translator cannot read gets one line, and the last one it could
read stays on screen. Typed text reaches the page only through the sentence box; the tokens shown
are the translator's own vocabulary, written by st.text, in tables and in Plotly labels.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.measures.analysis import find_word_ref, word_ref
from core.translate.engine import TRANSLATOR_DIR, TranslatorEngine, TranslatorInputError
from core.translate.lesson import CrossStep, best_cross_head, cross_step, forward_gaps
from core.translate.parse import pair_of
from dashboard.content import learn_translator as text
from dashboard.engines import translator_engine
from dashboard.hosted import TOO_MANY_TEXTS, TooManyTexts, count_new_text, current_limits
from dashboard.views.learn.translator_steps import draw_stops
from dashboard.views.learn.widgets import step_pager_ui, step_picker_ui
from dashboard.widgets import md

MODE = text.MODE
TEXT_KEY, LAYER_KEY, HEAD_KEY, TARGET_KEY = (
    "learn_tr_text",
    "learn_tr_layer",
    "learn_tr_head",
    "learn_tr_target",
)
LAST_KEY = "learn_tr_last"  # the last sentence the translator could read: shown when a new one fails
MAX_CHARS = 300  # the grammar's longest sentence is far shorter; the model reads at most 31 words


# ---- the model and its numbers, cached ---------------------------------------------------------------


@st.cache_data(max_entries=32, show_spinner=False)
def step_of(sentence: str, layer: int, head: int) -> CrossStep:
    return cross_step(translator_engine(), sentence, layer, head)


@st.cache_data(max_entries=32, show_spinner=False)
def gaps_of(sentence: str, layer: int, head: int) -> tuple[dict[str, float], dict[str, float]]:
    """The step's gaps to the model's forward pass: (float64, float32)."""
    engine, step = translator_engine(), step_of(sentence, layer, head)
    return forward_gaps(step, engine.params, engine.config), forward_gaps(
        step, engine.params, engine.config, dtype=np.float32
    )


@st.cache_data(max_entries=2, show_spinner=False)
def recorded_alignment() -> np.ndarray:
    """(L, H) each cross-attention head's alignment on the held-out sentences, end of training."""
    import json

    record = json.loads((TRANSLATOR_DIR / "training_record.json").read_text())
    return np.asarray(record["alignment"][-1], dtype=np.float64)


def best_head() -> tuple[int, int]:
    return best_cross_head(TRANSLATOR_DIR)


# ---- the mode ------------------------------------------------------------------------------------------


def translator_mode(controls) -> None:
    """The controls (in `controls`), then the stops of the chosen view, then the pager."""
    with controls:
        found = _controls()
    if found is None:
        return
    step, row, sentence = found
    draw_stops(step, row, sentence, gaps_of(sentence, step.layer, step.head))
    step_pager_ui(text.VIEWS, text.VIEW_LABELS)


def _pick(name: str | None) -> None:
    if name in text.EXAMPLES:
        st.session_state[TEXT_KEY] = text.EXAMPLES[name]
    st.session_state["learn_tr_pick"] = None  # an example is a one-off action, not a state


def _sentence_ui() -> str:
    ss = st.session_state
    if not isinstance(ss.get(TEXT_KEY), str):
        ss[TEXT_KEY] = text.DEFAULT_TEXT
    st.pills(
        text.EXAMPLES_LABEL,
        list(text.EXAMPLES),
        key="learn_tr_pick",
        on_change=lambda: _pick(ss.get("learn_tr_pick")),
    )
    st.text_input(text.SENTENCE_LABEL, key=TEXT_KEY, max_chars=MAX_CHARS)
    return ss[TEXT_KEY]


def _numbered_ui(label: str, n: int, key: str, noun: str, default: int) -> int:
    """One of n layers or heads, numbered from 1 on screen, from 0 in the link."""
    ss = st.session_state
    if ss.get(key) is not None and ss.get(key) not in range(n):  # a link's, past the model's
        st.warning(text.PAST_THE_END.format(noun=noun.lower(), value=ss[key], n=n), icon=":material/link:")
    if ss.get(key) not in range(n):
        ss[key] = default
    value = st.segmented_control(
        label, list(range(n)), format_func=lambda i: f"{noun} {i + 1}", key=key, required=True
    )
    return int(value if value is not None else default)


def _read(sentence: str) -> str:
    """The sentence to show: the typed one, or (with one line why) the last one the translator read."""
    ss = st.session_state
    try:
        count_new_text("learn_tr", sentence, current_limits().max_texts_per_minute)
        translator_engine().source_ids(sentence)  # refuses empty text, unknown words, too many words
        ss[LAST_KEY] = sentence
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=current_limits().max_texts_per_minute))
    except TranslatorInputError as err:
        st.warning(text.UNREADABLE.format(reason=md(err)), icon=":material/translate:")
    return ss.get(LAST_KEY) or text.DEFAULT_TEXT


def _controls() -> tuple[CrossStep, int, str] | None:
    """Examples, sentence, layer, head, the French word followed and the stop: (the step, the row
    followed, the sentence shown)."""
    engine = translator_engine()
    sentence = _read(_sentence_ui())
    best = best_head()
    cols = st.columns(2)
    with cols[0]:
        layer = _numbered_ui(text.LAYER_LABEL, engine.config.decoder_layers, LAYER_KEY, "Layer", best[0])
    with cols[1]:
        head = _numbered_ui(text.HEAD_LABEL, engine.config.heads, HEAD_KEY, "Head", best[1])
    step = step_of(sentence, layer, head)
    _about(engine, step, best)
    row = _target_ui(step, sentence)
    step_picker_ui(text.VIEWS, text.VIEW_LABELS, unit="sub-layer")
    return step, row, sentence


def _about(engine: TranslatorEngine, step: CrossStep, best: tuple[int, int]) -> None:
    config, acc = engine.config, recorded_alignment()
    if (step.layer, step.head) == best:
        said = text.BEST_HEAD.format(acc=acc[best])
    else:
        said = text.OTHER_HEAD.format(layer=best[0] + 1, head=best[1] + 1, acc=acc[best])
    sizes = {"enc": config.encoder_layers, "dec": config.decoder_layers, "d_model": config.d_model}
    sizes |= {"n_heads": config.heads, "d_k": step.d_k, "layer": step.layer + 1, "head": step.head + 1}
    st.info(text.ABOUT.format(best=said, **sizes), icon=":material/translate:")
    st.caption(text.SOURCE_CAPTION.format(s=len(step.source_tokens)))
    st.text("  ·  ".join(step.source_tokens))


# ---- the French word followed ---------------------------------------------------------------------------


def _refs(tokens: tuple[str, ...]) -> list[str]:
    """Each token's word reference ("le", "le#2"): one word a token here."""
    spans = [(i, i + 1) for i in range(len(tokens))]
    return [word_ref(tokens, spans, i) for i in range(len(tokens))]


def default_row(step: CrossStep, sentence: str) -> int:
    """The row the page follows first: the first French word written out of the English order (its
    English word comes before one an earlier French word renders: "noir" after "chat"), by the
    grammar's alignment where it can write the sentence, else by where this head looks most."""
    pair = pair_of(sentence)
    words = step.target_tokens[:-1] if step.target_tokens[-1:] == ("</s>",) else step.target_tokens
    if pair is not None and tuple(pair.target) == tuple(words):
        sources = [min((s for t, s in pair.alignment if t == row), default=None) for row in range(len(words))]
    else:
        sources = [int(np.argmax(step["probs"][row])) for row in range(len(words))]
    furthest = -1
    for row, source in enumerate(sources):
        if source is None:
            continue
        if source < furthest:
            return row
        furthest = max(furthest, source)
    return min(len(words) // 2, len(step.target_tokens) - 1)


def _target_ui(step: CrossStep, sentence: str) -> int:
    """The French word followed: (its row). A link's or earlier choice when this translation has
    that word; else the page's default for it."""
    ss = st.session_state
    refs = _refs(step.target_tokens)
    if ss.get("learn_tr_target_for") not in (None, sentence):  # a new sentence: its own default
        ss[TARGET_KEY] = None
    ss["learn_tr_target_for"] = sentence
    default = default_row(step, sentence)
    chosen = find_word_ref(
        ss.get(TARGET_KEY) or "", step.target_tokens, [(i, i + 1) for i in range(len(refs))]
    )
    key = f"learn_tr_target_w_{len(refs)}_{'_'.join(refs)}"[:200]  # its options: this translation's words
    if key not in ss or ss[key] not in range(len(refs)):
        ss[key] = default if chosen is None else chosen
    st.caption(text.TARGET_CAPTION.format(t=len(step.target_tokens)))
    st.text("  ·  ".join(step.target_tokens))
    row = st.selectbox(
        text.TARGET_LABEL,
        list(range(len(refs))),
        format_func=lambda i: f"{step.target_tokens[i]}  (French word {i + 1} of {len(refs)})",
        key=key,
        width=420,
    )
    row = int(row if row is not None else default)
    ss[TARGET_KEY] = None if row == default else refs[row]
    return row
