"""`srlens build`: refresh every dbt model without ever exposing a half-built warehouse.

dbt builds into a copy of the warehouse; only a successful build replaces the
file (an atomic rename). Readers that hold the old file open keep reading the
old version, and a failed build leaves the warehouse exactly as it was.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import duckdb

from srlens.loaders.store import connect, ensure_raw_schema, utc_now, writer_lock
from srlens import build_vars, processing
from srlens.paths import DBT_PROJECT_DIR, UDF_DIR
from srlens.udfs.bleu import NLTK_COMPAT_VERSION

PROCESSORS = ("stanza", "aligned")
PROCESSOR_ENV = "SRLENS_PROCESSOR"


class BuildError(Exception):
    pass


MEMORY_LIMIT_ENV = "SRLENS_MEMORY_LIMIT"


def memory_limit():
    """DuckDB's memory limit for the build: $SRLENS_MEMORY_LIMIT, else 6 GB or 80% of RAM if less.

    6 GB keeps a campaign-size build (340,000 output sentences) within 8 GB in all at full speed
    (docs/benchmarks.md); DuckDB spills what does not fit to a temporary folder beside the file.
    """
    if os.environ.get(MEMORY_LIMIT_ENV):
        return os.environ[MEMORY_LIMIT_ENV]
    ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    return f"{min(6000, int(ram_mb * 0.8))}MB"


def dbt_environment(build_path, work_dir):
    env = dict(os.environ)
    env.update({
        MEMORY_LIMIT_ENV: memory_limit(),
        "SRLENS_BUILD_PATH": str(build_path),
        "DBT_TARGET_PATH": str(work_dir / "target"),
        "DBT_LOG_PATH": str(work_dir / "logs"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        "DO_NOT_TRACK": "1",
    })
    return env


def run_dbt(args, build_path, work_dir, project_dir=DBT_PROJECT_DIR, echo=True):
    """Run the dbt CLI of this environment on `build_path`; returns (ok, output)."""
    # dbt as a module of this interpreter: no reliance on where pip put the `dbt` script.
    cmd = [sys.executable, "-m", "dbt.cli.main", *args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    proc = subprocess.Popen(cmd, env=dbt_environment(build_path, work_dir), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:  # dbt's own "N of M START/OK" lines are the progress display
        lines.append(line)
        if echo:
            sys.stderr.write(line)
    return proc.wait() == 0, "".join(lines)


def build(warehouse, echo=True, project_dir=None, processor=None, stanza_dir=None, dbt_vars=None,
          full_refresh=False):
    """Process new outputs, run `dbt build` (models and their tests), swap the result in on success.

    processor: 'stanza' (parse outputs; SPEC section 6) or 'aligned' (no model: map output tokens
    to reference words by form); default $SRLENS_PROCESSOR, else stanza.
    dbt_vars: parameters of the marts (srlens/build_vars.py), checked before anything is done.
    The build is incremental when only runs were loaded since the last one (see `base_state`);
    full_refresh forces every model to be rebuilt from scratch.
    """
    dbt_vars = build_vars.check(dbt_vars)  # before anything: a refused var changes nothing
    processor = processor or os.environ.get(PROCESSOR_ENV) or "stanza"
    if processor not in PROCESSORS:
        raise BuildError(f"unknown processor {processor!r} (one of {', '.join(PROCESSORS)})")
    project_dir = Path(project_dir or os.environ.get("SRLENS_DBT_PROJECT") or DBT_PROJECT_DIR)
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
            all_vars = {**prepare(building, processor, stanza_dir, echo), **dbt_vars}
            base, last_base = base_state(building, all_vars, project_dir)
            full = full_refresh or base != last_base
            args = ["build", "--vars", json.dumps(all_vars)]
            args += ["--full-refresh"] if full else ["--select", RUN_DATA_DESCENDANTS]
            if echo:
                print("srlens: full build" if full else "srlens: incremental build (only runs changed "
                      "since the last build)", file=sys.stderr)
            ok, output = run_dbt(args, building, work_dir, project_dir, echo)
            if not ok:
                raise BuildError("dbt build failed; the warehouse is unchanged.\n" + _failures(output))
            record_build(building, started_at, time.monotonic() - clock, all_vars, base, full,
                         work_dir / "target")
            os.replace(building, warehouse)
        finally:
            for leftover in (building, Path(f"{building}.wal")):
                leftover.unlink(missing_ok=True)


def prepare(building, processor, stanza_dir, echo):
    """Bring the copy's schemas up to date and parse new outputs; returns every dbt var (defaults
    and the ones the build sets itself)."""
    con = connect(building)
    try:
        ensure_raw_schema(con)
        processing.ensure_cache_schema(con)
        con.execute(META_SQL)
        stanza_processors = {}
        if processor == "stanza":
            parsed = processing.process_pending(con, model_dir=stanza_dir, progress=echo)
            # The processor id of every language that has output text, as processing resolved it.
            stanza_processors = {lang: stats["processor"] for lang, stats in parsed["languages"].items()}
    finally:
        con.close()
    return {**build_vars.defaults(), "processor": processor, "stanza_processors": stanza_processors,
            "bleu_nltk_version": NLTK_COMPAT_VERSION}


# An incremental build runs the models that depend on run data; their per-submission models
# recompute only the changed submissions (dbt_project/macros/incremental_by_submission.sql).
RUN_DATA_DESCENDANTS = ("source:raw.submissions+ source:raw.outputs+ source:raw.output_tokens+ "
                        "source:cache.parsed_words+ source:meta.built_submissions+")

# Everything but the runs that the marts depend on. When any of it differs from the last
# successful build, the build is a full refresh.
REFERENCE_STATE_SQL = """
select concat_ws(' ', 'treebank', corpus, language, sha256, loaded_at) from raw.treebank_files
union all select concat_ws(' ', 'human', count(*), max(loaded_at)) from raw.human_judgments
union all select concat_ws(' ', 'rules', count(*), max(loaded_at)) from raw.lambre_manual_rules
"""


META_SQL = """
create schema if not exists meta;
create table if not exists meta.builds (
    started_at     timestamp not null,  -- UTC
    seconds        double not null,     -- processing and dbt, wall time
    processor      varchar not null,    -- aligned | stanza
    full_refresh   boolean not null,    -- false: only changed runs were recomputed
    dbt_vars       json not null,       -- every var the build passed, stanza processor ids included
    base_state     varchar not null,    -- sha256 of code, vars, treebanks, judgments and rules
    models         integer not null,    -- dbt nodes that ran, by kind
    tests          integer not null,
    srlens_version varchar not null,
    dbt_version    varchar not null,
    duckdb_version varchar not null
);
create table if not exists meta.built_submissions (
    submission_id varchar not null,
    loaded_at     timestamp not null
);
"""


def base_state(building, all_vars, project_dir):
    """(digest of everything this build depends on except the runs themselves, the last build's)."""
    digest = hashlib.sha256(json.dumps(all_vars, sort_keys=True).encode())
    digest.update(metadata.version("srlens").encode())
    code_files = [f for f in project_dir.rglob("*") if f.suffix in (".sql", ".yml")
                  and "target" not in f.parts and "logs" not in f.parts]
    for path in sorted(code_files) + sorted(UDF_DIR.glob("*.py")):  # and the UDFs the models call
        digest.update(path.name.encode() + path.read_bytes())
    con = duckdb.connect(str(building), read_only=True)
    try:
        for (line,) in sorted(con.execute(REFERENCE_STATE_SQL).fetchall(), key=str):
            digest.update(str(line).encode())
        last = con.execute("select base_state from meta.builds order by started_at desc limit 1").fetchone()
    finally:
        con.close()
    return digest.hexdigest(), last[0] if last else None


def record_build(building, started_at, seconds, all_vars, base, full, target_dir):
    """Note the build in meta.builds (read by `srlens status`) and the runs it computed."""
    results = json.loads((target_dir / "run_results.json").read_text())["results"]
    kinds = [r["unique_id"].split(".")[0] for r in results]
    con = connect(building)
    try:
        con.execute("insert into meta.builds values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            started_at, seconds, all_vars["processor"], full, json.dumps(all_vars), base,
            kinds.count("model"), kinds.count("test"), metadata.version("srlens"),
            metadata.version("dbt-core"), duckdb.__version__])
        con.execute("delete from meta.built_submissions")
        con.execute("insert into meta.built_submissions select submission_id, loaded_at from raw.submissions")
    finally:
        con.close()


def _failures(output):
    """The lines of dbt's output that say what failed."""
    keep = [line for line in output.splitlines()
            if any(word in line for word in ("ERROR", "FAIL", "Error", "error"))]
    return "\n".join(keep[-20:]) or output[-2000:]
