"""Decks: a lecture as a sequence of the product's views (model.py: the format; bar.py: presenting)."""
