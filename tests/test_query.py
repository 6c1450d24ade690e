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


# --- analyst recipes: each checked against the same answer computed in pandas from the marts ---

def recipe(name):
    return (REPO / "sql" / "examples" / f"{name}.sql").read_text()


def recipe_param(sql, name):
    """The literal a recipe sets for a parameter in its params CTE (`'value' as name`)."""
    line = next(line for line in sql.splitlines() if line.strip().endswith(f" as {name},")
                or line.strip().endswith(f" as {name}"))
    return line.strip().split(" as ")[0].strip("'")


def test_worst_relations_recipe(warehouse_con):
    sql = recipe("worst_relations_of_a_system")
    system, min_edges = recipe_param(sql, "submission_id"), int(recipe_param(sql, "min_edges"))
    got = warehouse_con.execute(sql).df()

    d = warehouse_con.execute("select * from dea_by_relation").df()
    mine = d[(d.submission_id == system) & (d.edges >= min_edges)]
    mine = mine.assign(dea=mine.matched / mine.edges).sort_values(
        ["dea", "edges", "relation"], ascending=[True, False, True])
    others = d[(d.corpus == mine.corpus.iloc[0]) & (d.submission_id != system)].groupby("relation")[
        ["matched", "edges"]].sum()
    assert len(got) > 5
    assert list(got.relation) == list(mine.relation)
    assert list(got.dea) == [round(x, 3) for x in mine.dea]
    assert list(got.others_dea) == [round(others.matched[r] / others.edges[r], 3) for r in mine.relation]


def test_two_systems_recipe_finds_the_largest_gaps(warehouse_con):
    sql = recipe("where_two_systems_differ")
    a, b = recipe_param(sql, "submission_a"), recipe_param(sql, "submission_b")
    top_n = int(recipe_param(sql, "top_n"))
    got = warehouse_con.execute(sql).df()

    s = warehouse_con.execute("select submission_id, sent_idx, sent_id, bleu from sentence_scores").df()
    pair = s[s.submission_id == a].merge(s[s.submission_id == b], on=["sent_idx", "sent_id"], suffixes=("_a", "_b"))
    pair = pair.dropna(subset=["bleu_a", "bleu_b"]).assign(diff=lambda f: f.bleu_a - f.bleu_b)
    pair = pair.assign(gap=pair["diff"].abs()).sort_values(["gap", "sent_idx"], ascending=[False, True]).head(top_n)
    assert len(got) == top_n
    assert list(got.sent_id) == list(pair.sent_id)
    assert list(got.bleu_diff) == [round(x, 3) for x in pair["diff"]]
    outputs = warehouse_con.execute("select sent_id, text from raw.outputs where submission_id = ?", [b]).df()
    assert got.output_b.iloc[0] == outputs.set_index("sent_id").text[got.sent_id.iloc[0]]


def test_only_one_system_fails_recipe(warehouse_con):
    sql = recipe("sentences_only_one_system_fails")
    system, fail_below = recipe_param(sql, "submission_id"), float(recipe_param(sql, "fail_below"))
    ignored = [x.strip(" '") for x in recipe_param(sql, "ignore_runs").strip("[]").split(",")]
    got = warehouse_con.execute(sql).df()

    s = warehouse_con.execute("select submission_id, corpus, sent_id, bleu from sentence_scores").df()
    s = s[(s.corpus == s[s.submission_id == system].corpus.iloc[0]) & ~s.submission_id.isin(ignored)]
    wide = s.pivot(index="sent_id", columns="submission_id", values="bleu")
    others = wide.drop(columns=system)
    expected = wide[(wide[system] < fail_below) & (others.min(axis=1) >= fail_below)]  # min skips missing runs
    expected = expected.assign(others_min=others.min(axis=1)).reset_index()
    assert len(got) > 0
    assert sorted(got.sent_id) == sorted(expected.sent_id)
    assert dict(zip(got.sent_id, got.bleu)) == {k: round(v, 3) for k, v in zip(expected.sent_id, expected[system])}
    assert (got.others_min_bleu >= fail_below).all() and (got.bleu < fail_below).all()
    assert list(got.bleu) == sorted(got.bleu)
