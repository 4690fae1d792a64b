"""What `python -m core prepare` writes is what the dashboard reads: on tiny stand-in models, after
core.prepare.prepare, vectors_ready and atlas_ready say so (asking only whether the files exist),
the atlas page opens its atlas from disk with no progress bar, and explore's nearest words come
from the prepared vectors with nothing computed. Without them, the dashboard's functions compute
with a progress callback that counts to the total, instead of drawing their own bar or spinner."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core import prepare as prep
from dashboard.content.atlas import corpus
from tests.dashboard.harness import assert_no_crash, page_script
from tests.dashboard.test_atlas import N_SMALL, SMALL_SCRIPT
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_bert import make_tiny_bert
from tests.tiny_gpt2 import make_tiny_gpt2


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    import streamlit as st

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> str:
    return str(make_tiny_gpt2(tmp_path_factory.mktemp("prepared-gpt2")))


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("prepared-bert"), num_layers=2))


def words(at: AppTest) -> str:
    return " ".join(str(e.value) for e in (*at.caption, *at.markdown, *at.info))


def test_a_prepared_atlas_is_ready_and_the_page_opens_it_from_disk(gpt2):
    from dashboard.views.atlas.compute import atlas_ready

    sentences = corpus()[:N_SMALL]  # the sentences SMALL_SCRIPT's page measures
    assert not atlas_ready(gpt2, "numpy", sentences)
    assert all(p.ready for p in prep.prepare(gpt2, sentences))
    assert atlas_ready(gpt2, "numpy", sentences) and atlas_ready(gpt2, "torch", sentences)
    at = AppTest.from_string(SMALL_SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params["model"] = gpt2
    at.run()
    assert_no_crash(at)
    assert not at.error and "opened from the cache on disk" in words(at)
    assert "test_progress_bars" not in at.session_state  # nothing measured: no bar drawn


def test_prepared_vectors_are_ready_and_explore_reads_them_computing_nothing(bert, monkeypatch):
    from dashboard import corpus_vectors as cv

    assert not cv.vectors_ready(bert)
    assert all(p.ready for p in prep.prepare(bert))  # the whole built-in corpus, as explore reads it
    assert cv.vectors_ready(bert)

    def no_compute(*args, **kwargs):
        raise AssertionError("the corpus vectors were computed again")

    monkeypatch.setattr("core.measures.neighbours.collect", no_compute)
    at = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"model": bert, "view": "similarity", "text": "The bank approved the loan."})
    at.run()
    assert_no_crash(at)
    assert not at.error and any(m.value.startswith("1. **") for m in at.markdown), words(at)
    assert cv.corpus_vectors(bert).hidden.shape[1] > 0 and cv.vectors_ready(bert)


def test_without_them_the_dashboard_computes_counting_to_the_total(bert):
    from dashboard import corpus_vectors as cv
    from dashboard.views.atlas import compute

    counts = []
    found = cv.corpus_vectors(bert, progress=lambda done, total: counts.append((done, total)))
    n = len(corpus())
    assert counts == [(d, n) for d in range(n + 1)] and len(found.tokens) > n
    assert cv.vectors_ready(bert)
    plane = cv.corpus_qk(bert, 1, 0, progress=lambda done, total: counts.append((done, total)))
    assert plane.queries.shape == (len(found.tokens), 2) and len(counts) == n + 1  # from memory
    sentences = corpus()[:N_SMALL]
    counts.clear()
    measured = compute.corpus_atlas(bert, "numpy", sentences, progress=lambda d, t: counts.append((d, t)))
    assert measured.source == "computed" and counts == [(d, N_SMALL) for d in range(N_SMALL + 1)]
    assert compute.atlas_ready(bert, "numpy", sentences)
    assert compute.corpus_atlas(bert, "numpy", sentences).source == "memory"
