"""`python -m core prepare` (core/prepare.py): on tiny stand-in models it writes the corpus vectors,
the head atlas and a decoder's induction test under the keys the dashboard reads, the numbers being
those the pages would compute; it counts the sentences to the end; a second run computes nothing;
--check lists the files; the vectors come back as a memory map and a damaged file is refused."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from core import prepare as prep
from core.__main__ import main
from core.measures.atlas import STATS, cache_path, compute_atlas, corpus_hash, load_atlas, measure_induction
from core.measures.neighbours import collect, hidden_path, load_vectors, vectors_path
from core.models.architectures import load_engine
from core.models.smollm2 import SMOLLM2_KEY
from tests.tiny_bert import make_tiny_bert
from tests.tiny_llama import make_tiny_llama

SENTENCES = prep.corpus()[:6]


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> str:
    return str(make_tiny_llama(tmp_path_factory.mktemp("prepare-llama"), positions=64))


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> str:
    return str(make_tiny_bert(tmp_path_factory.mktemp("prepare-bert"), num_layers=2))


def test_the_corpus_and_the_fingerprints_are_the_dashboard_s(llama):
    from dashboard.content.atlas import corpus
    from dashboard.engines import files_fingerprint, offline_models

    assert prep.corpus() == corpus()
    assert prep.offline_models() == offline_models()
    for key in ("bundled", SMOLLM2_KEY, llama):
        assert prep.files_fingerprint(key) == files_fingerprint(key), key


def test_a_decoder_is_prepared_in_one_pass_with_the_numbers_the_pages_compute(llama, tmp_path):
    counts = []
    found = prep.prepare(llama, SENTENCES, directory=tmp_path, progress=lambda d, t: counts.append((d, t)))
    assert counts == [(d, len(SENTENCES)) for d in range(len(SENTENCES) + 1)]  # 0, then each sentence
    assert [(p.what, p.ready) for p in found] == [
        (prep.VECTORS, True),
        (prep.ATLAS, True),
        (prep.INDUCTION, True),
    ]
    assert all(path.is_file() for p in found for path in p.paths) and all(p.size > 0 for p in found)
    engine, digest, fingerprint = load_engine(llama), corpus_hash(SENTENCES), prep.files_fingerprint(llama)
    results = [engine.run(s) for s in SENTENCES]
    test = measure_induction(engine)
    expected = compute_atlas(results, model=llama, corpus_hash=digest, engine="numpy", induction=test)
    atlas = load_atlas(cache_path(llama, digest, fingerprint=fingerprint, directory=tmp_path), model=llama,
                       corpus=digest, decoder=True)  # fmt: skip
    for name in (*STATS, "to_first", "induction"):
        np.testing.assert_allclose(getattr(atlas, name), getattr(expected, name), rtol=1e-6, atol=1e-12)
    path = vectors_path(llama, digest, fingerprint=fingerprint, directory=tmp_path)
    vectors = load_vectors(path, model=llama, corpus=digest)
    assert isinstance(vectors.hidden, np.memmap)  # mapped, not read
    np.testing.assert_array_equal(vectors.hidden, collect(results, model=llama, corpus=digest).hidden)
    assert measure_induction(
        engine, model=llama, fingerprint=fingerprint, directory=tmp_path
    ).scores.tolist() == (test.scores.tolist())


def test_a_second_run_loads_no_model_and_a_missing_part_alone_is_made_again(bert, tmp_path, monkeypatch):
    first = prep.prepare(bert, SENTENCES, directory=tmp_path)
    assert [p.what for p in first] == [prep.VECTORS, prep.ATLAS]  # an encoder: no induction test
    atlas_file = first[1].paths[0]
    atlas_bytes = atlas_file.read_bytes()

    def no_model(*args, **kwargs):
        raise AssertionError("loaded the model again")

    monkeypatch.setattr(prep.architectures, "load_engine", no_model)
    assert all(p.ready for p in prep.prepare(bert, SENTENCES, directory=tmp_path))
    monkeypatch.undo()
    hidden_path(first[0].paths[0]).unlink()  # the vectors alone go missing
    assert [p.ready for p in prep.status(bert, SENTENCES, directory=tmp_path)] == [False, True]
    assert all(p.ready for p in prep.prepare(bert, SENTENCES, directory=tmp_path))
    assert atlas_file.read_bytes() == atlas_bytes  # the atlas was kept, not rewritten


def test_damaged_vectors_are_refused(bert, tmp_path):
    (vectors, npy), _ = (p.paths for p in prep.prepare(bert, SENTENCES, directory=tmp_path))
    digest = corpus_hash(SENTENCES)
    whole = npy.read_bytes()
    npy.write_bytes(whole[:-10])  # cut short
    assert load_vectors(vectors, model=bert, corpus=digest) is None
    hidden = np.load(io.BytesIO(whole))
    hidden[1, 3, 2] = np.inf
    np.save(npy, hidden)
    assert load_vectors(vectors, model=bert, corpus=digest) is None
    np.save(npy, hidden[:, 1:])  # finite, but not the index's tokens
    assert load_vectors(vectors, model=bert, corpus=digest) is None
    assert not prep.status(bert, SENTENCES, directory=tmp_path)[0].ready


def test_the_command_prepares_checks_and_counts_on_stderr(llama, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(prep, "corpus", lambda: SENTENCES)
    assert main(["prepare", "--check", "--model", llama]) == 0
    out = capsys.readouterr().out
    assert out.count("missing") == 3 and "ready" not in out
    assert main(["prepare", "--model", llama, "--format", "json"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)["prepared"]
    assert [(r["what"], r["ready"]) for r in rows] == [
        (prep.VECTORS, True),
        (prep.ATLAS, True),
        (prep.INDUCTION, True),
    ]
    assert f"sentence {len(SENTENCES)} of {len(SENTENCES)}, done in" in captured.err
    assert main(["prepare", "--check", "--model", llama]) == 0
    out = capsys.readouterr().out
    assert out.count("ready") == 3 and str(tmp_path) in out


def test_the_progress_line_counts_and_estimates():
    stream = io.StringIO()
    line = prep.ProgressLine("m", stream, every=0.0)
    line(0, 4)
    line(1, 4)
    line(4, 4)
    text = stream.getvalue().splitlines()
    assert text[0].startswith("m: sentence 1 of 4, about ") and text[0].endswith(" left")
    assert text[1].startswith("m: sentence 4 of 4, done in ")
