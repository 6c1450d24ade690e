"""CPU of the parts of int_output_words_aligned (processor 'aligned') on one built warehouse: the UDF alone
on its whole input, and CTEs of the model's SQL as temp tables.

    python bench/aligned_parts.py WAREHOUSE [--udf] [--profile] [--cte NAME ...]

The SQL is what `dbt compile` makes of this tree's project (bench/models_before_after.py), run on a
read-only attachment of the warehouse, memory_limit 3GB. --udf: the rows that int_output_words_aligned
passes to srlens_aligned_words (the SQL before its `aligned_words` CTE) are read into arrow, then the
UDF runs on them in chunks of 2,048 rows, as DuckDB calls it, in this process; --profile: the same
under cProfile. --cte NAME: `create temp table as` the SQL up to that CTE's end, then `select * from
NAME`. The CPU is the process's user + sys (DuckDB's threads included).
"""

import argparse
import cProfile
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models_before_after import REPO, compile_models  # noqa: E402


def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def through(sql, name):
    """The model's `with` clause through the end of the CTE `name`, and that CTE's body."""
    start = sql.index(f"    {name} as ")
    body = sql.index("(\n", start) + 1  # after `as (` or `as materialized (`
    end = sql.index("\n    ),\n", start) + len("\n    )")
    return sql[:end], sql[body : end - 1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("warehouse", type=Path)
    p.add_argument("--udf", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--cte", nargs="*", default=[])
    args = p.parse_args()
    warehouse = args.warehouse.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        sql = compile_models(REPO, ["int_output_words_aligned"], warehouse, work)["int_output_words_aligned"]
    sql = sql.replace('"compile"."', '"srlens"."')
    con = duckdb.connect()
    con.execute(f"attach '{warehouse}' as srlens (read_only)")
    con.execute("set memory_limit = '3GB'")
    for name in args.cte:
        with_clause, _ = through(sql, name)
        start, wall = cpu(), time.perf_counter()
        con.execute(f"create or replace temp table part as {with_clause} select * from {name}")
        rows = con.execute("select count(*) from part").fetchone()[0]
        print(f"{name}: {rows:,} rows, CPU {cpu() - start:.2f} s, wall {time.perf_counter() - wall:.2f} s")
    if args.udf or args.profile:
        from srlens.udfs import aligned

        # The UDF's arguments: the aligned_words CTE with the call taken out.
        with_clause, _ = through(sql, "aligned_sentences")
        _, body = through(sql, "aligned_words")
        call = "unnest(srlens_aligned_words(o.outputs, s.sentences, v.vocabulary), recursive := true)"
        assert call in body, "int_output_words_aligned no longer calls the UDF as this script expects"
        select = body.replace(call, "o.outputs, s.sentences, v.vocabulary")
        inputs = con.sql(f"{with_clause} {select}").to_arrow_table()
        chunks = [inputs.slice(i, 2048) for i in range(0, len(inputs), 2048)]

        def run():
            words = 0
            for c in chunks:
                columns = (c.column(name) for name in ("outputs", "sentences", "vocabulary"))
                words += len(aligned._udf_aligned_words(*columns).flatten())
            return words

        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(run)
            pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        else:
            start, wall = cpu(), time.perf_counter()
            words = run()
            print(
                f"UDF alone: {len(inputs):,} rows, {words:,} words, CPU {cpu() - start:.2f} s, "
                f"wall {time.perf_counter() - wall:.2f} s"
            )


if __name__ == "__main__":
    main()
