"""The IOI task (core/measures/ioi.py) on a tokenizer trained here on the task's sentences (tests/
tiny_ioi.py): single-token names, the prompts and their corruptions token by token, the seed, and a
typed sentence read into a prompt (parse_prompt), with its errors."""

from __future__ import annotations

import pytest

from core.measures.ioi import NAMES, TEMPLATES, ioi_prompts, parse_ioi, parse_prompt, single_token_names
from tests.tiny_ioi import ioi_tokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return ioi_tokenizer(tmp_path_factory.mktemp("ioi-tokenizer"))


def one_id(tokenizer, text: str) -> int:
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    assert len(ids) == 1, (text, ids)
    return ids[0]


def test_names_are_the_candidates_that_are_one_token_with_their_space(tokenizer):
    names = single_token_names(tokenizer)
    assert names and all(name.startswith(" ") for name in names)
    for name in names:
        one_id(tokenizer, name)
    dropped = [n for n in NAMES if f" {n}" not in names]
    assert dropped, "the tiny tokenizer knows only a few names: the others must be dropped"
    assert all(len(tokenizer.encode(f" {n}", add_special_tokens=False).ids) > 1 for n in dropped)
    assert single_token_names(tokenizer, limit=3) == names[:3]


def test_every_prompt_and_its_corruptions_line_up_token_by_token(tokenizer):
    prompts = ioi_prompts(tokenizer, 16, seed=3)
    assert len(prompts) == 16
    assert {p.order for p in prompts} == {"ABBA", "BABA"}
    assert {p.template for p in prompts} == set(range(len(TEMPLATES)))
    for p in prompts:
        clean, corrupt, swapped = list(p.item.clean), list(p.item.corrupt), list(p.swapped_ids)
        assert clean == tokenizer.encode(p.text).ids and corrupt == tokenizer.encode(p.corrupt).ids
        assert swapped == tokenizer.encode(p.swapped).ids
        assert len(clean) == len(corrupt) == len(swapped)
        at = p.positions
        assert p.item.answer == one_id(tokenizer, p.io) == clean[at["io"]]
        assert p.item.rival == one_id(tokenizer, p.s) == clean[at["s1"]] == clean[at["s2"]]
        assert (at["io"] < at["s1"]) == (p.order == "ABBA") and at["s2"] > max(at["io"], at["s1"])
        assert at["end"] == len(clean) - 1 and at["s1_next"] == at["s1"] + 1
        slots = [at["io"], at["s1"], at["s2"]]
        # ABC: three names, all different, none of them IO or S; the rest of the sentence unchanged
        abc = {corrupt[i] for i in slots}
        assert len(abc) == 3 and not abc & {p.item.answer, p.item.rival}
        assert [t for i, t in enumerate(corrupt) if i not in slots] == [
            t for i, t in enumerate(clean) if i not in slots
        ]
        # swapped subject: only S2 changes, to the IO
        assert [i for i in range(len(clean)) if clean[i] != swapped[i]] == [at["s2"]]
        assert swapped[at["s2"]] == p.item.answer
        assert p.text.endswith(" to")


def test_the_seed_decides_the_prompts(tokenizer):
    first, again, other = (ioi_prompts(tokenizer, 8, seed=s) for s in (0, 0, 1))
    assert [p.text for p in first] == [p.text for p in again]
    assert [p.corrupt for p in first] == [p.corrupt for p in again]
    assert [p.text for p in first] != [p.text for p in other]


def test_too_few_names_or_prompts_is_an_error(tokenizer):
    with pytest.raises(ValueError, match="needs 5"):
        ioi_prompts(tokenizer, 4, names=[" Mary", " John", " Alice", " Bob"])
    with pytest.raises(ValueError, match="at least one prompt"):
        ioi_prompts(tokenizer, 0)


def test_a_typed_sentence_is_read_into_a_prompt(tokenizer):
    text = "When Mary and John went to the store, John gave a drink to"
    item, io, s = parse_prompt(tokenizer, text)
    assert (io, s) == (" Mary", " John")
    assert (item.answer, item.rival) == (one_id(tokenizer, " Mary"), one_id(tokenizer, " John"))
    assert list(item.clean) == tokenizer.encode(text).ids
    changed = [i for i, (a, b) in enumerate(zip(item.clean, item.corrupt, strict=True)) if a != b]
    prompt = parse_ioi(tokenizer, text)
    assert changed == sorted(prompt.positions[k] for k in ("io", "s1", "s2"))
    assert len({item.corrupt[i] for i in changed}) == 3
    assert prompt.order == "ABBA" and prompt.swapped.endswith("store, Mary gave a drink to")
    # S first; "Then" is capitalised but begins the sentence: not a name
    baba = parse_ioi(tokenizer, "Then, John and Mary went to the park. John gave a book to")
    assert (baba.io, baba.s, baba.order) == (" Mary", " John", "BABA")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("The trophy would not fit in the suitcase", "two names"),
        ("When Mary went to the store, Mary gave a drink to", "two names"),
        ("When Mary and John and Alice went out, John gave a drink to", "two names"),
        ("When Mary and John went out, John and John gave a drink to", "exactly twice"),
        ("When John and John went out, Mary gave a drink to", "after the second"),
        ("   ", "type a sentence"),
    ],
)
def test_a_sentence_that_is_not_the_task_says_why(tokenizer, text, message):
    with pytest.raises(ValueError, match=message):
        parse_prompt(tokenizer, text)


@pytest.mark.slow
def test_smollm2s_tokenizer_holds_the_task():
    from core.models import smollm2

    if smollm2.packaged_gguf() is None:
        pytest.skip("SmolLM2 is not installed (make test installs it)")
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(smollm2.smollm2_model_dir() / "tokenizer.json"))
    assert len(single_token_names(tokenizer)) == 40
    prompts = ioi_prompts(tokenizer, 16, seed=0)
    assert all(len(p.item.clean) == len(p.item.corrupt) == len(p.swapped_ids) for p in prompts)
    # a name that begins the sentence has no leading space there; the answer is still " Mary"
    start = parse_ioi(tokenizer, "Mary and John went to the park. John gave a book to")
    assert (start.io, start.s, start.item.answer) == (" Mary", " John", one_id(tokenizer, " Mary"))
    assert start.item.clean[0] != start.item.answer and start.item.corrupt[0] != start.item.clean[0]
