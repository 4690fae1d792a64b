"""The reference engine: a pretrained encoder run by transformers + torch, returning AttentionResult.

Letters: L layers, H heads per layer, T tokens, D hidden width.

Why each loading choice:
- `attn_implementation="eager"`: transformers 5 defaults to SDPA, whose kernels never form the
  probability matrix, so `output_attentions=True` would return nothing.
- `use_safetensors=True`, `trust_remote_code=False`: weights are read as plain tensors, never
  unpickled, and no code from a model repository ever runs.
- `dtype=torch.float32`: transformers 5 loads in the checkpoint's dtype by default ("auto"); the
  arrays this engine returns are float32 whatever the checkpoint holds.
- The tokenizer's own truncation and padding settings are replaced: the bundled tokenizer.json pads
  and truncates at 128, while the model's position table holds 512.
- Fast tokenizers are not thread-safe ("Already borrowed") and Streamlit runs each session in its own
  thread, so one lock per loaded model serialises tokenize + forward.

torch and transformers are imported inside the functions, so `import core` stays torch-free.
References: transformers' AutoModel / output_attentions docs; bertviz's model loading.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from core.models.errors import ModelError, ModelFilesError
from core.models.interventions import check_heads
from core.models.registry import ModelSpec, load_choice, read_config
from core.models.result import AttentionResult, result_from_encoding

__all__ = [
    "ENGINE_NAME",
    "NoAttentionError",
    "NotAnEncoderError",
    "PretrainedModel",
    "check_encoder_config",
    "check_head_count",
    "load_pretrained",
    "output_arrays",
]

ENGINE_NAME = "torch"
# transformers' tokenizers report this for "no limit"; anything above it is treated as unset.
_NO_LIMIT = 1_000_000
# Where encoder configs give their number of attention heads (DistilBERT: n_heads).
_HEAD_COUNT_KEYS = ("num_attention_heads", "n_heads", "n_head", "encoder_attention_heads")


class NotAnEncoderError(ModelError):
    """The model is a decoder (GPT-2, Llama…) or an encoder-decoder (T5, BART…), not an encoder."""


class NoAttentionError(ModelError):
    """The model's forward pass returns no attention weights."""


def check_encoder_config(config: dict) -> None:
    """Refuse models whose attention is not a bidirectional encoder's, before any weights are fetched.

    An encoder here is a model type that transformers can load with a masked-language-model head
    (BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA, DeBERTa…) that is neither a decoder nor an
    encoder-decoder. GPT-2 and friends are refused: their attention is causal (a triangle), and
    this page's views and head findings are about encoders.
    """
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    model_type = str(config.get("model_type", "") or "")
    archs = ", ".join(config.get("architectures") or []) or model_type or "unknown"
    if not model_type:
        raise ModelFilesError("config.json does not say which model type it is (no `model_type`)")
    if config.get("is_encoder_decoder"):
        raise NotAnEncoderError(
            f"{archs} is an encoder-decoder model; this page shows encoder models such as BERT"
        )
    if config.get("is_decoder") or model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        raise NotAnEncoderError(
            f"{archs} (model type “{model_type}”) is not an encoder model; this page shows encoders "
            "such as BERT, RoBERTa or DistilBERT, whose tokens attend both ways"
        )


def check_head_count(config: dict) -> None:
    """Refuse a config.json that does not give the number of attention heads. transformers would
    fall back to its default (12 for BERT) and split the attention into heads the model was never
    trained with: the views would show made-up heads, or loading would fail obscurely."""
    heads = next((config[k] for k in _HEAD_COUNT_KEYS if config.get(k) is not None), None)
    if not isinstance(heads, int) or isinstance(heads, bool) or heads < 1:
        raise ModelFilesError(
            "config.json does not say how many attention heads the model has "
            f"(`num_attention_heads` is {'missing' if heads is None else repr(heads)})"
        )


class PretrainedModel:
    """A loaded tokenizer + model pair that turns text into an AttentionResult (thread-safe)."""

    engine = ENGINE_NAME

    def __init__(self, model: Any, tokenizer: Any, name: str) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelFilesError(
                f"{name} has no fast tokenizer (tokenizer.json), which this page needs for word boundaries"
            )
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        config = model.config
        self.n_layers = int(config.num_hidden_layers)
        self.n_heads = int(config.num_attention_heads)
        limit = int(getattr(tokenizer, "model_max_length", _NO_LIMIT) or _NO_LIMIT)
        positions = int(getattr(config, "max_position_embeddings", 512) or 512)
        # RoBERTa-style tables hold 514 rows for 512 tokens; the tokenizer's limit says so.
        self.max_tokens = min(positions, limit) if limit < _NO_LIMIT else positions
        self._accepts_token_types = "token_type_ids" in tokenizer.model_input_names
        # Replace the tokenizer file's own padding and truncation (the bundled one pads to 128).
        self._backend = tokenizer.backend_tokenizer
        self._backend.no_padding()
        self._backend.enable_truncation(self.max_tokens)
        self._lock = threading.Lock()
        self._probe()

    def _probe(self) -> None:
        """Run a two-word input once so a model that returns no attentions is refused at load time."""
        out = self._forward(self._backend.encode("attention check"))
        attentions = out.attentions
        if not attentions or any(a is None for a in attentions):
            raise NoAttentionError(
                f"{self.name} returns no attention weights from its forward pass "
                "(its attention implementation does not expose them)"
            )
        if len(attentions) != self.n_layers or attentions[0].shape[1] != self.n_heads:
            raise NoAttentionError(
                f"{self.name} returned attention shaped {tuple(attentions[0].shape)} for {len(attentions)} "
                f"layers; expected {self.n_layers} layers of {self.n_heads} heads"
            )
        _check_finite(np.stack([a[0].float().numpy() for a in attentions]), self.name)

    def _forward(self, encoding: Any, ablate: frozenset[tuple[int, int]] = frozenset()) -> Any:
        return self._forward_ids(encoding.ids, encoding.type_ids, ablate)

    def _forward_ids(self, ids: Any, type_ids: Any, ablate: frozenset[tuple[int, int]] = frozenset()) -> Any:
        """The model on one input; `ablate`'s heads zeroed by a pre-hook on each changed layer's W^O,
        there only for this call (the caller holds the lock)."""
        import torch

        ids = torch.tensor([list(ids)], dtype=torch.long)  # (1, T)
        inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        if self._accepts_token_types:
            inputs["token_type_ids"] = torch.tensor([list(type_ids)], dtype=torch.long)
        hooks = []
        try:
            for layer in sorted({changed for changed, _ in ablate}):
                heads = [head for changed, head in ablate if changed == layer]
                hooks.append(self._ablation_hook(layer, heads))
            with torch.inference_mode():
                return self.model(**inputs, output_attentions=True, output_hidden_states=True)
        finally:
            for hook in hooks:
                hook.remove()

    def _ablation_hook(self, layer: int, heads: list[int]) -> Any:
        """Zero heads' d_k columns of the attention's weighted sum where it enters W^O (the input of
        the output projection: BertSelfOutput.dense, DistilBERT's out_lin)."""
        modules = _attention_linears(self.model, layer)
        if modules is None:
            raise ModelError(
                f"{self.name}'s attention is not laid out like BERT's: its heads cannot be ablated"
            )
        d_k = modules[3].in_features // self.n_heads

        def zero_heads(_module: Any, args: tuple) -> tuple:
            context = args[0].clone()  # (1, T, H·d_k)
            for head in heads:
                context[..., head * d_k : (head + 1) * d_k] = 0.0
            return (context, *args[1:])

        return modules[3].register_forward_pre_hook(zero_heads)

    def encode(self, text: str, text_pair: str | None = None) -> Any:
        """Tokenize only (under the lock, cut to max_tokens as run() cuts): the tokenizers Encoding,
        with offsets into `text` and the cut-off tokens in `overflowing`."""
        with self._lock:
            return self._backend.encode(text, text_pair) if text_pair else self._backend.encode(text)

    def run(self, text: str, text_pair: str | None = None, *, ablate=()) -> AttentionResult:
        """Tokenize (cut to the model's maximum length), run the forward pass, return float32 arrays.
        ablate: (layer, head) pairs, 0-indexed, zero-ablated before W^O (as core.models.bert does)."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        start = time.perf_counter()
        with self._lock:
            encoding = self._backend.encode(text, text_pair) if text_pair else self._backend.encode(text)
            out = self._forward(encoding, ablate)
        attentions, hidden = output_arrays(out, self.name)
        return result_from_encoding(
            encoding,
            attentions,
            hidden,
            model=self.name,
            engine=ENGINE_NAME,
            max_tokens=self.max_tokens,
            n_special=self._backend.num_special_tokens_to_add(bool(text_pair)),
            meta={"seconds": time.perf_counter() - start, "ablated": sorted(ablate)},
        )

    def hidden_states(self, input_ids: Any, token_type_ids: Any = None, *, ablate=()) -> np.ndarray:
        """(L + 1, T, D) float32 for token ids as they are (no tokenizer): leave-one-out drops ids."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        type_ids = [0] * len(input_ids) if token_type_ids is None else token_type_ids
        with self._lock:
            out = self._forward_ids(input_ids, type_ids, ablate)
        return np.stack([h[0].float().numpy() for h in out.hidden_states]).astype(np.float32, copy=False)

    def layer_weights(self, layer: int) -> SimpleNamespace:
        """Layer `layer`'s (0-indexed) attention weights as x @ W (float32 NumPy copies): w_q, b_q,
        w_k, b_k, w_v, b_v, w_o, b_o, with n_heads and d_k. BERT-style encoders (BERT, RoBERTa,
        ELECTRA…: attention.self.query/key/value and attention.output.dense) and DistilBERT
        (q_lin/k_lin/v_lin/out_lin); other architectures raise ModelError, which the views show."""
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"layer must be in 0..{self.n_layers - 1} (0-indexed), got {layer}")
        modules = _attention_linears(self.model, layer)
        if modules is None:
            raise ModelError(
                f"{self.name}'s attention weights are not laid out like BERT's or DistilBERT's, so "
                "this view cannot read each head's weights"
            )
        arrays = {}
        for ours, linear in zip("qkvo", modules, strict=True):
            # torch's Linear.weight is (d_out, d_in), for x W^T: transpose once, to x @ W
            arrays[f"w_{ours}"] = np.ascontiguousarray(linear.weight.detach().float().numpy().T)
            arrays[f"b_{ours}"] = linear.bias.detach().float().numpy().copy()
        return SimpleNamespace(**arrays, n_heads=self.n_heads, d_k=arrays["w_q"].shape[1] // self.n_heads)


def _attention_linears(model: Any, layer: int) -> tuple[Any, Any, Any, Any] | None:
    """(query, key, value, output) Linear modules of one layer, or None for an unknown layout."""
    encoder = getattr(model, "encoder", None)
    blocks = getattr(encoder, "layer", None)
    if blocks is not None:  # BERT, RoBERTa, ELECTRA, XLM-R: BertSelfAttention + BertSelfOutput
        attention = blocks[layer].attention
        own, out = getattr(attention, "self", None), getattr(attention, "output", None)
        has_qkv = own is not None and all(hasattr(own, n) for n in ("query", "key", "value"))
        if has_qkv and out is not None and hasattr(out, "dense"):
            return own.query, own.key, own.value, out.dense
        return None
    transformer = getattr(model, "transformer", None)
    blocks = getattr(transformer, "layer", None)
    if blocks is not None:  # DistilBERT: MultiHeadSelfAttention
        attention = blocks[layer].attention
        if all(hasattr(attention, n) for n in ("q_lin", "k_lin", "v_lin", "out_lin")):
            return attention.q_lin, attention.k_lin, attention.v_lin, attention.out_lin
    return None


def output_arrays(out: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A transformers output's attentions, L tensors (1, H, T, T) -> float32 (L, H, T, T), checked
    finite, and hidden states, L + 1 tensors (1, T, D) -> (L + 1, T, D): shared by both torch engines."""
    attentions = np.stack([a[0].float().numpy() for a in out.attentions]).astype(np.float32, copy=False)
    _check_finite(attentions, name)
    hidden = np.stack([h[0].float().numpy() for h in out.hidden_states]).astype(np.float32, copy=False)
    return attentions, hidden


def _check_finite(attentions: np.ndarray, name: str) -> None:
    """Damaged weights (a flipped byte can make a NaN) give NaN attention: say so, never draw it."""
    if not np.isfinite(attentions).all():
        raise ModelFilesError(
            f"{name} produced attention weights that are not numbers (NaN or infinity): its weights "
            "file may be damaged"
        )


def load_pretrained(
    choice: ModelSpec | str | Path,
    *,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> PretrainedModel:
    """Load a model by ModelSpec, user text (Hub id, "bundled", local path) or directory.

    Raises ModelError subclasses whose messages are meant for the user: ModelInputError (not an id
    or folder), ModelNotFoundError (unknown id, no network), NotAnEncoderError, NoAttentionError,
    ModelFilesError (missing or damaged files, no safetensors weights).
    """
    return load_choice(
        choice, load_from_dir, check_config=check_encoder_config, into="PyTorch", name=name, progress=progress
    )


def load_from_dir(model_dir: Path, *, name: str) -> PretrainedModel:
    """Build the engine from files already on disk (after prepare_model_files checked them)."""
    import torch
    from safetensors import SafetensorError
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    check_head_count(read_config(model_dir))
    try:
        config = AutoConfig.from_pretrained(model_dir, trust_remote_code=False)
        tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=False)
        model = AutoModel.from_pretrained(
            model_dir,
            config=config,
            attn_implementation="eager",
            use_safetensors=True,
            trust_remote_code=False,
            dtype=torch.float32,
        )
    except ModelError:
        raise
    except SafetensorError as err:  # not an OSError: a damaged or incomplete weights file
        raise ModelFilesError(
            f"the weights file of {name} is damaged or incomplete ({err}); download or copy it again"
        ) from err
    except (OSError, ValueError, KeyError, TypeError) as err:
        first = str(err).strip().splitlines()[0][:240] if str(err).strip() else type(err).__name__
        raise ModelFilesError(f"transformers could not load {name}: {first}") from err
    model.eval()
    return PretrainedModel(model, tokenizer, name)
