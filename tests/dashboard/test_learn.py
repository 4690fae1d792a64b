"""AppTest for the learn page: it loads, follows its controls, opens both presets from the URL,
meets bad input with a message rather than an exception, and imports neither torch nor transformers.

The page runs from a two-line script (import and render) so these tests do not depend on the other
pages; one test also opens it the way users do, through dashboard/app.py.
AppTest cannot edit st.data_editor cells, so the edit test wraps st.data_editor in the script to
return an edited table, exactly what the page receives after a presenter types a number.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.deadline import APPTEST_DEADLINE

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard.views import learn
learn.render()
"""

# The same page, with st.data_editor returning Q with one cell changed to session_state["edit_q"].
EDIT_SCRIPT = f"""
import sys
if {str(ROOT)!r} not in sys.path:
    sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
from dashboard.views import learn
_editor = st.data_editor
def _edited(data, **kwargs):
    value = st.session_state.get("edit_q")
    if value is not None and "_query_" in kwargs.get("key", ""):
        data = data.copy()
        data.iloc[0, 0] = value
    return _editor(data, **kwargs)
st.data_editor = _edited
learn.render()
"""


def run_page(script: str = SCRIPT, **params: str) -> AppTest:
    """The page with every step on screen (`step=all`), unless the test names a step."""
    at = AppTest.from_string(script, default_timeout=APPTEST_DEADLINE)
    params.setdefault("step", "all")
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart(at: AppTest, key: str) -> dict:
    """The Plotly spec of the chart drawn with this key."""
    for element in at.get("plotly_chart"):
        if element.proto.id.endswith(f"-{key}"):
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart with key {key!r}")


def z(spec: dict) -> np.ndarray:
    """The heatmap's values (Plotly may ship them base64-encoded)."""
    data = spec["data"][0]["z"]
    if isinstance(data, dict):  # {"bdata": ..., "dtype": ..., "shape": ...}
        import base64

        raw = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
        return raw.reshape([int(s) for s in str(data["shape"]).split(",")])
    return np.asarray(data, dtype=float)


def texts(at: AppTest) -> list[str]:
    """Everything the page wrote through markdown-like elements (which would interpret * $ :[] )."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success", "title", "header", "subheader")
    return [str(e.value) for kind in kinds for e in at.get(kind)]


def warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


# ---- loads, and the controls change the output ----------------------------------------------


def test_page_loads_with_seven_numbered_steps():
    at = run_page()
    steps = [s.value for s in at.subheader if s.value.startswith("Step ")]
    assert [s.split(" ·")[0] for s in steps] == [f"Step {i}" for i in range(1, 8)]
    assert len(at.latex) >= 7
    assert at.text[0].value == "The  ·  cat  ·  sat  ·  on  ·  the  ·  mat"
    probs = z(chart(at, "probs"))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    cells = np.asarray(chart(at, "scores")["data"][0]["text"]).ravel()
    assert all(re.fullmatch(r"-?\d+\.\d{4}", c) for c in cells)  # numbers in the cells, 4 decimals


# ---- one step at a time ---------------------------------------------------------------------


def step_headers(at: AppTest) -> list[str]:
    return [s.value.split(" ·")[0] for s in at.subheader if s.value.startswith("Step ")]


def chart_keys(at: AppTest) -> list[str]:
    return [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]


def step_picker(at: AppTest):
    """The step picker: its key names the step on screen (widgets.step_picker_ui says why)."""
    (picker,) = [w for w in at.segmented_control if w.key.startswith("learn_step_picker_")]
    return picker


def test_default_view_is_step_one_alone():
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE).run()
    assert not at.exception
    assert step_headers(at) == ["Step 1"]
    assert chart_keys(at) == ["x"]
    assert step_picker(at).value == "1"
    assert "step" not in at.query_params  # the default stays out of the link


@pytest.mark.parametrize(
    ("view", "headers", "charts"),
    [
        ("3", ["Step 3"], ["scores"]),
        ("5", ["Step 5"], ["probs"]),
        ("7", ["Step 7"], ["output", "residual", "normed"]),
        ("heads", [], ["head_0", "head_1", "concat", "w_o"]),
    ],
)
def test_picking_a_step_shows_that_step_only(view, headers, charts):
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE).run()
    step_picker(at).set_value(view).run()
    assert not at.exception
    assert step_headers(at) == headers
    assert chart_keys(at) == charts
    assert at.query_params["step"] == view


def test_next_and_previous_walk_through_the_steps():
    at = run_page(step="1")
    assert [b.label for b in at.button if b.key == "learn_prev"] == []  # nothing before step 1
    for expected in ("2", "3", "4", "5", "6", "7", "heads"):
        at.button(key="learn_next").click().run()
        assert step_picker(at).value == expected
    assert not [b for b in at.button if b.key == "learn_next"]  # the last stop
    at.button(key="learn_prev").click().run()
    assert step_headers(at) == ["Step 7"]


def test_head_choice_survives_a_step_without_the_head_picker():
    at = run_page(step="3")
    at.segmented_control(key="learn_head").set_value(1).run()
    step_picker(at).set_value("1").run()  # no head picker on step 1
    assert not [w for w in at.segmented_control if w.key == "learn_head"]
    step_picker(at).set_value("3").run()
    assert at.segmented_control(key="learn_head").value == 1
    assert "head 2 of 2" in chart(at, "scores")["layout"]["title"]["text"]


def test_worked_examples_step_through_without_a_heads_stop():
    at = run_page(example="cat-mat", step="heads")  # only the toy model has the heads section
    assert not at.exception
    assert step_picker(at).value == "1"
    assert "heads" not in step_picker(at).options
    step_picker(at).set_value("7").run()
    assert chart_keys(at) == ["output", "residual", "normed"]
    assert not [b for b in at.button if b.key == "learn_next"]


def test_changing_the_sentence_updates_every_step():
    at = run_page()
    before = z(chart(at, "normed"))
    at.text_input(key="learn_text").set_value("Attention is all you need").run()
    assert not at.exception
    assert at.text[0].value == "Attention  ·  is  ·  all  ·  you  ·  need"
    assert chart(at, "scores")["data"][0]["y"] == ["Attention", "is", "all", "you", "need"]
    assert z(chart(at, "normed")).shape == (5, 8) != before.shape
    assert at.query_params["text"] == "Attention is all you need"


def test_ready_example_fills_the_sentence_box():
    at = run_page()
    at.pills(key="learn_pick").set_value("trophy").run()
    assert at.text_input(key="learn_text").value.startswith("The trophy would not fit")
    assert at.pills(key="learn_pick").value is None  # a one-off action, ready for the next pick


def test_changing_heads_updates_head_views_and_the_url():
    at = run_page()
    at.number_input(key="learn_heads").set_value(4).run()
    assert not at.exception
    assert at.segmented_control(key="learn_head").options == ["Head 1", "Head 2", "Head 3", "Head 4"]
    assert z(chart(at, "query")).shape == (6, 2)  # d_k = 8 / 4
    heads = [chart(at, f"head_{i}") for i in range(4)]
    assert not np.allclose(z(heads[0]), z(heads[3]))
    assert not any(h["data"][0]["showscale"] for h in heads)  # one scale for all, said in a caption
    assert z(chart(at, "concat")).shape == (6, 8)  # concatenation: 4 heads x 2
    assert at.query_params["heads"] == "4"
    at.segmented_control(key="learn_head").set_value(3).run()
    np.testing.assert_allclose(z(chart(at, "probs")), z(heads[3]))


@pytest.mark.parametrize("kind", ["causal", "local", "strided"])
def test_masks_hide_entries(kind):
    at = run_page()
    at.selectbox(key="learn_mask").set_value(kind).run()
    assert not at.exception
    probs = z(chart(at, "probs"))
    if kind == "causal":
        assert np.all(np.triu(probs, 1) == 0)
    assert (probs == 0).any()
    assert "−∞" in np.asarray(chart(at, "scaled")["data"][0]["text"]).ravel().tolist()
    assert at.query_params["mask"] == kind


def test_scaling_off_shows_saturation():
    at = run_page(d_k="64")
    at.toggle(key="learn_scale").set_value(False).run()
    assert not at.exception
    assert "Scaling is switched off" in warnings(at)
    unscaled, scaled = z(chart(at, "probs")), z(chart(at, "probs_scaled"))
    assert unscaled.max(axis=1).mean() > scaled.max(axis=1).mean() + 0.2  # peakier rows
    sat = chart(at, "saturation")
    names = {trace["name"] for trace in sat["data"]}
    assert "not divided (in use)" in names
    assert at.metric[0].value == f"{unscaled.max(axis=1).mean():.4f}"


# ---- presets ------------------------------------------------------------------------------


def test_cat_mat_preset_by_url_flags_the_article():
    at = run_page(example="cat-mat")
    assert at.segmented_control(key="learn_mode").value == "cat-mat"
    summary = at.dataframe[0].value
    assert len(summary) == 12
    assert summary["article prints"].tolist()[:2] == ["-0.01", "0.13"]
    assert summary["true value"].tolist()[:2] == ["-0.0300", "0.1400"]
    assert (summary["verdict"] == "✗ slip at this step").sum() == 8
    np.testing.assert_allclose(z(chart(at, "scores")), [[-0.03, 0.14], [-0.07, 0.01]], atol=1e-12)
    assert len(chart(at, "context")["layout"]["shapes"]) == 6  # every weighted sum outlined
    assert at.query_params["example"] == "cat-mat"


def test_i_love_nlp_preset_by_url():
    at = run_page(example="i-love-nlp")
    summary = at.dataframe[0].value
    assert summary["article prints"].tolist() == ["0.1", "0.3", "0.6", "5.0"]
    assert summary["true value"].tolist() == ["0.0159", "0.1173", "0.8668", "5.7019"]
    assert summary["verdict"].tolist()[-1] == "✗ carried from an earlier slip"


def test_presets_are_selectable_in_the_page():
    at = run_page()
    at.segmented_control(key="learn_mode").set_value("i-love-nlp").run()
    assert not at.exception
    assert at.query_params["example"] == "i-love-nlp"
    at.segmented_control(key="learn_mode").set_value("sentence").run()
    assert "example" not in at.query_params


def test_an_edited_input_changes_every_later_step():
    at = run_page(EDIT_SCRIPT, example="cat-mat")
    before = {k: z(chart(at, k)) for k in ("scores", "scaled", "probs", "context", "normed")}
    at.session_state["edit_q"] = 0.9
    at.run()
    assert not at.exception
    for key, old in before.items():
        assert not np.allclose(z(chart(at, key))[0], old[0]), key
    np.testing.assert_allclose(z(chart(at, "scores"))[0, 0], 0.9 * 0.2 - 0.2 * 0.1 + 0.3 * -0.1)
    assert any("changed the article's inputs" in t for t in texts(at))
    assert not at.button(key="learn_reset").disabled


# ---- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \t  "])
def test_empty_sentence_gets_a_prompt(text):
    at = run_page()
    at.text_input(key="learn_text").set_value(text).run()
    assert not at.exception
    assert any("Type a sentence" in i.value for i in at.info)
    assert not at.get("plotly_chart")


def test_long_text_is_cut_to_64_tokens_with_a_notice():
    at = run_page()
    at.text_input(key="learn_text").set_value(" ".join(f"w{i}" for i in range(80))).run()
    assert not at.exception
    assert "80 tokens" in warnings(at) and "first 64" in warnings(at)
    assert z(chart(at, "probs")).shape == (64, 64)


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("<script>alert('x')</script> <b>bold</b>", "alert"),
        ("**not bold** $x^2$ :red[colour] [link](http://example.com)", "colour"),
        ("Café naïve 👨‍👩‍👧 👍🏽", "naïve"),
        ("مرحبا بالعالم שלום", "مرحبا"),
    ],
)
def test_user_text_is_shown_as_plain_text_only(text, marker):
    at = run_page()
    at.text_input(key="learn_text").set_value(text).run()
    assert not at.exception
    from core.lesson.toy import tokenize
    from dashboard.charts.heatmap import escape_label

    tokens = list(tokenize(text).tokens)
    assert at.text[0].value == "  ·  ".join(tokens)  # st.text: never interpreted
    labels = chart(at, "scores")["data"][0]["x"]  # repeats are numbered: "'", "' (2)"; "<" escaped
    shown = [escape_label(tok) for tok in tokens]
    assert all(lab == tok or lab.startswith(f"{tok} (") for lab, tok in zip(labels, shown, strict=True))
    assert "<" not in "".join(labels)  # Plotly reads a few HTML tags in labels: none reaches it
    for written in texts(at):  # nothing typed reaches markdown, captions or alerts
        assert marker not in written


def test_indivisible_d_model_is_explained_not_raised():
    at = run_page(d_model="10", heads="3")
    assert "d_model (10) must be divisible by n_heads (3)" in warnings(at)
    assert not at.get("plotly_chart")
    at.selectbox(key="learn_d_k").set_value(4).run()  # an explicit d_k makes it fit
    assert not at.exception
    assert z(chart(at, "concat")).shape == (6, 12)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"example": "no-such-example"}, "does not have"),
        ({"d_model": "ten"}, "`d_model` value is not a whole number"),
        ({"heads": "99"}, "`heads` value 99 is outside"),
        ({"mask": "diagonal"}, "unknown `mask`"),
        ({"d_k": "5"}, "`d_k` must be one of"),
        ({"seed": "-3"}, "`seed` value -3 is outside"),
    ],
)
def test_bad_url_values_give_a_message_and_the_default(params, message):
    at = run_page(**params)
    assert message in " ".join(w.value for w in at.warning)
    assert at.get("plotly_chart")  # the page still draws, with defaults


# ---- the real entry point, and what the page imports ----------------------------------------


def test_app_opens_on_the_learn_page():
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=APPTEST_DEADLINE)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Learn: attention from scratch"


def test_learn_page_imports_neither_torch_nor_transformers():
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from streamlit.testing.v1 import AppTest
        at = AppTest.from_string({SCRIPT!r}, default_timeout={APPTEST_DEADLINE})
        at.query_params["example"] = "cat-mat"
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "transformers"))
        print("HEAVY:" + ",".join(heavy))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=APPTEST_DEADLINE, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    assert line == "HEAVY:", line


AWAY_SCRIPT = SCRIPT.replace(
    "learn.render()", 'st.write("another page") if st.session_state.get("away") else learn.render()'
)


def test_settings_survive_a_visit_to_another_page():
    at = run_page(AWAY_SCRIPT)
    at.number_input(key="learn_heads").set_value(4).run()
    at.text_input(key="learn_text").set_value("Back again").run()
    at.session_state["away"] = True
    at.run()  # the learn widgets are not drawn: Streamlit drops their state
    at.session_state["away"] = False
    at.run()
    assert not at.exception
    assert at.number_input(key="learn_heads").value == 4
    assert at.text_input(key="learn_text").value == "Back again"


# ---- honest text (the code's house rules are checked in tests/test_house.py) -----------------------


def test_sentence_mode_says_its_weights_are_random_and_untrained():
    at = run_page(step="2")
    said = " ".join(texts(at))
    assert "random and untrained" in said and "Your sentence in a real BERT" in said
