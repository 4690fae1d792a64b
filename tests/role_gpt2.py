"""A GPT-2 whose heads are built by hand to have the decoder roles the head atlas names
(core/measures/atlas.py): the tests' stand-in for a trained decoder, since none can be downloaded
here. Weights are set, not trained; the tokenizer is tests/tiny_gpt2.py's.

The residual stream (width D = 128) has three blocks of dimensions: 0-63 hold the position (one
orthonormal code per position), 64-95 the token (a random unit vector per token id), 96-127 start
empty. Every MLP is zero, so each layer only adds its heads' outputs. Two layers of two heads (64
dimensions each):
- layer 1, head 1, previous token: its query maps position i's code to position i-1's, its key reads
  the position code, so the score peaks at j = i - 1; its value copies the token block into block
  96-127 ("what the previous token was");
- layer 1, head 2, first-token sink: a constant query (a bias) against a key that only position 0's
  code lights up; it writes nothing;
- layer 2, head 1, induction: its query reads the token, its key the previous-token block, so a token
  looks at the position after an earlier copy of itself (Olsson et al. 2022's two-head circuit), and
  its value copies that position's token into the token block, which the unembedding reads;
- layer 2, head 2, self: query and key both read the position code, so the score peaks at j = i.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.tiny_gpt2 import make_tiny_gpt2

N_POSITIONS, D, D_HEAD = 64, 128, 64
POS, TOK, PREV = slice(0, 64), slice(64, 96), slice(96, 128)
SHARP = 4.0  # scales every query: large enough that each head's peak takes nearly all its weight
COPY = 6.0  # the induction head's output gain


def _weights(vocab: int, seed: int) -> dict[str, np.ndarray]:
    """The state dict's arrays (HF GPT-2 layout: Conv1D weights are (in, out), x @ W)."""
    rng = np.random.default_rng(seed)
    wpe = np.zeros((N_POSITIONS, D))
    wpe[:, POS] = np.eye(N_POSITIONS)
    wte = np.zeros((vocab, D))
    tokens = rng.normal(size=(vocab, 32))
    wte[:, TOK] = tokens / np.linalg.norm(tokens, axis=1, keepdims=True)
    shift = np.eye(N_POSITIONS, k=-1)  # e_i @ shift = e_{i-1} (row i has its 1 in column i - 1)
    layers = []
    for _ in range(2):
        layers.append(
            {
                "q": np.zeros((D, D)),
                "k": np.zeros((D, D)),
                "v": np.zeros((D, D)),
                "bq": np.zeros(D),
                "proj": np.zeros((D, D)),
            }
        )
    h0, h1 = slice(0, D_HEAD), slice(D_HEAD, D)
    first, second = layers
    # layer 1, head 1: previous token
    first["q"][POS, h0] = SHARP * shift
    first["k"][POS, h0] = np.eye(N_POSITIONS)
    first["v"][TOK, 0:32] = np.eye(32) / 8.0  # undo ln_1's scale (about sqrt(D / 2) here): a unit copy
    first["proj"][0:32, PREV] = np.eye(32)
    # layer 1, head 2: first-token sink
    first["bq"][D_HEAD] = SHARP * 8.0
    first["k"][0, D_HEAD] = 1.0
    # layer 2, head 1: induction, and it copies: the attended token (the one that came next last
    # time) is written into the token block, strongly enough to outweigh the position's own token
    # there, so the tied unembedding predicts it (the second copy's loss falls far below the first's)
    second["q"][TOK, 0:32] = SHARP * 3 * np.eye(32)
    second["k"][PREV, 0:32] = np.eye(32)
    second["v"][TOK, 0:32] = np.eye(32) / 8.0
    second["proj"][0:32, TOK] = COPY * np.eye(32)
    # layer 2, head 2: self
    second["q"][POS, h1] = SHARP * np.eye(N_POSITIONS)
    second["k"][POS, h1] = np.eye(N_POSITIONS)
    out = {"transformer.wte.weight": wte, "transformer.wpe.weight": wpe, "lm_head.weight": wte}
    for i, layer in enumerate(layers):
        p = f"transformer.h.{i}."
        out[p + "attn.c_attn.weight"] = np.concatenate([layer["q"], layer["k"], layer["v"]], axis=1)
        out[p + "attn.c_attn.bias"] = np.concatenate([layer["bq"], np.zeros(2 * D)])
        out[p + "attn.c_proj.weight"] = layer["proj"]
        out[p + "attn.c_proj.bias"] = np.zeros(D)
        for name in ("mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"):
            out[p + name] = None  # zeroed below, in the shapes the model has
    return out


def make_role_gpt2(directory: Path, seed: int = 0) -> Path:
    """Save the hand-built GPT-2 (2 layers x 2 heads, 128 wide, 64 positions) in `directory`."""
    import torch
    from transformers import GPT2LMHeadModel

    directory = make_tiny_gpt2(directory, n_layer=2, n_head=2, n_embd=D, n_positions=N_POSITIONS, seed=seed)
    model = GPT2LMHeadModel.from_pretrained(directory).eval()
    state = model.state_dict()
    with torch.no_grad():
        for name, value in _weights(model.config.vocab_size, seed).items():
            target = state[name]
            new = torch.zeros_like(target) if value is None else torch.as_tensor(value, dtype=target.dtype)
            target.copy_(new)
    model.save_pretrained(directory, safe_serialization=True)
    return directory
