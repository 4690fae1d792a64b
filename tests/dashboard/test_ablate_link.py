"""The explore link's `ablate` list: pairs read and written back, anything else left out with a note."""

from __future__ import annotations

import pytest

from dashboard.views.explore.links import MAX_ABLATE_PAIRS, parse_heads, show_heads


@pytest.mark.parametrize(
    ("raw", "pairs", "noted"),
    [
        ("2.3,5.11", ((2, 3), (5, 11)), False),
        ("5.11, 2.3,2.3,", ((2, 3), (5, 11)), False),
        ("", (), False),
        ("99,-1", (), True),
        ("2.3,99.0,x.y", ((2, 3), (99, 0)), True),  # 99.0: a pair; whether the model has it is checked later
        ("1.-2", (), True),
        ("<script>alert(1)</script>", (), True),
        ("1.1e3", (), True),
        ("١.٢", (), True),  # other scripts' digits: int() would read them, a link does not
    ],
)
def test_parse_heads(raw, pairs, noted):
    parsed, note = parse_heads(raw)
    assert parsed == pairs
    assert (note is not None) == noted


def test_round_trip_and_bound():
    pairs = ((0, 0), (3, 11), (5, 2))
    assert parse_heads(show_heads(pairs)) == (pairs, None)
    many = ",".join(f"{i // 100}.{i % 100}" for i in range(MAX_ABLATE_PAIRS + 50))
    assert len(parse_heads(many)[0]) == MAX_ABLATE_PAIRS
