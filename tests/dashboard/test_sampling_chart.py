"""dashboard/charts/sampling.py, a pure builder: kept bars are renormalised with a tick where they
stood, cut bars are grey and say "cut", the drawn bar is hatched and says "drawn" with its rank (so
nothing is told by colour alone), a drawn token past the candidates is a last bar labelled with its
rank, and with nothing cut there are no ticks and no legend for a cut."""

from __future__ import annotations

from dashboard.charts.sampling import CUT_COLOR, HATCH, Candidates, Words, sampling_bars
from dashboard.content import sampling as text

WORDS = Words(
    title="t", x_title="p", kept_name=text.KEPT_NAME, before_name=text.BEFORE_NAME, cut_name=text.CUT_NAME,
    cut=text.CUT, drawn=text.DRAWN, hover_kept=text.HOVER_KEPT, hover_cut=text.HOVER_CUT,
)  # fmt: skip


def test_kept_cut_and_drawn_are_said_in_words():
    c = Candidates(
        [" the", " a", " an"], [0.5, 0.3, 0.2], [0.625, 0.375, 0.0], [True, True, False], [0, 1, 2], 1
    )
    fig = sampling_bars(c, WORDS)
    bars, ticks = fig.data[0], fig.data[2]
    assert list(bars.x) == [0.625, 0.375, 0.2]  # kept: renormalised; cut: as before the cut
    assert bars.text == ("62.5%", "drawn #2 · 37.5%", "cut · 20.0%")
    assert bars.marker.pattern.shape == ("", HATCH, "") and bars.marker.color[2] == CUT_COLOR
    assert list(ticks.x) == [0.5, 0.3] and ticks.name == text.BEFORE_NAME
    assert "cut" in bars.hovertext[2] and "after renormalising" in bars.hovertext[0]
    assert max(fig.layout.xaxis.tickvals) <= 1.0 and fig.layout.xaxis.range[1] > 0.625


def test_a_drawn_token_past_the_candidates_is_a_last_bar_with_its_rank_and_no_cut_no_ticks():
    c = Candidates(["a", "b", "z"], [0.6, 0.3, 0.001], [0.6, 0.3, 0.001], [True, True, True], [0, 1, 56], 2)
    fig = sampling_bars(c, WORDS)
    assert list(fig.data[0].y) == ["a", "b", "#57 z"] and fig.data[0].text[2] == "drawn #57 · 0.1%"
    assert len(fig.data) == 1  # nothing cut: no ticks, no legend
