"""Which DuckDB releases open every build of the demo warehouse (issue 42; docs/duckdb-compatibility.md).

    python bench/old_readers.py [--builds 30] [--versions 1.1.0 1.4.1 ...] [--work DIR] [--json OUT]

Loads the demo into a new warehouse and builds it --builds times, full refreshes and incremental builds
mixed (tests/old_readers.py build_series). After each build, every DuckDB version, each in its own venv
from the package registry (made once, kept in ~/.cache/srlens-test), opens the warehouse read-only and
reads every table in full, as a BI tool would. Prints one line per build and the table of versions.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.old_readers import PROMISED, build_series, duckdb_python, open_as_bi_tool  # noqa: E402


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
