"""The learn page's decoder mode on a Llama (`example=decoder&model=...`): one block with the Llama's
own stops (RMSNorm, RoPE, grouped-query attention, the causal mask, SwiGLU), each matrix checked
against the NumPy engine's own trace (LlamaNumpy.forward(ids, trace_layers=[layer]).steps) and each
figure in a caption against a computation of its own. The Llama is a tiny random checkpoint with 4
query heads sharing 2 key/value heads, saved here as a local folder; SmolLM2 itself by its name."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.cost.generation import cache_numbers, megabytes
from core.lesson.layers import silu
from core.lesson.rope import pair_score
from core.models.llama import LlamaNumpy
from dashboard.content import learn_llama
from tests.dashboard.harness import plotly_array
from tests.dashboard.test_learn import SCRIPT, chart, texts, z
from tests.deadline import APPTEST_DEADLINE
from tests.tiny_llama import make_tiny_llama

pytestmark = pytest.mark.usefixtures("fast_apptest")

SENTENCE = "The trophy would not fit in the suitcase"
HEADS, KV_HEADS = 4, 2


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return make_tiny_llama(tmp_path_factory.mktemp("llama"), layers=2, heads=HEADS, kv_heads=KV_HEADS)


@pytest.fixture(scope="module")
def engine(llama_dir) -> LlamaNumpy:
    return LlamaNumpy.from_pretrained(llama_dir)


def steps(engine: LlamaNumpy, layer: int) -> dict[str, np.ndarray]:
    return engine.forward(engine.encode(SENTENCE).ids, trace_layers=[layer]).steps[layer]


def open_llama(model, **params: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update({"example": "decoder", "model": str(model), "text": SENTENCE, **params})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_every_stop_in_the_order_a_llama_computes_it_with_the_engines_numbers(llama_dir, engine):
    at = open_llama(llama_dir, step="all", layer="1", head="3")
    headers = [h.value.split(":")[0] for h in at.subheader]
    expected = ["Step 1", "RMSNorm first", "Step 2", "RoPE", "Grouped-query attention", "Step 3", "Step 4"]
    expected += ["Causal mask", "Step 5", "Step 6", "Step 7", "After attention"]
    assert [next(h for h in headers if h.startswith(e)) for e in expected] == [
        h for h in headers if h.startswith(tuple(expected))
    ][: len(expected)]
    trace, head = steps(engine, 1), 3
    np.testing.assert_allclose(z(chart(at, "x")), trace["x"][:, :8], atol=1e-5)  # layer 2 reads layer 1's
    np.testing.assert_allclose(z(chart(at, "rms1")), trace["rmsnorm"][:, :8], atol=1e-5)
    # step 2 before RoPE; the RoPE stop turned; step 3 multiplies the turned ones
    np.testing.assert_allclose(z(chart(at, "query")), trace["query_raw"][head][:, :4], atol=1e-5)
    group = head // (HEADS // KV_HEADS)
    np.testing.assert_allclose(z(chart(at, "key")), trace["key_raw"][group][:, :4], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "rope_q_turned")), trace["query"][head][:, :8], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "scores")), trace["scores"][head], atol=1e-4)
    np.testing.assert_allclose(z(chart(at, "probs")), trace["probs"][head], atol=1e-6)
    # the grouped heads' patterns: the two query heads of key/value head 2 (heads 3 and 4)
    for member in (2, 3):
        np.testing.assert_allclose(z(chart(at, f"gqa_head_{member}")), trace["probs"][member], atol=1e-6)
    np.testing.assert_allclose(z(chart(at, "rms2")), trace["normed"][:, :4], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "ffn")), trace["ffn"][:, :4], atol=1e-5)
    np.testing.assert_allclose(z(chart(at, "layer_output")), trace["layer_output"][:, :4], atol=1e-5)
    said = " ".join(texts(at))
    assert f"{HEADS} query heads of 8 numbers sharing {KV_HEADS} key/value heads" in said
    assert "no position is added" not in said  # layer 2's input is layer 1's output, not the embeddings


def test_the_first_block_adds_no_position(llama_dir, engine):
    at = open_llama(llama_dir, step="1")
    ids = engine.encode(SENTENCE).ids
    np.testing.assert_allclose(z(chart(at, "x")), engine.token_embeddings[ids][:, :8], atol=1e-6)
    assert "no position is added" in " ".join(texts(at))


def test_the_rmsnorm_caption_is_computed_from_the_rows(llama_dir, engine):
    at = open_llama(llama_dir, step="rmsnorm")
    x = steps(engine, 0)["x"].astype(np.float64)
    rms = np.sqrt((x**2).mean(axis=-1))
    said = " ".join(texts(at))
    assert f"in X from {rms.min():.3g} to {rms.max():.3g}" in said


def test_the_rmsnorm_stop_says_the_gain_turns_the_rows(llama_dir, engine):
    """Dividing by the RMS keeps a row's direction; the per-dimension γ does not (issue 48: the stop
    said a vector keeps its direction). The range of γ and the angles are the layer's own."""
    at = open_llama(llama_dir, step="rmsnorm")
    trace, gamma = steps(engine, 0), engine.block_weights(0).norm1.astype(np.float64)
    x, h = trace["x"].astype(np.float64), trace["rmsnorm"].astype(np.float64)
    unit = x / np.sqrt((x**2).mean(axis=-1, keepdims=True))
    cos = lambda a, b: (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)  # noqa: E731
    np.testing.assert_allclose(cos(x, unit), 1.0, atol=1e-12)  # the division alone keeps the direction
    turn = np.degrees(np.arccos(np.clip(cos(x, h), -1, 1)))
    assert turn.max() > 1  # γ turns the rows
    said = " ".join(texts(at))
    assert "only its length" not in said
    assert f"from {gamma.min():.3g} to {gamma.max():.3g}), which changes the direction too" in said
    assert f"points {turn.min():.1f}° to {turn.max():.1f}° away from its row of X" in said


def test_the_rope_stop_shows_a_score_that_depends_only_on_the_gap(llama_dir, engine):
    at = open_llama(llama_dir, step="rope", head="1")
    trace, head = steps(engine, 0), 1
    last = trace["probs"].shape[-1] - 1
    key = 1 + int(np.argmax(trace["probs"][head][last, 1:last]))
    (table,) = at.dataframe
    frame = table.value
    assert list(frame.iloc[:, 0]) == [last + s for s in (0, 7, 50, 500)]
    assert set(frame.iloc[:, 2]) == {last - key}
    scores = frame.iloc[:, 3].astype(float).to_numpy()
    # the same score at every shift, and the one the model computed for this pair in the text
    np.testing.assert_allclose(scores, trace["scaled"][head][last, key], atol=1e-5)
    curve = chart(at, "rope_gap")["data"][0]
    group = head // (HEADS // KV_HEADS)
    q, k = trace["query_raw"][head][last], trace["key_raw"][group][key]
    expected = [pair_score(q, k, 64, 64 - g, engine.config.rope_theta) for g in range(65)]
    np.testing.assert_allclose(plotly_array(curve["y"]), expected, atol=1e-6)
    assert np.ptp(expected) > 1e-3  # the gap does change the score


@pytest.mark.parametrize("head", range(HEADS))
def test_the_rope_sentence_ranks_the_key_by_the_row_it_describes(llama_dir, engine, head):
    """The key is the token the last query weighs most between the first token and itself; the
    sentence names each token weighed more than it (the first, itself) with its weight, from the row."""
    at = open_llama(llama_dir, step="rope", head=str(head))
    row = steps(engine, 0)["probs"][head][-1]
    last = len(row) - 1
    key = 1 + int(np.argmax(row[1:last]))
    said = " ".join(texts(at))
    assert f"the token it weighs most ({row[key]:.3f})" in said
    assert (f"itself ({row[last]:.3f})" in said) == (row[last] > row[key])
    assert (f"the first token ({row[0]:.3f};" in said) == (row[0] > row[key])


def test_the_rope_sentence_says_the_query_weighs_itself_more():
    """SmolLM2's 'mat' weighed itself 0.22 and 'the' 0.21: the key was not the token it weighs most."""
    from dashboard.views.learn.llama_views import key_rank

    row = np.array([0.40, 0.06, 0.21, 0.11, 0.22])
    said = key_rank(row, 2)
    assert said == (
        f"the token it weighs most ({row[2]:.3f}) after the first token ({row[0]:.3f}; a first token "
        f"often draws much weight, a sink) and itself ({row[4]:.3f})"
    )
    assert key_rank(np.array([0.1, 0.5, 0.4]), 1) == f"the token it weighs most ({0.5:.3f})"


def test_the_grouped_query_stop_says_who_shares_and_what_the_cache_saves(llama_dir, engine):
    at = open_llama(llama_dir, step="gqa")
    said = " ".join(texts(at))
    assert "query heads 1–2 → key/value head 1; query heads 3–4 → key/value head 2." in said
    # bytes of float32 over 10**6: MB, the unit the sentence says (2**20 bytes would be a MiB)
    layers, d_k, n = engine.n_layers, engine.head_size, engine.max_tokens
    gqa, full = (cache_numbers(layers, heads, d_k, n) * 4 / 10**6 for heads in (KV_HEADS, HEADS))
    assert (
        f"{megabytes(gqa)} MB (of 10⁶ bytes) with {KV_HEADS} key/value heads, against {megabytes(full)} MB"
        in said
    )


def test_the_swiglu_stop_counts_the_nearly_shut_gates(llama_dir, engine):
    at = open_llama(llama_dir, step="swiglu")
    trace, weights = steps(engine, 0), engine.block_weights(0)
    closed = (np.abs(silu(trace["normed"] @ weights.w_gate)) < 0.1).mean()
    assert f"{closed:.0%} of the gate's values are below 0.1" in " ".join(texts(at))
    silu_curve = chart(at, "silu")["data"][0]
    x = plotly_array(silu_curve["x"])
    np.testing.assert_allclose(plotly_array(silu_curve["y"]), x / (1 + np.exp(-x)), atol=1e-9)


def test_the_pager_walks_the_llamas_stops(llama_dir):
    at = open_llama(llama_dir, step="2")
    walked = []
    for _ in range(3):
        at.button(key="learn_next").click().run()
        walked.append(at.session_state["learn_step"])
    assert walked == ["rope", "gqa", "3"]
    assert at.query_params["step"] == "3" and not at.exception


@pytest.mark.parametrize("step", ["ln", "mlp"])
def test_a_gpt2_stop_in_a_llamas_link_opens_step_1(llama_dir, step):
    at = open_llama(llama_dir, step=step)
    assert at.subheader[0].value.startswith("Step 1")


def test_the_llama_stops_list_matches_the_labels():
    from dashboard.content.learn import STEP_VIEW_LABELS

    assert set(learn_llama.LLAMA_VIEWS) <= set(STEP_VIEW_LABELS)


@pytest.mark.slow
def test_smollm2_by_name_walks_a_real_layer():
    from dashboard.engines import load_engine

    at = open_llama("smollm2", step="gqa", layer="17", head="4")
    said = " ".join(texts(at))
    assert "9 query heads of 64 numbers sharing 3 key/value heads" in said
    assert "The 3 heads of group 2 (head 5 is one)" in said
    # the cache at the full context, in MB of 10**6 bytes (it said 360.0 / 1080.0 MB: MiB)
    config = load_engine("smollm2", "numpy").config
    kv_heads = (config.num_key_value_heads, config.num_attention_heads)
    numbers = [
        2 * config.num_hidden_layers * kv * config.head_dim * config.max_position_embeddings
        for kv in kv_heads
    ]
    gqa, full = (megabytes(n * 4 / 10**6) for n in numbers)
    assert f"{gqa} MB (of 10⁶ bytes) with 3 key/value heads, against {full} MB if each" in said
    assert [k for k in ("gqa_head_3", "gqa_head_4", "gqa_head_5") if chart(at, k)]
