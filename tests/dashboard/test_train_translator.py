"""The train page's second task, the translator (?task=translate), in AppTest: the task from the link
and from the picker (each task keeps its own run), the recorded run's curves, maps and findings with
the numbers recomputed here from the shipped record, an own run started, trained, paused and
finished, the hand-off to explore, and tampered link values (one warning line each, the nearest
valid value, a working page).

Own runs are tiny (width 16, one layer, batch 8, 20 held-out pairs), put in place of the page's base
settings by the script's prelude, so 50 steps take a second or two. AppTest runs the page's live
fragment inline on every run: each `at.run()` is one tick (one slice).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.translate.engine import TRANSLATOR_DIR
from core.translate.findings import measure
from core.translate.record import load_record
from dashboard.content import train as text
from dashboard.content import train_translate as tr
from tests.dashboard.harness import (
    assert_no_crash,
    chart_specs,
    messages,
    n_charts,
    page_script,
    plotly_array,
)
from tests.deadline import APPTEST_DEADLINE

pytestmark = pytest.mark.usefixtures("fast_apptest")

TINY_LETTERS = "TrainSettings(width=16, context=16, probe_length=6, batch=8, record_every=5, warmup=5)"
TINY = "TranslateSettings(width=16, ffn=32, layers=1, batch=8, record_every=5, warmup=5, eval_pairs=20)"
PRELUDE = f"""
from core.train.trainer import TrainSettings
from core.translate.trainer import TranslateSettings
from dashboard.views.train import session as _session
_session.base_settings = lambda: {TINY_LETTERS}
_session.base_translate_settings = lambda: {TINY}
"""
SCRIPT = page_script("train", prelude=PRELUDE)


def open_page(**params: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.query_params.update(params)
    at.run()
    assert_no_crash(at, params)
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in at.markdown)


def spec(at: AppTest, title: str) -> dict:
    return next(s for s in chart_specs(at) if s["layout"]["title"]["text"] == title)


def open_url(at: AppTest) -> str:
    [button] = [b for b in at.get("link_button") if b.proto.label == tr.OPEN]
    return button.proto.url


@pytest.fixture(scope="module")
def shipped():
    record = load_record(TRANSLATOR_DIR)
    if record is None:
        pytest.skip("this copy holds no recorded translator")
    return record


def test_the_task_comes_from_the_link_and_from_the_picker(shipped):
    at = open_page()
    assert at.session_state["train_task"] == "letters" and at.title[0].value == text.TITLE
    assert "task" not in at.query_params  # the default is left out of the link
    at.radio(key="train_task").set_value("translate").run()
    assert at.title[0].value == tr.TITLE
    assert at.query_params.get("task") == "translate"
    assert spec(at, tr.CURVES_TITLE)
    linked = open_page(task="translate")
    assert linked.session_state["train_task"] == "translate" and linked.title[0].value == tr.TITLE
    assert [str(r.value) for r in linked.radio] == ["translate"]
    linked.radio(key="train_task").set_value("letters").run()
    assert linked.title[0].value == text.TITLE and "task" not in linked.query_params
    assert spec(linked, text.CURVES_TITLE)


def test_the_recorded_translator_states_what_its_record_says(shipped):
    at = open_page(task="translate")
    last = int(shipped.steps[-1])
    assert at.session_state["train_run"] == "recorded" and at.query_params.get("step") == str(last)
    assert n_charts(at) == 2  # the curves, the maps
    curves = spec(at, tr.CURVES_TITLE)
    layers, heads = shipped.alignment.shape[1:]
    assert len(curves["data"]) == 1 + layers * heads + 1  # the loss, every head, the exact match
    exact = next(t for t in curves["data"] if t["name"] == tr.EXACT)
    np.testing.assert_allclose(plotly_array(exact["y"]), shipped.exact_match)
    found = measure(shipped)
    layer, head, accuracy = found.best_head
    assert any(t["name"] == f"L{layer + 1} H{head + 1} ({tr.BEST})" for t in curves["data"])
    maps = spec(at, tr.MAPS_TITLE.format(step=last))
    assert len([t for t in maps["data"] if t["type"] == "heatmap"]) == layers * heads
    assert len(maps["layout"]["shapes"]) == layers * heads * len(shipped.links)  # gold, in every map
    assert f"<b>L{layer + 1} H{head + 1} · {accuracy:.0%} ★</b>" in {
        a["text"] for a in maps["layout"]["annotations"]
    }
    page = markdown(at)
    assert text.FINDINGS.format(step=last) in [str(h.value) for h in at.subheader]
    assert f"step **{found.right.step:,}**" in page and f"step **{found.aligned.step:,}**" in page
    first = "The translations came first" if found.order == "right first" else "The alignment came first"
    assert first in page and f"{found.gap:,} steps" in page
    assert f"**Layer {layer + 1}, head {head + 1}** aligns best" in page and f"**{accuracy:.0%}**" in page
    for lay, hd, _ in found.weak:
        assert f"L{lay + 1} H{hd + 1} (" in page
    assert open_url(at) == "explore?model=translator"


def test_the_step_control_replays_the_findings_up_to_the_step_shown(shipped):
    at = open_page(task="translate", step="300")
    index = int(np.argmin(np.abs(shipped.steps - 300)))
    assert at.session_state["train_tr_snap"] == index and at.query_params.get("step") == "300"
    assert spec(at, tr.MAPS_TITLE.format(step=300))
    assert text.FINDINGS.format(step=300) in [str(h.value) for h in at.subheader]
    found = measure(shipped, index)
    page = markdown(at)
    assert (
        f"**Layer {found.best_head[0] + 1}, head {found.best_head[1] + 1}** aligns best at step 300" in page
    )
    at.button(key="train_next").click().run()
    step = int(shipped.steps[index + 1])
    assert at.query_params.get("step") == str(step) and spec(at, tr.MAPS_TITLE.format(step=step))


def test_before_any_sentence_comes_out_right_the_findings_say_so(shipped):
    index = int(np.flatnonzero(shipped.exact_match > 0)[0]) - 1  # the last snapshot with none right
    step = int(shipped.steps[index])
    page = markdown(open_page(task="translate", step=str(step)))
    assert measure(shipped, index).right.best == 0 and tr.EXACT_NONE in page and "at most 0%" not in page


def test_without_a_recorded_translator_the_page_trains_your_own(monkeypatch, tmp_path):
    monkeypatch.setattr("core.translate.engine.TRANSLATOR_DIR", tmp_path)
    at = open_page(task="translate", run="recorded")
    assert all(g.key != "train_run" for g in at.get("button_group"))
    assert text.PRESS_START in messages(at)


def tick_until(at: AppTest, done, most: int = 60) -> None:
    for _ in range(most):
        if done():
            return
        at.run()
    assert done()


def test_an_own_run_trains_pauses_and_states_what_happened(shipped):
    at = open_page(task="translate", run="own", steps="1000", heads="2", seed="3")
    assert text.PRESS_START in messages(at)
    at.button(key="train_start").click().run()
    ss = at.session_state
    run = ss["train_tr_trainer"]
    assert ss["train_tr_running"] and "train_trainer" not in ss  # the translator's run, not the letters'
    assert (run.settings.heads, run.settings.steps, run.settings.seed, run.settings.width) == (2, 1000, 3, 16)
    tick_until(at, lambda: at.session_state["train_tr_trainer"].step >= 10)
    at.button(key="train_pause").click().run()
    paused = at.session_state["train_tr_trainer"]
    at.run()
    assert at.session_state["train_tr_trainer"].step == paused.step  # no training while paused
    assert text.FINDINGS_NOT_YET in [str(c.value) for c in at.caption]
    shown = int(paused.snapshots[-1].step)  # the findings: up to the last snapshot so far
    assert text.FINDINGS.format(step=shown) in [str(h.value) for h in at.subheader]
    assert f"aligns best at step {shown}" in markdown(at)
    at.button(key="train_start").click().run()
    assert at.session_state["train_tr_trainer"] is paused and paused.step > 0  # resumed, the same run
    at.button(key="train_reset").click().run()
    assert "train_tr_trainer" not in at.session_state and text.PRESS_START in messages(at)


def test_an_own_run_to_its_end_is_saved_and_opens_on_explore(shipped):
    at = open_page(task="translate", run="own", steps="50", heads="2")
    at.button(key="train_start").click().run()
    tick_until(at, lambda: at.session_state["train_tr_trainer"].done)
    at.run()
    assert not at.session_state["train_tr_running"]
    assert text.FINDINGS.format(step=50) in [str(h.value) for h in at.subheader]
    assert "aligns best at step 50" in markdown(at)
    url = open_url(at)
    assert url.startswith("explore?model=") and text.OPEN_CAPTION in [str(c.value) for c in at.caption]
    folder = unquote(url.removeprefix("explore?model="))
    run = at.session_state["train_tr_trainer"]
    explore = AppTest.from_string(page_script("explore"), default_timeout=APPTEST_DEADLINE)
    explore.query_params["model"] = folder
    explore.run()
    assert_no_crash(explore)
    assert explore.session_state["explore_model"] == folder and not explore.error, messages(explore)
    from core.translate.engine import TranslatorEngine  # this run's weights, as saved

    done = TranslatorEngine(folder).translate(explore.session_state["explore_text"])
    assert run.config.heads == 2 and done.cross.shape[1] == 2
    assert f"**Translation:** {' '.join(done.target_tokens[:-1])}".strip() in markdown(explore)


def test_each_task_keeps_its_own_run_and_switching_pauses_it(shipped):
    at = open_page(run="own", steps="1000")
    at.button(key="train_start").click().run()
    letters = at.session_state["train_trainer"]
    at.radio(key="train_task").set_value("translate").run()
    assert not at.session_state["train_running"]  # the letters run waits, paused
    at.button(key="train_start").click().run()
    assert at.session_state["train_tr_running"] and at.session_state["train_trainer"] is letters
    at.radio(key="train_task").set_value("letters").run()
    assert not at.session_state["train_tr_running"] and at.session_state["train_tr_trainer"] is not None
    assert at.button(key="train_start").proto.label == text.RESUME


@pytest.mark.parametrize(
    ("params", "name", "key", "value"),
    [
        ({"task": "xyz"}, "task", "train_task", "letters"),
        ({"task": "translate", "heads": "3"}, "heads", "train_tr_heads", 2),
        ({"task": "translate", "steps": "-5"}, "steps", "train_tr_steps", 50),
        ({"task": "translate", "lr": "abc"}, "lr", "train_tr_lr", 3e-3),
        ({"task": "translate", "seed": "1e99"}, "seed", "train_tr_seed", 0),
    ],
)
def test_a_tampered_link_value_gives_one_warning_and_a_working_page(shipped, params, name, key, value):
    at = open_page(**params)
    assert [w for w in at.warning if f"`{name}`" in str(w.value)] == list(at.warning), messages(at)
    assert len(at.warning) == 1
    assert at.session_state[key] == value
    assert n_charts(at) == (3 if name == "task" else 2)  # letters' recorded run: its ablation too


def test_tampered_values_together_and_the_hosted_caps(shipped, monkeypatch):
    at = open_page(task="translate", run="own", heads="3", steps="-5", lr="abc", seed="1e99")
    assert len(at.warning) == 4 and text.PRESS_START in messages(at)
    ss = at.session_state
    assert (ss["train_tr_heads"], ss["train_tr_steps"], ss["train_tr_lr"], ss["train_tr_seed"]) == (
        2,
        50,
        3e-3,
        0,
    )
    assert ss["train_heads"] == 4 and ss["train_steps"] == 600  # the letter task: its defaults
    monkeypatch.setenv("ATTENTION_EXPLORER_HOSTED", "1")
    hosted = open_page(task="translate", run="own", steps="99999", heads="8")
    assert hosted.session_state["train_tr_steps"] == 1500 and hosted.session_state["train_tr_heads"] == 4
    assert any("at most 1,500 steps" in str(c.value) for c in hosted.caption)


def test_the_translator_page_in_presenter_mode(shipped):
    at = AppTest.from_string(SCRIPT, default_timeout=APPTEST_DEADLINE)
    at.session_state["present"] = True
    at.query_params.update({"task": "translate"})
    at.run()
    assert_no_crash(at)
    assert not at.title and n_charts(at) == 2  # the charts first, no title
    assert any(
        str(m.value).startswith(f"**{text.FINDINGS.format(step=int(shipped.steps[-1]))}**")
        for m in at.markdown
    )
    assert Path(TRANSLATOR_DIR).is_dir()


@pytest.mark.parametrize(
    ("exact", "best", "opening"),
    [
        ([0.0, 0.3, 0.95], [0.2, 0.92, 0.95], "**The alignment came first:**"),
        ([0.0, 0.95, 1.0], [0.2, 0.6, 0.92], "**The translations came first:**"),
        ([0.0, 0.95, 1.0], [0.2, 0.95, 0.96], "**The alignment and the translations came together**"),
        ([0.0, 0.3, 0.4], [0.2, 0.92, 0.95], "A head (L2 H1) aligned 90%"),
        ([0.0, 0.3, 0.95], [0.2, 0.3, 0.4], "The translations reached 90% exact match"),
        ([0.0, 0.3, 0.4], [0.2, 0.3, 0.4], "Not yet:"),
    ],
)
def test_every_order_is_stated_in_words(exact, best, opening):
    from dashboard.views.train.translate import statements
    from tests.core.test_translate_findings import hand_record

    lines = statements(hand_record(loss=[4.0, 3.0, 1.0], exact=exact, best=best), 2)
    assert lines["order"].startswith(opening), lines["order"]
    assert all("{" not in line and "}" not in line for line in lines.values()), lines
    assert lines["loss"].startswith("The loss had halved by step **50**")
    weak = "No head aligns 50% of the words yet." if best[-1] < 0.5 else "Not aligning (under 50%): L1 H1"
    assert lines["weak"].startswith(weak), lines["weak"]
