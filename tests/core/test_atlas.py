"""core/measures/atlas.py: the head statistics against an independent computation (transformers' BertModel
with eager attention on corpus sentences, the statistics written as explicit Python loops), role
labels on constructed attention, the token-weighted average, and the disk cache (round trip,
damaged files, unwritable folder, what the key depends on). Every test uses a temporary cache dir."""

from __future__ import annotations

import math
import os
import unicodedata
import zipfile

import numpy as np
import pytest

from core.measures import atlas as atlas_mod
from core.measures.atlas import (
    BROAD,
    BROAD_ENTROPY,
    MIXED,
    ROLE_SHARE,
    STATS,
    HeadAtlas,
    cache_dir,
    cache_path,
    compute_atlas,
    corpus_hash,
    head_roles,
    is_punctuation,
    load_atlas,
    load_or_compute,
    measure_sentences,
    model_fingerprint,
    save_atlas,
)
from core.models.result import AttentionResult
from dashboard.content.atlas import corpus

FP = "fingerprint of m's files"


@pytest.fixture(autouse=True)
def temporary_cache(tmp_path, monkeypatch):
    """Never touch the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


# ---- an independent computation on the bundled model ----------------------------------------------

HEADS = ((0, 2), (1, 8), (2, 0), (3, 11), (5, 6))  # (layer, head), 0-indexed: a previous-token head,
# a next-token head, a [CLS] sink, the head with the most punctuation, a broad one


def _reference_stats(attn, tokens, layer: int, head: int) -> dict[str, float]:
    """One head's statistics over several sentences, as loops over rows and columns.
    attn: per sentence, a (L, H, T, T) array; tokens: per sentence, its token strings."""
    totals = dict.fromkeys(STATS, 0.0)
    rows = adjacent = 0
    for a, toks in zip(attn, tokens, strict=True):
        t = len(toks)
        punct = [
            tok not in ("[CLS]", "[SEP]")
            and len(tok.removeprefix("##")) > 0
            and all(unicodedata.category(c)[0] == "P" for c in tok.removeprefix("##"))
            for tok in toks
        ]
        for i in range(t):
            row = [float(a[layer, head, i, j]) for j in range(t)]
            totals["to_cls"] += sum(row[j] for j in range(t) if toks[j] == "[CLS]")
            totals["to_sep"] += sum(row[j] for j in range(t) if toks[j] == "[SEP]")
            totals["to_punct"] += sum(row[j] for j in range(t) if punct[j])
            totals["to_self"] += row[i]
            if i > 0:
                totals["to_prev"] += row[i - 1]
            if i < t - 1:
                totals["to_next"] += row[i + 1]
            h = -sum(p * math.log2(p) for p in row if p > 0)
            totals["entropy"] += h
            totals["entropy_norm"] += h / math.log2(t)
            totals["distance"] += sum(row[j] * abs(i - j) for j in range(t))
        rows += t
        adjacent += t - 1
    return {k: v / (adjacent if k in ("to_prev", "to_next") else rows) for k, v in totals.items()}


@pytest.fixture(scope="module")
def torch_reference():
    """transformers' BertModel (eager attention) on the bundled weights and its own tokenizer."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer

    from core.models.bundled import bundled_model_dir

    directory = bundled_model_dir()
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    model = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").eval()

    def run(sentence: str):
        enc = tokenizer.encode(sentence)
        with torch.no_grad():
            out = model(torch.tensor([enc.ids]), output_attentions=True)
        return np.stack([a[0].numpy() for a in out.attentions]), enc.tokens

    return run


@pytest.mark.slow
def test_bundled_heads_match_transformers_with_loops(torch_reference):
    from core.models.bert import BertNumpy

    sentences = [s for s in corpus() if any(c in s for c in '"?;:')][:8]  # quotes, questions, lists
    assert len(sentences) == 8
    engine = BertNumpy.from_pretrained()
    atlas = measure_sentences(engine.run, sentences, model="bundled", engine="numpy")
    runs = [torch_reference(s) for s in sentences]
    assert atlas.n_sentences == 8 and atlas.n_rows == sum(len(toks) for _, toks in runs)
    for layer, head in HEADS:
        expected = _reference_stats([a for a, _ in runs], [t for _, t in runs], layer, head)
        for name in STATS:
            got = float(atlas.stat(name)[layer, head])
            assert got == pytest.approx(expected[name], abs=2e-5), (layer, head, name)
    # the roles these heads are known for, from the numbers above
    roles = head_roles(atlas)
    assert roles[0, 2] == "previous token" and atlas.to_prev[0, 2] > 0.95


# ---- constructed attention ------------------------------------------------------------------------

TOKENS = ["[CLS]", "a", ",", "b", "c", "[SEP]"]  # T = 6; "," is punctuation


def _result(attn: np.ndarray, tokens=TOKENS) -> AttentionResult:
    t = len(tokens)
    special = np.array([tok in ("[CLS]", "[SEP]") for tok in tokens])
    return AttentionResult(
        tokens=list(tokens),
        attentions=attn.astype(np.float32),
        hidden_states=np.zeros((attn.shape[0] + 1, t, 2), dtype=np.float32),
        special_mask=special,
        word_ids=[None if s else i for i, s in enumerate(special)],
        model="test",
        engine="numpy",
    )


def _one_hot_rows(cols: list[int], t: int = 6) -> np.ndarray:
    rows = np.zeros((t, t))
    rows[np.arange(t), cols] = 1.0
    return rows


def constructed_heads() -> np.ndarray:
    """(1, 8, 6, 6): one head per role, in ROLES order."""
    t = 6
    mixed = np.zeros((t, t))
    mixed[:, 3], mixed[:, 4], mixed[:, 1] = 0.45, 0.45, 0.1
    heads = [
        _one_hot_rows([0] * t),  # [CLS] sink
        _one_hot_rows([5] * t),  # [SEP] sink
        _one_hot_rows([2] * t),  # punctuation
        np.eye(t),  # self
        _one_hot_rows([0, 0, 1, 2, 3, 4]),  # previous token (row 0 has none: it looks at itself)
        _one_hot_rows([1, 2, 3, 4, 5, 5]),  # next token (the last row looks at itself)
        np.full((t, t), 1 / t),  # broad: uniform
        mixed,
    ]
    return np.stack(heads)[None]


def test_constructed_heads_get_their_roles_and_exact_numbers():
    atlas = compute_atlas([_result(constructed_heads())], model="test", corpus_hash="x")
    assert list(head_roles(atlas)[0]) == [
        "[CLS] sink",
        "[SEP] sink",
        "punctuation",
        "self",
        "previous token",
        "next token",
        BROAD,
        MIXED,
    ]
    assert atlas.n_rows == 6 and atlas.n_sentences == 1
    np.testing.assert_allclose(atlas.to_cls[0, :3], [1, 0, 0])
    np.testing.assert_allclose(atlas.to_prev[0, 4], 1.0)  # averaged over the 5 rows that have one
    np.testing.assert_allclose(atlas.to_self[0, 4], 1 / 6)
    np.testing.assert_allclose(atlas.distance[0, 4], 5 / 6)  # 5 rows at distance 1, row 0 at 0
    np.testing.assert_allclose(atlas.entropy[0, 6], math.log2(6))
    np.testing.assert_allclose(atlas.entropy_norm[0, [3, 6]], [0.0, 1.0])
    h = -(2 * 0.45 * math.log2(0.45) + 0.1 * math.log2(0.1))
    np.testing.assert_allclose(atlas.entropy_norm[0, 7], h / math.log2(6))
    np.testing.assert_allclose(atlas.to_prev[0, 7], (0.1 + 0.45 + 0.45) / 5)  # rows 2, 4, 5


def _atlas_with(**values: float) -> HeadAtlas:
    stats = {name: np.full((1, 1), values.get(name, 0.0)) for name in STATS}
    return HeadAtlas(**stats, n_sentences=1, n_rows=1, model="m", corpus_hash="c")


@pytest.mark.parametrize(
    ("values", "role"),
    [
        ({"to_prev": ROLE_SHARE}, "previous token"),  # at the threshold: named
        ({"to_prev": ROLE_SHARE - 1e-9, "entropy_norm": 0.5}, MIXED),
        ({"to_prev": ROLE_SHARE - 1e-9, "entropy_norm": BROAD_ENTROPY}, BROAD),
        ({"entropy_norm": BROAD_ENTROPY - 1e-9}, MIXED),
        ({"to_cls": 0.6, "to_sep": 0.6}, "[CLS] sink"),  # a tie: the earlier role
        ({"to_cls": 0.55, "to_next": 0.7}, "next token"),  # the largest share wins
        ({"to_self": 0.5, "entropy_norm": 0.95}, "self"),  # a share beats spread
        ({"to_punct": 0.9}, "punctuation"),
        ({"to_sep": 0.51}, "[SEP] sink"),
    ],
)
def test_role_thresholds(values, role):
    assert head_roles(_atlas_with(**values))[0, 0] == role


def test_average_is_token_weighted():
    rng = np.random.default_rng(0)

    def random_result(t: int) -> AttentionResult:
        attn = rng.random((2, 3, t, t))
        tokens = ["[CLS]", *(["x", "."] * t)[: t - 2], "[SEP]"]
        return _result(attn / attn.sum(-1, keepdims=True), tokens)

    a, b = random_result(4), random_result(9)
    both = compute_atlas([a, b], model="m", corpus_hash="c")
    one_a = compute_atlas([a], model="m", corpus_hash="c")
    one_b = compute_atlas([b], model="m", corpus_hash="c")
    assert both.n_rows == 13 and both.n_sentences == 2
    for name in STATS:
        wa, wb = (3, 8) if name in ("to_prev", "to_next") else (4, 9)
        expected = (wa * one_a.stat(name) + wb * one_b.stat(name)) / (wa + wb)
        np.testing.assert_allclose(both.stat(name), expected, err_msg=name)


def test_one_token_sentences_are_skipped_and_nothing_measured_is_an_error():
    single = _result(np.ones((1, 1, 1, 1)), ["[CLS]"])
    with pytest.raises(ValueError, match="no sentence"):
        compute_atlas([single], model="m", corpus_hash="c")


def test_punctuation_tokens():
    for token in (".", ",", "##.", "...", "«", "—", "'", "?!", "Ġ,"):
        assert is_punctuation(token), token
    for token in ("a", "a.", "$", "+", "1", "", "##s", "😀"):
        assert not is_punctuation(token), token


def test_progress_and_corpus_hash():
    calls = []
    attn = constructed_heads()
    atlas = measure_sentences(
        lambda s: _result(attn), ["x", "y", "z"], model="m", progress=lambda *a: calls.append(a)
    )
    assert calls == [(1, 3), (2, 3), (3, 3)]
    assert atlas.corpus_hash == corpus_hash(["x", "y", "z"]) != corpus_hash(["x", "y"])


class Interrupted(Exception):
    """Stands for Streamlit's rerun exception, raised at a progress-bar update."""


def test_interrupted_measurement_resumes_where_it_stopped():
    rng = np.random.default_rng(1)
    sentences = [f"s{i}" for i in range(7)]
    results = {}
    for i, s in enumerate(sentences):  # sentences of different lengths, one too short to measure
        t = 1 if i == 3 else 3 + i
        attn = rng.random((2, 2, t, t))
        results[s] = _result(attn / attn.sum(-1, keepdims=True), ["[CLS]", *["w"] * (t - 2), "[SEP]"][:t])
    whole = measure_sentences(results.__getitem__, sentences, model="m", engine="numpy")

    partial = atlas_mod.AtlasAccumulator()
    ran, calls = [], []

    def run(s):
        ran.append(s)
        return results[s]

    def interrupt_at_4(done, total):
        calls.append(done)
        if done == 4:
            raise Interrupted

    with pytest.raises(Interrupted):
        measure_sentences(run, sentences, model="m", progress=interrupt_at_4, partial=partial)
    assert ran == sentences[:4] and partial.seen == 4 and partial.skipped == 1  # the 4th was added
    ran.clear()
    calls.clear()
    resumed = measure_sentences(
        run, sentences, model="m", engine="numpy", progress=lambda d, t: calls.append(d), partial=partial
    )
    assert ran == sentences[4:] and calls == [5, 6, 7]  # resumed at sentence 5, nothing measured twice
    assert (resumed.n_sentences, resumed.n_rows, resumed.corpus_hash) == (
        whole.n_sentences,
        whole.n_rows,
        whole.corpus_hash,
    )
    for name in STATS:
        np.testing.assert_allclose(resumed.stat(name), whole.stat(name), rtol=1e-12, err_msg=name)


def test_model_fingerprint_follows_config_and_weights(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 8}')
    weights = folder / "model.safetensors"
    weights.write_bytes(b"x" * 10)
    os_times = (1_700_000_000, 1_700_000_000)
    os.utime(weights, os_times)
    base = model_fingerprint(folder)
    assert model_fingerprint(folder) == base  # stable
    (folder / "tokenizer.json").write_text("{}")
    assert model_fingerprint(folder) == base  # only the config and the weights count
    os.utime(weights, (os_times[0], os_times[1] + 60))  # retrained in place: same size, newer file
    assert model_fingerprint(folder) != base
    os.utime(weights, os_times)
    assert model_fingerprint(folder) == base
    weights.write_bytes(b"y" * 11)
    os.utime(weights, os_times)
    assert model_fingerprint(folder) != base  # another size
    weights.write_bytes(b"x" * 10)
    os.utime(weights, os_times)
    (folder / "config.json").write_text('{"hidden_size": 16}')
    assert model_fingerprint(folder) != base  # another config
    (folder / "config.json").write_text('{"hidden_size": 8}')
    assert model_fingerprint(folder) == base
    (folder / "model-2.safetensors").write_bytes(b"")
    assert model_fingerprint(folder) != base  # another weights file


# ---- the disk cache -------------------------------------------------------------------------------


@pytest.fixture
def made():
    return compute_atlas(
        [_result(constructed_heads())], model="m", corpus_hash=corpus_hash(["s"]), engine="numpy"
    )


def test_cache_dir_follows_xdg_else_home(monkeypatch, tmp_path, temporary_cache):
    assert cache_dir() == temporary_cache / "attention-explorer" / "atlas"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "attention-explorer" / "atlas"


def test_cache_round_trip(made):
    computed = []
    _, source = load_or_compute("m", ["s"], lambda: computed.append(1) or made, fingerprint=FP)
    assert source == "computed" and computed == [1]
    again, source = load_or_compute("m", ["s"], lambda: pytest.fail("should come from disk"), fingerprint=FP)
    assert source == "disk"
    for name in STATS:
        np.testing.assert_array_equal(again.stat(name), made.stat(name))
    assert (again.n_rows, again.n_sentences, again.model, again.corpus_hash, again.engine) == (
        made.n_rows,
        made.n_sentences,
        "m",
        made.corpus_hash,
        "numpy",
    )
    assert [p.name for p in cache_dir().iterdir()] == [
        cache_path("m", made.corpus_hash, fingerprint=FP).name
    ]  # no temp left


def test_key_changes_with_model_corpus_and_version(monkeypatch):
    base = cache_path("bundled", corpus_hash(["a", "b"]), fingerprint=FP)
    assert cache_path("bert-base-uncased", corpus_hash(["a", "b"]), fingerprint=FP) != base
    assert cache_path("bundled", corpus_hash(["a", "b."]), fingerprint=FP) != base
    assert cache_path("bundled", corpus_hash(["a", "b"]), fingerprint=FP) == base
    assert cache_path("bundled", corpus_hash(["a", "b"]), fingerprint=FP + "'") != base  # new weights
    monkeypatch.setattr(atlas_mod, "STATS_VERSION", atlas_mod.STATS_VERSION + 1)
    assert cache_path("bundled", corpus_hash(["a", "b"]), fingerprint=FP) != base


def _damage(path, how: str, made: HeadAtlas) -> None:
    if how == "garbage":
        path.write_bytes(b"not a zip file at all")
    elif how == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    elif how == "empty":
        path.write_bytes(b"")
    elif how in ("missing", "nan", "version", "shape", "pickled"):
        data = dict(np.load(path))
        if how == "missing":
            del data["to_prev"]
        elif how == "nan":
            data["entropy"] = np.full_like(data["entropy"], np.nan)
        elif how == "version":
            data["version"] = np.asarray(-1)
        elif how == "shape":
            data["distance"] = np.zeros(3)
        else:
            data["model"] = np.array([{"evil": 1}], dtype=object)
        with open(path, "wb") as f:
            np.savez(f, **data)
    elif how == "directory":
        path.unlink()
        path.mkdir()
    elif how == "zip_member":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("version.npy", b"\x93NUMPY broken")


@pytest.mark.parametrize(
    "how", ["garbage", "truncated", "empty", "missing", "nan", "version", "shape", "pickled", "zip_member"]
)
def test_damaged_cache_is_recomputed_and_replaced(made, how):
    load_or_compute("m", ["s"], lambda: made, fingerprint=FP)
    path = cache_path("m", made.corpus_hash, fingerprint=FP)
    _damage(path, how, made)
    assert load_atlas(path, model="m", corpus=made.corpus_hash) is None
    computed = []
    _, source = load_or_compute("m", ["s"], lambda: computed.append(1) or made, fingerprint=FP)
    assert source == "computed" and computed == [1]
    assert load_atlas(path, model="m", corpus=made.corpus_hash) is not None  # the good file is back


def test_cache_of_another_model_or_corpus_is_not_used(made, tmp_path):
    path = tmp_path / "atlas.npz"
    assert save_atlas(made, path)
    assert load_atlas(path, model="other", corpus=made.corpus_hash) is None
    assert load_atlas(path, model="m", corpus="another") is None
    assert load_atlas(path, model="m", corpus=made.corpus_hash) is not None


def test_new_model_files_are_not_served_the_old_atlas(made):
    load_or_compute("m", ["s"], lambda: made, fingerprint="weights v1")
    computed = []
    _, source = load_or_compute("m", ["s"], lambda: computed.append(1) or made, fingerprint="weights v2")
    assert source == "computed" and computed == [1]
    _, source = load_or_compute("m", ["s"], lambda: pytest.fail("v1 is on disk"), fingerprint="weights v1")
    assert source == "disk"


def test_unwritable_cache_keeps_the_atlas_in_memory(made, tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    atlas, source = load_or_compute("m", ["s"], lambda: made, fingerprint=FP, directory=blocker / "atlas")
    assert source == "computed, not saved" and atlas is made
    assert "cannot write the cache file" in caplog.text


def test_cache_in_a_directory_path_is_recomputed(made):
    load_or_compute("m", ["s"], lambda: made, fingerprint=FP)
    path = cache_path("m", made.corpus_hash, fingerprint=FP)
    _damage(path, "directory", made)
    atlas, source = load_or_compute("m", ["s"], lambda: made, fingerprint=FP)
    assert atlas is made and source == "computed, not saved"  # cannot replace a folder: memory only
