"""Profile one dbt model's SQL on a built warehouse: wall time, peak memory and the slowest operators.

    python bench/profile_model.py WAREHOUSE intermediate/scoring/int_dea_edges.sql [--before OLD.sql]

The model is run as a full build would run it (every submission), on a read-only attachment of
the warehouse, with DuckDB's JSON profiler. --before runs another version of the model (e.g.
`git show HEAD~1:dbt_project/models/intermediate/scoring/int_dea_edges.sql > old.sql`) on the same data,
checks that both give the same rows and prints both profiles: the before/after record of a fix.
Plain-SQL models only (no Python UDFs are registered here).
"""

import argparse
import contextlib
import io
import json
import platform
import re
import tempfile
import time
from pathlib import Path

import duckdb
from benchmarks_doc import write_section

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = {"stg": "staging", "int": "intermediate"}  # by model-name prefix; marts live in main


def render(sql):
    """The model's SQL with refs resolved to the attached warehouse and incremental filters off."""
    sql = re.sub(r"\{\{ incremental_by_submission\(\) \}\}", "", sql)
    sql = re.sub(r"\{\{ changed_submission\([^)]*\) \}\}", "true", sql)
    sql = re.sub(
        r"\{\{ ref\('([a-z_0-9]+)'\) \}\}",
        lambda m: f"w.{SCHEMAS.get(m.group(1).split('_')[0], 'main')}.{m.group(1)}",
        sql,
    )
    if "{{" in sql or "{%" in sql:
        raise SystemExit(
            "this model uses Jinja beyond ref() and the incremental macros; profile its "
            "compiled SQL from the build's target folder instead"
        )
    return sql


def profile(con, name, sql, memory_limit):
    con.execute(f"set memory_limit = '{memory_limit}'")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        con.execute("pragma enable_profiling = 'json'")
        con.execute(f"pragma profiling_output = '{out.name}'")
        start = time.perf_counter()
        con.execute(f"create table {name} as {sql}")
        seconds = time.perf_counter() - start
        con.execute("pragma disable_profiling")
        tree = json.loads(Path(out.name).read_text())
    operators = []

    def walk(node):
        operators.append(
            (
                node.get("timing", 0),
                node.get("intermediate_rows", 0),
                node.get("type"),
                json.dumps(node.get("extra_info", {}))[:160],
            )
        )
        for child in node.get("children", []):
            walk(child)

    for node in tree["operator"]:
        walk(node)
    rows = con.execute(f"select count(*) from {name}").fetchone()[0]
    print(
        f"{name}: {seconds:.2f} s wall, {tree['query']['cpu_time']:.2f} s cpu, {rows:,} rows, "
        f"peak DuckDB buffer memory {tree['system']['peak_buffer_memory'] / 2**20:,.0f} MB"
    )
    for timing, card, kind, extra in sorted(operators, key=lambda o: -o[0])[:8]:
        print(f"  {timing:7.2f} s {card:>12,} rows  {kind} {extra}")
    return seconds


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("warehouse")
    p.add_argument("model", help="path under dbt_project/models, e.g. intermediate/scoring/int_dea_edges.sql")
    p.add_argument("--before", help="another version of the model's SQL to compare with")
    p.add_argument("--memory-limit", default="6GB", help="DuckDB memory_limit, as srlens build sets it")
    p.add_argument("--doc", action="store_true", help="also write the output to docs/benchmarks.md")
    args = p.parse_args()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        run(args)
    print(printed.getvalue(), end="")
    if args.doc:
        con = duckdb.connect()
        con.execute(f"attach '{args.warehouse}' as w (read_only)")
        sentences = con.execute("select count(*) from w.raw.outputs").fetchone()[0]
        write_section(
            f"Profile of {Path(args.model).stem}",
            f"`python bench/profile_model.py WAREHOUSE {args.model}"
            f"{' --before OLD.sql' if args.before else ''} --doc` on a warehouse of {sentences:,} output "
            f"sentences; {platform.machine()}, DuckDB {duckdb.__version__}, memory_limit "
            f"{args.memory_limit}. Operator times are summed over threads.\n\n"
            f"```\n{printed.getvalue()}```",
        )


def run(args):
    con = duckdb.connect()
    con.execute(f"attach '{args.warehouse}' as w (read_only)")
    if args.before:
        profile(con, "before", render(Path(args.before).read_text()), args.memory_limit)
    profile(con, "after", render((REPO / "dbt_project" / "models" / args.model).read_text()), args.memory_limit)
    if args.before:
        differ = con.execute(
            "select (select count(*) from (from before except all from after)) + "
            "(select count(*) from (from after except all from before))"
        ).fetchone()[0]
        print("same rows before and after" if differ == 0 else f"{differ} rows differ between before and after")


if __name__ == "__main__":
    main()
