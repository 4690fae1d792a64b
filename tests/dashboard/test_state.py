"""dashboard.state.PageLinks: one URL <-> session-state table for every page. A link is read once
per session, with a note for each value it could not use; the URL is written from session state
with defaults left out; widget state survives runs that do not draw the widgets."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from dashboard.state import PageLinks, UrlParam, choice_param, flag_param, int_param, text_param

    links = PageLinks(
        "demo",
        (
            text_param("text", "demo_text", "hello", 10),
            int_param("layer", "demo_layer", 0, 0, 5, keep_default=True),
            int_param("focus", "demo_focus", None, 0, 99),
            choice_param("view", "demo_view", "head", ("head", "lines")),
            flag_param("merge", "demo_merge"),
            flag_param("scale", "demo_scale", True, strict=True),
            UrlParam("n", "demo_n", 2, lambda raw: (len(raw), None), show=lambda n: "x" * n),
        ),
        keep=("demo_widget",),
    )
    for note in links.read_url():
        st.info(note)
    links.restore(defaults={"demo_other": 7})
    if st.session_state.get("draw_widget", True):
        st.text_input("w", key="demo_widget")
    st.session_state["demo_layer"] = st.session_state.get("set_layer", st.session_state["demo_layer"])
    links.write_url(**st.session_state.get("overrides", {}))
    links.save()


def _open(**params) -> AppTest:
    at = AppTest.from_function(_page)
    at.query_params.update(params)
    return at.run()


def test_a_link_is_read_into_session_state_with_notes_for_bad_values():
    at = _open(text="a<" + "b" * 20, layer="9", focus="3", view="bogus", merge="yes", scale="2", n="abc")
    assert not at.exception
    ss = at.session_state
    assert ss["demo_text"] == "a<" + "b" * 8  # capped (core.text.clean_input)
    assert (ss["demo_layer"], ss["demo_focus"], ss["demo_view"]) == (0, 3, "head")
    assert (ss["demo_merge"], ss["demo_scale"], ss["demo_n"]) == (False, True, 3)
    notes = " ".join(i.value for i in at.info)
    assert "`layer` value 9 is outside 0–5" in notes and "unknown `view`" in notes
    assert "unknown `scale`" in notes and "merge" not in notes  # strict flags only
    assert len(at.info) == 3


def test_the_url_is_written_from_session_state_without_defaults():
    at = _open(view="lines", merge="1", scale="0", focus="4")
    params = dict(at.query_params)
    assert params == {"layer": "0", "focus": "4", "view": "lines", "merge": "1", "scale": "0"}
    at.session_state["overrides"] = {"view": None, "text": "hi", "extra": "e"}
    at.run()
    assert at.query_params["text"] == "hi" and at.query_params["extra"] == "e"
    assert "view" not in at.query_params


def test_the_link_is_read_once_per_session():
    at = _open(layer="2")
    assert at.session_state["demo_layer"] == 2
    at.session_state["set_layer"] = 4
    at.run()
    assert at.session_state["demo_layer"] == 4 and at.query_params["layer"] == "4"
    assert not at.info


def test_widget_state_comes_back_after_a_run_without_the_widget():
    at = _open()
    at.text_input(key="demo_widget").set_value("kept").run()
    at.session_state["draw_widget"] = False
    at.run()
    at.session_state["draw_widget"] = True
    at.run()
    assert at.text_input(key="demo_widget").value == "kept"
    assert at.session_state["demo_other"] == 7
