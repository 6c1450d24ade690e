"""`srlens query`: one read-only SQL query, printed as a table, CSV or JSON."""

import duckdb
import sqlglot
from sqlglot import exp

READ_ONLY_ROOTS = (exp.Query, exp.Describe)


class QueryRefused(Exception):
    pass


def check_read_only(sql):
    """Accept exactly one SELECT-like statement (checked with sqlglot); refuse anything else."""
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.ParseError as err:
        raise QueryRefused(f"cannot parse the query: {str(err).splitlines()[0]}") from None
    if len(statements) != 1:
        raise QueryRefused(f"expected exactly one statement, found {len(statements)}")
    statement = statements[0]
    if not isinstance(statement, READ_ONLY_ROOTS):
        raise QueryRefused(f"only read-only queries are allowed (this is a {statement.key.upper()} statement)")
    for node in statement.walk():
        if isinstance(node, (exp.DML, exp.DDL, exp.Command)):
            raise QueryRefused(f"only read-only queries are allowed (found {node.key.upper()})")
    return statement


def run_query(warehouse, sql, fmt="table"):
    """The query's result formatted as text."""
    check_read_only(sql)
    con = duckdb.connect(str(warehouse), read_only=True)  # and DuckDB refuses writes too
    try:
        frame = con.execute(sql).df()
    finally:
        con.close()
    return format_frame(frame, fmt)


def format_frame(frame, fmt):
    """A result as text: an aligned table, CSV or JSON records."""
    if fmt == "csv":
        return frame.to_csv(index=False)
    if fmt == "json":
        return frame.to_json(orient="records", force_ascii=False, indent=2)
    if fmt == "table":
        return frame.to_string(index=False) if len(frame) else f"(no rows; columns: {', '.join(frame.columns)})"
    raise ValueError(f"unknown format {fmt!r}")
