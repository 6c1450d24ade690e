"""`srlens report DIR`: a static, offline explorer of a built warehouse, written as one directory.

    DIR/index.html                  overview: per campaign, then per corpus (overview.py)
    DIR/runs/<run>.html             one page per run: weakest relations and subtrees (runs.py)
    DIR/sentences/<run>/<n>.html    one page per example sentence of error_examples (sentences.py)
    DIR/report.css, DIR/report.js   shipped assets: styles, sortable and filterable tables

The modules have one job each: queries.py holds every SQL text and cut-off, charts.py the
matplotlib charts of the overview, markup.py the HTML pieces, tree.py the sentence view's SVG.
The report reads marts and does not aggregate sentence rows itself. To add an overview section,
append a function (report, scope) to overview.CAMPAIGN_SECTIONS or overview.CORPUS_SECTIONS.
"""

import shutil
import sys
from pathlib import Path

import duckdb
from matplotlib import rc_context

from srlens.paths import REPORT_ASSETS_DIR
from srlens.report import overview, runs, sentences
from srlens.report.charts import RC
from srlens.report.markup import page
from srlens.report.queries import REQUIRED_MARTS, SQL_BUILD, SQL_RUNS, fetch
from srlens.status import WarehouseError, mart_names, open_read_only

ASSETS = ("report.css", "report.js")


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
    The runs/ and sentences/ folders of OUT_DIR are replaced: no page of an earlier report stays."""
    con = open_warehouse(warehouse)
    out = Path(out_dir)
    try:
        all_runs = fetch(con, SQL_RUNS)
        with rc_context(RC):
            report = overview.render(con, runs.run_file)
        try:
            build = con.execute(SQL_BUILD).fetchone()
        except duckdb.CatalogException:  # a warehouse built before meta.builds existed
            build = None
        built = (
            f"built {build[0]:%Y-%m-%d %H:%M} with processor {build[1]}, srlens {build[4]}"
            if build
            else "build time unknown"
        ) + (f", signature {build[5]}" if build and build[5] else "")
        out.mkdir(parents=True, exist_ok=True)
        for folder in ("runs", "sentences"):
            shutil.rmtree(out / folder, ignore_errors=True)
        (out / "runs").mkdir()
        for number, run in enumerate(all_runs, 1):
            print(f"report: run {number}/{len(all_runs)} {run['submission_id']}", file=sys.stderr)
            anchor = report.corpus_anchors.get((run["campaign"], run["corpus"]), "")
            html, examples = runs.run_page(con, run, f"index.html#{anchor}")
            (out / runs.run_file(run["submission_id"])).write_text(html, encoding="utf-8")
            for sent_idx, text in sentences.sentence_pages(con, run, examples):
                path = out / runs.sentence_file(run["submission_id"], sent_idx)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    finally:
        con.close()
    for asset in ASSETS:
        shutil.copyfile(REPORT_ASSETS_DIR / asset, out / asset)
    name = Path(warehouse).name
    index = out / "index.html"
    index.write_text(page(f"srlens report: {name}", overview.page_body(report, name, built), ""), encoding="utf-8")
    return index


__all__ = ["REQUIRED_MARTS", "write_report"]
