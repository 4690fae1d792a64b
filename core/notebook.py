"""The explore page's figures in a notebook (Jupyter, VS Code, Colab): the head, model and lines views
drawn from any attention, the product's or transformers'.

    from core.notebook import head_view, lines_view, model_view, show

    show("The cat sat on the mat because it was tired.")           # the bundled BERT, layer 0, head 0
    show("The cat sat on the mat.", model="letters", view="lines")  # the letter GPT-2

    outputs = model(**inputs, output_attentions=True)               # transformers
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
    head_view(outputs.attentions, tokens, layer=2, head=5)

Each function returns the plotly.graph_objects.Figure the explore page draws, built by the page's own
builders (dashboard/charts/: explore.py, thumbnails.py, lines.py); a notebook renders a figure left as
a cell's last value. Layers and heads are 0-indexed, as everywhere in code; the figures show them from
1, as the page does. docs/notebook.md says how to start.

This module is the bridge between the computation and the figures (tests/test_house.py exempts it
from core's no-plotly rule): it imports the builders inside its functions, so that `import core`
stays free of plotly, and never imports streamlit. torch is never imported either: a tensor is read
through its own methods.

Letters: L layers, H heads, T tokens, W shown tokens (after merging pieces or hiding specials).
Attention is [layer, head, query, key]: rows = the token that attends ("from"), columns = the token
attended to ("to").
"""

from __future__ import annotations

import html
import operator
from collections.abc import Sequence

import numpy as np

from core.measures.analysis import TokenView, head_stats, token_view
from core.measures.claims import may_claim
from core.models.result import AttentionResult

__all__ = ["VIEWS", "attention", "attention_array", "head_view", "lines_view", "model_view", "show"]

VIEWS = ("head", "model", "lines")
# As the explore page's lines view (dashboard/views/explore/views.py): above this many tokens only
# each token's strongest lines are drawn, or the figure is a grey tangle.
LINES_FULL_LIMIT = 64
LINES_TOP_K = 3
_TOKENS_HINT = (
    "one string per position, special tokens included: with transformers, "
    'tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])'
)


# ---- attentions in, as [L, H, T, T] ----------------------------------------------------------------


def _as_numpy(value) -> np.ndarray:
    """A NumPy array of a tensor (torch: detached, on the CPU, as float32, which also reads bfloat16),
    an array or nested lists."""
    if hasattr(value, "detach") and hasattr(value, "cpu") and hasattr(value, "float"):
        value = value.detach().cpu().float().numpy()  # a torch tensor, read without importing torch
    try:
        return np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise ValueError(f"attentions must be numbers shaped [layers][heads][T][T]: {err}") from None


def _layer_of(item, index: int) -> np.ndarray:
    """One layer of transformers' tuple: (1, H, T, T) (a batch of one) or (H, T, T)."""
    layer = _as_numpy(item)
    if layer.ndim == 4 and layer.shape[0] != 1:
        raise ValueError(
            f"layer {index}'s attention holds a batch of {layer.shape[0]} inputs; pass one: "
            "tuple(a[i : i + 1] for a in outputs.attentions)"
        )
    if layer.ndim not in (3, 4):
        raise ValueError(
            f"layer {index}'s attention has shape {layer.shape}; expected (1, H, T, T) or (H, T, T)"
        )
    return layer[0] if layer.ndim == 4 else layer


def attention_array(attentions) -> np.ndarray:
    """float32 (L, H, T, T) from transformers' `outputs.attentions` (a tuple of L (1, H, T, T) tensors),
    a NumPy array (L, H, T, T) (or (L, 1, H, T, T), the tuple stacked), nested lists
    [L][H][T][T], or an AttentionResult. ValueError saying what is wrong otherwise."""
    if isinstance(attentions, AttentionResult):
        return attentions.attentions
    if isinstance(attentions, tuple | list) and attentions and hasattr(attentions[0], "shape"):
        shapes = [_layer_of(item, i) for i, item in enumerate(attentions)]
        if len({s.shape for s in shapes}) > 1:
            raise ValueError(f"the layers' attentions differ in shape: {sorted({s.shape for s in shapes})}")
        array = np.stack(shapes)
    else:
        array = _as_numpy(attentions)
    if array.ndim == 5 and array.shape[1] == 1:
        array = array[:, 0]  # torch.stack(outputs.attentions): (L, 1, H, T, T)
    if array.ndim != 4:
        raise ValueError(
            f"attentions have shape {array.shape}; expected [layers][heads][T][T] (4 dimensions), "
            "or transformers' outputs.attentions (a tuple of (1, H, T, T) tensors)"
        )
    if array.shape[2] != array.shape[3]:
        raise ValueError(
            f"attention maps are {array.shape[2]} × {array.shape[3]}: these views draw self-attention, "
            "one square map (T × T) per head"
        )
    if 0 in array.shape:
        raise ValueError(f"attentions have shape {array.shape}: nothing to draw")
    return array


def _check_index(name: str, value, count: int) -> int:
    """`value` as an index in 0..count-1, or an error that says the range (0-indexed)."""
    try:
        index = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be a whole number, got {value!r}") from None
    if not 0 <= index < count:
        raise IndexError(
            f"{name} {index} is out of range: this model has {count} {name}s, numbered 0 to {count - 1} "
            f"(0-indexed; the figures show {name} 1 to {count})"
        )
    return index


def _prepared(
    attentions, tokens, merge: bool, hide_special: bool, labelled: bool = True
) -> tuple[np.ndarray, TokenView, AttentionResult | None]:
    """(attention (L, H, T, T), how the tokens are shown, the AttentionResult or None). labelled=False:
    a figure that draws no token, which needs none."""
    result = attentions if isinstance(attentions, AttentionResult) else None
    array = attention_array(attentions)
    t = array.shape[-1]
    if tokens is None and result is None and not labelled:
        tokens = [""] * t
    if tokens is None:
        if result is None:
            raise ValueError(f"tokens are needed with these attentions: {t} of them, {_TOKENS_HINT}")
        tokens = result.tokens
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a list of strings, not one string: {_TOKENS_HINT}")
    tokens = [str(token) for token in tokens]
    if len(tokens) != t:
        raise ValueError(f"{len(tokens)} tokens for attention over {t} positions: give {_TOKENS_HINT}")
    if result is None and (merge or hide_special):
        raise ValueError(
            "merge and hide_special need the product's AttentionResult (show() or attention()), "
            "which knows the words and the special tokens"
        )
    if result is not None:
        view = token_view(
            tokens, result.word_ids, result.special_mask, merge_words=merge, hide_special=hide_special
        )
    else:
        view = token_view(tokens, list(range(t)), np.zeros(t, dtype=bool))
    return array, view, result


def _titled(title: str, view: TokenView) -> str:
    """A chart title with what the token toggles changed, as the explore page writes it."""
    from dashboard.content import explore as text

    notes = [
        note for note, on in ((text.MERGED_NOTE, view.merged), (text.HIDDEN_NOTE, view.renormalised)) if on
    ]
    return " · ".join([title, *notes])


# ---- the three views -------------------------------------------------------------------------------


def head_view(
    attentions,
    tokens: Sequence[str] | None = None,
    layer: int = 0,
    head: int = 0,
    *,
    merge: bool = False,
    hide_special: bool = False,
    highlight: tuple[int, int] | None = None,
):
    """One head's map as a heatmap (the explore page's head view): z[i][j] is the weight token i (row,
    query, "from") gives token j (column, key, "to"). `layer`, `head`: 0-indexed. `tokens`: one per
    position (taken from an AttentionResult when omitted). merge / hide_special (an AttentionResult
    only): word pieces merged into words, special tokens hidden and rows renormalised, as the page's
    toggles. highlight=(row, column) outlines one cell."""
    from dashboard.charts.explore import head_heatmap

    array, view, _ = _prepared(attentions, tokens, merge, hide_special)
    layer = _check_index("layer", layer, array.shape[0])
    head = _check_index("head", head, array.shape[1])
    title = _titled(f"Layer {layer + 1}, head {head + 1}", view)
    return head_heatmap(view.matrix(array[layer, head]), view.labels, title=title, highlight=highlight)


def model_view(
    attentions,
    tokens: Sequence[str] | None = None,
    *,
    merge: bool = False,
    hide_special: bool = False,
    selected: tuple[int, int] | None = None,
):
    """Every layer's and head's map as a grid of thumbnails (the explore page's model view), rows =
    layers, columns = heads; hovering a thumbnail gives the head's shares (on the previous token, on
    itself, ...). `tokens` is only checked here (the thumbnails have no labels) and may be omitted.
    selected=(layer, head), 0-indexed: that thumbnail outlined."""
    from dashboard.charts.thumbnails import model_grid_figure, thumbnail_grid_png

    array, view, result = _prepared(attentions, tokens, merge, hide_special, labelled=False)
    n_layers, n_heads = array.shape[:2]
    if selected is not None:
        selected = (_check_index("layer", selected[0], n_layers), _check_index("head", selected[1], n_heads))
    png, cell, gap = thumbnail_grid_png(view.matrix(array))
    hover = _thumbnail_hover(array, result)
    return model_grid_figure(png, n_layers, n_heads, cell, gap, hover=hover, selected=selected)


def _thumbnail_hover(array: np.ndarray, result: AttentionResult | None) -> list[str]:
    """Each head's hover text, layer-major, in the page's words (dashboard/content/explore.py)."""
    from dashboard.content.explore import THUMBNAIL_HOVER, THUMBNAIL_NEXT, THUMBNAIL_SPECIAL

    t = array.shape[-1]
    special = np.zeros(t, dtype=bool) if result is None else np.asarray(result.special_mask, dtype=bool)
    stats = head_stats(array, special)
    pairs = [] if result is None else zip(result.tokens, special, strict=True)
    names = list(dict.fromkeys(token for token, is_special in pairs if is_special))  # [CLS], [SEP]
    specials = html.escape("/".join(names))  # the hover is HTML
    causal = result.decoder if result is not None else not np.triu(array, 1).any()
    next_share = may_claim("next_token_share", "decoder" if causal else "encoder")
    hover = THUMBNAIL_HOVER.replace("<br><i>click to open</i>", "")  # a notebook's grid opens nothing
    return [
        hover.format(
            layer=layer + 1,
            head=head + 1,
            special=THUMBNAIL_SPECIAL.format(specials=specials, share=stats["to_special"][layer, head])
            if specials
            else "",
            previous=stats["to_previous"][layer, head],
            self=stats["to_self"][layer, head],
            next=THUMBNAIL_NEXT.format(share=stats["to_next"][layer, head]) if next_share else "",
            entropy=stats["entropy"][layer, head],
        )
        for layer in range(array.shape[0])
        for head in range(array.shape[1])
    ]


def lines_view(
    attentions,
    tokens: Sequence[str] | None = None,
    layer: int = 0,
    *,
    heads: Sequence[int] | None = None,
    token: int | None = None,
    direction: str = "from",
    min_weight: float = 0.02,
    top_k: int | None = None,
    merge: bool = False,
    hide_special: bool = False,
):
    """One layer as lines (the explore page's lines view, bertviz's head view): queries left, keys
    right, a line per weight, its opacity the weight, a colour per head; the legend toggles heads.
    heads: those drawn at first (default all; the others wait in the legend). token (0-indexed, a
    shown token) with direction "from" | "to": only that token's lines. Lines lighter than
    `min_weight` are left out; top_k: only each token's k strongest (3 by default past 64 tokens)."""
    from dashboard.charts.lines import lines_figure

    array, view, _ = _prepared(attentions, tokens, merge, hide_special)
    layer = _check_index("layer", layer, array.shape[0])
    n_heads = array.shape[1]
    shown = None if heads is None else [_check_index("head", h, n_heads) for h in heads]
    if token is not None:
        token = _check_index("token", token, view.n_items)
    if direction not in ("from", "to"):
        raise ValueError(f'direction must be "from" (the token\'s own attention) or "to", got {direction!r}')
    if top_k is None and token is None and view.n_items > LINES_FULL_LIMIT:
        top_k = LINES_TOP_K
    which = "all heads" if shown is None or len(shown) == n_heads else _heads_text(shown)
    return lines_figure(
        view.matrix(array[layer]),
        view.labels,
        shown_heads=shown,
        token=token,
        direction=direction,
        min_weight=min_weight,
        top_k=top_k,
        title=_titled(f"Layer {layer + 1}, {which}", view),
    )


def _heads_text(heads: Sequence[int]) -> str:
    numbers = ", ".join(str(h + 1) for h in heads)
    return f"head {numbers}" if len(heads) == 1 else f"heads {numbers}"


# ---- the product's engines -------------------------------------------------------------------------

_ENGINES: dict[tuple[str, str], object] = {}  # (model, engine) -> loaded engine: a notebook reruns cells


def _engine(model: str, engine: str):
    """The loaded engine for (model, engine), once per kernel. ModelError says what is missing."""
    if engine not in ("numpy", "torch"):
        raise ValueError(f'engine must be "numpy" (from scratch) or "torch" (the reference), got {engine!r}')
    if (model, engine) not in _ENGINES:
        from core.models import architectures

        load = architectures.load_engine if engine == "numpy" else architectures.load_torch_engine
        _ENGINES[(model, engine)] = load(model)
    return _ENGINES[(model, engine)]


def attention(
    text: str, model: str = "bundled", engine: str = "numpy", pair: str | None = None
) -> AttentionResult:
    """The product's AttentionResult for `text`, as `python -m core attend` computes it: model
    "bundled" (the offline BERT), "letters" (the letter GPT-2), "smollm2", "translator" (its
    encoder), a Hub id or a folder; engine "numpy" or "torch". pair: a second sentence, joined as
    BERT reads a pair ([CLS] A [SEP] B [SEP]); a decoder or the translator reads one text."""
    from core.models.architectures import is_decoder
    from core.models.bert import check_text
    from core.translate.engine import is_translator

    check_text(text, "the text")
    if pair is not None:
        check_text(pair, "the pair's second text")
    if is_translator(model):
        if pair is not None:
            raise ValueError("pair joins two sentences as BERT does; the translator reads one sentence")
        from core.translate.cli import encoder_attention

        return encoder_attention(text, model, engine)
    loaded = _engine(model, engine)
    if is_decoder(loaded):
        if pair is not None:
            raise ValueError("pair joins two sentences as BERT does; a decoder reads one text")
        return loaded.run(text)
    return loaded.run(text, pair)


def show(
    text: str, model: str = "bundled", view: str = "head", *, engine: str = "numpy", pair=None, **options
):
    """Run the product's engine on `text` (attention()) and draw `view`: "head" (head_view), "model"
    (model_view) or "lines" (lines_view); `options` go to that function (layer, head, merge, ...)."""
    draw = {"head": head_view, "model": model_view, "lines": lines_view}
    if view not in draw:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    return draw[view](attention(text, model, engine, pair), **options)
