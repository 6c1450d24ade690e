"""Loading: bad input gets a clear error and changes nothing; loads are idempotent."""

import duckdb
import pytest

from srlens.loaders.errors import LoadError
from srlens.loaders.load import load_outputs, load_treebank
from srlens.cli import main
from tests.conftest import table_snapshot

GOOD = """# sent_id = s1
# text = Dogs bark.
1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\tSpaceAfter=No
3\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = s2
# text = Cats don't sleep.
1\tCats\tcat\tNOUN\tNNS\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tsleep\tsleep\tVERB\tVB\t_\t0\troot\t_\t_
4.1\tsleeps\tsleep\tVERB\tVB\t_\t_\t_\t4:conj\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

"""


@pytest.fixture
def warehouse(tmp_path):
    wh = tmp_path / "wh.duckdb"
    good = tmp_path / "good.conllu"
    good.write_text(GOOD)
    load_treebank(wh, good, "toy")
    load_outputs(wh, _write(tmp_path / "run.txt", "Dogs bark .\nCats do n't sleep .\n"), "toy", "t", "r")
    return wh


def _write(path, text, mode="w"):
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _break_line(old, new):
    assert old in GOOD
    return GOOD.replace(old, new, 1)


BAD_TREEBANKS = [
    ("wrong column count", _break_line("1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\tnsubj\t_\t_",
                                       "1\tDogs\tdog\tNOUN\tNNS\t2\tnsubj\t_\t_"),
     3, "s1", "expected 10 tab-separated columns, found 9"),
    ("non-integer head", _break_line("2\tdo\tdo\tAUX\tVBP\t_\t4\t", "2\tdo\tdo\tAUX\tVBP\t_\tfour\t"),
     11, "s2", "head 'four' is not a non-negative integer"),
    ("head out of range", _break_line("2\tdo\tdo\tAUX\tVBP\t_\t4\t", "2\tdo\tdo\tAUX\tVBP\t_\t9\t"),
     11, "s2", "head 9 is beyond the last word (5)"),
    ("no root", _break_line("2\tbark\tbark\tVERB\tVBP\t_\t0\troot", "2\tbark\tbark\tVERB\tVBP\t_\t1\troot"),
     1, "s1", "no word has head 0"),
    ("two roots", _break_line("1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t2\t", "1\tDogs\tdog\tNOUN\tNNS\tNumber=Plur\t0\t"),
     4, "s1", "2 words have head 0 (1, 2)"),
    ("cycle", _break_line("1\tCats\tcat\tNOUN\tNNS\t_\t4\t", "1\tCats\tcat\tNOUN\tNNS\t_\t3\t")
     .replace("3\tn't\tnot\tPART\tRB\t_\t4\t", "3\tn't\tnot\tPART\tRB\t_\t1\t"),
     9, "s2", "cycle through words 1 -> 3 -> 1"),
    ("missing final blank line", GOOD.rstrip("\n") + "\n", 15, "s2", "not followed by a blank line"),
    ("empty file", "", None, None, "the file is empty"),
    ("word ids out of order", _break_line("4\tsleep\tsleep", "6\tsleep\tsleep"),
     13, "s2", "word id 6 out of order (expected 4)"),
]


@pytest.mark.parametrize("name, text, line, sent_id, message", BAD_TREEBANKS, ids=[c[0] for c in BAD_TREEBANKS])
def test_malformed_treebank_is_refused_and_changes_nothing(warehouse, tmp_path, name, text, line, sent_id,
                                                           message):
    bad = _write(tmp_path / "bad.conllu", text)
    before = table_snapshot(warehouse)
    with pytest.raises(LoadError) as err:
        load_treebank(warehouse, bad, "toy")  # would replace the good treebank if it got that far
    assert message in err.value.message
    assert (err.value.line, err.value.sent_id) == (line, sent_id)
    assert str(err.value).startswith(f"{bad}:{line}" if line else str(bad))
    assert table_snapshot(warehouse) == before


def test_invalid_utf8_names_the_line(warehouse, tmp_path):
    bad = _write(tmp_path / "bad.conllu", GOOD.encode().replace(b"Cats\tcat", b"Ca\xfft\tcat", 1), "wb")
    before = table_snapshot(warehouse)
    with pytest.raises(LoadError) as err:
        load_treebank(warehouse, bad, "other")
    assert err.value.line == 9 and "invalid UTF-8 (byte 0xff)" in str(err.value)
    assert table_snapshot(warehouse) == before


def test_raw_tables_keep_everything(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    ids = [r[0] for r in con.execute(
        "select id from raw.tokens where corpus = 'toy' and sent_idx = 2 order by line_no").fetchall()]
    assert ids == ["1", "2-3", "2", "3", "4", "4.1", "5"]
    (comments, text), = con.execute(
        "select comments, text from raw.sentences where corpus = 'toy' and sent_id = 's2'").fetchall()
    assert comments == ["# sent_id = s2", "# text = Cats don't sleep."] and text == "Cats don't sleep."
    misc = con.execute("select misc from raw.tokens where corpus = 'toy' and form = 'bark'").fetchone()[0]
    assert misc == "SpaceAfter=No"
    con.close()


def test_loading_the_same_treebank_or_run_twice_leaves_one_copy(warehouse, tmp_path):
    before = table_snapshot(warehouse)
    load_treebank(warehouse, _write(tmp_path / "good.conllu", GOOD), "toy")
    load_outputs(warehouse, tmp_path / "run.txt", "toy", "t", "r")
    after = table_snapshot(warehouse)
    strip_time = lambda snap: {t: [tuple(v for v in row if not hasattr(v, "year")) for row in rows]
                               for t, rows in snap.items()}
    assert strip_time(after) == strip_time(before)
    assert len(after["submissions"]) == 1 and len(after["outputs"]) == 2


def test_run_with_wrong_sentence_count_names_both_counts(warehouse, tmp_path):
    before = table_snapshot(warehouse)
    run = _write(tmp_path / "short.txt", "Dogs bark .\n")
    with pytest.raises(LoadError, match="the run has 1 sentences and the treebank has 2"):
        load_outputs(warehouse, run, "toy", "t", "r")
    assert table_snapshot(warehouse) == before  # the earlier copy of t/r survives


def test_sr_blocks_are_matched_by_sent_id_not_order(warehouse, tmp_path):
    run = _write(tmp_path / "run.sr", "# sent_id = s2\n# text = sleep Cats\n\n# sent_id = s1\n# text = bark Dogs\n")
    load_outputs(warehouse, run, "toy", "t", "sr")
    con = duckdb.connect(str(warehouse), read_only=True)
    got = con.execute("select sent_id, text from raw.outputs where submission_id = 'default/toy/t/sr' "
                      "order by sent_idx").fetchall()
    assert got == [("s1", "bark Dogs"), ("s2", "sleep Cats")]
    assert con.execute("select format, matched_by from raw.submissions "
                       "where submission_id = 'default/toy/t/sr'").fetchone() == ("sr", "sent_id")
    con.close()


def test_partial_run_records_missing_sentences_only_when_allowed(warehouse, tmp_path):
    run = _write(tmp_path / "part.sr", "# sent_id = s2\n# text = Cats sleep\n")
    with pytest.raises(LoadError, match="--allow-partial"):
        load_outputs(warehouse, run, "toy", "t", "part")
    assert load_outputs(warehouse, run, "toy", "t", "part", allow_partial=True) == (1, 1)
    con = duckdb.connect(str(warehouse), read_only=True)
    got = con.execute("select sent_id, text, is_missing from raw.outputs "
                      "where submission_id = 'default/toy/t/part' order by sent_idx").fetchall()
    assert got == [("s1", None, True), ("s2", "Cats sleep", False)]
    con.close()


def test_unknown_sent_id_is_an_error_naming_it(warehouse, tmp_path):
    run = _write(tmp_path / "x.sr", "# sent_id = s1\n# text = a\n\n# sent_id = s9\n# text = b\n")
    with pytest.raises(LoadError) as err:
        load_outputs(warehouse, run, "toy", "t", "x")
    assert err.value.sent_id == "s9" and err.value.line == 4 and "not in the treebank" in err.value.message


def test_conllu_run_keeps_its_tokens(warehouse, tmp_path):
    run = _write(tmp_path / "parsed.conllu", GOOD.replace("Cats don't sleep.", "Cats do not sleep."))
    load_outputs(warehouse, run, "toy", "t", "parsed")
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select format from raw.submissions where run = 'parsed'").fetchone() == ("conllu",)
    assert con.execute("select count(*) from raw.output_tokens where submission_id = 'default/toy/t/parsed' "
                       "and sent_idx = 2").fetchone() == (7,)
    con.close()


def test_cli_error_is_one_line_with_no_traceback(warehouse, tmp_path, capsys):
    bad = _write(tmp_path / "bad.conllu", BAD_TREEBANKS[0][1])
    assert main(["--warehouse", str(warehouse), "load-treebank", str(bad), "--corpus", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"srlens: error: {bad}:3 (sentence s1): expected 10")


def test_reloading_a_treebank_with_other_sentences_under_loaded_runs_is_refused(warehouse, tmp_path):
    other = _write(tmp_path / "other.conllu", GOOD.replace("sent_id = s2", "sent_id = s3"))
    with pytest.raises(LoadError, match="has 1 loaded run"):
        load_treebank(warehouse, other, "toy")
