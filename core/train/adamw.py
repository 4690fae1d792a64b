"""AdamW in NumPy, computing what torch.optim.AdamW computes, for a dict of named parameters.

For each parameter w with gradient g, at step t (from 1), with learning rate lr:
    1) decay        w <- w (1 - lr * weight_decay)    decoupled: it shrinks w, it is not part of g
    2) moments      m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g²
    3) correct      m and v start at 0, so early averages are too small: divide by 1 - b1^t and
                    1 - b2^t
    4) update       w <- w - lr * m_hat / (sqrt(v_hat) + eps)
Step 1 uses w as it was before the update (decay and update both read the same w), as torch does.

References: Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization" (algorithm 2);
torch.optim.AdamW (the order of the operations and where eps goes follow it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

__all__ = ["AdamW", "default_decay"]

EMBEDDINGS = ("wte.weight", "wpe.weight")


def default_decay(params: dict[str, np.ndarray]) -> Callable[[str], bool]:
    """Weight decay for matrices only: biases, LayerNorm's gains and the embedding tables keep their
    size (shrinking a gain or a table toward 0 is not a simpler model), as in nanoGPT and minGPT."""
    return lambda name: params[name].ndim == 2 and name not in EMBEDDINGS


class AdamW:
    """AdamW over a dict of named arrays, updated in place by step(params, grads)."""

    def __init__(
        self,
        params: dict[str, np.ndarray],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        decay: Callable[[str], bool] | None = None,
        frozen: Iterable[str] = (),
    ):
        """decay(name): whether weight decay applies to that parameter (default: default_decay).
        frozen: names never updated (a fixed position table, say); they keep no moments."""
        if not lr >= 0 or not eps >= 0 or not weight_decay >= 0:
            raise ValueError(f"lr ({lr}), eps ({eps}) and weight_decay ({weight_decay}) must be 0 or more")
        if not all(0 <= b < 1 for b in betas):
            raise ValueError(f"betas {betas} must each lie in [0, 1)")
        self.lr, self.betas, self.eps, self.weight_decay = lr, tuple(betas), eps, weight_decay
        self.frozen = set(frozen)
        if unknown := self.frozen - set(params):
            raise ValueError(f"frozen names no parameter: {sorted(unknown)}")
        decay = decay or default_decay(params)
        self.names = [name for name in params if name not in self.frozen]
        self.decays = {name: bool(decay(name)) for name in self.names}
        self.m = {name: np.zeros_like(params[name]) for name in self.names}  # first moment
        self.v = {name: np.zeros_like(params[name]) for name in self.names}  # second moment
        self.t = 0  # steps taken

    def step(
        self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray], lr: float | None = None
    ) -> None:
        """One update of every parameter that is not frozen, in place. lr overrides the learning
        rate for this step (a warm-up or a schedule)."""
        lr = self.lr if lr is None else lr
        b1, b2 = self.betas
        self.t += 1
        # 3) the bias corrections, folded into the step size and the denominator as torch does
        step_size = lr / (1 - b1**self.t)
        root_correction = math.sqrt(1 - b2**self.t)
        for name in self.names:
            w, g, m, v = params[name], grads[name], self.m[name], self.v[name]
            # 1) decoupled weight decay
            if self.decays[name] and self.weight_decay:
                w *= 1 - lr * self.weight_decay
            # 2) moving averages of the gradient and of its square
            m += (1 - b1) * (g - m)
            v *= b2
            v += (1 - b2) * (g * g)
            # 4) the update: each coordinate's step is about lr, whatever the gradient's scale
            denom = np.sqrt(v)
            denom /= root_correction
            denom += self.eps
            w -= step_size * (m / denom)
