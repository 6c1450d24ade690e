"""Equal means equal: a build gives exactly the marts of the committed snapshot (tests/support/snapshot.py)."""

import pytest

from tests.conftest import EN_EWT_TEST, require_shared
from tests.support.snapshot import SNAPSHOT_DIR, build_reference_warehouse, differences

pytestmark = pytest.mark.slow  # a build of en_ewt test and the demo of its own


@pytest.fixture(scope="module")
def reference_build(tmp_path_factory):
    require_shared()
    warehouse = tmp_path_factory.mktemp("snapshot") / "srlens.duckdb"
    build_reference_warehouse(warehouse, EN_EWT_TEST)
    return warehouse


def test_every_mart_equals_the_committed_snapshot(reference_build):
    assert sorted(SNAPSHOT_DIR.glob("*.csv.gz")), "no snapshot committed (python -m tests.support.snapshot --write)"
    found = differences(reference_build)
    assert not found, "the marts moved from the snapshot:\n" + "\n".join(found[:40])


def test_the_comparison_sees_a_moved_figure(reference_build, tmp_path):
    """The check itself can fail: one changed DEA of one sentence is reported."""
    import duckdb

    moved = tmp_path / "moved.duckdb"
    moved.write_bytes(reference_build.read_bytes())
    con = duckdb.connect(str(moved))
    con.execute("update sentence_scores set dea = dea + 1e-6 where rowid = (select min(rowid) from sentence_scores)")
    con.close()
    found = differences(moved)
    assert len(found) == 1 and found[0].startswith("sentence_scores row"), found
