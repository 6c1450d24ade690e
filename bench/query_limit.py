"""Time and peak memory of `srlens query` on a huge result: the table shows 1,000 rows and counts
the rest inside DuckDB, so memory stays flat however many rows the query has.

    python bench/query_limit.py            # 10^6, 10^8 and 10^9 rows
    python bench/query_limit.py 1000000    # one size
"""

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb


def run(warehouse, rows, fmt_args):
    sql = f"select range as n, 'x' || range as s from range({rows})"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    clock = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "srlens.cli", "--warehouse", str(warehouse), "query", sql, *fmt_args],
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.monotonic() - clock
    peak_mb = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    return seconds, peak_mb, (proc.stdout.splitlines() or [""])[-1]


def main(sizes):
    with tempfile.TemporaryDirectory() as root:
        warehouse = Path(root) / "empty.duckdb"
        duckdb.connect(str(warehouse)).close()  # the query needs no table, only a warehouse file
        print("rows            format            seconds  peak MB (largest child so far)  last line")
        for rows in sizes:
            for label, args in (("table", []), ("csv --limit 1000", ["--format", "csv", "--limit", "1000"])):
                seconds, peak, last = run(warehouse, rows, args)
                print(f"{rows:>13,}  {label:<16}  {seconds:7.1f}  {peak:8.0f}  {last[:70]}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10**6, 10**8, 10**9])
