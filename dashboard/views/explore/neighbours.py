"""The similarity view's corpus search (exBERT's, Hoover et al. 2020): the focus word's vector after
the chosen layer against every word of the built-in corpus (core/measures/neighbours.py), the ten nearest
listed with their sentences, the word in bold."""

from __future__ import annotations

import re

import numpy as np
import streamlit as st

from core.measures.analysis import TokenView
from core.measures.neighbours import CorpusVectors, nearest
from core.measures.similarity import item_vectors
from core.models.errors import ModelError
from core.models.result import AttentionResult
from dashboard.content import neighbours as text
from dashboard.content.atlas import corpus
from dashboard.views.explore.corpus_work import corpus_may_start, read_corpus
from dashboard.views.explore.results import shown_source
from dashboard.widgets import error_md, md

K = 10


def marked(sentence: str, word: str, nth: int) -> str:
    """The sentence as markdown, escaped, with the nth (0-based) whole-word occurrence of `word`
    (any case) in bold; the sentence and the word apart when the tokenizer's spelling is not found
    in it (an uncased model strips accents)."""
    found = list(re.finditer(rf"(?<!\w){re.escape(word)}(?!\w)", sentence, flags=re.IGNORECASE))
    if nth >= len(found):
        return f"**{md(word)}** · {md(sentence)}"
    a, b = found[nth].span()
    return f"{md(sentence[:a])}**{md(sentence[a:b])}**{md(sentence[b:])}"


def occurrence(found: CorpusVectors, index: int) -> int:
    """How many earlier words of the same sentence are spelled like word `index` (any case)."""
    sentence, word = found.word_sentence[index], found.words[index].lower()
    earlier = np.flatnonzero(found.word_sentence[:index] == sentence)
    return sum(found.words[i].lower() == word for i in earlier)


def neighbours_ui(result: AttentionResult, view: TokenView, item: int, layer: int, where: str) -> None:
    """The K corpus words nearest the shown item `item` after `layer` (0 = the embeddings)."""
    start, stop = view.shown_spans[item]
    word = view.labels[item]
    st.subheader(text.TITLE.format(word=md(word), where=where))
    if all(result.special_mask[start:stop]):
        st.info(text.SPECIAL)
        return
    model_key, _, sentence, _ = shown_source()
    try:
        if not corpus_may_start(model_key):
            return
        found = read_corpus(model_key)
    except (ModelError, ValueError) as err:
        st.info(text.UNAVAILABLE.format(reason=error_md(err)))
        return
    sentences = corpus()
    own = {n for n, s in enumerate(sentences) if s.strip() == sentence.strip()}
    query = item_vectors(result.hidden_states[layer], [(start, stop)])[0]
    extra = int(np.isin(found.word_sentence, list(own)).sum())
    hits = nearest(found, query, layer, K + extra)  # enough to leave the sentence's own words out
    hits = [(i, c) for i, c in hits if found.word_sentence[i] not in own][:K]
    caption = text.CAPTION.format(k=K, n=len(sentences), where=where, word=md(word))
    st.caption(caption + (text.LEFT_OUT if own else ""))
    same = [i for i, _ in hits if found.words[i].lower() == word.lower()]
    if same:
        total = sum(w.lower() == word.lower() for w in found.words)
        st.markdown(text.SAME_WORD.format(same=len(same), k=len(hits), word=md(word), total=total))
    else:
        st.markdown(text.NONE_SAME.format(k=len(hits), word=md(word)))
    lines = [
        text.LINE.format(
            rank=rank,
            cosine=cosine,
            sentence=marked(sentences[found.word_sentence[i]], found.words[i], occurrence(found, i)),
        )
        for rank, (i, cosine) in enumerate(hits, start=1)
    ]
    st.markdown("\n".join(lines))
