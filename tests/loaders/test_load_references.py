"""srlens load-references: text references are loaded like a treebank minus its tokens, refused with one
clear line naming the file and line, all or nothing, and replace a treebank (or are replaced) only when asked."""

import duckdb
import pytest

from srlens.loaders.errors import LoadError
from srlens.loaders.load import load_outputs, load_treebank
from srlens.loaders.references import load_references
from srlens.processing import STANZA_DIR_ENV
from srlens.processing.cache import pending_texts
from tests.conftest import table_snapshot
from tests.support.commands import cli
from tests.support.mutants import GOOD
from tests.support.stanza import require_models


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def _rows(warehouse, sql):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture
def models(monkeypatch):
    monkeypatch.setenv(STANZA_DIR_ENV, str(require_models()))


def test_text_references_are_sentences_1_to_n_without_tokens(tmp_path):
    wh = tmp_path / "wh.duckdb"
    refs = _write(tmp_path / "refs.txt", "The dogs barked.\n  Cats sleep .  \n")
    done = load_references(wh, refs, "en_ref", "en")
    assert (done.sentences, done.changed, done.replaced) == (2, None, None)
    assert _rows(wh, "select sent_idx, sent_id, text, first_line from raw.sentences order by 1") == [
        (1, "1", "The dogs barked.", 1),
        (2, "2", "Cats sleep .", 2),
    ]
    assert _rows(wh, "select corpus, language, sentences, words, reference from raw.treebank_files") == [
        ("en_ref", "en", 2, 6, "text")
    ]
    assert _rows(wh, "select count(*) from raw.tokens") == [(0,)]
    # The parse's texts: the references, whatever processor parses the outputs.
    con = duckdb.connect(str(wh), read_only=True)
    try:
        pending = pending_texts(con, "en", "stanza-x/en/0", references_only=True)
    finally:
        con.close()
    assert [text for text, _ in pending] == ["Cats sleep .", "The dogs barked."]


def test_reload_is_idempotent_and_counts_changed_sentences(tmp_path):
    wh = tmp_path / "wh.duckdb"
    refs = _write(tmp_path / "refs.txt", "A b.\nC d.\nE f.\n")
    load_references(wh, refs, "en_ref", "en")
    before = table_snapshot(wh)
    again = load_references(wh, refs, "en_ref", "en")
    assert (again.changed, again.replaced) == (0, "text")
    after = table_snapshot(wh)
    del before["treebank_files"], after["treebank_files"]  # loaded_at differs
    assert after == before
    load_outputs(wh, _write(tmp_path / "run.txt", "A b.\nC d.\nE f.\n"), "en_ref", "t", "r")
    changed = load_references(wh, _write(refs, "A b.\nC x.\nE f.\n"), "en_ref", "en")
    assert (changed.changed, changed.runs) == (1, 1)


def test_sr_blocks_keep_their_sent_ids(tmp_path):
    wh = tmp_path / "wh.duckdb"
    refs = _write(tmp_path / "refs.sr", "# sent_id = a-1\n# text = One.\n\n# sent_id = b-2\n# text = Two.\n")
    load_references(wh, refs, "en_ref", "en", fmt="sr")
    assert _rows(wh, "select sent_idx, sent_id, text, first_line from raw.sentences order by 1") == [
        (1, "a-1", "One.", 1),
        (2, "b-2", "Two.", 4),
    ]


BAD_REFERENCES = [
    ("empty sentence", "text", "One.\n\nThree.\n", ":2 (sentence 2): empty reference sentence"),
    (
        "repeated sent_id",
        "sr",
        "# sent_id = a\n# text = One.\n\n# sent_id = a\n# text = Two.\n",
        ":4 (sentence a): sent_id repeated (first at line 1)",
    ),
    (
        "a CoNLL-U file",
        "text",
        GOOD,
        "this is a CoNLL-U treebank: load it with `srlens load-treebank`",
    ),
]


@pytest.mark.parametrize(("why", "fmt", "content", "message"), BAD_REFERENCES, ids=[b[0] for b in BAD_REFERENCES])
def test_bad_references_load_nothing(tmp_path, why, fmt, content, message):
    wh = tmp_path / "wh.duckdb"
    load_references(wh, _write(tmp_path / "old.txt", "Old.\n"), "en_ref", "en")
    before = table_snapshot(wh)
    with pytest.raises(LoadError) as err:
        load_references(wh, _write(tmp_path / "refs.txt", content), "en_ref", "en", fmt=fmt)
    assert str(err.value).startswith(str(tmp_path / "refs.txt"))
    assert message in str(err.value)
    assert table_snapshot(wh) == before


def test_conllu_error_names_the_word_line(tmp_path):
    with pytest.raises(LoadError) as err:
        load_references(tmp_path / "wh.duckdb", _write(tmp_path / "tb.conllu", GOOD), "en_ref", "en")
    first_word = next(k for k, line in enumerate(GOOD.split("\n"), start=1) if line.startswith("1\t"))
    assert err.value.line == first_word
    assert not (tmp_path / "wh.duckdb").exists()


def test_a_treebank_and_text_references_replace_each_other_only_with_replace(tmp_path, capsys):
    wh = tmp_path / "wh.duckdb"
    tb = _write(tmp_path / "good.conllu", GOOD)
    refs = _write(tmp_path / "refs.txt", "Dogs bark.\nCats don't sleep.\n")
    load_treebank(wh, tb, "toy", "en")
    before = table_snapshot(wh)
    with pytest.raises(LoadError, match="has a reference treebank: --replace replaces it"):
        load_references(wh, refs, "toy", "en")
    assert table_snapshot(wh) == before
    done = load_references(wh, refs, "toy", "en", replace=True)
    assert done.replaced == "treebank"
    assert _rows(wh, "select reference from raw.treebank_files") == [("text",)]
    assert _rows(wh, "select count(*) from raw.tokens") == [(0,)]
    with pytest.raises(LoadError, match="has text references \\(load-references\\): --replace replaces them"):
        load_treebank(wh, tb, "toy", "en")
    load_treebank(wh, tb, "toy", "en", replace=True)
    assert _rows(wh, "select reference from raw.treebank_files") == [("treebank",)]


def test_cli_refuses_a_language_without_models_offline(tmp_path, capsys, models):
    wh = tmp_path / "wh.duckdb"
    refs = _write(tmp_path / "refs.txt", "Hallo Welt.\n")
    code, out, err = cli(capsys, "--warehouse", wh, "load-references", refs, "--corpus", "de_ref", "--language", "de")
    assert code != 0
    assert "No usable stanza models for language 'de'" in err
    assert str(refs) in err  # the models are needed to parse this file
    assert len(err.strip().splitlines()) == 1
    assert not wh.exists()


def test_cli_loads_and_says_what_a_reload_invalidates(tmp_path, capsys, models):
    wh = tmp_path / "wh.duckdb"
    refs = _write(tmp_path / "refs.txt", "Dogs bark.\nCats sleep.\n")
    code, out, _ = cli(capsys, "--warehouse", wh, "load-references", refs, "--corpus", "en_ref", "--language", "en")
    assert code == 0
    assert "loaded 2 reference sentences as corpus en_ref" in out
    load_outputs(wh, refs, "en_ref", "t", "r")
    _write(refs, "Dogs bark.\nCats purr.\n")
    code, out, _ = cli(capsys, "--warehouse", wh, "load-references", refs, "--corpus", "en_ref", "--language", "en")
    assert code == 0
    assert "1 reference sentence(s) changed: their parse and every score of the corpus's 1 run(s)" in out
