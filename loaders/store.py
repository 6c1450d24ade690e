"""Writing to the warehouse: one writer at a time, one transaction per load.

duckdb is imported by the functions that connect, not at the top: a command that never writes
(srlens --help, srlens query's parser) does not pay for it.
"""

import contextlib
import fcntl
import hashlib
import os
import re
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

from srlens.paths import RAW_SCHEMA_SQL

# The storage format a new warehouse file is written in: BI tools and other readers often bundle
# an older DuckDB, and DuckDB's default ('latest') opens only in the version that wrote it. A file
# keeps the format it was created with, whichever DuckDB writes to it later. DuckDB 1.1.0 and later
# open it (measured on 30 builds, docs/duckdb-compatibility.md); dbt_project/profiles.yml sets the same.
STORAGE_VERSION = "v1.1.0"

# The oldest DuckDB release that opens every build (tests/builds/test_old_readers.py); `srlens status` says it.
OLDEST_READER = "1.1.0"

# What every writing connection sets, dbt's included (dbt_project/profiles.yml config_options).
# experimental_metadata_reuse (on by default in DuckDB 1.5.6 and 2.0): a checkpoint keeps the metadata of
# unchanged tables and row groups, and their metadata blocks may then point on to a block the
# checkpoint freed. DuckDB 1.4.2 and later never follow such a pointer; DuckDB 1.1.0 to 1.4.1 resolve
# it on reading and refuse the file ("Failed to load metadata pointer"), whatever the storage version.
# Off, every checkpoint writes all metadata afresh (docs/duckdb-compatibility.md).
WRITE_CONFIG = {"storage_compatibility_version": STORAGE_VERSION, "experimental_metadata_reuse": False}


def connect(path):
    """A writing connection; creates the file in STORAGE_VERSION if it does not exist."""
    import duckdb  # noqa: PLC0415 (see the module's docstring)

    # No DuckDB progress bar: a slow statement on a busy machine would print it into the load's
    # own output (loads report their progress themselves).
    con = duckdb.connect(str(path), config=WRITE_CONFIG)
    con.execute("set enable_progress_bar = false")
    return con


class WarehouseError(ValueError):
    """The warehouse cannot be used as asked: one line that says what to do."""


STOP_AT_ENV = "SRLENS_TEST_STOP_AT"


def stop_point(name):
    """Tests only: stop this process (SIGSTOP) at the named step, so that a test can SIGKILL it exactly there.

    Used where no output marks the moment: the middle of the copy and just before the swap of a
    build, just before a load's commit, and before each run of a campaign ("run"). Does nothing
    unless $SRLENS_TEST_STOP_AT is `name`.
    """
    if os.environ.get(STOP_AT_ENV) == name:
        os.kill(os.getpid(), signal.SIGSTOP)


def require_warehouse(warehouse):
    """The warehouse's path; a clear error where DuckDB would create an empty file or say less."""
    path = Path(warehouse)
    if not path.is_file():
        raise WarehouseError(
            f"no warehouse at {path}: load data first (srlens load-demo, srlens load-treebank) "
            "and run srlens build, or name another file with --warehouse or $SRLENS_WAREHOUSE"
        )
    return path


def interrupted(err):
    """Ctrl-C, however it surfaced: a KeyboardInterrupt, or DuckDB's error for the query it stopped on SIGINT
    (a RuntimeError 'Query interrupted' from a query in the main thread; InterruptException from interrupt())."""
    return (
        isinstance(err, KeyboardInterrupt)
        or (type(err) is RuntimeError and str(err) == "Query interrupted")
        or type(err).__name__ == "InterruptException"
    )


def resolve(warehouse, create=False):
    """The warehouse's real path (symlinks followed). A typo never makes a new file: the folder must
    exist, and so must the file unless `create` (the loads that can come first: load-treebank,
    load-demo, load-outputs --no-reference)."""
    path = Path(warehouse).resolve()
    if not path.parent.is_dir():
        raise WarehouseError(
            f"the folder {path.parent} of the warehouse {warehouse} does not exist: "
            f"create it (mkdir -p {path.parent}) or name another --warehouse"
        )
    refuse_reserved(path, warehouse)
    if not create:
        require_warehouse(warehouse)
    return path


# DuckDB renames a catalog with one of these names (temp.duckdb -> temp_db) while dbt-duckdb keeps it:
# such a warehouse could never be built.
RESERVED_CATALOGS = ("main", "temp", "system")


def refuse_reserved(path, warehouse):
    """A warehouse must not be one of srlens's own files beside another warehouse (a build removes
    those as a killed build's leftovers), nor have a name DuckDB reserves."""
    own = path.parent.name.startswith(".") and path.parent.name.endswith(".dbt")
    own = own or re.fullmatch(r"\..+\.(building|build\.pid)(\.wal|\.tmp)?", path.name)
    if own:
        raise WarehouseError(
            f"{warehouse} is where srlens keeps a build's files for another warehouse (removed by its "
            "builds): keep warehouses elsewhere"
        )
    if catalog_name(path) in RESERVED_CATALOGS:
        raise WarehouseError(
            f"{warehouse}: DuckDB reserves the name '{catalog_name(path)}' (the part of the file name before "
            "the first dot): name the warehouse otherwise, e.g. srlens.duckdb"
        )


def beside(warehouse, part):
    """A file srlens keeps hidden beside the warehouse file: `.NAME.part` (a build's copy, its pid file,
    dbt's work folder; srlens/build.py BuildFiles)."""
    warehouse = Path(warehouse)
    return warehouse.parent / f".{warehouse.name}.{part}"


def catalog_name(warehouse):
    """The name DuckDB gives the warehouse's catalog: the first non-empty dot-separated part of the file
    name ("wh.duckdb" -> "wh"); dbt qualifies every relation with it."""
    return Path(warehouse).name.lstrip(".").split(".")[0]


def build_copy(warehouse):
    """The copy a build writes, in dbt's work folder `.NAME.dbt`: named after the warehouse's catalog,
    so that dbt sees the same catalog, and, opened by that relative name from the work folder, the
    same profile for every warehouse of that name (srlens/build.py, parse_cache)."""
    return beside(warehouse, "dbt") / f"{catalog_name(warehouse)}.duckdb"


def warehouse_files(warehouse):
    """The warehouse file and the files srlens and DuckDB keep beside it (its write-ahead log, the
    writer lock, a build's copy, its log and its pid file), by real path: no output may be written
    over one."""
    real = Path(warehouse).resolve()
    building, pid = build_copy(real), beside(real, "build.pid")
    return (real, Path(f"{real}.wal"), Path(f"{real}.lock"), building, Path(f"{building}.wal"), pid)


def is_warehouse_file(path, warehouse):
    """Whether `path` names the warehouse or one of its companion files, by any name (symlinks, hard links)."""
    path = Path(path)
    own = warehouse_files(warehouse)
    if path.resolve() in own:
        return True
    return path.exists() and any(f.exists() and os.path.samefile(path, f) for f in own)


@contextlib.contextmanager
def writer_lock(warehouse, create=False):
    """Serialize loads and builds on one warehouse (a build swaps the file); yields its real path.

    The lock file is named after the real path, so every name that reaches the file through
    symlinks takes the same lock. Names this cannot see (hard links, bind mounts of the file) are
    covered by DuckDB's own lock on the file: a build holds a read-only connection to it, and
    DuckDB then refuses every writer, whatever name it uses (see connect_for_write).
    """
    path = resolve(warehouse, create)
    with open(f"{path}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"srlens: waiting for another srlens command on {path} to finish", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield path


def connect_for_write(path, warehouse=None):
    """connect(), with DuckDB's refusal of a second writer said in one line."""
    import duckdb  # noqa: PLC0415 (see the module's docstring)

    try:
        return connect(path)
    except duckdb.IOException as e:
        if "lock" not in str(e).lower():
            raise
        held = re.search(r"held in (.*?\(PID \d+\))", str(e))
        holder = f"{held.group(1)}; " if held else ""
        raise WarehouseError(
            f"cannot write {warehouse or path}: another program has the file open ({holder}"
            "e.g. an srlens build through another name of the file, a BI tool or a DuckDB "
            "shell); nothing was written, try again when it is done"
        ) from None


def ensure_raw_schema(con):
    con.execute(RAW_SCHEMA_SQL.read_text())


@contextlib.contextmanager
def open_for_write(warehouse, create=False):
    """A connection holding the writer lock, with the raw schema in place. The warehouse must exist
    unless `create` (see resolve); a new one is deleted again if the load fails, so a failed first
    load leaves no empty warehouse behind."""
    with writer_lock(warehouse, create) as path:
        new = not path.exists()
        con = connect_for_write(path, warehouse)
        try:
            ensure_raw_schema(con)
            yield con
        except BaseException:
            con.close()
            if new:
                for made in (path, path.with_name(f"{path.name}.wal")):
                    made.unlink(missing_ok=True)
            raise
        finally:
            con.close()


@contextlib.contextmanager
def transaction(con):
    """All or nothing: a failure anywhere rolls back every statement."""
    con.execute("begin transaction")
    try:
        yield con
        stop_point("commit")
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")


def utc_now():
    """The load/parse timestamp stored in the warehouse: UTC, without time zone."""
    return datetime.now(UTC).replace(tzinfo=None)


def file_sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


INSERT_ROWS = 20_000  # rows bound per statement: DuckDB holds the bound values twice, so memory stays bounded


def insert_columns(con, table, columns):
    """Bulk insert of column lists (dict name -> list of Python values), INSERT_ROWS rows per statement.

    Each list is bound as one DuckDB list parameter and unnested, the columns side by side; the
    table's column types convert the values. Unlike an Arrow table, this imports neither pyarrow
    nor pandas (DuckDB imports pandas on its first Arrow scan): a load of one run costs about a
    second less (docs/performance.md, "Loading"), and a large treebank
    loads as fast as through Arrow with those imports.
    """
    names = ", ".join(columns)
    unnested = ", ".join(f"unnest(${k}) as {name}" for k, name in enumerate(columns, start=1))
    sql = f"insert into {table} ({names}) select {names} from (select {unnested})"
    rows = len(next(iter(columns.values())))
    for start in range(0, rows, INSERT_ROWS):
        con.execute(sql, [values[start : start + INSERT_ROWS] for values in columns.values()])


def insert_lines(con, table, constants, columns, lines, names):
    """Bulk insert of tab-separated `lines`, split by DuckDB into the columns `names`: no Python value per field,
    which halves the cost of a treebank's insert (docs/performance.md, "Loading"). `columns` are column lists
    as in insert_columns, one value per line; `constants` (name -> value) are the same in every row. The
    lines hold no line end, and each has len(names) fields."""
    k = len(constants)
    selected = [f"${j} as {name}" for j, name in enumerate(constants, start=1)]
    selected += [*columns] + [f"f[{j}] as {name}" for j, name in enumerate(names, start=1)]
    unnested = [f"unnest(${j}) as {name}" for j, name in enumerate(columns, start=k + 1)]
    unnested.append(f"string_split(unnest(string_split(${k + len(columns) + 1}, chr(10))), chr(9)) as f")
    sql = (
        f"insert into {table} ({', '.join([*constants, *columns, *names])}) "
        f"select {', '.join(selected)} from (select {', '.join(unnested)})"
    )
    for start in range(0, len(lines), INSERT_ROWS):
        end = start + INSERT_ROWS
        chunk = [values[start:end] for values in columns.values()]
        con.execute(sql, [*constants.values(), *chunk, "\n".join(lines[start:end])])
