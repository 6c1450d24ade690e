"""`srlens build`: refresh every dbt model without ever exposing a half-built warehouse.

dbt builds into a copy of the warehouse; only a successful build replaces the
file (an atomic rename). Readers that hold the old file open keep reading the
old version, and a failed build leaves the warehouse exactly as it was.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import duckdb

from loaders.store import REPO_ROOT, ensure_raw_schema, utc_now, writer_lock
from srlens import processing
from udfs.bleu import NLTK_COMPAT_VERSION

DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"
PROCESSORS = ("stanza", "aligned")
PROCESSOR_ENV = "SRLENS_PROCESSOR"


class BuildError(Exception):
    pass


def dbt_environment(build_path, work_dir):
    env = dict(os.environ)
    env.update({
        "SRLENS_BUILD_PATH": str(build_path),
        "DBT_TARGET_PATH": str(work_dir / "target"),
        "DBT_LOG_PATH": str(work_dir / "logs"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DO_NOT_TRACK": "1",
    })
    return env


def run_dbt(args, build_path, work_dir, project_dir=None, echo=True):
    """Run the dbt CLI of this environment on `build_path`; returns (ok, output)."""
    project_dir = Path(project_dir or os.environ.get("SRLENS_DBT_PROJECT") or DBT_PROJECT_DIR)
    dbt = Path(sys.executable).parent / "dbt"
    cmd = [str(dbt), *args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    proc = subprocess.Popen(cmd, env=dbt_environment(build_path, work_dir), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:  # dbt's own "N of M START/OK" lines are the progress display
        lines.append(line)
        if echo:
            sys.stderr.write(line)
    return proc.wait() == 0, "".join(lines)


def build(warehouse, echo=True, project_dir=None, processor=None, stanza_dir=None, dbt_vars=None):
    """Process new outputs, run `dbt build` (models and their tests), swap the result in on success.

    processor: 'stanza' (parse outputs; SPEC section 6) or 'aligned' (no model: map output tokens
    to reference words by form); default $SRLENS_PROCESSOR, else stanza.
    dbt_vars: further dbt vars (parameters of the marts, see dbt_project.yml).
    """
    processor = processor or os.environ.get(PROCESSOR_ENV) or "stanza"
    if processor not in PROCESSORS:
        raise BuildError(f"unknown processor {processor!r} (one of {', '.join(PROCESSORS)})")
    warehouse = Path(warehouse).resolve()  # dbt runs in its project folder: relative paths would move
    work_dir = warehouse.parent / f".{warehouse.name}.dbt"
    building = warehouse.parent / f".{warehouse.name}.building"
    with writer_lock(warehouse):
        # Only the copy is opened for writing: readers of the live file are never blocked.
        if warehouse.exists():
            shutil.copyfile(warehouse, building)
        if Path(f"{warehouse}.wal").exists():
            shutil.copyfile(f"{warehouse}.wal", f"{building}.wal")
        try:
            started_at, clock = utc_now(), time.monotonic()
            all_vars = {**(dbt_vars or {}), **prepare(building, processor, stanza_dir, echo)}
            ok, output = run_dbt(["build", "--vars", json.dumps(all_vars)], building, work_dir, project_dir, echo)
            if not ok:
                raise BuildError("dbt build failed; the warehouse is unchanged.\n" + _failures(output))
            record_build(building, started_at, time.monotonic() - clock, all_vars, work_dir / "target")
            os.replace(building, warehouse)
        finally:
            for leftover in (building, Path(f"{building}.wal")):
                leftover.unlink(missing_ok=True)


def prepare(building, processor, stanza_dir, echo):
    """Bring the copy's raw and cache schemas up to date and parse new outputs; returns dbt vars."""
    con = duckdb.connect(str(building))
    try:
        ensure_raw_schema(con)
        processing.ensure_cache_schema(con)
        stanza_processors = {}
        if processor == "stanza":
            parsed = processing.process_pending(con, model_dir=stanza_dir, progress=echo)
            # The processor id of every language that has output text, as processing resolved it.
            stanza_processors = {lang: stats["processor"] for lang, stats in parsed["languages"].items()}
    finally:
        con.close()
    return {"processor": processor, "stanza_processors": stanza_processors,
            "bleu_nltk_version": NLTK_COMPAT_VERSION}


BUILDS_SQL = """
create schema if not exists meta;
create table if not exists meta.builds (
    started_at     timestamp not null,  -- UTC
    seconds        double not null,     -- processing and dbt, wall time
    processor      varchar not null,    -- aligned | stanza
    dbt_vars       json not null,       -- every var the build passed, stanza processor ids included
    models         integer not null,    -- dbt nodes that ran, by kind
    tests          integer not null,
    srlens_version varchar not null,
    dbt_version    varchar not null,
    duckdb_version varchar not null
);
"""


def record_build(building, started_at, seconds, all_vars, target_dir):
    """Append what this build did to meta.builds of the copy (read by `srlens status`)."""
    results = json.loads((target_dir / "run_results.json").read_text())["results"]
    kinds = [r["unique_id"].split(".")[0] for r in results]
    con = duckdb.connect(str(building))
    try:
        con.execute(BUILDS_SQL)
        con.execute("insert into meta.builds values (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            started_at, seconds, all_vars["processor"], json.dumps(all_vars), kinds.count("model"),
            kinds.count("test"), metadata.version("srlens"), metadata.version("dbt-core"), duckdb.__version__])
    finally:
        con.close()


def _failures(output):
    """The lines of dbt's output that say what failed."""
    keep = [line for line in output.splitlines()
            if any(word in line for word in ("ERROR", "FAIL", "Error", "error"))]
    return "\n".join(keep[-20:]) or output[-2000:]
