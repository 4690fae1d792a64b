"""The cost measurements: what is measured is the lessons' own attention code on inputs of the
right shapes (peak memory at least the arrays it must hold), and the arithmetic on top of the
timings (fitted exponent, crossover, FLOP crossover, the T × T weights' size) on hand-worked cases.
No timing is checked against a figure: the machine is too noisy for that (bench/ measures)."""

from __future__ import annotations

import numpy as np
import pytest

from core.cost.price import (
    Curve,
    crossover,
    curves_from,
    flop_crossover,
    measure_curves,
    measure_length,
    variant_curves,
    weights_megabytes,
)
from core.cost.variants import Variant


def test_curves_measure_the_attention_code_at_each_length():
    lengths = (16, 64, 256)
    seen = []
    curves = measure_curves(32, 4, lengths, progress=lambda done, total: seen.append((done, total)))
    assert [c.name for c in curves] == ["one head", "4 heads", "projections"]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    one, layer, _ = curves
    for curve in curves:
        assert curve.lengths == lengths and all(s > 0 for s in curve.seconds)
    # steps 3-6 keep scores, scaled scores and weights: three float32 n × n arrays per head at least
    for n, one_peak, layer_peak in zip(lengths, one.peak_bytes, layer.peak_bytes, strict=True):
        assert one_peak >= 3 * n * n * 4
        assert layer_peak >= 3 * 4 * n * n * 4


def synthetic(name, lengths, seconds):
    return Curve(name, tuple(lengths), tuple(seconds), (0,) * len(lengths))


def test_fitted_exponent_and_crossover_hand_worked():
    lengths = [16, 32, 64, 128, 256, 512]
    quadratic = synthetic("a", lengths, [1e-8 * n**2 for n in lengths])
    linear = synthetic("p", lengths, [1e-6 * n for n in lengths])
    assert quadratic.exponent == pytest.approx(2.0) and linear.exponent == pytest.approx(1.0)
    assert crossover(quadratic, linear) == pytest.approx(100.0)  # 1e-8 n² = 1e-6 n at n = 100
    assert crossover(linear, linear) is None  # never above
    assert crossover(synthetic("b", lengths, [1.0] * 6), linear) == 16.0  # above from the start
    # a layer measured only up to 128 is compared with the projections at its own lengths
    assert crossover(
        synthetic("a", lengths[:4], [1e-8 * n**2 for n in lengths[:4]]), linear
    ) == pytest.approx(100.0)


def test_flops_and_sizes_hand_worked():
    assert flop_crossover(384) == 768.0  # 4 n² D = 8 n D² at n = 2 D
    assert weights_megabytes(6, 12, 512) == pytest.approx(6 * 12 * 512 * 512 * 4 / 1e6)  # 75.5 MB
    assert weights_megabytes(6, 12, 32_768) == pytest.approx(309_237.645312)  # 309 GB
    assert np.isclose(weights_megabytes(1, 1, 1000), 4.0)


def test_a_layer_stops_where_asked_and_curves_keep_their_own_lengths():
    rows = [(n, measure_length(n, 16, 2, heads_up_to=32)) for n in (16, 32, 64)]
    assert [sorted(row) for _, row in rows] == [["2 heads", "one head", "projections"]] * 2 + [
        ["one head", "projections"]
    ]
    curves = {c.name: c for c in curves_from(rows)}
    assert curves["2 heads"].lengths == (16, 32) and curves["one head"].lengths == (16, 32, 64)


@pytest.mark.parametrize("name", ["window", "longformer", "linear", "performer", "linformer"])
def test_efficient_variants_never_hold_the_n_by_n_matrix(name):
    """Full attention's memory grows as n² (float32 n × n weights); the variant's output alone grows
    as n (its memory, unlike its time, is a deterministic figure)."""
    lengths = (512, 2048)  # 4 times longer
    full, other = variant_curves(Variant(name, w=2, m=16, k=8, global_tokens=(0,)), 16, lengths=lengths)
    assert (full.name, other.name) == ("full", name)
    assert full.peak_bytes[1] >= 2048 * 2048 * 4 and full.peak_bytes[1] / full.peak_bytes[0] > 14
    assert other.peak_bytes[1] / other.peak_bytes[0] < 6
    assert other.peak_bytes[1] < full.peak_bytes[1] / 4
