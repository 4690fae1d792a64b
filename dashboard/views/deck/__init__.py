"""The deck page (/deck): the teacher's own deck, built from "Add this view to my deck" on every
page, reordered, retitled and annotated here, saved as a JSON file, opened from one, shared as a link
that carries the whole deck; and the ready-made lectures, to present or to copy and adapt.

The deck lives in session state (dashboard/decks/mine.py) and in this page's own link (`?mine=`,
in the share link's format), so a reload keeps it and nothing is stored on the server; its format and
checks are dashboard/decks/model.py; presenting is dashboard/decks/bar.py. User text is shown through
dashboard.widgets.md (escaped), never as HTML.
"""

from dashboard.views.deck.page import render

__all__ = ["render"]
