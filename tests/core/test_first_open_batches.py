"""The batched computations behind the first opens on SmolLM2 (issue 49), each equal to the one at a
time it replaces, within 1e-5, on tiny GPT-2 and Llama checkpoints built here: choose_each's padded
batch of texts against every text run on its own; the logit lens's readings unembedded together
against one layer at a time."""

from __future__ import annotations

import numpy as np
import pytest

from core.lesson.attention import softmax
from core.measures.choice import choose, choose_each, log_softmax, option_ids
from core.measures.decoder_reads import logit_lens
from core.models.architectures import load_engine
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

# two prefixes of one length (one batch) and a third of another; options of one token and of several
PREFIXES = (
    "The trophy would not fit in the suitcase because it was too big. The thing that was too big was the",
    "The trophy would not fit in the suitcase because it was too red. The thing that was too red was the",
    "The bank approved the",
)
OPTIONS = (" trophy", " suitcase", " big red box", " river bank", " trophy")


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def engine(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    if request.param == "gpt2":
        return load_engine(str(make_tiny_gpt2(folder, n_layer=2, n_head=4, n_embd=32, n_positions=128)))
    return load_engine(str(make_tiny_llama(folder, layers=3, positions=128)))


def one_at_a_time(engine, prefix: str, option: str) -> list[float]:
    """Each token's log-probability, from the whole text (prefix + option) run alone."""
    prefix_ids, ids = list(engine.encode(prefix).ids), option_ids(engine, option)
    final = engine.forward(np.array(prefix_ids + ids)).hidden_states[-1]
    logprobs = log_softmax(engine.unembed(final))
    n = len(prefix_ids)
    return [float(logprobs[n - 1 + j, t]) for j, t in enumerate(ids)]


def test_the_batch_is_each_text_run_alone(engine):
    lengths = [len(engine.encode(p).ids) for p in PREFIXES]
    assert lengths[0] == lengths[1] != lengths[2]  # one batch of two, and one alone
    n_tokens = {len(option_ids(engine, o)) for o in OPTIONS}
    assert min(n_tokens) == 1 and len(n_tokens - {1}) > 1  # texts of different lengths: padded
    for prefix, (tokens, options) in zip(PREFIXES, choose_each(engine, PREFIXES, OPTIONS), strict=True):
        assert tokens == [engine.decode(i) for i in engine.encode(prefix).ids]
        assert [o.text for o in options] == list(OPTIONS)  # the same option twice: scored twice
        for option in options:
            each = one_at_a_time(engine, prefix, option.text)
            assert option.token_ids == option_ids(engine, option.text)
            assert option.logprob == pytest.approx(sum(each), abs=1e-5)
            assert option.first_logprob == pytest.approx(each[0], abs=1e-5)


def test_choose_is_choose_each_of_one_prefix(engine):
    alone = choose(engine, PREFIXES[0], OPTIONS)
    together = choose_each(engine, PREFIXES, OPTIONS)[0]
    assert alone[0] == together[0]
    for a, b in zip(alone[1], together[1], strict=True):
        assert a.token_ids == b.token_ids and a.logprob == pytest.approx(b.logprob, abs=1e-5)


def lens_one_layer_at_a_time(engine, hidden_states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The lens as it was computed before: a (T, V) softmax per reading."""
    top_ids, top_probs = [], []
    for i, hidden in enumerate(hidden_states):
        reading = hidden if i == len(hidden_states) - 1 else engine.final_normed(hidden)
        probs = softmax(engine.unembed(reading).astype(np.float64))
        top = probs.argmax(-1)
        top_ids.append(top)
        top_probs.append(probs[np.arange(len(top)), top])
    return np.stack(top_ids), np.stack(top_probs)


@pytest.mark.parametrize("rows", [1, 5, 64])
def test_the_lens_read_together_is_the_lens_one_layer_at_a_time(engine, rows, monkeypatch):
    """Whatever the number of readings unembedded at once (LENS_ROWS), the grid is the same."""
    monkeypatch.setattr("core.measures.decoder_reads.LENS_ROWS", rows)
    hidden = engine.run(PREFIXES[0]).hidden_states
    lens = logit_lens(engine, hidden[:, -16:])
    ids, probs = lens_one_layer_at_a_time(engine, hidden[:, -16:])
    np.testing.assert_array_equal(lens.top_ids, ids)
    np.testing.assert_allclose(lens.top_probs, probs, atol=1e-5)
