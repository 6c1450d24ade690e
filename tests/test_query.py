"""`srlens query`: read-only enforcement, output formats, and every analyst recipe in sql/examples."""

import io
import json

import pandas as pd
import pytest

from srlens.cli import main
from srlens.query import QueryRefused, check_read_only, run_query
from tests.conftest import REPO

EXAMPLES = sorted((REPO / "sql" / "examples").glob("*.sql"))


@pytest.mark.parametrize("sql", [
    "drop table corpus_stats",
    "insert into corpus_stats select * from corpus_stats",
    "update corpus_stats set sentences = 0",
    "delete from raw.sentences",
    "create table x as select 1",
    "attach 'other.duckdb' as other",
    "copy corpus_stats to 'out.csv'",
    "select 1; drop table corpus_stats",
    "pragma enable_profiling",
    "set threads = 1",
])
def test_anything_but_one_read_only_query_is_refused(sql):
    with pytest.raises(QueryRefused):
        check_read_only(sql)


def test_select_and_cte_are_accepted():
    check_read_only("with t as (select 1 as a) select a from t")
    check_read_only("select corpus from corpus_stats union all select corpus from corpus_stats")


def test_csv_and_json_round_trip_the_values(built_warehouse):
    sql = "select corpus, sentences, mdd_mean from corpus_stats order by corpus"
    as_csv = pd.read_csv(io.StringIO(run_query(built_warehouse, sql, "csv")))
    as_json = json.loads(run_query(built_warehouse, sql, "json"))
    assert list(as_csv["corpus"]) == [r["corpus"] for r in as_json]
    figure1 = next(r for r in as_json if r["corpus"] == "figure1")
    assert (figure1["sentences"], figure1["mdd_mean"]) == (1, 2.0)
    assert as_csv.set_index("corpus").loc["en_ewt_test", "sentences"] == 2077


def test_cli_query_prints_a_table(built_warehouse, capsys):
    assert main(["--warehouse", str(built_warehouse), "query",
                 "select tree_depth, tree_length from sentence_complexity where corpus = 'figure1'"]) == 0
    out = capsys.readouterr().out.split()
    assert out == ["tree_depth", "tree_length", "3", "8"]


def test_cli_refusal_is_one_line(built_warehouse, capsys):
    assert main(["--warehouse", str(built_warehouse), "query", "drop table corpus_stats"]) == 2
    assert capsys.readouterr().err == "srlens: error: only read-only queries are allowed (this is a DROP statement)\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_query_runs_and_returns_rows(built_warehouse, path):
    frame = pd.read_csv(io.StringIO(run_query(built_warehouse, path.read_text(), "csv")))
    assert len(frame) > 0


def test_complex_sentence_recipe_is_ordered_by_depth(built_warehouse):
    sql = (REPO / "sql" / "examples" / "most_complex_sentences.sql").read_text()
    frame = pd.read_csv(io.StringIO(run_query(built_warehouse, sql, "csv")))
    en = frame[frame.corpus == "en_ewt_test"]
    assert len(en) == 10 and list(en.tree_depth) == sorted(en.tree_depth, reverse=True)
