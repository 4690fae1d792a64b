"""What every NumPy decoder shares (GPT-2, core/models/gpt2.py; the Llama family,
core/models/llama.py): the results of a forward pass and of a generation, and everything an engine
does around its forward pass: tokenize, run, unembed, rank the next tokens, generate with or
without the KV cache. An engine brings its own `forward` (token ids through its blocks), its
weights and its tokenizer; this class never looks inside a block.

Letters in shape comments: T new positions, S positions seen, D width, H heads, L blocks, V vocabulary.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.lesson.attention import softmax
from core.models.bert import TextError, check_text
from core.models.errors import ModelFilesError
from core.models.interventions import Patch, check_heads
from core.models.result import AttentionResult, result_from_encoding
from core.models.sampling import TOP_K_OFF, TOP_P_OFF, sampling_problem, warp

# the kept tokens a step records by default: all of a vocabulary would be 49,152 decoded strings a step
KEPT_LIMIT = 1000

__all__ = ["DecoderNumpy", "Forward", "Generation", "GenerationStep", "held_probs", "load_tokenizer"]


@dataclass(frozen=True)
class Forward:
    """What one forward pass over T new positions (after P cached ones) computed."""

    hidden_states: np.ndarray  # (L + 1, T, D): block inputs, then ln_f of the last block's output
    attentions: np.ndarray  # (L, H, T, S): each new position's weights over every position it sees
    cache: list[tuple[np.ndarray, np.ndarray]]  # per block, (key, value) (H, S, d_k): the next `past`
    steps: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)  # traced blocks' steps


@dataclass(frozen=True)
class GenerationStep:
    token: str  # the chosen token, decoded to text (" Paris", not "ĠParis")
    token_id: int
    top: list[tuple[str, float]]  # the most likely tokens at this step and their probabilities
    attentions: np.ndarray  # (L, H, S): the predicting position's weights over the S tokens so far
    # the distribution the token was drawn from (core/models/sampling.py), renormalised, most likely
    # first (its first `kept_limit` tokens); greedy: the token taken, probability 1
    kept: list[tuple[str, float]] = field(default_factory=list)
    n_kept: int = 1  # how many tokens the cut kept (top-k, top-p), all of them
    kept_mass: float = 1.0  # their share of the probability before the cut
    rank: int = 0  # the token's place in `top`'s order (0: the likeliest)
    prob: float = 1.0  # its probability in the distribution drawn from


@dataclass(frozen=True)
class Generation:
    prompt: list[str]  # the prompt's tokens, decoded one by one
    steps: list[GenerationStep]
    temperature: float | None  # None: greedy
    seed: int
    top_k: int = TOP_K_OFF  # 0: off
    top_p: float = TOP_P_OFF  # 1: off

    @property
    def generated(self) -> list[str]:
        return [step.token for step in self.steps]


def held_probs(x: np.ndarray, n_heads: int, n_past: int) -> np.ndarray:
    """The attentions (H, T, S) of a block whose heads were all held at given weighted sums (a
    patch): it attended to nothing, so NaN (x: the block's input (T, D) or (B, T, D))."""
    n_tokens = x.shape[-2]
    return np.full((*x.shape[:-2], n_heads, n_tokens, n_past + n_tokens), np.nan, np.float32)


def load_tokenizer(model_dir: Path, max_length: int):
    """A decoder's tokenizer (GPT-2's byte-level BPE, a Llama's tokenizer.json) as a
    `tokenizers.Tokenizer`: never pads, and truncates at max_length."""
    from tokenizers import Tokenizer
    from tokenizers.implementations import ByteLevelBPETokenizer

    try:
        if (model_dir / "tokenizer.json").is_file():
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        elif (model_dir / "vocab.json").is_file() and (model_dir / "merges.txt").is_file():
            tokenizer = ByteLevelBPETokenizer(str(model_dir / "vocab.json"), str(model_dir / "merges.txt"))
        else:
            raise ModelFilesError(f"no tokenizer.json (or vocab.json and merges.txt) in {model_dir}")
    except ModelFilesError:
        raise
    except Exception as err:  # the Rust side raises its own exception type
        raise ModelFilesError(f"cannot read the tokenizer in {model_dir}: {err}") from err
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


class DecoderNumpy:
    """A decoder in NumPy: run(text) -> AttentionResult, next_tokens, generate. A subclass sets name,
    tokenizer, n_layers, n_heads, max_tokens, vocab_size and `unembedding` (V, D), and defines
    forward(input_ids, *, past=None, trace_layers=(), ablate=(), patch=None) -> Forward."""

    engine = "numpy"

    def __init__(self) -> None:
        self._lock = threading.Lock()  # fast tokenizers are not thread-safe; Streamlit sessions are threads

    def check_ids(self, ids: np.ndarray, n_past: int) -> None:
        """ValueError unless ids (T,) are token ids that fit the context after n_past cached ones."""
        if ids.ndim != 1 or not 1 <= n_past + len(ids) <= self.max_tokens:
            raise ValueError(f"the context holds 1 to {self.max_tokens} tokens; got {n_past} + {ids.shape}")
        if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ValueError(f"input_ids must be integers that lie in [0, {self.vocab_size})")

    def hidden_states(self, input_ids, token_type_ids=None, *, ablate=(), patch=None) -> np.ndarray:
        """(L + 1, T, D) for token ids as they are (no tokenizer), the last after ln_f: leave-one-out
        drops ids. token_type_ids is accepted for the encoders' signature and must be all zeros."""
        if token_type_ids is not None and np.any(token_type_ids):
            raise ValueError("a decoder reads one text: it has no second segment")
        return self.forward(input_ids, ablate=ablate, patch=patch).hidden_states

    def final_normed(self, x: np.ndarray) -> np.ndarray:
        """The model's final norm on x (..., D), what the unembedding reads (each family its own)."""
        raise NotImplementedError

    def unembed(self, final_hidden: np.ndarray) -> np.ndarray:
        """The unembedding: (..., D) after the final norm -> (..., V) logits, h W_U^T (W_U is the
        token-embedding table itself where the model ties them, as GPT-2 and SmolLM2 do)."""
        return final_hidden @ self.unembedding.T

    def token_logits(self, final_hidden: np.ndarray, token_ids) -> np.ndarray:
        """(..., D) after the final norm -> (..., k): the logits of the tokens `token_ids` only, their
        rows of W_U (a difference of two log-probabilities needs no more: the normalizer cancels)."""
        return final_hidden @ self.unembedding[list(token_ids)].T

    def encode(self, text: str):
        """The `tokenizers.Encoding` of text, under the lock; TextError when nothing is left."""
        text = check_text(text, "the text")
        if self.tokenizer is None:
            raise ModelFilesError("this model was loaded without a tokenizer")
        with self._lock:
            try:
                encoding = self.tokenizer.encode(text)
            except Exception as err:  # the Rust tokenizer's own error type
                raise TextError(f"the tokenizer cannot encode this text: {err}") from err
        if not encoding.ids:
            raise TextError("the text has no tokens")
        return encoding

    def decode(self, token_id: int) -> str:
        """One token as text (" Paris" for "ĠParis"; a special token as itself: "<|endoftext|>")."""
        with self._lock:
            return self.tokenizer.decode([int(token_id)], skip_special_tokens=False)

    def run(self, text: str, *, ablate=(), patch=None) -> AttentionResult:
        """Tokenize, run, and return an AttentionResult (causal: exact zeros above the diagonal) with
        the last position's next-token logits. Text past the context is cut (truncated=True). ablate,
        patch: as forward's (core/models/interventions.py)."""
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        start = time.perf_counter()
        enc = self.encode(text)
        tokenized = time.perf_counter()
        out = self.forward(enc.ids, ablate=ablate, patch=patch)
        done = time.perf_counter()
        return result_from_encoding(
            enc,
            out.attentions,
            out.hidden_states,
            model=self.name,
            engine=self.engine,
            max_tokens=self.max_tokens,
            n_special=0,
            meta={
                "seconds": done - start,
                "tokenize_ms": 1e3 * (tokenized - start),
                "forward_ms": 1e3 * (done - tokenized),
                "ablated": sorted(ablate),
                "patched": Patch().summary() if patch is None else patch.summary(),
            },
            next_token_logits=self.unembed(out.hidden_states[-1, -1]),
        )

    def top_tokens(
        self, logits: np.ndarray, top: int = 5, temperature: float = 1.0
    ) -> list[tuple[str, float]]:
        """The `top` likeliest tokens under softmax(logits / temperature), most likely first."""
        probs = softmax(np.asarray(logits, dtype=np.float64) / temperature)
        best = np.argsort(-probs, kind="stable")[:top]
        return [(self.decode(i), float(probs[i])) for i in best]

    def next_tokens(self, text: str, top: int = 5) -> list[tuple[str, float]]:
        """The model's `top` likeliest next tokens after text, with their probabilities."""
        return self.top_tokens(self.run(text).next_token_logits, top)

    def generate(
        self,
        text: str,
        n_tokens: int,
        *,
        temperature: float | None = None,
        top_k: int = TOP_K_OFF,
        top_p: float = TOP_P_OFF,
        seed: int = 0,
        top: int = 5,
        kept_limit: int | None = KEPT_LIMIT,
        use_cache: bool = True,
    ) -> Generation:
        """Extend text by n_tokens, one at a time: greedy (temperature None) or drawn, with numpy's
        generator seeded by `seed`, from softmax(logits / temperature) cut by top-k then top-p and
        renormalised (core/models/sampling.py, transformers' order and arithmetic). Each step keeps its
        top tokens (under softmax(logits / temperature)), the distribution it drew from (`kept`, its
        first kept_limit tokens; None: all) and the predicting position's attention over every token
        so far. use_cache=False recomputes the whole context at each step (the cost page's
        comparison); the tokens are the same."""
        sampling = {"temperature": temperature, "top_k": top_k, "top_p": top_p}
        steps = list(
            self.generation_steps(
                text, n_tokens, **sampling, seed=seed, top=top, kept_limit=kept_limit, use_cache=use_cache
            )
        )
        prompt = [self.decode(i) for i in self.encode(text).ids]
        return Generation(prompt, steps, temperature, seed, top_k, top_p)

    def generation_steps(
        self,
        text: str,
        n_tokens: int,
        *,
        temperature: float | None = None,
        top_k: int = TOP_K_OFF,
        top_p: float = TOP_P_OFF,
        seed: int = 0,
        top: int = 5,
        kept_limit: int | None = KEPT_LIMIT,
        use_cache: bool = True,
    ) -> Iterator[GenerationStep]:
        """generate's steps, each given as soon as it is made (a page counts them as they come)."""
        if n_tokens < 1:
            raise ValueError(f"n_tokens must be 1 or more, got {n_tokens}")
        if (problem := sampling_problem(temperature, top_k, top_p)) is not None:
            raise ValueError(problem)
        ids = list(self.encode(text).ids)
        if len(ids) + n_tokens - 1 > self.max_tokens:
            raise ValueError(
                f"the prompt has {len(ids)} tokens; with {n_tokens} more the context would pass "
                f"{self.max_tokens}: shorten it or generate at most {self.max_tokens - len(ids) + 1}"
            )
        rng = np.random.default_rng(seed)
        out = self.forward(ids)
        for n in range(n_tokens):
            logits = self.unembed(out.hidden_states[-1, -1]).astype(np.float64)  # (V,)
            warped = warp(logits, temperature, top_k, top_p)
            chosen = warped.draw(rng)
            row = out.attentions[:, :, -1, :]  # (L, H, S): what the predicting position looked at
            yield self._step(warped, chosen, row, top, kept_limit)
            ids.append(chosen)
            if n + 1 < n_tokens:
                out = self.forward([chosen], past=out.cache) if use_cache else self.forward(ids)

    def _step(self, warped, chosen: int, row: np.ndarray, top: int, kept_limit: int | None) -> GenerationStep:
        """One step's record: the token, the top tokens before the cut, the kept ones after it."""
        kept = warped.order[: warped.n_kept if kept_limit is None else min(warped.n_kept, kept_limit)]
        return GenerationStep(
            self.decode(chosen),
            chosen,
            [(self.decode(i), float(warped.before[i])) for i in warped.order[:top]],
            row,
            [(self.decode(i), float(warped.after[i])) for i in kept],
            warped.n_kept,
            warped.kept_mass,
            int(np.flatnonzero(warped.order == chosen)[0]),
            float(warped.after[chosen]),
        )
