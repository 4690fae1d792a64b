"""The reference engine for decoders: a GPT-2 or a Llama run by transformers + torch, returning the
same AttentionResult as the NumPy decoders (core/models/gpt2.py, core/models/llama.py), next-token
logits included.

It loads as the encoder reference does (core/models/pretrained.py, whose docstring says why each
choice): eager attention (so the weights are returned), safetensors only, no code from the model
repository, float32. Ablation zeroes a head's d_k inputs of the attention's output projection
(GPT-2's c_proj, a Conv1D computing x @ W + b; a Llama's o_proj) with a forward pre-hook that lives
for one call, the same cut the NumPy engine makes before W^O; a head patch replaces them there, a
residual patch replaces a block's input with a pre-hook on the block (core/models/pretrained.py's hooks).

torch and transformers are imported inside the functions, so `import core` stays torch-free.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from core.models.bert import TextError, check_text
from core.models.errors import ModelFilesError
from core.models.interventions import Patch, check_heads, check_patch
from core.models.pretrained import (
    head_hooks,
    output_arrays,
    residual_hook,
    split_contexts,
    with_patched_inputs,
)
from core.models.result import AttentionResult, result_from_encoding

__all__ = ["ENGINE_NAME", "PretrainedDecoder", "load_from_dir"]

ENGINE_NAME = "torch"


class PretrainedDecoder:
    """A GPT-2 or a Llama in transformers: run(text, ablate=...) -> AttentionResult (thread-safe)."""

    engine = ENGINE_NAME

    def __init__(self, model: Any, tokenizer: Any, name: str) -> None:
        self.model, self.name = model, name
        config = model.config  # GPT-2's names, else a Llama's
        self.n_layers, self.n_heads, self.max_tokens = (
            int(getattr(config, "n_layer", None) or config.num_hidden_layers),
            int(getattr(config, "n_head", None) or config.num_attention_heads),
            int(getattr(config, "n_positions", None) or config.max_position_embeddings),
        )
        self.tokenizer = tokenizer  # what the pages read about how it cuts text (core/models/reading.py)
        self._backend = tokenizer.backend_tokenizer  # the same `tokenizers` pipeline the NumPy engine runs
        self._backend.no_padding()
        self._backend.enable_truncation(self.max_tokens)
        self._lock = threading.Lock()  # fast tokenizers are not thread-safe; Streamlit sessions are threads

    def run(self, text: str, *, ablate=(), patch=None) -> AttentionResult:
        """Tokenize (cut to the context), run the model, return float32 arrays and the last
        position's logits. ablate: (layer, head) pairs, 0-indexed; patch: a Patch
        (core/models/interventions.py)."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        text = check_text(text, "the text")  # the NumPy engine's checks and messages
        start = time.perf_counter()
        with self._lock:
            encoding = self._backend.encode(text)
        if not encoding.ids:
            raise TextError("the text has no tokens")
        patch = self._check_patch(patch, len(encoding.ids))
        out = self._forward_ids(encoding.ids, ablate, patch)
        attentions, hidden = output_arrays(out, self.name)
        return result_from_encoding(
            encoding,
            attentions,
            with_patched_inputs(hidden, patch),
            model=self.name,
            engine=ENGINE_NAME,
            max_tokens=self.max_tokens,
            n_special=0,
            meta={"seconds": time.perf_counter() - start, "ablated": sorted(ablate)},
            next_token_logits=out.logits[0, -1].float().numpy(),
        )

    def _forward_ids(self, ids: Any, ablate: frozenset = frozenset(), patch: Patch | None = None, keep=None):
        """The model on token ids with `ablate` switched off and `patch` patched in (both checked by
        the caller), under the lock: the one-call pre-hooks must not reach another thread's forward
        pass. keep: a list to append each block's W^O input to."""
        import torch

        with self._lock:
            hooks = head_hooks(self._projection, self.n_layers, self.n_heads, ablate, patch, keep)
            for layer, value in (patch.residual if patch else {}).items():
                hooks.append(residual_hook(self._blocks()[layer], value))
            try:
                with torch.inference_mode():
                    return self.model(
                        torch.tensor([list(ids)]), output_attentions=True, output_hidden_states=True
                    )
            finally:
                for hook in hooks:
                    hook.remove()

    def _check_patch(self, patch: Patch | None, n_tokens: int) -> Patch | None:
        config = self.model.config
        d_k = (
            getattr(config, "head_dim", None) or config.hidden_size // self.n_heads
        )  # GPT-2: n_embd / n_head
        return check_patch(patch, self.n_layers, self.n_heads, (n_tokens, d_k, config.hidden_size))

    def hidden_states(
        self, input_ids: Any, token_type_ids: Any = None, *, ablate=(), patch=None
    ) -> np.ndarray:
        """(L + 1, T, D) float32 for token ids as they are (leave-one-out drops ids), the last after
        ln_f as transformers gives it. token_type_ids must be absent or all zeros (one text)."""
        if token_type_ids is not None and np.any(token_type_ids):
            raise ValueError("a decoder reads one text: it has no second segment")
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        patch = self._check_patch(patch, len(input_ids))
        hidden = output_arrays(self._forward_ids(input_ids, ablate, patch), self.name)[1]
        return with_patched_inputs(hidden, patch)

    def contexts(self, input_ids: Any, token_type_ids: Any = None) -> np.ndarray:
        """(L, H, T, d_k) float32: every head's weighted sum (the input of W^O, split into heads), what
        a head patch is made of."""
        kept: list = []
        self._forward_ids(input_ids, keep=kept)
        return split_contexts(kept, self.n_heads)

    def decode(self, token_id: int) -> str:
        """One token as text (" Paris" for "ĠParis"), as the NumPy engine decodes it."""
        with self._lock:
            return self._backend.decode([int(token_id)], skip_special_tokens=False)

    def unembed(self, final_hidden: np.ndarray) -> np.ndarray:
        """(..., D) after ln_f -> (..., V) logits through the model's own (tied) lm_head."""
        weight = self.model.lm_head.weight.detach().numpy()  # (V, D): logits = h W_E^T
        return np.asarray(final_hidden, dtype=np.float32) @ weight.T

    def _projection(self, layer: int) -> Any:
        """Block `layer`'s W^O (GPT-2's c_proj, a Llama's o_proj): where heads are ablated, patched, read."""
        if self.model.config.model_type == "gpt2":
            return self.model.transformer.h[layer].attn.c_proj
        return self.model.model.layers[layer].self_attn.o_proj

    def _blocks(self) -> Any:
        """The blocks, whose input a residual patch replaces."""
        return self.model.transformer.h if self.model.config.model_type == "gpt2" else self.model.model.layers


def load_from_dir(model_dir: Path, *, name: str) -> PretrainedDecoder:
    """Build the engine from a GPT-2's or a Llama's files already on disk (prepare_model_files checked
    them)."""
    import json

    import torch
    from safetensors import SafetensorError
    from transformers import AutoTokenizer, GPT2LMHeadModel, LlamaForCausalLM

    model_type = json.loads((model_dir / "config.json").read_text(encoding="utf-8")).get("model_type")
    model_class = LlamaForCausalLM if model_type == "llama" else GPT2LMHeadModel
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=False)
        model = model_class.from_pretrained(
            model_dir, attn_implementation="eager", use_safetensors=True, dtype=torch.float32
        )
    except SafetensorError as err:  # not an OSError: a damaged or incomplete weights file
        raise ModelFilesError(f"the weights file of {name} is damaged or incomplete ({err})") from err
    except (OSError, ValueError, KeyError, TypeError) as err:
        first = str(err).strip().splitlines()[0][:240] if str(err).strip() else type(err).__name__
        raise ModelFilesError(f"transformers could not load {name}: {first}") from err
    return PretrainedDecoder(model.eval(), tokenizer, name)
