"""`srlens build`: refresh every dbt model without ever exposing a half-built warehouse.

dbt builds into a copy of the warehouse; only a successful build replaces the
file (an atomic rename). Readers that hold the old file open keep reading the
old version, and a failed build leaves the warehouse exactly as it was.

While it runs, a build holds the writer lock (loaders/store.py) and a read-only
DuckDB connection to the live file: DuckDB then refuses any writer, whatever
name it opens the file by, so no load can land in the file the build is about
to replace. Before the swap the build checks that the file is the one it copied
(inode, size, times); if not, it stops and replaces nothing.

A build that was killed leaves its copy, the copy's WAL and temp folder (all in
the dbt work folder), the dbt work folder and a pid file; the next build
recognises them (the pid file names a process that no longer runs) and removes
them with a one-line notice. dbt dies
with the build (its own process group, and PR_SET_PDEATHSIG).
"""

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from importlib import metadata
from pathlib import Path

import duckdb

from srlens import build_vars, parse_cache, processing
from srlens.build_vars import NLTK_COMPAT_VERSION, PROCESSOR_ENV, PROCESSORS  # declared there for the command line
from srlens.children import die_with_parent
from srlens.dbt_main import ARGUMENTS_ON_STDIN
from srlens.loaders.store import (
    OLDEST_READER,
    beside,
    build_copy,
    connect,
    ensure_raw_schema,
    stop_point,
    utc_now,
    writer_lock,
)
from srlens.paths import DBT_PROJECT_DIR, UDF_DIR
from srlens.processing.cache import CORPUS_LANGUAGES_SQL
from srlens.sandbox import identifier
from srlens.signature import sacrebleu_signatures, signature


class BuildError(Exception):
    pass


MEMORY_LIMIT_ENV = "SRLENS_MEMORY_LIMIT"


def memory_limit():
    """DuckDB's memory limit for the build: $SRLENS_MEMORY_LIMIT, else 3 GB or 80% of RAM if less.

    3 GB keeps a campaign-size build (340,000 output sentences) within 4 GiB in all (3.7 GB, the
    Python UDFs' batches come on top) at nearly full speed: 88 s against 85 s with 6 GB
    (docs/performance.md); DuckDB spills what does not fit to a temporary folder beside the file.
    """
    if os.environ.get(MEMORY_LIMIT_ENV):
        return os.environ[MEMORY_LIMIT_ENV]
    ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    return f"{min(3000, int(ram_mb * 0.8))}MB"


def dbt_environment(build_path, work_dir, extra_env=None):
    env = {**os.environ, **(extra_env or {})}
    env.update(
        {
            MEMORY_LIMIT_ENV: memory_limit(),
            "SRLENS_BUILD_PATH": str(build_path),
            "DBT_TARGET_PATH": str(work_dir / "target"),
            "DBT_LOG_PATH": str(work_dir / "logs"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "DO_NOT_TRACK": "1",
        }
    )
    return env


@contextlib.contextmanager
def started_dbt(build_path, work_dir, extra_env=None):
    """A dbt process that has imported dbt and waits for its arguments (run_dbt sends them): python's
    start-up and dbt's imports (about 1.7 s of CPU) overlap the build's copy and prepare. It runs in
    work_dir and opens a build_path there by its name (see build), any other by its full path.

    dbt runs in its own process group, which is killed on any way out (Ctrl-C included);
    PR_SET_PDEATHSIG covers a build that is killed outright.
    """
    # dbt as a module of this interpreter: no reliance on where pip put the `dbt` script.
    # srlens.dbt_main is dbt's command line with a quicker exit.
    work_dir = Path(work_dir).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    build_path = Path(build_path).resolve()
    if build_path.parent == work_dir:
        build_path = Path(build_path.name)
    proc = subprocess.Popen(
        [sys.executable, "-m", "srlens.dbt_main", ARGUMENTS_ON_STDIN],
        cwd=work_dir,
        env=dbt_environment(build_path, work_dir, extra_env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        process_group=0,
        preexec_fn=die_with_parent(os.getpid()),
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def run_dbt(args, build_path, work_dir, project_dir=DBT_PROJECT_DIR, echo=True, extra_env=None, started=None):
    """Run the dbt CLI of this environment on `build_path`, in `started` (a started_dbt process for
    that file and work folder) or a new process; returns (ok, output)."""
    project_dir = Path(project_dir).resolve()  # dbt runs in work_dir
    args = [*args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    with contextlib.ExitStack() as stack:
        proc = started or stack.enter_context(started_dbt(build_path, work_dir, extra_env))
        with contextlib.suppress(BrokenPipeError):  # a dbt that died says why in its output
            proc.stdin.write(json.dumps(args) + "\n")
            proc.stdin.close()
        lines = []
        for line in proc.stdout:  # dbt's own "N of M START/OK" lines are the progress display
            lines.append(line)
            if echo:
                sys.stderr.write(line)
        return proc.wait() == 0, "".join(lines)


def build(
    warehouse,
    echo=True,
    project_dir=None,
    processor=None,
    stanza_dir=None,
    dbt_vars=None,
    full_refresh=False,
    device="auto",
    select=None,
):
    """Process new outputs, run `dbt build` (models and their tests), swap the result in on success.

    processor: 'stanza' (parse outputs; SPEC section 6) or 'aligned' (no model: map output tokens
    to reference words by form); default $SRLENS_PROCESSOR, else the last build's, else for a new
    warehouse stanza where it is installed with models, aligned otherwise (choose_processor).
    device: where stanza parses, auto (cuda where torch sees a GPU), cpu or cuda (processing/parse.py).
    dbt_vars: parameters of the marts (srlens/build_vars.py), checked before anything is done.
    The build is incremental when only runs were loaded since the last one (see `base_state`);
    full_refresh forces every model to be rebuilt from scratch.
    select: build only these dbt nodes (dbt's --select, e.g. "+system_rankings"), from scratch. Such a
    partial build is recorded with a base state no build can have (PARTIAL), so the next build is a
    full one: the nodes left out would otherwise keep the figures of another state.
    """
    dbt_vars = build_vars.check(dbt_vars)  # before anything: a refused var changes nothing
    # resolved: dbt runs in the warehouse's work folder (started_dbt)
    project_dir = Path(project_dir or os.environ.get("SRLENS_DBT_PROJECT") or DBT_PROJECT_DIR).resolve()
    # The real path: every name of the file must lead to the same lock and the same work files.
    with writer_lock(warehouse) as warehouse:
        processor, why = choose_processor(warehouse, processor, stanza_dir)
        if processor == "stanza":  # the one line of a build that cannot run, before anything is done
            processing.require_stanza(f"a stanza build ({why})")
        if echo:  # the build's first line
            print(f"srlens: processor {processor}: {why}", file=sys.stderr, flush=True)
        files = BuildFiles(warehouse)
        files.clear_dead_build()
        files.check_one_file_system()
        files.pid.write_text(f"{os.getpid()} {process_start_time(os.getpid())}\n")
        try:
            started_at, clock = utc_now(), time.monotonic()
            # dbt opens the copy by its name in the work folder: the profile is then the same for every
            # warehouse of that name, and dbt can start from the parse of another one (parse_cache).
            with (
                started_dbt(files.building, files.work_dir) as dbt,
                copy_and_hold(warehouse, files.building) as copied,
            ):
                prepared, parsed_on = prepare(files.building, processor, stanza_dir, echo, device)
                all_vars = {**prepared, **dbt_vars}
                all_vars["signature"] = signature(all_vars)
                base, last_base = base_state(files.building, all_vars, project_dir)
                full = full_refresh or base != last_base or select is not None
                # --no-write-json: no manifest.json (srlens.dbt_main still writes run_results.json).
                # The dbt unit tests (SPEC's worked examples on given rows) check the code, not the
                # data: tests/builds/test_dbt_unit_tests.py runs them; a build does not spend time on them.
                args = ["build", "--vars", json.dumps(all_vars), "--no-write-json"]
                args += ["--exclude-resource-type", "unit_test"]
                # dbt_project/selectors.yml: the models that depend on run data, and their tests
                args += ["--full-refresh"] if full else ["--selector", "incremental_build"]
                if select is not None:
                    # cautious: only the tests whose every parent is built (a relationship test of
                    # a model left out would read a table that is not there)
                    args += ["--select", select, "--indirect-selection", "cautious"]
                    base = f"{PARTIAL} {select}"
                if echo:
                    print(
                        f"srlens: partial build (--select {select}), from scratch"
                        if select is not None
                        else "srlens: full build"
                        if full
                        else "srlens: incremental build (only runs changed since the last build)",
                        file=sys.stderr,
                    )
                cached_parse = parse_cache.cached_parse(project_dir, all_vars, files.building, memory_limit())
                if not full_refresh:  # from scratch means from scratch
                    parse_cache.give(cached_parse, files.work_dir / "target")
                ok, output = run_dbt(args, files.building, files.work_dir, project_dir, echo, started=dbt)
                if not ok:
                    raise BuildError("dbt build failed; the warehouse is unchanged.\n" + _failures(output))
                chunked = record_build(
                    files.building,
                    started_at,
                    time.monotonic() - clock,
                    all_vars,
                    base,
                    full,
                    files.work_dir / "target",
                    parsed_on,
                    partial=select is not None,
                )
                parse_cache.keep(cached_parse, files.work_dir / "target")
                stop_point("swap")
                check_unchanged(warehouse, copied)
                os.replace(files.building, warehouse)
        finally:
            files.remove_temporary()
    if echo and chunked:
        print(
            f"srlens: {chunked} output sentences were too long to parse whole and were parsed in chunks of "
            f"at most {processing.max_words()} words (sentence_scores.processing_status = 'chunked')",
            file=sys.stderr,
        )


def last_build(con, column):
    """`column` of the last build in meta.builds; None for a warehouse never built (or built before
    srlens recorded builds: no meta.builds)."""
    try:
        row = con.execute(f"select {column} from meta.builds order by started_at desc limit 1").fetchone()
    except duckdb.CatalogException:
        return None
    return row[0] if row else None


def choose_processor(warehouse, processor=None, stanza_dir=None):
    """(processor, why): the one asked for (--processor, else $SRLENS_PROCESSOR), else the last build's,
    else, for a warehouse never built, stanza where it is installed and has models for the language of
    every corpus, and aligned otherwise. A build keeps its processor: switching would change figures."""
    if processor or os.environ.get(PROCESSOR_ENV):
        why = f"--processor {processor}" if processor else f"${PROCESSOR_ENV}"
        processor = processor or os.environ[PROCESSOR_ENV]
        if processor not in PROCESSORS:
            raise BuildError(f"unknown processor {processor!r} from {why} (one of {', '.join(PROCESSORS)})")
        return processor, f"asked by {why}"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        last = last_build(con, "processor")
        languages = con.execute(f"select distinct language from ({CORPUS_LANGUAGES_SQL}) order by 1").fetchall()
    finally:
        con.close()
    if last:
        return last, "the last build's; --processor changes it"
    if not processing.stanza_installed():
        return "aligned", f"a new warehouse, and stanza is not installed ({processing.STANZA_EXTRA} to parse outputs)"
    if not languages:
        return "aligned", "a new warehouse with no corpus yet (--processor stanza to parse outputs)"
    for (language,) in languages:
        try:
            processing.resolve_models(language, stanza_dir)
        except processing.ProcessingError:
            return "aligned", f"a new warehouse, and stanza has no models for language '{language}' (--stanza-dir)"
    names = ", ".join(lang for (lang,) in languages)
    return "stanza", f"a new warehouse, and stanza is installed with models for {names}"


class BuildFiles:
    """The files a build writes beside the warehouse `.NAME.*`: the dbt work folder, kept between builds
    (dbt's target/ and logs/), and the temporary ones: the copy dbt builds into, in that folder, with its
    write-ahead log and DuckDB's spill folder, and the pid file."""

    def __init__(self, warehouse):
        self.folder = Path(warehouse).parent
        self.work_dir = beside(warehouse, "dbt")
        self.building = build_copy(warehouse)
        self.pid = beside(warehouse, "build.pid")  # "PID START_TIME" of the running build
        old = beside(warehouse, "building")  # where earlier versions kept the copy (a killed build's)
        self.temporary = tuple(
            Path(f"{copy}{suffix}") for copy in (self.building, old) for suffix in ("", ".wal", ".tmp")
        ) + (self.pid,)

    def remove_temporary(self):
        for path in self.temporary:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def check_one_file_system(self):
        """The finished copy replaces the warehouse by a rename, which cannot cross file systems (a work
        folder linked elsewhere): refused before the build rather than after it."""
        self.work_dir.mkdir(exist_ok=True)
        if self.work_dir.stat().st_dev != self.folder.stat().st_dev:
            raise BuildError(
                f"the build's work folder {self.work_dir} is on another file system than the warehouse "
                "(a link?): the built copy could not replace the warehouse; remove it (srlens makes it again)"
            )

    def clear_dead_build(self):
        """Remove what a killed build left (the caller holds the writer lock, so that build is gone)."""
        left = [p for p in self.temporary if p.exists()]
        if not left:
            return
        pid, started = _read_pid_file(self.pid)
        if pid is not None and process_start_time(pid) == started:
            raise BuildError(
                f"another build (pid {pid}) is still running on this warehouse "
                f"(its pid file is {self.pid}); wait for it to finish"
            )
        left += [self.work_dir] if self.work_dir.exists() else []  # its partial parse may be half-written
        self.remove_temporary()
        shutil.rmtree(self.work_dir, ignore_errors=True)
        who = f"build {pid}" if pid is not None else "build"
        names = ", ".join(str(p.relative_to(self.folder)) for p in left)
        print(f"srlens: removed what a killed {who} left: {names}", file=sys.stderr, flush=True)


def _read_pid_file(path):
    try:
        pid, started = path.read_text().split()
        return int(pid), int(started)
    except (OSError, ValueError):
        return None, None


def process_start_time(pid):
    """When `pid` started, in clock ticks after boot (/proc/PID/stat field 22); None if it is not running.

    A pid alone could have been reused by another process since the build died."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else int(fields[19])  # a zombie has ended too


def file_state(path):
    """What changes when anything writes the file or replaces it: inode, size, mtime (and its WAL's)."""
    state = []
    for p in (Path(path), Path(f"{path}.wal")):
        try:
            st = p.stat()
        except FileNotFoundError:
            state.append(None)
            continue
        state.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return state


def check_unchanged(warehouse, copied):
    """Stop the build, before the swap, if the live file is no longer the one it copied.

    Nothing that takes DuckDB's lock can write it during the build (copy_and_hold); this catches
    the rest. A hard link is no write: it keeps the old version after the swap, as a backup would.
    """
    if file_state(warehouse) != copied:
        raise BuildError(
            f"{warehouse} changed while the build ran (another program wrote or replaced it, "
            "one that ignores DuckDB's lock, or a copy over the file); the build did not replace "
            "it, so nothing written to it is lost: run srlens build again"
        )
    links = Path(warehouse).stat().st_nlink if copied[0] else 1
    if links > 1:
        print(
            f"srlens: note: {warehouse} has {links} hard links; a build replaces the file, so the other "
            "names keep the previous version (use a symbolic link to share a warehouse)",
            file=sys.stderr,
        )


@contextlib.contextmanager
def copy_and_hold(warehouse, building):
    """Copy the live file to `building`, then hold a read-only DuckDB connection to it for the whole
    build; yields the file_state of what was copied.

    DuckDB's lock on the file then refuses every writer, whatever name it uses (a hard link, a bind
    mount). The lock is taken after the copy: closing any descriptor of the file would drop it
    (POSIX locks are per process and file); a write during the copy shows in file_state.
    A WAL left by a killed load is first folded into the file (a checkpoint), so that the copy is
    one file and no stale WAL lies beside the new warehouse after the swap.
    """
    if not Path(warehouse).exists():  # a new warehouse: nothing to copy or hold
        yield file_state(warehouse)
        return
    if Path(f"{warehouse}.wal").exists():
        try:
            connect(warehouse).close()  # opening replays the WAL, closing checkpoints it
        except duckdb.IOException as e:
            raise BuildError(
                f"{warehouse} has a write-ahead log to fold in first, and another program has it "
                f"open: close it and build again ({str(e).splitlines()[0]})"
            ) from None
    copied = file_state(warehouse)
    copy_warehouse(warehouse, building)
    live = duckdb.connect(str(warehouse), read_only=True)
    held = os.open(warehouse, os.O_RDONLY)  # closed after `live`: closing it would drop DuckDB's lock
    try:
        if file_state(warehouse) != copied:
            raise BuildError(f"{warehouse} was written while the build copied it: run srlens build again")
        yield copied
    finally:
        # after the swap no name leads to the old version: its last descriptor frees it
        freeing = free_later(held) if os.fstat(held).st_nlink == 0 else None
        live.close()
        os.close(held)
        if freeing:
            freeing.stdin.close()
            # reaped when it exits, so a long-lived process (the Python API) keeps no zombie
            threading.Thread(target=freeing.wait, name="srlens-free-old-warehouse", daemon=True).start()


def free_later(fd):
    """A process that holds `fd` until its stdin is closed, and so frees the file when it exits if `fd`
    was the file's last descriptor. Freeing a file takes about a second per GB where the file system
    is mounted with `discard` (docs/performance.md, "Adding one run"); the build need not wait
    for it. A reader that still holds the old version keeps it, as before. None if no process could
    be started: the build then frees the file itself."""
    try:
        return subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, pass_fds=(fd,))
    except OSError:
        return None


COPY_CHUNK = 8 << 20


def copy_warehouse(warehouse, building):
    """Copy the live file for dbt; a full disk is one clear error (the caller removes the partial copy)."""
    try:
        with open(warehouse, "rb") as src, open(building, "wb") as dst:
            size, offset = os.fstat(src.fileno()).st_size, 0
            while offset < size:
                offset += os.sendfile(dst.fileno(), src.fileno(), offset, min(COPY_CHUNK, size - offset))
                stop_point("copy")
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise BuildError(
                f"no space left on the device of {building.parent} to copy the warehouse "
                f"({Path(warehouse).stat().st_size / 1e6:.0f} MB; a build needs room for a second "
                "copy): the warehouse is unchanged"
            ) from None
        raise


def prepare(building, processor, stanza_dir, echo, device="auto"):
    """Bring the copy's schemas up to date and parse new outputs; returns every dbt var (defaults
    and the ones the build sets itself), and the device stanza parsed on (None: nothing parsed).
    The device is no dbt var: a parse is the same whatever parsed it (processing/parse.py)."""
    stop_point("processing")
    con = connect(building)
    try:
        ensure_raw_schema(con)
        processing.ensure_cache_schema(con)
        con.execute(META_SQL)
        stanza_processors, reference_parsers, parsed_on = {}, {}, None
        text_references = con.execute(
            "select string_agg(corpus, ', ' order by corpus) from raw.treebank_files where reference = 'text'"
        ).fetchone()[0]
        if processor == "stanza" or text_references:
            if processor != "stanza":  # text references are parsed whatever parses the outputs
                processing.require_stanza(
                    f"a build of the text references of corpora {text_references} (load-references: their trees "
                    "are their stanza parse, whatever the processor)",
                    "or load a treebank for them: load-treebank --replace",
                )
            parsed = processing.process_pending(
                con, model_dir=stanza_dir, progress=echo, device=device, references_only=processor != "stanza"
            )
            languages = parsed["languages"].items()
            # The processor id of every language that has output text, as processing resolved it.
            if processor == "stanza":
                stanza_processors = {lang: stats["processor"] for lang, stats in languages}
            reference_parsers = {lang: stats["processor"] for lang, stats in languages if stats["references"]}
            parsed_on = parsed["device"]
    finally:
        con.close()
    return {
        **build_vars.defaults(),
        "processor": processor,
        "stanza_processors": stanza_processors,
        "reference_parsers": reference_parsers,
        "bleu_nltk_version": NLTK_COMPAT_VERSION,
        "sacrebleu_signatures": sacrebleu_signatures(),
    }, parsed_on


# Everything but the runs that the marts depend on. When any of it differs from the last
# successful build, the build is a full refresh.
REFERENCE_STATE_SQL = """
select concat_ws(' ', reference, corpus, language, sha256, loaded_at) from raw.treebank_files
union all select concat_ws(' ', 'human', count(*), max(loaded_at)) from raw.human_judgments
union all select concat_ws(' ', 'rules', count(*), max(loaded_at)) from raw.lambre_manual_rules
union all select concat_ws(' ', 'reference-free corpus', corpus, language) from raw.reference_free_corpora
union all select concat_ws(' ', 'system human', count(*), max(loaded_at)) from raw.system_human_scores
union all select concat_ws(' ', 'campaign date', campaign, date_text, set_at) from raw.campaign_dates
"""


META_SQL = """
create schema if not exists meta;
create table if not exists meta.builds (
    started_at     timestamp not null,  -- UTC
    seconds        double not null,     -- processing and dbt, wall time
    processor      varchar not null,    -- aligned | stanza
    full_refresh   boolean not null,    -- false: only changed runs were recomputed
    dbt_vars       json not null,       -- every var the build passed, stanza processor ids included
    base_state     varchar not null,    -- sha256 of code, vars, treebanks, judgments and rules;
                                        -- 'partial: SELECT' after a build of some nodes (PARTIAL)
    models         integer not null,    -- dbt nodes that ran, by kind
    tests          integer not null,
    srlens_version varchar not null,
    dbt_version    varchar not null,
    duckdb_version varchar not null,
    signature      varchar,             -- srlens/signature.py; NULL in builds before it existed
    stanza_device  varchar,             -- cpu or cuda: where stanza parsed; NULL: nothing parsed
    oldest_reader  varchar              -- the oldest DuckDB release srlens's builds are tested to open in
                                        -- (loaders/store.py OLDEST_READER); NULL in builds before it was kept
);
alter table meta.builds add column if not exists signature varchar;
alter table meta.builds add column if not exists stanza_device varchar;
alter table meta.builds add column if not exists oldest_reader varchar;
create table if not exists meta.built_submissions (
    submission_id varchar not null,
    loaded_at     timestamp not null
);
-- a removed run's corpus, team and campaign are recomputed (int_changed_corpora, int_changed_scopes);
-- NULL in builds before they were kept, which only a full build follows (the code changed)
alter table meta.built_submissions add column if not exists corpus varchar;
alter table meta.built_submissions add column if not exists team varchar;
alter table meta.built_submissions add column if not exists campaign varchar;
"""


# The base state of a partial build (build's select): no digest starts with it, so the next build is full.
PARTIAL = "partial:"


def base_state(building, all_vars, project_dir):
    """(digest of everything this build depends on except the runs themselves, the last build's)."""
    digest = hashlib.sha256(json.dumps(all_vars, sort_keys=True).encode())
    digest.update(metadata.version("srlens").encode())
    code_files = [
        f
        for f in project_dir.rglob("*")
        if f.suffix in (".sql", ".yml") and "target" not in f.parts and "logs" not in f.parts
    ]
    for path in sorted(code_files) + sorted(UDF_DIR.glob("*.py")):  # and the UDFs the models call
        digest.update(path.name.encode() + path.read_bytes())
    con = duckdb.connect(str(building), read_only=True)
    try:
        for (line,) in sorted(con.execute(REFERENCE_STATE_SQL).fetchall(), key=str):
            digest.update(str(line).encode())
        last = last_build(con, "base_state")
    finally:
        con.close()
    return digest.hexdigest(), last


def record_build(building, started_at, seconds, all_vars, base, full, target_dir, parsed_on=None, partial=False):
    """Note the build in meta.builds (read by `srlens status`) and the runs it computed; returns the
    number of output sentences parsed in chunks (the build summary says it). A partial build drops
    nothing: the models it left out are not stale."""
    results = json.loads((target_dir / "run_results.json").read_text())["results"]
    kinds = [r["unique_id"].split(".")[0] for r in results]
    con = connect(building)
    try:
        con.execute(
            """insert into meta.builds (started_at, seconds, processor, full_refresh, dbt_vars, base_state,
                       models, tests, srlens_version, dbt_version, duckdb_version, signature, stanza_device,
                       oldest_reader)
                       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                started_at,
                seconds,
                all_vars["processor"],
                full,
                json.dumps(all_vars),
                base,
                kinds.count("model"),
                kinds.count("test"),
                metadata.version("srlens"),
                metadata.version("dbt-core"),
                duckdb.__version__,
                all_vars["signature"],
                parsed_on,
                OLDEST_READER,
            ],
        )
        if full and not partial:
            drop_stale_relations(con, results)
        con.execute("delete from meta.built_submissions")
        con.execute(
            "insert into meta.built_submissions (submission_id, loaded_at, corpus, team, campaign) "
            "select submission_id, loaded_at, corpus, team, campaign from raw.submissions"
        )
        if partial and "model.srlens.sentence_scores" not in {r["unique_id"] for r in results}:
            return 0  # not built (or not by this build)
        return con.execute("select count(*) from sentence_scores where processing_status = 'chunked'").fetchone()[0]
    finally:
        con.close()


# dbt's own schemas: what is in them is srlens's to remove. Not main, where the marts (public) are.
OWN_SCHEMAS = ("staging", "intermediate")


def drop_stale_relations(con, results):
    """After a full build, drop the tables and views of dbt's own schemas that no model made: a model
    that a newer srlens renamed or removed (int_sentence_udf_scores, now int_sentence_accuracies)
    would otherwise stay in the warehouse with the figures of an older build."""
    models = {r["unique_id"].split(".")[-1] for r in results if r["unique_id"].startswith("model.")}
    relations = con.execute(
        """select schema_name, table_name, 'table' from duckdb_tables()
           where database_name = current_database() and list_contains(?, schema_name)
           union all
           select schema_name, view_name, 'view' from duckdb_views()
           where database_name = current_database() and list_contains(?, schema_name) and not internal""",
        [list(OWN_SCHEMAS), list(OWN_SCHEMAS)],
    ).fetchall()
    for schema, name, kind in relations:
        if name not in models:
            con.execute(f"drop {kind} {identifier(schema)}.{identifier(name)}")


def _failures(output):
    """The lines of dbt's output that say what failed."""
    keep = [line for line in output.splitlines() if any(word in line for word in ("ERROR", "FAIL", "Error", "error"))]
    return "\n".join(keep[-20:]) or output[-2000:]
