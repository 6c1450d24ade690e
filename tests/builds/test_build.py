"""`srlens build`: a failed build changes nothing; readers of the old file are not disturbed."""

import json
import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest

import srlens.build
from srlens.build import DBT_PROJECT_DIR, BuildError, BuildFiles, build, prepare, run_dbt
from srlens.loaders.load import load_treebank
from tests.conftest import EN_EWT_TEST, FIGURE1, require_shared


@pytest.fixture(scope="module")
def small_built(tmp_path_factory):
    """Figure 1, built once for the module."""
    require_shared()
    wh = tmp_path_factory.mktemp("small") / "wh.duckdb"
    load_treebank(wh, FIGURE1, "figure1")
    build(wh, echo=False)
    return wh


@pytest.fixture
def small_warehouse(small_built, tmp_path):
    """A copy of `small_built` for a test that changes it: a copy costs far less than a build."""
    wh = tmp_path / "wh.duckdb"
    shutil.copyfile(small_built, wh)
    return wh


def relations(warehouse):
    """{(schema, name)} of every table and view of the warehouse."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return set(
            con.execute(
                "select schema_name, table_name from duckdb_tables() union all "
                "select schema_name, view_name from duckdb_views() where not internal"
            ).fetchall()
        )
    finally:
        con.close()


def last_build_row(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(
            "select full_refresh, base_state, models from meta.builds order by started_at desc limit 1"
        ).fetchone()
    finally:
        con.close()


@pytest.mark.slow
def test_a_partial_build_makes_the_next_build_a_full_one(small_built, tmp_path, capsys):
    """build(select=...) builds only the nodes asked for; it is never the base of an incremental
    build, so the build after it builds every model, as a build of the same data from nothing does."""
    wh = tmp_path / "wh.duckdb"
    load_treebank(wh, FIGURE1, "figure1")
    build(wh, echo=True, select="+corpus_stats")
    assert "srlens: partial build (--select +corpus_stats), from scratch" in capsys.readouterr().err
    partial = relations(wh)
    assert {("main", "corpus_stats"), ("main", "sentence_complexity")} <= partial
    assert ("main", "system_rankings") not in partial and len(partial) < len(relations(small_built)) / 2
    con = duckdb.connect(str(wh), read_only=True)
    assert con.execute("select corpus from corpus_stats").fetchall() == [("figure1",)]
    assert con.execute("select base_state from meta.builds").fetchone()[0] == "partial: +corpus_stats"
    con.close()
    build(wh, echo=True)
    assert "srlens: full build" in capsys.readouterr().err.splitlines()
    assert relations(wh) == relations(small_built)
    (full, base, models), reference = last_build_row(wh), last_build_row(small_built)
    assert full and len(base) == 64 and models == reference[2]


@pytest.mark.slow
def test_failed_build_leaves_the_previous_warehouse(small_warehouse, tmp_path, monkeypatch):
    broken = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT_DIR, broken, ignore=shutil.ignore_patterns("target", "logs"))
    (broken / "models" / "marts" / "broken_mart.sql").write_text("select no_such_column from {{ ref('corpus_stats') }}")
    load_treebank(small_warehouse, EN_EWT_TEST, "en_ewt_test")  # new raw data the failed build must not publish
    monkeypatch.setenv("SRLENS_DBT_PROJECT", str(broken))
    monkeypatch.setattr(srlens.build, "free_later", lambda fd: pytest.fail("nothing was replaced, nothing to free"))
    with pytest.raises(BuildError, match="warehouse is unchanged"):
        build(small_warehouse, echo=False)
    con = duckdb.connect(str(small_warehouse), read_only=True)
    assert con.execute("select corpus from corpus_stats").fetchall() == [("figure1",)]
    assert con.execute("select count(*) from raw.sentences").fetchone() == (2078,)
    con.close()
    copy = BuildFiles(small_warehouse).building
    assert not [p for p in (copy, Path(f"{copy}.wal"), Path(f"{copy}.tmp")) if p.exists()]


STATS = "+corpus_stats"


def dbt_log(warehouse):
    return (BuildFiles(warehouse).work_dir / "logs" / "dbt.log").read_text()


@pytest.mark.slow
def test_a_new_warehouse_starts_from_the_parse_of_another(small_built, tmp_path, monkeypatch):
    """srlens/parse_cache.py: the first build of a new warehouse of the same name takes dbt's parse from
    the cache (no full parse) and builds the same tables; an unreadable cached parse only costs the
    full parse, and a full refresh does not use the cache. dbt parses the whole project whatever it
    builds: the builds here build corpus_stats only."""
    monkeypatch.setenv("SRLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DBT_LOG_LEVEL_FILE", "debug")  # the parse's messages below are dbt's debug events
    first = tmp_path / "first" / "wh.duckdb"
    first.parent.mkdir()
    load_treebank(first, FIGURE1, "figure1")
    build(first, echo=False, select=STATS)
    assert "Starting full parse" in dbt_log(first)
    (cached,) = (tmp_path / "cache" / "dbt-parse").iterdir()

    def build_anew(name, change=None, **how):
        warehouse = tmp_path / name / "wh.duckdb"
        warehouse.parent.mkdir()
        load_treebank(warehouse, FIGURE1, "figure1")
        if change:
            change()
        build(warehouse, echo=False, select=STATS, **how)
        con = duckdb.connect(str(warehouse), read_only=True)
        assert con.execute("select * from corpus_stats").fetchall() == small_stats
        con.close()
        return dbt_log(warehouse)

    con = duckdb.connect(str(small_built), read_only=True)
    small_stats = con.execute("select * from corpus_stats").fetchall()
    con.close()
    monkeypatch.chdir(DBT_PROJECT_DIR.parent)  # a relative project folder: dbt runs in the work folder
    log = build_anew("second", project_dir=DBT_PROJECT_DIR.name)
    assert "Starting full parse" not in log and "Partial parsing enabled" in log
    log = build_anew("third", lambda: cached.write_bytes(b"not a parse"))
    assert "Failed to load parsed file from disk" in log  # then dbt parses the whole project
    assert cached.read_bytes() != b"not a parse"  # the good parse replaced it
    log = build_anew("fourth", full_refresh=True)
    assert "Starting full parse" in log


def test_the_parse_cache_takes_only_the_users_own_files_and_never_fails_a_build(tmp_path, monkeypatch):
    from srlens import parse_cache

    target, cached = tmp_path / "target", tmp_path / "cache" / "dbt-parse" / "x.msgpack"
    target.mkdir()
    (target / parse_cache.PARSE_FILE).write_bytes(b"a parse")
    parse_cache.keep(cached, target)
    assert cached.read_bytes() == b"a parse" and [p.name for p in cached.parent.iterdir()] == ["x.msgpack"]
    other = tmp_path / "other"
    cached.chmod(0o666)  # others may write it: dbt would build whatever SQL they put there
    parse_cache.give(cached, other)
    assert not other.exists()
    cached.chmod(0o600)
    parse_cache.give(cached, other)
    assert (other / parse_cache.PARSE_FILE).read_bytes() == b"a parse"
    monkeypatch.setenv("SRLENS_CACHE_DIR", str(cached))  # a file, no folder: the cache is skipped
    unusable = parse_cache.cached_parse(DBT_PROJECT_DIR, {}, "wh.duckdb", "3GB")
    parse_cache.give(unusable, tmp_path / "third")
    parse_cache.keep(unusable, target)
    assert not (tmp_path / "third").exists()


def test_the_parse_cache_keeps_no_parse_that_others_may_have_written(tmp_path, monkeypatch):
    """keep() applies give()'s rule to what it stores: a work folder's parse that others may write
    (a warehouse in a shared folder) must not reach the user's other warehouses through the cache;
    a cached entry others may write is replaced by the user's own parse. A group-writable file is
    the user's alone if its group is (umask 002 with user private groups)."""
    from srlens import parse_cache

    assert not parse_cache.own_group(os.getgid() + 1)
    group_writable = tmp_path / "group_writable"
    group_writable.write_bytes(b"")
    group_writable.chmod(0o664)
    for alone in (True, False):
        monkeypatch.setattr(parse_cache, "own_group", lambda gid, alone=alone: alone)
        assert parse_cache.trusted(group_writable) is alone
    monkeypatch.undo()

    target, cached = tmp_path / "target", tmp_path / "cache" / "dbt-parse" / "x.msgpack"
    target.mkdir()
    own = target / parse_cache.PARSE_FILE
    own.write_bytes(b"a parse")
    own.chmod(0o666)
    parse_cache.keep(cached, target)
    assert not cached.exists()
    own.chmod(0o644)
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"a parse")
    cached.chmod(0o666)  # the same bytes, but others may write it: give() would never use it
    parse_cache.keep(cached, target)
    assert cached.read_bytes() == b"a parse" and parse_cache.trusted(cached)


@pytest.mark.slow
def test_a_full_build_drops_what_no_model_makes_in_its_own_schemas(small_warehouse):
    """A model a newer srlens renamed (int_sentence_udf_scores) must not linger with old figures;
    the marts' schema is public and left alone, and an incremental build drops nothing."""
    con = duckdb.connect(str(small_warehouse))
    con.execute("create table intermediate.int_sentence_udf_scores as select 1 as x")
    con.execute('create view staging."stg_old ""quoted"" name" as select 1 as x')
    con.execute("create table main.my_notes as select 'mine' as note")
    con.close()
    build(small_warehouse, echo=False)  # nothing loaded since: an incremental build
    con = duckdb.connect(str(small_warehouse), read_only=True)
    assert con.execute("select count(*) from intermediate.int_sentence_udf_scores").fetchone() == (1,)
    con.close()
    build(small_warehouse, echo=False, full_refresh=True)
    con = duckdb.connect(str(small_warehouse), read_only=True)
    names = {
        (schema, name)
        for schema, name in con.execute(
            "select schema_name, table_name from duckdb_tables() union all "
            "select schema_name, view_name from duckdb_views() where not internal"
        ).fetchall()
    }
    assert ("intermediate", "int_sentence_udf_scores") not in names
    assert ("staging", 'stg_old "quoted" name') not in names
    assert ("main", "my_notes") in names
    # every model is still there: dbt's schemas hold exactly the project's models
    models = {path.stem for path in (DBT_PROJECT_DIR / "models").rglob("*.sql")}
    own = {name for schema, name in names if schema in ("staging", "intermediate")}
    assert own and own <= models
    assert ("intermediate", "int_sentence_accuracies") in names
    con.close()


@pytest.mark.slow
def test_reader_holding_the_file_open_keeps_a_consistent_view(small_warehouse):
    load_treebank(small_warehouse, EN_EWT_TEST, "en_ewt_test")
    reader = duckdb.connect(str(small_warehouse), read_only=True)
    assert reader.execute("select count(*) from sentence_complexity").fetchone() == (1,)
    build(small_warehouse, echo=False)  # dbt writes a copy in another process, then it is renamed in
    # The open reader still sees the complete old warehouse...
    assert reader.execute("select count(*) from sentence_complexity").fetchone() == (1,)
    assert reader.execute("select tree_depth from sentence_complexity").fetchone() == (3,)
    reader.close()
    # ...and a new reader sees the new one, intact.
    fresh = duckdb.connect(str(small_warehouse), read_only=True)
    assert fresh.execute("select count(*) from sentence_complexity").fetchone() == (2078,)
    assert fresh.execute("select tree_depth from sentence_complexity where corpus = 'figure1'").fetchone() == (3,)
    fresh.close()


@pytest.mark.slow
def test_the_replaced_version_is_freed_by_a_helper_process(small_warehouse, monkeypatch):
    """After the swap no name leads to the old file: the build hands its last descriptor to free_later's
    process, which frees it when it ends (once the build closed its stdin), so the build does not wait."""
    helpers, free_later = [], srlens.build.free_later

    def recording(fd):
        helpers.append((os.fstat(fd).st_ino, os.fstat(fd).st_nlink, free_later(fd)))
        return helpers[-1][2]

    monkeypatch.setattr(srlens.build, "free_later", recording)
    old = small_warehouse.stat().st_ino
    build(small_warehouse, echo=False)
    assert small_warehouse.stat().st_ino != old
    ((inode, links, helper),) = helpers
    assert (inode, links) == (old, 0)
    deadline = time.monotonic() + 30
    while helper.returncode is None and time.monotonic() < deadline:  # the build reaps it, not this test
        time.sleep(0.05)
    assert helper.returncode == 0 and not Path(f"/proc/{helper.pid}").exists()  # no zombie left


def test_leftovers_are_removed_only_when_their_build_is_dead(tmp_path, capsys):
    """The pid file names the build and its start time: a running build's files stay, a dead one's
    go with a one-line notice, and a pid reused by another process does not count as the build."""
    import subprocess
    import sys

    from srlens.build import process_start_time

    files = BuildFiles(tmp_path / "wh.duckdb")

    def leave(pid, started):
        files.work_dir.mkdir(exist_ok=True)
        files.building.write_bytes(b"half a copy")
        Path(f"{files.building}.wal").write_bytes(b"a WAL that belongs to no file")
        files.pid.write_text(f"{pid} {started}\n")

    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        leave(running.pid, process_start_time(running.pid))
        with pytest.raises(BuildError, match=f"another build \\(pid {running.pid}\\) is still running"):
            files.clear_dead_build()
        assert files.building.exists() and files.pid.exists()
        leave(running.pid, process_start_time(running.pid) - 1)  # the same pid, another process: reused
        files.clear_dead_build()
        assert capsys.readouterr().err == (
            f"srlens: removed what a killed build {running.pid} left: "
            ".wh.duckdb.dbt/wh.duckdb, .wh.duckdb.dbt/wh.duckdb.wal, .wh.duckdb.build.pid, "
            ".wh.duckdb.dbt\n"
        )
    finally:
        running.kill()
        running.wait()
    leave(running.pid, process_start_time(os.getpid()))  # that process has ended
    files.clear_dead_build()
    assert f"killed build {running.pid} left" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    files.clear_dead_build()  # nothing left: nothing to say
    assert capsys.readouterr().err == ""


@pytest.mark.slow  # dbt several times
def test_dbt_ends_with_the_file_closed_and_its_own_exit_codes(tmp_path):
    """srlens.dbt_main ends dbt's process without tearing the interpreter down, but only after the
    exit handlers: DuckDB's file is closed and checkpointed (no WAL is left to lose at the swap)."""
    warehouse = tmp_path / "wh.duckdb"
    dbt_vars, _device = prepare(warehouse, "aligned", None, False)
    ok, output = run_dbt(["run", "--select", "stg_submissions", "--vars", json.dumps(dbt_vars)], warehouse, tmp_path)
    assert ok, output[-3000:]
    assert not Path(f"{warehouse}.wal").exists()
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("select count(*) from staging.stg_submissions").fetchone() == (0,)
    con.close()
    ok, output = run_dbt(["run", "--no-such-flag"], warehouse, tmp_path, echo=False)
    assert not ok and "dbt: No such option '--no-such-flag'" in output
    ok, output = run_dbt(["run", "--select", "no_such_model", "--vars", "{oops"], warehouse, tmp_path, echo=False)
    assert not ok
