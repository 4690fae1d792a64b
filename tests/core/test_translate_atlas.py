"""The translator's head atlas (core/translate/atlas.py, issue 38 §3): every number recomputed here with
plain loops, one pair at a time (no batch, no padding), on the shipped translator and on a tiny random
one; the roles against the rule the module states, with the thresholds it declares; the crossing
links and the position yardstick by hand; and the shipped model's alignments against its training
record (the same held-out pairs)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from core.translate.atlas import (
    ALIGNER,
    ALIGNER_SCORE,
    BROAD,
    BROAD_ENTROPY,
    END_SINK,
    EVAL_SEED,
    FIRST_TOKEN,
    KIND_ROLES,
    KIND_STATS,
    KINDS,
    MIXED,
    ROLE_SHARE,
    KindAtlas,
    by_position,
    corpus_pairs,
    crossing_links,
    kind_roles,
    measure,
)
from core.translate.data import BOS, EOS, vocabulary
from core.translate.engine import TRANSLATOR_DIR, TranslatorEngine
from core.translate.grammar import Pair, sample_pairs
from core.translate.model import TranslatorConfig, forward, init_params
from core.translate.trainer import PROBE


@pytest.fixture(scope="module")
def shipped():
    engine = TranslatorEngine(TRANSLATOR_DIR)
    pairs = corpus_pairs()
    return engine, pairs, measure(engine.params, engine.config, pairs, engine.tokenizer.get_vocab())


def one_pass(params, config, pair: Pair, vocab) -> tuple[list, list, list]:
    """One pair alone, teacher-forced: (encoder, decoder, cross) attention, each [layer][head] rows."""
    src = np.array([[*(vocab[w] for w in pair.source), EOS]])
    tgt = np.array([[BOS, *(vocab[w] for w in pair.target)]])
    _, cache = forward(params, config, src, tgt)
    enc = [layer["self"]["probs"][0].tolist() for layer in cache["encoder"]["layers"]]
    dec = [layer["self"]["probs"][0].tolist() for layer in cache["decoder"]["layers"]]
    cross = [layer["cross"]["probs"][0].tolist() for layer in cache["decoder"]["layers"]]
    return enc, dec, cross


def largest_at(row: list[float]) -> int:
    best = 0
    for j in range(len(row)):
        if row[j] > row[best]:
            best = j
    return best


def plain_alignment(params, config, pairs, vocab, only_crossing: bool = False) -> np.ndarray:
    """The aligner score by hand: for every French word with a gold link, does each head's largest
    cross-attention weight, at the step that writes it, land on one of its linked English words?"""
    n_layers, n_heads = config.decoder_layers, config.heads
    right = [[0] * n_heads for _ in range(n_layers)]
    words = 0
    for pair in pairs:
        _, _, cross = one_pass(params, config, pair, vocab)
        links = crossing_links(pair) if only_crossing else pair.alignment
        for t in sorted({t for t, _ in links}):
            gold = {s for u, s in links if u == t}
            words += 1
            for layer in range(n_layers):
                for head in range(n_heads):
                    right[layer][head] += largest_at(cross[layer][head][t]) in gold
    return np.array(right) / words


def test_the_aligner_score_is_the_share_of_french_words_whose_largest_weight_is_on_their_english_word(
    shipped,
):
    engine, pairs, atlas = shipped
    vocab = engine.tokenizer.get_vocab()
    cross = atlas.kinds["cross"].stats
    by_hand = plain_alignment(engine.params, engine.config, pairs, vocab)
    np.testing.assert_allclose(cross["alignment"], by_hand, atol=1e-12)
    reordered = plain_alignment(engine.params, engine.config, pairs, vocab, only_crossing=True)
    np.testing.assert_allclose(cross["reordered"], reordered, atol=1e-12)
    roles = atlas.roles("cross")
    assert ((roles == ALIGNER) == (by_hand >= ALIGNER_SCORE)).all()


def test_the_shipped_translator_has_aligners_and_its_atlas_agrees_with_its_training_record(shipped):
    _, pairs, atlas = shipped
    record = json.loads((TRANSLATOR_DIR / "training_record.json").read_text())
    assert len(pairs) == record["settings"]["eval_pairs"]  # training's held-out pairs, the same seed
    np.testing.assert_allclose(atlas.kinds["cross"].stats["alignment"], record["alignment"][-1], atol=1e-9)
    assert (atlas.roles("cross") == ALIGNER).any()  # training formed at least one
    assert atlas.n_pairs == len(pairs) and corpus_pairs() == sample_pairs(len(pairs), EVAL_SEED, True)


def entropy_bits(row: list[float]) -> float:
    return -sum(p * math.log2(p) for p in row if p > 0)


def plain_self(attention: list, causal: bool) -> dict[str, float]:
    """One head's self-attention rows (N x N lists) -> its sums and row counts, by hand."""
    n = len(attention)
    sums = dict.fromkeys(("to_end", "to_start", "to_self", "to_prev", "to_next", "spread"), 0.0)
    rows = range(1, n) if causal else range(n)
    for i in rows:
        row = attention[i]
        sums["to_end"] += row[n - 1]
        sums["to_start"] += row[0]
        sums["to_self"] += row[i]
        sums["to_prev"] += row[i - 1] if i > 0 else 0.0
        sums["to_next"] += row[i + 1] if i + 1 < n else 0.0
        sums["spread"] += entropy_bits(row) / math.log2(i + 1 if causal else n)
    return sums | {"rows": len(rows), "adjacent": n - 1}


@pytest.fixture(scope="module")
def tiny():
    """A random translator (untrained: its heads spread and park their weight in all sorts of ways).
    Its float32 pass over a padded batch and over one pair agree to about 1e-8."""
    vocab = vocabulary()
    config = TranslatorConfig(vocab_size=len(vocab), d_model=16, heads=2, ffn=32)
    params = init_params(config, np.random.default_rng(3))
    params = {k: v * 40 if k.endswith("q_proj.weight") else v for k, v in params.items()}  # sharper heads
    pairs = sample_pairs(12, seed=5)
    return params, config, pairs, vocab, measure(params, config, pairs, vocab, seed=5)


def test_self_attention_statistics_are_means_over_rows_computed_by_hand(tiny):
    params, config, pairs, vocab, atlas = tiny
    for kind, index, causal in (("encoder", 0, False), ("decoder", 1, True)):
        for layer in range(2):
            for head in range(config.heads):
                per_pair = [
                    plain_self(one_pass(params, config, p, vocab)[index][layer][head], causal) for p in pairs
                ]
                rows = sum(s["rows"] for s in per_pair)
                adjacent = sum(s["adjacent"] for s in per_pair)
                for name in KIND_STATS[kind]:
                    count = adjacent if name in ("to_prev", "to_next") else rows
                    want = sum(s[name] for s in per_pair) / count
                    got = atlas.kinds[kind].stats[name][layer, head]
                    assert got == pytest.approx(want, abs=1e-6), (kind, layer, head, name)
        assert atlas.kinds[kind].n_rows == sum(
            len(p.source if kind == "encoder" else p.target) + 1 - causal for p in pairs
        )


def test_cross_attention_share_on_end_and_spread_computed_by_hand(tiny):
    params, config, pairs, vocab, atlas = tiny
    stats = atlas.kinds["cross"].stats
    for layer in range(2):
        for head in range(config.heads):
            end = spread = rows = 0
            for pair in pairs:
                for row in one_pass(params, config, pair, vocab)[2][layer][head]:
                    end, spread, rows = (
                        end + row[-1],
                        spread + entropy_bits(row) / math.log2(len(row)),
                        rows + 1,
                    )
            assert stats["to_end"][layer, head] == pytest.approx(end / rows, abs=1e-6)
            assert stats["spread"][layer, head] == pytest.approx(spread / rows, abs=1e-6)
    assert tuple(atlas.kinds) == KINDS


def test_crossing_links_and_the_position_yardstick_by_hand():
    # le chat noir ne voit pas le chien près de la voiture: "chat"/"noir" swap; "voit" and "pas" cross
    crossing = {t for t, _ in crossing_links(PROBE)}
    assert crossing == {1, 2, 4, 5}
    pairs = sample_pairs(30, seed=2)
    right = total = 0
    for pair in pairs:
        for t in sorted({t for t, _ in pair.alignment}):
            total += 1
            right += min(t, len(pair.source)) in {s for u, s in pair.alignment if u == t}
    assert by_position(pairs)[0, 0] == pytest.approx(right / total)


def one_head(kind: str, **values: float) -> KindAtlas:
    stats = {name: np.array([[values.get(name, 0.0)]]) for name in KIND_STATS[kind]}
    return KindAtlas(kind, stats, n_rows=1)


@pytest.mark.parametrize(
    ("kind", "values", "role"),
    [
        ("cross", {"alignment": ALIGNER_SCORE, "to_end": 0.9}, ALIGNER),  # the aligner wins over a sink
        ("cross", {"alignment": ALIGNER_SCORE - 1e-9, "to_end": ROLE_SHARE}, END_SINK),
        ("cross", {"alignment": 0.5, "spread": BROAD_ENTROPY}, BROAD),
        ("cross", {"alignment": 0.5, "spread": BROAD_ENTROPY - 1e-9}, MIXED),
        ("encoder", {"to_end": ROLE_SHARE, "to_self": ROLE_SHARE}, END_SINK),  # a tie: the earlier role
        ("encoder", {"to_next": 0.6, "to_prev": 0.3}, "next token"),
        ("decoder", {"to_start": 0.5, "spread": 0.9}, FIRST_TOKEN),
        ("decoder", {"to_prev": 0.49, "spread": 0.2}, MIXED),
    ],
)
def test_roles_follow_the_stated_rule(kind, values, role):
    assert kind_roles(one_head(kind, **values))[0, 0] == role
    assert role in KIND_ROLES[kind]


def test_a_kind_atlas_holds_its_kinds_statistics():
    with pytest.raises(ValueError, match="a cross atlas has"):
        KindAtlas("cross", {"spread": np.zeros((1, 1))}, n_rows=1)
