"""A Llama-family GGUF file (llama.cpp's format) turned into the folder every engine here reads:
config.json, the float32 weights (model-*.safetensors, one file a block, and their index) and
tokenizer.json.

The file is read with the `gguf` package, llama.cpp's own reader and dequantizer. Two things differ
from a transformers checkpoint and are undone here, once:
- the names: llama.cpp's "blk.3.attn_q.weight" is transformers' "model.layers.3.self_attn.q_proj.weight";
- the rows of W^Q and W^K: llama.cpp's converter reorders each head's rows so that the two halves a
  rotation pairs (i and i + d_head/2 in transformers' rotate_half) sit side by side (2i, 2i+1), the
  layout its own RoPE kernel reads. `unpermute_rows` puts them back, so the NumPy engine's RoPE,
  transformers' and the lesson's are one convention (tests/core/test_smollm2.py checks it against
  transformers loading the same GGUF).
The tokenizer is rebuilt from the vocabulary and merges the file carries, with the pre-tokenizer its
`tokenizer.ggml.pre` names ("smollm": each digit on its own, then GPT-2's byte-level split).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.models.errors import ModelFilesError, first_line

__all__ = ["SHARD_INDEX", "convert_gguf", "unpermute_rows"]

SHARD_INDEX = "model.safetensors.index.json"  # transformers' name for a sharded checkpoint's index

# GGUF tensor names -> transformers' LlamaForCausalLM names ("{i}" is the block)
_BLOCK_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_ROWS_AT_ONCE = 4096  # rows dequantized at a time (the embedding table has 49,152)
_CONTROL = 3  # llama.cpp's token type for special tokens (<|im_start|>, <|endoftext|>…)


def unpermute_rows(w: np.ndarray, n_heads: int) -> np.ndarray:
    """W^Q or W^K (n_heads * d_head, D) from llama.cpp's row order back to transformers': within
    each head, rows (2i, 2i+1) go back to (i, i + d_head/2)."""
    half = w.shape[0] // n_heads // 2
    return w.reshape(n_heads, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _field(reader, name: str, default=None):
    field = reader.fields.get(name)
    return default if field is None else field.contents()


def llama_config(reader) -> dict:
    """transformers' config.json for the Llama the file describes (its metadata, "llama.*")."""
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ModelFilesError(f"the GGUF file holds a {arch!r} model; only Llama-family files are read")
    n_heads, d = _field(reader, "llama.attention.head_count"), _field(reader, "llama.embedding_length")
    vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    names = {t.name for t in reader.tensors}
    theta = float(_field(reader, "llama.rope.freq_base", 10000.0))
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": vocab,
        "hidden_size": d,
        "intermediate_size": _field(reader, "llama.feed_forward_length"),
        "num_hidden_layers": _field(reader, "llama.block_count"),
        "num_attention_heads": n_heads,
        "num_key_value_heads": _field(reader, "llama.attention.head_count_kv", n_heads),
        "head_dim": d // n_heads,
        "max_position_embeddings": _field(reader, "llama.context_length", 2048),
        "rms_norm_eps": float(_field(reader, "llama.attention.layer_norm_rms_epsilon", 1e-6)),
        "rope_parameters": {"rope_type": "default", "rope_theta": theta},
        "tie_word_embeddings": "output.weight" not in names,
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": _field(reader, "tokenizer.ggml.bos_token_id"),
        "eos_token_id": _field(reader, "tokenizer.ggml.eos_token_id"),
        "pad_token_id": _field(reader, "tokenizer.ggml.padding_token_id"),
        "dtype": "float32",
    }


def _our_name(gguf_name: str) -> tuple[str, str]:
    """(transformers' name, the shard it goes to: "blk.3" for a block's tensors, "top" for the rest)."""
    parts = gguf_name.split(".")  # blk.3.attn_q.weight, or token_embd.weight
    if parts[0] == "blk" and len(parts) == 4 and parts[2] in _BLOCK_NAMES:
        return f"model.layers.{parts[1]}.{_BLOCK_NAMES[parts[2]]}.{parts[3]}", f"blk.{parts[1]}"
    if parts[0] in _TOP_NAMES and len(parts) == 2:
        return f"{_TOP_NAMES[parts[0]]}.{parts[1]}", "top"
    raise ModelFilesError(f"the GGUF file has a tensor {gguf_name!r} that no Llama has")


def llama_tensors(config: dict, tensors: list[tuple[str, object]]) -> dict[str, np.ndarray]:
    """(transformers' name, GGUF tensor) pairs dequantized to float32 under those names, the rows of
    W^Q and W^K unpermuted."""
    from gguf.quants import dequantize

    heads = {"attn_q": config["num_attention_heads"], "attn_k": config["num_key_value_heads"]}
    arrays: dict[str, np.ndarray] = {}
    for name, tensor in tensors:
        # the reader's shape is GGML's (innermost first); dequantize gives numpy's (rows, columns)
        array = np.empty([int(n) for n in reversed(tensor.shape)], dtype=np.float32)
        rows = array.reshape(len(tensor.data), -1)  # the data holds one row of blocks per row
        for start in range(0, len(rows), _ROWS_AT_ONCE):  # the dequantizer's scratch stays small
            part = tensor.data[start : start + _ROWS_AT_ONCE]
            rows[start : start + len(part)] = dequantize(part, tensor.tensor_type).reshape(len(part), -1)
        if (kind := tensor.name.split(".")[-2]) in heads and tensor.name.startswith("blk."):
            array = unpermute_rows(array, heads[kind])
        arrays[name] = np.ascontiguousarray(array)
    return arrays


def llama_tokenizer(reader):
    """The byte-level BPE the file carries, as a `tokenizers.Tokenizer`."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    if (kind := _field(reader, "tokenizer.ggml.model")) != "gpt2":
        raise ModelFilesError(f"the GGUF file's tokenizer is {kind!r}; only byte-level BPE ('gpt2') is read")
    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in _field(reader, "tokenizer.ggml.merges")]
    types = _field(reader, "tokenizer.ggml.token_type") or [1] * len(tokens)
    tokenizer = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges, fuse_unk=False))
    split = [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)]
    if _field(reader, "tokenizer.ggml.pre") == "smollm":
        split.insert(0, pre_tokenizers.Digits(individual_digits=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(split)
    tokenizer.decoder = decoders.ByteLevel()
    control = [t for t, kind in zip(tokens, types, strict=True) if kind == _CONTROL]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tokenizer


def convert_gguf(gguf_file: Path, out_dir: Path, say: Callable[[str], None] = lambda message: None) -> None:
    """Write config.json, tokenizer.json and the float32 weights in shards for `gguf_file` into out_dir.
    Raises ModelFilesError for a file that is not a readable Llama GGUF."""
    from gguf import GGUFReader
    from safetensors.numpy import save_file

    say(f"Reading {gguf_file.name} (the vocabulary and the quantised weights)…")
    try:
        reader = GGUFReader(gguf_file)
    except (OSError, ValueError, KeyError, IndexError) as err:
        raise ModelFilesError(f"cannot read the GGUF file {gguf_file}: {first_line(err)}") from err
    config = llama_config(reader)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(config, indent=2))
    llama_tokenizer(reader).save(str(out_dir / "tokenizer.json"))

    # One shard per block (and one for the embeddings and the final norm), written as it is expanded:
    # the whole model in float32 (540 MB for SmolLM2) is never in memory at once, which the hosted
    # demo could not afford. The index, written last, is what says the folder is complete.
    shards: dict[str, list] = {}
    for tensor in reader.tensors:
        name, shard = _our_name(tensor.name)
        shards.setdefault(shard, []).append((name, tensor))
    weight_map: dict[str, str] = {}
    total = 0
    for number, tensors in enumerate(shards.values(), 1):
        if number % 10 == 0:
            say(f"Expanding the quantised weights to float32: part {number} of {len(shards)}…")
        file = f"model-{number:05d}-of-{len(shards):05d}.safetensors"
        arrays = llama_tensors(config, tensors)
        save_file(arrays, str(out_dir / file), metadata={"format": "pt"})
        weight_map |= dict.fromkeys(arrays, file)
        total += sum(array.nbytes for array in arrays.values())
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (out_dir / SHARD_INDEX).write_text(json.dumps(index, indent=1))
