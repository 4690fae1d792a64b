"""The translator's parameters as transformers' BART state dict, and back: the names are already
BART's; a Linear's weight is stored (d_out, d_in) there and used (d_in, d_out) here, so it is
transposed on the way. BART's tied copies of the embedding table (the encoder's and the decoder's
embed_tokens, lm_head) and its final_logits_bias (zeros) are written too, so the file loads in
transformers without warnings."""

from __future__ import annotations

import numpy as np

__all__ = ["from_state_dict", "to_state_dict"]

_LINEARS = ("q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight", "fc1.weight", "fc2.weight")
_TIED = ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight")


def _transposed(name: str) -> bool:
    return name.endswith(_LINEARS)


def to_state_dict(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """BART's state dict (contiguous arrays, as safetensors needs) from the translator's parameters."""
    state = {name: np.ascontiguousarray(v.T if _transposed(name) else v) for name, v in params.items()}
    shared = params["model.shared.weight"]
    state |= dict.fromkeys(_TIED, shared)
    state["final_logits_bias"] = np.zeros((1, shared.shape[0]), dtype=shared.dtype)
    return state


def from_state_dict(state: dict[str, np.ndarray], names: list[str]) -> dict[str, np.ndarray]:
    """The translator's parameters `names` from a BART state dict."""
    return {name: np.ascontiguousarray(state[name].T if _transposed(name) else state[name]) for name in names}
