"""Attacks on the read-only SQL layer (srlens query and srlens.connect), as a hostile analyst.

Every attack runs through the real CLI on a copy of the built warehouse, from a working folder
we watch. Each must be refused with one line, leave the warehouse file byte-identical (and no
.wal beside it) and create no file in the watched folders. A second set runs the dangerous
statements on the sandboxed connection directly, skipping the statement check, to show that
DuckDB's own settings stop them too.
"""

import hashlib
import shutil
import subprocess
import sys

import duckdb
import pandas as pd
import pytest

import srlens
from srlens.cli import main
from srlens.paths import SQL_EXAMPLES_DIR
from srlens.sandbox import QueryRefused, check_read_only

ATTACKS = [
    # comments, quotes and backticks that one parser reads differently from another
    "select 1 `--` ; copy (select 42 as x) to 'out.csv'",
    "select 1 /* ; */ ; copy (select 42 as x) to 'out.csv'",
    "select '--' ; copy corpus_stats to 'out.csv'",
    "select 1 -- comment\n; copy corpus_stats to 'out.csv'",
    "select 1 as \"a;b\"; drop table corpus_stats",
    "select $$;$$; copy corpus_stats to 'out.csv'",
    # several statements
    "select 1; drop table corpus_stats",
    "select 1; select 2",
    "pivot corpus_stats on corpus using sum(sentences); copy corpus_stats to 'out.csv'",
    "",
    # COPY, EXPORT/IMPORT, ATTACH/DETACH
    "copy corpus_stats to 'out.csv'",
    "copy (select * from corpus_stats) to '{loot}/out.parquet' (format parquet)",
    "copy corpus_stats to '{warehouse}'",
    "copy (select 1 as x) to '{warehouse}' (format csv, use_tmp_file false)",
    "copy (select 1 as x) to '{warehouse}.wal' (format csv)",
    "copy corpus_stats from '{loot}/in.csv'",
    "export database '{loot}/dump'",
    "import database '{loot}/dump'",
    "attach '{loot}/other.duckdb' as other",
    "attach ':memory:' as scratch",
    "detach srlens",
    # extensions
    "install httpfs",
    "load httpfs",
    "load '{loot}/evil.duckdb_extension'",
    "update extensions",
    "select * from read_xlsx('{loot}/book.xlsx')",
    "select * from sqlite_scan('{loot}/x.db', 't')",
    # settings, pragmas, calls, transactions
    "set enable_external_access = true",
    "reset lock_configuration",
    "set allowed_directories = ['/']",
    "set threads = 1",
    "pragma enable_profiling",
    "pragma profiling_output = '{loot}/profile.json'",
    "call pragma_version()",
    "checkpoint",
    "force checkpoint",
    "use memory",
    "begin transaction",
    "vacuum",
    "prepare p as select 1",
    # reading files other than the warehouse
    "select * from read_csv('/etc/passwd')",
    "select * from read_parquet('{loot}/x.parquet')",
    "select * from read_json('{loot}/x.json')",
    "select * from read_text('/etc/hostname')",
    "select * from read_blob('/etc/hostname')",
    "select * from glob('/etc/*')",
    "select * from '/etc/passwd'",
    "select * from '{loot}/secret.csv'",
    "with t as (from read_csv('{loot}/secret.csv')) select * from t",
    "select (select content from read_text('/etc/hostname'))",
    "select getenv('HOME')",
    "select * from query('copy corpus_stats to ''out.csv''')",
    # writing the warehouse
    "create table main.x as select 1",
    "create temp table t as select 1",
    "drop table corpus_stats",
    "insert into corpus_stats select * from corpus_stats",
    "update corpus_stats set sentences = 0",
    "delete from corpus_stats",
    "with t as (select 1) insert into corpus_stats select * from corpus_stats",
    "alter table corpus_stats rename to x",
    "comment on table corpus_stats is 'x'",
    "create macro evil(x) as x",
    "create secret s (type s3, key_id 'a', secret 'b')",
    "create persistent secret s (type s3, key_id 'a', secret 'b')",
    "explain analyze copy (select 1) to 'out.csv'",
    "explain analyze delete from corpus_stats",
]

BAIT = "bait-7731-do-not-print"  # the content of the one file an attack might read

READS = [
    ("select corpus, sentences from corpus_stats order by corpus", "en_ewt_test"),
    ("with t as (select corpus from corpus_stats) select count(*) as n from t", "n"),
    ("from corpus_stats select corpus", "figure1"),
    ("show tables", "sentence_scores"),
    ("show all tables", "raw"),
    ("describe sentence_scores", "bleu"),
    ("summarize corpus_stats", "mdd_mean"),
    ("explain select count(*) from sentence_scores where bleu > 0.5", "Filters: bleu > 0.5"),
    ("explain analyze select count(*) from sentence_scores", "Total Time"),
    ("pivot (select corpus, sentences from corpus_stats) on corpus using sum(sentences)", "figure1"),
    ("unpivot (select 1 as a, 2 as b) on a, b into name k value v", "k"),
    ("select * from duckdb_tables() where schema_name = 'raw'", "sentences"),
]


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def listing(*folders):
    return {str(p) for folder in folders for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def sandbox_dirs(built_warehouse, tmp_path_factory):
    """A copy of the built warehouse (its own folder), a working folder and a folder of bait files."""
    root = tmp_path_factory.mktemp("attack")
    warehouse = root / "warehouse" / "srlens.duckdb"
    warehouse.parent.mkdir()
    shutil.copyfile(built_warehouse, warehouse)
    loot = root / "loot"
    loot.mkdir()
    (loot / "secret.csv").write_text(f"secret\n{BAIT}\n")
    work = root / "work"
    work.mkdir()
    return warehouse, loot, work


def fill(sql, warehouse, loot):
    return sql.replace("{loot}", str(loot)).replace("{warehouse}", str(warehouse))


@pytest.mark.parametrize("attack", ATTACKS)
def test_attack_is_refused_in_one_line_and_changes_nothing(sandbox_dirs, attack, capsys, monkeypatch):
    warehouse, loot, work = sandbox_dirs
    monkeypatch.chdir(work)
    before = (
        sha256(warehouse),
        sha256(warehouse.with_name(warehouse.name + ".wal")),
        listing(warehouse.parent, loot, work),
    )
    code = main(["--warehouse", str(warehouse), "query", fill(attack, warehouse, loot)])
    out, err = capsys.readouterr()
    assert code in (1, 2), (attack, out, err)
    assert out == ""
    assert err.startswith("srlens: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert BAIT not in err
    after = (
        sha256(warehouse),
        sha256(warehouse.with_name(warehouse.name + ".wal")),
        listing(warehouse.parent, loot, work),
    )
    assert after == before


def test_the_corpus_is_large_enough():
    assert len(ATTACKS) >= 30


@pytest.mark.parametrize("attack", [a for a in ATTACKS if a and not a.startswith("update extensions")])
def test_no_attack_passes_the_statement_check_unless_duckdb_refuses_it(attack, sandbox_dirs):
    """The statement check lets through reads only; the reads among the attacks touch files."""
    warehouse, loot, _ = sandbox_dirs
    sql = fill(attack, warehouse, loot)
    try:
        check_read_only(sql)
    except QueryRefused:
        return
    con = srlens.connect(warehouse)
    try:
        with pytest.raises((duckdb.PermissionException, duckdb.CatalogException, duckdb.ParserException)):
            con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_issue_example_in_a_real_process_writes_no_file(sandbox_dirs):
    warehouse, loot, work = sandbox_dirs
    before = listing(warehouse.parent, loot, work), sha256(warehouse)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "srlens.cli",
            "--warehouse",
            str(warehouse),
            "query",
            "select 1 `--` ; copy (select 42 as x) to 'out.csv'",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == "srlens: error: expected exactly one statement, found 2\n"
    assert (listing(warehouse.parent, loot, work), sha256(warehouse)) == before


# --- DuckDB's own guard, with the statement check skipped -------------------------------------

DUCKDB_REFUSES = [
    # (statement, the exception DuckDB raises, a word of its message)
    ("copy corpus_stats to '{loot}/out.csv'", duckdb.PermissionException, "disabled by configuration"),
    ("export database '{loot}/dump'", duckdb.PermissionException, "disabled by configuration"),
    ("attach '{loot}/other.duckdb' as other", duckdb.PermissionException, "disabled by configuration"),
    ("load httpfs", duckdb.PermissionException, "disabled"),
    ("install httpfs", duckdb.PermissionException, "disabled by configuration"),
    ("select * from read_text('/etc/hostname')", duckdb.PermissionException, "disabled by configuration"),
    ("select * from glob('{loot}/*')", duckdb.PermissionException, "disabled by configuration"),
    ("select * from '{loot}/secret.csv'", duckdb.PermissionException, "disabled by configuration"),
    # enable_external_access = false still allows the warehouse's own paths; a plain read-only
    # connection with it off writes them. disabled_filesystems stops that:
    (
        "copy (select 1 as x) to '{warehouse}' (format csv, use_tmp_file false)",
        duckdb.PermissionException,
        "LocalFileSystem has been disabled",
    ),
    (
        "copy (select 1 as x) to '{warehouse}.wal' (format csv)",
        duckdb.PermissionException,
        "LocalFileSystem has been disabled",
    ),
    ("select * from read_blob('{warehouse}')", duckdb.PermissionException, "LocalFileSystem has been disabled"),
    ("set disabled_filesystems = ''", duckdb.InvalidInputException, "locked"),
    ("create table main.x as select 1", duckdb.Error, "read-only"),
    ("insert into corpus_stats select * from corpus_stats", duckdb.Error, "read-only"),
    ("drop table corpus_stats", duckdb.Error, "read-only"),
    ("create macro evil(x) as x", duckdb.Error, "read-only"),
    ("create table memory.main.x as select 1", duckdb.CatalogException, "memory"),
    ("set enable_external_access = true", duckdb.InvalidInputException, "locked"),
    ("set lock_configuration = false", duckdb.InvalidInputException, "locked"),
    ("set allowed_directories = ['/']", duckdb.InvalidInputException, "allowed_directories"),
    ("set temp_directory = '{loot}'", duckdb.InvalidInputException, "locked"),
    ("set autoload_known_extensions = true", duckdb.InvalidInputException, "locked"),
    ("pragma enable_profiling", duckdb.InvalidInputException, "locked"),
    ("select * from read_xlsx('{loot}/book.xlsx')", duckdb.CatalogException, "excel"),
]


@pytest.mark.parametrize("sql, error, words", DUCKDB_REFUSES, ids=[s for s, _, _ in DUCKDB_REFUSES])
def test_duckdb_itself_refuses(sandbox_dirs, sql, error, words):
    warehouse, loot, _ = sandbox_dirs
    before = sha256(warehouse), listing(warehouse.parent, loot)
    con = srlens.connect(warehouse)
    try:
        with pytest.raises(error, match=words):
            con.execute(fill(sql, warehouse, loot)).fetchall()
        assert con.execute("select count(*) from corpus_stats").fetchone()[0] > 0  # still usable
    finally:
        con.close()
    assert (sha256(warehouse), listing(warehouse.parent, loot)) == before


def test_no_python_variable_is_read_as_a_table(sandbox_dirs):
    warehouse, _, _ = sandbox_dirs
    secret_frame = pd.DataFrame({"password": ["hunter2"]})  # noqa: F841 (what a replacement scan would find)
    con = srlens.connect(warehouse)
    try:
        with pytest.raises(duckdb.CatalogException, match="secret_frame"):
            con.execute("select * from secret_frame").fetchall()
    finally:
        con.close()


def test_checkpoint_and_vacuum_on_the_sandbox_leave_the_file_as_it_was(sandbox_dirs):
    warehouse, _, _ = sandbox_dirs
    before = sha256(warehouse)
    con = srlens.connect(warehouse)
    try:
        for sql in ("checkpoint", "force checkpoint", "vacuum", "select * from checkpoint()"):
            try:
                con.execute(sql).fetchall()
            except duckdb.Error:
                pass
    finally:
        con.close()
    assert sha256(warehouse) == before


def test_the_guarding_settings_are_on(sandbox_dirs):
    warehouse, _, _ = sandbox_dirs
    con = srlens.connect(warehouse)
    try:
        settings = dict(con.execute("select name, value from duckdb_settings()").fetchall())
        databases = con.execute("select database_name, readonly from duckdb_databases() where not internal").fetchall()
    finally:
        con.close()
    assert {
        k: settings[k]
        for k in (
            "enable_external_access",
            "lock_configuration",
            "autoload_known_extensions",
            "autoinstall_known_extensions",
            "allow_community_extensions",
            "allow_persistent_secrets",
            "python_enable_replacements",
            "allowed_directories",
            "temp_directory",
        )
    } == {
        "enable_external_access": "false",
        "lock_configuration": "true",
        "autoload_known_extensions": "false",
        "autoinstall_known_extensions": "false",
        "allow_community_extensions": "false",
        "allow_persistent_secrets": "false",
        "python_enable_replacements": "false",
        "allowed_directories": "[]",
        "temp_directory": "",
    }
    # DuckDB allows the attached file's own paths whatever we do (see the attacks on them above)
    assert settings["allowed_paths"].strip("[]").split(", ") and all(
        p.startswith(str(warehouse.resolve())) for p in settings["allowed_paths"].strip("[]").split(", ")
    )
    assert databases == [("srlens", True)]  # the warehouse only, read-only; no writable in-memory database


def test_a_plain_connection_to_the_same_file_coexists_in_one_process(sandbox_dirs):
    warehouse, _, _ = sandbox_dirs
    plain = duckdb.connect(str(warehouse), read_only=True)
    try:
        sandboxed = srlens.connect(warehouse)
        try:
            assert (
                sandboxed.execute("select count(*) from corpus_stats").fetchone()
                == plain.execute("select count(*) from corpus_stats").fetchone()
            )
        finally:
            sandboxed.close()
    finally:
        plain.close()


# --- the reads analysts expect ----------------------------------------------------------------


@pytest.mark.parametrize("sql, expected", READS, ids=[s for s, _ in READS])
def test_read_is_allowed(sandbox_dirs, sql, expected, capsys, monkeypatch):
    warehouse, loot, work = sandbox_dirs
    monkeypatch.chdir(work)
    before = sha256(warehouse), listing(warehouse.parent, loot, work)
    assert main(["--warehouse", str(warehouse), "query", sql]) == 0
    out, err = capsys.readouterr()
    assert expected in out and err == ""
    assert (sha256(warehouse), listing(warehouse.parent, loot, work)) == before


RECIPES = sorted(SQL_EXAMPLES_DIR.glob("*.sql"))


@pytest.mark.parametrize("recipe", RECIPES, ids=[p.name for p in RECIPES])
def test_every_recipe_runs_in_the_sandbox(sandbox_dirs, recipe, capsys):
    warehouse, _, _ = sandbox_dirs
    assert main(["--warehouse", str(warehouse), "query", recipe.read_text(), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) > 1  # a header and rows


def test_srlens_import_does_not_import_duckdb():
    code = "import sys, srlens; assert 'duckdb' not in sys.modules; assert callable(srlens.connect)"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
