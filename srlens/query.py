"""`srlens query`: one read-only SQL query, printed as a table, CSV or JSON.

The query runs in the sandbox (srlens/sandbox.py): DuckDB itself refuses writes and file access.
Rows are fetched from DuckDB's result stream a chunk at a time, and the rows a limit leaves out
are counted inside DuckDB, so a table of the first 1,000 rows of a billion-row result holds a few
thousand rows in memory, not a billion (docs/performance.md, "Loading").

duckdb, pandas and the sandbox are imported by the functions that run a query, not at the top: the
command line's parser reads FORMATS and TABLE_LIMIT without them (srlens --help stays light).
"""

import io

FORMATS = ("table", "csv", "json")
TABLE_LIMIT = 1000  # rows a table shows unless --limit says otherwise
_CHUNK_VECTORS = 8  # DuckDB vectors (2,048 rows each) fetched at a time


def __getattr__(name):
    """QueryRefused and check_read_only, which callers import from here, live in srlens/sandbox.py."""
    if name in ("QueryRefused", "check_read_only"):
        from srlens import sandbox  # noqa: PLC0415 (duckdb: see the module's docstring)

        return getattr(sandbox, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def write_query(warehouse, sql, out, fmt="table", limit=None):
    """Run one read-only query and write its rows to the text stream `out`.

    limit: at most this many rows; None means TABLE_LIMIT for a table and no limit for csv/json.
    Returns how many rows were left out (a table also says so in its last line).
    Ctrl-C interrupts the query (KeyboardInterrupt).
    """
    from srlens import sandbox  # noqa: PLC0415 (see the module's docstring)
    from srlens.status import require_warehouse  # noqa: PLC0415

    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise ValueError(f"--limit must be a whole number of rows, 1 or more, got {limit!r}")
    statement = sandbox.check_read_only(sql)
    if limit is None and fmt == "table":
        limit = TABLE_LIMIT
    con = sandbox.connect(require_warehouse(warehouse))
    try:
        return sandbox.interruptible(con, lambda: _stream(con, statement, out, fmt, limit))
    finally:
        con.close()


def run_query(warehouse, sql, fmt="table", limit=None):
    """The query's result formatted as text (see write_query)."""
    out = io.StringIO()
    write_query(warehouse, sql, out, fmt, limit)
    return out.getvalue()


def _stream(con, statement, out, fmt, limit):
    """Write the rows a chunk at a time; returns how many rows the limit left out."""
    import duckdb  # noqa: PLC0415 (see the module's docstring)
    import pandas as pd  # noqa: PLC0415

    result = con.execute(statement)
    kept, shown, wrote_rows, left_out = [], 0, False, 0
    first = chunk = result.fetch_df_chunk(_CHUNK_VECTORS)
    while len(chunk):
        if limit is not None:
            chunk = chunk.iloc[: limit - shown]
        shown += len(chunk)
        if fmt == "table":
            kept.append(chunk)
        else:  # csv and json go out as they come
            out.write(_csv(chunk, header=not wrote_rows) if fmt == "csv" else _json_records(chunk, wrote_rows))
            wrote_rows = True
        if limit is not None and shown >= limit:
            left_out = _count_rows(con, statement) - shown  # a second, cheap run
            break
        chunk = result.fetch_df_chunk(_CHUNK_VECTORS)
    if fmt == "table":
        frame = pd.concat(kept) if kept else first.iloc[:0]
        explain = statement.type == duckdb.StatementType.EXPLAIN
        out.write(_explain_text(frame) if explain and len(frame) else format_frame(frame, "table").rstrip("\n") + "\n")
        if left_out:
            out.write(
                f"({left_out} more row{'s' if left_out != 1 else ''} not shown: --limit N shows more, "
                f"--format csv or json shows all)\n"
            )
    elif fmt == "csv" and not wrote_rows:
        out.write(_csv(first.iloc[:0], header=True))
    elif fmt == "json":
        out.write("\n]\n" if wrote_rows else "[]\n")
    return left_out


def _count_rows(con, statement):
    """All rows of the statement's result, counted inside DuckDB (none is converted for Python)."""
    import duckdb  # noqa: PLC0415 (see the module's docstring)

    con.abort()  # the rest of the first run's rows are not needed
    try:
        return con.sql(statement.query).aggregate("count(*)").fetchall()[0][0]
    except duckdb.Error:  # not countable as a relation: run it again and count the chunks
        result, rows = con.execute(statement), 0
        while len(chunk := result.fetch_df_chunk(_CHUNK_VECTORS)):
            rows += len(chunk)
        return rows


def _csv(frame, header):
    return frame.to_csv(index=False, header=header)


def _json_records(frame, more):
    """A chunk's records for the one JSON list written across chunks: `[` first, `,` between."""
    body = frame.to_json(orient="records", force_ascii=False, indent=2, date_format="iso").strip()
    return ("," if more else "[") + body[1:-1].rstrip()


def _explain_text(frame):
    """EXPLAIN's plan as DuckDB draws it (its last column), not squeezed into a table cell."""
    return "\n".join(str(value).rstrip("\n") for value in frame.iloc[:, -1]) + "\n"


def format_frame(frame, fmt):
    """A result as text: an aligned table, CSV or JSON records."""
    if fmt == "csv":
        return frame.to_csv(index=False)
    if fmt == "json":
        return frame.to_json(orient="records", force_ascii=False, indent=2, date_format="iso")
    if fmt == "table":
        from srlens.status import terminal_safe  # noqa: PLC0415 (see the module's docstring)

        frame = terminal_safe(frame)
        return frame.to_string(index=False) if len(frame) else f"(no rows; columns: {', '.join(frame.columns)})"
    raise ValueError(f"unknown format {fmt!r}")
