"""The promise to BI tools: every DuckDB release docs/querying.md lists opens every build.

docs/duckdb-compatibility.md says why some builds did not.

Slow tier (`make test-all`, CI): each DuckDB release runs in its own venv from the package registry, made
once and kept in ~/.cache/srlens-test (tests/support/old_readers.py).
"""

import gzip
import shutil
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest
import yaml

from srlens.build import build
from srlens.loaders.store import OLDEST_READER, WRITE_CONFIG
from srlens.paths import DBT_PROJECT_DIR
from srlens.status import status
from tests.conftest import SHARED, require_shared
from tests.support.old_readers import PROMISED, build_series, open_as_bi_tool

# A full build, two incremental ones, a full refresh, two incremental ones: every kind of build after
# every kind. The settings that keep the file readable are checked by the first test below (quick tier);
# `python -m tests.support.old_readers --builds 30` runs the series at length.
BUILDS = 6


def version_key(version):
    return tuple(int(part) for part in version.split("."))


def contents(warehouse):
    """(tables, rows) of every table, as this srlens's DuckDB reads them."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tables = con.execute(
            "select schema_name, table_name from duckdb_tables() where database_name = current_database() "
            "and not internal"
        ).fetchall()
        rows = sum(con.execute(f'select count(*) from "{s}"."{t}"').fetchone()[0] for s, t in tables)
        return len(tables), rows
    finally:
        con.close()


def test_dbt_writes_with_the_settings_of_the_loads():
    # The two writers of the file must agree: a load in the old format followed by a build that reuses
    # metadata would give back a file the old readers refuse.
    profile = yaml.safe_load((DBT_PROJECT_DIR / "profiles.yml").read_text())
    assert profile["srlens"]["outputs"]["main"]["config_options"] == {
        **WRITE_CONFIG,
        "access_mode": "{{ env_var('SRLENS_DUCKDB_ACCESS_MODE', 'automatic') }}",
    }
    assert WRITE_CONFIG["experimental_metadata_reuse"] is False
    assert min(PROMISED, key=version_key) == OLDEST_READER  # what `srlens status` says is what is tested


@pytest.mark.slow
def test_every_promised_duckdb_opens_every_build(tmp_path):
    warehouse = tmp_path / "srlens.duckdb"
    failures, seen = [], []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for number, kind in build_series(warehouse, BUILDS):
            expected = contents(warehouse)
            for result in pool.map(lambda v: open_as_bi_tool(v, warehouse), PROMISED):
                if "error" in result:
                    failures.append(f"build {number} ({kind}), DuckDB {result['version']}: {result['error']}")
                else:
                    # every table, every row, and the marts of the demo's 16 runs
                    assert (result["tables"], result["rows"], result["runs"]) == (*expected, 16), result
            seen.append(kind)
    assert failures == []
    assert len(seen) == BUILDS and seen.count("full") == BUILDS // 3 and seen.count("incremental") == BUILDS * 2 // 3


@pytest.mark.slow
def test_the_warehouse_that_old_readers_refused(tmp_path):
    """The demo warehouse after three builds by an srlens that let DuckDB reuse metadata
    (fixtures/old_duckdb_readers/): one of its metadata blocks points on to block 76, which holds none.
    DuckDB 1.4.2 and later open it; 1.1.0 to 1.4.1 must refuse it, which also shows that the test above
    would see such a file."""
    require_shared()
    warehouse = tmp_path / "demo_after_builds.duckdb"
    with gzip.open(SHARED / "fixtures" / "old_duckdb_readers" / "demo_after_builds.duckdb.gz") as src:
        with open(warehouse, "wb") as dst:
            shutil.copyfileobj(src, dst)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(PROMISED, pool.map(lambda v: open_as_bi_tool(v, warehouse), PROMISED)))
    for version, result in results.items():
        if version_key(version) >= (1, 4, 2):
            assert result.get("runs") == 16, result
        else:
            assert result.get("error", "").startswith(
                "INTERNAL Error: Failed to load metadata pointer (id 76, idx 1,"
            ), result
    assert "  readers: DuckDB 1.4.2 and later; 1.1.0 to 1.4.1 may refuse it" in status(warehouse)
    # one build of this srlens rewrites all the metadata: then every promised release opens it
    build(warehouse, echo=False, processor="aligned")
    assert f"  readers: DuckDB {OLDEST_READER} and later (" in status(warehouse)
    with ThreadPoolExecutor(max_workers=2) as pool:
        rebuilt = list(pool.map(lambda v: open_as_bi_tool(v, warehouse), PROMISED))
    assert [r.get("runs") for r in rebuilt] == [16] * len(PROMISED), rebuilt


def test_status_names_the_storage_tag_and_the_oldest_reader(built_warehouse, tmp_path):
    text = status(built_warehouse)
    assert "DuckDB storage format v1.0.0+)\n  readers: DuckDB 1.1.0 and later (the oldest release" in text
    # a file in DuckDB 2.0's own format (one an earlier srlens created): only 2.0 opens it
    latest = tmp_path / "latest.duckdb"
    duckdb.connect(str(latest)).close()
    text = status(latest)
    assert "DuckDB storage format v2.0.0+)\n  readers: DuckDB 2.0.0 and later only (srlens writes v1.0.0+" in text
    # the section that says how to copy it into the old format
    assert "docs/querying.md, 'Which DuckDB versions can open it', says how to copy the file" in text
