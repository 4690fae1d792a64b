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
                     d_k columns of concat are zeroed first (`ablate`, read here and nowhere else)
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
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from core.lesson.attention import attention_steps, causal_mask, merge_heads, softmax, split_heads
from core.lesson.layers import feed_forward, layer_norm, linear, residual
from core.models import registry
from core.models.bert import TextError, check_text
from core.models.checkpoint import read_safetensors, take_tensor
from core.models.errors import ModelFilesError
from core.models.gpt2_config import GPT2Config, check_gpt2_config
from core.models.gpt2_weights import read_block_weights
from core.models.interventions import check_heads
from core.models.result import AttentionResult, result_from_encoding

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


def _load_tokenizer(model_dir: Path, max_length: int):
    """GPT-2's byte-level BPE as a `tokenizers.Tokenizer`: adds no special token, never pads, and
    truncates at max_length."""
    from tokenizers import Tokenizer
    from tokenizers.implementations import ByteLevelBPETokenizer

    try:
        if (model_dir / "tokenizer.json").is_file():
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        elif (model_dir / "vocab.json").is_file() and (model_dir / "merges.txt").is_file():
            tokenizer = ByteLevelBPETokenizer(str(model_dir / "vocab.json"), str(model_dir / "merges.txt"))
        else:
            raise ModelFilesError(f"no tokenizer.json (or vocab.json and merges.txt) in {model_dir}")
    except ModelFilesError:
        raise
    except Exception as err:  # the Rust side raises its own exception type
        raise ModelFilesError(f"cannot read the tokenizer in {model_dir}: {err}") from err
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


# ---- one block ----------------------------------------------------------------------------------


def decoder_block(
    x: np.ndarray,
    w: SimpleNamespace,
    config: GPT2Config,
    *,
    past: tuple[np.ndarray, np.ndarray] | None = None,
    ablate_heads: Iterable[int] = (),
) -> dict[str, np.ndarray]:
    """One GPT-2 block on x (T, D), the input of T new positions, step by step; past: the (key,
    value) (H, P, d_k) of P earlier positions (a KV cache), or None. Returns every intermediate by
    the trace's names ("ln1" is the normalised input, "normed" the MLP's normalised input), with
    "key" and "value" over all S = P + T positions (the cache for the next call) and "layer_output"."""
    heads, eps = config.n_head, config.layer_norm_epsilon
    # *) LayerNorm first: the block reads its input normalised, and adds back to the input itself
    ln1 = layer_norm(x, w.ln1_gamma, w.ln1_beta, eps)  # (T, D)
    # 2) project the new positions, and put the cached keys and values in front of theirs
    query = split_heads(linear(ln1, w.w_q, w.b_q), heads)  # (T, D) -> (H, T, d_k)
    key = split_heads(linear(ln1, w.w_k, w.b_k), heads)  # (H, T, d_k)
    value = split_heads(linear(ln1, w.w_v, w.b_v), heads)  # (H, T, d_k)
    n_past = 0 if past is None else past[0].shape[1]
    if past is not None:
        key = np.concatenate([past[0], key], axis=1)  # (H, S, d_k)
        value = np.concatenate([past[1], value], axis=1)  # (H, S, d_k)
    # 3) scores, 4) scaled, 5) the causal mask, then softmax (exact zeros above the diagonal), 6) sum
    mask = causal_mask(x.shape[0], n_past)  # (T, S): new position i is position P + i
    steps = attention_steps(query, key, value, mask, scale=config.scale_attn_weights)  # probs (H, T, S)
    # 7) merge the heads (an ablated head contributes zeros), W^O, and the residual: no LayerNorm
    context = steps["context"]  # (H, T, d_k)
    if ablate_heads := sorted(set(ablate_heads)):
        context = context.copy()
        context[ablate_heads] = 0.0
    concat = merge_heads(context)  # (T, D)
    output = linear(concat, w.w_o, w.b_o)  # (T, D)
    summed = residual(x, output)
    # 8) the MLP reads the residual stream normalised, and adds to it
    normed = layer_norm(summed, w.ln2_gamma, w.ln2_beta, eps)
    mlp = feed_forward(normed, w.w_1, w.b_1, w.w_2, w.b_2, config.activation_function)  # (T, D)
    return {
        **{"x": x, "ln1": ln1, "query": query, "key": key, "value": value, **steps},
        **{"concat": concat, "output": output, "residual": summed, "normed": normed, "ffn": mlp},
        "layer_output": residual(summed, mlp),
    }


# ---- the model ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Forward:
    """What one forward pass over T new positions (after P cached ones) computed."""

    hidden_states: np.ndarray  # (L + 1, T, D): block inputs, then ln_f of the last block's output
    attentions: np.ndarray  # (L, H, T, S): each new position's weights over every position it sees
    cache: list[tuple[np.ndarray, np.ndarray]]  # per block, (key, value) (H, S, d_k): the next `past`
    steps: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)  # traced blocks' steps


@dataclass(frozen=True)
class GenerationStep:
    token: str  # the chosen token, decoded to text (" Paris", not "ĠParis")
    token_id: int
    top: list[tuple[str, float]]  # the most likely tokens at this step and their probabilities
    attentions: np.ndarray  # (L, H, S): the predicting position's weights over the S tokens so far


@dataclass(frozen=True)
class Generation:
    prompt: list[str]  # the prompt's tokens, decoded one by one
    steps: list[GenerationStep]
    temperature: float | None  # None: greedy
    seed: int

    @property
    def generated(self) -> list[str]:
        return [step.token for step in self.steps]


class GPT2Numpy:
    """GPT-2 in NumPy: from_pretrained(dir), then run(text) -> AttentionResult, next_tokens, generate."""

    engine = ENGINE_NAME

    def __init__(self, config: GPT2Config, tensors: dict[str, np.ndarray], tokenizer=None, name="gpt2"):
        """tensors: the checkpoint's, named without "transformer."; they are taken out of the dict."""
        self.config, self.tokenizer, self.name = config, tokenizer, name
        self.n_layers, self.n_heads = config.n_layer, config.n_head
        self.max_tokens = config.n_positions
        d = config.n_embd
        self.token_embeddings = take_tensor(tensors, "wte.weight", config.vocab_size, d)  # W_E (V, D)
        self.position_embeddings = take_tensor(tensors, "wpe.weight", config.n_positions, d)
        self.layers = [read_block_weights(tensors, i, config) for i in range(self.n_layers)]
        self.lnf_gamma = take_tensor(tensors, "ln_f.weight", d)
        self.lnf_beta = take_tensor(tensors, "ln_f.bias", d)
        for array in (self.token_embeddings, self.position_embeddings, self.lnf_gamma, self.lnf_beta):
            array.setflags(write=False)
        self._lock = threading.Lock()  # fast tokenizers are not thread-safe; Streamlit sessions are threads

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike, *, name: str | None = None) -> GPT2Numpy:
        model_dir = Path(path)
        if not model_dir.is_dir():
            raise ModelFilesError(f"{model_dir} is not a directory holding a model's files")
        config = GPT2Config.from_dict(registry.read_config(model_dir))
        tensors = read_safetensors(model_dir, prefix="transformer.")
        tokenizer = _load_tokenizer(model_dir, config.n_positions)
        return cls(config, tensors, tokenizer, name=name or str(model_dir))

    def embed(self, ids: np.ndarray, start: int = 0) -> np.ndarray:
        """1) token + position embeddings of ids (T,) at positions start .. start + T - 1: (T, D)."""
        return self.token_embeddings[ids] + self.position_embeddings[start : start + len(ids)]

    def forward(self, input_ids, *, past=None, trace_layers: Iterable[int] = (), ablate=()) -> Forward:
        """Token ids (T,) through every block, after the P positions cached in `past` (a Forward's
        cache, or None). ablate: (layer, head) pairs, 0-indexed, whose weighted sum is zeroed."""
        ids, n_past = np.asarray(input_ids), 0 if past is None else past[0][0].shape[1]
        if ids.ndim != 1 or not 1 <= n_past + len(ids) <= self.max_tokens:
            raise ValueError(f"the context holds 1 to {self.max_tokens} tokens; got {n_past} + {ids.shape}")
        if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= self.config.vocab_size:
            raise ValueError(f"input_ids must be integers that lie in [0, {self.config.vocab_size})")
        x = self.embed(ids, start=n_past)
        return self.layers_from(0, x, past=past, trace_layers=trace_layers, ablate=ablate)

    def layers_from(self, first: int, x: np.ndarray, *, past=None, trace_layers=(), ablate=()) -> Forward:
        """Blocks first..L-1 on x (T, D), the input of block `first` (hidden_states[first] of an
        earlier pass: a head ablated in block l changes nothing before it, so a sweep restarts here)."""
        ablate, trace_layers = check_heads(ablate, self.n_layers, self.n_heads), set(trace_layers)
        hidden, attentions, cache, steps = [x], [], [], {}
        for i in range(first, self.n_layers):
            cut = [head for layer, head in ablate if layer == i]
            layer_past = None if past is None else past[i]
            block = decoder_block(hidden[-1], self.layers[i], self.config, past=layer_past, ablate_heads=cut)
            hidden.append(block["layer_output"])
            attentions.append(block["probs"])
            cache.append((block["key"], block["value"]))
            if i in trace_layers:
                steps[i] = block
        hidden[-1] = layer_norm(hidden[-1], self.lnf_gamma, self.lnf_beta, self.config.layer_norm_epsilon)
        return Forward(np.stack(hidden), np.stack(attentions), cache, steps)

    def hidden_states(self, input_ids, token_type_ids=None, *, ablate=()) -> np.ndarray:
        """(L + 1, T, D) for token ids as they are (no tokenizer), the last after ln_f: leave-one-out
        drops ids. token_type_ids is accepted for the encoders' signature and must be all zeros."""
        if token_type_ids is not None and np.any(token_type_ids):
            raise ValueError("GPT-2 reads one text: it has no second segment")
        return self.forward(input_ids, ablate=ablate).hidden_states

    def unembed(self, final_hidden: np.ndarray) -> np.ndarray:
        """The tied unembedding: (..., D) after ln_f -> (..., V) logits, h W_E^T."""
        return final_hidden @ self.token_embeddings.T

    def encode(self, text: str):
        """The `tokenizers.Encoding` of text, under the lock; TextError when nothing is left."""
        text = check_text(text, "the text")
        if self.tokenizer is None:
            raise ModelFilesError("this model was loaded without a tokenizer")
        with self._lock:
            try:
                encoding = self.tokenizer.encode(text)
            except Exception as err:  # the Rust tokenizer's own error type
                raise TextError(f"the tokenizer cannot encode this text: {err}") from err
        if not encoding.ids:
            raise TextError("the text has no tokens")
        return encoding

    def decode(self, token_id: int) -> str:
        """One token as text (" Paris" for "ĠParis"; a special token as itself: "<|endoftext|>")."""
        with self._lock:
            return self.tokenizer.decode([int(token_id)], skip_special_tokens=False)

    def run(self, text: str, *, ablate=()) -> AttentionResult:
        """Tokenize, run, and return an AttentionResult (causal: exact zeros above the diagonal) with
        the last position's next-token logits. Text past the context is cut (truncated=True)."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        start = time.perf_counter()
        enc = self.encode(text)
        tokenized = time.perf_counter()
        out = self.forward(enc.ids, ablate=ablate)
        done = time.perf_counter()
        return result_from_encoding(
            enc,
            out.attentions,
            out.hidden_states,
            model=self.name,
            engine=self.engine,
            max_tokens=self.max_tokens,
            n_special=0,
            meta={
                "seconds": done - start,
                "tokenize_ms": 1e3 * (tokenized - start),
                "forward_ms": 1e3 * (done - tokenized),
                "ablated": sorted(ablate),
            },
            next_token_logits=self.unembed(out.hidden_states[-1, -1]),
        )

    def top_tokens(
        self, logits: np.ndarray, top: int = 5, temperature: float = 1.0
    ) -> list[tuple[str, float]]:
        """The `top` likeliest tokens under softmax(logits / temperature), most likely first."""
        probs = softmax(np.asarray(logits, dtype=np.float64) / temperature)
        best = np.argsort(-probs, kind="stable")[:top]
        return [(self.decode(i), float(probs[i])) for i in best]

    def next_tokens(self, text: str, top: int = 5) -> list[tuple[str, float]]:
        """The model's `top` likeliest next tokens after text, with their probabilities."""
        return self.top_tokens(self.run(text).next_token_logits, top)

    def generate(
        self,
        text: str,
        n_tokens: int,
        *,
        temperature: float | None = None,
        seed: int = 0,
        top: int = 5,
        use_cache: bool = True,
    ) -> Generation:
        """Extend text by n_tokens, one at a time: greedy (temperature None) or sampled from
        softmax(logits / temperature) with numpy's generator seeded by `seed`. Each step keeps its top
        tokens (under the distribution it chose from) and the predicting position's attention over
        every token so far. use_cache=False recomputes the whole context at each step (the cost
        page's comparison); the tokens are the same."""
        if n_tokens < 1:
            raise ValueError(f"n_tokens must be 1 or more, got {n_tokens}")
        if temperature is not None and not temperature > 0:
            raise ValueError(f"the temperature must be above 0, got {temperature}")
        ids = list(self.encode(text).ids)
        if len(ids) + n_tokens - 1 > self.max_tokens:
            raise ValueError(
                f"the prompt has {len(ids)} tokens; with {n_tokens} more the context would pass "
                f"{self.max_tokens}: shorten it or generate at most {self.max_tokens - len(ids) + 1}"
            )
        rng, prompt = np.random.default_rng(seed), [self.decode(i) for i in ids]
        out, steps = self.forward(ids), []
        for n in range(n_tokens):
            logits = self.unembed(out.hidden_states[-1, -1]).astype(np.float64)  # (V,)
            scale = 1.0 if temperature is None else temperature
            if temperature is None:
                chosen = int(np.argmax(logits))
            else:
                chosen = int(rng.choice(len(logits), p=softmax(logits / scale)))
            row = out.attentions[:, :, -1, :]  # (L, H, S): what the predicting position looked at
            steps.append(
                GenerationStep(self.decode(chosen), chosen, self.top_tokens(logits, top, scale), row)
            )
            ids.append(chosen)
            if n + 1 < n_tokens:
                out = self.forward([chosen], past=out.cache) if use_cache else self.forward(ids)
        return Generation(prompt, steps, temperature, seed)
