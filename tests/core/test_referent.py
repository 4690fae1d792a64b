"""The pronoun test (core/measures/referent.py): the cosine by hand on a made-up result, which words count
as candidates, word pieces averaged, other hidden states measured in place of the result's, and the
bundled model on the trophy and bank sentences recomputed from its hidden states with plain NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.referent import closeness, is_content_word
from core.models.result import AttentionResult

TROPHY = "The trophy wouldn't fit in the suitcase because it was too {}."


def made_up(tokens, word_ids, hidden) -> AttentionResult:
    t = len(tokens)
    layers = hidden.shape[0] - 1
    return AttentionResult(
        tokens=tokens,
        attentions=np.full((layers, 1, t, t), 1.0 / t, dtype=np.float32),
        hidden_states=hidden.astype(np.float32),
        special_mask=np.array([tok in ("[CLS]", "[SEP]") for tok in tokens]),
        word_ids=word_ids,
        model="made-up",
        engine="numpy",
    )


def test_cosine_candidates_and_pieces_by_hand():
    tokens = ["[CLS]", "it", "was", "zebra", "##fish", "cat", ".", "[SEP]"]
    word_ids = [None, 0, 1, 2, 2, 3, 4, None]
    rng = np.random.default_rng(0)
    hidden = rng.normal(size=(3, 8, 5))
    close = closeness(made_up(tokens, word_ids, hidden), focus_token=1)
    assert close.words == ["[CLS]", "it", "was", "zebrafish", "cat", ".", "[SEP]"]
    assert close.focus == 1
    assert close.candidates == [3, 4]  # "was", ".", [CLS], [SEP] and "it" itself are not candidates
    zebrafish = hidden[:, 3:5].mean(axis=1)  # (L + 1, D)
    it = hidden[:, 1]
    want = (zebrafish * it).sum(-1) / np.linalg.norm(zebrafish, axis=-1) / np.linalg.norm(it, axis=-1)
    np.testing.assert_allclose(close.cosine[:, 3], want, rtol=1e-5)
    np.testing.assert_allclose(close.cosine[:, 1], 1.0, rtol=1e-6)
    better = 3 if want[-1] > close.cosine[-1, 4] else 4
    assert close.nearest() == better and close.ranked()[0] == better
    other = rng.normal(size=(1, 8, 5))  # e.g. the last layer with heads ablated
    again = closeness(made_up(tokens, word_ids, hidden), focus_token=1, hidden=other)
    assert again.cosine.shape == (1, 7)
    v = other[0, 3:5].mean(axis=0)
    expected = v @ other[0, 1] / np.linalg.norm(v) / np.linalg.norm(other[0, 1])
    assert again.cosine[0, 3] == pytest.approx(expected, rel=1e-5)


def test_a_sentence_of_function_words_has_no_candidate():
    tokens = ["[CLS]", "it", "was", "it", "[SEP]"]
    hidden = np.random.default_rng(1).normal(size=(2, 5, 4))
    close = closeness(made_up(tokens, [None, 0, 1, 2, None], hidden), focus_token=1)
    assert close.candidates == [] and close.nearest() is None and close.ranked() == []


@pytest.mark.parametrize(
    ("word", "content"), [("trophy", True), ("It", False), ("the", False), ("'", False), ("42", True)]
)
def test_content_words(word, content):
    assert is_content_word(word) is content


def plain_nearest(result, focus_word: str) -> tuple[str, float]:
    """The content word nearest to `focus_word` after the last layer, recomputed here from the
    result's hidden states (whole words only: these sentences have no pieces among the nouns)."""
    last = result.hidden_states[-1].astype(np.float64)
    tokens = result.tokens
    focus = last[tokens.index(focus_word)]
    best = max(
        (
            t
            for t in ("trophy", "suitcase", "fit", "large", "small", "bank", "loan", "approved")
            if t in tokens and t != focus_word
        ),
        key=lambda t: last[tokens.index(t)] @ focus / np.linalg.norm(last[tokens.index(t)]),
    )
    v = last[tokens.index(best)]
    return best, float(v @ focus / np.linalg.norm(v) / np.linalg.norm(focus))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "focus"),
    [(TROPHY.format("large"), "it"), (TROPHY.format("small"), "it"), ("The bank approved the loan.", "bank")],
)
def test_bundled_model_nearest_word_recomputed(text, focus):
    from core.models import bundled
    from core.models.bert import BertNumpy

    result = BertNumpy.from_pretrained(bundled.bundled_files()).run(text)
    close = closeness(result, result.tokens.index(focus))
    word, cosine = plain_nearest(result, focus)
    nearest = close.nearest()
    assert close.words[nearest] == word
    assert close.cosine[-1, nearest] == pytest.approx(cosine, abs=1e-6)
