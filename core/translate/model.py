"""The translator: a small encoder-decoder transformer laid out as BART (transformers'
BartForConditionalGeneration), its parameters, and a batched forward pass that keeps what the
hand-written backward pass (core/translate/backward.py) reads.

Three kinds of attention, each the lesson's steps (core/lesson/attention.py) on other inputs:

    encoder self-attention   queries, keys and values from the source; padding keys masked
    decoder self-attention   from the target so far; the causal mask
    cross-attention          queries from the decoder, keys and values from the encoder's output:
                             each target position reads the source sentence

    source:  x = W_E[src] + P_enc[2 + s], LayerNorm, then each encoder layer:
             x = LN(x + self-attention(x));  x = LN(x + MLP(x))          (BART: LayerNorm after)
    target:  y = W_E[tgt] + P_dec[2 + t], LayerNorm, then each decoder layer:
             y = LN(y + causal self-attention(y));  y = LN(y + cross-attention(y, x));  y = LN(y + MLP(y))
    logits = y W_E^T (the one embedding table, three uses: source, target, unembedding)

BART's position tables start two rows in (its "offset"); its attention multiplies the queries by
1/sqrt(d_k) before the product, where the lesson divides the scores: the same numbers to rounding.
Linear weights are kept (d_in, d_out), as x @ W reads them; transformers' Linear stores (d_out,
d_in), so core/translate/checkpoint.py transposes on saving and loading.

Letters in shape comments: B sentences, S source positions, T target positions, D width, H heads,
d_k = D / H, F the MLP's width, V vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.lesson.attention import attention_steps, causal_mask, merge_heads, split_heads
from core.lesson.layers import gelu_tanh, layer_norm, linear

__all__ = ["TranslatorConfig", "decode", "encode", "forward", "init_params", "param_shapes"]

OFFSET = 2  # BART's position tables: row 2 + t holds position t
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")


@dataclass(frozen=True)
class TranslatorConfig:
    vocab_size: int
    d_model: int = 64
    heads: int = 4
    ffn: int = 128
    encoder_layers: int = 2
    decoder_layers: int = 2
    max_positions: int = 32
    eps: float = 1e-5  # transformers' nn.LayerNorm default, which BART uses
    bos_id: int = 0
    pad_id: int = 1
    eos_id: int = 2

    def bart_config(self) -> dict:
        """config.json for transformers' BartForConditionalGeneration, these sizes, no dropout."""
        return {
            "model_type": "bart",
            "architectures": ["BartForConditionalGeneration"],
            "vocab_size": self.vocab_size,
            "d_model": self.d_model,
            "encoder_layers": self.encoder_layers,
            "decoder_layers": self.decoder_layers,
            "encoder_attention_heads": self.heads,
            "decoder_attention_heads": self.heads,
            "encoder_ffn_dim": self.ffn,
            "decoder_ffn_dim": self.ffn,
            "max_position_embeddings": self.max_positions,
            "activation_function": "gelu_new",  # GELU's tanh form: the backward pass knows its slope
            "scale_embedding": False,
            "dropout": 0.0,
            "attention_dropout": 0.0,
            "activation_dropout": 0.0,
            "bos_token_id": self.bos_id,
            "pad_token_id": self.pad_id,
            "eos_token_id": self.eos_id,
            "decoder_start_token_id": self.bos_id,
            "forced_bos_token_id": None,
            "forced_eos_token_id": None,
            "tie_word_embeddings": True,
        }


def _attention_shapes(prefix: str, d: int) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for name in PROJECTIONS:
        shapes[f"{prefix}.{name}.weight"], shapes[f"{prefix}.{name}.bias"] = (d, d), (d,)
    return shapes | {f"{prefix}_layer_norm.weight": (d,), f"{prefix}_layer_norm.bias": (d,)}


def param_shapes(config: TranslatorConfig) -> dict[str, tuple[int, ...]]:
    """Every trained parameter, named as in transformers' BART state dict."""
    d, f = config.d_model, config.ffn
    shapes = {"model.shared.weight": (config.vocab_size, d)}
    for side, layers in (("encoder", config.encoder_layers), ("decoder", config.decoder_layers)):
        shapes[f"model.{side}.embed_positions.weight"] = (config.max_positions + OFFSET, d)
        shapes[f"model.{side}.layernorm_embedding.weight"] = (d,)
        shapes[f"model.{side}.layernorm_embedding.bias"] = (d,)
        for i in range(layers):
            layer = f"model.{side}.layers.{i}"
            shapes |= _attention_shapes(f"{layer}.self_attn", d)
            if side == "decoder":
                shapes |= _attention_shapes(f"{layer}.encoder_attn", d)
            shapes |= {f"{layer}.fc1.weight": (d, f), f"{layer}.fc1.bias": (f,)}
            shapes |= {f"{layer}.fc2.weight": (f, d), f"{layer}.fc2.bias": (d,)}
            shapes |= {f"{layer}.final_layer_norm.weight": (d,), f"{layer}.final_layer_norm.bias": (d,)}
    return shapes


def init_params(
    config: TranslatorConfig, rng: np.random.Generator, dtype=np.float32
) -> dict[str, np.ndarray]:
    """BART's initialisation (init_std 0.02): weights and tables normal(0, 0.02), biases 0,
    LayerNorms 1 and 0."""
    if config.d_model % config.heads:
        raise ValueError(f"d_model ({config.d_model}) must be divisible by heads ({config.heads})")
    params = {}
    for name, shape in param_shapes(config).items():
        if "norm" in name:
            params[name] = (np.ones if name.endswith("weight") else np.zeros)(shape, dtype=dtype)
        elif name.endswith(".bias"):
            params[name] = np.zeros(shape, dtype=dtype)
        else:
            params[name] = rng.standard_normal(shape, dtype=dtype) * 0.02
    return params


def attend(
    x_q: np.ndarray, x_kv: np.ndarray, p: dict, prefix: str, heads: int, mask
) -> tuple[np.ndarray, dict]:
    """One attention sublayer before its residual: x_q (B, T_q, D) asks, x_kv (B, T_k, D) is read.
    2) project Q from x_q, K and V from x_kv; 3)-6) the lesson's steps; 7) merge heads, W^O.
    Returns ((B, T_q, D), what the backward reads)."""
    q, k, v = (
        split_heads(linear(x, p[f"{prefix}.{name}.weight"], p[f"{prefix}.{name}.bias"]), heads)
        for x, name in ((x_q, "q_proj"), (x_kv, "k_proj"), (x_kv, "v_proj"))
    )  # each (B, H, T, d_k)
    steps = attention_steps(q, k, v, mask)
    concat = merge_heads(steps["context"])  # (B, T_q, D)
    out = linear(concat, p[f"{prefix}.out_proj.weight"], p[f"{prefix}.out_proj.bias"])
    return out, {
        "x_q": x_q,
        "x_kv": x_kv,
        "query": q,
        "key": k,
        "value": v,
        "probs": steps["probs"],
        "concat": concat,
    }


def _post_norm(
    x: np.ndarray, added: np.ndarray, p: dict, name: str, eps: float
) -> tuple[np.ndarray, np.ndarray]:
    """BART's residual: LayerNorm(x + sublayer(x)); returns (the output, the sum it normalised)."""
    summed = x + added
    return layer_norm(summed, p[f"{name}.weight"], p[f"{name}.bias"], eps), summed


def _mlp(x: np.ndarray, p: dict, layer: str) -> tuple[np.ndarray, dict]:
    pre = linear(x, p[f"{layer}.fc1.weight"], p[f"{layer}.fc1.bias"])  # (B, T, F)
    act = gelu_tanh(pre)
    return linear(act, p[f"{layer}.fc2.weight"], p[f"{layer}.fc2.bias"]), {
        "mlp_in": x,
        "pre": pre,
        "act": act,
    }


def _embed(p: dict, config: TranslatorConfig, ids: np.ndarray, side: str) -> tuple[np.ndarray, np.ndarray]:
    """W_E[ids] + the side's positions, then its LayerNorm: ((B, T, D), the sum before the norm)."""
    t = ids.shape[1]
    if t > config.max_positions:
        raise ValueError(f"{t} tokens pass the translator's {config.max_positions} positions")
    summed = p["model.shared.weight"][ids] + p[f"model.{side}.embed_positions.weight"][OFFSET : OFFSET + t]
    name = f"model.{side}.layernorm_embedding"
    return layer_norm(summed, p[f"{name}.weight"], p[f"{name}.bias"], config.eps), summed


def encode(p: dict, config: TranslatorConfig, src: np.ndarray) -> tuple[np.ndarray, dict]:
    """src (B, S) ids, padded with pad_id after the end -> (the encoder's output (B, S, D), cache)."""
    keys = (src != config.pad_id)[:, None, None, :]  # (B, 1, 1, S): padding is never read
    x, embedded = _embed(p, config, src, "encoder")
    layers = []
    for i in range(config.encoder_layers):
        name = f"model.encoder.layers.{i}"
        added, attn = attend(x, x, p, f"{name}.self_attn", config.heads, keys)
        x, attn["summed"] = _post_norm(x, added, p, f"{name}.self_attn_layer_norm", config.eps)
        added, mlp = _mlp(x, p, name)
        x, mlp["summed"] = _post_norm(x, added, p, f"{name}.final_layer_norm", config.eps)
        layers.append({"self": attn, "mlp": mlp})
    return x, {"src": src, "keys": keys, "embedded": embedded, "layers": layers}


def decode(
    p: dict, config: TranslatorConfig, tgt: np.ndarray, memory: np.ndarray, keys: np.ndarray
) -> tuple[np.ndarray, dict]:
    """tgt (B, T) ids (the start token, then the words so far), memory (B, S, D) the encoder's
    output, keys (B, 1, 1, S) its non-padding -> (logits (B, T, V), cache)."""
    y, embedded = _embed(p, config, tgt, "decoder")
    causal = causal_mask(tgt.shape[1])  # (T, T)
    layers = []
    for i in range(config.decoder_layers):
        name = f"model.decoder.layers.{i}"
        added, own = attend(y, y, p, f"{name}.self_attn", config.heads, causal)
        y, own["summed"] = _post_norm(y, added, p, f"{name}.self_attn_layer_norm", config.eps)
        added, cross = attend(y, memory, p, f"{name}.encoder_attn", config.heads, keys)
        y, cross["summed"] = _post_norm(y, added, p, f"{name}.encoder_attn_layer_norm", config.eps)
        added, mlp = _mlp(y, p, name)
        y, mlp["summed"] = _post_norm(y, added, p, f"{name}.final_layer_norm", config.eps)
        layers.append({"self": own, "cross": cross, "mlp": mlp})
    logits = y @ p["model.shared.weight"].T  # (B, T, V); final_logits_bias is BART's buffer of zeros
    return logits, {"tgt": tgt, "embedded": embedded, "layers": layers, "final": y}


def forward(p: dict, config: TranslatorConfig, src: np.ndarray, tgt: np.ndarray) -> tuple[np.ndarray, dict]:
    """Teacher forcing: the source and the target so far -> (logits (B, T, V), both caches)."""
    memory, enc = encode(p, config, src)
    logits, dec = decode(p, config, tgt, memory, enc["keys"])
    return logits, {"encoder": enc, "decoder": dec, "memory": memory}


def cross_attentions(cache: dict) -> np.ndarray:
    """Every decoder layer's cross-attention from a forward's cache: (L, B, H, T, S)."""
    return np.stack([layer["cross"]["probs"] for layer in cache["decoder"]["layers"]])
