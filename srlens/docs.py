"""`srlens docs OUT_DIR`: dbt's documentation site of a built warehouse, as one HTML file that works offline.

`dbt docs generate --static` reads the project (models, the descriptions of every mart column, tests,
the report's exposure, lineage) and the warehouse's catalog (tables, column types, row counts) and
inlines both in one page. dbt opens the warehouse read-only (profiles.yml reads the access mode from
$SRLENS_DUCKDB_ACCESS_MODE), with the vars of the last build, so the page shows the SQL that built it.

dbt's page has no external script, style or font, except the code of dbt's usage tracking, which
would load a script from a CDN when the project allows tracking; srlens never does, and the page
is written without that code path and with a Content-Security-Policy that allows no network access.
"""

import json
import os
import re
import tempfile
from pathlib import Path

import duckdb

from srlens import build_vars
from srlens.build import BuildError, last_build, run_dbt
from srlens.outdir import check_out_dir
from srlens.paths import DBT_PROJECT_DIR
from srlens.status import WarehouseError, require_warehouse

# Nothing from the network: inline scripts and styles, data: images and fonts.
OFFLINE_POLICY = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; "
    'font-src data:">'
)
TRACKING_CALL = "!0===e.track&&r.turn_on_tracking()"
TRACKING_SCRIPT = re.compile(r'"//[a-z0-9.-]+\.cloudfront\.net/[^"]*"')
MARKER = ".srlens-docs"  # srlens docs wrote this folder and may replace its index.html (srlens/outdir.py)


def last_build_vars(warehouse):
    """The dbt vars of the last build (meta.builds): the docs describe the SQL that built the marts."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        last_vars = last_build(con, "dbt_vars")
    finally:
        con.close()
    if last_vars is None:
        raise WarehouseError(
            f"{warehouse} is not built yet (or was built before srlens recorded builds): run srlens build first"
        )
    # vars a build of an older srlens did not pass take their current values
    return {**build_vars.defaults(), **json.loads(last_vars)}


def offline(html):
    """dbt's static page without its tracking code and with a policy that blocks every network request."""
    if TRACKING_CALL not in html:
        raise BuildError(
            "dbt's docs page changed (its tracking switch is not where srlens expects it): "
            "check srlens/docs.py against this dbt version"
        )
    html = html.replace(TRACKING_CALL, "!1")
    html = TRACKING_SCRIPT.sub('""', html)
    return html.replace("<head>", "<head>" + OFFLINE_POLICY, 1)


def write_docs(warehouse, out_dir, project_dir=DBT_PROJECT_DIR):
    """Write OUT_DIR/index.html, the docs site of the warehouse; returns its path. OUT_DIR must be new,
    empty or written by srlens docs (it holds .srlens-docs), as for srlens report (srlens/outdir.py)."""
    out = Path(out_dir)
    check_out_dir(out, MARKER, "docs folder", warehouse, ("index.html",))
    warehouse = require_warehouse(warehouse).resolve()
    dbt_vars = last_build_vars(warehouse)
    with tempfile.TemporaryDirectory(prefix="srlens-docs-") as work:
        work_dir = Path(work)
        ok, output = run_dbt(
            ["docs", "generate", "--static", "--vars", json.dumps(dbt_vars)],
            warehouse,
            work_dir,
            project_dir,
            echo=False,
            extra_env={"SRLENS_DUCKDB_ACCESS_MODE": "read_only"},
        )
        if not ok:
            lines = [line for line in output.splitlines() if "rror" in line] or output.splitlines()[-5:]
            raise BuildError("dbt docs generate failed:\n" + "\n".join(lines[-10:]))
        html = (work_dir / "target" / "static_index.html").read_text(encoding="utf-8")
    html = offline(html)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / MARKER).is_file():
        (out / MARKER).write_text(
            "written by srlens docs: the next srlens docs replaces index.html\n", encoding="utf-8"
        )
    page = out / "index.html"
    # a new file of its own, then renamed over the page: never written through a link planted meanwhile
    file = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=out, prefix=".index.html.", delete=False)
    try:
        with file:
            file.write(html)
        os.chmod(file.name, 0o644)
        os.replace(file.name, page)
    except BaseException:
        Path(file.name).unlink(missing_ok=True)
        raise
    return page
