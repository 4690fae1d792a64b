"""The learn page's cross-attention step on the translator (core/translate/lesson.py): a tiny case
worked by hand, every step against the model's own forward pass (float64: the same numbers; float32:
as the product runs it) and against transformers' BART loaded from models/translator, hooked at its
projections, its cross-attention and the norm after it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from core.translate.engine import TRANSLATOR_DIR, TranslatorEngine, TranslatorInputError
from core.translate.lesson import CHECKED, best_cross_head, cross_attention_steps, cross_step, forward_gaps

SENTENCES = ("the black cat sees the dog", "a tired horse eats apples near the house")


@pytest.fixture(scope="module")
def engine() -> TranslatorEngine:
    return TranslatorEngine(TRANSLATOR_DIR)


def _tiny_params() -> dict[str, np.ndarray]:
    """D = 2, one head (d_k = 2): W^Q = W^K·2 = W^V = W^O = I, b^Q = (0, −1), the other biases 0,
    the norm's γ = 1, β = 0."""
    eye = np.eye(2)
    return {
        "x.q_proj.weight": eye,
        "x.q_proj.bias": np.array([0.0, -1.0]),
        "x.k_proj.weight": 0.5 * eye,
        "x.k_proj.bias": np.zeros(2),
        "x.v_proj.weight": eye,
        "x.v_proj.bias": np.zeros(2),
        "x.out_proj.weight": eye,
        "x.out_proj.bias": np.zeros(2),
        "x_layer_norm.weight": np.ones(2),
        "x_layer_norm.bias": np.zeros(2),
    }


def test_a_tiny_case_worked_by_hand():
    """Two English positions, one French: every number below was worked out on paper."""
    state = np.array([[1.0, 1.0]])  # Y: the one French position
    memory = np.array([[2.0, 0.0], [0.0, 2.0]])  # M: the two English positions
    out = cross_attention_steps(state, memory, _tiny_params(), "x", n_heads=1, head=0, eps=1e-5)
    np.testing.assert_allclose(out["query"], [[1.0, 0.0]])  # (1, 1) I + (0, −1)
    np.testing.assert_allclose(out["key"], [[1.0, 0.0], [0.0, 1.0]])  # M · ½ I
    np.testing.assert_allclose(out["value"], [[2.0, 0.0], [0.0, 2.0]])  # M · I
    np.testing.assert_allclose(out["scores"], [[1.0, 0.0]])  # q·k₁ = 1, q·k₂ = 0
    np.testing.assert_allclose(out["scaled"], [[0.70710678, 0.0]], atol=1e-8)  # ÷ √2
    np.testing.assert_allclose(out["scaled_folded"], out["scaled"], atol=1e-15)  # (q ÷ √2)·k: the same
    # e^0.70710678 = 2.02811498; 2.02811498 / 3.02811498 = 0.66976155, 1 / 3.02811498 = 0.33023845
    np.testing.assert_allclose(out["probs"], [[0.66976155, 0.33023845]], atol=1e-8)
    np.testing.assert_allclose(out["context"], [[1.3395231, 0.6604769]], atol=1e-7)  # 2a₁, 2a₂
    np.testing.assert_allclose(out["output"], out["context"])  # W^O = I, b^O = 0
    np.testing.assert_allclose(out["residual"], [[2.3395231, 1.6604769]], atol=1e-7)  # Y + O
    # mean 2, deviations ±0.3395231, variance 0.11527593; √(0.11527593 + 0.00001) = 0.33953782;
    # 0.3395231 / 0.33953782 = 0.99995663
    np.testing.assert_allclose(out["normed"], [[0.99995663, -0.99995663]], atol=1e-7)


@pytest.mark.parametrize("text", SENTENCES)
def test_every_step_equals_the_models_forward_pass(engine, text):
    for layer in range(engine.config.decoder_layers):
        for head in range(engine.config.heads):
            step = cross_step(engine, text, layer, head)
            exact = forward_gaps(step, engine.params, engine.config)  # float64: the same arithmetic
            assert max(exact.values()) < 1e-10, exact
            as_run = forward_gaps(step, engine.params, engine.config, dtype=np.float32)
            for name in CHECKED:  # float32: seven significant digits of numbers up to about 60
                assert as_run[name] <= 1e-5 * max(1.0, float(np.abs(step[name]).max())), (name, as_run)


def test_the_step_reads_like_the_lesson(engine):
    step = cross_step(engine, SENTENCES[0], 1, 2)
    assert step.source_tokens == ("the", "black", "cat", "sees", "the", "dog", "</s>")
    assert step.target_tokens == ("le", "chat", "noir", "voit", "le", "chien", "</s>")
    assert step.decoder_inputs == ("<s>", "le", "chat", "noir", "voit", "le", "chien")
    t, s, d_k = len(step.target_tokens), len(step.source_tokens), step.d_k
    assert step["query"].shape == (t, d_k) and step["key"].shape == step["value"].shape == (s, d_k)
    assert step["probs"].shape == (t, s) and d_k == engine.config.d_model // engine.config.heads
    np.testing.assert_allclose(step["probs"].sum(axis=1), 1.0)
    assert (step["probs"] > 0).all()  # no mask: every English word can be read
    assert (np.triu(step["self_probs"], k=1) == 0).all()  # the decoder's own attention: causal
    np.testing.assert_allclose(step["scaled"], step["scores"] / np.sqrt(d_k))
    np.testing.assert_allclose(step["scaled_folded"], step["scaled"], atol=1e-12)
    share = step["output"] - engine.params["model.decoder.layers.1.encoder_attn.out_proj.bias"]
    others = [  # the heads' shares through W^O add up to the output
        step["concat"][:, h * d_k : (h + 1) * d_k] @ step["w_o"][h * d_k : (h + 1) * d_k] for h in range(4)
    ]
    np.testing.assert_allclose(sum(others), share, atol=1e-10)
    np.testing.assert_allclose(others[2], step["head_output"])
    assert step["probs"][2].argmax() == 1  # "noir" (written third) reads "black" (second)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_step_equals_transformers_bart(engine, dtype):
    torch = pytest.importorskip("torch")
    from transformers import AutoModelForSeq2SeqLM

    model = AutoModelForSeq2SeqLM.from_pretrained(TRANSLATOR_DIR, attn_implementation="eager")
    model = model.to(getattr(torch, dtype)).eval()
    for layer, head in ((1, 2), (0, 1)):
        step = cross_step(engine, SENTENCES[1], layer, head)
        theirs = _bart_pieces(torch, model, step)
        d_k, cols = step.d_k, slice(head * step.d_k, (head + 1) * step.d_k)
        mine = {
            "memory": step["memory"],
            "state": step["state"],
            "query": step["query"],
            "key": step["key"],
            "value": step["value"],
            "probs": step["probs"],
            "output": step["output"],
            "normed": step["normed"],
        }
        theirs["query"], theirs["key"], theirs["value"] = (
            theirs[n][:, cols] for n in ("query", "key", "value")
        )
        theirs["probs"] = theirs["probs"][head]
        tol = 1e-5 if dtype == "float32" else 1e-10
        for name, values in mine.items():
            np.testing.assert_allclose(values, theirs[name], atol=tol, err_msg=name)
        assert d_k == 16


def _bart_pieces(torch, model, step) -> dict[str, np.ndarray]:
    """BART's own numbers for one sentence: the encoder's output, and in the step's decoder layer the
    cross-attention's input, projections, weights, output and the norm after it (forward hooks)."""
    layer = model.model.decoder.layers[step.layer]
    seen: dict[str, np.ndarray] = {}

    def keep(name, index=None):
        def hook(module, args, kwargs, output):
            value = output if index is None else output[index]
            seen[name] = value[0].detach().double().numpy()

        return hook

    def keep_input(module, args, kwargs, output):
        seen["state"] = kwargs.get("hidden_states", args[0] if args else None)[0].detach().double().numpy()

    handles = [
        layer.encoder_attn.q_proj.register_forward_hook(keep("query"), with_kwargs=True),
        layer.encoder_attn.k_proj.register_forward_hook(keep("key"), with_kwargs=True),
        layer.encoder_attn.v_proj.register_forward_hook(keep("value"), with_kwargs=True),
        layer.encoder_attn.register_forward_hook(keep("output", 0), with_kwargs=True),
        layer.encoder_attn.register_forward_hook(keep_input, with_kwargs=True),
        layer.encoder_attn_layer_norm.register_forward_hook(keep("normed"), with_kwargs=True),
    ]
    try:
        with torch.no_grad():
            out = model(
                input_ids=torch.from_numpy(step.source_ids[None]),
                decoder_input_ids=torch.from_numpy(step.target_ids[None]),
                output_attentions=True,
            )
    finally:
        for handle in handles:
            handle.remove()
    seen["memory"] = out.encoder_last_hidden_state[0].double().numpy()
    seen["probs"] = out.cross_attentions[step.layer][0].double().numpy()  # (H, T, S)
    return seen


def test_the_best_head_is_read_from_the_training_record(tmp_path):
    record = json.loads((TRANSLATOR_DIR / "training_record.json").read_text())
    last = np.asarray(record["alignment"][-1])
    assert best_cross_head(TRANSLATOR_DIR) == np.unravel_index(last.argmax(), last.shape) == (1, 2)
    shutil.copy(TRANSLATOR_DIR / "config.json", tmp_path / "config.json")  # no record: the last layer
    assert best_cross_head(tmp_path) == (1, 0)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("the zebra sees the dog", "does not know “zebra”"),
        ("", "type an English sentence"),
        ("the cat " * 20, "at most"),
    ],
)
def test_text_the_translator_cannot_read_is_refused_in_one_line(engine, text, said):
    with pytest.raises(TranslatorInputError, match=said):
        cross_step(engine, text, 1, 2)
