"""`srlens report` before and after (issue 18): the report of one built warehouse written by the
srlens of an older revision and by this tree, alternately, each in a fresh process, and the two
reports compared file by file.

    python bench/report_speed.py WAREHOUSE --before REV [--serial] [--rounds N] [--work DIR] [--doc]

The before side is REV's source tree (git archive into WORK), imported with PYTHONPATH; it reads
the warehouse read-only, like the after side. Per report: wall seconds, CPU seconds (user + system)
of the report's process and of its children (the worker process: index.html, and since session 29
the last runs' pages), the largest resident memory of the process and of its children, and the
1-minute load average at the start and at the end (2 = both cores of this machine busy). --serial
adds a third side: this tree without its worker (SRLENS_REPORT_WORKER=0), for the worker's wall gain
and CPU cost. Equal reports: every file byte-equal, or (only in index.html) differing in the last
bits of a data-sort float, as DuckDB's parallel avg() may between two runs of the same query, or in
the charts' SVG alone (each <div class="chart"> compared as a whole, session 32: the charts are
drawn by our own code since). --doc writes the section "Report charts, session 32" of
docs/benchmarks.md. An earlier
report in the output folder is moved aside before a report and deleted after it, outside the measure
(deleting 32,000 files makes the kernel work on, and that system CPU landed in the next report).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks_doc import write_section  # noqa: E402

TITLE = "Report charts, session 32"

# In the measured process: write the report, then print its own and its children's usage.
CHILD = """
import json, resource, sys, time
started = time.perf_counter()
import srlens
from srlens.report import write_report
write_report(sys.argv[1], sys.argv[2])
wall = time.perf_counter() - started
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
user, system = me.ru_utime + kids.ru_utime, me.ru_stime + kids.ru_stime
print(json.dumps({"srlens": srlens.__file__, "wall": wall, "cpu": user + system, "user": user, "system": system,
                  "main_cpu": me.ru_utime + me.ru_stime, "worker_cpu": kids.ru_utime + kids.ru_stime,
                  "rss_mb": me.ru_maxrss / 1024, "children_rss_mb": kids.ru_maxrss / 1024}))
"""

DATA_SORT = re.compile(r'data-sort="([^"]*)"')
CHART = re.compile(r'<div class="chart"><svg\b.*?</svg>\s*</div>', re.S)  # matplotlib's SVG ended in a newline


def extract(rev, work):
    """REV's source tree in WORK/code-before (the revision's short hash returned)."""
    short = subprocess.run(["git", "rev-parse", "--short", rev], cwd=REPO, check=True, capture_output=True, text=True)
    tree = work / "code-before"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree, short.stdout.strip()


def one_report(tree, warehouse, out, env=None):
    aside = out.with_name(out.name + "-old")
    shutil.rmtree(aside, ignore_errors=True)
    if out.exists():
        os.replace(out, aside)  # a rename: its files are deleted once the report is measured
    os.sync()
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(warehouse), str(out)],
        env={**os.environ, "PYTHONPATH": str(tree), **(env or {})},
        cwd=out.parent,  # not this checkout: `python -c` puts the working directory first on sys.path
        capture_output=True,
        text=True,
    )
    ended = time.perf_counter()
    shutil.rmtree(aside, ignore_errors=True)
    if done.returncode:
        sys.exit(f"the report with {tree} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(figures["srlens"]).is_relative_to(tree), f"imported {figures['srlens']}, not the srlens of {tree}"
    return {**figures, "process_wall": ended - started, "load": load, "load_end": os.getloadavg()[0]}


def compare(a, b):
    """(files, byte-equal, equal but for data-sort float bits, equal but for the charts (and those
    bits), different names or contents)."""
    names_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    names_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    same = near = charts = 0
    differ = [str(n) for n in sorted(set(names_a) ^ set(names_b))]
    for name in sorted(set(names_a) & set(names_b)):
        x, y = (a / name).read_bytes(), (b / name).read_bytes()
        if x == y:
            same += 1
        elif floats_apart(x.decode(), y.decode()):
            near += 1
        elif len(CHART.findall(x.decode())) == len(CHART.findall(y.decode())) and floats_apart(
            CHART.sub("<chart>", x.decode()), CHART.sub("<chart>", y.decode())
        ):
            charts += 1
        else:
            differ.append(str(name))
    return len(names_a), same, near, charts, differ


def floats_apart(x, y):
    """True if the texts differ only in data-sort values that are within 1e-12 of each other."""
    if DATA_SORT.sub("", x) != DATA_SORT.sub("", y):
        return False
    pairs = list(zip(DATA_SORT.findall(x), DATA_SORT.findall(y)))
    return all(abs(float(p) - float(q)) <= 1e-12 * max(abs(float(p)), abs(float(q))) for p, q in pairs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("--before", required=True, help="git revision of the before side, e.g. main")
    parser.add_argument("--serial", action="store_true", help="also this tree without the chart worker")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--work", type=Path, default=REPO / ".bench" / "report_speed")
    parser.add_argument("--doc", action="store_true", help="write the section of docs/benchmarks.md")
    args = parser.parse_args()
    before_tree, before_rev = extract(args.before, args.work)
    after_rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "srlens"], cwd=REPO, capture_output=True, text=True)
    after_name = f"{after_rev}{' + changes' if dirty.stdout.strip() else ''}"
    sides = [("before", before_tree, None), ("after", REPO, None)]
    if args.serial:
        sides.append(("after, no worker", REPO, {"SRLENS_REPORT_WORKER": "0"}))
    rows = []
    for n in range(1, args.rounds + 1):
        for side, tree, env in sides:
            figures = one_report(tree, args.warehouse, args.work / f"report-{side.replace(', ', '-')}", env)
            rows.append((n, side, figures))
            print(
                f"round {n} {side:6s}: {figures['wall']:6.1f} s wall, {figures['cpu']:6.1f} s CPU "
                f"({figures['user']:.1f} user, {figures['system']:.1f} system; report's process "
                f"{figures['main_cpu']:.1f}, worker {figures['worker_cpu']:.1f}), "
                f"{figures['rss_mb']:,.0f} MB (worker {figures['children_rss_mb']:,.0f} MB), "
                f"load {figures['load']:.1f} to {figures['load_end']:.1f}",
                flush=True,
            )
    equal, differ = [], []
    for side, _, _ in sides[1:]:
        files, same, near, charts, apart = compare(
            args.work / "report-before", args.work / f"report-{side.replace(', ', '-')}"
        )
        differ += apart
        equal.append(
            f"{side}: {files:,} files, {same:,} byte-equal, {near:,} equal but for the last bits of data-sort "
            f"floats (within 1e-12), {charts:,} equal but for the charts' SVG (and such bits), "
            f"{len(apart):,} different{': ' + ', '.join(apart[:10]) if apart else ''}"
        )
        print(equal[-1])
    equal = "; ".join(equal)
    if args.doc:
        write_section(TITLE, doc(args.warehouse, before_rev, after_name, rows, equal))
    return 1 if differ else 0


def doc(warehouse, before_rev, after_name, rows, equal):
    lines = [
        f"`python bench/report_speed.py WAREHOUSE --before {before_rev}` on `{warehouse.name}` (the campaign "
        "warehouse of the issue-18 bench after its \"add one run\": 171 runs, 342,000 output sentences); "
        f"before = `{before_rev}`, after = `{after_name}`, each report in a fresh process, alternately. "
        "x86_64, 2 cores shared with other engineers' jobs: the wall seconds depend on the load "
        "(1-minute load average at the start and at the end; 2 = both cores busy), the CPU seconds much less. "
        "CPU (user + system) and memory: the report's process and its worker process (index.html: the overview's "
        "queries and charts; after: then the last runs' pages).",
        "",
        "| round | code | wall s | CPU s | the report's process | the worker | memory MB (worker) | load |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for n, side, f in rows:
        lines.append(
            f"| {n} | {side} | {f['wall']:.1f} | {f['cpu']:.1f} | {f['main_cpu']:.1f} | {f['worker_cpu']:.1f} "
            f"| {f['rss_mb']:,.0f} ({f['children_rss_mb']:,.0f}) | {f['load']:.1f} to {f['load_end']:.1f} |"
        )
    lines += ["", f"Same report: {equal}."]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
