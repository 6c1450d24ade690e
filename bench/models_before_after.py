"""Before/after of dbt models on one built warehouse: wall, CPU and the slowest operators of each
model's SQL at an older revision and at this tree, and whether both give the same rows.

    python bench/models_before_after.py WAREHOUSE --before REV MODEL [MODEL ...] [--doc TITLE]

Each side's SQL is what `dbt compile` makes of that revision's project (a detached git worktree of
REV for the before side) with the vars of the warehouse's last build, on an empty database, with
--full-refresh: an incremental model compiles to its full-refresh SQL, and a data test (given by its
node name, e.g. unique_key_suspicious_subtrees_submission_id__view__subtree) reads every row. Each
model runs in a fresh process with that revision's srlens on the path (its Python UDFs registered),
on a read-only attachment of the warehouse, with DuckDB's profiler; its rows go to a Parquet file,
and the two sides' files are compared row for row on the columns both sides have (EXCEPT ALL both
ways: equal means every value equal, floats to the bit; a column only one side has is named, not
compared). Peak MB is the model process's peak resident memory (ru_maxrss: DuckDB, the Python UDFs
and the process itself).
Unlike profile_model.py this takes models with Jinja macros and UDFs (e.g. pairwise_significance).
"""

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def compile_models(tree, models, warehouse, work):
    """{model: compiled SQL} of the dbt project in `tree`, with the last build's vars of `warehouse`."""
    results = warehouse.parent / f".{warehouse.name}.dbt" / "target" / "run_results.json"
    all_vars = json.loads(results.read_text())["args"]["vars"]
    script = (
        "import sys; from pathlib import Path; from srlens.build import run_dbt\n"
        "tree, db, work, vars_, *models = sys.argv[1:]\n"
        "ok, out = run_dbt(['compile', '--full-refresh', '--select', *models, '--vars', vars_], Path(db), Path(work),"
        " project_dir=Path(tree) / 'dbt_project', echo=False)\n"
        "sys.exit(0 if ok else out[-3000:])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = [str(tree), str(work / "compile.duckdb"), str(work), json.dumps(all_vars), *models]
    subprocess.run([sys.executable, "-c", script, *args], env=env, check=True, cwd=work)
    compiled = work / "target" / "compiled" / "srlens" / "models"
    return {m: compiled_file(compiled, m).read_text() for m in models}


def compiled_file(compiled, name):
    """The compiled SQL of a model or a data test: dbt names the file of a test whose name has 64
    characters or more by its first 30 and the md5 of the whole name."""
    digest = hashlib.md5(name.encode("utf-8")).hexdigest()
    return next(iter([*compiled.rglob(f"{name}.sql"), *compiled.rglob(f"*_{digest}.sql")]))


def run_one(warehouse, sql_file, parquet, memory_limit):
    """In this process: the SQL on the warehouse (read-only, attached as dbt names it), profiled."""
    import duckdb

    from srlens.udfs import register_all

    con = duckdb.connect()
    con.execute(f"attach '{warehouse}' as srlens (read_only)")
    con.execute(f"set memory_limit = '{memory_limit}'")
    register_all(con)
    sql = Path(sql_file).read_text().replace('"compile"."', '"srlens"."')
    profile = Path(parquet).with_suffix(".json")
    con.execute("pragma enable_profiling = 'json'")
    con.execute(f"pragma profiling_output = '{profile}'")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
    con.execute(f"create temp table result as {sql}")
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu
    con.execute("pragma disable_profiling")
    con.execute(f"copy result to '{parquet}' (format parquet)")
    operators = []

    def walk(node):
        extra = json.dumps(node.get("extra_info", {}))[:110]
        operators.append((node.get("timing", 0), node.get("intermediate_rows", 0), node.get("type"), extra))
        for child in node.get("children", []):
            walk(child)

    for node in json.loads(profile.read_text())["operator"]:
        walk(node)
    rows = con.execute("select count(*) from result").fetchone()[0]
    top = sorted(operators, key=lambda o: -o[0])[:4]
    peak = usage.ru_maxrss / 1024  # MB: the process's peak resident memory, at the end of the model
    print(json.dumps({"wall": seconds, "cpu": cpu, "peak": peak, "rows": rows, "operators": top}))


def measure(tree, warehouse, sql, parquet, memory_limit):
    sql_file = parquet.with_suffix(".sql")
    sql_file.write_text(sql)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, __file__, "--run-one", str(warehouse), str(sql_file), str(parquet), memory_limit]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def same_rows(before, after):
    """(rows that differ, columns only `after` has, columns only `before` has): compared on the
    columns both sides have, so that an internal column a model gains or drops (e.g. int_subtrees'
    form_id) does not hide the others' equality."""
    import duckdb

    con = duckdb.connect()
    a, b = f"read_parquet('{before}')", f"read_parquet('{after}')"
    before_columns = [r[0] for r in con.execute(f"describe from {a}").fetchall()]
    after_columns = [r[0] for r in con.execute(f"describe from {b}").fetchall()]
    columns = [c for c in before_columns if c in after_columns]
    added = [c for c in after_columns if c not in before_columns]
    dropped = [c for c in before_columns if c not in after_columns]
    cols = ", ".join(f'"{c}"' for c in columns)
    differ = con.execute(
        f"select (select count(*) from (select {cols} from {a} except all select {cols} from {b})) "
        f"+ (select count(*) from (select {cols} from {b} except all select {cols} from {a}))"
    ).fetchone()[0]
    return differ, added, dropped


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--run-one":
        run_one(*sys.argv[2:6])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("warehouse", type=Path)
    p.add_argument("models", nargs="+")
    p.add_argument("--before", required=True, help="git revision of the before side, e.g. main")
    p.add_argument("--memory-limit", default="6GB", help="DuckDB memory_limit, as srlens build sets it")
    p.add_argument("--doc", metavar="TITLE", help="also write the table as section TITLE of docs/benchmarks.md")
    args = p.parse_args()
    warehouse = args.warehouse.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old_tree = tmp / "before-tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(old_tree), args.before], check=True
        )
        try:
            sides = {}
            for side, tree in (("before", old_tree), ("after", REPO)):
                work = tmp / side
                work.mkdir()
                sides[side] = (tree, compile_models(tree, args.models, warehouse, work))
            lines = _table(args, warehouse, sides, tmp)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old_tree)], check=True)
    body = "\n".join(lines)
    print(body)
    if args.doc:
        from benchmarks_doc import write_section

        write_section(args.doc, body)


def _table(args, warehouse, sides, tmp):
    import platform

    import duckdb

    con = duckdb.connect()
    con.execute(f"attach '{warehouse}' as w (read_only)")
    outputs = con.execute("select count(*) from w.raw.outputs").fetchone()[0]
    runs = con.execute("select count(distinct submission_id) from w.raw.outputs").fetchone()[0]
    lines = [
        f"`python bench/models_before_after.py WAREHOUSE {' '.join(args.models)} --before {args.before}` on one "
        f"built warehouse ({runs:,} runs, {outputs:,} output sentences); {platform.machine()}, "
        f"{os.cpu_count()} CPUs, DuckDB {duckdb.__version__}, memory_limit {args.memory_limit}, "
        f"one model at a time in a fresh process, before then after. 1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the start (2 = both cores busy).",
        "",
        "| model | before: wall s | before: CPU s | before: peak MB | after: wall s | after: CPU s | after: peak MB "
        "| rows | same rows |",
        "|---|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    notes = []
    for model in args.models:
        figures = {}
        for side, (tree, sql) in sides.items():
            figures[side] = measure(tree, warehouse, sql[model], tmp / f"{side}-{model}.parquet", args.memory_limit)
        differ, added, dropped = same_rows(tmp / f"before-{model}.parquet", tmp / f"after-{model}.parquet")
        b, a = figures["before"], figures["after"]
        same = "yes" if differ == 0 and b["rows"] == a["rows"] else f"no ({differ} differ)"
        if added:
            same += f" (after adds {', '.join(added)})"
        if dropped:
            same += f" (after drops {', '.join(dropped)})"
        lines.append(
            f"| `{model}` | {b['wall']:.1f} | {b['cpu']:.1f} | {b['peak']:,.0f} | {a['wall']:.1f} | {a['cpu']:.1f} "
            f"| {a['peak']:,.0f} | {a['rows']:,} | {same} |"
        )
        for side in ("before", "after"):
            top = "; ".join(
                f"{t:.1f} s {kind} ({rows:,} rows) {extra}" for t, rows, kind, extra in figures[side]["operators"]
            )
            notes.append(f"* `{model}` {side}, slowest operators (summed over threads): {top}")
        print(lines[-1], file=sys.stderr)
    return lines + [""] + notes


if __name__ == "__main__":
    main()
