"""The explore page's generate view: the text grows one token at a time (the engine's generation, with
its KV cache, taken a step at a time so a progress bar counts the tokens as they come), and a step
control walks through it: at each step the token taken, the distribution it was drawn from (what
top-k and top-p kept and cut: sampling.py), and that step's attention from the predicting position
over every token so far (one row per head of the chosen layer).

State (in the link, see links.py): tokens (1–50), temperature (absent: greedy), top_k and top_p
(sampling.py: 0 and 1 are off), seed, and the step shown. Generation always runs on the NumPy
engine; a new generation counts as one new text in hosted mode. Letters: L layers, H heads, S tokens
so far.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import streamlit as st

from core.models.decoder import Generation, GenerationStep
from core.models.result import AttentionResult
from dashboard import long_work
from dashboard.charts.decoder import shown_token, step_attention
from dashboard.content import decoder as text
from dashboard.engines import load_engine
from dashboard.hosted import TOO_MANY_TEXTS, Limits, TooManyTexts, count_new_text
from dashboard.presenter import presenting, prev_next_ui
from dashboard.views.explore import sampling
from dashboard.views.explore.results import shown_source
from dashboard.widgets import chart, chart_filename, md

MAX_TOKENS = 50
DEFAULT_TOKENS = 10
TEMPERATURES = (0.1, 2.0)  # the slider's range; a link's value outside becomes the nearest end
TOKENS_KEY, TEMPERATURE_KEY, SEED_KEY = "explore_gen_tokens", "explore_gen_temperature", "explore_gen_seed"
STEP_KEY = "explore_gen_step"
# The layer shown is the page's layer (explore_layer, the link's `layer`); a session opened on this
# view by a link without a layer starts on the last layer (links.init_state sets this flag)
LAST_LAYER_KEY = "explore_gen_last_layer"
SHOWN_CHARS = 240  # of the text before the step's token, on a projector: the end of it


KEPT = 4  # generations kept for every session (long_work.shelf; their arrays are small: S ≤ 1024)
TOP = sampling.CANDIDATES  # the tokens each step shows, before and after the cut
SAMPLING_OFF = (sampling.TOP_K_OFF, sampling.TOP_P_OFF)  # (top_k, top_p)


def generation_steps(
    engine,
    prompt: str,
    n_tokens: int,
    temperature: float | None,
    seed: int,
    top_k: int = sampling.TOP_K_OFF,
    top_p: float = sampling.TOP_P_OFF,
) -> Iterator[GenerationStep]:
    """The engine's generation (DecoderNumpy.generate), one step at a time so the page can count them."""
    cut = {"top_k": top_k, "top_p": top_p, "top": TOP, "kept_limit": TOP}
    return engine.generation_steps(prompt, n_tokens, temperature=temperature, seed=seed, **cut)


def generation_work(model_key: str, engine, n_prompt: int, n_tokens: int) -> long_work.Work:
    """A generation as long_work estimates it: n_tokens passes (the first over the prompt, the others
    over one new token each, on the cache) and a next-token distribution after each."""
    layers, width, vocab = long_work.model_shape(engine)
    positions = math.ceil((n_prompt + n_tokens - 1) / n_tokens)  # the positions read, per pass
    return long_work.Work("generate", model_key, n_tokens, positions, layers, width, vocab, outputs=1)


def generation_of(
    model_key: str,
    prompt: str,
    n_tokens: int,
    temperature: float | None,
    seed: int,
    top_k: int = sampling.TOP_K_OFF,
    top_p: float = sampling.TOP_P_OFF,
    work: long_work.Work | None = None,
) -> Generation:
    """The NumPy engine's generation, made now with a bar that counts the tokens (and times `work`),
    and kept for every session (long_work.shelf)."""
    engine = load_engine(model_key, "numpy")
    steps = []
    with long_work.counting(work, text.GEN_PROGRESS) as progress:
        for step in generation_steps(engine, prompt, n_tokens, temperature, seed, top_k, top_p):
            steps.append(step)
            progress(len(steps), n_tokens)
    prompt_tokens = [engine.decode(i) for i in engine.encode(prompt).ids]
    found = Generation(prompt_tokens, steps, temperature, seed, top_k, top_p)
    long_work.shelf("generate", KEPT).put(
        (model_key, prompt, n_tokens, temperature, seed, top_k, top_p), found
    )
    return found


def fitting_tokens(n_prompt: int, asked: int, context: int) -> int:
    """The most tokens that fit after an n_prompt-token prompt: the last one generated is predicted
    at position n_prompt + n - 2, which must stay inside the context."""
    return max(1, min(asked, context - n_prompt + 1))


def _options_ui() -> tuple[int, float | None, int]:
    """Tokens, and sampling (temperature, seed) when asked for; returns (n, temperature or None, seed).
    Top-k and top-p come after (sampling.cut_ui), on a row of their own."""
    ss = st.session_state
    cols = st.columns([2, 1, 1, 1])
    with cols[0]:
        n = st.slider(text.GEN_TOKENS_LABEL.format(most=MAX_TOKENS), 1, MAX_TOKENS, key=TOKENS_KEY)
    with cols[1]:
        sample = st.toggle(
            text.GEN_SAMPLE_LABEL, value=ss.get(TEMPERATURE_KEY) is not None, help=text.GEN_SAMPLE_HELP
        )
    if not sample:
        ss[TEMPERATURE_KEY] = None
        return n, None, int(ss.get(SEED_KEY, 0))
    if ss.get(TEMPERATURE_KEY) is None:
        ss[TEMPERATURE_KEY] = 1.0
    with cols[2]:
        temperature = st.slider(
            text.GEN_TEMPERATURE_LABEL,
            *TEMPERATURES,
            step=0.1,
            key=TEMPERATURE_KEY,
            help=text.GEN_TEMPERATURE_HELP,
        )
    with cols[3]:
        seed = st.number_input(text.GEN_SEED_LABEL, 0, 2**31 - 1, step=1, key=SEED_KEY)
    return n, float(temperature), int(seed)


def step_ui(n: int) -> int:
    """The step slider, with Previous / Next buttons on ← / PageUp and → / PageDown (a clicker)."""
    ss = st.session_state
    ss[STEP_KEY] = min(max(int(ss.get(STEP_KEY, 1)), 1), n)
    with st.container(horizontal=True, vertical_alignment="bottom"):
        prev_next_ui("explore_gen", (text.GEN_PREV, text.GEN_NEXT), STEP_KEY, 1, n)
        if n > 1:
            st.slider(text.GEN_STEP_LABEL, 1, n, key=STEP_KEY)
    return int(ss[STEP_KEY])


def _generate(limits: Limits, n: int, settings: tuple, seed: int, engine, n_prompt: int):
    """The generation for the shown text (cut to what fits, with a note), or None with the reason;
    when it would take long here, only after its button (long_work.may_start). settings:
    (temperature or None, top_k, top_p)."""
    model_key, _engine, sentence, _most = shown_source()
    kept = fitting_tokens(n_prompt, n, engine.max_tokens)
    if kept < n:
        st.info(text.GEN_CUT.format(prompt=n_prompt, context=engine.max_tokens, asked=n, kept=kept))
    temperature, top_k, top_p = settings
    key = (model_key, sentence, kept, temperature, seed, top_k, top_p)
    try:
        if (found := long_work.shelf("generate", KEPT).get(key)) is not None:
            return found
        work = generation_work(model_key, engine, n_prompt, kept)
        what, button = text.GEN_ASK_WHAT.format(n=kept), text.GEN_BUTTON.format(n=kept)
        if not long_work.may_start(work, key, what, button):
            return None
        count_new_text("generate", key, limits.max_texts_per_minute)
        return generation_of(*key, work=work)
    except TooManyTexts:
        st.warning(TOO_MANY_TEXTS.format(limit=limits.max_texts_per_minute))
    except ValueError as err:  # the engine's own checks (a prompt it cannot read)
        st.info(md(str(err)))
    return None


def _step_text(found: Generation, k: int) -> str:
    """The text up to the step's token, with that token in bold (all of it escaped)."""
    before = "".join(found.prompt) + "".join(found.generated[: k - 1])
    if presenting() and len(before) > SHOWN_CHARS:
        before = "…" + before[-SHOWN_CHARS:]
    token = found.steps[k - 1].token
    word = token.lstrip()  # bold around the word: "** cat**" would not be bold in Markdown
    space = token[: len(token) - len(word)]
    shown = md(word) if word else shown_token(token)
    return text.GEN_TEXT.format(step=k, n=len(found.steps), before=md(before), space=space, token=shown)


def _on_layer(key: str) -> None:
    st.session_state["explore_layer"] = int(st.session_state[key])


def _layer_ui(n_layers: int) -> int:
    """The layer (shown from 1), bound to explore_layer: the link's `layer`, shared with the head view."""
    ss = st.session_state
    if ss.pop(LAST_LAYER_KEY, False):
        ss["explore_layer"] = n_layers - 1
    key = f"explore_w_gen_layer_{n_layers}"
    ss[key] = min(max(int(ss.get("explore_layer", n_layers - 1)), 0), n_layers - 1)  # follows the layer
    return st.select_slider(
        text.GEN_LAYER_LABEL.format(n=n_layers),
        options=list(range(n_layers)),
        format_func=lambda i: str(i + 1),
        key=key,
        on_change=_on_layer,
        args=(key,),
    )


def generate_view(result: AttentionResult, limits: Limits, controls=None) -> None:
    """Options (in the controls panel), the step control, then the step: its text, the tokens the
    model weighed, and its attention per head of the chosen layer."""
    ss = st.session_state
    engine = load_engine(shown_source()[0], "numpy")
    with controls or st.container():
        n, temperature, seed = _options_ui()
        cut = SAMPLING_OFF if temperature is None else sampling.cut_ui()  # greedy: nothing to cut
        layer = _layer_ui(result.n_layers)
    ss["explore_layer"] = layer  # the link says the layer shown
    n_prompt = len(engine.encode(shown_source()[2]).ids)
    settings = (temperature, *cut)
    found = _generate(limits, n, settings, seed, engine, n_prompt)
    if found is None:
        return
    k = step_ui(len(found.steps))
    step = found.steps[k - 1]
    st.markdown(_step_text(found, k))
    said = sampling.sentence(step, settings, engine.unembedding.shape[0])  # what the cut did here
    st.markdown(said)
    big = presenting()
    left, right = st.columns([5, 6])  # the left: 20 bars and their printed values
    with left:
        sampling.distribution_ui(step, k, settings, said, big)
    with right:
        so_far = found.prompt + found.generated[: k - 1]
        fig = step_attention(
            step.attentions[layer],
            so_far,
            title=text.GEN_ATTENTION_TITLE.format(step=k, layer=layer + 1),
            x_title=text.GEN_ATTENTION_X,
            y_title=text.GEN_ATTENTION_Y,
            font=20 if big else 13,
            height=560 if big else None,
        )
        chart(
            fig,
            "explore_gen_attention",
            chart_filename("explore", "generate", f"step{k}", f"layer{layer + 1}"),
        )
    mode = (
        text.GEN_GREEDY
        if temperature is None
        else text.GEN_SAMPLED.format(temperature=temperature, seed=seed)
    )
    st.caption(text.GEN_HOW.format(mode=mode, cached=len(so_far) - 1))
    if result.engine != "numpy":
        st.caption(text.GEN_NUMPY)
