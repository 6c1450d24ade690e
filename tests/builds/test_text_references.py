"""Text references (srlens load-references, SPEC 13) built with real stanza and real dbt: the identity on
every sentence of en_ewt test with both processors, the parse cached and reparsed only where changed."""

import shutil

import duckdb
import pytest

from srlens.build import build
from srlens.loaders.load import load_outputs
from srlens.loaders.references import load_references
from srlens.processing import process_pending
from srlens.processing.shards import load_parses, parse_shard
from tests.conftest import EN_EWT_TEST
from tests.support.stanza import CONTRACTION, DOGS, TWO_SENTENCES, require_models, write_lines

pytestmark = pytest.mark.slow


def en_ewt_texts():
    return [
        line[len("# text = ") :]
        for line in EN_EWT_TEST.read_text(encoding="utf-8").split("\n")
        if line.startswith("# text = ")
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{processor: warehouse}: en_ewt test's `# text` lines as text references and as a run of their own,
    built with the aligned processor, then (a copy) with stanza."""
    models = require_models()
    root = tmp_path_factory.mktemp("text_references")
    texts = root / "en_ewt_test.txt"
    write_lines(texts, en_ewt_texts())
    aligned = root / "aligned.duckdb"
    load_references(aligned, texts, "en_ewt_text", "en")
    load_outputs(aligned, texts, "en_ewt_text", "self", "copy")
    build(aligned, echo=False, processor="aligned", stanza_dir=models)
    stanza = root / "stanza.duckdb"
    shutil.copy(aligned, stanza)
    build(stanza, echo=False, processor="stanza", stanza_dir=models)
    return {"aligned": aligned, "stanza": stanza, "models": models}


def rows(warehouse, sql):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("processor", ["aligned", "stanza"])
def test_the_reference_text_scores_dea_and_string_accuracy_one_on_every_sentence(built, processor):
    n = len(en_ewt_texts())
    total, string_one, only_punctuation, dea_one, dea_undefined, edges_missed = rows(
        built[processor],
        """select count(*), count(*) filter (where simple_string_accuracy = 1 and generation_string_accuracy = 1),
                  count(*) filter (where simple_string_accuracy is null and reference_words = 0 and output_words = 0),
                  count(*) filter (where dea = 1), count(*) filter (where dea is null and reference_words <= 1),
                  sum(dea_edges - dea_matched)
           from sentence_scores""",
    )[0]
    assert total == n == 2077
    # a line of only punctuation ('...', '?') has no word to compare: its accuracies are undefined (NULL)
    assert (string_one, only_punctuation) == (n - 33, 33)
    assert dea_one + dea_undefined == n  # DEA is NULL only for a tree of one word or none (SPEC 3)
    assert edges_missed == 0
    # the run's processor is the one asked for; the trees are stanza's either way
    assert rows(built[processor], "select distinct processor from sentence_scores") == [
        (
            processor
            if processor == "aligned"
            else rows(built[processor], "select reference_parser from corpus_stats")[0][0],
        )
    ]


def test_parsed_trees_say_so(built):
    reference, parser, sentences = rows(
        built["aligned"], "select reference, reference_parser, sentences from corpus_stats"
    )[0]
    assert (reference, sentences) == ("parsed", 2077)
    assert parser.startswith("stanza-") and "/en/" in parser
    signature = rows(built["aligned"], "select signature from meta.builds")[0][0]
    assert signature.endswith(f"|ref:parsed:{parser}")
    assert "|proc:aligned|" in signature
    # a text that stanza splits in two is one tree with one root: its later sentence is parataxis
    roots = rows(
        built["aligned"],
        """select count(*) filter (where head_pos = 0), count(*) from intermediate.int_analysis_words
           where corpus = 'en_ewt_text' group by sent_idx having count(*) filter (where head_pos = 0) <> 1""",
    )
    assert roots == []


def test_a_second_build_parses_nothing(built):
    con = duckdb.connect(str(built["aligned"]), read_only=False)
    try:
        done = process_pending(con, model_dir=built["models"], progress=False, references_only=True)
    finally:
        con.close()
    assert (done["texts_parsed"], done["texts_cached"]) == (0, len(set(en_ewt_texts())))


def test_a_changed_reference_reparses_only_its_changed_sentences(tmp_path):
    models = require_models()
    wh = tmp_path / "wh.duckdb"
    refs = tmp_path / "refs.txt"
    write_lines(refs, [DOGS, CONTRACTION, TWO_SENTENCES])
    load_references(wh, refs, "en_ref", "en")

    def parse():
        con = duckdb.connect(str(wh))
        try:
            return process_pending(con, model_dir=models, progress=False, references_only=True)["texts_parsed"]
        finally:
            con.close()

    assert parse() == 3
    write_lines(refs, [DOGS, "I do n't know .", TWO_SENTENCES])
    assert load_references(wh, refs, "en_ref", "en").changed == 1
    assert parse() == 1
    assert parse() == 0


def test_parse_shard_and_load_parses_cover_text_references(tmp_path):
    """A cluster parses references as it parses outputs: a shard file, loaded back, leaves nothing to parse."""
    models = require_models()
    wh = tmp_path / "wh.duckdb"
    write_lines(tmp_path / "refs.txt", [DOGS, CONTRACTION])
    load_references(wh, tmp_path / "refs.txt", "en_ref", "en")
    shard = tmp_path / "shard.parquet"
    assert parse_shard(wh, 1, 1, shard, models, device="cpu", progress=False)["texts"] == 2
    assert load_parses(wh, [shard], models)[0] == 2
    con = duckdb.connect(str(wh))
    try:
        assert process_pending(con, model_dir=models, progress=False, references_only=True)["texts_parsed"] == 0
    finally:
        con.close()
