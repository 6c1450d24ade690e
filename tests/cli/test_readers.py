"""Reading the warehouse without srlens: the storage format, SQLAlchemy (duckdb-engine), Parquet export."""

import math
import shutil

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from sqlalchemy import create_engine, text

from srlens.cli import main
from srlens.loaders.load import load_treebank
from tests.conftest import FIGURE1, require_shared


def storage_version(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("select tags from duckdb_databases() where database_name = current_database()").fetchone()[
            0
        ]["storage_version"]
    finally:
        con.close()


def test_new_and_built_warehouses_keep_the_old_storage_format(built_warehouse, tmp_path):
    # DuckDB's default would tag the file v2.0.0+, which only DuckDB 2.0 opens. 'v1.0.0+' is the
    # tag of the format loaders/store.py asks for (STORAGE_VERSION v1.1.0 shares it with v1.0.0).
    require_shared()
    fresh = tmp_path / "w.duckdb"
    load_treebank(fresh, FIGURE1, "figure1")
    assert storage_version(fresh) == "v1.0.0+"
    assert storage_version(built_warehouse) == "v1.0.0+"  # still so after the build's copy and dbt


def test_sqlalchemy_through_duckdb_engine_reads_the_marts(built_warehouse, warehouse_con, tmp_path):
    # A copy: in one process DuckDB refuses a second connection to a file with another configuration
    # (duckdb-engine sets its user agent), and warehouse_con has the original open.
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(built_warehouse, copy)
    engine = create_engine(f"duckdb:///{copy}", connect_args={"read_only": True})
    try:
        frame = pd.read_sql("select corpus, sentences, mdd_mean from corpus_stats order by corpus", engine)
        with engine.connect() as con:
            runs = con.execute(
                text("select count(*) from submission_scores where corpus = :corpus"), {"corpus": "en_ewt_demo"}
            ).scalar()
            with pytest.raises(Exception, match="read-only"):
                con.execute(text("delete from corpus_stats"))
    finally:
        engine.dispose()
    expected = warehouse_con.execute("select corpus, sentences, mdd_mean from corpus_stats order by corpus").df()
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False)
    assert frame.set_index("corpus").loc["figure1", "mdd_mean"] == 2.0  # SPEC's Figure 1
    assert (
        runs
        == warehouse_con.execute("select count(*) from raw.submissions where corpus = 'en_ewt_demo'").fetchone()[0]
        > 0
    )


def normalized_rows(frame):
    """Rows as comparable tuples: arrays as tuples, NaN and NaT as None, numbers as floats (DuckDB gives HUGEINT
    counts to pandas as floats; the export writes them as BIGINT)."""

    def cell(value):
        if hasattr(value, "tolist"):
            value = value.tolist()
        if isinstance(value, list):
            return tuple(cell(v) for v in value)
        if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value

    return sorted((tuple(cell(v) for v in row) for row in frame.itertuples(index=False)), key=repr)


def test_export_parquet_writes_every_mart_with_the_same_rows(built_warehouse, warehouse_con, tmp_path, capsys):
    out = tmp_path / "exports"
    assert main(["--warehouse", str(built_warehouse), "export-parquet", str(out)]) == 0
    marts = [
        r[0]
        for r in warehouse_con.execute("""
        select table_name from duckdb_tables() where database_name = current_database() and schema_name = 'main'
        order by 1""").fetchall()
    ]
    assert capsys.readouterr().out == f"wrote {len(marts)} Parquet files to {out}\n"
    assert sorted(p.stem for p in out.glob("*.parquet")) == marts
    for spec_mart in (
        "corpus_stats",
        "sentence_scores",
        "dea_by_relation",
        "suspicious_subtrees_summary",
        "lambre_rules",
        "correlation_summary",
        "entropy_dea_correlation",
    ):
        assert spec_mart in marts
    for mart in marts:
        exported = pq.read_table(out / f"{mart}.parquet").to_pandas()  # pyarrow, not DuckDB, reads it back
        original = warehouse_con.execute(f"select * from main.{mart}").df()
        assert list(exported.columns) == list(original.columns), mart
        assert len(exported) == len(original), mart
        assert normalized_rows(exported) == normalized_rows(original), mart
    # one row per run and reference sentence, as many as the loaded outputs
    assert (
        pq.read_metadata(out / "sentence_scores.parquet").num_rows
        == warehouse_con.execute("select count(*) from raw.outputs").fetchone()[0]
        > 0
    )
    assert str(pq.read_schema(out / "corpus_stats.parquet").field("words").type) == "int64"  # not DOUBLE
