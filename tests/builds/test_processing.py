"""Stanza processing of outputs (srlens.processing): real stanza, real models, real DuckDB files."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from srlens.loaders.load import load_outputs, load_treebank
from srlens.processing import STANZA_DIR_ENV, ProcessingError, ensure_cache_schema, process_pending, stanza_processor_id
from srlens.processing.parse import resolve_device
from tests.conftest import EN_EWT_TEST
from tests.support.stanza import (
    CONTRACTION,
    DOGS,
    MODELS,
    TWO_SENTENCES,
    cache_rows,
    require_models,
    write_lines,
    write_treebank,
)

MODEL_FILES = ("tokenize.pt", "mwt.pt", "pos.pt", "lemma.pt", "depparse.pt")

SR_ONLY = "Cats sleep all day ."


def en_folder():
    return MODELS / "en" if (MODELS / "en" / "tokenize.pt").is_file() else MODELS


def connect(path):
    return duckdb.connect(str(path))


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    """A warehouse with two overlapping text runs, an sr run and a conllu run, processed once."""
    models = require_models()
    root = tmp_path_factory.mktemp("processing")
    warehouse = root / "w.duckdb"
    refs = write_treebank(root / "tb.conllu")
    load_treebank(warehouse, root / "tb.conllu", "en_ewt_head")
    run_a = [DOGS, "", CONTRACTION, TWO_SENTENCES] + refs[4:]
    run_b = [DOGS, DOGS, CONTRACTION, TWO_SENTENCES] + [r.lower() if i % 2 else r for i, r in enumerate(refs[4:])]
    write_lines(root / "a.txt", run_a)
    write_lines(root / "b.txt", run_b)
    load_outputs(warehouse, root / "a.txt", "en_ewt_head", "team1", "a", fmt="text")
    load_outputs(warehouse, root / "b.txt", "en_ewt_head", "team1", "b", fmt="text")
    sr_ids = [
        line.split("= ", 1)[1]
        for line in (root / "tb.conllu").read_text().split("\n")
        if line.startswith("# sent_id = ")
    ]
    (root / "c.sr").write_text(
        f"# sent_id = {sr_ids[0]}\n# text = {SR_ONLY}\n\n# sent_id = {sr_ids[1]}\n# text = {DOGS}\n\n", encoding="utf-8"
    )
    load_outputs(warehouse, root / "c.sr", "en_ewt_head", "team2", "sr", fmt="sr", allow_partial=True)
    # A run loaded as CoNLL-U is already processed: the treebank itself, whose texts 1-4 no text run has.
    load_outputs(warehouse, root / "tb.conllu", "en_ewt_head", "team3", "parsed", fmt="conllu")
    expected = {t for t in run_a + run_b + [SR_ONLY, DOGS] if t.strip()}
    con = connect(warehouse)
    try:
        first = process_pending(con, model_dir=models, progress=False)
        second = process_pending(con, model_dir=models, progress=False)
    finally:
        con.close()
    return {
        "warehouse": warehouse,
        "models": models,
        "refs": refs,
        "expected": expected,
        "first": first,
        "second": second,
    }


def words_of(con, text):
    return con.execute(
        """
        select w.word_idx, w.token_idx, w.form, w.lemma, w.upos, w.xpos, w.feats, w.head, w.deprel
        from cache.parsed_words w join cache.parsed_texts t using (text_hash, processor)
        where t.text = ? order by w.word_idx""",
        [text],
    ).fetchall()


@pytest.mark.slow
def test_every_distinct_nonempty_text_parsed_once(parsed):
    con = connect(parsed["warehouse"])
    texts = con.execute("select text from cache.parsed_texts").fetchall()
    assert sorted(t for (t,) in texts) == sorted(parsed["expected"])
    first = parsed["first"]
    assert first["texts_parsed"] == len(parsed["expected"]) and first["texts_cached"] == 0
    assert first["languages"]["en"]["pipeline_loaded"]
    # The same texts again (and within and across runs) are not parsed twice.
    second = parsed["second"]
    assert second["texts_parsed"] == 0 and second["texts_cached"] == len(parsed["expected"])
    assert second["languages"]["en"]["pipeline_loaded"] is False
    assert con.execute("select count(*) from cache.parsed_texts").fetchone()[0] == len(parsed["expected"])
    assert con.execute("select count(*) from cache.parsed_texts where trim(text) = ''").fetchone()[0] == 0
    # The conllu run's texts of sentences 1-4 appear in no text run: not processed.
    assert not set(parsed["refs"][:4]) & {t for (t,) in texts}
    con.close()


@pytest.mark.slow
def test_text_hash_is_duckdb_sha256_and_processor_recorded(parsed):
    con = connect(parsed["warehouse"])
    rows = con.execute("select text_hash, text, sha256(text), processor, language from cache.parsed_texts").fetchall()
    pid = stanza_processor_id("en", parsed["models"])
    for text_hash, text, duck, processor, language in rows:
        assert text_hash == duck == hashlib.sha256(text.encode("utf-8")).hexdigest()
        assert processor == pid and language == "en"
    assert con.execute("select distinct processor from cache.parsed_words").fetchall() == [(pid,)]
    con.close()


@pytest.mark.slow
def test_words_are_consistent_with_texts(parsed):
    """Per text: word_idx 1..n, token_idx from 1 in steps of 0 or 1, heads in range, one root a sentence."""
    con = connect(parsed["warehouse"])
    bad = con.execute("""
        with w as (
            select *, token_idx - lag(token_idx) over (partition by text_hash, processor order by word_idx) as step
            from cache.parsed_words)
        select t.text from cache.parsed_texts t left join w using (text_hash, processor)
        group by t.text, t.words, t.sentences
        having count(w.word_idx) <> t.words or min(w.word_idx) <> 1 or max(w.word_idx) <> t.words
            or count(distinct w.word_idx) <> t.words or min(w.token_idx) <> 1
            or bool_or(w.step not in (0, 1)) or min(w.head) < 0 or max(w.head) > t.words
            or count(*) filter (where w.head = 0) <> t.sentences or bool_or(w.head = w.word_idx)
    """).fetchall()
    assert bad == []
    nulls = "select count(*) from cache.parsed_words where form is null or upos is null or deprel is null"
    assert con.execute(nulls).fetchone()[0] == 0
    con.close()


@pytest.mark.slow
def test_simple_sentence(parsed):
    con = connect(parsed["warehouse"])
    words = words_of(con, DOGS)
    con.close()
    assert [w[2] for w in words] == ["The", "dogs", "barked", "."]
    assert [w[3] for w in words] == ["the", "dog", "bark", "."]
    assert [w[1] for w in words] == [1, 2, 3, 4]
    assert [w[4] for w in words] == ["DET", "NOUN", "VERB", "PUNCT"]
    heads = {w[2]: w[7] for w in words}
    assert heads["barked"] == 0 and heads["dogs"] == 3 and heads["The"] == 2 and heads["."] == 3
    assert {w[2]: w[6] for w in words}["."] is None  # absent feats are NULL, not '_'


@pytest.mark.slow
def test_contractions_split_into_words_sharing_a_token(parsed):
    con = connect(parsed["warehouse"])
    words = words_of(con, CONTRACTION)
    con.close()
    forms = [w[2] for w in words]
    assert forms == ["I", "do", "n't", "know", "what", "I", "'m", "doing", "."]
    tokens = [w[1] for w in words]
    assert tokens == [1, 2, 2, 3, 4, 5, 5, 6, 7]
    lemmas = dict(zip(forms, (w[3] for w in words)))
    assert lemmas["n't"] == "not" and lemmas["'m"] == "be" and lemmas["doing"] == "do"


@pytest.mark.slow
def test_two_sentences_are_flattened(parsed):
    con = connect(parsed["warehouse"])
    words = words_of(con, TWO_SENTENCES)
    sentences = con.execute(
        "select sentences, words from cache.parsed_texts where text = ?", [TWO_SENTENCES]
    ).fetchone()
    con.close()
    assert sentences == (2, 7)
    assert [w[2] for w in words] == ["He", "left", ".", "She", "stayed", "home", "."]
    assert [w[0] for w in words] == [1, 2, 3, 4, 5, 6, 7]
    assert [w[1] for w in words] == [1, 2, 3, 4, 5, 6, 7]
    heads = [w[7] for w in words]
    assert [i for i, h in enumerate(heads, start=1) if h == 0] == [2, 5]
    # The second sentence's heads are renumbered into it: She and home hang on stayed (word 5).
    assert heads[3] == 5 and heads[5] == 5 and all(4 <= h <= 7 for h in heads[3:] if h)
    assert all(1 <= h <= 3 for h in heads[:3] if h)


@pytest.mark.slow
def test_second_run_loads_neither_stanza_nor_torch(parsed):
    """In a fresh interpreter, processing an up-to-date warehouse never imports stanza or torch."""
    code = (
        "import sys, json, duckdb\n"
        "from srlens.processing import process_pending\n"
        f"con = duckdb.connect({str(parsed['warehouse'])!r})\n"
        f"counts = process_pending(con, model_dir={str(parsed['models'])!r}, progress=False)\n"
        "print(json.dumps([counts['texts_parsed'], counts['texts_cached'],\n"
        "                  'stanza' in sys.modules, 'torch' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0, len(parsed["expected"]), False, False]


@pytest.mark.slow
def test_missing_language_model_fails_fast_and_parses_nothing(parsed, tmp_path):
    """A 'fr' corpus without models: a ProcessingError naming fr and the aligned processor, raised
    before the English texts of the same warehouse are parsed (nothing in the parse cache)."""
    warehouse = tmp_path / "w.duckdb"
    write_treebank(tmp_path / "tb.conllu", n=3)
    load_treebank(warehouse, tmp_path / "tb.conllu", "en_small")
    load_treebank(warehouse, tmp_path / "tb.conllu", "fr_small", language="fr")
    write_lines(tmp_path / "run.txt", ["Le chien aboie .", "Bonjour !", "Au revoir ."])
    load_outputs(warehouse, tmp_path / "run.txt", "en_small", "t", "r")
    load_outputs(warehouse, tmp_path / "run.txt", "fr_small", "t", "r")
    con = connect(warehouse)
    with pytest.raises(ProcessingError) as info:
        process_pending(con, model_dir=parsed["models"], progress=False)
    message = str(info.value)
    assert "'fr'" in message and "aligned" in message and "fr_small" in message
    assert "stanza.download('fr')" in message and "\n" not in message
    assert con.execute("select count(*) from cache.parsed_texts").fetchone()[0] == 0
    con.close()


def test_conllu_runs_alone_need_no_models(tmp_path):
    """Only text and sr runs are processed: a language whose runs are all CoNLL-U needs no models."""
    if not EN_EWT_TEST.is_file():
        pytest.skip("en_ewt test not found")
    warehouse = tmp_path / "w.duckdb"
    write_treebank(tmp_path / "tb.conllu", n=3)
    load_treebank(warehouse, tmp_path / "tb.conllu", "fr_small", language="fr")
    load_outputs(warehouse, tmp_path / "tb.conllu", "fr_small", "t", "parsed", fmt="conllu")
    con = connect(warehouse)
    counts = process_pending(con, model_dir=tmp_path / "no-models-here", progress=False)
    assert counts == {"texts_parsed": 0, "texts_cached": 0, "words_parsed": 0, "device": None, "languages": {}}
    assert con.execute("select count(*) from cache.parsed_words").fetchone()[0] == 0
    con.close()


def link_models(folder, files=MODEL_FILES):
    folder.mkdir(parents=True)
    for name in files:
        (folder / name).symlink_to(en_folder() / name)
    return folder


@pytest.mark.slow  # stanza
def test_processor_id_and_model_folder_rule(tmp_path, monkeypatch):
    require_models()
    monkeypatch.delenv(STANZA_DIR_ENV, raising=False)
    pid = stanza_processor_id("en", MODELS)
    import stanza

    assert pid.startswith(f"stanza-{stanza.__version__}/en/") and len(pid.rsplit("/", 1)[1]) == 8
    # Content, not location: the same files elsewhere give the same id, in either folder form.
    link_models(tmp_path / "many" / "en")
    assert stanza_processor_id("en", tmp_path / "many") == pid
    assert stanza_processor_id("en", tmp_path / "many" / "en") == pid
    monkeypatch.setenv(STANZA_DIR_ENV, str(tmp_path / "many"))
    assert stanza_processor_id("en") == pid
    # Other models, other id: here, no mwt.
    link_models(tmp_path / "nomwt" / "en", [f for f in MODEL_FILES if f != "mwt.pt"])
    assert stanza_processor_id("en", tmp_path / "nomwt") != pid
    # A single-language folder serves only the language it is named after.
    link_models(tmp_path / "models")
    with pytest.raises(ProcessingError, match="name the folder 'en'"):
        stanza_processor_id("en", tmp_path / "models")
    with pytest.raises(ProcessingError, match="'fr'.*aligned"):
        stanza_processor_id("fr", tmp_path / "many")
    # An incomplete folder is named as such.
    link_models(tmp_path / "partial" / "en", ["tokenize.pt", "pos.pt"])
    with pytest.raises(ProcessingError, match="lacks lemma.pt, depparse.pt"):
        stanza_processor_id("en", tmp_path / "partial")


@pytest.mark.slow  # stanza
def test_models_in_stanza_download_layout(tmp_path, monkeypatch):
    """With no folder configured, stanza's own folder (STANZA_RESOURCES_DIR) is read as stanza.download
    fills it: resources.json's default package, files under <lang>/<processor>/<package>.pt."""
    require_models()
    root = tmp_path / "stanza_resources"
    packages = {"tokenize": "combined", "mwt": "combined", "pos": "small", "lemma": "small", "depparse": "small"}
    for processor, package in packages.items():
        (root / "en" / processor).mkdir(parents=True)
        (root / "en" / processor / f"{package}.pt").symlink_to(en_folder() / f"{processor}.pt")
    resources = {
        "en": {
            "lang_name": "English",
            "packages": {"default": packages},
            **{p: {pkg: {}} for p, pkg in packages.items()},
        },
        "english": {"alias": "en"},
    }
    (root / "resources.json").write_text(json.dumps(resources))
    monkeypatch.delenv(STANZA_DIR_ENV, raising=False)
    monkeypatch.setenv("STANZA_RESOURCES_DIR", str(root))
    write_treebank(tmp_path / "tb.conllu", n=2)
    warehouse = tmp_path / "w.duckdb"
    load_treebank(warehouse, tmp_path / "tb.conllu", "en_two")
    write_lines(tmp_path / "run.txt", [CONTRACTION, DOGS])
    load_outputs(warehouse, tmp_path / "run.txt", "en_two", "t", "r")
    con = connect(warehouse)
    counts = process_pending(con, progress=False)
    assert counts["texts_parsed"] == 2
    assert counts["languages"]["en"]["processor"] != stanza_processor_id("en", MODELS)
    assert [w[2] for w in words_of(con, CONTRACTION)][:3] == ["I", "do", "n't"]
    # A missing model file of that layout is reported, not downloaded.
    (root / "en" / "depparse" / "small.pt").unlink()
    with pytest.raises(ProcessingError, match="missing .*depparse/small.pt"):
        stanza_processor_id("en")
    con.close()


def test_ensure_cache_schema_is_idempotent(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    ensure_cache_schema(con)
    ensure_cache_schema(con)
    columns = con.execute("""
        select table_name, column_name, data_type from information_schema.columns
        where table_schema = 'cache' order by table_name, ordinal_position""").fetchall()
    con.close()
    assert [(c, t) for tab, c, t in columns if tab == "parsed_texts"] == [
        ("text_hash", "VARCHAR"),
        ("processor", "VARCHAR"),
        ("language", "VARCHAR"),
        ("text", "VARCHAR"),
        ("words", "INTEGER"),
        ("sentences", "INTEGER"),
        ("parsed_at", "TIMESTAMP"),
        ("chunks", "INTEGER"),
    ]
    assert [(c, t) for tab, c, t in columns if tab == "parsed_words"] == [
        ("text_hash", "VARCHAR"),
        ("processor", "VARCHAR"),
        ("word_idx", "INTEGER"),
        ("token_idx", "INTEGER"),
        ("form", "VARCHAR"),
        ("lemma", "VARCHAR"),
        ("upos", "VARCHAR"),
        ("xpos", "VARCHAR"),
        ("feats", "VARCHAR"),
        ("head", "INTEGER"),
        ("deprel", "VARCHAR"),
    ]


def test_default_model_folder_is_stanzas(monkeypatch):
    """Computed without importing stanza, but the folder stanza itself would use."""
    from stanza.resources.common import USER_CACHE_DIR

    from srlens.processing import stanza_default_dir

    assert stanza_default_dir() == Path(USER_CACHE_DIR) / "resources"
    monkeypatch.delenv(STANZA_DIR_ENV, raising=False)
    monkeypatch.delenv("STANZA_RESOURCES_DIR", raising=False)
    if (stanza_default_dir() / "xx").exists():
        pytest.skip("a language 'xx' exists in stanza's default folder")
    with pytest.raises(ProcessingError, match="'xx'.*stanza's default model folder"):
        stanza_processor_id("xx")


@pytest.mark.slow
def test_worker_processes_give_the_parses_of_one_process(tmp_path):
    """Two worker processes, batches of 4, texts cut in chunks of 12 words that straddle batches:
    row for row the cache one process writes (each batch is parsed whole by one process)."""
    models = require_models()
    refs = write_treebank(tmp_path / "tb.conllu", n=24)
    long_text = " ".join(refs[:6])  # 80 words or more: 7 chunks of at most 12, or more
    write_lines(tmp_path / "run.txt", refs[:23] + [long_text])
    one = tmp_path / "one.duckdb"
    load_treebank(one, tmp_path / "tb.conllu", "en_head")
    load_outputs(one, tmp_path / "run.txt", "en_head", "t", "r")
    two = tmp_path / "two.duckdb"
    two.write_bytes(one.read_bytes())
    counts = {}
    for warehouse, workers in ((one, 1), (two, 2)):
        con = connect(warehouse)
        counts[workers] = process_pending(con, models, batch_size=4, progress=False, limit=12, workers=workers)
        con.close()
    assert counts[2]["languages"]["en"]["workers"] == 2 and counts[1]["languages"]["en"]["workers"] == 1
    assert counts[2]["texts_parsed"] == counts[1]["texts_parsed"] == 24
    assert counts[2]["languages"]["en"]["texts_chunked"] >= 1 and counts[2]["device"] == "cpu"
    words, texts = cache_rows(two)
    assert (words, texts) == cache_rows(one)
    chunks = -(-len(long_text.split()) // 12)
    assert chunks >= 7 and [t[-1] for t in texts if t[3] == long_text] == [chunks]


def test_device_auto_is_cpu_here_and_cuda_without_a_gpu_is_one_line(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    assert resolve_device("auto") == resolve_device(None) == resolve_device("cpu") == "cpu"
    models = require_models()
    write_treebank(tmp_path / "tb.conllu", n=2)
    warehouse = tmp_path / "w.duckdb"
    load_treebank(warehouse, tmp_path / "tb.conllu", "en_two")
    write_lines(tmp_path / "run.txt", [DOGS, CONTRACTION])
    load_outputs(warehouse, tmp_path / "run.txt", "en_two", "t", "r")
    con = connect(warehouse)
    with pytest.raises(ProcessingError) as info:
        process_pending(con, models, progress=False, device="cuda")
    assert str(info.value).startswith("--device cuda: torch ") and "sees no CUDA GPU" in str(info.value)
    assert "\n" not in str(info.value)
    assert con.execute("select count(*) from cache.parsed_texts").fetchone()[0] == 0
    con.close()
    # The command line: one line, exit code 2, the warehouse unchanged.
    from srlens.cli import main

    before = warehouse.read_bytes()
    code = main(["--warehouse", str(warehouse), "build", "--stanza-dir", str(models), "--device", "cuda"])
    assert code == 2 and warehouse.read_bytes() == before
    first, error = capsys.readouterr().err.splitlines()  # the build says its processor, then the one error line
    assert first.startswith("srlens: processor stanza: a new warehouse"), first
    assert error.startswith("srlens: error: --device cuda: torch "), error
