"""The circuit page's own text: the classes of heads, the statements it fills from the circuit's file,
and GPT-2 small's published circuit as data to compare with. Data, not code: dashboard/views/circuit/
fills the {fields} with numbers computed from the JSON; user text is escaped before it is put in.
Layers and heads are written from 1.

References: Wang et al. 2022, "Interpretability in the Wild: a Circuit for Indirect Object
Identification in GPT-2 small", arXiv 2211.00593 (the task, the classes, GPT-2 small's heads);
Goldowsky-Dill et al. 2023, "Localizing Model Behavior with Path Patching", arXiv 2304.05969.
"""

from __future__ import annotations

from dataclasses import dataclass

TITLE = "How heads work together: a circuit in SmolLM2"
INTRO = (
    "“When Mary and John went to the store, John gave a drink to” … a reader says *Mary*: the name "
    "that occurs once, the **indirect object**, not the **subject** that occurs twice. SmolLM2 says "
    "so too. Which heads do it, and how do they pass the answer from one to the next? Path patching "
    "follows the answer back from the output, one group of heads at a time (Wang et al. 2022, "
    "*Interpretability in the Wild*). Each head below was put in its class by a measurement, shown "
    "with it; layers and heads are numbered from 1."
)
SOURCE = (
    "Wang et al. 2022, “Interpretability in the Wild: a Circuit for Indirect Object Identification in "
    "GPT-2 small” (arXiv 2211.00593); Goldowsky-Dill et al. 2023, “Localizing Model Behavior with "
    "Path Patching” (arXiv 2304.05969)."
)


@dataclass(frozen=True)
class ClassText:
    label: str  # plural, lower case: "name movers"
    one: str  # singular: "name mover"
    color: str  # Okabe–Ito: told apart under every common colour-vision deficiency
    symbol: str  # the non-colour cue: a marker shape per class
    does: str  # what a head of this class does, one line


# In the search's order: back from the answer, one step at a time (core/measures/circuit.py).
CLASSES: dict[str, ClassText] = {
    "name_mover": ClassText(
        "name movers", "name mover", "#0072B2", "circle",
        "attend from the last token to the indirect object and copy its name into the answer",
    ),
    "negative_name_mover": ClassText(
        "negative name movers", "negative name mover", "#D55E00", "x",
        "attend to the indirect object too, but write against it: they make the model less sure",
    ),
    "s_inhibition": ClassText(
        "S-inhibition heads", "S-inhibition head", "#009E73", "square",
        "read the “repeated” flag at the subject and tell the name movers not to copy that name",
    ),
    "induction": ClassText(
        "induction heads", "induction head", "#CC79A7", "triangle-up",
        "attend from the repeated name to the token after its first mention: another way to flag the repeat",
    ),
    "duplicate_token": ClassText(
        "duplicate-token heads", "duplicate-token head", "#E69F00", "diamond",
        "attend from the second mention of the subject to its first: “this name came before”",
    ),
    "previous_token": ClassText(
        "previous-token heads", "previous-token head", "#56B4E9", "triangle-down",
        "attend from each token to the one before it, so a later head can find what followed a name",
    ),
}  # fmt: skip
DIRECT_ONLY = ClassText(
    "direct effect, not name movers", "head with a direct effect", "#595959", "circle-open",
    "have a direct effect on the logits past the threshold but fail the name-mover tests (where they attend "
    "from the last token, what their OV circuit copies)",
)  # fmt: skip
LEFT_OUT_LINE = (
    "Not in the circuit, though their direct effect passes the threshold: {heads}{more}. They fail the "
    "name movers' tests of where they attend and what they copy."
)
LEFT_OUT_SHORT = (
    "Left out: {n} heads whose direct effect passes the threshold but who fail the name movers' tests "
    "(the largest, L{layer} H{head}, {verb} {share})."
)
LEFT_OUT_HEAD = "L{layer} H{head} ({verb} {share}; {failed})"
LEFT_OUT_MORE = " and {n} more"
OTHER = ClassText("other classes", "other head", "#7f7f7f", "star", "")
UNPLACED_COLOR = "#d9d9d9"  # the heads of no class, drawn faint for where the circuit sits
LOGITS = "logits (the answer)"

# ---- GPT-2 small's published circuit (Wang et al. 2022, their Figure 2; 0-indexed layer, head), as in
# the authors' code and ACDC's acdc/ioi/utils.py. Backup name movers take over when the name movers
# are knocked out: a class this page's search does not look for.
GPT2_NAME = "GPT-2 small"
GPT2_SHAPE = (12, 12)  # layers, heads
GPT2_CLASSES: dict[str, tuple[tuple[int, int], ...]] = {
    "name_mover": ((9, 9), (10, 0), (9, 6)),
    "backup_name_mover": ((10, 10), (10, 6), (10, 2), (10, 1), (11, 2), (9, 7), (9, 0), (11, 9)),
    "negative_name_mover": ((10, 7), (11, 10)),
    "s_inhibition": ((7, 3), (7, 9), (8, 6), (8, 10)),
    "induction": ((5, 5), (5, 8), (5, 9), (6, 9)),
    "duplicate_token": ((0, 1), (0, 10), (3, 0)),
    "previous_token": ((2, 2), (4, 11)),
}
BACKUP_NOTE = (
    "GPT-2 small also has {n} backup name movers, which take over when the name movers are knocked out; "
    "the search here does not look for that class."
)

# ---- the views (`view=` in links) ---------------------------------------------------------------------
VIEWS = {
    "graph": "The circuit",
    "direct": "Name movers: direct effect",
    "q": "S-inhibition: via queries",
    "kv": "Induction, duplicate: via keys, values",
    "prev": "Previous-token: via keys",
    "logit": "Logit difference",
    "gpt2": "Beside GPT-2 small",
}
VIEW_HELP = (
    "The circuit as a graph, or the measurements behind it, step by step back from the answer: path "
    "patching to the logits (the direct effect), then to the queries, keys or values of the heads found "
    "in the step before; the logit differences; where each class sits beside GPT-2 small's."
)
# the grid a view shows (the k + v view also shows keys or values alone: `part` in links)
VIEW_GRIDS = {"direct": "direct", "q": "q", "kv": "kv", "prev": "previous_k"}
PARTS = {"kv": "keys + values", "k": "keys", "v": "values"}
PART_LABEL = "Read by the S-inhibition heads through their"
GRID_TITLES = {
    "direct": "Direct effect: each head's path to the logits",
    "q": "Each head's path to the queries of the {to}",
    "kv": "Each head's path to the keys and values of the {to} (summed)",
    "k": "Each head's path to the keys of the {to}",
    "v": "Each head's path to the values of the {to}",
    "previous_k": "Each head's path to the keys of the {to}",
}
GRID_BAR = "restored"
GRID_AXES = ("layer (from 1)", "head (from 1)")  # rows, columns
GRID_CAPTION = (
    "Each cell: one head's output taken from the corrupted run (three other names), only along this "
    "path, as a share of the logit difference it takes away (1 = all of it; below 0: the other way; the "
    "colours run to the grid's largest share, the numbers are in the hover and the table). "
    "Blank cells cannot reach the receivers: they sit at or after them. Boxed in red: the heads this step "
    "put in the circuit."
)
GRID_MISSING = "The circuit's file holds no grid for this path."

# ---- statements (numbers from the file; {fields} filled by views/circuit/findings.py) --------------
EXAMPLE_LINE = (
    "One of the prompts: “{text}” (the indirect object “{io}”, the subject “{s}”); corrupted: “{corrupt}”."
)
TASK_LINE = (
    "Over **{n} prompts**, the mean logit difference logit(IO) − logit(S) is **{clean:+.2f}** on the "
    "prompts as written and **{corrupt:+.2f}** with three other names (the corrupted run): {odds}"
)
ODDS_IO = "the model prefers the indirect object by {odds} to 1 on average."
ODDS_S = "the model prefers the subject by {odds} to 1 on average: it does not do the task."
CLASS_LINE = "**{count} {label}** ({heads})."
CLASS_SHORT = "**{count} {label}**: {heads}"
SHORT_MORE = " and {n} more"
STRONGEST = " The strongest, layer {layer} head {head}, {what}."
VERB_UP, VERB_DOWN = "restores", "takes away"
EVIDENCE_DIRECT = "{verb} {share} of the logit difference along its direct path to the logits"
EVIDENCE_PATH = "{verb} {share} of the logit difference through the {to}' {via}"
NO_CLASS = "No head passed the test for {label}."
FAITHFUL_LINE = (
    "**Faithfulness**: the circuit alone ({n_in} heads; the other {n_out} mean-ablated) keeps "
    "**{share}** of the full model's logit difference{nats}."
)
FAITHFUL_NATS = " ({circuit:+.2f} of {clean:+.2f})"
GPT2_LINE = "{label}: {gpt2} in GPT-2 small, {ours} here."
GPT2_COUNT = "{n} ({layers}, {depth} of the way down)"
GPT2_NONE = "none"
ORDER_SAME = "The classes come in the same order down the layers as in GPT-2 small: {order}."
ORDER_SAME_SHORT = "The classes come in the same order down the layers as in GPT-2 small."
ORDER_DIFF = "The order down the layers differs from GPT-2 small's ({theirs}): here it is {ours}."
DEPTH_MOVED = "{label} sit {where} here ({ours} of the way down) than in GPT-2 small ({theirs})."
SIZES = (
    "The circuit here has {ours} of the model's {n_ours} heads ({share_ours}); GPT-2 small's published one "
    "{theirs} of {n_theirs} ({share_theirs}, its backup name movers counted)."
)
MISSING_CLASSES = "Classes GPT-2 small has and this search found no head for: {names}."

# The other figures the search keeps for a head (core/measures/circuit_json.py's SHOWN): where it
# attends (END = the last token, S1/S2 = the subject's two mentions, +1 = the token after) and what
# its OV circuit copies
FIGURE_NAMES = {
    "end_io": "END→IO",
    "end_s": "END→S",
    "end_s2": "END→S2",
    "copy_score": "copy score",
    "negative_copy_score": "negative copy score",
    "s2_s1": "S2→S1",
    "s2_s1_next": "S2→S1+1",
    "s1_next_s1": "S1+1→S1",
    "previous": "to the previous token",
    "k": "path via keys",
    "v": "path via values",
}

# ---- the heads: a table and a link to explore -------------------------------------------------------
HEADS_TITLE = "The heads, and what put each one there"
PROMPT_LABEL = "Prompt"
PROMPT_HELP = "The prompt explore opens with: one of the circuit's own prompts."
HEAD_LABEL = "Head"
HEAD_HELP = "A head of the circuit (layer and head, from 1). Click a node in the graph to pick it too."
OPEN_LABEL = "Open layer {layer}, head {head} on explore"
PICKED = "**Layer {layer}, head {head}**, {a} {one}: heads of this class {does}. This one {value}."
NO_VALUE = "has no figure in the file"
PICKED_SHORT = "**Layer {layer}, head {head}**, {a} {one}: {value}."

# ---- states ------------------------------------------------------------------------------------------
NO_FILE = (
    "The circuit for SmolLM2 is not here yet: `dashboard/content/circuits/smollm2_ioi.json` is missing. "
    "Compute it with `python -m core circuit --model smollm2 --task ioi --format json --out "
    "dashboard/content/circuits/smollm2_ioi.json`{or_here}."
)
OR_HERE = ", or with the button below"
BAD_FILE = "The circuit's file cannot be read ({reason}). Compute it again with the command below."
RECORD_LINE = "Computed on {when} by `{command}`{took}{version}."
RECORD_NONE = "The file has no record of how it was computed."

# ---- recomputing and one's own template (dashboard/long_work.py asks first) -----------------------
RECOMPUTE_TITLE = "Compute it again"
RECOMPUTE_INTRO = (
    "Run the whole search again on SmolLM2 here, on new prompts: path patching to the logits, then to "
    "the queries, keys and values of each group, then the circuit alone."
)
RECOMPUTE_TOGGLE = "Search again on SmolLM2"
PROMPTS_LABEL = "Prompts"
SEED_LABEL = "Seed"
RECOMPUTE_ASK = "Searching for the circuit over {n} prompts"
RECOMPUTE_BUTTON = "Search for the circuit ({n} prompts)"
RECOMPUTE_PROGRESS = "Search step {done} of {total}"
SHOWING_RECOMPUTED = "Showing the circuit computed here on {n} prompts, seed {seed}."
SHOW_SHIPPED = "Back to the shipped circuit"
SHOW_SEARCHED = "Show the circuit found with these prompts"
NO_SMOLLM2 = (
    "Computing it here needs SmolLM2 installed on this machine (the hosted demo does not compute it): the "
    "circuit above is read from its file."
)
OWN_TITLE = "Your own sentence: the first step"
OWN_INTRO = (
    "Type a sentence of the same kind: two names, one of them twice, ending where the other name "
    "should come (“When Anna and Tom sat down, Tom passed the salt to”). The first step of the search "
    "runs on it: each head's direct effect on the logits."
)
OWN_LABEL = "Your sentence"
OWN_BUTTON = "Measure each head's direct effect"
OWN_PROGRESS = "Patched {done} of {total} heads"
OWN_ASK = "Path patching every head of SmolLM2 to the logits on your sentence"
OWN_BAD = "This sentence cannot be measured: {reason}"
OWN_RESULT = (
    "Reading “{io}” (once) against “{s}” (twice): the model's logit difference is **{clean:+.2f}** "
    "on your sentence and **{corrupt:+.2f}** with other names."
)
OWN_TITLE_GRID = "Direct effect on your sentence"
OWN_LARGEST = "The largest direct effect on your sentence: layer {layer} head {head} {verb} {share}."
OWN_MOVERS = "The circuit's name movers here (and on the task's prompts): {heads}."

PRESENTER_CONTROLS = "The view, the prompt and the head"
