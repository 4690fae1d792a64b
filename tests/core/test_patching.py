"""Activation patching (core/models/interventions.py Patch, core/measures/patching.py): the patched
runs of every engine against a reference written here with torch forward hooks on the transformers
model (the weighted sum's change added after W^O; a layer's input replaced as the previous module's
output), the NumPy engines against the torch references, the restored fractions recomputed from the
two runs' metrics, and cases checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from core.measures.patching import (
    check_pair,
    encode_pair,
    next_token_shift,
    option_metric,
    patch_heads,
    patch_residual,
    pronoun_metric,
)
from core.models.architectures import load_engine, load_torch_engine
from core.models.interventions import Patch, check_patch
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

torch = pytest.importorskip("torch")
CLEAN = "The trophy would not fit in the suitcase because it was too large."
CORRUPT = "The trophy would not fit in the bank because it was too large."  # one token differs
BERT_CLEAN = "the trophy would not fit in the suitcase because it was too big ."
BERT_CORRUPT = "the trophy would not fit in the suitcase because it was too small ."


# ---- the reference: transformers with forward hooks, written here ----------------------------------


def _modules(model, layer: int):
    """(the module whose input is the heads' weighted sums (W^O), the module whose output enters
    `layer`) for a BertModel, a GPT2LMHeadModel or a LlamaForCausalLM."""
    kind = model.config.model_type
    if kind == "bert":
        previous = model.embeddings if layer == 0 else model.encoder.layer[layer - 1]
        return model.encoder.layer[layer].attention.output.dense, previous
    if kind == "gpt2":
        previous = model.transformer.drop if layer == 0 else model.transformer.h[layer - 1]
        return model.transformer.h[layer].attn.c_proj, previous
    previous = model.model.embed_tokens if layer == 0 else model.model.layers[layer - 1]
    return model.model.layers[layer].self_attn.o_proj, previous


def reference(model, ids, *, heads=None, residual=None):
    """(hidden states (L + 1, T, D), logits of the last position or None) with heads' weighted sums
    {(layer, head): (T, d_k)} and layers' inputs {layer: (T, D)} patched in by forward hooks."""
    n_heads = model.config.num_attention_heads
    handles = []
    for (layer, head), value in (heads or {}).items():
        projection = _modules(model, layer)[0]

        def add_change(module, inputs, output, head=head, value=value):
            # W^O is linear: patching its input's slice adds (new - old) @ W's rows of that slice
            d_k = inputs[0].shape[-1] // n_heads
            delta = torch.zeros_like(inputs[0])
            delta[..., head * d_k : (head + 1) * d_k] = (
                torch.from_numpy(value) - inputs[0][0, :, head * d_k : (head + 1) * d_k]
            )
            weight = module.weight  # Linear (out, in); GPT-2's Conv1D (in, out)
            return output + (delta @ weight if model.config.model_type == "gpt2" else delta @ weight.T)

        handles.append(projection.register_forward_hook(add_change))
    for layer, value in (residual or {}).items():

        def replace(_module, _inputs, output, value=value):
            given = torch.from_numpy(value)[None]
            return (given, *output[1:]) if isinstance(output, tuple) else given

        handles.append(_modules(model, layer)[1].register_forward_hook(replace))
    try:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([list(ids)]), output_hidden_states=True)
    finally:
        for handle in handles:
            handle.remove()
    logits = out.logits[0, -1].numpy().astype(np.float64) if hasattr(out, "logits") else None
    return np.stack([h[0].numpy() for h in out.hidden_states]), logits


def contexts_of(engine, ids):
    """(hidden, every head's weighted sum (L, H, T, d_k)) from a NumPy engine's traces."""
    every = range(engine.n_layers)
    if hasattr(engine, "unembed"):
        out = engine.forward(np.asarray(ids), trace_layers=every)
        return out.hidden_states, np.stack([out.steps[i]["context"] for i in every])
    hidden, _, steps = engine.forward(np.asarray(ids), trace_layers=every)
    return hidden, np.stack([steps[i]["context"] for i in every])


def the_patches(engine, clean_ids, corrupt_ids, position):
    """Three patches of the clean run from the corrupt one: a head at every position, two heads at
    `position` only, and the residual entering the last layer at `position`."""
    clean_hidden, clean_ctx = contexts_of(engine, clean_ids)
    corrupt_hidden, corrupt_ctx = contexts_of(engine, corrupt_ids)
    at_one = {}
    for layer, head in ((0, 1), (1, 2)):
        value = clean_ctx[layer, head].copy()
        value[position] = corrupt_ctx[layer, head, position]
        at_one[layer, head] = value
    last = engine.n_layers - 1
    entering = clean_hidden[last].copy()
    entering[position] = corrupt_hidden[last, position]
    return [
        Patch(heads={(1, 3): corrupt_ctx[1, 3]}),
        Patch(heads=at_one),
        Patch(residual={last: entering}),
        Patch(heads={(0, 0): corrupt_ctx[0, 0]}, residual={1: corrupt_hidden[1]}),
    ]


def assert_patched_runs_agree(engine, torch_engine, model, clean_ids, corrupt_ids, position):
    for patch in the_patches(engine, clean_ids, corrupt_ids, position):
        ours = engine.hidden_states(clean_ids, patch=patch)
        first = patch.first_layer
        theirs, logits = reference(model, clean_ids, heads=patch.heads, residual=patch.residual)
        # transformers records a patched layer's input as the previous output (before the hook)
        after = [i for i in range(first + 1, len(ours)) if i not in patch.residual]
        assert np.abs(ours[after] - theirs[after]).max() < 1e-5
        for layer, value in patch.residual.items():
            np.testing.assert_array_equal(ours[layer], value)  # what the layer read
        torch_hidden = torch_engine.hidden_states(clean_ids, patch=patch)
        assert np.abs(ours - torch_hidden).max() < 1e-5
        if logits is not None:
            np.testing.assert_allclose(engine.unembed(ours[-1, -1]), logits, atol=1e-5)
        assert np.abs(ours[-1] - engine.hidden_states(clean_ids)[-1]).max() > 1e-4  # it changed


# ---- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    from transformers import GPT2LMHeadModel

    path = make_tiny_gpt2(tmp_path_factory.mktemp("patch-gpt2"), n_layer=3, n_head=4, n_embd=32)
    model = GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager").eval()
    return load_engine(str(path)), load_torch_engine(str(path)), model


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    from transformers import LlamaForCausalLM

    path = make_tiny_llama(tmp_path_factory.mktemp("patch-llama"), layers=3, heads=4, kv_heads=2)
    model = LlamaForCausalLM.from_pretrained(path, attn_implementation="eager").eval()
    return load_engine(str(path)), load_torch_engine(str(path)), model


@pytest.fixture(scope="module")
def bert():
    from transformers import BertModel

    from core.models import bundled

    model = BertModel.from_pretrained(bundled.bundled_files(), attn_implementation="eager").eval()
    return load_engine("bundled"), load_torch_engine("bundled"), model


def _pair(engine, clean=CLEAN, corrupt=CORRUPT):
    first, second = encode_pair(engine, clean, corrupt)
    return list(first.ids), list(second.ids), check_pair(first.ids, second.ids)[0]


# ---- the engines' patch against transformers' hooks --------------------------------------------------


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_decoder_patches_match_transformers_hooks_and_the_torch_engine(family, request):
    engine, torch_engine, model = request.getfixturevalue(family)
    clean_ids, corrupt_ids, differ = _pair(engine)
    assert_patched_runs_agree(engine, torch_engine, model, clean_ids, corrupt_ids, differ)
    assert_patched_runs_agree(engine, torch_engine, model, clean_ids, corrupt_ids, len(clean_ids) - 1)


@pytest.mark.slow
def test_bundled_bert_patches_match_transformers_hooks_and_the_torch_engine(bert):
    engine, torch_engine, model = bert
    clean_ids, corrupt_ids, differ = _pair(engine, BERT_CLEAN, BERT_CORRUPT)
    assert_patched_runs_agree(engine, torch_engine, model, clean_ids, corrupt_ids, differ)
    assert_patched_runs_agree(engine, torch_engine, model, clean_ids, corrupt_ids, 3)


def test_run_takes_the_patch_and_says_so(gpt2):
    engine, torch_engine, _ = gpt2
    ids = list(engine.encode(CLEAN).ids)
    value = np.zeros((len(ids), engine.head_size), dtype=np.float32)
    ours, theirs = (
        engine.run(CLEAN, patch=Patch(heads={(2, 1): value})),
        torch_engine.run(CLEAN, patch=Patch(heads={(2, 1): value})),
    )
    assert ours.meta["patched"] == {"heads": [(2, 1)], "residual": []}
    # a head patched with zeros is that head ablated
    np.testing.assert_allclose(
        ours.hidden_states, engine.run(CLEAN, ablate={(2, 1)}).hidden_states, atol=1e-6
    )
    assert np.abs(ours.hidden_states - theirs.hidden_states).max() < 1e-5
    assert np.abs(ours.next_token_logits - theirs.next_token_logits).max() < 1e-5


def test_a_patch_of_the_runs_own_values_changes_nothing(gpt2):
    engine = gpt2[0]
    ids = list(engine.encode(CLEAN).ids)
    hidden, ctx = contexts_of(engine, ids)
    own = Patch(heads={(at, h): ctx[at, h] for at in range(3) for h in range(4)}, residual={1: hidden[1]})
    np.testing.assert_array_equal(engine.hidden_states(ids, patch=own), hidden)


def test_the_patch_is_checked_with_a_message(gpt2):
    engine = gpt2[0]
    ids = list(engine.encode(CLEAN).ids)
    n, width = len(ids), engine.width
    for patch, message in (
        (Patch(heads={(5, 0): np.zeros((n, 8))}), r"head \(5, 0\) is not in this model"),
        (Patch(heads={(0, 0): np.zeros((n + 1, 8))}), rf"shaped \({n + 1}, 8\); this run needs \({n}, 8\)"),
        (Patch(residual={3: np.zeros((n, width))}), "a residual patch names a layer in 0..2"),
        (Patch(residual={0: np.full((n, width), np.nan)}), "not numbers"),
    ):
        with pytest.raises(ValueError, match=message):
            engine.hidden_states(ids, patch=patch)
    with pytest.raises(ValueError, match=r"changes layer 0, before the first one run \(1\)"):
        engine.layers_from(
            1, np.zeros((n, width), np.float32), patch=Patch(residual={0: np.zeros((n, width))})
        )
    with pytest.raises(TypeError, match="Patch"):
        check_patch({"heads": {}}, 3, 4, (n, 8, width))
    assert check_patch(Patch(), 3, 4, (n, 8, width)) is None


# ---- the measure: restored fractions from the two runs' metrics ----------------------------------------


def _logit_gap(logits, ids):
    z = logits - logits.max()
    logprobs = z - np.log(np.exp(z).sum())
    return logprobs[ids[0]] - logprobs[ids[1]]


def test_head_grid_is_the_formula_on_transformers_metrics(gpt2):
    engine, _, model = gpt2
    clean_ids, corrupt_ids, differ = _pair(engine)
    metric, option_ids = option_metric(engine, [" trophy", " suitcase"])
    assert option_ids == [
        engine.tokenizer.encode(" trophy").ids[0],
        engine.tokenizer.encode(" suitcase").ids[0],
    ]
    m_clean = _logit_gap(reference(model, clean_ids)[1], option_ids)
    m_corrupt = _logit_gap(reference(model, corrupt_ids)[1], option_ids)
    _, clean_ctx = contexts_of(engine, clean_ids)
    _, corrupt_ctx = contexts_of(engine, corrupt_ids)
    for position in (None, differ, len(clean_ids) - 1):
        found = patch_heads(engine, clean_ids, corrupt_ids, metric, position)
        assert found.metric_clean == pytest.approx(m_clean, abs=1e-4)
        assert found.metric_corrupt == pytest.approx(m_corrupt, abs=1e-4)
        expected = np.zeros((3, 4))
        for layer, head in np.ndindex(3, 4):
            value = clean_ctx[layer, head].copy()
            rows = slice(None) if position is None else slice(position, position + 1)
            value[rows] = corrupt_ctx[layer, head, rows]
            m = _logit_gap(reference(model, clean_ids, heads={(layer, head): value})[1], option_ids)
            expected[layer, head] = (m - m_clean) / (m_corrupt - m_clean)
        np.testing.assert_allclose(found.restored, expected, atol=1e-3)
        np.testing.assert_allclose(
            found.restored, (found.patched - found.metric_clean) / (found.metric_corrupt - found.metric_clean)
        )


def test_residual_grid_by_hand_and_against_the_torch_engine(gpt2):
    engine, torch_engine, model = gpt2
    clean_ids, corrupt_ids, differ = _pair(engine)
    metric, option_ids = option_metric(engine, [" trophy", " suitcase"])
    found = patch_residual(engine, clean_ids, corrupt_ids, metric)
    assert found.restored.shape == (3, len(clean_ids))
    # the corrupt embedding at the one differing token: the corrupt run, to float32 rounding (the patched
    # run computes the positions from the difference on, after the cached ones)
    assert found.restored[0, differ] == pytest.approx(1.0, abs=1e-4)
    assert not found.restored[:, :differ].any()  # before the difference a decoder's states are the same
    # the last position entering the last layer carries everything that reaches the answer
    clean_hidden = engine.hidden_states(clean_ids)
    corrupt_hidden = engine.hidden_states(corrupt_ids)
    value = clean_hidden[2].copy()
    value[-1] = corrupt_hidden[2, -1]
    m = _logit_gap(reference(model, clean_ids, residual={2: value})[1], option_ids)
    assert found.restored[2, -1] == pytest.approx(
        (m - found.metric_clean) / (found.metric_corrupt - found.metric_clean), abs=1e-3
    )
    theirs = patch_residual(torch_engine, clean_ids, corrupt_ids, metric)
    np.testing.assert_allclose(found.restored, theirs.restored, atol=1e-3)
    np.testing.assert_allclose(
        patch_heads(engine, clean_ids, corrupt_ids, metric).restored,
        patch_heads(torch_engine, clean_ids, corrupt_ids, metric).restored,
        atol=1e-3,
    )


def test_without_options_the_metric_is_the_shift_of_the_next_token_distribution(gpt2):
    engine, _, model = gpt2
    clean_ids, corrupt_ids, _ = _pair(engine)
    metric = next_token_shift(engine, engine.hidden_states(clean_ids))
    found = patch_heads(engine, clean_ids, corrupt_ids, metric)

    def probs(logits):
        e = np.exp(logits - logits.max())
        return e / e.sum()

    p_clean = probs(reference(model, clean_ids)[1])
    tv_corrupt = 0.5 * np.abs(probs(reference(model, corrupt_ids)[1]) - p_clean).sum()
    assert found.metric_clean == 0.0 and found.metric_corrupt == pytest.approx(tv_corrupt, abs=1e-5)
    corrupt_ctx = contexts_of(engine, corrupt_ids)[1]
    for layer, head in ((0, 0), (2, 3)):
        patched = probs(reference(model, clean_ids, heads={(layer, head): corrupt_ctx[layer, head]})[1])
        tv = 0.5 * np.abs(patched - p_clean).sum()
        assert found.restored[layer, head] == pytest.approx(tv / tv_corrupt, abs=1e-4)


@pytest.mark.slow
def test_bert_pronoun_grid_is_the_formula_on_transformers_cosines(bert):
    engine, _, model = bert
    clean_ids, corrupt_ids, differ = _pair(engine, BERT_CLEAN, BERT_CORRUPT)
    tokens = engine.encode(BERT_CLEAN).tokens
    it, trophy, suitcase = (tokens.index(w) for w in ("it", "trophy", "suitcase"))
    layer = 4
    metric = pronoun_metric(engine.run(BERT_CLEAN), "it", "Trophy", "suitcase", layer)

    def gap(hidden):
        h = hidden[layer].astype(np.float64)
        cos = (h @ h[it]) / (np.linalg.norm(h, axis=1) * np.linalg.norm(h[it]))
        return cos[trophy] - cos[suitcase]

    m_clean, m_corrupt = gap(reference(model, clean_ids)[0]), gap(reference(model, corrupt_ids)[0])
    heads = patch_heads(engine, clean_ids, corrupt_ids, metric, differ)
    assert heads.metric_clean == pytest.approx(m_clean, abs=1e-5)
    assert heads.metric_corrupt == pytest.approx(m_corrupt, abs=1e-5)
    assert not heads.restored[layer:].any()  # heads after the layer read change nothing there
    _, clean_ctx = contexts_of(engine, clean_ids)
    _, corrupt_ctx = contexts_of(engine, corrupt_ids)
    for at, head in ((0, 3), (2, 7), (3, 11)):
        value = clean_ctx[at, head].copy()
        value[differ] = corrupt_ctx[at, head, differ]
        m = gap(reference(model, clean_ids, heads={(at, head): value})[0])
        assert heads.restored[at, head] == pytest.approx((m - m_clean) / (m_corrupt - m_clean), abs=1e-3)
    residual = patch_residual(engine, clean_ids, corrupt_ids, metric)
    assert residual.restored[0, differ] == 1.0  # the corrupt embedding there is the corrupt run
    assert not np.delete(residual.restored[0], differ).any()  # the other rows are the clean ones


# ---- bad pairs and metrics -----------------------------------------------------------------------------


def test_pairs_of_different_lengths_or_identical_are_refused_in_one_line(gpt2):
    engine = gpt2[0]
    with pytest.raises(
        ValueError, match=r"different lengths \(\d+ and \d+ tokens\).*differ from token"
    ) as err:
        encode_pair(
            engine, CLEAN, "The trophy would not fit in the suitcase because it was too enormously big."
        )
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="nothing to restore: the two sentences are the same"):
        encode_pair(engine, CLEAN, CLEAN)
    ids = list(engine.encode(CLEAN).ids)
    with pytest.raises(ValueError, match="the same"):
        patch_heads(engine, ids, ids, lambda hidden: 0.0)
    with pytest.raises(ValueError, match="position must be in"):
        patch_heads(engine, ids, [*ids[:-1], ids[-2]], lambda hidden: 0.0, position=len(ids))
    with pytest.raises(ValueError, match="nothing to restore: both sentences give the metric"):
        patch_heads(engine, ids, [*ids[:-1], ids[-2]], lambda hidden: 1.0)


def test_options_and_pronoun_words_are_checked(gpt2, bert):
    from core.models.bert import TextError

    engine = gpt2[0]
    with pytest.raises(TextError, match="has no tokens"):
        option_metric(engine, [" trophy", ""])
    with pytest.raises(TextError, match="start with the same token"):
        option_metric(engine, [" trophy", " trophy"])
    with pytest.raises(ValueError, match="two options"):
        option_metric(engine, [" trophy"])
    result = bert[0].run(BERT_CLEAN)
    with pytest.raises(ValueError, match="the rival word 'box' is not in the first sentence"):
        pronoun_metric(result, "it", "trophy", "box", 3)
    with pytest.raises(ValueError, match=r"layer must be in 0\.\.6"):
        pronoun_metric(result, "it", "trophy", "suitcase", 7)
    with pytest.raises(ValueError, match=r"index must be in 0\.\.15, got 16"):
        pronoun_metric(result, 16, "trophy", "suitcase", 3)


def test_a_focus_word_given_by_its_index_is_that_occurrence(bert):
    """ "the" occurs twice; the metric for its second occurrence, given as its word index (special
    tokens are words of their own), is the cosine from that word's own vector."""
    from core.measures.analysis import word_spans

    result = bert[0].run(BERT_CLEAN)
    tokens, hidden = result.tokens, result.hidden_states
    spans = word_spans(result.word_ids, result.special_mask)
    the = [i for i, t in enumerate(tokens) if t == "the"]
    second = next(w for w, (start, _) in enumerate(spans) if start == the[1])
    trophy, suitcase = tokens.index("trophy"), tokens.index("suitcase")
    h = hidden[3].astype(np.float64)
    cos = (h @ h[the[1]]) / (np.linalg.norm(h, axis=1) * np.linalg.norm(h[the[1]]))
    metric = pronoun_metric(result, second, "trophy", "suitcase", 3)
    assert metric(hidden) == pytest.approx(cos[trophy] - cos[suitcase], abs=1e-6)
    first = pronoun_metric(result, "the", "trophy", "suitcase", 3)  # text: the first occurrence
    assert abs(metric(hidden) - first(hidden)) > 1e-3


def test_progress_is_reported_for_every_cell(gpt2):
    engine = gpt2[0]
    clean_ids, corrupt_ids, _ = _pair(engine)
    metric = option_metric(engine, [" trophy", " suitcase"])[0]
    seen = []
    found = patch_heads(engine, clean_ids, corrupt_ids, metric, 0, progress=lambda *done: seen.append(done))
    assert seen == [(i, 12) for i in range(1, 13)]
    assert not found.restored.any()  # position 0 is the same token in both: nothing moves, nothing runs


@pytest.mark.parametrize("family", ["gpt2", "llama"])
@pytest.mark.parametrize("runs_at_once", [4, 3])  # a layer's 4 heads as one batch, or as 3 + 1
def test_a_decoders_batched_grids_are_the_runs_one_at_a_time(family, runs_at_once, request, monkeypatch):
    from core.measures import sweep

    engine = request.getfixturevalue(family)[0]
    clean_ids, corrupt_ids, differ = _pair(engine)
    # runs compute the positions from the first difference on: that many rows each
    monkeypatch.setattr(sweep, "BATCH_ROWS", runs_at_once * (len(clean_ids) - differ))
    clean_hidden, clean_ctx = contexts_of(engine, clean_ids)
    corrupt_hidden, corrupt_ctx = contexts_of(engine, corrupt_ids)
    seen = []

    def metric(hidden):  # each run's hidden states kept, in the order the sweep scores them
        seen.append(hidden)
        return float(hidden[-1, -1] @ np.arange(hidden.shape[-1]))

    for position in (None, differ):
        rows = slice(None) if position is None else slice(position, position + 1)
        seen.clear()
        found = patch_heads(engine, clean_ids, corrupt_ids, metric, position)
        expected = []
        for layer, head in np.ndindex(clean_ctx.shape[:2]):
            value = clean_ctx[layer, head].copy()
            value[rows] = corrupt_ctx[layer, head, rows]
            expected.append(engine.hidden_states(clean_ids, patch=Patch(heads={(layer, head): value})))
        assert len(seen) == 2 + len(expected)  # the two runs', then every cell's (none is the clean run)
        np.testing.assert_allclose(np.stack(seen[2:]), np.stack(expected), atol=1e-5)
        np.testing.assert_allclose(found.patched.ravel(), [metric(h) for h in expected], atol=1e-4)
    seen.clear()
    found = patch_residual(engine, clean_ids, corrupt_ids, metric)
    expected = []
    for layer, at in np.ndindex(found.patched.shape):
        value = clean_hidden[layer].copy()
        value[at] = corrupt_hidden[layer, at]
        if not np.array_equal(value, clean_hidden[layer]):  # else the clean run's own values: not run
            expected.append(engine.hidden_states(clean_ids, patch=Patch(residual={layer: value})))
    np.testing.assert_allclose(np.stack(seen[2:]), np.stack(expected), atol=1e-5)
    # a batch's patch holds one array per run (B, T, D), or one for every run (T, D)
    both = np.stack([clean_hidden[0], corrupt_hidden[0]])
    one_each = engine.layers_from(0, np.stack([clean_hidden[0]] * 2), patch=Patch(residual={0: both}))
    np.testing.assert_allclose(one_each.hidden_states[-1, 1], corrupt_hidden[-1], atol=1e-5)
    shared = engine.layers_from(0, both, patch=Patch(residual={0: clean_hidden[0]}))
    np.testing.assert_allclose(shared.hidden_states[-1, 1], clean_hidden[-1], atol=1e-5)
    # a batch after a shared past (the positions before the difference) is each run after that past
    prefix = engine.forward(np.asarray(clean_ids[:differ])).cache
    batch = np.stack([clean_hidden[1, differ:], corrupt_hidden[1, differ:]])
    together = engine.layers_from(1, batch, past=prefix).hidden_states  # (L, B, T', D)
    for run, x in enumerate(batch):
        alone = engine.layers_from(1, x, past=prefix).hidden_states
        np.testing.assert_allclose(together[:, run], alone, atol=1e-5)
    np.testing.assert_allclose(together[:, 0], clean_hidden[1:, differ:], atol=1e-5)
