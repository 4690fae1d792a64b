"""Entry point: `streamlit run dashboard/app.py`. Sets up navigation and the shared sidebar."""

from __future__ import annotations

import sys
from pathlib import Path

# `streamlit run dashboard/app.py` puts dashboard/ on sys.path, not the repository root.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Imported whole before any page runs. Plotly's figure validators look for pandas in sys.modules
# without importing it; while one session's thread is still importing pandas (st.dataframe's first
# use), another session's thread building a figure finds the half-made module and fails
# ("partially initialized module 'pandas'"): the classroom load test (bench/classroom.py) hit this.
# Every run passes here, so a second session waits for the first's import to finish.
import pandas  # noqa: E402, F401
import streamlit as st  # noqa: E402

from dashboard import chart_access, chart_hover, clicker, presenter, screen  # noqa: E402
from dashboard.decks import bar as deck_bar  # noqa: E402
from dashboard.page_style import page_style_ui  # noqa: E402
from dashboard.widgets import image_format_ui  # noqa: E402

# a link with present=1 opens with the sidebar (the controls) folded away, the chart first. The tab
# icon ships with the app (sent inline, as a data URL): a Material icon is fetched from Google's font
# server, which an offline classroom cannot reach.
st.set_page_config(
    page_title="Attention Explorer",
    page_icon=ROOT / "dashboard" / "assets" / "icon.svg",
    layout="wide",
    initial_sidebar_state="collapsed" if presenter.link_asks_to_present() else "auto",
)


# Each page is imported on first use: a link to one page does not wait for the others' modules
# (about 0.1 s each on a server's first run).
def learn_page() -> None:
    from dashboard.views import learn

    learn.render()


LEARN_TITLE, LEARN_ICON = "Learn: attention from scratch", ":material/calculate:"
# Streamlit serves its default page only at "/", so /learn gets a hidden twin of the same page:
# the root opens the learn page directly (no redirect, no extra run) and /learn links still work.
LEARN = st.Page(learn_page, title=LEARN_TITLE, icon=LEARN_ICON, url_path="home", default=True)
LEARN_LINK = st.Page(learn_page, title=LEARN_TITLE, icon=LEARN_ICON, url_path="learn", visibility="hidden")


def explore_page() -> None:
    from dashboard.views import explore

    explore.render()


EXPLORE = st.Page(
    explore_page, title="Explore: a pretrained model", icon=":material/biotech:", url_path="explore"
)


def compare_page() -> None:
    from dashboard.views import compare

    compare.render()


def atlas_page() -> None:
    from dashboard.views import atlas

    atlas.render()


def cost_page() -> None:
    from dashboard.views import cost

    cost.render()


COMPARE = st.Page(compare_page, title="Compare two sentences", icon=":material/compare:", url_path="compare")
ATLAS = st.Page(atlas_page, title="Head atlas: what heads do", icon=":material/grid_view:", url_path="atlas")

COST = st.Page(cost_page, title="What attention costs", icon=":material/speed:", url_path="cost")


def train_page() -> None:
    from dashboard.views import train

    train.render()


TRAIN = st.Page(
    train_page, title="Watch heads form: train a model", icon=":material/model_training:", url_path="train"
)


def deck_page() -> None:
    from dashboard.views import deck

    deck.render(SLIDE_PAGES)


def circuit_page() -> None:
    from dashboard.views import circuit

    circuit.render()


CIRCUIT = st.Page(
    circuit_page, title="Heads that work together: a circuit", icon=":material/hub:", url_path="circuit"
)


DECK = st.Page(
    deck_page, title="My deck: a lecture in one link", icon=":material/slideshow:", url_path="deck"
)
# every page a deck's slide may show, by the name slides give it (dashboard/decks/)
SLIDE_PAGES = {
    "learn": LEARN_LINK,
    "explore": EXPLORE,
    "compare": COMPARE,
    "atlas": ATLAS,
    "cost": COST,
    "train": TRAIN,
    "circuit": CIRCUIT,
}

page = st.navigation([LEARN, LEARN_LINK, EXPLORE, COMPARE, ATLAS, COST, TRAIN, CIRCUIT, DECK])
shown = "learn" if page.url_path in ("", "home") else page.url_path
page_style_ui()  # focus rings, contrast, the phone layout, charts' text (dashboard/styles/)
keys = clicker.slot()  # → / PageDown and ← / PageUp, for whichever stepper binds them in this run
deck_bar.deck_ui(SLIDE_PAGES)  # a deck's bar above the page, or a move to its slide's page
with st.sidebar:
    screen.screen_ui()  # the window's width class (phone, tablet, wide): charts are fitted to it
    presenter.presenter_toggle_ui()
    deck_bar.add_view_ui(shown if shown in SLIDE_PAGES else None, page.title)
    image_format_ui()
    st.caption(
        "Attention Explorer computes attention step by step in NumPy and shows the heads of real "
        "models: BERT encoders, GPT-2 and Llama decoders. Layers and heads are numbered from 1 on screen."
    )
page.run()
clicker.keys_ui(keys)
chart_hover.isolate_ui()  # the lines view: a word's lines alone while it is pointed at or focused
chart_access.marks_ui()  # every chart's Plotly SVG hidden from screen readers (its name says it)
