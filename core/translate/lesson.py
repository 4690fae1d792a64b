"""The learn page's cross-attention step on the translator (core/translate/model.py), recomputed from
its parameters one named step at a time, so a reader can check each by eye, and checked against the
model's own forward pass (and, in the tests, against transformers' BART).

In decoder layer l, after the decoder's own (causal) self-attention sub-layer, every target position
reads the source sentence:

    1) inputs      M = the encoder's output (S, D): keys and values come from here
                   Y = the decoder's state after its self-attention sub-layer (T, D): queries
    2) project     Q = Y W^Q_h + b^Q_h,   K = M W^K_h + b^K_h,   V = M W^V_h + b^V_h   (head h's slice)
    3) scores      Q K^T                                        (T, S)
    4) scale       Q K^T / sqrt(d_k); BART's code (fairseq) multiplies Q by 1/sqrt(d_k) first: the same
    5) softmax     each row; no mask: every source word can be read (one sentence, no padding)
    6) weighted    Z_h = A V                                    (T, d_k)
    7) output      O = Concat(Z_1 .. Z_H) W^O + b^O;  R = Y + O;  LayerNorm(R)   (BART: norm after)

Names follow the lesson's trace (core/lesson/trace.py): query, key, value, scores, scaled, probs,
context, concat, output, residual, normed. Letters: S source positions (the English words typed and
</s>), T target positions (row t is the decoder step that writes French word t; it reads the word
before, or <s>), D width, H heads, d_k = D / H.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from core.lesson.attention import attention_steps, softmax
from core.lesson.layers import layer_norm, linear
from core.translate.data import BOS
from core.translate.engine import TranslatorEngine
from core.translate.measures import greedy
from core.translate.model import TranslatorConfig, decode, encode, forward

__all__ = ["CHECKED", "CrossStep", "best_cross_head", "cross_attention_steps", "cross_step", "forward_gaps"]

# What the page checks against the model's forward pass, in the order of the steps
CHECKED = ("memory", "state", "query", "key", "value", "scores", "scaled", "probs", "context")
CHECKED += ("output", "residual", "normed")


@dataclass(frozen=True, eq=False)
class CrossStep:
    """One head's cross-attention in one decoder layer, every intermediate by name."""

    source_tokens: tuple[str, ...]  # the English words typed (lower-cased), then </s>: the columns
    target_tokens: tuple[str, ...]  # the French words written, then </s>: row t writes word t
    decoder_inputs: tuple[str, ...]  # what row t reads in: <s>, then the words written before
    layer: int  # 0-indexed
    head: int  # 0-indexed
    n_heads: int
    eps: float  # inside the post-norm's square root
    arrays: dict[str, np.ndarray]
    source_ids: np.ndarray  # (S,)
    target_ids: np.ndarray  # (T,) the decoder's input ids: <s>, then the words written

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]

    @property
    def d_k(self) -> int:
        return int(self.arrays["query"].shape[-1])


def _head_slice(p: dict, prefix: str, name: str, cols: slice) -> tuple[np.ndarray, np.ndarray]:
    """Head h's columns of a projection: (D, d_k) and (d_k,)."""
    return p[f"{prefix}.{name}.weight"][:, cols], p[f"{prefix}.{name}.bias"][cols]


def _one_head(state: np.ndarray, memory: np.ndarray, p: dict, prefix: str, cols: slice) -> dict:
    """Steps 2) to 6) for the head whose columns are `cols`."""
    out = {}
    for name, x, proj in (("query", state, "q_proj"), ("key", memory, "k_proj"), ("value", memory, "v_proj")):
        w, b = _head_slice(p, prefix, proj, cols)
        out[f"w_{name[0]}"], out[f"b_{name[0]}"] = w, b
        out[name] = linear(x, w, b)  # 2) project: (T, d_k) from Y, (S, d_k) from M
    d_k = out["query"].shape[-1]
    out["scores"] = out["query"] @ out["key"].T  # 3) (T, S)
    out["scaled"] = out["scores"] / math.sqrt(d_k)  # 4) the lesson's order
    out["query_folded"] = out["query"] / math.sqrt(d_k)  # 4) BART's order: the scale folded into Q
    out["scaled_folded"] = out["query_folded"] @ out["key"].T
    out["probs"] = softmax(out["scaled"], axis=-1)  # 5) no mask: every source position is readable
    out["context"] = out["probs"] @ out["value"]  # 6) (T, d_k)
    return out


def cross_attention_steps(
    state: np.ndarray, memory: np.ndarray, p: dict, prefix: str, n_heads: int, head: int, eps: float
) -> dict[str, np.ndarray]:
    """The cross-attention sub-layer `prefix` (…encoder_attn) on the decoder's state Y (T, D) and the
    encoder's output M (S, D), every step by name: head `head`'s steps 2) to 6), then 7) for the
    sub-layer (all heads through W^O, the residual and BART's post-norm)."""
    d = state.shape[-1]
    if d % n_heads:
        raise ValueError(f"the width ({d}) must be divisible by the heads ({n_heads})")
    d_k = d // n_heads
    heads = [_one_head(state, memory, p, prefix, slice(h * d_k, (h + 1) * d_k)) for h in range(n_heads)]
    out = {"state": state, "memory": memory, **heads[head]}
    # 7) the heads side by side, W^O (its rows for head h take Z_h), the residual, the norm
    out["concat"] = np.concatenate([h["context"] for h in heads], axis=-1)  # (T, D)
    out["w_o"], out["b_o"] = p[f"{prefix}.out_proj.weight"], p[f"{prefix}.out_proj.bias"]
    out["head_output"] = out["context"] @ out["w_o"][head * d_k : (head + 1) * d_k]  # this head's share
    out["output"] = linear(out["concat"], out["w_o"], out["b_o"])  # (T, D)
    out["residual"] = state + out["output"]
    gamma, beta = p[f"{prefix}_layer_norm.weight"], p[f"{prefix}_layer_norm.bias"]
    out["ln_gamma"], out["ln_beta"] = gamma, beta
    out["normed"] = layer_norm(out["residual"], gamma, beta, eps)
    return out


def _decoder_state(p: dict, config: TranslatorConfig, src: np.ndarray, tgt: np.ndarray, layer: int):
    """(M (S, D), Y (T, D), the decoder's causal self-attention of `layer` (H, T, T)): the encoder
    run, and the decoder run up to `layer`'s self-attention sub-layer (its cross-attention's input)."""
    memory, enc = encode(p, config, src[None])
    _, dec = decode(p, config, tgt[None], memory, enc["keys"])
    own = dec["layers"][layer]
    return memory[0], own["cross"]["x_q"][0], own["self"]["probs"][0]


def cross_step(engine: TranslatorEngine, text: str, layer: int, head: int) -> CrossStep:
    """The cross-attention of decoder layer `layer`, head `head`, on `text` and the translation the
    model writes for it (greedily), recomputed in float64 from the model's float32 parameters.
    Raises TranslatorInputError (one line for the user) for text the translator cannot read."""
    config = engine.config
    if not (0 <= layer < config.decoder_layers and 0 <= head < config.heads):
        raise ValueError(
            f"layer {layer}, head {head}: the translator has {config.decoder_layers} × {config.heads}"
        )
    src = engine.source_ids(text)  # (S,)
    written = greedy(engine.params, config, src[None])[0]
    ended = len(written) + 1 < config.max_positions  # it wrote </s> before running out of positions
    tgt = np.asarray([BOS, *written])[: len(written) + ended]  # (T,) one row per word written, and </s>
    p64 = {k: v.astype(np.float64) for k, v in engine.params.items()}
    memory, state, own = _decoder_state(p64, config, src, tgt, layer)
    prefix = f"model.decoder.layers.{layer}.encoder_attn"
    arrays = cross_attention_steps(state, memory, p64, prefix, config.heads, head, config.eps)
    arrays["self_probs"] = own[head]  # the decoder's own self-attention, same layer and head: causal
    words = [engine.words[int(i)] for i in written] + (["</s>"] if ended else [])
    return CrossStep(
        source_tokens=tuple(engine.words[int(i)] for i in src),
        target_tokens=tuple(words),
        decoder_inputs=tuple(engine.words[int(i)] for i in tgt),
        layer=layer,
        head=head,
        n_heads=config.heads,
        eps=config.eps,
        arrays=arrays,
        source_ids=src,
        target_ids=tgt,
    )


def forward_gaps(
    step: CrossStep, params: dict, config: TranslatorConfig, dtype=np.float64
) -> dict[str, float]:
    """name -> the largest |difference| between the step's numbers and the model's own forward pass
    (core/translate/model.py) on the same source and target, its parameters cast to `dtype`: float64
    tests the arithmetic (the same numbers, to rounding), float32 is the pass as the product runs it."""
    params = {k: np.asarray(v, dtype=dtype) for k, v in params.items()}
    _, cache = forward(params, config, step.source_ids[None], step.target_ids[None])
    cross = cache["decoder"]["layers"][step.layer]["cross"]
    h, d_k = step.head, step.d_k
    q, k, v = (cross[name][0, h] for name in ("query", "key", "value"))
    model = {
        "memory": cache["memory"][0],
        "state": cross["x_q"][0],
        "query": q,
        "key": k,
        "value": v,
        **{name: attention_steps(q, k, v)[name] for name in ("scores", "scaled")},  # the lesson's code
        "probs": cross["probs"][0, h],
        "context": cross["concat"][0][:, h * d_k : (h + 1) * d_k],
        "output": cross["summed"][0] - cross["x_q"][0],
        "residual": cross["summed"][0],
        "normed": cache["decoder"]["layers"][step.layer]["mlp"]["mlp_in"][0],  # the norm's output
    }
    return {name: float(np.abs(step[name] - model[name]).max()) for name in CHECKED}


@lru_cache(maxsize=4)
def best_cross_head(folder: str | Path) -> tuple[int, int]:
    """(layer, head), 0-indexed: the cross-attention head that aligned best on the held-out sentences
    at the end of training (the last snapshot of the folder's training_record.json); (last layer, 0)
    when the folder keeps no record."""
    path = Path(folder) / "training_record.json"
    try:
        alignment = np.asarray(json.loads(path.read_text())["alignment"][-1], dtype=np.float64)
    except (OSError, ValueError, KeyError, IndexError):
        config = json.loads((Path(folder) / "config.json").read_text())
        return int(config["decoder_layers"]) - 1, 0
    layer, head = np.unravel_index(int(np.argmax(alignment)), alignment.shape)
    return int(layer), int(head)
