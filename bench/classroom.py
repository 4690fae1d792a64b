"""A classroom at once (issue 23 §1): many students on one hosted server, measured at the protocol
level, without browsers (`make stress`; `python -m bench --only classroom`).

Each client speaks Streamlit's own websocket protocol (`/_stcore/stream`, `BackMsg` out, `ForwardMsg`
in, from `streamlit.proto`) over the `websockets` client that streamlit installs (Streamlit 1.67
serves through starlette and uvicorn; tornado is gone). It opens pages by their URL path with a query
string, as a browser's first load does; it changes a widget as the browser does, sending the
widget's new value under the id the server gave it (found in the page's deltas by its key), and
counts a rerun as done when `script_finished` arrives.

A session's script, with a student's pause of 1-3 s before each click (and once without pauses, a
stress figure): open learn; change the step three times; open explore with a sentence of its
own (8-40 words from a word list, with words no other session uses); change the layer and the head
five times each; open compare with its own pair; open the atlas. N sessions (default 30) start
spread over the first 20 s, against a real `streamlit run` in hosted mode.

With SmolLM2 (`llm_rows`; alone: `python -m bench.classroom --llm`), each student also picks SmolLM2
for its own sentence and reads its next word, picks the teacher's example (`TEACHER_EXAMPLE`, the
same input for the whole room), compares its own pair on SmolLM2, then picks the teacher's preset
pair there (`TEACHER_PRESET`). The teacher's inputs and the students' own are reported apart: the
first are one computation shared by the room, the second thirty passes that queue for two cores
(`floor_row` states what that costs at best).

Reported per kind of interaction: p50, p95 and maximum server time (message sent to
`script_finished`); errors (an exception element, an error alert, or no `script_finished` within
60 s); leaks (a session that receives another session's own words); model loads (counted in the
server's log); the server's peak RSS (VmHWM).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import re
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.common import Row, format_table
from core.models.smollm2 import SMOLLM2_KEY
from dashboard.content.compare import PRESET_TITLES
from dashboard.content.explore import EXAMPLES, VIEWS
from dashboard.model_pick import model_label

TIMEOUT_S = 60.0
EARLY_FOR_RERUN = ForwardMsg.FINISHED_EARLY_FOR_RERUN
TEACHER_EXAMPLE = "trophy-large"  # the explore example the teacher gives (dashboard/content/explore.py)
TEACHER_PRESET = "trophy"  # compare's preset pair (dashboard/content/compare.py)
# the issue's targets (server time, p95): the teacher's inputs on SmolLM2, the students' own, the rest
TEACHER_KINDS = ("explore on SmolLM2: the teacher's example", "compare on SmolLM2: the teacher's preset")
OWN_LLM_KINDS = ("explore: pick SmolLM2, own sentence", "open compare, own pair")
TARGET_S = {**dict.fromkeys(TEACHER_KINDS, 3.0), **dict.fromkeys(OWN_LLM_KINDS, 15.0)}
OTHER_TARGET_S = 2.0
WORKERS = 2  # Streamlit Community Cloud's cores: dashboard/work_queue.py runs one model pass a core
RAMP_S = 20.0
THINK_S = (1.0, 3.0)  # a student's pause between two clicks, drawn uniformly (seconds)
# Plain words for the sentences, and rarer words (each used by one session only) to catch leaks:
# none of them may appear in the app's own text or in what it sends ("anchor" did: Plotly's axes
# have an "anchor" field).
COMMON = (
    "the a teacher student book table window garden river city morning evening quiet bright small "
    "large old new green blue walked read wrote opened closed found saw near under over with and "
    "because then later after before every some many few"
).split()
OWN_WORDS = (
    "zebra walrus mango lantern violin harbor cactus glacier parrot saddle orchid puzzle compass "
    "tulip falcon pepper canoe yogurt velvet meadow bamboo pigeon lizard oyster pumpkin hammock "
    "lobster kettle thistle beetle raven spruce marble coral ginger quartz badger donkey pretzel "
    "peacock cobalt saffron tundra gazelle jasmine pelican sardine mosaic trumpet wombat zeppelin "
    "acorn biscuit carousel dolphin emerald flamingo gondola hazelnut igloo jaguar kayak lemur"
).split()


@dataclass
class Measured:
    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    blind: list[str] = field(default_factory=list)  # sessions never shown their own words: no leak check
    timeout_s: float = TIMEOUT_S  # a rerun with no script_finished by then is an error


def own_words(n_sessions: int) -> list[tuple[str, str]]:
    """Two words of its own for each session (n_sessions <= len(OWN_WORDS) // 2)."""
    if 2 * n_sessions > len(OWN_WORDS):
        raise ValueError(f"at most {len(OWN_WORDS) // 2} sessions have words of their own")
    return [(OWN_WORDS[2 * i], OWN_WORDS[2 * i + 1]) for i in range(n_sessions)]


def sentence(rng: random.Random, words: tuple[str, str]) -> str:
    n = rng.randint(8, 40)
    body = [rng.choice(COMMON) for _ in range(n - 2)]
    body.insert(rng.randrange(len(body) + 1), words[0])
    body.insert(rng.randrange(len(body) + 1), words[1])
    return " ".join(body).capitalize() + "."


class Client:
    """One browser tab's websocket session, without the browser."""

    def __init__(self, url: str, mine: tuple[str, str], others: list[str], measured: Measured):
        self.url = url.replace("http://", "ws://") + "/_stcore/stream"
        self.mine, self.measured = mine, measured
        self.others = re.compile(r"\b(" + "|".join(others) + r")\b") if others else None
        self.own = re.compile(r"\b(" + "|".join(mine) + r")\b")
        self.saw_own = False  # the leak check's control: the session's own words do come back
        self.widgets: dict[str, object] = {}  # widget id -> its element proto, from the deltas
        self.page = ""
        self.query = ""  # the address bar's query string: the page rewrites it, a rerun sends it back
        self.ws = None

    async def __aenter__(self) -> Client:
        import websockets

        self.ws = await websockets.connect(self.url, subprotocols=["streamlit"], max_size=None)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()
        if not self.saw_own:
            self.measured.blind.append(f"a session with {self.mine} never received its own words")

    def widget_id(self, key_part: str) -> tuple[str, object]:
        """The id and proto of the widget drawn last run whose key contains `key_part`."""
        for wid, proto in reversed(list(self.widgets.items())):
            if key_part in wid:
                return wid, proto
        raise LookupError(f"no widget with key {key_part!r} on {self.page or 'home'}")

    async def rerun(self, kind: str, page: str | None = None, query: str = "", widget=None) -> None:
        """Open `page` (a URL path) with `query`, or rerun this page with `widget` (a WidgetState)
        changed, sending the current query string back as a browser does; time it to script_finished."""
        msg = BackMsg()
        state = msg.rerun_script
        if page is not None:
            self.page, self.query = page, query
            self.widgets = {}
        state.page_name = self.page
        state.query_string = self.query
        if widget is not None:
            state.widget_states.widgets.append(widget)
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        drawn: dict[str, object] = {}
        try:
            async with asyncio.timeout(self.measured.timeout_s):
                while True:
                    raw = await self.ws.recv()
                    self._check(kind, raw)
                    forward = ForwardMsg()
                    forward.ParseFromString(raw)
                    which = forward.WhichOneof("type")
                    if which == "delta" and forward.delta.WhichOneof("type") == "new_element":
                        self._element(kind, forward.delta.new_element, drawn)
                    elif which == "page_info_changed":
                        self.query = forward.page_info_changed.query_string
                    elif which == "script_finished" and forward.script_finished != EARLY_FOR_RERUN:
                        break  # a run the page ended for st.rerun is followed by the rerun: wait for it
        except TimeoutError:
            self.measured.errors.append(f"{kind}: no script_finished within {self.measured.timeout_s:.0f} s")
            return
        self.measured.seconds[kind].append(time.perf_counter() - start)
        self.widgets.update(drawn)

    def _check(self, kind: str, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace")
        self.saw_own = self.saw_own or bool(self.own.search(text))
        if self.others is not None and (found := self.others.search(text)):
            self.measured.leaks.append(f"{kind}: a session with {self.mine} received {found[0]!r}")

    def _element(self, kind: str, element, drawn: dict) -> None:
        which = element.WhichOneof("type")
        if which == "exception":
            self.measured.errors.append(f"{kind}: exception {element.exception.type}")
        elif which == "alert" and element.alert.format == element.alert.ERROR:
            self.measured.errors.append(f"{kind}: error {element.alert.body[:80]!r}")
        proto = getattr(element, which)
        wid = getattr(proto, "id", "")
        if wid:
            drawn[wid] = proto


def _strings(wid: str, values: list[str]):
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=wid)
    state.string_array_value.data.extend(values)
    return state


async def student(
    url: str,
    delay: float,
    mine,
    others,
    measured: Measured,
    seed: int,
    think_s: tuple[float, float],
    llm: bool = False,
) -> None:
    rng = random.Random(seed)
    await asyncio.sleep(delay)

    async def think() -> None:
        await asyncio.sleep(rng.uniform(*think_s))

    own, pair = sentence(rng, mine), sentence(rng, mine)
    from urllib.parse import urlencode

    try:
        async with Client(url, mine, others, measured) as client:
            await client.rerun("open learn", page="")
            for _ in range(3):
                await think()
                wid, proto = client.widget_id("learn_step_picker")
                options = [o.content for o in proto.options]
                await client.rerun("learn: change the step", widget=_strings(wid, [rng.choice(options)]))
            await think()
            await client.rerun("open explore, own sentence", page="explore", query=urlencode({"text": own}))
            for _ in range(5):
                for name in ("layer", "head"):
                    await think()
                    wid, proto = client.widget_id(f"explore_w_{name}_")
                    value = rng.choice(list(proto.options))
                    await client.rerun("explore: change layer or head", widget=_strings(wid, [value]))
            if llm:
                await explore_on_smollm2(client, think)
            await think()
            await client.rerun(
                "open compare, own pair", page="compare", query=urlencode({"text": own, "text2": pair})
            )
            if llm:  # the teacher's preset pair, picked on the page (the model stays SmolLM2)
                await think()
                wid, _ = client.widget_id("compare_preset")
                preset = _strings(wid, [PRESET_TITLES[TEACHER_PRESET]])
                await client.rerun(TEACHER_KINDS[1], widget=preset)
            await think()
            await client.rerun("open atlas", page="atlas")
    except Exception as err:  # a refused or dropped connection, a page without its widgets
        measured.errors.append(f"session {mine}: {type(err).__name__}: {err}")


async def explore_on_smollm2(client: Client, think) -> None:
    """The student's sentence on SmolLM2 (picked in the sidebar), its next word, then the teacher's
    example, picked on the page as the teacher says (a second link to a page it has open is not read
    again: the page reads its link once a session)."""
    await think()
    wid, _ = client.widget_id("explore_model_choice")
    picked = WidgetState(id=wid, string_value=model_label(SMOLLM2_KEY))  # a selectbox's value
    await client.rerun("explore: pick SmolLM2, own sentence", widget=picked)
    await think()
    wid, _ = client.widget_id("explore_view")
    await client.rerun("explore on SmolLM2: the next word", widget=_strings(wid, [VIEWS["nextword"]]))
    await think()
    wid, _ = client.widget_id("explore_example")
    example = _strings(wid, [EXAMPLES[TEACHER_EXAMPLE].title])
    await client.rerun(TEACHER_KINDS[0], widget=example)


async def teacher_prepares(url: str, measured: Measured) -> None:
    """Before the class, the teacher opens SmolLM2 and its atlas once: the server loads the model and
    measures the atlas's corpus on it (saved to disk for every later visit), as a teacher would
    rehearse. Timed on its own; its memory counts in the server's peak."""
    from urllib.parse import urlencode

    async with Client(url, ("quokka", "narwhal"), [], measured) as client:
        query = urlencode({"text": "The quokka and the narwhal met by the sea."})
        await client.rerun("teacher: open explore", page="explore", query=query)
        wid, _ = client.widget_id("explore_model_choice")
        picked = WidgetState(id=wid, string_value=model_label(SMOLLM2_KEY))
        await client.rerun("teacher: load SmolLM2", widget=picked)
        await client.rerun("teacher: SmolLM2's atlas, measured once", page="atlas")


async def classroom(
    url: str,
    n_sessions: int,
    ramp_s: float = RAMP_S,
    think_s: tuple[float, float] = THINK_S,
    seed: int = 0,
    timeout_s: float = TIMEOUT_S,
    llm: bool = False,
) -> Measured:
    measured = Measured(timeout_s=timeout_s)
    words = own_words(n_sessions)
    rng = random.Random(seed)
    delays = sorted(rng.uniform(0, ramp_s) for _ in range(n_sessions))
    await asyncio.gather(
        *(
            student(
                url,
                delay,
                mine,
                [w for other in words if other != mine for w in other],
                measured,
                seed + i,
                think_s,
                llm,
            )
            for i, (delay, mine) in enumerate(zip(delays, words, strict=True))
        )
    )
    return measured


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def run_classroom(
    n_sessions: int,
    ramp_s: float = RAMP_S,
    think_s: tuple[float, float] = THINK_S,
    timeout_s: float = TIMEOUT_S,
    llm: bool = False,
) -> tuple[Measured, int, float]:
    """(what was measured, model loads in the server's log, the server's peak RSS in MB); a rerun
    without script_finished after timeout_s counts as an error. llm: every session also opens its
    sentence on SmolLM2 and its next word (both shipped models loaded, as on the demo)."""
    from tests.e2e.harness import StreamlitServer

    env = {"ATTENTION_EXPLORER_HOSTED": "1"}
    with StreamlitServer(env=env, app_logs=True) as server:
        # a thread of its own: the caller's thread may already run an event loop (Playwright's sync
        # API does, in the test session), and asyncio.run cannot start inside one
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            if llm:
                prepared = Measured(timeout_s=900.0)
                pool.submit(asyncio.run, teacher_prepares(server.url, prepared)).result()
            work = classroom(server.url, n_sessions, ramp_s, think_s, timeout_s=timeout_s, llm=llm)
            measured = pool.submit(asyncio.run, work).result()
            if llm:
                measured.errors += prepared.errors
                measured.seconds |= prepared.seconds
        rss = server.peak_rss_mb()
        loads = len(re.findall(r"loading model ", server.log_text()))
    return measured, loads, rss


def run(quick: bool = False) -> list[Row]:
    n = 8 if quick else 30
    rows = []
    for think_s, how in ((THINK_S, "1-3 s between clicks"), ((0.0, 0.0), "no pause")):
        rows += _rows(n, how, *run_classroom(n, think_s=think_s))
    return rows + llm_rows(n)


def llm_rows(n: int = 30) -> list[Row]:
    """The classroom with SmolLM2 too, against the issue's 690 MB (Community Cloud's guaranteed
    minimum): `python -m bench.classroom --llm` runs it alone."""
    rows = _rows(n, "1-3 s between clicks, SmolLM2 too", *run_classroom(n, llm=True), llm=True)
    return [*rows, floor_row(n)]


def floor_row(n: int = 30, seed: int = 0) -> Row:
    """What two cores allow at best for n own sentences at once on SmolLM2 held in bfloat16 (as on
    the demo): the median time of one pass on a student's sentence here, times n, over the workers."""
    from core.models import architectures
    from core.models.registry import parse_model_choice, prepare_model_files

    spec = parse_model_choice(SMOLLM2_KEY)
    engine = architectures.engine_from_dir(prepare_model_files(spec), name=spec.label, compact=True)
    rng = random.Random(seed)
    sentences = [sentence(rng, words) for words in own_words(5)]
    engine.run(sentences[0])  # the first pass touches every page once
    seconds, tokens = [], []
    for text in sentences:
        start = time.perf_counter()
        result = engine.run(text)
        seconds.append(time.perf_counter() - start)
        tokens.append(result.n_tokens)
    one = statistics.median(seconds)
    return Row(
        f"classroom: the floor for {n} own sentences at once on SmolLM2, {WORKERS} workers",
        one * n / WORKERS,
        "s",
        note=f"one pass {one:.2f} s (median of {len(seconds)} sentences of {min(tokens)}-{max(tokens)} "
        f"tokens, bfloat16 weights) x {n} / {WORKERS}",
    )


def _rows(n: int, how: str, measured: Measured, loads: int, rss: float, llm: bool = False) -> list[Row]:
    rows = []
    for kind, seconds in measured.seconds.items():
        if kind.startswith("teacher"):  # once, before the class: teacher_prepares
            rows.append(Row(f"classroom, {how}: {kind}", seconds[0], "s", note="once, before the students"))
            continue
        rows.append(
            Row(
                f"classroom, {n} sessions, {how}: {kind}, p95 server time",
                percentile(seconds, 0.95),
                "s",
                target=TARGET_S.get(kind, OTHER_TARGET_S),
                note=f"p50 {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s, "
                f"{len(seconds)} reruns",
            )
        )
    rows += [
        Row(
            f"classroom, {n} sessions, {how}: errors",
            len(measured.errors),
            "",
            target=0,
            note="; ".join(measured.errors[:3]),
        ),
        Row(
            f"classroom, {n} sessions, {how}: leaks",
            len(measured.leaks),
            "",
            target=0,
            note="; ".join(measured.leaks[:3])
            or f"each session's own words came back to it ({len(measured.blind)} sessions never saw theirs)",
        ),
        Row(
            f"classroom, {n} sessions, {how}: model loads",
            loads,
            "",
            target=2 if llm else 1,
            note="'loading model' lines in the server log",
        ),
        Row(
            f"classroom, {n} sessions, {how}: server peak RSS",
            rss,
            "MB",
            target=690 if llm else 600,
            note="VmHWM of `streamlit run`",
        ),
    ]
    return rows


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="the classroom benchmark's rows")
    parser.add_argument("--llm", action="store_true", help="only the SmolLM2 rows (llm_rows)")
    parser.add_argument("--floor", action="store_true", help="only the floor two cores set (floor_row)")
    parser.add_argument("-n", type=int, default=30, help="students")
    args = parser.parse_args()
    if args.floor:
        print(format_table([floor_row(args.n)]))
    else:
        print(format_table(llm_rows(args.n) if args.llm else run(quick=args.n < 30)))
