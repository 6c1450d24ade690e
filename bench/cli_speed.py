"""Command-line start-up and loading speed (issue 18): `srlens --help`, one `srlens load-outputs` of a
2,077-sentence run (the sentences of UD en_ewt test), `srlens load-campaign` of 40 such runs, and the
same 40 runs loaded by 40 separate `srlens load-outputs` calls. Each command runs as a user runs it,
in a fresh process (`python -m srlens.cli`); the wall time and the CPU time (user + system) of the
whole process are measured. On a machine loaded by other work, wall time grows with the load; the
CPU time much less, so it tells better what a quiet machine would take.

With --before DIR (a source checkout of another version, e.g. `git worktree add /tmp/before main`),
the same commands of that version run in the same session, side by side (load-campaign only where it
exists). Writes the section "Command line and loads (issue 18)" of docs/benchmarks.md.

    .venv/bin/python bench/cli_speed.py                       # this checkout only
    .venv/bin/python bench/cli_speed.py --before /tmp/before  # and another version beside it
    .venv/bin/python bench/cli_speed.py --runs 10 --no-doc    # quicker, print only
"""

import argparse
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks_doc import write_section

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
EN_EWT_TEST = SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"


def reference_texts():
    return [
        line[len("# text = ") :]
        for line in EN_EWT_TEST.read_text(encoding="utf-8").splitlines()
        if line.startswith("# text = ")
    ]


def perturbed(texts, seed):
    """A plausible run: each sentence's words, with a few adjacent swaps (a different run per seed)."""
    rng = random.Random(seed)
    out = []
    for text in texts:
        words = text.split()
        for _ in range(len(words) // 8):
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        out.append(" ".join(words))
    return "".join(t + "\n" for t in out)


class Version:
    """One checkout's command line, run in a fresh process each time."""

    def __init__(self, name, checkout):
        self.name, self.checkout = name, Path(checkout).resolve()
        self.env = {**os.environ, "PYTHONPATH": str(self.checkout)}

    def run(self, *args, check=True):
        """(wall seconds, CPU seconds, exit code) of one command."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "srlens.cli", *map(str, args)],
            cwd=self.checkout,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if check and done.returncode != 0:
            raise SystemExit(f"{self.name}: srlens {' '.join(map(str, args))} failed: {done.stderr.strip()}")
        return wall, cpu, done.returncode

    def import_seconds(self):
        """`python -X importtime -c 'import srlens.cli'`: the cumulative import time of srlens.cli, seconds."""
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import srlens.cli"],
            cwd=self.checkout,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(line for line in done.stderr.splitlines() if line.rstrip().endswith("| srlens.cli"))
        return int(line.split("|")[1]) / 1e6

    def has(self, command):
        return self.run(command, "--help", check=False)[2] == 0


def timed(fn, repeats):
    """Median wall and median CPU seconds of `repeats` runs of fn() -> (wall, cpu, code)."""
    values = [fn()[:2] for _ in range(repeats)]
    return statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)


def total(runs):
    """Summed wall and CPU seconds of several commands."""
    return sum(r[0] for r in runs), sum(r[1] for r in runs)


def measure(version, work, run_files, repeats, base):
    result = {"import": statistics.median(version.import_seconds() for _ in range(repeats))}
    result["help"] = timed(lambda: version.run("--help"), repeats)
    one = work / f"{version.name}-one.duckdb"
    shutil.copy(base, one)
    result["load_outputs"] = timed(
        lambda: version.run(
            "--warehouse", one, "load-outputs", run_files[0], "--corpus", "en_ewt", "--team", "t0", "--run", "r0"
        ),
        repeats,
    )
    many = work / f"{version.name}-calls.duckdb"
    shutil.copy(base, many)
    result["calls"] = total(
        [
            version.run(
                "--warehouse",
                many,
                "load-outputs",
                path,
                "--corpus",
                "en_ewt",
                "--team",
                f"t{k // 4}",
                "--run",
                f"r{k % 4}",
                "--campaign",
                "bench",
            )
            for k, path in enumerate(run_files)
        ]
    )
    if version.has("load-campaign"):
        campaign = work / f"{version.name}-campaign.duckdb"
        shutil.copy(base, campaign)
        result["campaign"] = version.run(
            "--warehouse", campaign, "load-campaign", work / "campaign", "--campaign", "bench"
        )[:2]
    return result


def render(results, runs, sentences, load):
    names = list(results)
    head = "| seconds: wall (CPU) | " + " | ".join(names) + " |\n|---|" + "---:|" * len(names) + "\n"
    rows = []

    def cell(name, key, fmt):
        value = results[name].get(key)
        return "-" if value is None else fmt(value)

    pair = lambda v: f"{v[0]:.2f} ({v[1]:.2f})"  # noqa: E731
    rows.append(
        "| `import srlens.cli` (`python -X importtime`, cumulative), median | "
        + " | ".join(cell(n, "import", "{:.2f}".format) for n in names)
        + " |"
    )
    rows.append("| `srlens --help`, median of repeats | " + " | ".join(cell(n, "help", pair) for n in names) + " |")
    rows.append(
        f"| `srlens load-outputs`, one run of {sentences:,} sentences, median of repeats | "
        + " | ".join(cell(n, "load_outputs", pair) for n in names)
        + " |"
    )
    rows.append(
        f"| {runs} × `srlens load-outputs`, in all | " + " | ".join(cell(n, "calls", pair) for n in names) + " |"
    )
    rows.append(
        f"| `srlens load-campaign`, {runs} runs | " + " | ".join(cell(n, "campaign", pair) for n in names) + " |"
    )
    rows.append(
        f"| {runs} calls / one load-campaign, wall (CPU) | "
        + " | ".join(
            f"{results[n]['calls'][0] / results[n]['campaign'][0]:.1f} "
            f"({results[n]['calls'][1] / results[n]['campaign'][1]:.1f})"
            if "campaign" in results[n]
            else "-"
            for n in names
        )
        + " |"
    )
    return (
        f"`bench/cli_speed.py`: each command in a fresh process (`python -m srlens.cli`), wall time of the "
        f"process, and its CPU time (user + system). Runs: {runs} plain-text runs of UD en_ewt test "
        f"({sentences:,} sentences each, words swapped a little), into a warehouse holding that treebank. "
        f"Python {platform.python_version()}, {os.cpu_count()} cores. Measured under load from other work on "
        f"the machine (load average {load[0]:.1f} / {load[1]:.1f} at start / end): wall times are those of a "
        f"loaded machine; compare the columns, measured side by side in one session, and the CPU times, "
        f"which the load inflates much less.\n\n" + head + "\n".join(rows) + "\n\n"
        "Where the time went before (issue 18): `import srlens.cli` imported pandas, pyarrow, numpy and "
        "duckdb for every command, `--help` included, and each insert through an Arrow table "
        "made DuckDB import pandas on its first Arrow scan. Now the command line imports only what a "
        "command needs (a load: duckdb, no pyarrow, pandas or numpy; `tests/test_load_campaign.py` checks "
        "this), inserts bind Python lists as DuckDB list parameters, and load-campaign opens the warehouse "
        "once and reads each treebank's sentence ids once.\n"
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", help="a source checkout of another version to measure side by side")
    p.add_argument("--runs", type=int, default=40, help="runs in the campaign (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=7, help="repeats of --help and of one load (default: %(default)s)")
    p.add_argument("--no-doc", action="store_true", help="print the section, do not write docs/benchmarks.md")
    args = p.parse_args()
    texts = reference_texts()
    versions = [Version("this checkout", REPO)]
    if args.before:
        versions.insert(0, Version("before", args.before))
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run_files = []
        for k in range(args.runs):
            path = work / "campaign" / f"t{k // 4}" / f"r{k % 4}" / "en_ewt.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(perturbed(texts, k), encoding="utf-8")
            run_files.append(path)
        base = work / "base.duckdb"
        versions[-1].run("--warehouse", base, "load-treebank", EN_EWT_TEST, "--corpus", "en_ewt")
        results = {}
        for version in versions:
            print(f"measuring {version.name} ({version.checkout})", file=sys.stderr)
            results[version.name] = measure(version, work, run_files, args.repeats, base)
            print(results[version.name], file=sys.stderr)
    body = render(results, args.runs, len(texts), (load_start[0], os.getloadavg()[0]))
    print(body)
    if not args.no_doc:
        write_section("Command line and loads (issue 18)", body)


if __name__ == "__main__":
    main()
