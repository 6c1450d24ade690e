"""Parsing in shards (srlens parse --shard K/N, srlens load-parses): real stanza, real DuckDB files."""

import datetime
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from srlens.cli import main
from srlens.loaders.load import load_outputs, load_treebank
from srlens.processing import process_pending
from srlens.processing.shards import in_shard
from tests.support.stanza import (
    CONTRACTION,
    DOGS,
    TWO_SENTENCES,
    cache_rows,
    require_models,
    write_lines,
    write_treebank,
)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """A warehouse with a text run (the build's texts: 24 sentences, a repeat, a long text parsed in
    chunks of 20 words) and a conllu run, never built; and its parse by process_pending, as a build
    makes it."""
    models = require_models()
    root = tmp_path_factory.mktemp("shards")
    refs = write_treebank(root / "tb.conllu", n=24)
    run = [DOGS, CONTRACTION, TWO_SENTENCES, DOGS] + refs[4:23] + [" ".join(refs[:4])]
    write_lines(root / "run.txt", run)
    warehouse = root / "w.duckdb"
    load_treebank(warehouse, root / "tb.conllu", "en_head")
    load_outputs(warehouse, root / "run.txt", "en_head", "t", "r")
    load_outputs(warehouse, root / "tb.conllu", "en_head", "t", "parsed", fmt="conllu")
    built = root / "built.duckdb"
    built.write_bytes(warehouse.read_bytes())
    con = duckdb.connect(str(built))
    process_pending(con, models, progress=False, limit=20, workers=1)
    con.close()
    return {"root": root, "warehouse": warehouse, "built": built, "models": models, "texts": set(run)}


def srlens(*args):
    return main([str(a) for a in args])


def parse(warehouse, shard, out, models):
    return srlens("--warehouse", warehouse, "parse", "--shard", shard, "--stanza-dir", models, out)


def load(warehouse, models, *files):
    return srlens("--warehouse", warehouse, "load-parses", *files, "--stanza-dir", models)


def fresh(loaded, name):
    path = loaded["root"] / f"{name}.duckdb"
    path.write_bytes(loaded["warehouse"].read_bytes())
    return path


@pytest.mark.slow
def test_two_shards_loaded_give_the_cache_the_build_makes(loaded, monkeypatch, capsys):
    monkeypatch.setenv("SRLENS_STANZA_MAX_WORDS", "20")
    warehouse, models, root = fresh(loaded, "sharded"), loaded["models"], loaded["root"]
    before = warehouse.read_bytes()
    for k in (1, 2):
        assert parse(warehouse, f"{k}/2", root / f"{k}.parquet", models) == 0
    assert warehouse.read_bytes() == before  # opened read-only
    out = capsys.readouterr().out
    assert "pending texts (shard 1/2, on cpu) into" in out and "(shard 2/2, on cpu)" in out
    first, second = (pq.read_table(root / f"{k}.parquet") for k in (1, 2))
    # Deterministic by text: every pending text in exactly one shard, the one its sha256 names.
    assert first.num_rows and second.num_rows and first.num_rows + second.num_rows == len(loaded["texts"])
    assert all(in_shard(h, 1, 2) for h in first["text_hash"].to_pylist())
    assert all(in_shard(h, 2, 2) for h in second["text_hash"].to_pylist())
    assert not list(root.glob(".*.tmp"))

    files = [root / "1.parquet", root / "2.parquet"]
    assert load(warehouse, models, *files) == 0
    n = len(loaded["texts"])
    assert f"loaded the parses of {n} texts from 2 files (0 were cached already)" in capsys.readouterr().out
    assert cache_rows(warehouse) == cache_rows(loaded["built"])  # row for row, every column but parsed_at
    # Idempotent: the same files again (one of them twice) add nothing.
    assert load(warehouse, models, *files, files[0]) == 0
    assert "loaded the parses of 0 texts" in capsys.readouterr().out
    assert cache_rows(warehouse) == cache_rows(loaded["built"])
    # The build then has nothing to parse.
    con = duckdb.connect(str(warehouse))
    counts = process_pending(con, models, progress=False)
    con.close()
    assert counts["texts_parsed"] == 0 and counts["texts_cached"] == len(loaded["texts"])
    # And a shard of a warehouse with nothing pending is an empty file that loads.
    assert parse(warehouse, "1/1", root / "none.parquet", models) == 0
    assert pq.read_table(root / "none.parquet").num_rows == 0
    assert load(warehouse, models, root / "none.parquet") == 0


@pytest.mark.parametrize("bad", ["0/2", "3/2", "1/0", "a/b", "2", "1/2/3", "1/-2", "", "１/２", "²/3"])
def test_shard_must_be_k_of_n(bad, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "srlens.cli", "--warehouse", tmp_path / "w", "parse", "--shard", bad, "o.parquet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"srlens parse: error: argument --shard: expected K/N with 1 <= K <= N, e.g. 3/8, got {bad!r} "
        "(see srlens parse --help)\n"
    )


def cache_tables(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute("select table_name from duckdb_tables() where schema_name = 'cache'").fetchall()
    finally:
        con.close()


def refused(warehouse, models, path, capsys):
    assert load(warehouse, models, path) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"srlens: error: {path}: ") and err.count("\n") == 1, err
    assert cache_tables(warehouse) == []  # nothing loaded: not even the cache's empty tables made
    return err


@pytest.mark.slow
def test_load_parses_refuses_foreign_files_and_loads_nothing(loaded, monkeypatch, capsys, tmp_path):
    models = loaded["models"]
    warehouse = fresh(loaded, "refusing")
    monkeypatch.setenv("SRLENS_STANZA_MAX_WORDS", "20")
    good = tmp_path / "good.parquet"
    assert parse(warehouse, "1/1", good, models) == 0
    table = pq.read_table(good)
    capsys.readouterr()

    # Parsed with another chunk limit: another processor id than this warehouse uses.
    monkeypatch.setenv("SRLENS_STANZA_MAX_WORDS", "500")
    assert "but this warehouse parses en with" in refused(warehouse, models, good, capsys)
    monkeypatch.setenv("SRLENS_STANZA_MAX_WORDS", "20")

    # Not Parquet; Parquet of something else; the right columns without srlens's mark.
    (tmp_path / "text.parquet").write_text("text\n")
    assert "not a Parquet file" in refused(warehouse, models, tmp_path / "text.parquet", capsys)
    pq.write_table(pa.table({"a": [1]}), tmp_path / "other.parquet")
    assert "not a parse file written by `srlens parse`" in refused(
        warehouse, models, tmp_path / "other.parquet", capsys
    )
    pq.write_table(table.replace_schema_metadata(None), tmp_path / "unmarked.parquet")
    assert "not a parse file" in refused(warehouse, models, tmp_path / "unmarked.parquet", capsys)

    # A text the warehouse does not have (its hash made right), and a row whose hash is not its text's.
    rows = table.slice(0, 1).to_pylist()
    import hashlib

    stranger = dict(rows[0], text="Nobody wrote this .", text_hash=hashlib.sha256(b"Nobody wrote this .").hexdigest())
    pq.write_table(pa.Table.from_pylist([stranger], schema=table.schema), tmp_path / "stranger.parquet")
    assert "1 texts that are no output text of this warehouse" in refused(
        warehouse, models, tmp_path / "stranger.parquet", capsys
    )
    forged = dict(rows[0], text_hash="0" * 64)
    pq.write_table(pa.Table.from_pylist([forged], schema=table.schema), tmp_path / "forged.parquet")
    assert "1 malformed texts, e.g. row 1 (text_hash 000000000000): text_hash is not sha256(text)" in refused(
        warehouse, models, tmp_path / "forged.parquet", capsys
    )

    # One bad file among good ones loads nothing at all.
    assert load(warehouse, models, good, tmp_path / "stranger.parquet") == 2
    assert cache_tables(warehouse) == []


@pytest.mark.slow
def test_parse_refuses_an_out_that_is_no_parse_file(loaded, tmp_path, capsys):
    """Checked before parsing: the warehouse and its files by any name, folders, files of the user's."""
    warehouse = tmp_path / "w.duckdb"
    warehouse.write_bytes(loaded["warehouse"].read_bytes())
    before = warehouse.read_bytes()
    (tmp_path / ".w.duckdb.dbt").mkdir()
    for companion in ("w.duckdb.wal", "w.duckdb.lock", ".w.duckdb.dbt/w.duckdb"):  # a build's copy last
        (tmp_path / companion).write_text("kept")
    (tmp_path / "link.duckdb").symlink_to(warehouse)
    (tmp_path / "hard.duckdb").hardlink_to(warehouse)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "folder").mkdir()
    cases = {
        warehouse: "is the warehouse",
        tmp_path / "link.duckdb": "is the warehouse",
        tmp_path / "hard.duckdb": "is the warehouse",
        tmp_path / "w.duckdb.wal": "is the warehouse",
        tmp_path / "w.duckdb.lock": "is the warehouse",
        tmp_path / ".w.duckdb.dbt" / "w.duckdb": "is the warehouse",  # a build's copy
        tmp_path / "notes.txt": "exists and is no parse file",
        tmp_path / "folder": "is a folder",
        tmp_path / "folder" / "..": "is a folder",
        ".": "is a folder",
        "/": "is a folder",
        "": "is a folder",
    }
    for out, said in cases.items():
        assert parse(warehouse, "1/50", out, loaded["models"]) == 2, out
        err = capsys.readouterr().err
        assert err.startswith("srlens: error: ") and said in err and err.count("\n") == 1, (out, err)
    assert warehouse.read_bytes() == before
    companions = ("w.duckdb.wal", "w.duckdb.lock", ".w.duckdb.dbt/w.duckdb")
    assert all((tmp_path / c).read_text() == "kept" for c in companions)
    assert (tmp_path / "notes.txt").read_text() == "mine" and not list(tmp_path.glob(".*.tmp"))
    # A parse file may be replaced.
    out = tmp_path / "p.parquet"
    assert parse(warehouse, "1/50", out, loaded["models"]) == 0
    assert parse(warehouse, "2/50", out, loaded["models"]) == 0
    assert "(shard 2/50" in capsys.readouterr().out


@pytest.fixture
def good(loaded, monkeypatch, tmp_path):
    """A fresh warehouse and its parse file (every text), with the chunk limit the file was parsed with."""
    monkeypatch.setenv("SRLENS_STANZA_MAX_WORDS", "20")
    warehouse = fresh(loaded, f"w{len(list(loaded['root'].glob('w*.duckdb')))}")
    path = tmp_path / "good.parquet"
    assert parse(warehouse, "1/1", path, loaded["models"]) == 0
    return warehouse, path, pq.read_table(path)


def write_rows(table, rows, path):
    """Rows (dicts) as a parse file, srlens's mark kept."""
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return path


@pytest.mark.slow
def test_load_parses_reads_the_named_file_not_a_glob(loaded, good, tmp_path, capsys):
    warehouse, path, table = good
    named = tmp_path / "p[1].parquet"
    named.write_bytes(path.read_bytes())
    other = dict(table.to_pylist()[0], text="Nobody wrote this .")
    write_rows(table, [other], tmp_path / "p1.parquet")  # what the glob p[1].parquet matches
    capsys.readouterr()
    assert load(warehouse, loaded["models"], named) == 0
    assert f"loaded the parses of {table.num_rows} texts" in capsys.readouterr().out


def one_sentence(table):
    return next(r for r in table.to_pylist() if r["sentences"] == 1 and r["words"] >= 3)


@pytest.mark.slow
def test_load_parses_refuses_word_rows_that_are_no_parse(loaded, good, tmp_path, capsys):
    warehouse, _, table = good
    row = one_sentence(table)
    words = row["parsed_words"]
    nonroot = next(i for i, w in enumerate(words) if w["head"] != 0)

    def word(i, **changed):
        return dict(row, parsed_words=[dict(w, **changed) if j == i else w for j, w in enumerate(words)])

    cases = [
        ("word_idx is not 1..words in order", word(0, word_idx=2)),
        ("a head is not in 0..words", word(0, head=len(words) + 1)),
        ("a head is not in 0..words", word(nonroot, head=None)),
        ("token_idx is not >= 1 and non-decreasing", word(0, token_idx=0)),
        ("token_idx is not >= 1 and non-decreasing", word(len(words) - 1, token_idx=1)),
        ("a form is NULL", word(1, form=None)),
        ("roots (head 0) are not one a sentence", word(nonroot, head=0)),
        ("words is not at least 1", dict(row, words=0, parsed_words=[])),
        ("sentences is not at least 1", dict(row, sentences=0)),
        ("chunks is not at least 1", dict(row, chunks=None)),
        ("a required field is NULL", dict(row, parsed_at=None)),
    ]
    for said, bad in cases:
        path = write_rows(table, [bad], tmp_path / "bad.parquet")
        err = refused(warehouse, loaded["models"], path, capsys)
        assert f"1 malformed texts, e.g. row 1 (text_hash {row['text_hash'][:12]}): " in err, err
        assert said in err, (said, err)


@pytest.mark.slow
def test_load_parses_names_the_file_of_a_damaged_parquet(loaded, good, tmp_path, capsys):
    warehouse, path, _ = good
    data = bytearray(path.read_bytes())
    data[4:400] = b"\x0e" * 396  # the first pages overwritten, the footer (schema, mark) kept
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(bytes(data))
    refused(warehouse, loaded["models"], damaged, capsys)


@pytest.mark.slow
def test_load_parses_refuses_a_text_parsed_two_ways(loaded, good, tmp_path, capsys):
    warehouse, path, table = good
    row = one_sentence(table)
    rest = [r for r in table.to_pylist() if r["text_hash"] != row["text_hash"]]
    other = dict(row, parsed_words=[dict(w, deprel="dep") for w in row["parsed_words"]])
    clash = write_rows(table, [*rest, other], tmp_path / "clash.parquet")
    assert load(warehouse, loaded["models"], path, clash) == 2
    err = capsys.readouterr().err
    assert f"{path} row {table.to_pylist().index(row) + 1} and {clash} row {len(rest) + 1}: " in err, err
    assert "the same text parsed differently (1 such pairs)" in err and err.count("\n") == 1
    assert cache_tables(warehouse) == []
    # The same parse twice, parsed at another time, is fine.
    later = [dict(r, parsed_at=r["parsed_at"] + datetime.timedelta(hours=1)) for r in table.to_pylist()]
    assert load(warehouse, loaded["models"], path, write_rows(table, later, tmp_path / "later.parquet")) == 0
    assert (
        f"loaded the parses of {table.num_rows} texts from 2 files (0 were cached already)" in capsys.readouterr().out
    )


STOPPED_PARSE = """
import sys
import srlens.processing.parse
from srlens.processing.shards import parse_shard
srlens.processing.parse.TEXTS_PER_WORKER = 1  # a worker process even for this handful of texts
try:
    parse_shard(sys.argv[1], 1, 1, sys.argv[2], sys.argv[3], "cpu", batch_size=2, progress=False)
except KeyboardInterrupt:
    sys.exit(130)
"""


def children(pid):
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def gone(pid, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_parse_leaves_no_worker_and_sigterm_no_temporary_file(loaded, how, tmp_path):
    env = dict(os.environ, SRLENS_STANZA_WORKERS="2", SRLENS_TEST_STOP_AT="shard", SRLENS_STANZA_MAX_WORDS="20")
    out = tmp_path / "p.parquet"
    parse = subprocess.Popen([sys.executable, "-c", STOPPED_PARSE, loaded["warehouse"], out, loaded["models"]], env=env)
    try:
        deadline = time.monotonic() + 120
        while Path(f"/proc/{parse.pid}/stat").read_text().split(") ")[1][0] != "T":  # stopped at its first write
            assert parse.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        workers = children(parse.pid)
        assert workers and list(tmp_path.glob(".p.parquet.*.tmp"))
        os.kill(parse.pid, how)
        os.kill(parse.pid, signal.SIGCONT)
        assert parse.wait(60) == (130 if how == signal.SIGTERM else -signal.SIGKILL)
        assert all(gone(w) for w in workers)
        if how == signal.SIGTERM:
            assert not list(tmp_path.glob(".*.tmp")) and not out.exists()
    finally:
        parse.kill()
        parse.wait()
