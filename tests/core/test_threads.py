"""Thread safety (issue 5, section 3): Streamlit runs each session in its own thread, and all
sessions share one loaded model and its tokenizer (st.cache_resource). Forward passes started at
the same moment from many threads must give exactly what the same calls give one after another:
same tokens, bit-identical attention and hidden states. Fast tokenizers raise "Already borrowed"
when used by two threads at once, and a scratch buffer shared between calls would mix results;
both would show here.

Both engines run the bundled model: core/models/pretrained.py's PretrainedModel (torch) and
core/models/bert.py's BertNumpy. A last test goes through the page's own cached loader, as concurrent
sessions do.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from core.models.bert import load_numpy
from core.models.pretrained import load_pretrained

pytestmark = pytest.mark.slow

THREADS = 6
ROUNDS = 2  # each thread runs every job this many times (the 512-token one once), in its own order
JOBS: list[tuple[str, str | None]] = [
    ("The trophy wouldn't fit in the suitcase because it was too large.", None),
    ("I love NLP", None),
    ("The bank approved the loan.", "We had a picnic on the bank of the river."),  # a sentence pair
    ("日本語 العربية עברית 😀 naïve café", None),
    ("word " * 40, None),
    ("the cat sat on the mat " * 100, None),  # cut at 512 tokens
]


@pytest.fixture(scope="module", params=["torch", "numpy"])
def model(request):
    return load_pretrained("bundled") if request.param == "torch" else load_numpy("bundled")


def assert_same(result, expected, job) -> None:
    assert result.tokens == expected.tokens, job
    assert result.word_ids == expected.word_ids, job
    assert result.truncated == expected.truncated, job
    np.testing.assert_array_equal(result.special_mask, expected.special_mask)
    np.testing.assert_array_equal(result.attentions, expected.attentions, err_msg=str(job))
    np.testing.assert_array_equal(result.hidden_states, expected.hidden_states, err_msg=str(job))


def test_concurrent_runs_on_one_model_equal_serial_runs(model):
    serial = [model.run(text, pair) for text, pair in JOBS]
    start = threading.Barrier(THREADS)

    jobs = [*range(len(JOBS) - 1)] * ROUNDS + [len(JOBS) - 1]

    def worker(seed: int) -> list[tuple[int, object]]:
        order = np.random.default_rng(seed).permutation(jobs)
        start.wait()  # every thread starts its first forward pass at the same moment
        return [(int(i), model.run(*JOBS[i])) for i in order]

    with ThreadPoolExecutor(THREADS) as pool:
        done = [pair for chunk in pool.map(worker, range(THREADS)) for pair in chunk]
    assert len(done) == THREADS * len(jobs)
    for i, result in done:  # compared after every thread finished: no result was overwritten
        assert_same(result, serial[i], JOBS[i])


def test_tokenizing_alone_interleaved_with_runs_is_safe(model):
    """encode() (hosted mode's token cap uses it) shares the tokenizer with run()."""
    text = JOBS[0][0]
    expected_tokens = model.run(text).tokens
    start = threading.Barrier(THREADS)

    def worker(i: int) -> list[str]:
        start.wait()
        out = []
        for _ in range(5):
            out.append(model.encode(text).tokens if i % 2 else model.run(text).tokens)
        return out

    with ThreadPoolExecutor(THREADS) as pool:
        for tokens_list in pool.map(worker, range(THREADS)):
            assert all(tokens == expected_tokens for tokens in tokens_list)


def test_concurrent_sessions_share_one_load_through_the_page_cache(monkeypatch, tmp_path):
    """Sessions that open the explore page at the same moment load the model once (the page's
    st.cache_resource) and get the same results as a lone session."""
    from dashboard import engines as explore
    from tests.tiny_bert import make_tiny_bert

    folder = str(make_tiny_bert(tmp_path / "shared", hidden_size=16, num_heads=2, num_layers=2))
    engine = explore.DEFAULT_ENGINE
    choice = explore.ENGINES[engine]
    loads = []

    def counting_load(path, *, name):
        loads.append(path)
        return choice.load(path, name=name)

    monkeypatch.setitem(explore.ENGINES, engine, explore.EngineChoice(choice.label, counting_load, None))
    explore.cached_engine.clear(folder, engine, False)
    start = threading.Barrier(THREADS)
    texts = [text for text, _pair in JOBS]

    def session(i: int):
        start.wait()
        return [
            explore.load_engine(folder, engine).run(texts[(i + k) % len(texts)]) for k in range(len(texts))
        ]

    try:
        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(session, range(THREADS)))
        assert len(loads) == 1
        lone = explore.load_engine(folder, engine)
        serial = [lone.run(text) for text in texts]
        for i, results_of_session in enumerate(results):
            for k, result in enumerate(results_of_session):
                assert_same(result, serial[(i + k) % len(texts)], texts[(i + k) % len(texts)])
    finally:
        explore.cached_engine.clear(folder, engine, False)
