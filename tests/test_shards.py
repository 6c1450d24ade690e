"""Parsing in shards (srlens parse --shard K/N, srlens load-parses): real stanza, real DuckDB files."""

import subprocess
import sys

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from srlens.cli import main
from srlens.loaders.load import load_outputs, load_treebank
from srlens.processing import process_pending
from srlens.processing.shards import in_shard
from tests.test_processing import (
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


@pytest.mark.parametrize("bad", ["0/2", "3/2", "1/0", "a/b", "2", "1/2/3", "1/-2", ""])
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
    assert "1 malformed rows" in refused(warehouse, models, tmp_path / "forged.parquet", capsys)

    # One bad file among good ones loads nothing at all.
    assert load(warehouse, models, good, tmp_path / "stranger.parquet") == 2
    assert cache_tables(warehouse) == []
