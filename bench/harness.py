"""The benchmark harness: time commands in fresh processes, repeat them, compare two revisions, write the docs.

    python -m bench.harness list
    python -m bench.harness run NAME [--rounds N] [--scale S] [--write-docs]
    python -m bench.harness compare NAME REV_A REV_B [--rounds N] [--scale S] [--write-docs]

Run it from the repository root. A benchmark is a module of bench/ (BENCHMARKS below) with

* `prepare(data, scale)`: writes the benchmark's input data into the folder `data` once (it may reuse
  what an earlier run left there); it runs with this checkout's code;
* `steps(ctx)`: the commands of one round, in order, as `Step`s. Each step runs in a fresh process
  with the code of `ctx.src` first on PYTHONPATH (this checkout for `run`, a `git worktree` of each
  revision for `compare`) and its own working folder `ctx.work`, new every round;
* optionally `summary(medians)`: a paragraph of figures derived from the steps' medians (a ratio).

Each measured step gives its wall seconds, the CPU seconds (user + system) of its whole process tree
and the peak resident memory of the tree's largest process, all from `os.wait4`. The figures of the
rounds are reported as min / median / max, with the machine they were measured on (CPU model,
cores, 1-minute load average at the start and the end) and the commit. `--write-docs` replaces the
benchmark's section of docs/performance.md, between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
DOCS = REPO / "docs" / "performance.md"
WORK = REPO / ".bench"

# name -> the module of bench/ that defines it, or "module:object" where a module defines two
BENCHMARKS = {
    "campaign": "bench.campaign:Campaign",
    "growth": "bench.campaign:Growth",
    "sacrebleu-stats": "bench.campaign:SacrebleuStats",
    "script-ratio": "bench.script_ratio",
    "floor": "bench.floor",
    "loads": "bench.loads",
    "report": "bench.report",
    "stanza": "bench.stanza",
    "reference-parse": "bench.stanza:ReferenceParse",
    "text-reference-build": "bench.stanza:TextReferenceBuild",
    "models": "bench.models",
}


@dataclass
class Step:
    """One command of a round. `measure=False`: a set-up step, run but not reported. `details`: a function
    of the context called after the step, returning more figures of it ({name: seconds})."""

    name: str
    argv: list
    measure: bool = True
    details: object = None
    env: dict = field(default_factory=dict)


@dataclass
class Context:
    src: Path  # the source tree whose code runs (PYTHONPATH)
    data: Path  # the prepared input data, shared by the rounds and the revisions
    work: Path  # this round's own folder
    scale: float
    python: str = sys.executable

    def srlens(self, *args, warehouse=None):
        """The argv of an srlens command on a warehouse (default: this round's srlens.duckdb), as a user runs it."""
        warehouse = warehouse or self.work / "srlens.duckdb"
        return [self.python, "-m", "srlens.cli", "--warehouse", str(warehouse), *map(str, args)]


def benchmark(name):
    """The module (or object) with the benchmark's prepare, steps and summary."""
    module, _, attribute = BENCHMARKS[name].partition(":")
    module = importlib.import_module(module)
    return getattr(module, attribute) if attribute else module


def dbt_nodes(warehouse):
    """Per dbt node of the warehouse's last build (run_results.json in srlens's dbt work folder beside it):
    name, group (staging / intermediate / marts / tests, by the project's naming rule), seconds, start, end."""
    target = Path(warehouse).parent / f".{Path(warehouse).name}.dbt" / "target"
    nodes = []
    for r in json.loads((target / "run_results.json").read_text())["results"]:
        kind, name = r["unique_id"].split(".")[0], r["unique_id"].split(".")[-1]
        if kind == "test":
            name, group = r["unique_id"].split(".")[2], "tests"
        elif kind == "model":
            group = {"stg": "staging", "int": "intermediate"}.get(name.split("_")[0], "marts")
        else:
            group = kind  # an exposure, a seed
        spans = [(t["started_at"], t["completed_at"]) for t in r.get("timing", []) if t.get("started_at")]
        stamps = [datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() for span in spans for s in span if s]
        start, end = (min(stamps), max(stamps)) if stamps else (None, None)
        nodes.append(
            {"node": name, "group": group, "seconds": r.get("execution_time") or 0.0, "start": start, "end": end}
        )
    return nodes


def dbt_node_seconds(warehouse, by_group=False):
    """{node: seconds} of the last build, or {group: summed seconds} with by_group."""
    out = {}
    for node in dbt_nodes(warehouse):
        key = node["group"] if by_group else node["node"]
        out[key] = out.get(key, 0.0) + node["seconds"]
    return out


def dbt_span(warehouse):
    """How many nodes the last build ran, their summed seconds, and the first start to the last end."""
    nodes = dbt_nodes(warehouse)
    starts = [n["start"] for n in nodes if n["start"] is not None]
    ends = [n["end"] for n in nodes if n["end"] is not None]
    return {
        "dbt nodes": float(len(nodes)),
        "summed node seconds": sum(n["seconds"] for n in nodes),
        "first node start to last node end": (max(ends) - min(starts)) if starts else 0.0,
    }


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# The measured command's parent: a small interpreter (no site) that forks, execs the command and
# reports os.wait4's figures. On Linux a process's peak RSS starts from its parent's at fork and exec,
# so forking from the harness, which may hold a benchmark's data, would count the harness's memory.
LAUNCHER = """
import json, os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
with open(sys.argv[1], "w") as out:
    json.dump({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}, out)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def timed(argv, cwd, env, log_path):
    """(wall s, CPU s of the process tree, peak RSS MB of its largest process) of one command in a new process.

    os.wait4 gives the rusage of the command and of every descendant it waited for, so dbt's and the
    workers' CPU count too; ru_maxrss is in KB on Linux."""
    figures = Path(log_path).with_name("step.json")
    figures.unlink(missing_ok=True)
    launcher = [sys.executable, "-S", "-c", LAUNCHER, figures, *argv]
    with open(log_path, "ab") as out:
        done = subprocess.run([str(a) for a in launcher], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0 or not figures.exists():
        tail = Path(log_path).read_text(errors="replace")[-3000:]
        raise SystemExit(f"failed ({done.returncode}): {' '.join(map(str, argv))}\n{tail}")
    return json.loads(figures.read_text())


def machine():
    """The machine a figure was measured on."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()[0]}


def commit_of(tree):
    """The short commit of a checkout, with '+changes' when its tracked files differ from it (but for the
    figures the harness itself writes into docs/performance.md)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
    changed = ["git", "diff", "--quiet", "HEAD", "--", ".", ":!docs/performance.md"]
    dirty = subprocess.run(changed, cwd=tree).returncode != 0
    return head.stdout.strip() + ("+changes" if dirty else "")


def environment(src):
    env = {**os.environ, "PYTHONPATH": str(src), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}
    env.setdefault("SRLENS_SHARED_DIR", str(SHARED))
    return env


def setup(*argv):
    """Run a command of a benchmark's preparation with this checkout's code; stop if it fails."""
    subprocess.run([sys.executable, *map(str, argv)], cwd=REPO, env=environment(REPO), check=True)


def run_round(module, src, data, scale, work):
    """Run one round's steps in `work` (new); {step: figures} of the measured steps."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ctx = Context(src=Path(src), data=data, work=work, scale=scale)
    # A new cache of dbt's parse each round, so that every round's first build parses as a new user's does.
    env = {**environment(src), "SRLENS_CACHE_DIR": str(work / "cache")}
    figures = {}
    for step in module.steps(ctx):
        result = timed(step.argv, work, {**env, **step.env}, work / "steps.log")
        if step.details is not None:
            result["details"] = step.details(ctx)
        if step.measure:
            figures[step.name] = result
            log(f"  {step.name}: {result['wall']:.2f} s wall, {result['cpu']:.2f} s CPU, {result['rss_mb']:,.0f} MB")
    return figures


def spread(values):
    return min(values), statistics.median(values), max(values)


def medians(rounds):
    """{step: {wall, cpu, rss_mb, details: {name: median}}} over the rounds."""
    out = {}
    for name in rounds[0]:
        steps = [r[name] for r in rounds]
        out[name] = {key: statistics.median(s[key] for s in steps) for key in ("wall", "cpu", "rss_mb")}
        if "details" in steps[0]:
            keys = steps[0]["details"]
            out[name]["details"] = {k: statistics.median(s["details"].get(k, 0.0) for s in steps) for k in keys}
    return out


def figure(values, digits=2):
    low, mid, high = spread(values)
    if len(values) == 1:
        return f"{mid:.{digits}f}"
    return f"{low:.{digits}f} / **{mid:.{digits}f}** / {high:.{digits}f}"


def provenance(command, rounds, commits, before, after):
    """The line that says where and when the figures below it were measured."""
    return (
        f"`{command}` on {date.today().isoformat()}, commit {commits}: {before['cpu']}, {before['cores']} cores, "
        f"Python {before['python']}, 1-minute load average {before['load']:.1f} at the start and "
        f"{after['load']:.1f} at the end ({before['cores']} = every core busy). Each step is a fresh process; "
        f"{'min / **median** / max of ' + str(rounds) + ' rounds' if rounds > 1 else 'one round'}; CPU is user + "
        "system of the process tree, peak MB the resident memory of its largest process."
    )


def number(value):
    """A count as a whole number, seconds with two decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def details_table(step, per_side, most=12):
    """The details of one step (e.g. dbt node seconds): the largest `most`, one column per side."""
    sides = list(per_side)
    last = per_side[sides[-1]][step]["details"]
    names = sorted(last, key=lambda n: -last[n])[:most]
    lines = [f"| {step} | " + " | ".join(sides) + " |"]
    lines.append("|---|" + "---:|" * len(sides))
    for name in names:
        cells = " | ".join(number(per_side[s][step]["details"].get(name, 0.0)) for s in sides)
        lines.append(f"| `{name}` | {cells} |")
    return "\n".join(lines)


def render_run(module, rounds, command, commit, before, after):
    lines = ["| step | wall s | CPU s | peak MB |", "|---|---:|---:|---:|"]
    for name in rounds[0]:
        steps = [r[name] for r in rounds]
        lines.append(
            f"| {name} | {figure([s['wall'] for s in steps])} | {figure([s['cpu'] for s in steps])} "
            f"| {figure([s['rss_mb'] for s in steps], 0)} |"
        )
    parts = [provenance(command, len(rounds), commit, before, after), "\n".join(lines)]
    mid = medians(rounds)
    parts += [details_table(step, {"median": mid}) for step in mid if "details" in mid[step]]
    if hasattr(module, "summary"):
        parts.append(module.summary(mid))
    return "\n\n".join(parts)


def render_compare(module, sides, command, commits, before, after):
    (name_a, rounds_a), (name_b, rounds_b) = sides.items()
    mid = {name_a: medians(rounds_a), name_b: medians(rounds_b)}
    lines = [
        f"| step | {name_a} wall s | {name_b} wall s | {name_b} / {name_a} | {name_a} CPU s | {name_b} CPU s "
        f"| {name_b} / {name_a} CPU | {name_a} peak MB | {name_b} peak MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for step in rounds_a[0]:
        a, b = mid[name_a][step], mid[name_b][step]
        lines.append(
            f"| {step} | {a['wall']:.2f} | {b['wall']:.2f} | {b['wall'] / a['wall']:.2f} | {a['cpu']:.2f} "
            f"| {b['cpu']:.2f} | {b['cpu'] / max(a['cpu'], 1e-9):.2f} | {a['rss_mb']:,.0f} | {b['rss_mb']:,.0f} |"
        )
    rounds = len(rounds_a)
    head = provenance(command, rounds, commits, before, after).replace("min / **median** / max", "the median")
    parts = [head, "\n".join(lines)]
    parts += [details_table(step, mid) for step in mid[name_b] if "details" in mid[name_b][step]]
    if hasattr(module, "summary"):
        parts += [f"{side}: {module.summary(m)}" for side, m in mid.items()]
    return "\n\n".join(parts)


def write_docs(section, body, path=DOCS):
    """Replace the text between `<!-- bench:SECTION -->` and `<!-- /bench:SECTION -->`; append the section
    (with a heading) when the page has no such markers yet."""
    start, end = f"<!-- bench:{section} -->", f"<!-- /bench:{section} -->"
    text = path.read_text()
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{start}\n{body.strip()}\n{end}{tail}"
    else:
        text = f"{text.rstrip()}\n\n## {section}\n\n{start}\n{body.strip()}\n{end}\n"
    path.write_text(text)
    log(f"wrote the section '{section}' of {path.relative_to(REPO)}")


def prepared(name, module, scale):
    data = WORK / name / f"data-{scale:g}"
    data.mkdir(parents=True, exist_ok=True)
    if hasattr(module, "prepare"):
        module.prepare(data, scale)
    return data


def run(args):
    module = benchmark(args.name)
    data = prepared(args.name, module, args.scale)
    before = machine()
    rounds = []
    for k in range(args.rounds):
        log(f"{args.name}: round {k + 1} of {args.rounds} (load average {os.getloadavg()[0]:.1f})")
        rounds.append(run_round(module, REPO, data, args.scale, WORK / args.name / "round"))
    shutil.rmtree(WORK / args.name / "round")  # a campaign's warehouses take gigabytes
    command = f"python -m bench.harness run {args.name} --rounds {args.rounds}"
    command += f" --scale {args.scale:g}" if args.scale != 1 else ""
    body = render_run(module, rounds, command, commit_of(REPO), before, machine())
    save(args.name, {"command": command, "machine": before, "rounds": rounds})
    print(body)
    if args.write_docs:
        write_docs(args.name, body)


def compare(args):
    """The same benchmark on two revisions, each in its own `git worktree`, in turn round by round."""
    if args.rev_a == args.rev_b:
        raise SystemExit("REV_A and REV_B are the same revision")
    module = benchmark(args.name)
    data = prepared(args.name, module, args.scale)
    trees = Path(tempfile.mkdtemp(prefix="srlens-compare-"))
    sides = {}
    try:
        for label, rev in (("A", args.rev_a), ("B", args.rev_b)):
            tree = trees / label
            subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=REPO, check=True)
            sides[rev] = tree
        commits = " and ".join(f"{rev} = {commit_of(tree)}" for rev, tree in sides.items())
        before = machine()
        rounds = {rev: [] for rev in sides}
        for k in range(args.rounds):
            for rev, tree in sides.items():
                log(f"{args.name} at {rev}: round {k + 1} of {args.rounds}")
                rounds[rev].append(run_round(module, tree, data, args.scale, WORK / args.name / "round"))
    finally:
        shutil.rmtree(WORK / args.name / "round", ignore_errors=True)
        for tree in sides.values():
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO)
        shutil.rmtree(trees, ignore_errors=True)
    command = f"python -m bench.harness compare {args.name} {args.rev_a} {args.rev_b} --rounds {args.rounds}"
    command += f" --scale {args.scale:g}" if args.scale != 1 else ""
    body = render_compare(module, rounds, command, commits, before, machine())
    save(f"{args.name}-compare", {"command": command, "machine": before, "rounds": rounds})
    print(body)
    if args.write_docs:
        write_docs(f"{args.name}-compare", body)


def save(name, result):
    """Every run's raw figures, for a later look (.bench/ is not tracked)."""
    path = WORK / "results" / f"{name}-{datetime.now():%Y%m%dT%H%M%S}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.harness", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the benchmarks and what each measures")
    for name in ("run", "compare"):
        p = sub.add_parser(name)
        p.add_argument("name", choices=sorted(BENCHMARKS))
        if name == "compare":
            p.add_argument("rev_a", help="a git revision (the 'before')")
            p.add_argument("rev_b", help="a git revision (the 'after')")
        p.add_argument("--rounds", type=int, default=3)
        p.add_argument("--scale", type=float, default=1.0, help="the data's size, 1 = the documented figure's")
        p.add_argument("--write-docs", action="store_true", help="replace the section of docs/performance.md")
    args = ap.parse_args(argv)
    if args.command == "list":
        for name in BENCHMARKS:
            print(f"{name:14} {benchmark(name).__doc__.strip().splitlines()[0]}")
    elif args.command == "run":
        run(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
