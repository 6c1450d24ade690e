"""The first build of a new warehouse, with dbt's parse from the cache (srlens/parse_cache.py) and without.

Each round loads the demo into a fresh warehouse (its own folder, the same file name) and builds it in a
fresh process, once with an empty cache folder ("cold": dbt parses the whole project) and once with the
cache the cold build filled ("warm"). Prints and writes wall and CPU seconds (user + sys of the build's
process tree) and dbt's parse: from dbt's start to "Found N models" in its log.

    python bench/parse_cache_speed.py [--rounds 3] [--out docs/benchmarks.md]
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import BENCHMARKS_MD, write_section  # noqa: E402

TIME = r"(\d\d:\d\d:\d\d\.\d+)"


def parse_seconds(log):
    """dbt's start (its arguments logged) to 'Found N models': reading the project, parsing or not."""
    start = re.search(TIME + r" \[debug\] \[MainThread\]: running dbt with arguments", log).group(1)
    found = re.search(TIME + r" \[info \] \[MainThread\]: Found \d+ models", log).group(1)
    clock = [datetime.strptime(t, "%H:%M:%S.%f") for t in (start, found)]
    return (clock[1] - clock[0]).total_seconds()


def build_once(folder, cache):
    folder.mkdir()
    env = {**os.environ, "SRLENS_CACHE_DIR": str(cache)}
    srlens = [sys.executable, "-m", "srlens.cli", "--warehouse", str(folder / "wh.duckdb")]
    subprocess.run([*srlens, "load-demo"], env=env, check=True, capture_output=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([*srlens, "build", "--processor", "aligned"], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    log = (folder / ".wh.duckdb.dbt" / "logs" / "dbt.log").read_text()
    return wall, cpu, parse_seconds(log), "Starting full parse" in log


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(BENCHMARKS_MD))
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for r in range(1, args.rounds + 1):
            cache = tmp / f"cache{r}"
            for kind in ("cold", "warm"):  # cold empties nothing: its cache folder is new
                wall, cpu, parse, full = build_once(tmp / f"{kind}{r}", cache)
                assert full == (kind == "cold"), f"{kind} build: full parse {full}"
                rows.append((r, kind, wall, cpu, parse, os.getloadavg()[0]))
                print(f"round {r} {kind}: wall {wall:.1f} s, CPU {cpu:.1f} s, parse {parse:.1f} s", file=sys.stderr)
            shutil.rmtree(cache)
    lines = [
        "`python bench/parse_cache_speed.py`: the demo loaded into a fresh warehouse and built "
        "(`srlens build --processor aligned`, a fresh process each), with an empty parse cache (cold: dbt "
        "parses the whole project) and then with the cache the cold build filled (warm: dbt starts from "
        "that parse). Parse = dbt's start to its `Found N models` line. 2-core machine; load = 1-minute "
        "load average after the build.",
        "",
        "| round | cache | build wall s | build CPU s | dbt parse s | load |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {r} | {k} | {w:.1f} | {c:.1f} | {p:.2f} | {load:.1f} |" for r, k, w, c, p, load in rows]
    body = "\n".join(lines)
    print(body)
    write_section("Parse cache, session 35", body, Path(args.out))


if __name__ == "__main__":
    main()
