"""Treebank and campaign loads, before and after (issue 18, session 26).

Measures, each in a fresh process, alternating the two versions so that both see the same machine:

  treebank   `srlens load-treebank` of one campaign corpus (2,000 sentences), into a new warehouse
  en_ewt     `srlens load-treebank` of UD en_ewt train (12,544 sentences, 204,585 token lines)
  campaign   a campaign's load as bench/campaign.py's load stage does it: the treebanks with one
             load_treebanks where the version has it (else load_treebank each), then the runs with
             load_campaign (a CSV manifest per campaign)
  one run    `srlens load-outputs` of one plain-text run into the loaded campaign's warehouse

and, for each version, where a treebank load's CPU goes: reading and validating in Python, the
DuckDB inserts, and the rest (connect, raw schema, delete, commit, and the checkpoint when the
connection closes). Wall and CPU (user + system of the process) are given with the 1-minute load
average at the start; on a shared machine compare the CPU columns.

    .venv/bin/python bench/load_speed.py CAMPAIGN_WORK --before main [--repeat 2] [--doc]

CAMPAIGN_WORK is a folder bench/campaign.py generated (manifest.json, corpora/, runs/). The before
side is a detached git worktree of the revision, removed afterwards.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks_doc import write_section

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
EN_EWT_TRAIN = SHARED / "ud" / "en_ewt" / "en_ewt-ud-train.conllu"
TITLE = "Treebank and campaign loads (issue 18, session 26)"

# Run in a fresh interpreter with PYTHONPATH = the version's tree: a campaign's load, timed by part.
CAMPAIGN_LOAD = """
import json, sys, time
from pathlib import Path
from srlens.loaders import load
from srlens.loaders.campaign import load_campaign
work, warehouse = Path(sys.argv[1]), Path(sys.argv[2])
manifest = json.loads((work / "manifest.json").read_text())
started = time.perf_counter()
treebanks = [(work / c["path"], c["name"], c["language"]) for c in manifest["corpora"]]
if hasattr(load, "load_treebanks"):  # one load-treebank of all files
    load.load_treebanks(warehouse, treebanks)
else:
    for treebank in treebanks:
        load.load_treebank(warehouse, *treebank)
treebanks = time.perf_counter() - started
for campaign in sorted({r["campaign"] for r in manifest["runs"]}):
    csv = warehouse.parent / f"{campaign}.csv"
    csv.write_text("file,corpus,team,run,format\\n" + "".join(
        f"{work / r['path']},{r['corpus']},{r['team']},{r['run']},text\\n"
        for r in manifest["runs"] if r["campaign"] == campaign))
    assert all(o.error is None for o in load_campaign(warehouse, csv, campaign))
print(json.dumps({"treebanks": treebanks, "runs": time.perf_counter() - started - treebanks}))
"""

# Where a treebank load's time goes, in this checkout: the reader and the inserts wrapped with timers.
PARTS = """
import json, resource, sys, time
from pathlib import Path
from srlens.loaders import load
spent = {"read and validate": 0.0, "insert": 0.0}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def timed(part, function):
    def wrapper(*args, **kwargs):
        start = cpu()
        try:
            return function(*args, **kwargs)
        finally:
            spent[part] += cpu() - start
    return wrapper
load.read_conllu = timed("read and validate", load.read_conllu)
for name in ("insert_columns", "insert_treebank_tokens"):
    if hasattr(load, name):
        setattr(load, name, timed("insert", getattr(load, name)))
work, warehouse = Path(sys.argv[1]), Path(sys.argv[2])
manifest = json.loads((work / "manifest.json").read_text())
start = cpu()
for corpus in manifest["corpora"]:
    load.load_treebank(warehouse, work / corpus["path"], corpus["name"], language=corpus["language"])
spent["all"] = cpu() - start
print(json.dumps(spent))
"""


# Three ways to insert one corpus's token lines (this checkout's reader), CPU of insert + commit into a
# new warehouse file, best of 5: bound as DuckDB list parameters, through an Arrow table, or as text that
# DuckDB splits (store.insert_lines, what loads use). Then the import of pyarrow, in a fresh process.
INSERTS = """
import json, resource, sys
from pathlib import Path
from srlens.loaders import store
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import insert_treebank_tokens
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
treebank, folder = read_conllu(sys.argv[1]), Path(sys.argv[2])
columns = {"corpus": ["c"] * len(treebank.token_lines), **treebank.tokens}
def arrow(con):
    import pyarrow
    tokens = pyarrow.table(columns)
    con.execute("insert into raw.tokens by name select * from tokens")
ways = {
    "list parameters (store.insert_columns)": lambda con: store.insert_columns(con, "raw.tokens", columns),
    "an Arrow table": arrow,
    "text split by DuckDB (store.insert_lines)": lambda con: insert_treebank_tokens(
        con, "raw.tokens", {"corpus": "c"}, treebank, treebank.token_sent_idx),
}
best, rows = {}, {}
for name, insert in ways.items():
    for attempt in range(5):
        warehouse = folder / f"{attempt}.duckdb"
        con = store.connect(warehouse)
        store.ensure_raw_schema(con)
        start = cpu()
        con.execute("begin")
        insert(con)
        con.execute("commit")
        best[name] = min(best.get(name, 9e9), cpu() - start)
        rows[name] = con.execute("select * from raw.tokens order by line_no").fetchall()
        con.close()
        warehouse.unlink()
print(json.dumps({"cpu": best, "same rows": len({repr(r) for r in rows.values()}) == 1, "rows": len(columns["id"])}))
"""


def run(tree, args, cwd):
    """(wall, CPU, stdout) of `python ARGS` with PYTHONPATH=tree, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree), "TQDM_DISABLE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done.stdout


def measure(tree, work, folder):
    """The four measures of one version in `folder` (emptied first); returns name -> (wall, CPU, load)."""
    for leftover in folder.iterdir():
        leftover.unlink()
    manifest = json.loads((work / "manifest.json").read_text())
    corpus, run0 = manifest["corpora"][0], manifest["runs"][0]
    cli = ["-m", "srlens.cli", "--warehouse"]
    out = {}

    def timed(name, args, warehouse):
        load = os.getloadavg()[0]
        wall, cpu, stdout = run(tree, [*args], folder)
        out[name] = (wall, cpu, load)
        Path(warehouse).unlink(missing_ok=True)
        return stdout

    timed(
        "treebank", [*cli, "tb.duckdb", "load-treebank", work / corpus["path"], "--corpus", "c"], folder / "tb.duckdb"
    )
    timed("en_ewt", [*cli, "en.duckdb", "load-treebank", EN_EWT_TRAIN, "--corpus", "en_ewt"], folder / "en.duckdb")
    load = os.getloadavg()[0]
    wall, cpu, stdout = run(tree, ["-c", CAMPAIGN_LOAD, work, folder / "w.duckdb"], folder)
    parts = json.loads(stdout.strip().splitlines()[-1])
    out["campaign"] = (wall, cpu, load)
    out["campaign treebanks wall"], out["campaign runs wall"] = parts["treebanks"], parts["runs"]
    one = [*cli, "w.duckdb", "load-outputs", work / run0["path"], "--corpus", run0["corpus"]]
    timed("one run", [*one, "--team", "bench", "--run", "one", "--campaign", "x"], folder / "w.duckdb")
    return out


def measure_inserts(work, tmp):
    """The INSERTS comparison on the campaign's largest corpus, and the CPU of `import pyarrow`."""
    manifest = json.loads((work / "manifest.json").read_text())
    corpus = max(manifest["corpora"], key=lambda c: c["words"])
    folder = tmp / "inserts"
    folder.mkdir()
    inserts = json.loads(run(REPO, ["-c", INSERTS, work / corpus["path"], folder], folder)[2].splitlines()[-1])
    inserts["corpus"] = corpus["name"]
    return inserts, min(run(REPO, ["-c", "import pyarrow"], folder)[1] for _ in range(3))


def table(rows, sides):
    lines = [
        "| seconds: wall (CPU), load average | " + " | ".join(sides) + " | CPU ratio |",
        "|---|" + "---:|" * (len(sides) + 1),
    ]
    labels = {
        "treebank": "`srlens load-treebank`, one campaign corpus (2,000 sentences)",
        "en_ewt": "`srlens load-treebank`, en_ewt train (12,544 sentences)",
        "campaign": "campaign load: 30 treebanks (one load-treebank where a version takes several files, else "
        "30) + 170 runs (load-campaign), one process",
        "one run": "`srlens load-outputs`, one run of 2,000 sentences",
    }
    for name, label in labels.items():
        cells = []
        for side in sides:
            wall = statistics.median(r[side][name][0] for r in rows)
            cpu = statistics.median(r[side][name][1] for r in rows)
            load = statistics.median(r[side][name][2] for r in rows)
            cells.append(f"{wall:.2f} ({cpu:.2f}), {load:.1f}")
        ratio = statistics.median(r[sides[0]][name][1] for r in rows) / statistics.median(
            r[sides[-1]][name][1] for r in rows
        )
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    for name in ("campaign treebanks wall", "campaign runs wall"):
        cells = [f"{statistics.median(r[side][name] for r in rows):.2f}" for side in sides]
        lines.append(f"| of which {name.split()[1]} (wall) | " + " | ".join(cells) + " | |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("work", type=Path, help="a campaign folder of bench/campaign.py (manifest.json)")
    p.add_argument("--before", default="main", help="git revision of the before side (default main)")
    p.add_argument("--repeat", type=int, default=2, help="rounds of both sides (default 2; medians)")
    p.add_argument("--doc", action="store_true", help=f"write the section '{TITLE}' of docs/benchmarks.md")
    args = p.parse_args()
    work = args.work.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old_tree = tmp / "before-tree"
        subprocess.run(["git", "-C", REPO, "worktree", "add", "-q", "--detach", old_tree, args.before], check=True)
        try:
            sides = {f"before ({args.before})": old_tree, "this checkout": REPO}
            rows = []
            for round_ in range(args.repeat):
                row = {}
                for side, tree in sides.items() if round_ % 2 == 0 else reversed(sides.items()):
                    folder = tmp / "w"
                    folder.mkdir(exist_ok=True)
                    row[side] = measure(tree, work, folder)
                    print(f"round {round_ + 1}, {side}: {json.dumps(row[side])}", flush=True)
                rows.append(row)
            parts = {}
            for side, tree in sides.items():
                folder = tmp / f"parts {side}"
                folder.mkdir()
                _, _, stdout = run(tree, ["-c", PARTS, work, folder / "w.duckdb"], folder)
                parts[side] = json.loads(stdout.strip().splitlines()[-1])
        finally:
            subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", old_tree], check=True)
        inserts, pyarrow_cpu = measure_inserts(work, tmp)
    where = "; ".join(
        f"{side}: reading and validating {p['read and validate']:.2f} s, inserts {p['insert']:.2f} s, the rest "
        f"{p['all'] - p['read and validate'] - p['insert']:.2f} s, of {p['all']:.2f} s"
        for side, p in parts.items()
    )
    body = (
        f"`python bench/load_speed.py CAMPAIGN_WORK --before {args.before} --repeat {args.repeat}`: the campaign "
        "of bench/campaign.py (30 corpora of 2,000 sentences, 170 plain-text runs), each measure in a fresh "
        f"process, the two versions alternating; medians of {args.repeat} rounds. Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} cores.\n\n"
        + table(rows, list(sides))
        + "\n\nWhere the CPU of the 30 treebank loads goes (load_treebank of each, one process; the rest is "
        f"connect, raw schema, delete, commit and the checkpoint at close). {where}.\n\n"
        f"The insert of one corpus's {inserts['rows']:,} token lines (`{inserts['corpus']}`), CPU of insert and "
        "commit into a new warehouse file, best of 5 (same rows: "
        f"{'yes' if inserts['same rows'] else 'NO'}): "
        + ", ".join(f"{name} {cpu:.3f} s" for name, cpu in inserts["cpu"].items())
        + f"; `import pyarrow` alone takes {pyarrow_cpu:.2f} s of CPU in a fresh process (best of 3).\n"
    )
    print(body)
    if args.doc:
        write_section(TITLE, body)


if __name__ == "__main__":
    main()
