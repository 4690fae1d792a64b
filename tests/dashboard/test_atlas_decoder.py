"""The atlas page on a decoder (issue 29, "Atlas"): a GPT-2 built by hand (tests/role_gpt2.py) whose
four heads are a previous-token head, a first-token sink, an induction head and a self head. The
role filter (the page's legend, with each role's head count) names the decoder roles; the table has
the decoder's statistics (no [CLS], [SEP] or next token) with the numbers core.measures.atlas gives;
the page states the thresholds and the induction test's length and seed; a link's encoder statistic
falls back to the role map; an old cache file without the decoder's fields is recomputed; the
user's sentence, a one-token sentence, bad links and presenter mode.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core.measures.atlas import (
    ALL_STATS,
    DECODER_STATS,
    FIRST_TOKEN,
    INDUCTION,
    INDUCTION_SCORE,
    STATS,
    HeadAtlas,
    cache_path,
    compute_atlas,
    corpus_hash,
    head_roles,
    load_atlas,
    measure_induction,
    save_atlas,
)
from dashboard.content.atlas import corpus
from dashboard.engines import files_fingerprint
from tests.dashboard.harness import (
    FUZZ,
    assert_answered,
    assert_no_crash,
    chart_specs,
    messages,
    named_links,
    page_script,
    plotly_array,
)
from tests.dashboard.test_atlas import N_SMALL, PRESENTER_SCRIPT, SMALL_SCRIPT
from tests.deadline import APPTEST_DEADLINE
from tests.role_gpt2 import make_role_gpt2


@pytest.fixture(autouse=True)
def fresh_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    from dashboard.views.atlas.compute import memory_store

    memory_store.clear()
    yield
    memory_store.clear()


@pytest.fixture(scope="module")
def role_model(tmp_path_factory):
    return str(make_role_gpt2(tmp_path_factory.mktemp("atlas_role_gpt2")))


@pytest.fixture(scope="module")
def expected(role_model) -> HeadAtlas:
    from core.models.gpt2 import GPT2Numpy

    engine = GPT2Numpy.from_pretrained(role_model)
    sentences = corpus()[:N_SMALL]
    return compute_atlas(
        [engine.run(s) for s in sentences],
        model=role_model,
        corpus_hash=corpus_hash(sentences),
        induction=measure_induction(engine),
    )


def open_page(script: str = SMALL_SCRIPT, **params: str) -> AppTest:
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at)
    return at


def text_of(at: AppTest) -> str:
    return " ".join(str(e.value) for e in (*at.caption, *at.markdown, *at.info))


def test_the_legend_names_the_decoder_roles_and_the_table_has_a_decoder_s_numbers(role_model, expected):
    at = open_page(model=role_model)
    assert not at.error, messages(at)
    pills = [p for p in at.get("button_group") if "Show roles" in str(p.proto.label)]
    labels = [opt.content for opt in pills[0].proto.options]
    assert labels == [f"{INDUCTION} · 1", f"{FIRST_TOKEN} · 1", "self · 1", "previous token · 1"]
    rows = at.dataframe[0].value
    assert list(rows["role"]) == ["previous token", FIRST_TOKEN, INDUCTION, "self"]
    assert list(rows["role"]) == list(head_roles(expected).ravel())
    assert set(DECODER_STATS) <= set(rows.columns) and not {"to_cls", "to_sep", "to_next"} & set(rows.columns)
    for name in DECODER_STATS:
        np.testing.assert_allclose(
            rows[name], expected.stat(name).ravel(), rtol=1e-6, atol=1e-12, err_msg=name
        )
    words = text_of(at)
    assert "32 random tokens repeated twice (seed 0)" in words  # the induction test, as measured
    assert f"induction score of at least {INDUCTION_SCORE:.2f}" in words  # the thresholds, stated
    assert "first-token sink" in words and "at least 50%" in words
    assert "averaged over every token after the first" in words
    hover = chart_specs(at)[0]["data"][-1]["text"]
    assert "induction: 0.9" in hover[2] and "→ [CLS]" not in hover[0]


def test_the_grid_shows_a_decoder_statistic_and_an_encoder_s_falls_back(role_model, expected):
    at = open_page(model=role_model, stat="induction")
    np.testing.assert_allclose(
        plotly_array(chart_specs(at)[0]["data"][0]["z"]), expected.induction, rtol=1e-6
    )
    options = at.selectbox(key="atlas_stat").options
    assert "Share of attention to the first token" in options and not any("[CLS]" in o for o in options)
    at = open_page(model=role_model, stat="to_cls")
    assert "is not measured on a decoder: showing roles" in text_of(at)
    assert at.selectbox(key="atlas_stat").value == "role"
    assert at.query_params.get("stat", "role") == "role"  # the default is left out of the link


def test_an_old_decoder_cache_file_is_recomputed(role_model, expected):
    path = cache_path(role_model, expected.corpus_hash, fingerprint=files_fingerprint(role_model))
    old = HeadAtlas(**{n: np.full(expected.to_cls.shape, 0.9) for n in STATS}, n_sentences=N_SMALL,
                    n_rows=100, model=role_model, corpus_hash=expected.corpus_hash)  # fmt: skip
    assert save_atlas(old, path)  # a GPT-2's atlas as the page wrote it before it measured decoders
    at = open_page(model=role_model)
    assert "computed now and saved" in text_of(at)
    assert list(at.dataframe[0].value["role"]) == list(head_roles(expected).ravel())
    saved = load_atlas(path, model=role_model, corpus=expected.corpus_hash, decoder=True)
    assert saved is not None and saved.decoder  # replaced by the new kind
    from dashboard.views.atlas.compute import memory_store

    memory_store.clear()
    assert "opened from the cache on disk" in text_of(open_page(model=role_model))


def test_your_sentence_on_a_decoder(role_model):
    at = open_page(model=role_model, on="sentence", text="The cat sat on the mat and the cat sat.")
    assert not at.error, messages(at)
    assert "your sentence only" in text_of(at) and "random tokens repeated twice" in text_of(at)
    roles = list(at.dataframe[0].value["role"])
    assert roles[:3] == ["previous token", FIRST_TOKEN, INDUCTION]
    at = open_page(model=role_model, on="sentence", text="A")
    assert "single token" in text_of(at) and not at.error


def test_presenter_mode_on_a_decoder(role_model):
    at = open_page(PRESENTER_SCRIPT, model=role_model, present="1")
    assert not at.error and chart_specs(at)[0]["layout"]["font"]["size"] >= 20
    cells = chart_specs(at)[0]["data"][0]["text"]
    assert [list(r) for r in cells] == [["prev.", "first"], ["induct.", "self"]]


DECODER_LINKS = {
    "stat": st.sampled_from(["role", *ALL_STATS, "", "to_next;"]),
    "roles": st.sampled_from(["first,induction", "cls,sep,next", "induction", "bogus,first", ""]),
    "on": st.sampled_from(["corpus", "sentence"]),
    "text": st.sampled_from(["", "A", "<|endoftext|>", "<|endoftext|> then text", "\u202e reversed"]),
}


def test_decoder_links(role_model):
    script = page_script("atlas")
    memory = {}

    @FUZZ
    @named_links(list(DECODER_LINKS), {"model": role_model})
    @given(params=st.fixed_dictionaries({}, optional=DECODER_LINKS))
    def case(params):
        at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
        at.query_params.update({"model": role_model, **params})
        at.run()
        assert_answered(at, params)
        memory.update(params)

    case()
    assert set(DECODER_LINKS) <= set(memory)
