"""The NumPy GPT-2: a decoder checkpoint's forward pass, written as the learn page's steps.

It reads a GPT-2 checkpoint directory (config.json, model.safetensors, tokenizer.json or
vocab.json + merges.txt) and computes what transformers' GPT2LMHeadModel computes with eager
attention, with the functions the learn page teaches (core/lesson/attention.py,
core/lesson/layers.py). Where GPT-2 differs from BERT, the difference is a line of its own:

    1) x = token embedding + learned position embedding (no LayerNorm here, no token types)
    then in each block, with x its input:
    *) LayerNorm first: the block normalises its input (pre-LN; BERT normalises after the residual)
    2) project       Q, K, V = h W^Q + b^Q, h W^K + b^K, h W^V + b^V (one c_attn product, cut in three)
    3) scores        Q K^T
    4) scale         divided by sqrt(d_k)
    5) causal mask   scores above the diagonal set to -inf: a token sees itself and what came before;
       softmax       each row, so the masked weights are exact zeros
    6) weighted sum  probs V
    7) merge heads   concat W^O + b^O, then the residual (no LayerNorm after it); an ablated head's
                     d_k columns of concat are zeroed first (`ablate`, read here and nowhere else), a
                     patched head's replaced (`patch.heads`); with every head patched, steps 2-6 are
                     skipped; a head may compute its q, k or v from another residual stream
                     (`patch.reads`, path patching: step 2b in gpt2_attention)
    8) MLP           x + gelu_tanh(LayerNorm(x) W_1 + b_1) W_2 + b_2: the next block's x
    after the last block: LayerNorm (ln_f), then the tied unembedding: logits = h W_E^T, W_E being
    the token-embedding table itself. The last position's logits rank the next token.

With a KV cache (`past`), a forward pass runs only the new positions: their queries meet the cached
keys and values of every earlier position, which the causal mask would let them see anyway, so the
result equals recomputing everything (tests/core/test_gpt2.py checks it).

hidden_states follow transformers: the embeddings, each block's output, except that the last entry
is after ln_f (what the unembedding reads).

References: Radford et al. 2019, "Language Models are Unsupervised Multitask Learners"; transformers'
models/gpt2/modeling_gpt2.py (GPT2Attention, GPT2MLP, GPT2Block, GPT2Model); nanoGPT's model.py.

Letters in shape comments: T new positions, P cached positions, S = P + T positions seen, D width,
H heads, d_k = D / H, V vocabulary, L blocks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from core.lesson.attention import after_cached, attention_steps, causal_mask, merge_heads, split_heads
from core.lesson.layers import feed_forward, layer_norm, linear, residual
from core.models import registry
from core.models.checkpoint import read_safetensors, take_tensor
from core.models.decoder import (
    DecoderNumpy,
    Forward,
    Generation,
    GenerationStep,
    held_probs,
    load_tokenizer,
)
from core.models.errors import ModelFilesError
from core.models.gpt2_config import GPT2Config, check_gpt2_config
from core.models.gpt2_weights import read_block_weights
from core.models.interventions import check_heads, check_patch

__all__ = [
    "ENGINE_NAME",
    "Forward",
    "GPT2Numpy",
    "Generation",
    "GenerationStep",
    "decoder_block",
    "load_gpt2",
]

ENGINE_NAME = "numpy"


def load_gpt2(
    choice: registry.ModelSpec | str | Path,
    *,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> GPT2Numpy:
    """Load by ModelSpec or user text (a Hub id, a local folder), with the same files and messages as
    the BERT engine. Raises core.models.errors.ModelError subclasses."""
    return registry.load_choice(
        choice,
        GPT2Numpy.from_pretrained,
        check_config=check_gpt2_config,
        into="NumPy",
        name=name,
        progress=progress,
    )


# ---- one block ----------------------------------------------------------------------------------


def decoder_block(
    x: np.ndarray,
    w: SimpleNamespace,
    config: GPT2Config,
    *,
    past: tuple[np.ndarray, np.ndarray] | None = None,
    ablate_heads: Iterable[int] = (),
    patch_heads: Mapping[int, np.ndarray] | None = None,
    reads: Mapping[tuple[int, str], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """One GPT-2 block on x (T, D), the input of T new positions, step by step; past: the (key,
    value) (H, P, d_k) of P earlier positions (a KV cache), or None. Returns every intermediate by
    the trace's names ("ln1" is the normalised input, "normed" the MLP's normalised input), with
    "key" and "value" over all S = P + T positions (the cache for the next call) and "layer_output".
    x may be (B, T, D): B runs at once (every step broadcasts over B; the past is shared, or one per
    run with a leading B), a patched head's or a read's array then (B, T, ...) or (T, ...).
    patch_heads: {head: (T, d_k)} weighted sums merged instead of those computed; when every head is
    given (and nothing is read), steps 2-6 are skipped: no query, key, value or probs.
    reads: {(head, "q" | "k" | "v"): (T, D)}, the residual stream that head's query, key or value is
    computed from instead of x (step 2b)."""
    heads, eps = config.n_head, config.layer_norm_epsilon
    held = dict(patch_heads or {})
    # *) LayerNorm first: the block reads its input normalised, and adds back to the input itself
    ln1 = layer_norm(x, w.ln1_gamma, w.ln1_beta, eps)  # (T, D)
    if len(held) == heads and not reads:
        # every head held at a given weighted sum: nothing here depends on attending (path patching)
        steps = {"context": np.stack(np.broadcast_arrays(*(held[h] for h in range(heads))), axis=-3)}
    else:
        steps = gpt2_attention(ln1, w, config, past=past, reads=reads)  # steps 2-6
    # 7) merge the heads (an ablated head contributes zeros), W^O, and the residual: no LayerNorm
    context = steps["context"]  # (H, T, d_k)
    if (ablate_heads := sorted(set(ablate_heads))) or held:
        context = context.copy()
        for head, value in held.items():
            context[..., head, :, :] = value  # (T, d_k): another run's, patched in (patch_heads)
        context[..., ablate_heads, :, :] = 0.0
    concat = merge_heads(context)  # (T, D)
    output = linear(concat, w.w_o, w.b_o)  # (T, D)
    summed = residual(x, output)
    # 8) the MLP reads the residual stream normalised, and adds to it
    normed = layer_norm(summed, w.ln2_gamma, w.ln2_beta, eps)
    mlp = feed_forward(normed, w.w_1, w.b_1, w.w_2, w.b_2, config.activation_function)  # (T, D)
    return {
        **{"x": x, "ln1": ln1, **steps, "concat": concat, "output": output},
        **{"residual": summed, "normed": normed, "ffn": mlp, "layer_output": residual(summed, mlp)},
    }


def gpt2_attention(
    ln1: np.ndarray,
    w: SimpleNamespace,
    config: GPT2Config,
    *,
    past: tuple[np.ndarray, np.ndarray] | None = None,
    reads: Mapping[tuple[int, str], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Steps 2-6 of a GPT-2 block on its normalised input (T, D): every head's weighted sum, with the
    intermediates (query; key and value over all S positions, the cache)."""
    heads = config.n_head
    # 2) project the new positions, and put the cached keys and values in front of theirs
    query = split_heads(linear(ln1, w.w_q, w.b_q), heads)  # (T, D) -> (H, T, d_k)
    key = split_heads(linear(ln1, w.w_k, w.b_k), heads)  # (H, T, d_k)
    value = split_heads(linear(ln1, w.w_v, w.b_v), heads)  # (H, T, d_k)
    n_past = 0 if past is None else past[0].shape[-2]  # keys (H, P, d_k), or (B, H, P, d_k)
    if past is not None:
        key, value = after_cached(past[0], key), after_cached(past[1], value)  # (H, S, d_k)
    # 2b) reads: a head whose query, key or value comes from another residual stream (path patching);
    # the cache keeps the keys and values the block computed from x
    read = {"q": query, "k": key, "v": value}
    if reads:
        read = {kind: array.copy() for kind, array in read.items()}
    for (head, kind), stream in (reads or {}).items():
        read[kind][..., head, :, :] = _read(stream, w, config, head, kind, past)  # (T or S, d_k)
    # 3) scores, 4) scaled, 5) the causal mask, then softmax (exact zeros above the diagonal), 6) sum
    mask = causal_mask(ln1.shape[-2], n_past)  # (T, S): new position i is position P + i
    steps = attention_steps(read["q"], read["k"], read["v"], mask, scale=config.scale_attn_weights)
    return {"query": query, "key": key, "value": value, **steps}  # probs (H, T, S)


def _read(stream, w, config: GPT2Config, head: int, kind: str, past) -> np.ndarray:
    """Head `head`'s query, key or value (kind "q", "k", "v") computed from `stream` (T, D), a residual
    stream before the block's LayerNorm: (T, d_k) for a query, (S, d_k) for a key or value, after the
    cached ones."""
    cols = slice(head * config.d_k, (head + 1) * config.d_k)
    weight, bias = {"q": (w.w_q, w.b_q), "k": (w.w_k, w.b_k), "v": (w.w_v, w.b_v)}[kind]
    normed = layer_norm(stream, w.ln1_gamma, w.ln1_beta, config.layer_norm_epsilon)
    made = linear(normed, weight[:, cols], bias[cols])  # (T, d_k)
    if kind != "q" and past is not None:
        made = after_cached(past[0 if kind == "k" else 1][..., head, :, :], made)  # (S, d_k)
    return made


# ---- the model ----------------------------------------------------------------------------------


class GPT2Numpy(DecoderNumpy):
    """GPT-2 in NumPy: from_pretrained(dir), then run(text) -> AttentionResult, next_tokens, generate
    (core/models/decoder.py: what every decoder shares)."""

    engine = ENGINE_NAME

    def __init__(self, config: GPT2Config, tensors: dict[str, np.ndarray], tokenizer=None, name="gpt2"):
        """tensors: the checkpoint's, named without "transformer."; they are taken out of the dict."""
        super().__init__()
        self.config, self.tokenizer, self.name = config, tokenizer, name
        self.vocab_size = config.vocab_size
        self.n_layers, self.n_heads = config.n_layer, config.n_head
        # the width, one head's size, and the key/value heads the cache keeps (every head: no sharing)
        self.width, self.head_size, self.kv_heads = config.n_embd, config.d_k, config.n_head
        self.max_tokens = config.n_positions
        d = config.n_embd
        self.token_embeddings = take_tensor(tensors, "wte.weight", config.vocab_size, d)  # W_E (V, D)
        self.position_embeddings = take_tensor(tensors, "wpe.weight", config.n_positions, d)
        self.layers = [read_block_weights(tensors, i, config) for i in range(self.n_layers)]
        self.lnf_gamma = take_tensor(tensors, "ln_f.weight", d)
        self.lnf_beta = take_tensor(tensors, "ln_f.bias", d)
        for array in (self.token_embeddings, self.position_embeddings, self.lnf_gamma, self.lnf_beta):
            array.setflags(write=False)
        self.unembedding = self.token_embeddings  # tied: the unembedding is W_E itself

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, *, name: str | None = None) -> GPT2Numpy:
        model_dir = Path(path)
        if not model_dir.is_dir():
            raise ModelFilesError(f"{model_dir} is not a directory holding a model's files")
        config = GPT2Config.from_dict(registry.read_config(model_dir))
        tensors = read_safetensors(model_dir, prefix="transformer.")
        tokenizer = load_tokenizer(model_dir, config.n_positions)
        return cls(config, tensors, tokenizer, name=name or str(model_dir))

    def embed(self, ids: np.ndarray, start: int = 0) -> np.ndarray:
        """1) token + position embeddings of ids (T,) at positions start .. start + T - 1: (T, D)."""
        return self.token_embeddings[ids] + self.position_embeddings[start : start + len(ids)]

    def forward(self, input_ids, *, past=None, trace_layers=(), ablate=(), patch=None) -> Forward:
        """Token ids (T,) through every block, after the P positions cached in `past` (a Forward's
        cache, or None). ablate: (layer, head) pairs, 0-indexed, whose weighted sum is zeroed; patch:
        a core.models.interventions.Patch, its arrays as long as the new positions."""
        ids, n_past = np.asarray(input_ids), 0 if past is None else past[0][0].shape[1]
        self.check_ids(ids, n_past)
        x = self.embed(ids, start=n_past)
        return self.layers_from(0, x, past=past, trace_layers=trace_layers, ablate=ablate, patch=patch)

    def final_normed(self, x: np.ndarray) -> np.ndarray:
        """The final LayerNorm (ln_f) on x (..., D): what the unembedding reads."""
        return layer_norm(x, self.lnf_gamma, self.lnf_beta, self.config.layer_norm_epsilon)

    def layers_from(
        self, first: int, x: np.ndarray, *, stop=None, past=None, trace_layers=(), ablate=(), patch=None
    ):
        """Blocks first..stop-1 (stop None: to the last, then ln_f) on x (T, D) or (B, T, D) (see
        decoder_block), the input of block `first` (hidden_states[first] of an earlier pass: a head
        ablated or patched in block l changes nothing before it, so a sweep restarts here). A patched
        input is what hidden_states holds for its block. A block whose heads are all held by the
        patch attends to nothing: its attentions are NaN and its cache entry (None, None)."""
        if x.ndim > 2 and ablate:  # an ablation is one run's; a patch may hold one array per run
            raise ValueError("a batch of runs (B, T, D) takes no ablation")
        ablate, trace_layers = check_heads(ablate, self.n_layers, self.n_heads), set(trace_layers)
        shapes, batch = (x.shape[-2], self.head_size, self.width), x.shape[:-2]
        patch = check_patch(patch, self.n_layers, self.n_heads, shapes, first, batch=batch, no_reads=None)
        n_past = 0 if past is None else past[0][0].shape[-2]
        hidden, attentions, cache, steps = [x], [], [], {}
        stop = self.n_layers if stop is None else stop
        for i in range(first, stop):
            cut = [head for layer, head in ablate if layer == i]
            given, reads = (None, None) if patch is None else (patch.heads_of(i), patch.reads_of(i))
            if patch is not None and i in patch.residual:  # (T, D): the input block i reads
                hidden[-1] = np.broadcast_to(patch.residual[i], hidden[-1].shape)
            block = decoder_block(
                hidden[-1],
                self.layers[i],
                self.config,
                past=None if past is None else past[i],
                ablate_heads=cut,
                patch_heads=given,
                reads=reads,
            )
            hidden.append(block["layer_output"])
            attentions.append(block["probs"] if "probs" in block else held_probs(x, self.n_heads, n_past))
            cache.append((block.get("key"), block.get("value")))
            if i in trace_layers:
                steps[i] = block
        if stop == self.n_layers:
            hidden[-1] = self.final_normed(hidden[-1])
        return Forward(np.stack(hidden), np.stack(attentions), cache, steps)
