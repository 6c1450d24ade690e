"""`srlens report DIR`: a static, offline explorer of a built warehouse, written as one directory.

    DIR/index.html                  overview: per campaign, then per corpus (overview.py)
    DIR/runs/<run>.html             one page per run: weakest relations and subtrees (runs.py)
    DIR/sentences/<run>/<n>.html    one page per example sentence of error_examples (sentences.py)
    DIR/report.css, DIR/report.js   shipped assets: styles, sortable and filterable tables
    DIR/.srlens-report              the marker: srlens wrote this folder and may replace its pages

The modules have one job each: queries.py holds every SQL text and cut-off, charts.py the
matplotlib charts of the overview, markup.py the HTML pieces, tree.py the sentence view's SVG.
index.html is written by a worker process (overview.Worker) while this process writes the run and
sentence pages. The report reads marts and does not aggregate sentence rows itself. To add an
overview section, append a function (report, scope) to overview.CAMPAIGN_SECTIONS or
overview.CORPUS_SECTIONS.
"""

import os
import shutil
import sys
from pathlib import Path

from srlens.outdir import OutDirError, check_out_dir
from srlens.paths import REPORT_ASSETS_DIR
from srlens.report import overview, runs, sentences
from srlens.report.queries import REQUIRED_MARTS, RUN_QUERIES, SQL_RUNS, ByRun, fetch
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
    worker = overview.Worker(warehouse)  # index.html, written by a worker process meanwhile
    try:
        all_runs = fetch(con, SQL_RUNS)
        anchors = overview.corpus_anchors(con)
        out.mkdir(parents=True, exist_ok=True)
        (out / MARKER).write_text("written by srlens report: the next report replaces its pages\n", encoding="utf-8")
        staging = out / STAGING
        shutil.rmtree(staging, ignore_errors=True)  # left by a report that was killed
        try:
            write_pages(con, staging, all_runs, anchors)
            (staging / "index.html").write_text(worker.html(con), encoding="utf-8")
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    finally:
        worker.close()
        con.close()
    swap_in(staging, out)
    return out / "index.html"


def write_pages(con, staging, all_runs, anchors):
    """The run and sentence pages and the assets, into the staging folder."""
    (staging / "runs").mkdir(parents=True)
    (staging / "sentences").mkdir()
    streams = {name: ByRun(con, sql, **params) for name, (sql, params) in RUN_QUERIES.items()}
    for number, run in enumerate(all_runs, 1):
        sid = run["submission_id"]
        print(f"report: run {number}/{len(all_runs)} {sid}", file=sys.stderr)
        rows = {name: stream.take(sid) for name, stream in streams.items()}
        anchor = anchors.get((run["campaign"], run["corpus"]), "")
        (staging / runs.run_file(sid)).write_text(runs.run_page(run, rows, f"index.html#{anchor}"), encoding="utf-8")
        if rows["examples"]:
            (staging / runs.sentence_dir(sid)).mkdir()
        for sent_idx, text in sentences.sentence_pages(run, rows):
            (staging / runs.sentence_file(sid, sent_idx)).write_text(text, encoding="utf-8")
    for stream in streams.values():
        stream.close()
    for asset in ASSETS:
        shutil.copyfile(REPORT_ASSETS_DIR / asset, staging / asset)


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
