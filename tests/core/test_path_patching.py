"""Path patching (core/measures/paths.py) against a reference written on transformers' own models with
forward hooks, on a random GPT-2 and a tiny random Llama with grouped-query attention (4 query heads,
2 key/value heads), both loaded by the NumPy engines from the same checkpoints: the patched metrics
within 1e-5, to the logits and to receivers through their queries, keys and values. Then invariants
one can check by hand: a sender in the last layer reaches the logits only directly, so its path
effect is its activation-patching effect; senders at or after the receivers' layer are NaN; every
head is a sender by default; a chosen few are those of the whole grid. And the engines' new inputs:
a block with every head held attends to nothing, reads of a batch are the runs one at a time.

The reference (Wang et al. 2022's recipe, literally): hold heads with a pre-hook on W^O (c_proj,
o_proj) that overwrites the head's columns of its input; read the stream patched by the sender from
output_hidden_states; make a receiver's query (key, value) from that stream with the layer's own
modules, put in by a forward hook on c_attn / q_proj. A Llama's key or value read must change one
query head's view and not its group's, which no projection's output can do: there it is put in by
an attention function registered with transformers' AttentionInterface (the eager one, after
repeat_kv)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.measures.patching import patch_heads
from core.measures.paths import PathItem, path_patch, path_patch_reads
from core.models.architectures import load_engine
from core.models.interventions import Patch
from tests.tiny_gpt2 import make_tiny_gpt2
from tests.tiny_llama import make_tiny_llama

TOL = 1e-5
PROBE = "path_probe"  # the attention function that puts in a Llama head's key or value read
READS: dict[int, dict[int, tuple[str, torch.Tensor]]] = {}  # layer -> {query head: (kind, (1, T, d))}


def _probe_attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    """transformers' eager attention, with one query head's key or value replaced after repeat_kv."""
    from types import SimpleNamespace

    from transformers.models.llama.modeling_llama import eager_attention_forward, repeat_kv

    key = repeat_kv(key, module.num_key_value_groups).clone()  # (1, H, T, d)
    value = repeat_kv(value, module.num_key_value_groups).clone()
    for head, (kind, tensor) in READS.get(module.layer_idx, {}).items():
        (key if kind == "k" else value)[:, head] = tensor
    shared = SimpleNamespace(num_key_value_groups=1, training=False)
    return eager_attention_forward(shared, query, key, value, attention_mask, scaling, dropout, **kwargs)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    from transformers import GPT2LMHeadModel

    path = make_tiny_gpt2(tmp_path_factory.mktemp("paths-gpt2"), n_layer=3, n_head=4, n_embd=32)
    model = GPT2LMHeadModel.from_pretrained(path, attn_implementation="eager").eval()
    return load_engine(str(path)), model


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    from transformers import AttentionInterface, LlamaForCausalLM
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(PROBE, _probe_attention)
    AttentionMaskInterface.register(PROBE, eager_mask)
    path = make_tiny_llama(tmp_path_factory.mktemp("paths-llama"), layers=3, heads=4, kv_heads=2)
    model = LlamaForCausalLM.from_pretrained(path, attn_implementation=PROBE).eval()
    return load_engine(str(path)), model


def make_items(engine, lengths=(9, 9, 12), seed=0) -> list[PathItem]:
    """Random prompt pairs that differ at two positions, of the given lengths."""
    rng, items = np.random.default_rng(seed), []
    for length in lengths:
        clean = rng.integers(0, engine.vocab_size, length)
        corrupt = clean.copy()
        for at in (2, length - 4):
            corrupt[at] = (clean[at] + 1 + rng.integers(0, engine.vocab_size - 1)) % engine.vocab_size
        answer, rival = rng.choice(engine.vocab_size, 2, replace=False)
        items.append(PathItem(clean.tolist(), corrupt.tolist(), int(answer), int(rival)))
    return items


# ---- the hook reference -------------------------------------------------------------------------


class Reference:
    """A transformers model with its W^O inputs held and its receivers' reads put in by hooks."""

    def __init__(self, model, family: str):
        self.model, self.family = model, family
        config = model.config
        self.n_layers, self.n_heads = config.num_hidden_layers, config.num_attention_heads
        self.d = config.hidden_size // self.n_heads
        self.blocks = model.transformer.h if family == "gpt2" else model.model.layers

    def w_o(self, layer):
        block = self.blocks[layer]
        return block.attn.c_proj if self.family == "gpt2" else block.self_attn.o_proj

    def contexts(self, ids) -> list[torch.Tensor]:
        """Every layer's input to W^O (T, D): the heads' weighted sums side by side."""
        seen, hooks = [], []
        for layer in range(self.n_layers):
            hooks.append(self.w_o(layer).register_forward_pre_hook(lambda m, a: seen.append(a[0][0].clone())))
        try:
            with torch.no_grad():
                self.model(torch.tensor([ids]))
        finally:
            for hook in hooks:
                hook.remove()
        return seen

    def run(self, ids, held: dict, reads: dict | None = None, hidden=False):
        """The model on ids with held[(layer, head)] = (T, d) put in before W^O and reads[(layer,
        head, kind)] = (T, D) the stream that head's q/k/v is made from; (metric rows, hidden)."""
        hooks = []
        for layer in range(self.n_layers):
            mine = {head: value for (at, head), value in held.items() if at == layer}
            if mine:
                hooks.append(self.w_o(layer).register_forward_pre_hook(self._holder(mine)))
        READS.clear()
        try:
            for (layer, head, kind), stream in (reads or {}).items():
                hooks.append(self._reader(layer, head, kind, stream))
            with torch.no_grad():
                out = self.model(torch.tensor([ids]), output_hidden_states=hidden)
        finally:
            READS.clear()
            for hook in hooks:
                if hook is not None:
                    hook.remove()
        return out.logits[0, -1].double(), out.hidden_states if hidden else None

    def _holder(self, mine):
        def hook(module, args):
            concat = args[0].clone()
            for head, value in mine.items():
                concat[0, :, head * self.d : (head + 1) * self.d] = value
            return (concat,)

        return hook

    def _reader(self, layer, head, kind, stream):
        """A forward hook putting in head's q (k, v) made from `stream` (1, T, D), or a READS entry."""
        block, d, cols = self.blocks[layer], self.d, slice(head * self.d, (head + 1) * self.d)
        with torch.no_grad():
            if self.family == "gpt2":
                made = block.attn.c_attn(block.ln_1(stream))  # (1, T, 3 D): q, k, v side by side
                part = "qkv".index(kind) * self.model.config.hidden_size
                wanted = made[..., part + cols.start : part + cols.stop]
                return block.attn.c_attn.register_forward_hook(
                    _columns(slice(part + cols.start, part + cols.stop), wanted)
                )
            attn, normed = block.self_attn, block.input_layernorm(stream)
            if kind == "q":
                return attn.q_proj.register_forward_hook(_columns(cols, attn.q_proj(normed)[..., cols]))
            group = head // attn.num_key_value_groups
            made = (attn.k_proj if kind == "k" else attn.v_proj)(normed)
            made = made.view(1, made.shape[1], -1, d).transpose(1, 2)  # (1, H_kv, T, d)
            if kind == "k":
                from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

                positions = torch.arange(stream.shape[1])[None]
                cos, sin = self.model.model.rotary_emb(normed, positions)
                made, _ = apply_rotary_pos_emb(made, made, cos, sin)
            READS.setdefault(layer, {})[head] = (kind, made[:, group])
        return None


def _columns(cols, wanted):
    def hook(module, args, output):
        output = output.clone()
        output[..., cols] = wanted
        return output

    return hook


def reference_paths(reference: Reference, items, to=(), via=None) -> np.ndarray:
    """(L, H) mean metric per sender, Wang et al.'s recipe run with the hooks; NaN where no receiver
    comes after the sender."""
    L, H, d = reference.n_layers, reference.n_heads, reference.d
    patched = np.full((L, H), np.nan)
    for layer, head in np.ndindex(L, H):
        reach = [(at, h) for at, h in to if at > layer]
        if to and not reach:
            continue
        total = 0.0
        for item in items:
            clean, corrupt = reference.contexts(item.clean), reference.contexts(item.corrupt)
            held = {(layer, head): corrupt[layer][:, head * d : (head + 1) * d]}
            held |= {(k, j): clean[k][:, j * d : (j + 1) * d] for k in range(layer + 1, L) for j in range(H)}
            logits, hidden = reference.run(item.clean, held, hidden=bool(to))
            if to:  # the stream entering each receiver's layer, only the sender patched
                reads = {(at, h, via): hidden[at] for at, h in reach}
                logits, _ = reference.run(item.clean, {}, reads)
            total += float(logits[item.answer] - logits[item.rival])
        patched[layer, head] = total / len(items)
    return patched


# ---- against the reference -------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["gpt2", "llama"])
@pytest.mark.parametrize(
    ("to", "via"),
    [((), None), (((2, 1), (2, 2)), "q"), (((1, 0), (2, 3)), "q"), (((1, 0), (2, 3)), "k"), (((2, 1),), "v")],
)
def test_path_patching_matches_the_hook_reference(family, to, via, request):
    engine, model = request.getfixturevalue(family)
    items = make_items(engine)
    found = path_patch(engine, items, to=list(to), via=via)
    theirs = reference_paths(Reference(model, family), items, to, via)
    np.testing.assert_array_equal(np.isnan(found.patched), np.isnan(theirs))
    measured = ~np.isnan(theirs)
    assert np.abs(found.patched[measured] - theirs[measured]).max() < TOL
    # the grid is not trivially the clean metric: some sender moves it
    assert np.abs(found.patched[measured] - found.metric_clean).max() > 1e-3
    clean = np.mean([float(_logit_diff(model, item.clean, item)) for item in items])
    assert found.metric_clean == pytest.approx(clean, abs=TOL)
    spread = found.metric_corrupt - found.metric_clean
    np.testing.assert_allclose(found.restored, (found.patched - found.metric_clean) / spread)


def _logit_diff(model, ids, item):
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    return logits[item.answer] - logits[item.rival]


# ---- invariants ------------------------------------------------------------------------------------


def _metric(engine, item):
    return lambda hidden: float(np.diff(engine.token_logits(hidden[-1, -1], [item.rival, item.answer]))[0])


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_a_last_layer_sender_to_the_logits_is_activation_patching(family, request):
    engine, _ = request.getfixturevalue(family)
    item = make_items(engine, lengths=(10,), seed=3)[0]
    found = path_patch(engine, [item], senders=[(2, h) for h in range(4)])
    plain = patch_heads(engine, item.clean, item.corrupt, _metric(engine, item))
    np.testing.assert_allclose(found.patched[2], plain.patched[2], atol=1e-5)
    assert found.metric_clean == pytest.approx(plain.metric_clean, abs=1e-5)
    assert np.isnan(found.patched[:2]).all()  # not asked for: not measured
    # earlier senders differ from activation patching: their effect through later heads is cut
    every = path_patch(engine, [item])
    assert not np.isnan(every.patched).any() and every.patched.shape == (3, 4)
    assert np.abs(every.patched[:2] - plain.patched[:2]).max() > 1e-4
    np.testing.assert_allclose(every.patched[2], found.patched[2], atol=1e-6)


def test_senders_at_or_after_the_receivers_are_nan_and_a_subset_is_the_grid_s(gpt2):
    engine, _ = gpt2
    items, seen = make_items(engine), []
    grid = path_patch(
        engine, items, to=[(1, 2)], via="v", progress=lambda done, total: seen.append((done, total))
    )
    assert np.isnan(grid.patched[1:]).all() and not np.isnan(grid.patched[0]).any()
    assert seen[-1] == (12, 12) and [done for done, _ in seen] == sorted(done for done, _ in seen)
    seen.clear()
    direct = path_patch(engine, items, senders=[(1, 0), (2, 3)], progress=lambda *pair: seen.append(pair))
    assert seen[-1] == (2, 2) and [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert np.isnan(direct.patched).sum() == 10
    few = path_patch(engine, items, to=[(1, 2)], via="v", senders=[(0, 3), (0, 1)])
    np.testing.assert_allclose(few.patched[0, [1, 3]], grid.patched[0, [1, 3]], atol=1e-6)
    assert np.isnan(few.patched[0, [0, 2]]).all()


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_several_reads_at_once_are_each_alone(family, request):
    engine, _ = request.getfixturevalue(family)
    items, to = make_items(engine, lengths=(9, 12, 9, 12, 11)), [(2, 0), (1, 1)]
    together = path_patch_reads(engine, items, to=to, vias="vq")
    assert list(together) == ["v", "q"]
    for via, found in together.items():
        alone = path_patch(engine, items, to=to, via=via)
        np.testing.assert_allclose(found.patched, alone.patched, atol=1e-6)
        np.testing.assert_allclose(found.restored, alone.restored, atol=1e-5)
    with pytest.raises(ValueError, match="needs receivers"):
        path_patch_reads(engine, items, to=[])


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        (dict(via="q"), "together"),
        (dict(to=[(1, 0)]), "together"),
        (dict(to=[(1, 0)], via="o"), "via is"),
        (dict(to=[(3, 0)], via="q"), "not in this model"),
        (dict(senders=[(0, 4)]), "not in this model"),
    ],
)
def test_bad_arguments_say_what_to_do(gpt2, kwargs, says):
    engine, _ = gpt2
    with pytest.raises(ValueError, match=says):
        path_patch(engine, make_items(engine), **kwargs)


def test_bad_items_and_engines_are_refused(gpt2):
    engine, _ = gpt2
    item = make_items(engine)[0]
    for bad, says in [
        (PathItem(item.clean, item.corrupt[:-1], 1, 2), "differ in length"),
        (PathItem(item.clean, item.clean, 1, 2), "same tokens"),
        (PathItem(item.clean, item.corrupt, 1, 1), "same token"),
        (PathItem(item.clean, item.corrupt, 1, engine.vocab_size), "must be integers that lie in"),
        (PathItem([*item.clean, -1], [*item.corrupt, 2], 1, 2), "must be integers that lie in"),
    ]:
        with pytest.raises(ValueError, match=says):
            path_patch(engine, [bad])
    with pytest.raises(ValueError, match="NumPy decoder"):
        path_patch(object(), [item])


# ---- the engines' new inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_held_heads_and_reads_of_the_run_itself_change_nothing(family, request):
    engine, _ = request.getfixturevalue(family)
    ids = np.asarray(make_items(engine)[0].clean)
    plain = engine.forward(ids, trace_layers=range(3))
    held = {(1, h): plain.steps[1]["context"][h] for h in range(4)}
    out = engine.forward(ids, patch=Patch(heads=held))
    np.testing.assert_allclose(out.hidden_states, plain.hidden_states, atol=1e-5)
    assert np.isnan(out.attentions[1]).all() and out.cache[1] == (None, None)  # layer 1 attended to nothing
    reads = {(2, h, kind): plain.hidden_states[2] for h in (0, 3) for kind in "qkv"}
    out = engine.forward(ids, patch=Patch(reads=reads))
    np.testing.assert_allclose(out.hidden_states, plain.hidden_states, atol=1e-5)
    np.testing.assert_allclose(out.attentions, plain.attentions, atol=1e-6)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_a_batch_of_reads_is_the_runs_one_at_a_time(family, request):
    engine, _ = request.getfixturevalue(family)
    item = make_items(engine)[0]
    clean, corrupt = (engine.forward(np.asarray(ids)).hidden_states for ids in (item.clean, item.corrupt))
    streams = np.stack([corrupt[1], clean[1], 0.5 * (clean[1] + corrupt[1])])  # (3, T, D)
    start = 2  # the first position the pair differs at: the earlier ones from the clean cache
    past = [(k[:, :start], v[:, :start]) for k, v in engine.forward(np.asarray(item.clean)).cache]
    x = np.repeat(clean[None, 1, start:], 3, axis=0)
    reads = {(1, 1, "k"): streams[:, start:], (2, 2, "q"): streams[:, start:] * 1.1}
    batch = engine.layers_from(1, x, past=past, patch=Patch(reads=reads)).hidden_states  # (L, 3, T', D)
    for b in range(3):
        one = {key: value[b] for key, value in reads.items()}
        alone = engine.layers_from(1, x[b], past=past, patch=Patch(reads=one)).hidden_states
        np.testing.assert_allclose(batch[:, b], alone, atol=1e-5)
        full = {
            key: np.concatenate([clean[key[0], :start] * (1.1 if key[2] == "q" else 1), value[b]])
            for key, value in reads.items()
        }
        whole = engine.layers_from(1, clean[1], patch=Patch(reads=full)).hidden_states
        np.testing.assert_allclose(alone, whole[:, start:], atol=1e-5)
    assert np.abs(batch[-1, 0] - batch[-1, 1]).max() > 1e-4


def test_the_other_engines_refuse_reads(gpt2):
    from core.models.architectures import load_torch_engine

    engine, model = gpt2
    ids = make_items(engine)[0].clean
    stream = engine.forward(np.asarray(ids)).hidden_states[1]
    torch_engine = load_torch_engine(model.name_or_path)
    with pytest.raises(ValueError, match="only the NumPy decoders"):
        torch_engine.hidden_states(ids, patch=Patch(reads={(1, 0, "q"): stream}))
    bert = load_engine("bundled")  # the NumPy BERT: its heads see both sides; no path patching
    n_tokens = len(bert.encode("it was big").ids)
    with pytest.raises(ValueError, match="only the NumPy decoders"):
        bert.run("it was big", patch=Patch(reads={(0, 0, "q"): np.zeros((n_tokens, 384))}))
