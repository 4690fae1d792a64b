"""bfloat16: the upper half of a float32 (its sign, its 8 exponent bits and 7 of its 23 mantissa
bits), so half the memory at float32's range, about 3 significant digits. SmolLM2 was trained and
published in it. The hosted demo holds a Llama's weights so (SmolLM2: 540 -> 270 MB) and expands
each block back to float32 when the forward pass reaches it: every product is still computed in
float32, on weights rounded to bfloat16. NumPy has no bfloat16 type, so the halves are kept as uint16.

Expanding is a shift (about 3e9 values a second here); NumPy's float16 would be as small, but its
conversion back to float32 runs ten times slower, which every generated token would pay.
"""

from __future__ import annotations

import numpy as np

__all__ = ["from_bfloat16", "to_bfloat16"]

_AT_ONCE = 1 << 20


def to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values -> their bfloat16 halves (uint16), rounded to the nearest, ties to even (as
    torch's .to(torch.bfloat16)). A million values at a time: the rounding's scratch stays small
    beside a 113 MB embedding table."""
    flat = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
    halves = np.empty(flat.shape, dtype=np.uint16)
    for start in range(0, flat.size, _AT_ONCE):
        part = flat[start : start + _AT_ONCE]
        if not np.isfinite(part).all():
            raise ValueError("only finite weights are held in bfloat16")
        bits = part.view(np.uint32)
        # add just under half of the dropped part's unit, plus one when the kept part is odd: ties go even
        rounded = bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
        halves[start : start + _AT_ONCE] = rounded >> np.uint32(16)
    return halves.reshape(np.shape(values))


def from_bfloat16(halves: np.ndarray) -> np.ndarray:
    """bfloat16 halves (uint16) -> float32, exactly (the lower 16 bits are zeros)."""
    return (np.asarray(halves, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
