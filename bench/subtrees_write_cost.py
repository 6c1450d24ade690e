"""Where int_subtrees' CPU goes at campaign scale: its compiled SQL written into a new database file
(the table created, then checkpointed, as a build writes it) beside variants that bound what a
rewrite could save, and int_subtree_support with the subtree names rendered from the words instead
of read from int_subtrees' strings.

    python bench/subtrees_write_cost.py WAREHOUSE [--rounds 2] [--doc TITLE]

WAREHOUSE is a built warehouse (its dbt work folder `.NAME.dbt` holds the compiled SQL). Each query
runs in a fresh process (two threads, memory_limit 3GB as `srlens build` sets it), on a read-only
attachment of the warehouse; CPU is the process's user + sys seconds for the query. The variants run
alternately, round after round. "lower bound" variants are not possible models (they drop what a
reader needs): they say how much a rewrite of that part could save at most. The rendered support is
compared with the built int_subtree_support (EXCEPT ALL both ways).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

RUN_ONE = r"""
import duckdb, json, os, resource, sys, time
warehouse, catalog, sql_file, out = sys.argv[1:]
con = duckdb.connect()
con.execute("set threads = 2; set memory_limit = '3GB'; set enable_progress_bar = false")
con.execute(f"attach '{warehouse}' as {catalog} (read_only)")
con.execute(f"attach '{out}' as o")
sql = open(sql_file).read()
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.time()
con.execute(f"create table o.t as {sql}")
con.execute("checkpoint o")
r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.time()
rows = con.execute("select count(*) from o.t").fetchone()[0]
print(json.dumps({
    "cpu": r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, "wall": t1 - t0, "rows": rows,
    "peak_mb": r1.ru_maxrss // 1024, "file_mb": os.path.getsize(out) / 1e6, "load": os.getloadavg()[0],
}))
"""

# int_subtree_support's names from the words of one occurrence of each (corpus, form): the packed
# positions list the words in the order the subtree string writes them (int_subtrees.sql); a third
# word whose head is the second is a chain, else a second dependent of the top word.
RENDERED_SUPPORT = """
with counted as (
    select corpus, form_id, any_value(view) as view, count(*) as sentences,
        min(sent_idx) as sent_idx, arg_min(packed_positions[1], sent_idx) as packed
    from {c}.intermediate.int_subtrees
    group by corpus, form_id
),
sentences as (
    select corpus, sent_idx,
        list({{'head_pos': head_pos, 'base_deprel': base_deprel, 'upos': upos, 'lemma_lower': lemma_lower}}
            order by pos) as words
    from {c}.intermediate.int_analysis_words
    group by corpus, sent_idx
),
occurrence as (
    select c.corpus, c.view, c.sentences, c.form_id,
        s.words[c.packed >> 42] as h, s.words[(c.packed >> 21) & 2097151] as x, s.words[c.packed & 2097151] as y,
        s.words[c.packed & 2097151].head_pos = (c.packed >> 21) & 2097151 as chain
    from counted c
    join sentences s using (corpus, sent_idx)
),
labelled as (
    select corpus, view, sentences, form_id, chain, {h} as top_label, {x} as a, {y} as b
    from occurrence
)
select corpus, view,
    case
        when chain is null then '(' || top_label || ' (' || a || '))'
        when chain then '(' || top_label || ' (' || a || ' (' || b || ')))'
        else '(' || top_label || ' (' || a || ' ' || b || '))'
    end as subtree,
    sentences, form_id
from labelled
"""


def label(word):
    """int_subtrees' label of a word in its view."""
    return (
        f"case view when 'dep' then coalesce({word}.base_deprel, '_') when 'pos' then coalesce({word}.upos, '_')"
        f" when 'pos_dep' then coalesce({word}.upos, '_') || '~' || coalesce({word}.base_deprel, '_')"
        f" when 'lemma' then coalesce({word}.lemma_lower, '_') end"
    )


def replaced(sql, old, new):
    assert old in sql, old
    return sql.replace(old, new)


def variants(compiled, catalog):
    model = (compiled / "intermediate" / "int_subtrees.sql").read_text()
    support = (compiled / "intermediate" / "int_subtree_support.sql").read_text()
    final = model[model.rindex("select\n    c.corpus") :]
    no_names = replaced(
        replaced(final, "    f.view,\n    f.subtree,\n", ""),
        "join (select distinct form_id, view, subtree from numbered) f using (form_id)",
        "",
    )
    min_max = replaced(
        replaced(model, "list(o.packed order by o.packed) as packed", "min(o.packed) as mn, max(o.packed) as mx"),
        "g.packed as packed_positions",
        "case when g.occurrences = 1 then [g.mn] else [g.mn, g.mx] end as packed_positions",
    )
    table = f"{catalog}.intermediate.int_subtrees"
    columns = "corpus, sent_idx, {}occurrences, packed_positions, form_id"
    return {
        "`int_subtrees` (main)": model,
        "`int_subtrees` without `view` and `subtree` (lower bound)": model.replace(final, no_names),
        "`int_subtrees` with count, min and max, no position list (lower bound)": min_max,
        "copy of the built `int_subtrees`, every column": f"select * from {table}",
        "copy, without `view`": f"select {columns.format('subtree, ')} from {table}",
        "copy, without `subtree`": f"select {columns.format('view, ')} from {table}",
        "copy, without `view` and `subtree`": f"select {columns.format('')} from {table}",
        "`int_subtree_support` (main)": support,
        "`int_subtree_support`, names rendered from the words": RENDERED_SUPPORT.format(
            c=catalog, h=label("h"), x=label("x"), y=label("y")
        ),
    }


def run(warehouse, catalog, sql, work):
    sql_file, out = work / "query.sql", work / "out.duckdb"
    sql_file.write_text(sql)
    for f in (out, Path(f"{out}.wal")):
        f.unlink(missing_ok=True)
    args = [sys.executable, "-c", RUN_ONE, str(warehouse), catalog, str(sql_file), str(out)]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[-1])


def rendered_support_equal(warehouse, catalog, sql):
    import duckdb

    con = duckdb.connect()
    con.execute(f"attach '{warehouse}' as {catalog} (read_only)")
    con.execute(f"create temp table rendered as {sql}")
    built = f"{catalog}.intermediate.int_subtree_support"
    one = con.execute(f"select count(*) from (select * from rendered except all select * from {built})").fetchone()
    other = con.execute(f"select count(*) from (select * from {built} except all select * from rendered)").fetchone()
    return one[0], other[0]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("warehouse", type=Path)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--doc", metavar="TITLE", help="also write the table as section TITLE of docs/benchmarks.md")
    args = p.parse_args()
    warehouse = args.warehouse.resolve()
    catalog = warehouse.stem
    compiled = warehouse.parent / f".{warehouse.name}.dbt" / "target" / "compiled" / "srlens" / "models"
    queries = variants(compiled, catalog)
    results = {name: [] for name in queries}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, sql in queries.items():
                results[name].append(run(warehouse, catalog, sql, Path(tmp)))
                print(r + 1, name, results[name][-1], flush=True)
    differ = rendered_support_equal(warehouse, catalog, queries["`int_subtree_support`, names rendered from the words"])

    def figures(runs, key, fmt):
        return ", ".join(fmt.format(x[key]) for x in runs)

    loads = [x["load"] for runs in results.values() for x in runs]
    lines = [
        f"Each query into a new database file, then checkpointed; two threads, a fresh process each, the "
        f"variants alternately, {args.rounds} rounds; 1-minute load average {min(loads):.1f} to {max(loads):.1f} "
        f"({os.cpu_count()} CPUs).",
        "",
        "| query | CPU s | peak MB | file MB | rows |",
        "|---|---|---|---|---:|",
    ]
    for name, runs in results.items():
        lines.append(
            f"| {name} | {figures(runs, 'cpu', '{:.1f}')} | {figures(runs, 'peak_mb', '{:,}')} | "
            f"{figures(runs, 'file_mb', '{:.0f}')} | {runs[0]['rows']:,} |"
        )
    lines += ["", f"Rendered support against the built one: {differ[0]} and {differ[1]} rows differ (EXCEPT ALL)."]
    body = "\n".join(lines)
    print(body)
    if args.doc:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from benchmarks_doc import write_section

        write_section(args.doc, body)


if __name__ == "__main__":
    main()
