""" "Which continuation does the model prefer?", shared by explore's focus view and the compare page:
a text, two continuations the reader may edit, and the log-probability the decoder gives each
(core/measures/choice.py), with the verdict said from the numbers. For the source articles' sentences
the text and the two words come ready (dashboard/content/continuation.py's probes), and the verdict
says whether the model chooses what a reader would.

Session keys: `{place}_choice_prefix`, `{place}_choice_a`, `{place}_choice_b`, and `{place}_choice_for`
(the sentence the boxes were filled for: a new sentence fills them again).
"""

from __future__ import annotations

import logging

import numpy as np
import streamlit as st

from core.measures.choice import Option, choose_each
from core.models.bert import TextError
from dashboard.content import continuation as text
from dashboard.content.continuation import PROBES, Probe
from dashboard.engines import load_engine
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text, current_limits
from dashboard.state import clean_widget_text
from dashboard.widgets import error_md, md
from dashboard.work_queue import place_line, run_in_turn

LOG = logging.getLogger(__name__)
OPTION_CHARS = 60  # a continuation is a word or a few
PREFIX_CHARS = 2000  # and the tokens are capped at the page's limit (Limits.max_tokens)


def probe_for(sentence: str) -> Probe:
    """The ready probe of a known sentence; else the sentence itself, with the continuations open."""
    return PROBES.get(sentence.strip()) or Probe(sentence.strip(), ("", ""))


def as_continuation(prefix: str, option: str) -> str:
    """The option as the model should read it: a space before it unless the text ends with one or the
    option starts with one (" trophy" is the next word; "trophy" would be glued to "the")."""
    if not option.strip() or option[:1].isspace() or prefix[-1:].isspace():
        return option
    return " " + option


@st.cache_data(max_entries=32, show_spinner="Asking the model…")
def scored(model_key: str, prefixes: tuple[str, ...], options: tuple[str, ...]) -> list[list[Option]]:
    """The options scored after each prefix by the model's NumPy engine, prefixes of one length in
    one batched pass (core.measures.choice.choose_each; cached: a rerun does not run the model
    again)."""
    engine = load_engine(model_key, "numpy")
    batch = run_in_turn(lambda: choose_each(engine, prefixes, options), place_line())  # the classroom's queue
    return [found for _tokens, found in batch]


def _n_tokens(engine, text: str) -> int:
    """The text's tokens, those past the model's context (cut, kept in `overflowing`) counted too."""
    encoding = engine.encode(text)
    return len(encoding.ids) + sum(len(piece.ids) for piece in encoding.overflowing)


def _fits(engine, text: str, most: int) -> bool:
    try:
        return _n_tokens(engine, text) <= most
    except TextError:
        return False


def verdict(options: list[Option], reader: str | None = None) -> str:
    """The verdict in words, from the numbers: which continuation, by how much, whether the lengths
    differ, and, when a reader's answer is known, whether the model agrees."""
    best, other = sorted(options, key=lambda o: o.logprob, reverse=True)[:2]
    names = {"best": md(best.text.strip()), "other": md(other.text.strip())}
    if best.logprob == other.logprob:
        said = text.TIE.format(**names, best_lp=best.logprob)
    else:
        ratio = float(np.exp(best.logprob - other.logprob))
        shown = f"{ratio:.1f}×" if ratio < 1000 else f"{ratio:.2g}×"
        said = text.PREFERS.format(**names, ratio=shown, best_lp=best.logprob, other_lp=other.logprob)
    if len(best.token_ids) != len(other.token_ids):
        said += text.LENGTHS_DIFFER.format(
            best_n=len(best.token_ids),
            other_n=len(other.token_ids),
            best_first=np.exp(best.first_logprob),
            other_first=np.exp(other.first_logprob),
        )
    if reader and best.logprob != other.logprob:
        agrees = best.text.strip().casefold() == reader.casefold()
        said += (text.READER_AGREES if agrees else text.READER_DIFFERS).format(reader=md(reader))
    return said


def reader_of(place: str, probe: Probe) -> str | None:
    """What a reader would choose, while the boxes still hold the probe as it came (edited, it is open)."""
    return probe.reader if asked(place) == (probe.prefix, *probe.options) else None


def preferred(options: list[Option]) -> str:
    return max(options, key=lambda o: o.logprob).text.strip()


def _fill(place: str, sentence: str) -> Probe:
    """The boxes' values: filled from the sentence's probe when the sentence is new to them."""
    ss, probe = st.session_state, probe_for(sentence)
    if ss.get(f"{place}_choice_for") != sentence:
        ss[f"{place}_choice_for"] = sentence
        ss[f"{place}_choice_prefix"] = probe.prefix
        ss[f"{place}_choice_a"], ss[f"{place}_choice_b"] = probe.options
    return probe


def ask(
    place: str,
    model_key: str,
    limits: Limits,
    prefix: str,
    typed: tuple[str, str],
    together: tuple[str, ...] = (),
) -> list[Option] | None:
    """Score the two typed continuations after `prefix` (`place` counts it as a new text in hosted
    mode); None after saying why on the page. `together`: the prefixes of a pair's other sentences,
    asked next with the same continuations: those within the page's limit are scored in the same
    batched pass, so their own ask finds them in the cache."""
    options = tuple(as_continuation(prefix, option) for option in typed)
    if not prefix.strip() or not all(o.strip() for o in options):
        st.info(text.EMPTY, icon=":material/edit_note:")
        return None
    try:
        engine = load_engine(model_key, "numpy")
        n_tokens = _n_tokens(engine, prefix)  # cut at the model's context; what was cut counts too
        most = min(limits.max_tokens, engine.max_tokens - 1)  # room for the continuation's first token
        if n_tokens > most:
            st.warning(text.TOO_LONG.format(n=n_tokens, most=most), icon=":material/content_cut:")
            return None
        count_new_text(f"{place}_choice", (model_key, prefix, options), limits.max_texts_per_minute)
        batch = tuple(sorted({prefix, *(other for other in together if _fits(engine, other, most))}))
        return scored(model_key, batch, options)[batch.index(prefix)]
    except TooManyTexts:
        st.info(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute), icon=":material/hourglass_top:")
    except TextError as err:
        st.warning(text.REFUSED.format(reason=error_md(str(err).rstrip("."))), icon=":material/block:")
    except Exception as err:  # never a traceback in the page; the log keeps the details
        LOG.exception("scoring continuations failed")
        st.error(text.REFUSED.format(reason=f"{type(err).__name__}"))
    return None


def boxes_ui(place: str, sentence: str) -> Probe:
    """The text box and the two continuation boxes, filled for `sentence` when it is new to them."""
    probe = _fill(place, sentence)
    if note := clean_widget_text(f"{place}_choice_prefix", PREFIX_CHARS, "text"):
        st.warning(note, icon=":material/content_cut:")
    st.text_area(text.PREFIX_LABEL, key=f"{place}_choice_prefix", max_chars=PREFIX_CHARS, height=90)
    option_boxes_ui(place)
    return probe


def option_boxes_ui(place: str) -> None:
    """The two continuation boxes side by side (their text cleaned before they are drawn)."""
    for k in "ab":
        if note := clean_widget_text(f"{place}_choice_{k}", OPTION_CHARS, "continuation"):
            st.warning(note, icon=":material/content_cut:")
    for col, k, label in zip(st.columns(2), "ab", text.OPTION_LABELS, strict=True):
        col.text_input(label, key=f"{place}_choice_{k}", max_chars=OPTION_CHARS, help=text.OPTION_HELP)


def asked(place: str) -> tuple[str, str, str]:
    ss = st.session_state
    return tuple(ss.get(f"{place}_choice_{k}", "") for k in ("prefix", "a", "b"))


def table_ui(options: list[Option]) -> None:
    rows = [
        {
            text.TABLE_COLUMNS[0]: o.text.strip(),
            text.TABLE_COLUMNS[1]: " · ".join(repr(t)[1:-1] for t in o.tokens),
            text.TABLE_COLUMNS[2]: round(o.logprob, 3),
            text.TABLE_COLUMNS[3]: f"{np.exp(o.logprob):.2g}",
        }
        for o in options
    ]
    st.dataframe(rows, hide_index=True)


def continuation_ui(place: str, model_key: str, sentence: str) -> None:
    """The whole panel for one sentence (explore's focus view, for a decoder)."""
    limits = current_limits()
    st.markdown(f"#### {text.TITLE}")
    st.caption(text.INTRO)
    probe = boxes_ui(place, sentence)
    prefix, *typed = asked(place)
    reader = reader_of(place, probe)
    partner = PROBES[probe.partner] if reader and probe.partner else None
    together = (partner.prefix,) if partner and partner.options == tuple(typed) else ()
    if (options := ask(place, model_key, limits, prefix, tuple(typed), together)) is None:
        return
    st.markdown(verdict(options, reader))
    table_ui(options)
    if partner:
        _partner_ui(place, model_key, limits, (probe, partner), options)
    st.caption(text.CAPTION)


def _partner_ui(
    place: str, model_key: str, limits: Limits, probes: tuple[Probe, Probe], options: list[Option]
) -> None:
    """The same question after the minimal pair's other sentence: only both answers together say
    whether the model's choice follows the meaning."""
    probe, partner = probes
    together = (probe.prefix,) if partner.options == probe.options else ()  # scored with it: cached
    other = ask(f"{place}_partner", model_key, limits, partner.prefix, partner.options, together)
    if other is None:
        return
    said = text.PARTNER.format(label=md(partner.label)) + verdict(other, partner.reader)
    names = (f"“{md(probe.label)}”", f"“{md(partner.label)}”")
    st.markdown(said + " " + pair_statement(options, other, (probe.reader, partner.reader), names))


# ---- compare: the same two continuations after each sentence -------------------------------------


def pair_statement(
    first: list[Option], second: list[Option], readers: tuple[str | None, str | None], names: tuple[str, str]
) -> str:
    """Whether the preference changes between the two sentences (named `names`), and whether it
    changes with the meaning when a reader's answers are known and differ."""
    chosen = (preferred(first), preferred(second))
    words = {"first": md(chosen[0]), "second": md(chosen[1]), "one": names[0], "two": names[1]}
    if None in readers or readers[0].casefold() == readers[1].casefold():
        return text.PAIR_OTHER.format(**words)
    folded = [c.casefold() for c in chosen]
    if folded == [reader.casefold() for reader in readers]:
        return text.PAIR_FOLLOWS.format(**words)
    if folded[0] == folded[1]:
        return text.PAIR_SAME.format(**words)
    return text.PAIR_AGAINST.format(**words)


def pair_ui(place: str, model_key: str, sentences: tuple[str, str]) -> None:
    """Compare's panel: two continuations, scored after each sentence's probe (the sentence itself
    when it has none), each verdict in its column, then whether the preference follows the change."""
    limits, ss = current_limits(), st.session_state
    probes = [probe_for(sentence) for sentence in sentences]
    st.subheader(text.PAIR_TITLE)
    st.caption(text.PAIR_INTRO)
    if ss.get(f"{place}_choice_for") != sentences:
        ss[f"{place}_choice_for"] = sentences
        ss[f"{place}_choice_a"], ss[f"{place}_choice_b"] = probes[0].options
    option_boxes_ui(place)
    kept = all((ss[f"{place}_choice_a"], ss[f"{place}_choice_b"]) == p.options for p in probes)
    answers = []
    for n, (col, probe) in enumerate(zip(st.columns(2), probes, strict=True), start=1):
        with col:
            st.markdown(f"**{n}.** {md(probe.prefix)} …")
            typed = (ss[f"{place}_choice_a"], ss[f"{place}_choice_b"])
            others = tuple(p.prefix for p in probes if p.prefix != probe.prefix)  # one batched pass
            if (options := ask(f"{place}{n}", model_key, limits, probe.prefix, typed, others)) is None:
                return
            st.markdown(verdict(options, probe.reader if kept else None))
            table_ui(options)
            answers.append(options)
    readers = tuple(p.reader for p in probes) if kept else (None, None)
    st.markdown(pair_statement(*answers, readers, ("sentence 1", "sentence 2")))
    st.caption(text.CAPTION)
