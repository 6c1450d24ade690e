"""The campaign's build limited to what the researcher script computes (issue 18): an upper bound on
the warehouse's cost of the script's own figures.

bench/campaign.py compares the whole build (mining, significance, ensemble, examples, correlations,
L'AMBRE, data tests, report) with bench/campaign_researcher.py, which computes the tree metrics,
DEA, sentence and corpus BLEU, the accuracies and the per-corpus statistics only. This bench
rebuilds, from scratch and on a copy of the campaign's built warehouse, only the marts that hold
those figures and the models they read (`dbt build --select +submission_scores +corpus_stats
+relation_entropy`, without data tests): `srlens build --full-refresh` with that selection added
to dbt's arguments. The selection also holds what those marts read beyond the script (the
L'AMBRE sentence scores, the bootstrap intervals of submission_scores), so the time is an upper
bound. The srlens build's own steps (copy, prepare, swap) and dbt's start-up are included.

    .venv/bin/python bench/like_for_like.py WAREHOUSE [--rounds 2] [--script-seconds S] [--load-seconds L]

WAREHOUSE: the campaign bench's warehouse (e.g. /tmp/campaign/main/srlens.duckdb), copied first.
--script-seconds and --load-seconds (the researcher script's and the load's times from the same
campaign bench) turn the build's time into a ratio. Prints only; the figures go into
docs/benchmarks.md by hand, beside the campaign bench's.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from campaign_stages import dbt_node_times
from dbt_floor import timed

SELECT = "+submission_scores +corpus_stats +relation_entropy"

# Runs in a fresh process, as `srlens build --full-refresh` does, with the selection added to dbt's args.
DRIVER = """
import sys
import srlens.build as b
run_dbt = b.run_dbt
def selected(args, *rest, **kwargs):
    return run_dbt([*args, "--select", sys.argv[2], "--exclude", "resource_type:test"], *rest, **kwargs)
b.run_dbt = selected
b.build(sys.argv[1], processor="aligned", full_refresh=True, echo=False)
"""


def one_build(source, folder):
    """(wall s, CPU s, dbt nodes, summed node s) of the selected build on a fresh copy of `source`."""
    warehouse = folder / "wh.duckdb"
    shutil.copyfile(source, warehouse)
    wall, cpu = timed([sys.executable, "-c", DRIVER, str(warehouse), SELECT])
    nodes = dbt_node_times(warehouse)
    return wall, cpu, len(nodes), sum(n["seconds"] for n in nodes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("warehouse", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--script-seconds", type=float, help="the researcher script's time, for the ratio")
    ap.add_argument("--load-seconds", type=float, help="the campaign's load time, for the ratio")
    args = ap.parse_args()
    rows = []
    for k in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="srlens-like-") as tmp:
            rows.append(one_build(args.warehouse, Path(tmp)))
        print(f"round {k + 1}: {rows[-1][0]:.1f} s wall (1-minute load {os.getloadavg()[0]:.1f})", file=sys.stderr)
    print(f"selection: dbt build --select {SELECT} --exclude resource_type:test (full refresh)")
    print("| round | wall s | CPU s | dbt nodes | summed node s |")
    print("|---:|---:|---:|---:|---:|")
    for k, (wall, cpu, nodes, summed) in enumerate(rows, 1):
        print(f"| {k} | {wall:.1f} | {cpu:.1f} | {nodes} | {summed:.1f} |")
    wall = statistics.median(r[0] for r in rows)
    if args.script_seconds and args.load_seconds:
        ratio = args.script_seconds / (args.load_seconds + wall)
        print(
            f"ratio, script / (load + selected build): {args.script_seconds:.1f} / "
            f"({args.load_seconds:.1f} + {wall:.1f}) = {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
