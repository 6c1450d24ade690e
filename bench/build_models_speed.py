"""Per-model build times before and after issue 18's set-based scoring, side by side in one run.

    python bench/build_models_speed.py [--before COMMIT] [--runs 10] [--work DIR] [--doc]

One warehouse is loaded (en_ewt test and --runs perturbed runs of it, the generator of
bench/significance_speed.py) and copied twice; the code of git commit --before (extracted with
`git archive`) and the code of this checkout each run a full `srlens build` (processor aligned) on
their copy, one after the other. Per-model seconds come from dbt's run_results.json; the marts of
the two builds are compared (tests/snapshot.py, floats to 1e-9). Then each copy is built again
with nothing changed, which shows dbt's start-up with the partial parse it kept.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmarks_doc import write_section  # noqa: E402

SECTION = "Build models, before and after (issue 18)"
BEFORE_COMMIT = "ae2e936"  # main before the set-based accuracies and resampled sums
BUILD = (
    "import sys, time; from srlens.build import build; t = time.perf_counter(); "
    "build(sys.argv[1], echo=False, processor='aligned'); print(time.perf_counter() - t)"
)


def checkout(commit, folder):
    """The files of `commit` in `folder` (no git metadata: a plain source tree srlens runs from)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def build(code, warehouse):
    """Build `warehouse` with the srlens of source tree `code`; (wall seconds, {node: seconds}, parse seconds)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(
        [sys.executable, "-c", BUILD, str(warehouse)], env=env, cwd=code, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(f"build with {code} failed:\n{out.stderr[-3000:]}")
    work = warehouse.parent / f".{warehouse.name}.dbt"
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    return float(out.stdout.split()[-1]), {r["unique_id"]: r["execution_time"] for r in results}, parse_seconds(work)


def parse_seconds(work):
    """Seconds from dbt's start to 'Found N models' in the last invocation's log: start-up and parse."""
    lines = (work / "logs" / "dbt.log").read_text().splitlines()
    start = max(k for k, line in enumerate(lines) if "running dbt with arguments" in line)
    found = next((line for line in lines[start:] if ": Found " in line and " models" in line), None)
    if found is None:
        return float("nan")

    def clock(line):
        h, m, s = line[:15].split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)

    return clock(found) - clock(lines[start])


def same_marts(before, after):
    from tests.snapshot import differences, write_snapshot

    with tempfile.TemporaryDirectory() as folder:
        write_snapshot(before, Path(folder))
        return differences(after, Path(folder))


def load(warehouse, runs):
    from significance_speed import perturbed_runs

    from srlens.loaders.load import load_outputs, load_treebank

    shared = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
    treebank = shared / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
    load_treebank(warehouse, treebank, "en_ewt_test")
    for name, path in perturbed_runs(treebank, warehouse.parent, runs):
        load_outputs(warehouse, path, "en_ewt_test", "perturb", name, campaign="bench")


def render(args, outputs, before, after, rebuild, differ):
    (b_wall, b_nodes, b_parse), (a_wall, a_nodes, a_parse) = before, after
    models = sorted(
        {n for n in b_nodes | a_nodes if n.startswith("model.")},
        key=lambda n: -max(b_nodes.get(n, 0), a_nodes.get(n, 0)),
    )

    def total(nodes, kind):
        return sum(v for n, v in nodes.items() if n.startswith(kind))

    lines = [
        f"`python bench/build_models_speed.py --runs {args.runs}`: en_ewt test and {args.runs} perturbed runs "
        f"({outputs:,} output sentences), processor `aligned`, B = R = 1,000. The same loaded warehouse built "
        f"in full by the code of commit `{args.before}` (before) and by this checkout (after), one after the "
        f"other in one run; dbt's per-node seconds (run_results.json). {platform.machine()}, "
        f"{os.cpu_count()} cores shared with the other engineers' jobs (load average {os.getloadavg()[0]:.0f} "
        "when done): the wall times are inflated and noisy, compare the large differences only.",
        "",
        "| model | before s | after s |",
        "|---|---:|---:|",
    ]
    for node in models[:12]:
        name = node.split(".")[-1]
        fmt = lambda v: "—" if v is None else f"{v:.1f}"  # noqa: E731
        lines.append(f"| `{name}` | {fmt(b_nodes.get(node))} | {fmt(a_nodes.get(node))} |")
    lines += [
        f"| all models (sum of node times) | {total(b_nodes, 'model.'):.1f} | {total(a_nodes, 'model.'):.1f} |",
        f"| all data tests (sum of node times) | {total(b_nodes, 'test.'):.1f} | {total(a_nodes, 'test.'):.1f} |",
        f"| dbt start-up and full parse | {b_parse:.1f} | {a_parse:.1f} |",
        f"| whole `srlens build` (wall) | {b_wall:.1f} | {a_wall:.1f} |",
        f"| rebuild with nothing changed (wall) | {rebuild[0][0]:.1f} | {rebuild[1][0]:.1f} |",
        f"| of which dbt start-up with the kept partial parse | {rebuild[0][2]:.1f} | {rebuild[1][2]:.1f} |",
        "",
        "The twelve slowest models of either build are listed (— : the model does not exist in that version). "
        + (
            "Every mart of the two builds is equal (tests/snapshot.py comparison, floats to 1e-9)."
            if not differ
            else f"The marts DIFFER: {'; '.join(differ[:5])}"
        ),
    ]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--before", default=BEFORE_COMMIT, help="git commit of the 'before' code")
    p.add_argument("--before-tree", help="a source tree of that commit already extracted (instead of git archive)")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--work", help="folder for the warehouses (default: a temporary one)")
    p.add_argument("--doc", action="store_true", help="write the section of docs/benchmarks.md")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        tmp = Path(tmp)
        old_code = Path(args.before_tree) if args.before_tree else checkout(args.before, tmp / "before_code")
        loaded = tmp / "loaded" / "srlens.duckdb"
        loaded.parent.mkdir()
        print("loading", file=sys.stderr)
        load(loaded, args.runs)
        import duckdb

        with duckdb.connect(str(loaded), read_only=True) as con:
            outputs = con.execute("select count(*) from raw.outputs").fetchone()[0]
        copies = {}
        for version in ("before", "after"):
            (tmp / version).mkdir()
            copies[version] = shutil.copy(loaded, tmp / version / "srlens.duckdb")
        results, rebuild = {}, {}
        for version, code in (("before", old_code), ("after", REPO)):
            print(f"building {version}", file=sys.stderr)
            results[version] = build(code, Path(copies[version]))
        for version, code in (("before", old_code), ("after", REPO)):
            print(f"rebuilding {version} (nothing changed)", file=sys.stderr)
            rebuild[version] = build(code, Path(copies[version]))
        differ = same_marts(Path(copies["before"]), Path(copies["after"]))
        body = render(args, outputs, results["before"], results["after"], (rebuild["before"], rebuild["after"]), differ)
    print(body)
    if args.doc:
        write_section(SECTION, body)


if __name__ == "__main__":
    main()
