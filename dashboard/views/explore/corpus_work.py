"""The corpus vectors behind the similarity view's nearest words and the query/key space: read from
memory or disk when ready (dashboard/corpus_vectors.py), else computed once per machine, which on a
large model takes long: asked for first, with the command that prepares them before class, and then
counted (dashboard/long_work.py)."""

from __future__ import annotations

from core.measures.neighbours import CorpusVectors
from dashboard import long_work
from dashboard.content import neighbours as text
from dashboard.content.atlas import corpus
from dashboard.corpus_vectors import ENGINE, computing, corpus_vectors, vectors_ready
from dashboard.engines import load_engine


def corpus_work(model_key: str) -> long_work.Work:
    """One pass per corpus sentence, over its estimated token positions."""
    return long_work.Work.over("corpus", model_key, load_engine(model_key, ENGINE), corpus())


def corpus_may_start(model_key: str) -> bool:
    """Whether the corpus vectors may be read now: ready, short to compute here, or asked for."""
    if vectors_ready(model_key):
        return True
    work = corpus_work(model_key)
    what = text.ASK_WHAT.format(n=work.runs)
    note = text.PREPARE.format(command=long_work.prepare_command(model_key))
    return long_work.may_start(work, model_key, what, text.BUTTON.format(n=work.runs), note)


def read_corpus(model_key: str) -> CorpusVectors:
    """The corpus vectors, with a counting bar when they are computed now (call corpus_may_start first)."""
    if vectors_ready(model_key):
        return corpus_vectors(model_key)
    with long_work.counting(corpus_work(model_key), text.PROGRESS, first=computing(model_key)) as progress:
        return corpus_vectors(model_key, progress)
