"""core.text.clean_input: the one cleaning of user text, shared by the pages and the toy tokenizer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.lesson.toy import clean_text
from core.text import clean_input


def test_lone_surrogates_become_replacement_characters_and_text_is_capped():
    assert clean_input("a\ud800b\udfff") == ("a\ufffdb\ufffd", False)
    assert clean_input("abcdef", 4) == ("abcd", True)
    assert clean_input("abcd", 4) == ("abcd", False)
    assert clean_input(None) == ("", False)
    assert clean_input(12) == ("12", False)


@given(st.text(st.characters(exclude_categories=()), max_size=50), st.integers(0, 60))
def test_the_result_encodes_as_utf8_and_is_a_prefix_of_the_cleaned_text(text, most):
    kept, cut = clean_input(text, most)
    kept.encode("utf-8")
    full, _ = clean_input(text)
    assert full.startswith(kept) and len(kept) == min(len(full), most) and cut == (len(full) > most)


def test_the_toy_tokenizer_cleans_the_same_way_then_normalises():
    assert clean_text("e\u0301\ud800") == "\u00e9\ufffd"
