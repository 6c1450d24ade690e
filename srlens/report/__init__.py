"""`srlens report DIR`: a static, offline explorer of a built warehouse, written as one directory.

    DIR/index.html                  overview: per campaign, then per corpus (overview.py)
    DIR/runs/<run>.html             one page per run: weakest relations and subtrees (runs.py)
    DIR/sentences/<run>/<n>.html    one page per example sentence of error_examples (sentences.py)
    DIR/report.css, DIR/report.js   shipped assets: styles, sortable and filterable tables
    DIR/.srlens-report              the marker: srlens wrote this folder and may replace its pages

The modules have one job each: queries.py holds every SQL text and cut-off, charts.py the
charts (SVG written as text), markup.py the HTML pieces, tree.py the sentence view's SVG.
index.html is written by a worker process (overview.Worker) while this process writes the run and
sentence pages from the first run on; the worker then writes the last runs' pages (pages.py). The
report reads marts and does not aggregate sentence rows itself. To add an overview section, append
a function (report, scope) to overview.CAMPAIGN_SECTIONS or overview.CORPUS_SECTIONS.
"""

import os
import shutil
from pathlib import Path

from srlens.outdir import OutDirError, check_out_dir
from srlens.paths import REPORT_ASSETS_DIR
from srlens.report import overview, pages
from srlens.report.queries import REQUIRED_MARTS, SQL_RUNS, fetch
from srlens.status import WarehouseError, mart_names, open_read_only

ASSETS = ("report.css", "report.js")
MARKER = ".srlens-report"
STAGING = ".srlens-report-partial"  # the new report, written here, then moved into place
OLD = ".srlens-report-old"  # the replaced pages, deleted once the new ones are in place


ReportError = OutDirError  # an output folder the report will not write into (srlens/outdir.py)


def open_warehouse(warehouse):
    con = open_read_only(warehouse)  # the sandbox (no progress bar: progress is a line per section)
    absent = [m for m in REQUIRED_MARTS if m not in mart_names(con)]
    if absent:
        con.close()
        raise WarehouseError(
            f"warehouse {warehouse} is not built (missing marts: {', '.join(absent)}): run `srlens build` first"
        )
    return con


def write_report(warehouse, out_dir):
    """Write the report of the warehouse into OUT_DIR and return the path of its index.html.
    OUT_DIR must be new, empty or an earlier report (it holds the marker). The pages are written
    into a staging folder first and moved into place at the end: a failure halfway leaves the
    earlier report whole; a success leaves no page of it."""
    out = Path(out_dir)
    written = (*ASSETS, "index.html", "runs", "sentences", STAGING, OLD)
    check_out_dir(out, MARKER, "report folder", warehouse, written)
    con = open_warehouse(warehouse)
    worker = None
    try:
        all_runs = fetch(con, SQL_RUNS)
        anchors = overview.corpus_anchors(con)
        out.mkdir(parents=True, exist_ok=True)
        (out / MARKER).write_text("written by srlens report: the next report replaces its pages\n", encoding="utf-8")
        staging = out / STAGING
        shutil.rmtree(staging, ignore_errors=True)  # left by a report that was killed
        try:
            pages.make_folders(staging)
            # index.html, then the last runs' pages, written by a worker process meanwhile
            worker = overview.Worker(warehouse, staging)
            mine = pages.write_runs(con, staging, all_runs, 0, len(all_runs), anchors)
            index = worker.html(con)
            # the runs the worker claimed but did not write (it failed, or never started)
            theirs = len(all_runs) if worker.runs_from is None else worker.runs_from
            pages.write_runs(con, staging, all_runs, mine, theirs, anchors, claimed=True)
            (staging / "index.html").write_text(index, encoding="utf-8")
            for asset in ASSETS:
                shutil.copyfile(REPORT_ASSETS_DIR / asset, staging / asset)
            shutil.rmtree(staging / pages.CLAIMS)
        except BaseException:
            if worker is not None:
                worker.close()  # before the staging folder goes: it may still be writing into it
            shutil.rmtree(staging, ignore_errors=True)
            raise
    finally:
        if worker is not None:
            worker.close()
        con.close()
    swap_in(staging, out)
    return out / "index.html"


def swap_in(staging, out):
    """Move the staged pages over the earlier report's: renames within OUT_DIR, then delete the old."""
    old = out / OLD
    shutil.rmtree(old, ignore_errors=True)
    old.mkdir()
    for folder in ("runs", "sentences"):
        if (out / folder).exists():
            os.replace(out / folder, old / folder)
        os.replace(staging / folder, out / folder)
    for file in (*ASSETS, "index.html"):
        os.replace(staging / file, out / file)
    staging.rmdir()
    shutil.rmtree(old)


__all__ = ["REQUIRED_MARTS", "ReportError", "write_report"]
