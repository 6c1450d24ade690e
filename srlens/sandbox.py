"""The one way srlens runs SQL that a user wrote: a read-only connection that DuckDB itself guards.

`connect()` gives a connection on which DuckDB refuses, whatever the SQL:
  * writing the warehouse: the file is attached READ_ONLY, and it is the only database (the
    in-memory one every DuckDB connection starts with is detached);
  * touching any other file or the network (COPY, EXPORT, ATTACH, read_csv/read_text/glob, a
    file name as a table, INSTALL/LOAD): enable_external_access = false, with
    autoinstall/autoload of extensions, community extensions, persistent secrets and Python
    replacement scans (a DataFrame variable read as a table) off as well;
  * writing temporary files: temp_directory is empty, so a query larger than memory fails
    instead of spilling to disk;
  * opening any local file once the warehouse is attached, the warehouse's own path and its
    .wal included (which enable_external_access still allows): disabled_filesystems =
    'LocalFileSystem';
  * changing any of that: lock_configuration = true, set last (SET, RESET, PRAGMA fail).

`check_read_only()` then lets through exactly one statement that DuckDB's own parser types as a
read: SELECT (also WITH, FROM, VALUES, TABLE, SHOW, DESCRIBE, SUMMARIZE, PIVOT ... IN (...),
UNPIVOT), EXPLAIN [ANALYZE] of such a statement, and PIVOT with values found at run time (which
DuckDB runs as a MULTI statement: a temporary ENUM type, the query, dropping the type).

The warehouse is attached to an in-memory database rather than opened with
duckdb.connect(path, read_only=True), because DuckDB refuses, in one process, two connections to
the same file with different settings: a sandboxed and a plain read-only connection to the same
file (a notebook, a BI library, srlens's own loaders) can then coexist.
"""

import signal
import threading
from pathlib import Path

import duckdb

# Set when the database starts (before anything can run).
START_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_persistent_secrets": False,
    "python_enable_replacements": False,
    "temp_directory": "",
}
# DuckDB names its built-in databases so; a warehouse file named like one is attached as "warehouse".
_RESERVED_NAMES = ("memory", "system", "temp", "main")
READ_KINDS = "SELECT, WITH, FROM, SHOW, DESCRIBE, SUMMARIZE, PIVOT, UNPIVOT, VALUES, TABLE or EXPLAIN"


class QueryRefused(ValueError):
    """The SQL is not exactly one read-only statement: one line that says why."""


def _string(text):
    return "'" + str(text).replace("'", "''") + "'"


def identifier(text):
    """A name as a quoted SQL identifier, whatever characters it holds."""
    return '"' + str(text).replace('"', '""') + '"'


def connect(warehouse, writable_dir=None):
    """A read-only connection to the warehouse file, guarded by DuckDB's own settings (see above).

    writable_dir: the one folder the connection may write files to (export-parquet's COPY TO);
    None for everything that runs a user's SQL.
    """
    path = Path(warehouse).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no warehouse at {warehouse}")
    name = path.name.split(".")[0] or "warehouse"
    name = "warehouse" if name.lower() in _RESERVED_NAMES else name
    con = duckdb.connect(":memory:", config=START_CONFIG)
    try:
        con.execute("set enable_progress_bar = false")  # DuckDB's bar would mix with the output
        con.execute(f"attach {_string(path)} as {identifier(name)} (read_only)")
        con.execute(f"use {identifier(name)}")
        con.execute("detach memory")
        if writable_dir is not None:  # only settable while external access is still on
            con.execute(f"set allowed_directories = [{_string(str(Path(writable_dir).resolve()) + '/')}]")
        con.execute("set enable_external_access = false")
        if writable_dir is None:
            # DuckDB still allows the attached file's own paths (the file, its .wal): COPY ... TO
            # 'srlens.duckdb.wal', or TO the file with use_tmp_file false, would write them. The
            # attached file stays readable through the handle DuckDB already holds.
            con.execute("set disabled_filesystems = 'LocalFileSystem'")
        con.execute("set lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _tokens(sql):
    """DuckDB's own tokens of `sql` as (start, end, type, text), comments left out."""
    tokens = duckdb.tokenize(sql)
    spans = []
    for i, (start, kind) in enumerate(tokens):
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(sql)
        if kind != duckdb.token_type.comment:
            spans.append((start, end, kind, sql[start:end].strip()))
    return spans


def _first_word(sql):
    words = [
        text for _, _, kind, text in _tokens(sql) if kind in (duckdb.token_type.keyword, duckdb.token_type.identifier)
    ]
    return words[0].upper() if words else ""


def _explained(sql):
    """The statement after EXPLAIN [ANALYZE] [(options)], as DuckDB tokenizes it."""
    tokens = _tokens(sql)
    i = 1  # tokens[0] is EXPLAIN
    if i < len(tokens) and tokens[i][3].lower() == "analyze":
        i += 1
    if i < len(tokens) and tokens[i][3] == "(":
        depth = 0
        while i < len(tokens):
            if tokens[i][2] == duckdb.token_type.operator:  # not a '(' inside a string
                depth += tokens[i][3].count("(") - tokens[i][3].count(")")
            i += 1
            if depth <= 0:
                break
    return sql[tokens[i][0] :] if i < len(tokens) else ""


# Statement types whose name says less than the statement's first word (e.g. IMPORT is a PRAGMA,
# INSTALL a LOAD, CHECKPOINT a CALL, USE a SET, BEGIN a TRANSACTION).
_NAMED_BY_FIRST_WORD = ("PRAGMA", "CALL", "SET", "LOAD", "TRANSACTION", "MULTI", "SELECT")


def _kind(statement):
    """What the statement is, for a message: DROP, COPY, IMPORT, EXPLAIN of COPY, ..."""
    try:
        kind = statement.type.name
    except ValueError:  # a type the Python client has no name for (UPDATE EXTENSIONS)
        return _first_word(statement.query) or "an unknown statement"
    if kind == "EXPLAIN":
        inner = duckdb.extract_statements(_explained(statement.query) or "select 1")
        return "EXPLAIN of " + (_kind(inner[0]) if len(inner) == 1 else "several statements")
    return (_first_word(statement.query) or kind) if kind in _NAMED_BY_FIRST_WORD else kind


def _is_read(statement):
    try:
        kind = statement.type
    except ValueError:  # see _kind
        return False
    if kind == duckdb.StatementType.SELECT:
        return True
    if kind == duckdb.StatementType.MULTI:
        # Only a PIVOT whose values DuckDB finds at run time is parsed into several statements;
        # a PIVOT statement holds nothing but queries.
        return _first_word(statement.query) in ("PIVOT", "PIVOT_WIDER", "UNPIVOT", "PIVOT_LONGER")
    if kind == duckdb.StatementType.EXPLAIN:
        inner = _explained(statement.query)
        try:
            inner_statements = duckdb.extract_statements(inner)
        except (duckdb.Error, ValueError):
            return False
        return len(inner_statements) == 1 and _is_read(inner_statements[0])
    return False


def check_read_only(sql):
    """The one read statement in `sql`, as DuckDB parsed it; QueryRefused for anything else."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as err:
        raise QueryRefused(f"cannot parse the query: {str(err).strip().splitlines()[0]}") from None
    if len(statements) != 1:
        raise QueryRefused(f"expected exactly one statement, found {len(statements)}")
    statement = statements[0]
    if not _is_read(statement):
        raise QueryRefused(
            f"only read-only queries are allowed, not {_kind(statement)} (a query starts with {READ_KINDS})"
        )
    return statement


def interruptible(con, work):
    """work() run so that Ctrl-C stops the query running on `con`, then raises KeyboardInterrupt.

    Python runs a signal handler only between bytecodes of the main thread, and DuckDB holds the
    thread that runs a query; a KeyboardInterrupt raised around a running query also left DuckDB
    unable to stop it. So the query runs in a worker thread, and the main thread's SIGINT handler
    calls con.interrupt(), which makes the query fail at once with duckdb.InterruptException.
    DuckDB forgets an interrupt that comes before its query starts (the worker may still be importing
    pandas when Ctrl-C comes), so the main thread interrupts again every 0.1 s until the worker ends.
    """
    if (
        threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    ):  # no Ctrl-C to handle here
        return work()
    outcome, interrupted = {}, []

    def run():
        try:
            outcome["value"] = work()
        except BaseException as err:  # handed to the main thread
            outcome["error"] = err

    def on_sigint(signum, frame):
        interrupted.append(signum)
        con.interrupt()

    worker = threading.Thread(target=run, name="srlens-query", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
            if interrupted:
                con.interrupt()
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")
