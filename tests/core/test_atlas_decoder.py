"""The head atlas on a decoder (core/measures/atlas.py, decoder=True): hand-built causal attention
patterns that are exactly previous-token, first-token (sink), self, broad and mixed get those roles;
the numbers against loops written here (the first row left out, the spread read against what each
row sees); the induction score is core/measures/induction.py's, on a stand-in engine whose attention
is an exact induction pattern and on a GPT-2 built by hand (tests/role_gpt2.py) whose four heads
have four roles; the role rule's thresholds; and the disk cache with the decoder's fields (an old
file without them is recomputed; an encoder's file is what it was)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from core.measures.atlas import (
    BROAD,
    BROAD_ENTROPY,
    DECODER_ROLES,
    DECODER_STATS,
    FIRST_TOKEN,
    INDUCTION,
    INDUCTION_LENGTH,
    INDUCTION_SCORE,
    INDUCTION_SEED,
    MIXED,
    ROLE_SHARE,
    STATS,
    AtlasAccumulator,
    HeadAtlas,
    cache_path,
    compute_atlas,
    corpus_hash,
    head_roles,
    load_atlas,
    load_or_compute,
    measure_induction,
    save_atlas,
)
from core.measures.decoder_reads import first_token_share
from core.measures.induction import Induction, induction, prefix_matching_scores
from core.models.result import AttentionResult
from dashboard.content.atlas import corpus
from tests.role_gpt2 import make_role_gpt2

FP = "fingerprint of the decoder's files"
TOKENS = ["The", "Ġcat", "Ġsat", ",", "Ġthen", "Ġslept"]  # a GPT-2 result: no special token


@pytest.fixture(autouse=True)
def temporary_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


def _result(attn: np.ndarray, tokens=TOKENS) -> AttentionResult:
    t = len(tokens)
    return AttentionResult(
        tokens=list(tokens),
        attentions=attn.astype(np.float32),
        hidden_states=np.zeros((attn.shape[0] + 1, t, 2), dtype=np.float32),
        special_mask=np.zeros(t, dtype=bool),
        word_ids=list(range(t)),
        model="test",
        engine="numpy",
    )


def _rows(cols: list[int]) -> np.ndarray:
    rows = np.zeros((len(cols), len(cols)))
    rows[np.arange(len(cols)), cols] = 1.0
    return rows


def causal_heads(t: int = 6) -> np.ndarray:
    """(1, 6, t, t) causal patterns: previous token, first token, self, punctuation, even, mixed."""
    even = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]  # each row even over what it sees
    mixed = np.zeros((t, t))  # rows 2..: 0.45 on token 1, 0.45 on itself, 0.1 on token 0
    mixed[2:, 1], mixed[np.arange(2, t), np.arange(2, t)], mixed[2:, 0] = 0.45, 0.45, 0.1
    mixed[0, 0], mixed[1, :2] = 1.0, 0.5
    heads = [
        _rows([0, *range(t - 1)]),  # previous token (row 0 has none: it sees only itself)
        _rows([0] * t),  # first token
        np.eye(t),
        _rows([0, 1, 2, 3, 3, 3]),  # "," is token 3: rows 3.. look at it
        even,
        mixed,
    ]
    return np.stack(heads)[None]


def _scores(scores: np.ndarray) -> Induction:
    """An induction test's result with these (L, H) scores (one copy of 4 tokens, seed 0)."""
    return Induction(4, 0, np.zeros(8, dtype=int), np.asarray(scores, dtype=np.float64), 0.0, 0.0)


def test_causal_patterns_get_their_roles_and_exact_numbers():
    heads = causal_heads()
    atlas = compute_atlas([_result(heads)], model="m", corpus_hash="c", induction=_scores(np.zeros((1, 6))))
    assert atlas.decoder and atlas.stats == DECODER_STATS and atlas.roles == DECODER_ROLES
    roles = list(head_roles(atlas)[0])
    assert roles == ["previous token", FIRST_TOKEN, "self", "punctuation", BROAD, MIXED]
    assert atlas.n_rows == 5  # the first token's row is left out: it sees only itself
    np.testing.assert_allclose(atlas.to_prev[0, 0], 1.0)
    np.testing.assert_allclose(atlas.to_first[0, :3], [1 / 5, 1.0, 0.0])  # row 1's previous is token 0
    np.testing.assert_allclose(atlas.to_first[0], first_token_share(heads)[0])  # decoder_reads' share
    np.testing.assert_allclose(atlas.to_self[0, 2], 1.0)  # not 1 + row 0's forced 1, over 6
    np.testing.assert_allclose(atlas.to_punct[0, 3], 3 / 5)
    np.testing.assert_allclose(atlas.entropy_norm[0, 4], 1.0)  # even over what each row sees
    np.testing.assert_allclose(atlas.distance[0, 1], (1 + 2 + 3 + 4 + 5) / 5)
    np.testing.assert_allclose(atlas.entropy[0, 4], sum(math.log2(i + 1) for i in range(1, 6)) / 5)
    for name in ("to_cls", "to_sep", "to_next"):  # kept, but neither shown nor read by a role
        assert name not in atlas.stats and not getattr(atlas, name).any()
        with pytest.raises(KeyError):
            atlas.stat(name)


def _loops(attn: np.ndarray, tokens: list[str]) -> dict[str, float]:
    """One head's decoder statistics over rows 1..T-1, as loops."""
    t = len(tokens)
    totals = dict.fromkeys(("to_first", "to_self", "to_prev", "to_punct", "entropy_norm", "distance"), 0.0)
    for i in range(1, t):
        row = [float(attn[i, j]) for j in range(t)]
        totals["to_first"] += row[0]
        totals["to_self"] += row[i]
        totals["to_prev"] += row[i - 1]
        totals["to_punct"] += sum(row[j] for j in range(t) if tokens[j] in (",", "."))
        totals["entropy_norm"] += -sum(p * math.log2(p) for p in row if p > 0) / math.log2(i + 1)
        totals["distance"] += sum(row[j] * (i - j) for j in range(i + 1))
    return {name: value / (t - 1) for name, value in totals.items()}


def test_random_causal_attention_against_loops():
    rng = np.random.default_rng(3)
    tokens = ["A", "Ġb", ",", "Ġc", ".", "Ġd", "Ġe"]
    raw = np.tril(rng.random((2, 3, 7, 7)) + 1e-3)
    attn = raw / raw.sum(-1, keepdims=True)
    atlas = compute_atlas(
        [_result(attn, tokens)], model="m", corpus_hash="c", induction=_scores(np.zeros((2, 3)))
    )
    for layer in range(2):
        for head in range(3):
            for name, value in _loops(attn[layer, head].astype(np.float32), tokens).items():
                assert getattr(atlas, name)[layer, head] == pytest.approx(value, rel=1e-5), name


class InductionStandIn:
    """A decoder engine (forward, unembed, config, max_tokens) whose every head's attention is an
    exact induction pattern in layer 2 head 1 and even elsewhere, whatever the tokens."""

    max_tokens = 40
    config = SimpleNamespace(vocab_size=30)

    def forward(self, ids, ablate=()):
        t = len(ids)
        n = t // 2
        even = np.tril(np.ones((t, t))) / np.arange(1, t + 1)[:, None]
        exact = _rows([min(i, 1) if i < n else i - n + 1 for i in range(t)])
        attentions = np.stack([np.stack([even, even]), np.stack([exact, even])])  # (2, 2, T, T)
        return SimpleNamespace(attentions=attentions, hidden_states=np.zeros((3, t, 4)))

    def unembed(self, hidden):
        return np.zeros((*hidden.shape[:-1], self.config.vocab_size))


def test_an_exact_induction_pattern_is_named_induction_with_induction_py_s_score():
    engine = InductionStandIn()
    test = measure_induction(engine)
    length = min(INDUCTION_LENGTH, engine.max_tokens // 2)
    assert (test.length, test.seed) == (length, INDUCTION_SEED) == (20, 0)
    reference = induction(engine, length, INDUCTION_SEED)
    np.testing.assert_array_equal(test.scores, reference.scores)
    np.testing.assert_array_equal(test.token_ids, reference.token_ids)
    attn = engine.forward(reference.token_ids).attentions
    np.testing.assert_allclose(test.scores, prefix_matching_scores(attn, length))
    assert test.scores[1, 0] == 1.0 and test.scores[0, 0] < 0.1
    corpus_heads = np.broadcast_to(causal_heads()[:, 4:5], (2, 2, 6, 6))  # every head even on the corpus
    atlas = compute_atlas([_result(corpus_heads)], model="m", corpus_hash="c", induction=test)
    np.testing.assert_array_equal(atlas.induction, test.scores)
    assert (atlas.induction_length, atlas.induction_seed) == (20, 0)
    assert head_roles(atlas).tolist() == [[BROAD, BROAD], [INDUCTION, BROAD]]


def _decoder_atlas(**values: float) -> HeadAtlas:
    stats = {name: np.full((1, 1), values.get(name, 0.0)) for name in (*STATS, "to_first", "induction")}
    return HeadAtlas(**stats, n_sentences=1, n_rows=1, model="m", corpus_hash="c")


@pytest.mark.parametrize(
    ("values", "role"),
    [
        ({"induction": INDUCTION_SCORE}, INDUCTION),  # at the threshold: named
        ({"induction": INDUCTION_SCORE - 1e-9, "entropy_norm": 0.5}, MIXED),
        ({"induction": INDUCTION_SCORE, "to_first": 0.9}, INDUCTION),  # induction wins over a sink
        ({"to_first": ROLE_SHARE}, FIRST_TOKEN),
        ({"to_first": 0.6, "to_prev": 0.6}, FIRST_TOKEN),  # a tie: the earlier role
        ({"to_first": 0.55, "to_prev": 0.7}, "previous token"),  # the largest share wins
        ({"to_cls": 0.9, "to_sep": 0.9, "to_next": 0.9, "entropy_norm": 0.5}, MIXED),  # not a decoder's
        ({"entropy_norm": BROAD_ENTROPY}, BROAD),
    ],
)
def test_decoder_role_thresholds(values, role):
    assert head_roles(_decoder_atlas(**values))[0, 0] == role


def test_an_encoder_atlas_and_a_decoder_atlas_are_told_apart():
    with pytest.raises(ValueError, match="both to_first and induction"):
        HeadAtlas(**{n: np.zeros((1, 1)) for n in STATS}, to_first=np.zeros((1, 1)), n_sentences=1,
                  n_rows=1, model="m", corpus_hash="c")  # fmt: skip
    acc = AtlasAccumulator(decoder=True)
    acc.add(_result(causal_heads()))
    with pytest.raises(ValueError, match="needs its induction"):
        acc.finish(model="m", corpus_hash="c")


@pytest.fixture(scope="module")
def role_engine(tmp_path_factory):
    from core.models.gpt2 import GPT2Numpy

    return GPT2Numpy.from_pretrained(make_role_gpt2(tmp_path_factory.mktemp("role_gpt2")))


def test_a_gpt2_built_by_hand_has_the_four_roles(role_engine):
    sentences = corpus()[:12]
    test = measure_induction(role_engine)
    atlas = compute_atlas([role_engine.run(s) for s in sentences], model="m", corpus_hash="c", induction=test)
    assert head_roles(atlas).tolist() == [["previous token", FIRST_TOKEN], [INDUCTION, "self"]]
    assert test.length == 32  # half of the model's 64 positions
    reference = induction(role_engine, 32, INDUCTION_SEED)  # core/measures/induction.py's score
    np.testing.assert_array_equal(atlas.induction, reference.scores)
    assert atlas.induction[1, 0] > 0.8 and atlas.to_prev[0, 0] > 0.99 and atlas.to_first[0, 1] > 0.99


# ---- the disk cache ----------------------------------------------------------------------------------


@pytest.fixture
def decoder_atlas():
    rng = np.random.default_rng(0)
    return compute_atlas(
        [_result(causal_heads())],
        model="m",
        corpus_hash=corpus_hash(["s"]),
        induction=_scores(rng.random((1, 6))),
    )


def test_decoder_cache_round_trip(decoder_atlas):
    load_or_compute("m", ["s"], lambda: decoder_atlas, fingerprint=FP, decoder=True)
    again, source = load_or_compute(
        "m", ["s"], lambda: pytest.fail("from disk"), fingerprint=FP, decoder=True
    )
    assert source == "disk" and again.decoder
    for name in (*STATS, *DECODER_STATS):
        np.testing.assert_array_equal(getattr(again, name), getattr(decoder_atlas, name), err_msg=name)
    assert (again.induction_length, again.induction_seed) == (4, 0)
    assert head_roles(again).tolist() == head_roles(decoder_atlas).tolist()


def test_an_old_decoder_file_without_the_new_fields_is_recomputed(decoder_atlas, caplog):
    path = cache_path("m", decoder_atlas.corpus_hash, fingerprint=FP)
    old = HeadAtlas(**{n: getattr(decoder_atlas, n) for n in STATS}, n_sentences=1, n_rows=6, model="m",
                    corpus_hash=decoder_atlas.corpus_hash)  # fmt: skip
    assert save_atlas(old, path)  # what the atlas wrote for a GPT-2 before it measured decoders
    assert load_atlas(path, model="m", corpus=decoder_atlas.corpus_hash, decoder=True) is None
    assert "to_first" in caplog.text
    atlas, source = load_or_compute("m", ["s"], lambda: decoder_atlas, fingerprint=FP, decoder=True)
    assert source == "computed" and atlas is decoder_atlas
    assert load_atlas(path, model="m", corpus=decoder_atlas.corpus_hash, decoder=True).decoder  # replaced


def test_an_encoder_file_keeps_its_fields(tmp_path):
    encoder = HeadAtlas(**{n: np.full((2, 3), 0.25) for n in STATS}, n_sentences=1, n_rows=4, model="m",
                        corpus_hash="c")  # fmt: skip
    assert save_atlas(encoder, tmp_path / "a.npz")
    with np.load(tmp_path / "a.npz") as data:
        assert set(data.files) == {
            "version",
            *STATS,
            "n_sentences",
            "n_rows",
            "model",
            "corpus_hash",
            "engine",
        }
    loaded = load_atlas(tmp_path / "a.npz", model="m", corpus="c")
    assert loaded is not None and not loaded.decoder and loaded.stats == STATS
