"""Every colour scale the chart builders use stays readable under simulated deuteranopia and
protanopia (issue 50, point 2), and heads whose colours merge are told apart by their dash.

Simulation: Machado, Oliveira & Fernandes (2009), "A physiologically-based model for simulation of
color vision deficiency", IEEE TVCG 15(6), 1291-1298; the severity-1.0 matrices of the authors' table
(https://www.inf.ufrgs.br/~oliveira/pubs_files/CVD_Simulation/CVD_Simulation.html), applied to linear
RGB (sRGB decoded, simulated, clipped, encoded again). Differences are CIE 1976 ΔE*ab in CIELAB (D65).

The scales are collected from the builders' source (every `colorscale` given in dashboard/charts), so
a scale a new builder uses is checked too; a scale computed at run time must be listed in COMPUTED
with the reason it needs no check.
"""

from __future__ import annotations

import ast
import importlib
import itertools
from pathlib import Path

import numpy as np
import pytest
from plotly.colors import hex_to_rgb, sample_colorscale

from dashboard.charts.lines import HEAD_COLOURS
from dashboard.charts.marks import CURVE_STYLES, HEAD_DASHES, HEAD_SYMBOLS

CHARTS = Path(__file__).resolve().parents[2] / "dashboard" / "charts"

PROTANOPIA = np.array(
    [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
)
DEUTERANOPIA = np.array(
    [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
)
SRGB_TO_XYZ = np.array(  # IEC 61966-2-1, D65
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
VISIONS = {"typical": np.eye(3), "deuteranopia": DEUTERANOPIA, "protanopia": PROTANOPIA}

SAMPLES = 33  # points along a scale (every 1/32)
ENDS_SEQUENTIAL = 40.0  # ΔE between a sequential scale's ends: far apart
END_TO_MIDDLE = 40.0  # a diverging scale's ends against its middle
END_TO_END = 25.0  # a diverging scale's two ends (its two signs) against each other
QUARTERS = 25.0  # +0.5 against -0.5 of a diverging scale's range
STEP = 10.0  # two points a quarter of the scale apart: never the same colour
CONFUSED = 20.0  # head colours closer than this (ΔE) in any vision need another cue

# Scales built at run time, with why they are not read as a scale of values.
COMPUTED = {
    ("atlas.py", "[[0, GREY_OUT], [1, GREY_OUT]]"): "one flat veil over filtered-out heads",
    ("atlas.py", "scale"): "role classes: each cell also prints its role's short name",
    ("atlas_translator.py", "_scale(order, colors)"): "role classes: each cell prints its role's name",
    ("learn.py", "[[0.0, color], [1.0, color]]"): "one flat colour: masked or zero cells, printed",
}


def linear(srgb: np.ndarray) -> np.ndarray:
    srgb = np.asarray(srgb, dtype=float)
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def encoded(lin: np.ndarray) -> np.ndarray:
    lin = np.clip(lin, 0.0, 1.0)
    return np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)


def simulate(srgb: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """sRGB in [0, 1] (..., 3) as seen with the deficiency `matrix` (Machado 2009, in linear RGB)."""
    return encoded(linear(srgb) @ matrix.T)


def lab(srgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB colours in [0, 1], (..., 3)."""
    xyz = linear(srgb) @ SRGB_TO_XYZ.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def delta_e(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b))


def scale_lab(scale, vision: str) -> np.ndarray:
    """(SAMPLES, 3) CIELAB of a Plotly colour scale (a name or [[position, colour], ...]) as seen."""
    rgb = np.array(sample_colorscale(scale, list(np.linspace(0, 1, SAMPLES)), colortype="tuple"))
    return lab(simulate(rgb, VISIONS[vision]))


def hex_lab(colour: str, vision: str) -> np.ndarray:
    return lab(simulate(np.array(hex_to_rgb(colour)) / 255, VISIONS[vision]))


def _scale_expressions(tree: ast.Module):
    """Every expression given as a colour scale: colorscale=..., {"colorscale": ...},
    sample_colorscale(...)'s first argument."""
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "colorscale":
            yield node.value
        elif isinstance(node, ast.Dict):
            yield from (v for k, v in zip(node.keys, node.values, strict=True) if _is(k, "colorscale"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "sample_colorscale":
            yield node.args[0]


def _is(node, text: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == text


def builder_scales() -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
    """(scale name -> the builder files using it, the computed scales as (file, expression))."""
    named: dict[str, list[str]] = {}
    computed = set()
    for path in sorted(CHARTS.glob("*.py")):
        module = importlib.import_module(f"dashboard.charts.{path.stem}")
        for expr in _scale_expressions(ast.parse(path.read_text())):
            if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
                named.setdefault(expr.value, []).append(path.name)
            elif isinstance(expr, ast.Name) and isinstance(getattr(module, expr.id, None), str):
                named.setdefault(getattr(module, expr.id), []).append(path.name)
            else:
                computed.add((path.name, ast.unparse(expr)))
    return named, computed


NAMED, FOUND_COMPUTED = builder_scales()


def test_the_scales_are_collected_from_the_builders():
    assert {"Blues", "RdBu_r"} <= set(NAMED), NAMED  # the sequential and the diverging scale
    assert set(FOUND_COMPUTED) == set(COMPUTED), "a computed scale: check it, then list it in COMPUTED"


def is_sequential(scale) -> bool:
    """Lightness one way from end to end (typical vision): a sequential scale; else diverging."""
    steps = np.diff(scale_lab(scale, "typical")[:, 0])
    return bool(np.all(steps >= -0.5) or np.all(steps <= 0.5))


@pytest.mark.parametrize("vision", list(VISIONS))
@pytest.mark.parametrize("scale", sorted(NAMED))
def test_scale_reads_in_every_colour_vision(scale, vision):
    seen = scale_lab(scale, vision)
    lightness = seen[:, 0]
    quarter = (SAMPLES - 1) // 4
    assert min(delta_e(seen[i], seen[i + quarter]) for i in range(SAMPLES - quarter)) >= STEP
    if is_sequential(scale):
        steps = np.diff(lightness)
        assert np.all(steps >= -0.5) or np.all(steps <= 0.5), f"{scale}: lightness not monotonic"
        assert delta_e(seen[0], seen[-1]) >= ENDS_SEQUENTIAL
        return
    middle = SAMPLES // 2
    # diverging: lighter from each end to the middle, the signs apart, neither end like the middle
    assert np.all(np.diff(lightness[: middle + 1]) >= -0.5), f"{scale}: lower half not monotonic"
    assert np.all(np.diff(lightness[middle:]) <= 0.5), f"{scale}: upper half not monotonic"
    assert min(delta_e(seen[0], seen[middle]), delta_e(seen[-1], seen[middle])) >= END_TO_MIDDLE
    assert delta_e(seen[0], seen[-1]) >= END_TO_END
    assert delta_e(seen[quarter], seen[-1 - quarter]) >= QUARTERS


def confused_heads(n: int = len(HEAD_DASHES)) -> list[tuple[int, int]]:
    """Pairs of heads (of the first n) whose colours are closer than CONFUSED in some colour vision."""
    return [
        (a, b)
        for a, b in itertools.combinations(range(n), 2)
        if min(delta_e(hex_lab(HEAD_COLOURS[a], v), hex_lab(HEAD_COLOURS[b], v)) for v in VISIONS) < CONFUSED
    ]


def test_heads_whose_colours_merge_have_different_dashes():
    confused = confused_heads()
    assert confused, "the check checks something: Dark24's red and ochre merge under deuteranopia"
    assert [(a, b) for a, b in confused if HEAD_DASHES[a] == HEAD_DASHES[b]] == []


def test_every_curve_and_head_has_its_own_shape():
    assert len(set(CURVE_STYLES)) == len(CURVE_STYLES)
    assert len({dash for dash, _ in CURVE_STYLES}) == len({symbol for _, symbol in CURVE_STYLES}) == 4
    assert len(set(HEAD_SYMBOLS)) == len(HEAD_SYMBOLS) >= 12
