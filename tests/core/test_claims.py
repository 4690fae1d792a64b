"""core/measures/claims.py: the kinds' table, the causal blind spot worked by hand, and the fact it
rests on checked on real causal engines (a tiny GPT-2 and a tiny Llama built here): everything
computed at a position before the first token that differs is the same in both inputs."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.analysis import rank_heads_specific
from core.measures.claims import CLAIMS, KINDS, Blind, blind_spot, first_token_difference, may_claim
from core.models.gpt2 import GPT2Numpy
from core.models.llama import LlamaNumpy
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

LARGE = "The trophy wouldn't fit in the suitcase because it was too large."
SMALL = "The trophy wouldn't fit in the suitcase because it was too small."


def test_the_table_names_only_known_kinds_and_refuses_an_unknown_one():
    assert all(claim.kinds <= set(KINDS) for claim in CLAIMS.values())
    assert may_claim("continuation", "decoder") and not may_claim("continuation", "encoder")
    assert not may_claim("next_token_share", "decoder") and may_claim("pattern", "cross")
    with pytest.raises(ValueError, match="unknown kind"):
        may_claim("pattern", "recurrent")


def test_first_token_difference_by_hand():
    assert first_token_difference(["a", "b", "c"], ["a", "x", "c"]) == 1
    assert first_token_difference(["a", "b"], ["a", "b", "c"]) == 2  # one is the start of the other
    assert first_token_difference(["a"], ["a"]) == 1


def test_blind_spot_by_hand():
    one = ["The", "Ġtrophy", "Ġit", "Ġwas", "Ġlarge"]
    two = ["The", "Ġtrophy", "Ġit", "Ġwas", "Ġsmall"]
    assert blind_spot("decoder", one, two, 2) == Blind(2, 4, "Ġlarge", "Ġsmall")  # "it" before the change
    assert blind_spot("decoder", one, two, 4) is None  # at the change: it sees it
    assert blind_spot("encoder", one, two, 2) is None and blind_spot("cross", one, two, 2) is None
    assert blind_spot("decoder", one[:4], one, 1) == Blind(1, 4, "", "Ġlarge")  # past the end of one
    assert blind_spot("decoder", one, list(one), 2) is None  # identical inputs: nothing to tell apart


@pytest.fixture(scope="module")
def decoders(tmp_path_factory):
    return [
        GPT2Numpy.from_pretrained(make_tiny_gpt2(tmp_path_factory.mktemp("claims_gpt2"))),
        LlamaNumpy.from_pretrained(make_tiny_llama(tmp_path_factory.mktemp("claims_llama"))),
    ]


def test_a_causal_model_computes_the_same_numbers_before_the_change(decoders):
    """The premise of the blind spot, measured: up to the token before the first difference, every
    layer's hidden state and every attention row are equal in the two sentences; at the difference
    they part."""
    for engine in decoders:
        one, two = engine.run(LARGE), engine.run(SMALL)
        changed = first_token_difference(one.tokens, two.tokens)
        assert 0 < changed < one.n_tokens
        before = slice(0, changed)
        np.testing.assert_allclose(one.hidden_states[:, before], two.hidden_states[:, before], atol=1e-6)
        np.testing.assert_allclose(
            one.attentions[:, :, before, :changed], two.attentions[:, :, before, :changed], atol=1e-6
        )
        assert not np.allclose(one.hidden_states[1:, changed], two.hidden_states[1:, changed], atol=1e-4)
        it = next(i for i, token in enumerate(one.tokens) if token.lstrip("Ġ") == "it")
        assert blind_spot("decoder", one.tokens, two.tokens, it) is not None


def test_a_causal_specific_score_averages_only_the_rows_that_see_the_target():
    """Five tokens, target 2, focus 4. Causally rows 0 and 1 cannot see the target (0 by the mask):
    the other rows are row 3 alone, so others = 0.3 and specific = 0.5 - 0.3. Without the rule the
    mask's two zeros would dilute it to 0.3 / 3 and flatter the head."""
    attn = np.zeros((1, 1, 5, 5))
    attn[0, 0, 3, 2], attn[0, 0, 4, 2] = 0.3, 0.5  # rows 3 and 4 see target 2
    link = rank_heads_specific(attn, 4, 2, causal=True)[0]
    assert (link.weight, link.others, link.specific) == pytest.approx((0.5, 0.3, 0.2))
    diluted = rank_heads_specific(attn, 4, 2)[0]  # rows 0, 1 and 3
    assert diluted.others == pytest.approx(0.1)
