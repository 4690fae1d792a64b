"""AppTest of compare's "which heads carry the difference" (activation patching), on the bundled BERT
and the shipped letter GPT-2: the grids equal core/measures/patching.py's on the same pair and metric
(recomputed here, and their fractions recomputed from both runs' metrics), the statements give the
numbers of the grids, the positions grid runs on request, a large model's heads grid waits for its
button, presenter mode's switch shows the grid in the charts' place, and pairs that cannot be patched
are said in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.measures.choice import choose
from core.measures.patch_summary import attention_between
from core.measures.patching import encode_pair, option_metric, patch_heads, patch_residual, pronoun_metric
from dashboard.content.compare import PRESETS
from tests.dashboard.harness import plotly_array
from tests.dashboard.test_compare import open_page

pytestmark = pytest.mark.usefixtures("fast_apptest")
TROPHY, REPEAT = PRESETS["trophy"], PRESETS["repeat"]


@pytest.fixture(autouse=True)
def no_grid_from_another_test():
    """The grids are kept for every session of the server (long_work.shelf): each test starts with
    none, as a fresh server would."""
    from dashboard.long_work import shelf

    shelf.clear()


def grid(at: AppTest, name: str) -> np.ndarray | None:
    """The z of the chart whose key ends with `name`, or None when it is not drawn."""
    for chart in at.get("plotly_chart"):
        if chart.proto.id.endswith(name):
            return plotly_array(json.loads(chart.proto.spec)["data"][0]["z"])
    return None


def said(at: AppTest) -> str:
    kinds = ("error", "warning", "info", "markdown", "caption")
    return " ".join(str(m.value) for kind in kinds for m in at.get(kind)).replace("\\", "")


def engine(key: str):
    from dashboard.engines import load_engine

    return load_engine(key, "numpy")


def test_bert_trophy_heads_grid_is_the_measure_and_the_statement_states_it():
    at = open_page()
    bert = engine("bundled")
    clean, corrupt = encode_pair(bert, TROPHY.text, TROPHY.text2)
    result = bert.run(TROPHY.text)
    metric = pronoun_metric(result, "it", "trophy", "suitcase", bert.n_layers)
    found = patch_heads(bert, clean.ids, corrupt.ids, metric)
    np.testing.assert_allclose(grid(at, "compare_patch_heads_chart"), found.restored, atol=1e-12)
    change = found.metric_corrupt - found.metric_clean
    np.testing.assert_allclose(found.restored, (found.patched - found.metric_clean) / change, atol=1e-12)
    text = said(at)
    assert (
        f"Sentence 1 gives **{found.metric_clean:+.3f}**, sentence 2 **{found.metric_corrupt:+.3f}**" in text
    )
    layer, head = np.unravel_index(np.argmax(found.restored), found.restored.shape)
    assert f"**layer {layer + 1}, head {head + 1}**, restores **{found.restored[layer, head]:.0%}**" in text
    printed = np.round(found.restored, 2)  # the heads are counted as the grid prints them, rule stated
    assert f"**{(printed >= 0.1).sum()} heads** restore at least 10% of the difference each (cells of" in text
    assert f"**{(printed <= -0.1).sum()} heads** move the answer the other way by at least 10%" in text
    # the head with the clearest "it" -> "trophy" attention, found by a loop over the heads
    it, trophy = result.tokens.index("it"), result.tokens.index("trophy")
    weights = {(l, h): result.attentions[l, h, it, trophy] for l in range(6) for h in range(12)}  # noqa: E741
    best = max(weights, key=weights.get)
    between = attention_between(result.attentions, (it, it + 1), (trophy, trophy + 1))
    np.testing.assert_allclose(between[best], weights[best])
    where = f"**layer {best[0] + 1}, head {best[1] + 1}**"
    link = f"“it” → “trophy” attention, {where} ({weights[best]:.2f} of its row)"
    assert link in text and f"restores **{found.restored[best]:.0%}** of the difference" in text
    table = at.dataframe[-1].value  # most first, in percent as the statements give them
    assert list(table["restored"]) == [round(100 * v) for v in np.sort(found.restored, axis=None)[::-1][:5]]
    top = np.unravel_index(np.argmax(found.restored), found.restored.shape)
    assert table["→ “trophy”"][0] == round(float(weights[(int(top[0]), int(top[1]))]), 2)


def test_a_rerun_runs_the_model_no_more(monkeypatch):
    """Once the grid is drawn, a rerun that changes nothing (a click elsewhere) finds sentence 1's run
    and the grid in the session: no layer of the model runs again."""
    at = open_page()
    assert grid(at, "compare_patch_heads_chart") is not None
    bert, runs = engine("bundled"), []
    layers_from = bert.layers_from
    monkeypatch.setattr(bert, "layers_from", lambda *a, **k: runs.append(a[0]) or layers_from(*a, **k))
    at.run()
    assert not at.exception and grid(at, "compare_patch_heads_chart") is not None
    assert runs == []


def test_positions_grid_runs_on_request_and_the_changed_word_restores_all_of_it_at_the_embeddings():
    at = open_page()
    assert grid(at, "compare_patch_positions_chart") is None
    at.button(key="compare_patch_positions").click().run()
    shown = grid(at, "compare_patch_positions_chart")
    bert = engine("bundled")
    clean, corrupt = encode_pair(bert, TROPHY.text, TROPHY.text2)
    metric = pronoun_metric(bert.run(TROPHY.text), "it", "trophy", "suitcase", bert.n_layers)
    np.testing.assert_allclose(
        shown, patch_residual(bert, clean.ids, corrupt.ids, metric).restored, atol=1e-12
    )
    changed = clean.tokens.index("large")
    assert shown[0, changed] == pytest.approx(1.0, abs=1e-5)  # the embeddings then are sentence 2's
    assert "Where the difference travels: embeddings" in said(at) and "at “large”" in said(at)
    at.select_slider[0].set_value(1).run()  # kept: a rerun does not patch again, and still shows it
    assert grid(at, "compare_patch_positions_chart") is not None


def test_a_grid_one_session_computed_is_shown_to_the_next_without_asking(monkeypatch):
    """Thirty students patching the teacher's preset cost one sweep: a second session opening the same
    pair finds the positions grid the first one asked for, runs no layer, and shows no button."""
    first = open_page()
    first.button(key="compare_patch_positions").click().run()
    shown = grid(first, "compare_patch_positions_chart")
    bert, runs = engine("bundled"), []
    layers_from = bert.layers_from
    monkeypatch.setattr(bert, "layers_from", lambda *a, **k: runs.append(a[0]) or layers_from(*a, **k))
    second = open_page()
    np.testing.assert_array_equal(grid(second, "compare_patch_positions_chart"), shown)
    assert runs == [] and not [b for b in second.button if b.key == "compare_patch_positions"]


def test_letter_model_induction_flips_and_its_grid_is_the_measure():
    at = open_page(model="letters", preset="repeat")
    letters = engine("letters")
    clean, corrupt = encode_pair(letters, REPEAT.text, REPEAT.text2)
    metric, _ = option_metric(letters, [" y", " p"])
    found = patch_heads(letters, clean.ids, corrupt.ids, metric)
    np.testing.assert_allclose(grid(at, "compare_patch_heads_chart"), found.restored, atol=1e-12)
    options = [
        {o.text.strip(): o.logprob for o in choose(letters, t, (" y", " p"))[1]}
        for t in (REPEAT.text, REPEAT.text2)
    ]
    assert found.metric_clean == pytest.approx(options[0]["y"] - options[0]["p"], abs=1e-9)
    assert found.metric_corrupt == pytest.approx(options[1]["y"] - options[1]["p"], abs=1e-9)
    assert (
        "The answer flips: in sentence 1 the model prefers “y”, in sentence 2 the model prefers “p”."
        in said(at)
    )


def test_a_large_model_waits_for_the_button(monkeypatch):
    from dashboard.views.compare import patching

    monkeypatch.setattr(patching, "AUTO_RUNS", 4)  # the letter model's 8 heads count as many
    at = open_page(model="letters", preset="repeat")
    assert grid(at, "compare_patch_heads_chart") is None
    assert "This model has 8 heads" in said(at)
    at.button(key="compare_patch_heads").click().run()
    assert grid(at, "compare_patch_heads_chart").shape == (2, 4)


def test_presenter_mode_shows_the_grid_in_the_charts_place():
    at = open_page(present=True, show="patch")
    ids = [chart.proto.id for chart in at.get("plotly_chart")]
    assert ids and ids[0].endswith("compare_patch_heads_chart")
    assert not any("compare_head" in i or "compare_diff" in i for i in ids)


@pytest.mark.parametrize(
    ("text", "text2", "expected"),
    [
        ("The cat sat.", "The big cat sat.", "tokenize to different lengths (6 and 7 tokens)"),
        ("The cat sat.", "The cat sat.", "nothing to restore: the two sentences are the same"),
    ],
)
def test_pairs_that_cannot_be_patched_are_said_in_one_line(text, text2, expected):
    at = open_page(text=text, text2=text2)
    assert expected in said(at) and not at.error
    assert grid(at, "compare_patch_heads_chart") is None


def test_a_decoder_with_no_continuations_reads_how_far_the_next_token_moves():
    at = open_page(model="letters", preset="repeat")
    at.text_input(key="compare_choice_a").set_value("").run()
    assert "how far the next-token distribution after the text moves" in said(at)
    shown = grid(at, "compare_patch_heads_chart")
    assert shown is not None and np.isfinite(shown).all()
