"""`srlens build`: refresh every dbt model without ever exposing a half-built warehouse.

dbt builds into a copy of the warehouse; only a successful build replaces the
file (an atomic rename). Readers that hold the old file open keep reading the
old version, and a failed build leaves the warehouse exactly as it was.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from loaders.store import REPO_ROOT, ensure_raw_schema, writer_lock

DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"


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


def build(warehouse, echo=True, project_dir=None):
    """Run `dbt build` (models and their tests) and swap the result in on success."""
    warehouse = Path(warehouse)
    work_dir = warehouse.parent / f".{warehouse.name}.dbt"
    building = warehouse.parent / f".{warehouse.name}.building"
    with writer_lock(warehouse):
        # Only the copy is opened for writing: readers of the live file are never blocked.
        if warehouse.exists():
            shutil.copyfile(warehouse, building)
        if Path(f"{warehouse}.wal").exists():
            shutil.copyfile(f"{warehouse}.wal", f"{building}.wal")
        con = duckdb.connect(str(building))
        ensure_raw_schema(con)
        con.close()
        try:
            ok, output = run_dbt(["build"], building, work_dir, project_dir, echo)
            if not ok:
                raise BuildError("dbt build failed; the warehouse is unchanged.\n" + _failures(output))
            os.replace(building, warehouse)
        finally:
            for leftover in (building, Path(f"{building}.wal")):
                leftover.unlink(missing_ok=True)


def _failures(output):
    """The lines of dbt's output that say what failed."""
    keep = [line for line in output.splitlines()
            if any(word in line for word in ("ERROR", "FAIL", "Error", "error"))]
    return "\n".join(keep[-20:]) or output[-2000:]
