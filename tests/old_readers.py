"""Older DuckDB releases, each in its own venv from the package registry, opening a warehouse as a BI tool would.

Used by tests/test_old_readers.py and bench/old_readers.py. A venv is made once per version and kept in
$SRLENS_TEST_CACHE (default ~/.cache/srlens-test), as `duckdb-VERSION`: CI pays for it once.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The releases README promises to open the warehouse: the oldest (1.1.0), the last patch release of every
# minor version since, 1.4.1 (the last that resolves metadata pointers strictly, docs/duckdb-compatibility.md)
# and 2.0.0, what srlens writes with.
PROMISED = ("1.1.0", "1.1.3", "1.2.2", "1.3.2", "1.4.1", "1.4.5", "1.5.6", "2.0.0")

# Opened read-only; every table of every schema listed and read in full (a hash of each row): DuckDB
# reads the metadata of a table's row groups only when they are scanned, and a defect there shows only then.
OPEN_AS_BI_TOOL = """
import json, sys, duckdb
result = {"version": duckdb.__version__}
try:
    con = duckdb.connect(sys.argv[1], read_only=True)
    tables = con.execute(
        "select schema_name, table_name from duckdb_tables() where database_name = current_database() "
        "and not internal order by all").fetchall()
    rows = 0
    for schema, table in tables:
        rows += con.execute(f'select count(*), bit_xor(hash(t)) from "{schema}"."{table}" t').fetchone()[0]
    result.update(tables=len(tables), rows=rows,
                  runs=con.execute("select count(*) from submission_scores").fetchone()[0])
except Exception as e:
    result["error"] = str(e).splitlines()[0]
print(json.dumps(result))
"""


def cache_dir():
    return Path(os.environ.get("SRLENS_TEST_CACHE") or Path.home() / ".cache" / "srlens-test")


def duckdb_python(version):
    """The Python of a venv with duckdb==version from the package registry, made on first use."""
    venv = cache_dir() / f"duckdb-{version}"
    python = venv / "bin" / "python"
    if python.exists():
        return python
    partial = venv.with_name(venv.name + ".partial")  # an interrupted install is never taken for a made venv
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    # no pip of its own (installing one takes longer than duckdb): this Python's pip installs into it
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(partial)], check=True)
    pip = [sys.executable, "-m", "pip", "--python", str(partial / "bin" / "python"), "install", "--quiet"]
    subprocess.run([*pip, "--disable-pip-version-check", f"duckdb=={version}"], check=True)
    partial.rename(venv)  # only bin/python is used, which finds its venv wherever it is
    return python


def open_as_bi_tool(version, warehouse):
    """What DuckDB `version` makes of the warehouse, in its own process: {"version", "tables", "rows",
    "runs"} or {"version", "error"}."""
    out = subprocess.run(
        [str(duckdb_python(version)), "-c", OPEN_AS_BI_TOOL, str(warehouse)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:  # the reader crashed (a signal, an abort) rather than raising an error
        return {"version": version, "error": f"exit {out.returncode}: {out.stderr.strip()[-300:]}"}
    return json.loads(out.stdout)


def build_series(warehouse, builds, baselines=True):
    """Load the demo (with its baseline runs unless not `baselines`) and build it `builds` times, as a user
    would: a full build, then in turns two incremental builds, each after reloading one of the demo's runs,
    and a full refresh. Yields (number, kind) after each build, with the warehouse closed."""
    import csv  # noqa: PLC0415 (the series needs srlens; opening a file does not)

    from srlens.build import build  # noqa: PLC0415
    from srlens.demo import DEMO_MANIFEST, load_demo  # noqa: PLC0415
    from srlens.loaders.load import load_outputs  # noqa: PLC0415

    with open(DEMO_MANIFEST, newline="") as handle:
        runs = [row for row in csv.DictReader(handle) if row["kind"] == "outputs"]
    load_demo(warehouse, baselines=baselines)
    for number in range(builds):
        if number % 3 == 0:
            build(warehouse, echo=False, processor="aligned", full_refresh=number > 0)
            yield number + 1, "full"
        else:
            row = runs[number % len(runs)]
            load_outputs(
                warehouse, DEMO_MANIFEST.parent / row["file"], row["corpus"], row["team"], row["run"], row["campaign"]
            )
            build(warehouse, echo=False, processor="aligned")
            yield number + 1, "incremental"
