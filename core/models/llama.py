"""The NumPy Llama: a Llama-family decoder's forward pass (SmolLM2 is one), written as the learn
page's steps.

It reads a checkpoint directory (config.json, model.safetensors, tokenizer.json) and computes what
transformers' LlamaForCausalLM computes with eager attention, with the functions the learn page
teaches (core/lesson/). Where a Llama differs from GPT-2 (core/models/gpt2.py), the difference is a
line of its own:

    1) x = token embedding only: no position is added here (RoPE brings positions in, step 2b)
    then in each block, with x its input:
    *) RMSNorm first (not LayerNorm): divide by the root mean square, scale; no mean, no shift
    2) project       Q = h W^Q, K = h W^K, V = h W^V, no biases; K and V have H_kv heads, Q has H
    2b) RoPE         q and k turned by an angle proportional to their position (core/lesson/rope.py):
                     a score then depends on the distance between two tokens, not on where they are
    2c) GQA          each key/value head serves H / H_kv query heads (grouped-query attention); the
                     cache keeps the H_kv heads only, which is the memory it saves
    2d) reads        a head may compute its query, key or value from another residual stream
                     (`patch.reads`, path patching); a key or value read is that query head's alone
    3) scores        Q K^T
    4) scale         divided by sqrt(d_head)
    5) causal mask   scores above the diagonal set to -inf, then softmax
    6) weighted sum  probs V
    7) merge heads   concat W^O (no bias), then the residual; an ablated head's d_head columns of
                     concat are zeroed first (`ablate`, read here and nowhere else), a patched head's
                     replaced (`patch.heads`); with every head patched, steps 2-6 are skipped
    8) MLP           x + SwiGLU(RMSNorm(x)) = x + (silu(h W_gate) * (h W_up)) W_down: the next x
    after the last block: RMSNorm, then the unembedding (tied to the embedding table in SmolLM2).

With a KV cache (`past`), a forward pass runs only the new positions; the cached keys are stored
already turned by RoPE (each by its own position), so the result equals recomputing everything.

hidden_states follow transformers: the embeddings, each block's output, except that the last entry
is after the final RMSNorm (what the unembedding reads).

References: Touvron et al. 2023, "LLaMA"; Su et al. 2021 (RoPE); Ainslie et al. 2023 (GQA); Shazeer
2020 (GLU variants); transformers' models/llama/modeling_llama.py.

Letters in shape comments: T new positions, P cached positions, S = P + T positions seen, D width,
H query heads, H_kv key/value heads, d_head the head size, V vocabulary, L blocks.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from core.lesson.attention import (
    after_cached,
    attention_steps,
    causal_mask,
    merge_heads,
    share_kv_heads,
    split_heads,
)
from core.lesson.layers import linear, residual, rms_norm, swiglu_feed_forward
from core.lesson.rope import rope_tables, rotate
from core.models import registry
from core.models.bfloat16 import from_bfloat16, to_bfloat16
from core.models.checkpoint import read_safetensors, take_tensor
from core.models.decoder import DecoderNumpy, Forward, held_probs, load_tokenizer
from core.models.interventions import check_heads, check_patch
from core.models.llama_config import LlamaConfig
from core.models.llama_weights import read_block_weights

__all__ = ["LlamaNumpy", "llama_block"]  # loaded by architecture: architectures.load_engine

COMPACT_PASSES = 2  # forward passes a compact engine runs at once


# ---- one block ----------------------------------------------------------------------------------


def llama_block(
    x: np.ndarray,
    w: SimpleNamespace,
    config: LlamaConfig,
    rope: tuple[np.ndarray, np.ndarray],
    *,
    past: tuple[np.ndarray, np.ndarray] | None = None,
    ablate_heads: Iterable[int] = (),
    patch_heads: Mapping[int, np.ndarray] | None = None,
    reads: Mapping[tuple[int, str], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """One Llama block on x (T, D), the input of T new positions, step by step. rope: the (cos, sin)
    tables (T, d_head) of the new positions; past: the (key, value) (H_kv, P, d_head) of P earlier
    positions, keys already turned. Returns every intermediate by the trace's names, with "key" and
    "value" over all S positions and H_kv heads (the cache for the next call) and "layer_output".
    x may be (B, T, D): B runs at once (every step broadcasts over B; the past is shared, or one per
    run with a leading B), a patched head's or a read's array then (B, T, ...) or (T, ...).
    patch_heads: {head: (T, d_head)} weighted sums merged instead of those computed; when every head
    is given (and nothing is read), steps 2-6 are skipped: no query, key, value or probs.
    reads: {(head, "q" | "k" | "v"): (T, D)}, the residual stream that head's query, key or value is
    computed from instead of x (step 2d)."""
    heads = config.num_attention_heads
    held = dict(patch_heads or {})
    # *) RMSNorm first: the block reads its input normalised, and adds back to the input itself
    normed_in = rms_norm(x, w.norm1, config.rms_norm_eps)  # (T, D)
    if len(held) == heads and not reads:
        # every head held at a given weighted sum: nothing here depends on attending (path patching)
        steps = {"context": np.stack(np.broadcast_arrays(*(held[h] for h in range(heads))), axis=-3)}
    else:
        steps = llama_attention(normed_in, w, config, rope, past=past, reads=reads)  # steps 2-6
    # 7) merge the heads (an ablated head contributes zeros), W^O, and the residual
    context = steps["context"]  # (H, T, d_head)
    if (ablate_heads := sorted(set(ablate_heads))) or held:
        context = context.copy()
        for head, value in held.items():
            context[..., head, :, :] = value  # (T, d_k): another run's, patched in (patch_heads)
        context[..., ablate_heads, :, :] = 0.0
    concat = merge_heads(context)  # (T, H d_head)
    output = linear(concat, w.w_o)  # (T, D)
    summed = residual(x, output)
    # 8) the SwiGLU MLP reads the residual stream normalised, and adds to it
    normed = rms_norm(summed, w.norm2, config.rms_norm_eps)
    mlp = swiglu_feed_forward(normed, w.w_gate, w.w_up, w.w_down)  # (T, D)
    return {
        **{"x": x, "rmsnorm": normed_in, **steps, "concat": concat, "output": output},
        **{"residual": summed, "normed": normed, "ffn": mlp, "layer_output": residual(summed, mlp)},
    }


def llama_attention(
    normed_in: np.ndarray,
    w: SimpleNamespace,
    config: LlamaConfig,
    rope: tuple[np.ndarray, np.ndarray],
    *,
    past: tuple[np.ndarray, np.ndarray] | None = None,
    reads: Mapping[tuple[int, str], np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Steps 2-6 of a Llama block on its normalised input (T, D): every head's weighted sum, with the
    intermediates (query_raw, key_raw, query; key and value: the H_kv heads over all S positions)."""
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    # 2) project: H query heads, H_kv key and value heads
    query_raw = split_heads(linear(normed_in, w.w_q), heads)  # (H, T, d_head)
    key_raw = split_heads(linear(normed_in, w.w_k), kv_heads)  # (H_kv, T, d_head)
    value = split_heads(linear(normed_in, w.w_v), kv_heads)  # (H_kv, T, d_head)
    # 2b) RoPE: queries and keys turned by their positions' angles (values are not)
    query, key = rotate(query_raw, *rope), rotate(key_raw, *rope)
    # the cached keys are (H_kv, P, d_head), or (B, H_kv, P, d_head): one past per run
    n_past = 0 if past is None else past[0].shape[-2]
    if past is not None:
        key, value = after_cached(past[0], key), after_cached(past[1], value)  # (H_kv, S, d_head)
    # 2c) GQA: every query head reads its group's key/value head
    shared_key, shared_value = share_kv_heads(key, heads), share_kv_heads(value, heads)  # (H, S, d_head)
    # 2d) reads: a head whose query, key or value comes from another residual stream (path patching)
    for (head, kind), stream in (reads or {}).items():
        made = _read(stream, w, config, rope, head, kind, past)  # (T, d_head), or (S, d_head) for k, v
        target = {"q": query, "k": shared_key, "v": shared_value}[kind]
        target[..., head, :, :] = made  # only this query head's view: its group's others keep theirs
    # 3) scores, 4) scaled, 5) the causal mask, then softmax (exact zeros above the diagonal), 6) sum
    mask = causal_mask(normed_in.shape[-2], n_past)  # (T, S): new position i is position P + i
    steps = attention_steps(query, shared_key, shared_value, mask)  # probs (H, T, S)
    return {"query_raw": query_raw, "key_raw": key_raw, "query": query, "key": key, "value": value, **steps}


def _read(stream, w, config: LlamaConfig, rope, head: int, kind: str, past) -> np.ndarray:
    """Head `head`'s query, key or value (kind "q", "k", "v") computed from `stream` (T, D), a residual
    stream before the block's norm: (T, d_head) for a query, (S, d_head) for a key or value, after
    the cached ones of the head's key/value head."""
    d = config.head_dim
    group = head // (config.num_attention_heads // config.num_key_value_heads)  # its key/value head
    at = head if kind == "q" else group
    weight = {"q": w.w_q, "k": w.w_k, "v": w.w_v}[kind][:, at * d : (at + 1) * d]  # (D, d_head)
    made = linear(rms_norm(stream, w.norm1, config.rms_norm_eps), weight)  # (T, d_head)
    if kind != "v":
        made = rotate(made, *rope)
    if kind != "q" and past is not None:
        made = after_cached(past[0 if kind == "k" else 1][..., group, :, :], made)  # (S, d_head)
    return made


# ---- the model ----------------------------------------------------------------------------------


class LlamaNumpy(DecoderNumpy):
    """A Llama in NumPy: from_pretrained(dir), then run(text) -> AttentionResult, next_tokens,
    generate (core/models/decoder.py: what every decoder shares)."""

    def __init__(
        self,
        config: LlamaConfig,
        tensors: dict[str, np.ndarray],
        tokenizer=None,
        name="llama",
        *,
        compact=False,
    ):
        """tensors: the checkpoint's, named without "model."; they are taken out of the dict. compact:
        the tensors are bfloat16 halves (read_safetensors(hold=to_bfloat16)), kept so and expanded to
        float32 block by block as the forward pass reaches them (core/models/bfloat16.py)."""
        super().__init__()
        self.config, self.tokenizer, self.name, self.compact = config, tokenizer, name, compact
        # Compact is for a small shared server: at most two passes (or unembeddings) at once (it has two
        # cores, and each holds expanded weights and activations, about 35 MB for SmolLM2); the others
        # wait their turn instead of adding their memory.
        self._passes = threading.BoundedSemaphore(COMPACT_PASSES) if compact else contextlib.nullcontext()
        self.n_layers, self.n_heads = config.num_hidden_layers, config.num_attention_heads
        # the width, one head's size, and the key/value heads the cache keeps (shared: GQA)
        self.width, self.head_size = config.hidden_size, config.head_dim
        self.kv_heads = config.num_key_value_heads
        self.max_tokens, self.vocab_size = config.max_position_embeddings, config.vocab_size
        d = config.hidden_size
        self.token_embeddings = take_tensor(tensors, "embed_tokens.weight", config.vocab_size, d)  # (V, D)
        self._blocks = [read_block_weights(tensors, i, config) for i in range(self.n_layers)]
        self.final_norm = self._expanded(take_tensor(tensors, "norm.weight", d))
        self.unembedding = (
            self.token_embeddings
            if config.tie_word_embeddings
            else take_tensor(tensors, "lm_head.weight", config.vocab_size, d)  # (V, D), as logits = h W^T
        )
        for array in (self.token_embeddings, self.final_norm, self.unembedding):
            array.setflags(write=False)

    @classmethod
    def from_pretrained(
        cls, path: str | os.PathLike, *, name: str | None = None, compact=False
    ) -> LlamaNumpy:
        """The model in the checkpoint folder; compact: its weights held in bfloat16 (half the memory)."""
        model_dir = Path(path)
        config = LlamaConfig.from_dict(registry.read_config(model_dir))
        tensors = read_safetensors(model_dir, prefix="model.", hold=to_bfloat16 if compact else None)
        tokenizer = load_tokenizer(model_dir, config.max_position_embeddings)
        return cls(config, tensors, tokenizer, name=name or str(model_dir), compact=compact)

    def _expanded(self, array: np.ndarray) -> np.ndarray:
        """A weight as float32: as held, or expanded from its bfloat16 halves."""
        return from_bfloat16(array) if self.compact else array

    def block_weights(self, i: int) -> SimpleNamespace:
        """Block i's parameters in float32 (llama_weights.read_block_weights's names). Compact, a
        fresh expansion each call: 18 MB for SmolLM2, where all 30 blocks in float32 are 540 MB."""
        held = self._blocks[i]
        return (
            SimpleNamespace(**{k: self._expanded(v) for k, v in vars(held).items()}) if self.compact else held
        )

    def embed(self, ids: np.ndarray) -> np.ndarray:
        """1) the token embeddings of ids (T,): (T, D). No position is added here (RoPE, step 2b)."""
        return self._expanded(self.token_embeddings[ids])

    def rope(self, start: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """RoPE's (cos, sin) tables (n, d_head) for positions start .. start + n - 1."""
        return rope_tables(np.arange(start, start + n), self.config.head_dim, self.config.rope_theta)

    def forward(self, input_ids, *, past=None, trace_layers=(), ablate=(), patch=None) -> Forward:
        """Token ids (T,) through every block, after the P positions cached in `past` (a Forward's
        cache, or None). ablate: (layer, head) pairs, 0-indexed, whose weighted sum is zeroed; patch:
        a core.models.interventions.Patch, its arrays as long as the new positions."""
        ids, n_past = np.asarray(input_ids), 0 if past is None else past[0][0].shape[1]
        self.check_ids(ids, n_past)
        x = self.embed(ids)
        return self.layers_from(0, x, past=past, trace_layers=trace_layers, ablate=ablate, patch=patch)

    def final_normed(self, x: np.ndarray) -> np.ndarray:
        """The final RMSNorm on x (..., D): what the unembedding reads."""
        return rms_norm(x, self.final_norm, self.config.rms_norm_eps)

    def unembed(self, final_hidden: np.ndarray) -> np.ndarray:
        """(..., D) after the final RMSNorm -> (..., V) logits, h W_U^T. Compact, the table is expanded
        a slice of the vocabulary at a time (all of it in float32 is 113 MB for SmolLM2)."""
        if not self.compact:
            return super().unembed(final_hidden)
        with self._passes:  # each slice expanded is 14 MB: counted with the passes
            slices = np.array_split(self.unembedding, 8)
            return np.concatenate([final_hidden @ from_bfloat16(rows).T for rows in slices], axis=-1)

    def token_logits(self, final_hidden: np.ndarray, token_ids) -> np.ndarray:
        """The logits of `token_ids` only; compact, their rows are expanded from bfloat16."""
        if not self.compact:
            return super().token_logits(final_hidden, token_ids)
        return final_hidden @ from_bfloat16(self.unembedding[list(token_ids)]).T

    def layers_from(
        self, first: int, x: np.ndarray, *, stop=None, past=None, trace_layers=(), ablate=(), patch=None
    ):
        """Blocks first..stop-1 (stop None: to the last, then the final RMSNorm) on x (T, D) or
        (B, T, D) (see llama_block), the input of block `first` (hidden_states[first] of an earlier
        pass: a head ablated or patched in block l changes nothing before it, so a sweep restarts
        here). A patched input is what hidden_states holds for its block. A block whose heads are all
        held by the patch attends to nothing: its attentions are NaN and its cache entry (None, None).
        x's positions follow the P cached in `past`: RoPE turns them by positions P .. P + T - 1."""
        if x.ndim > 2 and ablate:  # an ablation is one run's; a patch may hold one array per run
            raise ValueError("a batch of runs (B, T, D) takes no ablation")
        ablate, trace_layers = check_heads(ablate, self.n_layers, self.n_heads), set(trace_layers)
        shapes, batch = (x.shape[-2], self.head_size, self.width), x.shape[:-2]
        patch = check_patch(patch, self.n_layers, self.n_heads, shapes, first, batch=batch, no_reads=None)
        n_past = 0 if past is None else past[0][0].shape[-2]
        rope = self.rope(n_past, x.shape[-2])
        hidden, attentions, cache, steps = [x], [], [], {}
        stop = self.n_layers if stop is None else stop
        with self._passes:
            for i in range(first, stop):
                cut = [head for layer, head in ablate if layer == i]
                given, reads = (None, None) if patch is None else (patch.heads_of(i), patch.reads_of(i))
                if patch is not None and i in patch.residual:  # (T, D): the input block i reads
                    hidden[-1] = np.broadcast_to(patch.residual[i], hidden[-1].shape)
                layer_past, weights = None if past is None else past[i], self.block_weights(i)
                block = llama_block(
                    hidden[-1],
                    weights,
                    self.config,
                    rope,
                    past=layer_past,
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
