"""Older DuckDB releases, each in its own venv from the package registry, opening a warehouse as a BI tool would.

Used by tests/builds/test_old_readers.py, and run at length as `python -m tests.support.old_readers`.
A venv is made once per version and kept in
$SRLENS_TEST_CACHE (default ~/.cache/srlens-test), as `duckdb-VERSION`: CI pays for it once.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The releases docs/querying.md promises to open the warehouse: the oldest (1.1.0), the last patch release of every
# minor version since, 1.4.1 (the last that resolves metadata pointers strictly, docs/duckdb-compatibility.md)
# and 2.0.0, what srlens writes with.
PROMISED = ("1.1.0", "1.1.3", "1.2.2", "1.3.2", "1.4.1", "1.4.5", "1.5.6", "2.0.0")

# Opened read-only; every table of every schema listed and read in full (a hash of each row): DuckDB
# reads the metadata of a table's row groups only when they are scanned, and a defect there shows only then.
OPEN_AS_BI_TOOL = """
import json, sys, duckdb
result = {"version": duckdb.__version__}
try:
    con = duckdb.connect(sys.argv[1], read_only=True)
    tables = con.execute(
        "select schema_name, table_name from duckdb_tables() where database_name = current_database() "
        "and not internal order by all").fetchall()
    rows = 0
    for schema, table in tables:
        rows += con.execute(f'select count(*), bit_xor(hash(t)) from "{schema}"."{table}" t').fetchone()[0]
    result.update(tables=len(tables), rows=rows,
                  runs=con.execute("select count(*) from submission_scores").fetchone()[0])
except Exception as e:
    result["error"] = str(e).splitlines()[0]
print(json.dumps(result))
"""


def cache_dir():
    return Path(os.environ.get("SRLENS_TEST_CACHE") or Path.home() / ".cache" / "srlens-test")


def duckdb_python(version):
    """The Python of a venv with duckdb==version from the package registry, made on first use."""
    venv = cache_dir() / f"duckdb-{version}"
    python = venv / "bin" / "python"
    if python.exists():
        return python
    partial = venv.with_name(venv.name + ".partial")  # an interrupted install is never taken for a made venv
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    # no pip of its own (installing one takes longer than duckdb): this Python's pip installs into it
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(partial)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(partial / "bin" / "python"), "install", "--quiet"]
    subprocess.run([*pip, "--disable-pip-version-check", f"duckdb=={version}"], check=True)
    partial.rename(venv)  # only bin/python is used, which finds its venv wherever it is
    return python


def open_as_bi_tool(version, warehouse):
    """What DuckDB `version` makes of the warehouse, in its own process: {"version", "tables", "rows",
    "runs"} or {"version", "error"}."""
    out = subprocess.run(
        [str(duckdb_python(version)), "-c", OPEN_AS_BI_TOOL, str(warehouse)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:  # the reader crashed (a signal, an abort) rather than raising an error
        return {"version": version, "error": f"exit {out.returncode}: {out.stderr.strip()[-300:]}"}
    return json.loads(out.stdout)


def build_series(warehouse, builds, baselines=True):
    """Load the demo (with its baseline runs unless not `baselines`) and build it `builds` times, as a user
    would: a full build, then in turns two incremental builds, each after reloading one of the demo's runs,
    and a full refresh. Yields (number, kind) after each build, with the warehouse closed."""
    import csv  # noqa: PLC0415 (the series needs srlens; opening a file does not)

    from srlens.build import build  # noqa: PLC0415
    from srlens.demo import DEMO_MANIFEST, load_demo  # noqa: PLC0415
    from srlens.loaders.load import load_outputs  # noqa: PLC0415

    with open(DEMO_MANIFEST, newline="") as handle:
        runs = [row for row in csv.DictReader(handle) if row["kind"] == "outputs"]
    load_demo(warehouse, baselines=baselines)
    for number in range(builds):
        if number % 3 == 0:
            build(warehouse, echo=False, processor="aligned", full_refresh=number > 0)
            yield number + 1, "full"
        else:
            row = runs[number % len(runs)]
            load_outputs(
                warehouse, DEMO_MANIFEST.parent / row["file"], row["corpus"], row["team"], row["run"], row["campaign"]
            )
            build(warehouse, echo=False, processor="aligned")
            yield number + 1, "incremental"


# Run at length: python -m tests.support.old_readers [--builds 30] [--versions 1.1.0 1.4.1 ...]
# [--work DIR] [--json OUT]. Loads the demo into a new warehouse and builds it --builds times, full
# refreshes and incremental builds mixed; after each build every version opens it read-only and reads
# every table in full. Prints one line per build and the table of versions (docs/duckdb-compatibility.md).


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=30)
    parser.add_argument("--versions", nargs="+", default=list(PROMISED))
    parser.add_argument("--work", type=Path, help="folder for the warehouse (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="write every result here")
    args = parser.parse_args()
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    for version in args.versions:
        duckdb_python(version)
    work = args.work or Path(tempfile.mkdtemp(prefix="srlens-old-readers-"))
    warehouse = work / "srlens.duckdb"
    results, clock = [], time.monotonic()
    build_seconds = open_seconds = 0.0
    start = time.monotonic()
    for number, kind in build_series(warehouse, args.builds):
        build_seconds += time.monotonic() - start
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=2) as pool:
            opened = dict(zip(args.versions, pool.map(lambda v: open_as_bi_tool(v, warehouse), args.versions)))
        open_seconds += time.monotonic() - start
        results.append({"build": number, "kind": kind, "opened": opened})
        failed = [f"{v}: {r['error']}" for v, r in opened.items() if "error" in r]
        print(f"build {number:2} {kind:11} {'all open' if not failed else '; '.join(failed)}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        start = time.monotonic()
    print(
        f"\n{args.builds} builds in {build_seconds:.0f} s, opened in {open_seconds:.0f} s "
        f"(whole run {time.monotonic() - clock:.0f} s)\n"
    )
    print("| DuckDB | builds it opens |\n|---|---|")
    for v in args.versions:
        ok = sum("error" not in r["opened"][v] for r in results)
        print(f"| {v} | {ok} of {len(results)} |")


if __name__ == "__main__":
    main()
