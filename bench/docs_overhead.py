"""What the self-documenting warehouse costs a build: the marts with and without their enforced
contracts and persist_docs (issue 15), run alternately on copies of one built warehouse.

    python -m bench.docs_overhead WAREHOUSE [--rounds 2] [--write]

WAREHOUSE is a built warehouse (e.g. the demo: srlens load-demo && srlens build --processor aligned).
Each round runs `dbt run --select path:models/marts --full-refresh` once per setting, on a fresh copy,
so both see the same machine load; --write puts the table in docs/benchmarks.md.
"""

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from bench.benchmarks_doc import write_section
from srlens.build import run_dbt
from srlens.docs import last_build_vars
from srlens.paths import DBT_PROJECT_DIR

DOC_CONFIG = """      +contract:
        enforced: true
      +persist_docs:
        relation: true
        columns: true
"""


def project_without_docs(root):
    """A copy of the dbt project whose marts have neither contracts nor persist_docs."""
    copy = root / "project_without_docs"
    shutil.copytree(DBT_PROJECT_DIR, copy, ignore=shutil.ignore_patterns("target", "logs"))
    config = copy / "dbt_project.yml"
    text = config.read_text()
    if DOC_CONFIG not in text:
        raise SystemExit("dbt_project.yml no longer has the marts' contract/persist_docs block this bench removes")
    config.write_text(text.replace(DOC_CONFIG, ""))
    return copy


def run_marts(warehouse, project, root, label):
    copy = root / f"{label}.duckdb"
    shutil.copy(warehouse, copy)
    dbt_vars = last_build_vars(copy)
    start = time.perf_counter()
    ok, output = run_dbt(
        ["run", "--select", "path:models/marts", "--full-refresh", "--vars", json.dumps(dbt_vars)],
        copy,
        root / f"dbt_{label}",
        project,
        echo=False,
    )
    wall = time.perf_counter() - start
    if not ok:
        raise SystemExit(output[-3000:])
    results = json.loads((root / f"dbt_{label}" / "target" / "run_results.json").read_text())["results"]
    copy.unlink()
    return wall, sum(r["execution_time"] for r in results), len(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        projects = {"contracts + persist_docs": DBT_PROJECT_DIR, "neither": project_without_docs(root)}
        for round_no in range(1, args.rounds + 1):
            for n, (label, project) in enumerate(projects.items()):
                wall, models, marts = run_marts(args.warehouse, project, root, f"r{round_no}_{n}")
                rows.append((round_no, label, marts, models, wall))
                print(f"round {round_no}, {label}: {marts} marts, {models:.1f} s in models, {wall:.1f} s wall")
    body = (
        "`python -m bench.docs_overhead WAREHOUSE --write` (bench/docs_overhead.py): the marts of a built\n"
        f"warehouse ({args.warehouse.name}) rebuilt with and without their enforced contracts and persist_docs\n"
        "(issue 15), alternately, on fresh copies. Measured on a machine shared with other jobs: compare the\n"
        "rows of one round, not across rounds.\n\n"
        "| round | marts built with | marts | seconds in models | wall seconds (dbt start-up included) |\n"
        "|---|---|---|---|---|\n"
        + "".join(f"| {r} | {label} | {m} | {models:.1f} | {wall:.1f} |\n" for r, label, m, models, wall in rows)
    )
    if args.write:
        write_section("Cost of contracts and column comments", body)
    print(body)


if __name__ == "__main__":
    main()
