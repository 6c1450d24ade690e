"""Add one run and rebuild (issue 18, target <= 3 s): where the wall time of the incremental build goes.

    python bench/add_run_speed.py [--runs 5] [--rounds 2] [--before COMMIT] [--work DIR] [--doc]
    python bench/add_run_speed.py --built WAREHOUSE --run-file FILE --corpus C [--team T] [--run R]
        [--campaign C] [--rounds 2] [--before COMMIT] [--work DIR] [--doc]

One warehouse is loaded (en_ewt test and --runs perturbed runs of it, the generator of
bench/significance_speed.py; or a copy of --built, e.g. the campaign bench's) and built, once per
version of the code (in full, or incrementally with nothing to do where --built was built by that
version: then the build only makes the dbt work folder beside the copy): this checkout
("after") and, with --before, the code of that git commit ("before", extracted with `git archive`).
Then each round, for each version in turn, puts its built warehouse back as it was after that full
build (and the dbt work folder beside it, which holds the kept partial parse), loads one more run with
`srlens load-outputs` and runs `srlens build --processor aligned`, each in its own process as a
user would. The build's process times its own steps (srlens.build's functions, wrapped); dbt's
steps come from its log (start, parse) and run_results.json (nodes). The marts of the versions'
last rounds are compared (tests/snapshot.py, floats to 1e-9).
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks_doc import write_section  # noqa: E402
from build_models_speed import checkout  # noqa: E402

SECTION = "Add one run, session 25"
CORPUS = "en_ewt_test"

# Runs in the build's process: `srlens build` through the command line, with srlens.build's steps
# wrapped to note (step, start, end, CPU of this process, CPU of its children) in a JSON file.
DRIVER = """
import time
T0 = time.time()
import json, resource, sys
import srlens.build as b
from srlens.cli import main
T1 = time.time()
steps = []
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
def timed(name, f):
    def wrapper(*args, **kwargs):
        start, own, kids = time.time(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
        try:
            return f(*args, **kwargs)
        finally:
            steps.append((name, start, time.time(), cpu(resource.RUSAGE_SELF) - own,
                          cpu(resource.RUSAGE_CHILDREN) - kids))
    return wrapper
for name in ("build", "copy_warehouse", "prepare", "base_state", "run_dbt", "record_build", "check_unchanged"):
    setattr(b, name, timed(name, getattr(b, name)))
try:
    main(["--warehouse", sys.argv[1], "build", "--processor", "aligned"])
except SystemExit as e:
    if e.code:
        raise
json.dump({"start": T0, "imported": T1, "steps": steps, "end": time.time(),
           "cpu": cpu(resource.RUSAGE_SELF), "cpu_children": cpu(resource.RUSAGE_CHILDREN)},
          open(sys.argv[2], "w"))
"""

# --after-from-before: marks a copy of the before version's built warehouse as built by this checkout's
# code (meta.builds' last base state), so that the after version's builds are incremental from the
# same tables.
MARK_BUILT = """
import sys, duckdb
import srlens.build as b
from srlens import build_vars
from srlens.signature import signature
prepared, _ = b.prepare(sys.argv[1], "aligned", None, False)
all_vars = {**prepared, **build_vars.check(None)}
all_vars["signature"] = signature(all_vars)
state, _ = b.base_state(sys.argv[1], all_vars, b.DBT_PROJECT_DIR)
con = duckdb.connect(sys.argv[1])
last = "select max(started_at) from meta.builds"
con.execute(f"update meta.builds set base_state = ? where started_at = ({last})", [state])
con.close()
"""


def code_digest():
    """Names this checkout's code: HEAD and the uncommitted changes (or, outside git, its files)."""
    if not (REPO / ".git").exists():
        files = sorted(f for d in ("srlens", "dbt_project", "udfs") for f in (REPO / d).rglob("*") if f.is_file())
        return hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()[:10]
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    diff = subprocess.run([*git, "diff", "HEAD"], capture_output=True).stdout
    return hashlib.sha256(head.encode() + diff).hexdigest()[:10]


def run(code, args, **kwargs):
    env = {**os.environ, "PYTHONPATH": str(code), "SRLENS_PROCESSOR": "aligned"}
    out = subprocess.run([sys.executable, *args], env=env, cwd=code, capture_output=True, text=True, **kwargs)
    if out.returncode:
        raise SystemExit(f"{args[:3]} with {code} failed:\n{out.stderr[-3000:]}")
    return out


def work_dir(warehouse):
    return warehouse.parent / f".{warehouse.name}.dbt"


def clock(line):
    """Seconds after midnight of a dbt.log line ('HH:MM:SS.ffffff ...', the machine's local time)."""
    h, m, s = line[:15].split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def seconds_of_day(epoch):
    t = datetime.fromtimestamp(epoch)
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6


def dbt_log(work):
    """(dbt's start, parse done, parse kind) of the last invocation in dbt.log, seconds after midnight."""
    lines = (work / "logs" / "dbt.log").read_text().splitlines()
    start = max(k for k, line in enumerate(lines) if "running dbt with arguments" in line)
    found = next(line for line in lines[start:] if ": Found " in line and " models" in line)
    kind = "full parse"
    for line in lines[start:]:
        if "Partial parsing enabled, no changes found" in line:
            kind = "partial parse kept, no changes"
        elif "Partial parsing enabled" in line:
            kind = "partial parse kept, files changed"
        elif "Unable to do partial parsing" in line:
            kind = "full parse (" + line.split("Unable to do partial parsing", 1)[1].strip(" .:") + ")"
    return clock(lines[start]), clock(found), kind


def nodes(work):
    """{unique_id: (start, end, seconds)} from run_results.json, times as seconds after midnight."""
    out = {}
    for r in json.loads((work / "target" / "run_results.json").read_text())["results"]:
        times = [
            datetime.fromisoformat(t[k].replace("Z", "+00:00")).timestamp()
            for t in r["timing"]
            for k in ("started_at", "completed_at")
            if t.get(k)
        ]
        if times:
            out[r["unique_id"]] = (seconds_of_day(min(times)), seconds_of_day(max(times)), r["execution_time"])
    return out


def add_run(code, base, run_file, names):
    """Put the built base warehouse (and its dbt work folder) back as it was built, load one run, build;
    the breakdown. The same path as the base's build: dbt's profile names the file, and a profile that
    changed would make dbt parse the whole project again."""
    warehouse = base.parent / "srlens.duckdb"
    shutil.copy(base, warehouse)
    shutil.rmtree(work_dir(warehouse), ignore_errors=True)
    shutil.copytree(base.parent / "dbt", work_dir(warehouse))
    start = time.time()
    run(
        code,
        ["-m", "srlens.cli", "--warehouse", str(warehouse), "load-outputs", str(run_file)]
        + [arg for name, value in names.items() for arg in (f"--{name}", value)],
    )
    loaded = time.time()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        run(code, ["-c", DRIVER, str(warehouse), f.name])
        end = time.time()
        timing = json.loads(Path(f.name).read_text())
    steps = {name: (s, e, own, kids) for name, s, e, own, kids in timing["steps"]}
    dbt_start, parsed, parse_kind = dbt_log(work_dir(warehouse))
    done = nodes(work_dir(warehouse))
    first = min(s for s, _, _ in done.values())
    last = max(e for _, e, _ in done.values())
    run_start, run_end = (seconds_of_day(t) for t in steps["run_dbt"][:2])
    b_start, b_end = steps["build"][:2]
    inner = sum(steps[k][1] - steps[k][0] for k in steps if k != "build")

    def summed(kind):
        return sum(sec for uid, (_, _, sec) in done.items() if uid.startswith(kind))

    return {
        "load": loaded - start,
        "process start and imports": timing["imported"] - start + (b_start - timing["imported"]),
        "copy": steps["copy_warehouse"][1] - steps["copy_warehouse"][0],
        "prepare": steps["prepare"][1] - steps["prepare"][0],
        "base_state": steps["base_state"][1] - steps["base_state"][0],
        "dbt: interpreter and imports": dbt_start - run_start,
        "dbt: parse": parsed - dbt_start,
        "dbt: from parse to the first node": first - parsed,
        "dbt: nodes, first start to last end": last - first,
        "dbt: after the last node": run_end - last,
        "record_build": steps["record_build"][1] - steps["record_build"][0],
        "lock, held connection, swap, clean-up": (b_end - b_start) - inner,
        "process exit": end - b_end,
        "build (wall)": end - loaded,
        "load + build (wall)": end - start,
        "cpu build process": timing["cpu"],
        "cpu dbt": timing["cpu_children"],
        "parse kind": parse_kind,
        "models": sum(uid.startswith("model.") for uid in done),
        "tests": sum(uid.startswith("test.") for uid in done),
        "model seconds": summed("model."),
        "test seconds": summed("test."),
        "nodes": {uid: sec for uid, (_, _, sec) in done.items()},
        "load average": os.getloadavg()[0],
        "warehouse": str(warehouse),
    }


def differing_tables(a, b):
    """The tables of the marts and intermediate schemas whose rows differ between two warehouses, in
    DuckDB (a campaign's tables do not fit Python's memory): `except all` both ways, every double
    written with 10 significant digits (parallel sums do not fix the order of additions)."""
    import duckdb

    con = duckdb.connect(config={"memory_limit": "2GB"})  # it spills; the builds' limit is 3 GB
    con.execute(f"attach '{a}' as a (read_only)")
    con.execute(f"attach '{b}' as b (read_only)")
    tables, differ = [], []
    for schema, table, where in con.execute(
        """select schema_name, table_name, list(database_name) from duckdb_tables()
           where schema_name in ('main', 'intermediate') and not starts_with(table_name, 'int_changed_')
           group by all order by all"""
    ).fetchall():
        if len(where) == 2:
            tables.append((schema, table))
        else:
            differ.append(f"{schema}.{table}: only {'before' if where == ['a'] else 'after'}")
    for schema, table in tables:
        columns = con.execute(
            "select column_name, data_type from duckdb_columns() "
            "where database_name = 'a' and schema_name = ? and table_name = ? order by column_index",
            [schema, table],
        ).fetchall()
        exprs = ", ".join(
            f"printf('%.9e', \"{c}\")" if t in ("DOUBLE", "FLOAT") else f"\"{c}\"::varchar" for c, t in columns
        )
        counts = [
            con.execute(
                f"select count(*) from (select {exprs} from {x}.{schema}.{table} "
                f"except all select {exprs} from {y}.{schema}.{table})"
            ).fetchone()[0]
            for x, y in (("a", "b"), ("b", "a"))
        ]
        if any(counts):
            differ.append(f"{schema}.{table}: {counts[0]} rows only before, {counts[1]} only after")
    con.close()
    return differ


ROWS = [
    "load",
    "process start and imports",
    "copy",
    "prepare",
    "base_state",
    "dbt: interpreter and imports",
    "dbt: parse",
    "dbt: from parse to the first node",
    "dbt: nodes, first start to last end",
    "dbt: after the last node",
    "record_build",
    "lock, held connection, swap, clean-up",
    "process exit",
    "build (wall)",
    "load + build (wall)",
    "cpu build process",
    "cpu dbt",
]


def render(args, outputs, size, results):
    versions = list(results)
    heads = [f"{v} round {k + 1}" for v in versions for k in range(len(results[v]))]
    cols = [r for v in versions for r in results[v]]
    what = (
        f"a copy of {args.built.name} ({outputs:,} output sentences, {size / 1e6:.0f} MB), then one more run "
        f"({args.run_file.name} as {args.team}/{args.run_name}) loaded"
        if args.built
        else f"en_ewt test and {args.runs} perturbed runs ({outputs:,} output sentences; the built warehouse "
        f"is {size / 1e6:.0f} MB), then one more run (2,077 sentences) loaded"
    )
    lines = [
        "`python bench/add_run_speed.py "
        + (f"--built {args.built.name} --corpus {args.corpus}" if args.built else f"--runs {args.runs}")
        + f" --rounds {args.rounds}"
        + (f" --before {args.before}" if args.before else "")
        + (" --after-from-before" if args.after_from_before else "")
        + f"`: {what} with `srlens load-outputs` and "
        "`srlens build --processor aligned`, each in its own process, on the built warehouse and its dbt "
        "work folder as the full build left them, version after version in each round. "
        + (
            "The after version starts from the before version's built warehouse, marked as built by its code "
            "(`--after-from-before`), so that both build incrementally from the same tables. "
            if args.after_from_before
            else ""
        )
        + f"{platform.machine()}, {os.cpu_count()} cores shared with the other engineers' jobs (1-minute load "
        f"average {os.getloadavg()[0]:.1f} when done; after each round in the last row). Seconds (wall, CPU "
        "where said).",
        "",
        "| step | " + " | ".join(heads) + " |",
        "|---|" + "---:|" * len(heads),
    ]
    for row in ROWS:
        bold = "**" if "wall" in row else ""
        lines.append(f"| {bold}{row}{bold} | " + " | ".join(f"{bold}{c[row]:.2f}{bold}" for c in cols) + " |")
    lines += [
        "| dbt's parse | " + " | ".join(c["parse kind"] for c in cols) + " |",
        "| models run (summed node s) | " + " | ".join(f"{c['models']} ({c['model seconds']:.1f})" for c in cols),
        "| data tests run (summed node s) | " + " | ".join(f"{c['tests']} ({c['test seconds']:.1f})" for c in cols),
        "| load average (1 min) | " + " | ".join(f"{c.get('load average', float('nan')):.1f}" for c in cols),
    ]
    lines[-3:] = [line + " |" for line in lines[-3:]]
    for v in versions:
        top = sorted(results[v][-1]["nodes"].items(), key=lambda kv: -kv[1])[:8]
        lines += ["", f"Slowest nodes, {v}, last round: " + ", ".join(f"`{u.split('.')[2]}` {s:.2f}" for u, s in top)]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5, help="perturbed runs in the built warehouse")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--before", help="git commit of the 'before' code (default: this checkout only)")
    p.add_argument("--work", type=Path, help="folder kept between invocations: the built warehouses are reused")
    p.add_argument("--doc", action="store_true", help="write the section of docs/benchmarks.md")
    p.add_argument("--built", type=Path, help="start from a copy of this warehouse instead of generated runs")
    p.add_argument("--run-file", type=Path, help="with --built: the run to add")
    p.add_argument("--corpus", default=CORPUS)
    p.add_argument("--team", default="perturb")
    p.add_argument("--run-name", help="the added run's --run (default: the generated run's name)")
    p.add_argument("--campaign", default="bench")
    p.add_argument("--section", default=SECTION, help="the section of docs/benchmarks.md --doc writes")
    p.add_argument(
        "--after-from-before",
        action="store_true",
        help="with --before: the after version starts from the before version's built warehouse, its "
        "builds incremental (for code whose full build gives the same tables; no full build of its own)",
    )
    args = p.parse_args()
    if args.built and not (args.run_file and args.run_name):
        p.error("--built needs --run-file and --run-name")
    from significance_speed import perturbed_runs

    from srlens.loaders.load import load_outputs, load_treebank

    work = args.work or Path(tempfile.mkdtemp())
    work.mkdir(parents=True, exist_ok=True)
    shared = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    treebank = shared / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
    if args.built:
        runs, added_file, loaded = [], args.run_file, args.built
    else:
        runs = perturbed_runs(treebank, work, args.runs + 1)
        (args.run_name, added_file), runs = runs[-1], runs[:-1]
        loaded = work / f"loaded{args.runs}" / "srlens.duckdb"
    names = {"corpus": args.corpus, "team": args.team, "run": args.run_name, "campaign": args.campaign}
    if not loaded.exists():
        print("loading", file=sys.stderr)
        loaded.parent.mkdir()
        load_treebank(loaded, treebank, CORPUS)
        for name, path in runs:
            load_outputs(loaded, path, CORPUS, "perturb", name, campaign="bench")
    import duckdb

    with duckdb.connect(str(loaded), read_only=True) as con:
        outputs = con.execute("select count(*) from raw.outputs").fetchone()[0]
    versions = {"after": REPO}
    if args.before:
        versions = {"before": work / f"code-{args.before}", **versions}
        if not versions["before"].exists():
            checkout(args.before, versions["before"])
    bases = {}
    for version, code in versions.items():
        # A version's built warehouse is reused only while its code is the same (the digest of its files).
        tag = code_digest() if version == "after" else args.before
        name = f"built-{args.built.stem}" if args.built else f"built{args.runs}"
        start = f"-from-{args.before}" if version == "after" and args.after_from_before else ""
        base = work / f"{name}-{version}-{tag}{start}" / "built.duckdb"
        if not base.exists():
            print(f"building {version}", file=sys.stderr)
            base.parent.mkdir()
            if version == "after" and args.after_from_before:
                warehouse = shutil.copy(bases["before"], base.parent / "srlens.duckdb")
                run(code, ["-c", MARK_BUILT, str(warehouse)])
            else:
                warehouse = shutil.copy(loaded, base.parent / "srlens.duckdb")
            run(code, ["-c", DRIVER, str(warehouse), os.devnull])
            shutil.copytree(work_dir(warehouse), base.parent / "dbt")
            shutil.copy(warehouse, base)
        bases[version] = base
    results = {v: [] for v in versions}
    for k in range(args.rounds):
        for version, code in versions.items():
            print(f"round {k + 1}: {version}", file=sys.stderr)
            results[version].append(add_run(code, bases[version], added_file, names))
            (work / "results.json").write_text(json.dumps(results, indent=1))
    differ = []
    if args.before and args.built:
        differ = differing_tables(*(Path(results[v][-1]["warehouse"]) for v in ("before", "after")))
    elif args.before:
        from tests.snapshot import differences, write_snapshot

        with tempfile.TemporaryDirectory() as folder:
            write_snapshot(Path(results["before"][-1]["warehouse"]), Path(folder))
            differ = differences(Path(results["after"][-1]["warehouse"]), Path(folder))
    body = render(args, outputs, bases["after"].stat().st_size, results)
    if args.before:
        body += "\n\n" + (
            ("Every table dbt builds" if args.built else "Every mart")
            + " is equal in the two versions after adding the run ("
            + (
                "in DuckDB, `except all` both ways, doubles to 10 significant digits)."
                if args.built
                else "tests/snapshot.py, floats to 1e-9)."
            )
            if not differ
            else f"The tables DIFFER: {'; '.join(differ[:5])}"
        )
    print(body)
    (work / "results.json").write_text(json.dumps(results, indent=1))
    if args.doc:
        write_section(args.section, body)


if __name__ == "__main__":
    main()
