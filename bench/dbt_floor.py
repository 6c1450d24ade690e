"""The floor of a build (issue 18): what a build costs when it computes (almost) nothing.

Three measures, each a fresh process as a user runs it, wall and CPU time (user + system, the process
tree):

1. dbt alone: a one-model project (`select 1`) built by `python -m dbt.cli.main build` into a new
   DuckDB file, first with a full parse, then with dbt's partial parse kept. No srlens code runs.
2. srlens on the bundled demo (two treebanks of 12 sentences, 12 runs): `srlens load-demo`, the build
   from scratch, a build with nothing changed (incremental: dbt still starts, parses and runs every
   node of the incremental selection on no rows), and `load-outputs` of one more 12-sentence run with
   its build (issue 18's "add one run and rebuild", on the smallest warehouse there is).
3. From each srlens build's own files: dbt's nodes (run_results.json: how many, their summed time, the
   first start to the last end) and the time outside them (srlens's start, copy, dbt's start-up and
   parse, the close and the swap).

What the data costs is nearly zero here, so these are the floors under issue 18's targets.
Writes the section "The floor of a build (issue 18, session 37)" of docs/benchmarks.md.

    .venv/bin/python bench/dbt_floor.py [--rounds 3] [--no-doc]
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks_doc import write_section
from campaign_stages import dbt_node_times

REPO = Path(__file__).resolve().parents[1]
DEMO_RUN = REPO / "demo" / "data" / "outputs" / "en_ewt_demo" / "swaps.sr.txt"
ENV = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}

ONE_MODEL_PROJECT = {
    "dbt_project.yml": "name: floor\nversion: '1.0'\nprofile: floor\nmodel-paths: [models]\n",
    "profiles.yml": "floor:\n  target: main\n  outputs:\n    main:\n      type: duckdb\n      path: floor.duckdb\n",
    "models/one.sql": "select 1 as x\n",
}


def timed(cmd, cwd=None):
    """(wall s, CPU s of the process tree) of one command; fails loudly if the command fails."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu


def dbt_alone(folder):
    """dbt's own floor: a one-model project, full parse then partial parse."""
    for name, text in ONE_MODEL_PROJECT.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    cmd = [sys.executable, "-m", "dbt.cli.main", "build", "--project-dir", ".", "--profiles-dir", "."]
    full = timed(cmd, cwd=folder)
    kept = timed(cmd, cwd=folder)
    imports = timed([sys.executable, "-c", "import dbt.cli.main, dbt.adapters.duckdb"])
    return {
        "dbt: import dbt and its DuckDB adapter": imports,
        "dbt: one model, full parse": full,
        "dbt: one model, partial parse kept": kept,
    }


def build_nodes(warehouse):
    """(nodes, summed node seconds, first start to last end) of the last build of `warehouse`."""
    nodes = dbt_node_times(warehouse)
    starts = [n["start"] for n in nodes if n["start"] is not None]
    ends = [n["end"] for n in nodes if n["end"] is not None]
    return len(nodes), sum(n["seconds"] for n in nodes), max(ends) - min(starts)


def srlens_demo(folder):
    """srlens's floor on the bundled demo: load, build from scratch, a build with nothing to do, add one run."""
    warehouse = folder / "demo.duckdb"
    srlens = [sys.executable, "-m", "srlens.cli", "--warehouse", str(warehouse)]
    build = [*srlens, "build", "--processor", "aligned"]
    rows = {"srlens: load-demo": timed([*srlens, "load-demo"])}
    rows["srlens: build from scratch (a full parse: a new cache)"] = (*timed(build), *build_nodes(warehouse))
    rows["srlens: build with nothing changed"] = (*timed(build), *build_nodes(warehouse))
    load = [*srlens, "load-outputs", str(DEMO_RUN), "--corpus", "en_ewt_demo", "--team", "floor", "--run", "1"]
    rows["srlens: load-outputs of one run"] = timed(load)
    rows["srlens: build after adding that run"] = (*timed(build), *build_nodes(warehouse))
    return rows


def median_rows(rounds):
    """{what: medians of each figure} over the rounds."""
    return {
        what: tuple(statistics.median(r[what][k] for r in rounds) for k in range(len(rounds[0][what])))
        for what in rounds[0]
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-doc", action="store_true", help="print only")
    args = ap.parse_args()
    rounds = []
    load = [os.getloadavg()[0]]
    for k in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="srlens-floor-") as tmp:
            tmp = Path(tmp)
            # a cache of dbt's parse of this round's own: the first build parses in full, as a new user's
            os.environ["SRLENS_CACHE_DIR"] = ENV["SRLENS_CACHE_DIR"] = str(tmp / "cache")
            (tmp / "dbt").mkdir()
            (tmp / "srlens").mkdir()
            rounds.append({**dbt_alone(tmp / "dbt"), **srlens_demo(tmp / "srlens")})
        load.append(os.getloadavg()[0])
        print(f"round {k + 1} of {args.rounds} done (1-minute load {load[-1]:.1f})", file=sys.stderr)
    rows = median_rows(rounds)

    lines = [
        "| step | wall s | CPU s | dbt nodes | summed node s | nodes' span s | outside the nodes s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for what, figures in rows.items():
        wall, cpu = figures[:2]
        if len(figures) > 2:
            n, summed, span = figures[2:]
            nodes = f"{n:.0f} | {summed:.1f} | {span:.1f} | {wall - span:.1f}"
        else:
            nodes = " |  |  | "
        lines.append(f"| {what} | {wall:.2f} | {cpu:.2f} | {nodes} |")
    table = "\n".join(lines)
    print(table)
    if args.no_doc:
        return
    idle = rows["srlens: build with nothing changed"]
    kept = rows["dbt: one model, partial parse kept"]
    body = (
        f"`python bench/dbt_floor.py --rounds {args.rounds}` on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}: the median of {args.rounds} rounds, each in a new folder with a "
        f"new cache of dbt's parse (1-minute load average {min(load):.1f} to {max(load):.1f}; 2 = both cores "
        "busy). The data is the bundled demo (two treebanks of 12 sentences, 12 runs; one more run of 12 "
        "sentences added), so what is left is the cost of a build that computes almost nothing.\n\n"
        f"{table}\n\n"
        f"A build with nothing to compute takes {idle[0]:.1f} s: {idle[2]:.0f} dbt nodes (the incremental "
        f"selection) spend {idle[4]:.1f} s from the first start to the last end on no rows, and "
        f"{idle[0] - idle[4]:.1f} s go outside them (srlens's start, the copy, dbt's start-up and the kept "
        f"parse, the close and the swap). dbt alone, one model and its parse kept, takes {kept[0]:.1f} s. "
        "These are floors under issue 18's targets of 3 s to add one run and 30 s for the whole campaign "
        "(load, build, report): dbt's start-up and its work per node, which do not shrink with the data."
    )
    write_section("The floor of a build (issue 18, session 37)", body)


if __name__ == "__main__":
    main()
