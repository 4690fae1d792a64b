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
from core.models.interventions import Patch, check_heads, check_patch
from core.models.registry import ModelSpec, load_choice, read_config
from core.models.result import AttentionResult, result_from_encoding

__all__ = [
    "ENGINE_NAME",
    "NoAttentionError",
    "NotAnEncoderError",
    "PretrainedModel",
    "check_encoder_config",
    "check_head_count",
    "head_hooks",
    "load_pretrained",
    "output_arrays",
    "residual_hook",
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

    def _forward(self, encoding: Any, ablate: frozenset[tuple[int, int]] = frozenset(), patch=None) -> Any:
        return self._forward_ids(encoding.ids, encoding.type_ids, ablate, patch)

    def _forward_ids(
        self, ids: Any, type_ids: Any, ablate: frozenset = frozenset(), patch: Patch | None = None, keep=None
    ) -> Any:
        """The model on one input; `ablate`'s heads zeroed and `patch`'s heads replaced by a pre-hook on
        each changed layer's W^O, `patch`'s residuals by a pre-hook on their layers, there only for this
        call (the caller holds the lock). keep: a list to append each layer's W^O input to."""
        import torch

        ids = torch.tensor([list(ids)], dtype=torch.long)  # (1, T)
        inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        if self._accepts_token_types:
            inputs["token_type_ids"] = torch.tensor([list(type_ids)], dtype=torch.long)
        hooks = []
        try:
            hooks += head_hooks(self._projection, self.n_layers, self.n_heads, ablate, patch, keep)
            for layer, value in (patch.residual if patch else {}).items():  # DistilBERT: transformer.layer
                blocks = (getattr(self.model, "encoder", None) or self.model.transformer).layer
                hooks.append(residual_hook(blocks[layer], value))
            with torch.inference_mode():
                return self.model(**inputs, output_attentions=True, output_hidden_states=True)
        finally:
            for hook in hooks:
                hook.remove()

    def _projection(self, layer: int) -> Any:
        """Layer `layer`'s W^O (BertSelfOutput.dense, DistilBERT's out_lin), whose input is the heads'
        weighted sums side by side: where a head is ablated, patched or read."""
        modules = _attention_linears(self.model, layer)
        if modules is None:
            raise ModelError(
                f"{self.name}'s attention is not laid out like BERT's: its heads cannot be ablated or patched"
            )
        return modules[3]

    def encode(self, text: str, text_pair: str | None = None) -> Any:
        """Tokenize only (under the lock, cut to max_tokens as run() cuts): the tokenizers Encoding,
        with offsets into `text` and the cut-off tokens in `overflowing`."""
        with self._lock:
            return self._backend.encode(text, text_pair) if text_pair else self._backend.encode(text)

    def run(self, text: str, text_pair: str | None = None, *, ablate=(), patch=None) -> AttentionResult:
        """Tokenize (cut to the model's maximum length), run the forward pass, return float32 arrays.
        ablate: (layer, head) pairs, 0-indexed, zero-ablated before W^O (as core.models.bert does);
        patch: a core.models.interventions.Patch, read as core.models.bert reads it."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        start = time.perf_counter()
        encoding = self.encode(text, text_pair)
        patch = self._check_patch(patch, len(encoding.ids))
        with self._lock:
            out = self._forward(encoding, ablate, patch)
        attentions, hidden = output_arrays(out, self.name)
        return result_from_encoding(
            encoding,
            attentions,
            with_patched_inputs(hidden, patch),
            model=self.name,
            engine=ENGINE_NAME,
            max_tokens=self.max_tokens,
            n_special=self._backend.num_special_tokens_to_add(bool(text_pair)),
            meta={"seconds": time.perf_counter() - start, "ablated": sorted(ablate)},
        )

    def _check_patch(self, patch: Patch | None, n_tokens: int) -> Patch | None:
        if patch is None:
            return None
        d_k = self._projection(0).in_features // self.n_heads  # one head's width, from W^O's input
        return check_patch(patch, self.n_layers, self.n_heads, (n_tokens, d_k, self.model.config.hidden_size))

    def hidden_states(self, input_ids, token_type_ids=None, *, ablate=(), patch=None) -> np.ndarray:
        """(L + 1, T, D) float32 for token ids as they are (no tokenizer): leave-one-out drops ids.
        patch: a core.models.interventions.Patch; a patched layer input is what hidden_states holds."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        patch = self._check_patch(patch, len(input_ids))
        type_ids = [0] * len(input_ids) if token_type_ids is None else token_type_ids
        with self._lock:
            out = self._forward_ids(input_ids, type_ids, ablate, patch)
        hidden = np.stack([h[0].float().numpy() for h in out.hidden_states]).astype(np.float32, copy=False)
        return with_patched_inputs(hidden, patch)

    def contexts(self, input_ids: Any, token_type_ids: Any = None) -> np.ndarray:
        """(L, H, T, d_k) float32: every head's weighted sum (the input of W^O, split into heads), what
        a head patch is made of."""
        type_ids = [0] * len(input_ids) if token_type_ids is None else token_type_ids
        kept: list = []
        with self._lock:
            self._forward_ids(input_ids, type_ids, keep=kept)
        return split_contexts(kept, self.n_heads)

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


def head_hooks(projection, n_layers: int, n_heads: int, ablate, patch: Patch | None, keep=None) -> list:
    """Forward pre-hooks on each changed layer's W^O (projection(layer) gives the module): the input's
    d_k columns of a patched head replaced by the patch, then an ablated head's zeroed; keep: a list
    each layer's input is appended to (all layers). The handles, for the caller to remove."""
    import torch

    hooks = []
    for layer in range(n_layers):
        zero = [head for at, head in ablate if at == layer]
        given = {} if patch is None else patch.heads_of(layer)
        if not (zero or given or keep is not None):
            continue

        def change(_module: Any, args: tuple, zero=zero, given=given) -> tuple:
            context = args[0].clone()  # (1, T, H·d_k): the heads side by side, before W^O
            d_k = context.shape[-1] // n_heads
            if keep is not None:
                keep.append(context[0].float().numpy().copy())
            for head, value in given.items():
                context[..., head * d_k : (head + 1) * d_k] = torch.from_numpy(value).to(context.dtype)
            for head in zero:
                context[..., head * d_k : (head + 1) * d_k] = 0.0
            return (context, *args[1:])

        hooks.append(projection(layer).register_forward_pre_hook(change))
    return hooks


def residual_hook(block: Any, value: np.ndarray) -> Any:
    """A forward pre-hook on a layer module whose input hidden state becomes `value` (T, D)."""
    import torch

    def replace(_module: Any, args: tuple, kwargs: dict) -> tuple:
        given = torch.from_numpy(value)[None]  # (1, T, D)
        if args:
            return (given.to(args[0].dtype), *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": given.to(kwargs["hidden_states"].dtype)}

    return block.register_forward_pre_hook(replace, with_kwargs=True)


def with_patched_inputs(hidden: np.ndarray, patch: Patch | None) -> np.ndarray:
    """transformers records hidden_states[l] as layer l - 1's output: where the input of layer l was
    patched, put what layer l read instead, as the NumPy engines report it."""
    if patch is not None and patch.residual:
        hidden = hidden.copy()
        for layer, value in patch.residual.items():
            hidden[layer] = value
    return hidden


def split_contexts(kept: list[np.ndarray], n_heads: int) -> np.ndarray:
    """Each layer's W^O input (T, H·d_k) -> (L, H, T, d_k) float32."""
    stacked = np.stack(kept).astype(np.float32, copy=False)  # (L, T, H·d_k)
    n_layers, n_tokens, width = stacked.shape
    return stacked.reshape(n_layers, n_tokens, n_heads, width // n_heads).transpose(0, 2, 1, 3).copy()


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
