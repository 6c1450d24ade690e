"""Crashes and concurrency, with real processes: `srlens` subprocesses, real SIGKILLs, real dbt builds.

Where no output line marks a moment (the middle of the copy, just before the swap, just before a
load's commit), the command is started with $SRLENS_TEST_STOP_AT (loaders/store.py stop_point): it
stops itself there with SIGSTOP, and the test SIGKILLs it while it is stopped, exactly at that step.
"""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import duckdb
import pytest

from tests.conftest import FIGURE1, SHARED, require_shared, table_snapshot
from tests.support.processes import Running, process_state, srlens

pytestmark = pytest.mark.slow  # crash and kill loops with real processes and real builds

RUN_TEXT = "I enjoyed my time at Franklin High School .\n"
LEFTOVERS = (".e.duckdb.dbt/e.duckdb", ".e.duckdb.dbt/e.duckdb.wal", ".e.duckdb.build.pid")
COPY = (".e.duckdb.dbt/e.duckdb", ".e.duckdb.dbt/e.duckdb.wal", ".e.duckdb.dbt/e.duckdb.tmp")  # a build's copy


def descendants(pid):
    """Every living process below `pid`, from /proc."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid):
    return process_state(pid) not in (None, "Z", "X")


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def runs(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return sorted(r[0] for r in con.execute("select run from raw.submissions").fetchall())
    finally:
        con.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Figure 1 with one run t/plain, built by the aligned processor; each test copies it."""
    require_shared()
    root = tmp_path_factory.mktemp("built")
    (root / "run.txt").write_text(RUN_TEXT)
    assert srlens("--warehouse", "e.duckdb", "load-treebank", FIGURE1, "--corpus", "figure1", cwd=root).returncode == 0
    assert (
        srlens(
            "--warehouse",
            "e.duckdb",
            "load-outputs",
            "run.txt",
            "--corpus",
            "figure1",
            "--team",
            "t",
            "--run",
            "plain",
            cwd=root,
        ).returncode
        == 0
    )
    done = srlens("--warehouse", "e.duckdb", "build", "--processor", "aligned", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "e.duckdb"


@pytest.fixture
def wh(built, tmp_path):
    """A private copy of the built warehouse, as tmp_path/e.duckdb, and a run file beside it."""
    shutil.copyfile(built, tmp_path / "e.duckdb")
    (tmp_path / "run.txt").write_text(RUN_TEXT)
    return tmp_path / "e.duckdb"


# --- 21.1: every name of the file is the same warehouse ---------------------------------------


def test_loads_through_a_symlink_and_a_hard_link_during_a_build_are_never_lost(wh):
    folder = wh.parent
    (folder / "link.duckdb").symlink_to("e.duckdb")
    os.link(wh, folder / "hard.duckdb")
    build = Running("--warehouse", "e.duckdb", "build", "--full-refresh", "--processor", "aligned", cwd=folder)
    build.wait_for_line(r"START sql")  # dbt is running: the build holds the warehouse
    # Through the symlink: the same lock, so the load waits for the build, then loads.
    via_symlink = Running(
        "--warehouse",
        "link.duckdb",
        "load-outputs",
        "run.txt",
        "--corpus",
        "figure1",
        "--team",
        "t",
        "--run",
        "during",
        cwd=folder,
    )
    via_symlink.wait_for_line(r"waiting for another srlens command on .*e\.duckdb")
    # Through the hard link: DuckDB itself refuses the writer; one line, nothing claimed.
    via_hard_link = srlens(
        "--warehouse",
        "hard.duckdb",
        "load-outputs",
        "run.txt",
        "--corpus",
        "figure1",
        "--team",
        "t",
        "--run",
        "hard",
        cwd=folder,
    )
    assert via_hard_link.returncode == 2
    assert via_hard_link.stdout == ""
    assert via_hard_link.stderr.count("\n") == 1 and "Traceback" not in via_hard_link.stderr
    assert "another program has the file open" in via_hard_link.stderr and "nothing was written" in via_hard_link.stderr
    assert build.finish() == 0, build.stderr()
    assert "has 2 hard links" in build.stderr()  # the build says the other name keeps the old version
    assert via_symlink.finish() == 0, via_symlink.stderr()
    assert via_symlink.proc.stdout.read() == "loaded 1 sentences of t/during for corpus figure1\n"
    # The load that said "loaded" is in the warehouse; the refused one is nowhere.
    assert runs(wh) == ["during", "plain"]
    status = srlens("--warehouse", "link.duckdb", "status", cwd=folder)
    assert "runs: 2," in status.stdout and "stale: 1 load since the last build" in status.stdout, status.stdout


def test_a_build_never_replaces_a_file_written_behind_its_back(wh, tmp_path):
    """A writer that ignores DuckDB's lock (here: cp over the file) is caught at the swap."""
    other = tmp_path / "other.duckdb"
    shutil.copyfile(wh, other)
    con = duckdb.connect(str(other))
    con.execute("update raw.submissions set run = 'written_behind'")
    con.close()
    build = Running(
        "--warehouse", "e.duckdb", "build", "--processor", "aligned", cwd=wh.parent, SRLENS_TEST_STOP_AT="swap"
    )
    build.wait_stopped()
    subprocess.run(["cp", str(other), str(wh)], check=True)  # in place: same inode, new content
    build.proc.send_signal(signal.SIGCONT)
    assert build.finish() == 2
    err = build.stderr()
    assert "changed while the build ran" in err and "did not replace it" in err, err
    assert sha256(wh) == sha256(other)
    assert [p.name for p in wh.parent.glob(".e.duckdb.build*")] == []


# --- 14.4: a killed build leaves the previous warehouse, and the next build cleans up ---------


def test_builds_killed_at_each_step_leave_the_warehouse_and_the_next_build_cleans_up(wh):
    folder, before = wh.parent, sha256(wh)
    build_args = ("--warehouse", "e.duckdb", "build", "--processor", "aligned")
    notices = []
    for step in ("copy", "processing", "dbt", "swap"):
        if step == "dbt":
            build = Running(*build_args, cwd=folder)
            build.wait_for_line(r"START sql")  # dbt is building models into the copy
        else:
            build = Running(*build_args, cwd=folder, SRLENS_TEST_STOP_AT=step)
            build.wait_stopped()
        children = descendants(build.proc.pid)
        assert step != "dbt" or children, "dbt runs in a child process"
        build.kill()
        notices += [line for line in build.stderr().splitlines() if "removed what a killed build" in line]
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in children), f"killed at {step}: its children outlived it"
        assert sha256(wh) == before, f"killed at {step}: the warehouse changed"
        assert any((folder / name).exists() for name in LEFTOVERS), f"killed at {step}: nothing left to clean"
    # A dead build's copy with a WAL that does not belong to it made DuckDB say "Corrupt database file".
    (folder / ".e.duckdb.dbt" / "e.duckdb.wal").write_bytes(os.urandom(4096))
    # and a copy where srlens kept it before it moved into dbt's work folder: removed too
    (folder / ".e.duckdb.building").write_bytes(os.urandom(4096))
    build = Running(*build_args, cwd=folder)
    assert build.finish() == 0, build.stderr()
    notices += [line for line in build.stderr().splitlines() if "removed what a killed build" in line]
    # Each build after a killed one said, in one line, what it removed.
    assert len(notices) == 4, notices
    said = r"srlens: removed what a killed build \d+ left: \.e\.duckdb\.(dbt/e\.duckdb|build)"
    assert all(re.match(said, n) for n in notices)
    assert ".e.duckdb.building" in notices[-1]
    assert sorted(p.name for p in folder.iterdir()) == [".e.duckdb.dbt", "e.duckdb", "e.duckdb.lock", "run.txt"]
    assert runs(wh) == ["plain"]
    con = duckdb.connect(str(wh), read_only=True)
    assert con.execute("select count(*) from meta.builds").fetchone() == (2,)  # the fixture's and this one
    assert con.execute("select sentences from corpus_stats").fetchall() == [(1,)]
    con.close()


def test_a_build_terminated_by_sigterm_cleans_up_after_itself(wh):
    """`kill PID`, `timeout` or a scheduler's cancel sends SIGTERM: the build stops dbt, removes its copy,
    WAL and pid file itself (no next build needed) and leaves the warehouse as it was."""
    folder, before = wh.parent, sha256(wh)
    for step in ("copy", "dbt"):
        if step == "dbt":
            build = Running("--warehouse", "e.duckdb", "build", "--processor", "aligned", cwd=folder)
            build.wait_for_line(r"START sql")  # dbt is building models into the copy
        else:  # stopped in the middle of the copy: SIGTERM is taken when it goes on
            build = Running(
                "--warehouse", "e.duckdb", "build", "--processor", "aligned", cwd=folder, SRLENS_TEST_STOP_AT=step
            )
            build.wait_stopped()
        children = descendants(build.proc.pid)
        build.proc.send_signal(signal.SIGTERM)
        build.proc.send_signal(signal.SIGCONT)
        assert build.finish(timeout=120) == 128 + signal.SIGTERM, build.stderr()
        assert build.stderr().splitlines()[-1] == "srlens: terminated"
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in children), f"terminated at {step}: its children outlived it"
        assert sha256(wh) == before, f"terminated at {step}: the warehouse changed"
        left = {p.name for p in folder.iterdir()} - {".e.duckdb.dbt"}  # dbt's work folder is kept (partial parse)
        assert left == {"e.duckdb", "e.duckdb.lock", "run.txt"}, f"terminated at {step}: {sorted(left)}"
        assert not [name for name in COPY if (folder / name).exists()], f"terminated at {step}: the copy is left"


def test_a_load_terminated_just_before_its_commit_changes_nothing(wh):
    (wh.parent / "run.txt").write_text("My time at Franklin High School I enjoyed .\n")  # a different text
    before = table_snapshot(wh)
    command = ("load-outputs", "run.txt", "--corpus", "figure1", "--team", "t", "--run", "plain", "--format", "text")
    load = Running("--warehouse", "e.duckdb", *command, cwd=wh.parent, SRLENS_TEST_STOP_AT="commit")
    load.wait_stopped()
    load.proc.send_signal(signal.SIGTERM)
    load.proc.send_signal(signal.SIGCONT)
    assert load.finish(timeout=60) == 128 + signal.SIGTERM, load.stderr()
    assert load.stderr().splitlines()[-1] == "srlens: terminated"
    assert table_snapshot(wh) == before
    assert not Path(f"{wh}.wal").exists()


def test_a_full_disk_during_a_build_leaves_the_previous_warehouse_and_no_copy(wh, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    size_kb = wh.stat().st_size * 3 // 2 // 1024  # room for the warehouse, not for its copy
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(disk)], capture_output=True, text=True
    )
    if mounted.returncode:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        shutil.copyfile(wh, disk / "e.duckdb")
        before = sha256(disk / "e.duckdb")
        done = srlens("--warehouse", "e.duckdb", "build", "--processor", "aligned", cwd=disk)
        assert done.returncode == 2
        # the build's processor line, then the error in one line
        processor, error = done.stderr.splitlines()
        assert processor == "srlens: processor aligned: asked by --processor aligned"
        assert error.startswith("srlens: error: no space left on the device of ")
        assert error.endswith("the warehouse is unchanged"), error
        assert sha256(disk / "e.duckdb") == before
        # dbt's work folder may stay (it is kept between builds), the copy in it may not
        assert {p.name for p in disk.iterdir()} - {".e.duckdb.dbt"} == {"e.duckdb", "e.duckdb.lock"}
        assert not [name for name in COPY if (disk / name).exists()]
    finally:
        subprocess.run(["umount", str(disk)], check=True)


# --- 14.4: a killed load leaves the warehouse as it was ----------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("load-outputs", "run.txt", "--corpus", "figure1", "--team", "t", "--run", "plain", "--format", "text"),
        ("load-treebank", FIGURE1, "--corpus", "figure1"),
    ],
)
def test_a_load_killed_just_before_its_commit_changes_nothing(wh, command):
    (wh.parent / "run.txt").write_text("My time at Franklin High School I enjoyed .\n")  # a different text
    before = table_snapshot(wh)
    load = Running("--warehouse", "e.duckdb", *command, cwd=wh.parent, SRLENS_TEST_STOP_AT="commit")
    load.wait_stopped()
    load.kill()
    assert table_snapshot(wh) == before
    # And the warehouse takes the next load and the next build.
    again = srlens("--warehouse", "e.duckdb", *command, cwd=wh.parent)
    assert again.returncode == 0 and again.stdout.startswith("loaded 1 sentences"), again.stderr
    assert table_snapshot(wh) != before


# --- 14.6: a writing command never creates a file in a folder that does not exist ---------------


@pytest.mark.parametrize(
    "command",
    [
        ("load-treebank", FIGURE1, "--corpus", "figure1"),
        ("load-outputs", "run.txt", "--corpus", "figure1", "--team", "t", "--run", "r"),
    ],
)
def test_writing_into_a_missing_folder_is_an_error_naming_it(tmp_path, command):
    (tmp_path / "run.txt").write_text(RUN_TEXT)
    done = srlens("--warehouse", "no/such/folder/w.duckdb", *command, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"srlens: error: the folder {tmp_path}/no/such/folder of the warehouse "
        f"no/such/folder/w.duckdb does not exist: create it (mkdir -p {tmp_path}/no/such/folder) "
        "or name another --warehouse\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.txt"]


@pytest.mark.parametrize(
    "name", [".w.duckdb.dbt/w.duckdb", ".w.duckdb.dbt/x.duckdb", ".w.duckdb.building", "temp.duckdb", "main.db"]
)
def test_a_warehouse_among_another_ones_build_files_or_with_a_reserved_name_is_refused(tmp_path, name):
    """A build of w.duckdb removes its old copies as a killed build's leftovers, and DuckDB renames the
    catalogs main, temp and system (which dbt then cannot find): such a warehouse is refused at once."""
    (tmp_path / ".w.duckdb.dbt").mkdir()
    done = srlens("--warehouse", name, "load-treebank", FIGURE1, "--corpus", "figure1", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    reason = "DuckDB reserves the name" if "/" not in name and "building" not in name else "another warehouse"
    assert done.stderr.startswith(f"srlens: error: {name}") and reason in done.stderr, done.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [".w.duckdb.dbt"]


def test_a_work_folder_on_another_file_system_is_refused_before_the_build(wh, tmp_path):
    """The built copy replaces the warehouse by a rename, which cannot cross file systems: a work folder
    linked to another one fails at once with the reason, not after the whole build."""
    elsewhere = Path(tempfile.mkdtemp(dir="/dev/shm")) if Path("/dev/shm").is_dir() else None
    if elsewhere is None or elsewhere.stat().st_dev == wh.parent.stat().st_dev:
        pytest.skip("needs /dev/shm on another file system than the test folder")
    try:
        (wh.parent / ".e.duckdb.dbt").symlink_to(elsewhere)
        before = table_snapshot(wh)
        done = srlens("--warehouse", "e.duckdb", "build", "--processor", "aligned", cwd=wh.parent)
        assert done.returncode == 2, done.stderr
        assert "is on another file system than the warehouse" in done.stderr, done.stderr
        assert table_snapshot(wh) == before
        assert list(elsewhere.iterdir()) == []
    finally:
        shutil.rmtree(elsewhere)


# --- 14.5: bounded memory on any output ---------------------------------------------------------


def test_an_output_longer_than_the_guard_is_parsed_in_chunks_and_stays_scored(tmp_path):
    require_shared()
    models = SHARED / "stanza"
    if not (models / "en" / "tokenize.pt").is_file():
        pytest.fail(f"the shared English stanza models are missing from {models}")
    words = ("I enjoyed my time at Franklin High School and " * 7).split()  # 63 words, no sentence end
    (tmp_path / "run.txt").write_text(" ".join(words) + "\n")
    assert (
        srlens(
            "--warehouse", "e.duckdb", "load-treebank", FIGURE1, "--corpus", "figure1", "--language", "en", cwd=tmp_path
        ).returncode
        == 0
    )
    assert (
        srlens(
            "--warehouse",
            "e.duckdb",
            "load-outputs",
            "run.txt",
            "--corpus",
            "figure1",
            "--team",
            "t",
            "--run",
            "loop",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    done = srlens(
        "--warehouse",
        "e.duckdb",
        "build",
        "--processor",
        "stanza",
        "--stanza-dir",
        models,
        cwd=tmp_path,
        SRLENS_STANZA_MAX_WORDS="25",
    )
    assert done.returncode == 0, done.stderr
    assert (
        "srlens: 1 output sentences were too long to parse whole and were parsed in chunks of at most 25 "
        "words (sentence_scores.processing_status = 'chunked')"
    ) in done.stderr
    con = duckdb.connect(str(tmp_path / "e.duckdb"), read_only=True)
    assert con.execute("select chunks from cache.parsed_texts").fetchall() == [(3,)]
    cached = con.execute("select word_idx, form, head, deprel from cache.parsed_words order by word_idx").fetchall()
    row = con.execute("select processing_status, bleu, dea, simple_string_accuracy from sentence_scores").fetchone()
    con.close()
    # The same three pieces parsed apart, numbered by hand: word_idx and heads run on across the pieces.
    from srlens.processing import load_pipeline, resolve_models

    nlp = load_pipeline(resolve_models("en", models))
    expected, offset = [], 0
    for piece in (words[0:25], words[25:50], words[50:63]):
        for sentence in nlp(" ".join(piece)).sentences:
            for w in sentence.words:
                expected.append((offset + w.id, w.text, w.head and offset + w.head, w.deprel))
            offset += len(sentence.words)
    assert cached == expected and offset == 63
    status, bleu, dea, ssa = row
    assert status == "chunked" and None not in (bleu, dea, ssa)  # scored, not dropped from the means
    shown = srlens("--warehouse", "e.duckdb", "status", cwd=tmp_path).stdout
    assert "long outputs: 1 sentences parsed in chunks (sentence_scores.processing_status = 'chunked')" in shown
