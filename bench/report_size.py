"""How big and how slow the report explorer is (issue 16, part 5): the demo plus 10 generated runs
of 2,000 sentences (one en_ewt_train corpus of bench/campaign_data.py's generator), loaded, built with
the model-free processor, then `srlens report`. Writes the section "Report explorer" of
docs/benchmarks.md: seconds, pages and megabytes written, by kind of page.

    .venv/bin/python bench/report_size.py [--work DIR] [--no-doc]
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
for _path in (str(REPO), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from benchmarks_doc import write_section  # noqa: E402
from campaign_data import generate  # noqa: E402

from srlens.build import build  # noqa: E402
from srlens.demo import load_demo  # noqa: E402
from srlens.loaders.load import load_outputs, load_treebank  # noqa: E402
from srlens.report import write_report  # noqa: E402


def folder_size(path):
    files = [p for p in path.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files) / 2**20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=REPO / ".bench" / "report_size")
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    manifest = generate(args.work / "data", runs=10, sentences=2000, n_corpora=1)
    warehouse = args.work / "srlens.duckdb"
    warehouse.unlink(missing_ok=True)
    load_demo(warehouse)
    for corpus in manifest["corpora"]:
        load_treebank(warehouse, args.work / "data" / corpus["path"], corpus["name"])
    for run in manifest["runs"]:
        load_outputs(
            warehouse,
            args.work / "data" / run["path"],
            run["corpus"],
            run["team"],
            run["run"],
            campaign=run["campaign"],
        )
    build(warehouse, echo=False, processor="aligned")
    out = args.work / "report"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    write_report(warehouse, out)
    seconds = time.perf_counter() - started
    top = [out / name for name in ("index.html", "report.css", "report.js")]
    rows = [
        ("index.html, report.css, report.js", len(top), sum(p.stat().st_size for p in top) / 2**20),
        ("run pages (runs/)", *folder_size(out / "runs")),
        ("sentence pages (sentences/)", *folder_size(out / "sentences")),
        ("whole report", *folder_size(out)),
    ]
    body = (
        f"`bench/report_size.py`: the demo (16 runs of 200 sentences) plus 10 generated runs of 2,000\n"
        f"sentences on one corpus, built with the `aligned` processor; `srlens report` took\n"
        f"{seconds:.0f} s (measured while other engineers loaded the 2-core machine). Only the sentences\n"
        f"of `error_examples` get a page, so the size grows with runs x (relations + subtrees), not\n"
        f"with sentences.\n\n| part | files | MB |\n|---|---:|---:|\n"
        + "".join(f"| {name} | {files:,} | {mb:.1f} |\n" for name, files, mb in rows)
    )
    print(body)
    if not args.no_doc:
        write_section("Report explorer", body)


if __name__ == "__main__":
    main()
