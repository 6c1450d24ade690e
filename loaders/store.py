"""Writing to the warehouse: one writer at a time, one transaction per load."""

import contextlib
import fcntl
import hashlib
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pyarrow as pa

from srlens.paths import RAW_SCHEMA_SQL


# The storage format a new warehouse file is written in: BI tools and other readers often bundle
# an older DuckDB, and DuckDB's default ('latest') opens only in the version that wrote it. A file
# keeps the format it was created with, whichever DuckDB writes to it later. DuckDB 1.1.0 and later
# open it (measured, see README); dbt_project/profiles.yml sets the same.
STORAGE_VERSION = "v1.1.0"


def connect(path):
    """A writing connection; creates the file in STORAGE_VERSION if it does not exist."""
    return duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_VERSION})


@contextlib.contextmanager
def writer_lock(warehouse):
    """Serialize loads and builds on one warehouse (a build swaps the file)."""
    warehouse = Path(warehouse)
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{warehouse}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure_raw_schema(con):
    con.execute(RAW_SCHEMA_SQL.read_text())


@contextlib.contextmanager
def open_for_write(warehouse):
    """A connection holding the writer lock, with the raw schema in place."""
    with writer_lock(warehouse):
        con = connect(warehouse)
        try:
            ensure_raw_schema(con)
            yield con
        finally:
            con.close()


@contextlib.contextmanager
def transaction(con):
    """All or nothing: a failure anywhere rolls back every statement."""
    con.execute("begin transaction")
    try:
        yield con
    except BaseException:
        con.execute("rollback")
        raise
    con.execute("commit")


def utc_now():
    """The load/parse timestamp stored in the warehouse: UTC, without time zone."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def file_sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def insert_columns(con, table, columns, schema=None):
    """Bulk insert of column lists (dict name -> list) through Arrow, typed by `schema` if given."""
    batch = pa.table(columns, schema=schema)
    con.register("_srlens_batch", batch)
    try:
        names = ", ".join(columns)
        con.execute(f"insert into {table} ({names}) select {names} from _srlens_batch")
    finally:
        con.unregister("_srlens_batch")
