"""`srlens build`: a failed build changes nothing; readers of the old file are not disturbed."""

import shutil

import duckdb
import pytest

from srlens.loaders.load import load_treebank
from srlens.build import DBT_PROJECT_DIR, BuildError, build
from tests.conftest import EN_EWT_TEST, FIGURE1, require_shared


@pytest.fixture
def small_warehouse(tmp_path):
    require_shared()
    wh = tmp_path / "wh.duckdb"
    load_treebank(wh, FIGURE1, "figure1")
    build(wh, echo=False)
    return wh


def test_failed_build_leaves_the_previous_warehouse(small_warehouse, tmp_path, monkeypatch):
    broken = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT_DIR, broken, ignore=shutil.ignore_patterns("target", "logs"))
    (broken / "models" / "marts" / "broken_mart.sql").write_text("select no_such_column from {{ ref('corpus_stats') }}")
    load_treebank(small_warehouse, EN_EWT_TEST, "en_ewt_test")  # new raw data the failed build must not publish
    monkeypatch.setenv("SRLENS_DBT_PROJECT", str(broken))
    with pytest.raises(BuildError, match="warehouse is unchanged"):
        build(small_warehouse, echo=False)
    con = duckdb.connect(str(small_warehouse), read_only=True)
    assert con.execute("select corpus from corpus_stats").fetchall() == [("figure1",)]
    assert con.execute("select count(*) from raw.sentences").fetchone() == (2078,)
    con.close()
    assert not list(tmp_path.glob(".*.building*"))


def test_reader_holding_the_file_open_keeps_a_consistent_view(small_warehouse):
    load_treebank(small_warehouse, EN_EWT_TEST, "en_ewt_test")
    reader = duckdb.connect(str(small_warehouse), read_only=True)
    assert reader.execute("select count(*) from sentence_complexity").fetchone() == (1,)
    build(small_warehouse, echo=False)  # dbt writes a copy in another process, then it is renamed in
    # The open reader still sees the complete old warehouse...
    assert reader.execute("select count(*) from sentence_complexity").fetchone() == (1,)
    assert reader.execute("select tree_depth from sentence_complexity").fetchone() == (3,)
    reader.close()
    # ...and a new reader sees the new one, intact.
    fresh = duckdb.connect(str(small_warehouse), read_only=True)
    assert fresh.execute("select count(*) from sentence_complexity").fetchone() == (2078,)
    assert fresh.execute("select tree_depth from sentence_complexity where corpus = 'figure1'").fetchone() == (3,)
    fresh.close()
