"""`srlens query`: read-only enforcement, output formats, and every analyst recipe in sql/examples."""

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time

import duckdb
import pandas as pd
import pytest

from srlens.cli import main
from srlens.query import QueryRefused, check_read_only, run_query
from tests.conftest import REPO, default_sigint

# runs for hours unless interrupted
LONG_QUERY = "select count(*) from range(100000000) a, range(100000000) b where a.range + b.range = -1"

EXAMPLES = sorted((REPO / "sql" / "examples").glob("*.sql"))


@pytest.mark.parametrize(
    "sql",
    [
        "drop table corpus_stats",
        "select 1 `--` ; copy (select 42 as x) to 'out.csv'",
        "explain analyze copy corpus_stats to 'out.csv'",
        "insert into corpus_stats select * from corpus_stats",
        "update corpus_stats set sentences = 0",
        "delete from raw.sentences",
        "create table x as select 1",
        "attach 'other.duckdb' as other",
        "copy corpus_stats to 'out.csv'",
        "select 1; drop table corpus_stats",
        "pragma enable_profiling",
        "set threads = 1",
    ],
)
def test_anything_but_one_read_only_query_is_refused(sql):
    with pytest.raises(QueryRefused):
        check_read_only(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "with t as (select 1 as a) select a from t",
        "select corpus from corpus_stats union all select corpus from corpus_stats",
        "show tables",
        "describe corpus_stats",
        "summarize corpus_stats",
        "explain select 1",
        "explain analyze select 1",
        "pivot corpus_stats on corpus using sum(sentences)",
        "from corpus_stats",
        "/* a comment */ select 1; -- and another",
    ],
)
def test_reads_are_accepted(sql):
    check_read_only(sql)


def test_csv_and_json_round_trip_the_values(built_warehouse):
    sql = "select corpus, sentences, mdd_mean from corpus_stats order by corpus"
    as_csv = pd.read_csv(io.StringIO(run_query(built_warehouse, sql, "csv")))
    as_json = json.loads(run_query(built_warehouse, sql, "json"))
    assert list(as_csv["corpus"]) == [r["corpus"] for r in as_json]
    figure1 = next(r for r in as_json if r["corpus"] == "figure1")
    assert (figure1["sentences"], figure1["mdd_mean"]) == (1, 2.0)
    assert as_csv.set_index("corpus").loc["en_ewt_test", "sentences"] == 2077


def test_cli_query_prints_a_table(built_warehouse, capsys):
    assert (
        main(
            [
                "--warehouse",
                str(built_warehouse),
                "query",
                "select tree_depth, tree_length from sentence_complexity where corpus = 'figure1'",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out.split()
    assert out == ["tree_depth", "tree_length", "3", "8"]


def test_cli_refusal_is_one_line(built_warehouse, capsys):
    assert main(["--warehouse", str(built_warehouse), "query", "drop table corpus_stats"]) == 2
    assert capsys.readouterr().err == (
        "srlens: error: only read-only queries are allowed, not DROP (a query starts "
        "with SELECT, WITH, FROM, SHOW, DESCRIBE, SUMMARIZE, PIVOT, UNPIVOT, VALUES, "
        "TABLE or EXPLAIN)\n"
    )


# --- row limits --------------------------------------------------------------------------------


def test_table_shows_1000_rows_and_says_how_many_were_left_out(built_warehouse, capsys):
    assert main(["--warehouse", str(built_warehouse), "query", "select range as n from range(25000)"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].strip() == "n" and [int(x) for x in lines[1:-1]] == list(range(1000))
    assert lines[-1] == "(24000 more rows not shown: --limit N shows more, --format csv or json shows all)"


def test_table_limit_option(built_warehouse, capsys):
    assert main(["--warehouse", str(built_warehouse), "query", "select range as n from range(10)", "--limit", "3"]) == 0
    assert [line.strip() for line in capsys.readouterr().out.split("\n")[1:]] == [
        "0",
        "1",
        "2",
        "(7 more rows not shown: --limit N shows more, --format csv or json shows all)",
        "",
    ]


def test_table_within_the_limit_has_no_note(built_warehouse, capsys):
    assert main(["--warehouse", str(built_warehouse), "query", "select range as n from range(1000)"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].strip() == "999"


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_have_every_row_unless_limited(built_warehouse, fmt):
    sql = "select range as n, 'x' || range as s from range(50000)"  # several DuckDB chunks
    text = run_query(built_warehouse, sql, fmt)
    rows = pd.read_csv(io.StringIO(text)) if fmt == "csv" else pd.DataFrame(json.loads(text))
    assert list(rows.n) == list(range(50000)) and list(rows.s[:2]) == ["x0", "x1"]
    limited = run_query(built_warehouse, sql, fmt, limit=5)
    rows = pd.read_csv(io.StringIO(limited)) if fmt == "csv" else pd.DataFrame(json.loads(limited))
    assert list(rows.n) == [0, 1, 2, 3, 4]


def test_csv_limit_notice_goes_to_stderr(built_warehouse, capsys):
    assert (
        main(
            [
                "--warehouse",
                str(built_warehouse),
                "query",
                "select range as n from range(10)",
                "--format",
                "csv",
                "--limit",
                "4",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    assert out == "n\n0\n1\n2\n3\n" and err == "srlens: 6 more rows left out (--limit 4)\n"


@pytest.mark.parametrize("fmt, expected", [("table", "(no rows; columns: n)\n"), ("csv", "n\n"), ("json", "[]\n")])
def test_empty_result(built_warehouse, fmt, expected):
    assert run_query(built_warehouse, "select 1 as n where false", fmt) == expected


@pytest.mark.parametrize("limit", ["0", "-3", "many"])
def test_bad_limit_is_a_usage_error(built_warehouse, limit, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--warehouse", str(built_warehouse), "query", "select 1", "--limit", limit])
    assert stop.value.code == 2
    assert "expected a whole number of rows, 1 or more" in capsys.readouterr().err


def test_ctrl_c_stops_a_long_query_in_one_line(built_warehouse):
    # A real SIGINT to a real process; the query would run for hours. The child says when it has
    # imported srlens, so the signal arrives while the query runs, not during start-up.
    code = (
        "import sys; from srlens.cli import main; print('ready', file=sys.stderr, flush=True); "
        "sys.exit(main(sys.argv[1:]))"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, "--warehouse", str(built_warehouse), "query", LONG_QUERY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        assert child.stderr.readline() == "ready\n"
        time.sleep(1)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert (child.returncode, out, err) == (130, "", "srlens: interrupted\n")


def test_ctrl_c_before_the_query_starts_still_stops_it():
    # DuckDB forgets an interrupt that comes before its query starts; the worker may still be
    # importing pandas then. The watchdog stops the query if Ctrl-C was lost, and fails the test.
    import duckdb

    from srlens.sandbox import interruptible

    con = duckdb.connect()
    lost = []

    def work():
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while no query runs yet
        time.sleep(0.5)  # the main thread's handler runs meanwhile
        return con.execute(LONG_QUERY).fetchall()

    def watchdog():
        lost.append(True)
        con.interrupt()

    timer = threading.Timer(30, watchdog)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            interruptible(con, work)
    finally:
        timer.cancel()
    assert not lost


def test_examples_and_query_share_the_sandbox(built_warehouse):
    # The recipe behind `srlens examples` passes the same statement check as any user query.
    from srlens.mining import examples_query

    assert check_read_only(examples_query()).type.name == "SELECT"


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
    line = next(
        line
        for line in sql.splitlines()
        if line.strip().endswith(f" as {name},") or line.strip().endswith(f" as {name}")
    )
    return line.strip().split(" as ")[0].strip("'")


def test_worst_relations_recipe(warehouse_con):
    sql = recipe("worst_relations_of_a_system")
    system, min_edges = recipe_param(sql, "submission_id"), int(recipe_param(sql, "min_edges"))
    got = warehouse_con.execute(sql).df()

    d = warehouse_con.execute("select * from dea_by_relation").df()
    mine = d[(d.submission_id == system) & (d.edges >= min_edges)]
    mine = mine.assign(dea=mine.matched / mine.edges).sort_values(
        ["dea", "edges", "relation"], ascending=[True, False, True]
    )
    others = (
        d[(d.corpus == mine.corpus.iloc[0]) & (d.submission_id != system)]
        .groupby("relation")[["matched", "edges"]]
        .sum()
    )
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


def test_a_table_escapes_control_characters_from_the_data_and_csv_keeps_them(built_warehouse):
    sql = "select chr(27) || '[2Jx' || chr(7) as text_cell"
    table = run_query(built_warehouse, sql, "table")
    assert "\x1b" not in table and "\x07" not in table and "\\x1b[2Jx\\x07" in table
    assert run_query(built_warehouse, sql, "csv") == "text_cell\n\x1b[2Jx\x07\n"


# D8: Ctrl-C inside a DuckDB query ended as "srlens: error: RuntimeError: Query interrupted" (exit 1).


def test_a_query_stopped_by_ctrl_c_is_an_interruption():
    from srlens.loaders.store import interrupted

    assert interrupted(KeyboardInterrupt()) and interrupted(RuntimeError("Query interrupted"))
    assert interrupted(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    assert not interrupted(RuntimeError("another error")) and not interrupted(duckdb.IOException("x"))
