"""The deck page's own text (dashboard/views/deck/)."""

TITLE = "My deck: a lecture in one link"
INTRO = (
    "A deck walks a class through the product's views in order, one slide per view, each with its "
    "title and a few lines of your text above it. Present one and a clicker (or → and ←) moves "
    "between slides, across pages; every number is computed live, as on the page itself."
)
READY = "Ready-made lectures"
YOURS = "Your deck"
EMPTY = (
    "Your deck is empty. On any page, set up a view and press **Add this view to my deck** in the "
    "sidebar; or open a deck file below, or copy a ready-made lecture to adapt it."
)
KEPT = (
    "This page's link holds your deck: reload the page or bookmark it, and the deck is still there. "
    "Nothing is stored on the server."
)
SHARE = "Share: this link carries the whole deck (anyone who opens it presents it, from slide 1)"
TOO_LONG = (
    "This deck is too large for a link: {chars:,} characters, past {limit:,}. A reload would empty it: "
    "save it as a file."
)
OPENED = "Opened “{title}”: {n} slide{s}."
OPEN_LABEL = "Open a deck file (JSON, saved from this page)"
OPENED_FROM_LINK = "The deck you last presented from a link: “{title}”, {n} slides."
TITLE_LABEL = "Deck title"
SLIDE_TITLE_LABEL = "Slide title"
SLIDE_TEXT_LABEL = "Your text for this slide (a few lines, shown as plain text)"
