"""AttentionResult: the one type every engine returns and every view reads.

Letters: L layers, H heads per layer, T tokens, D hidden width.
Attention arrays are [layer, head, query_pos, key_pos]: row = the token that attends ("from"),
column = the token attended to ("to").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.lesson.trace import LayerTrace

__all__ = ["AttentionResult", "compare_results", "result_from_encoding", "word_ids_of"]


@dataclass(frozen=True, eq=False)
class AttentionResult:
    tokens: list[str]  # T token strings as the tokenizer wrote them ("[CLS]", "##ing", ...)
    attentions: np.ndarray  # float32 (L, H, T, T); each row sums to 1
    hidden_states: np.ndarray  # float32 (L + 1, T, D): embeddings, then each layer's output
    special_mask: np.ndarray  # bool (T,): True for [CLS], [SEP] and other special tokens
    word_ids: list[int | None]  # T entries: index of the word a token belongs to; None for specials
    model: str  # model name or path, as the user chose it
    engine: str  # "numpy" or "torch"
    token_type_ids: np.ndarray | None = None  # int (T,): 0 for the first sentence, 1 for a pair's second
    truncated: bool = False  # True when the input was cut to the model's maximum length
    meta: dict = field(default_factory=dict)  # engine details worth showing (e.g. timings)
    traces: dict[int, LayerTrace] = field(default_factory=dict)  # layer (0-indexed) -> its steps, when asked
    input_ids: np.ndarray | None = None  # int (T,): the token ids the engine ran (leave-one-out drops them)
    next_token_logits: np.ndarray | None = (
        None  # float32 (V,): a decoder's scores for the token after the last
    )

    def __post_init__(self) -> None:
        att = self.attentions
        if att.ndim != 4 or att.shape[2] != att.shape[3]:
            raise ValueError(f"attentions must be (L, H, T, T), got {att.shape}")
        t = len(self.tokens)
        if att.shape[2] != t:
            raise ValueError(f"attentions cover {att.shape[2]} tokens but there are {t} tokens")
        if self.hidden_states.ndim != 3 or self.hidden_states.shape[:2] != (att.shape[0] + 1, t):
            raise ValueError(
                f"hidden_states must be (L + 1, T, D) = ({att.shape[0] + 1}, {t}, D), "
                f"got {self.hidden_states.shape}"
            )
        if len(self.special_mask) != t or len(self.word_ids) != t:
            raise ValueError("special_mask and word_ids need one entry per token")

    @property
    def n_layers(self) -> int:
        return self.attentions.shape[0]

    @property
    def n_heads(self) -> int:
        return self.attentions.shape[1]

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def decoder(self) -> bool:
        """True for a causal decoder's result: it carries the next-token logits."""
        return self.next_token_logits is not None


def word_ids_of(encoding) -> list[int | None]:
    """Word index per token of a `tokenizers` Encoding, None for special tokens. The tokenizer numbers
    a pair's second sentence from 0 again; continue the count instead, so a word index names one word
    of the whole input. Shared by both engines so their results agree token for token."""
    word_ids, sequence_ids = encoding.word_ids, encoding.sequence_ids
    first_words = [w for w, s in zip(word_ids, sequence_ids, strict=True) if s == 0 and w is not None]
    offset = max(first_words) + 1 if first_words else 0
    return [
        None if w is None or s is None else (w + offset if s == 1 else w)
        for w, s in zip(word_ids, sequence_ids, strict=True)
    ]


def result_from_encoding(
    encoding,
    attentions: np.ndarray,
    hidden_states: np.ndarray,
    *,
    model: str,
    engine: str,
    max_tokens: int,
    n_special: int,
    traces: dict[int, LayerTrace] | None = None,
    meta: dict | None = None,
    next_token_logits: np.ndarray | None = None,
) -> AttentionResult:
    """The AttentionResult of one input, assembled the same way by every engine.

    encoding: the `tokenizers` Encoding the engine ran (cut to max_tokens; what was cut off is in its
    `overflowing`); n_special: the special tokens the tokenizer adds to it ([CLS] and one or two
    [SEP]), so the cut-off pieces count only their own tokens. meta adds to the keys every engine
    reports (max_tokens, n_tokens_input)."""
    cut = sum(len(piece.ids) - n_special for piece in encoding.overflowing)
    return AttentionResult(
        tokens=list(encoding.tokens),
        attentions=attentions,
        hidden_states=hidden_states,
        special_mask=np.asarray(encoding.special_tokens_mask, dtype=bool),
        word_ids=word_ids_of(encoding),
        model=model,
        engine=engine,
        token_type_ids=np.asarray(encoding.type_ids, dtype=np.int64),
        truncated=bool(encoding.overflowing),
        meta={"max_tokens": max_tokens, "n_tokens_input": len(encoding.ids) + cut, **(meta or {})},
        traces=dict(traces or {}),
        input_ids=np.asarray(encoding.ids, dtype=np.int64),
        next_token_logits=next_token_logits,
    )


def compare_results(a: AttentionResult, b: AttentionResult) -> dict[str, float]:
    """Max absolute differences between two engines' results for the same text (the parity badge):
    {"attentions": ..., "hidden_states": ...}. ValueError when they tokenized differently."""
    if a.tokens != b.tokens:
        raise ValueError("the two results have different tokens; run both engines on the same text and model")
    if a.attentions.shape != b.attentions.shape or a.hidden_states.shape != b.hidden_states.shape:
        raise ValueError(
            f"the results have different shapes: {a.attentions.shape} and {b.attentions.shape}; same model?"
        )
    return {
        "attentions": float(np.abs(a.attentions - b.attentions).max()),
        "hidden_states": float(np.abs(a.hidden_states - b.hidden_states).max()),
    }
