"""How a page's input reaches an engine (dashboard.engines.compute_attention): cut to this server's
token limit, and a sentence pair read the model's own way. BERT joins A and B itself, with segment
ids ([CLS] A [SEP] B [SEP]); a decoder has no segment ids, so it reads one text, A then B after a
space, and the result says where B starts (meta "pair_start")."""

from __future__ import annotations

from core.models.bert import TextError

DECODER_PAIR_JOIN = " "


def joined(text: str, pair: str) -> tuple[str, int]:
    """A decoder's pair as one text, and the character where sentence B starts in it."""
    first = text.rstrip() + DECODER_PAIR_JOIN
    return first + pair.strip(), len(first)


def first_token_after(engine_obj, text: str, start: int) -> int:
    """The first token of `text` that holds a character at or after `start` (sentence B's first
    token in a decoder's joined pair); the token count when the cap cut all of B."""
    encoding = engine_obj.encode(text)
    special = encoding.special_tokens_mask
    return next(
        (i for i, (_, end) in enumerate(encoding.offsets) if end > start and not special[i]),
        len(encoding.ids),
    )


def check_fits(engine_obj, text: str, pair: str, max_tokens: int) -> None:
    """TextError (a message for the page) when the two sentences together are longer than this
    server reads (hosted mode's cap below the model's own limit): a pair is not cut at a token, since
    cutting B would change which words cross."""
    encode = getattr(engine_obj, "encode", None)
    if encode is None or max_tokens >= getattr(engine_obj, "max_tokens", max_tokens):
        return  # the engine's own limit applies (it cuts the longer sentence first, and says so)
    encoding = encode(text, pair)
    n_tokens = len(encoding.ids) + sum(len(o.ids) for o in encoding.overflowing)
    if n_tokens > max_tokens:
        raise TextError(
            f"sentences A and B together are {n_tokens} tokens; this page reads at most {max_tokens}. "
            "Shorten one of them."
        )


def cap_tokens(engine, text: str, max_tokens: int) -> tuple[str, int | None]:
    """`text` cut after the token that fills `max_tokens` ([CLS] and [SEP] included) and the text's
    full token count; (text, None) when it fits or the engine cannot tokenize on its own."""
    encode = getattr(engine, "encode", None)
    if encode is None or max_tokens >= getattr(engine, "max_tokens", max_tokens):
        return text, None  # the engine's own limit applies
    enc = encode(text)
    n_special = sum(enc.special_tokens_mask)
    total = len(enc.ids) + sum(len(o.ids) - n_special for o in enc.overflowing)
    if total <= max_tokens:
        return text, None
    content = [i for i, special in enumerate(enc.special_tokens_mask) if not special]
    last = content[max(max_tokens - n_special, 1) - 1]
    return text[: enc.offsets[last][1]], total
