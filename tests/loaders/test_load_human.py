"""load-human, sentence and system level: what was skipped, guessed or read silently is refused in one
line that names the file, and changes nothing."""

import duckdb
import pytest

from tests.conftest import table_snapshot
from tests.support.commands import RUNS, cli

# D2, D3: a system-level file with a column it cannot have, or a column named twice, was read anyway
# (unknown columns ignored, the first of two taken).


@pytest.fixture
def two_runs(demo_wh, capsys):
    """demo_wh with the runs demo/en_ewt_demo/perturb/swaps and .../drops; returns (warehouse, sent_id of
    sentence 1)."""
    for run in ("swaps", "drops"):
        assert cli(capsys, "--warehouse", demo_wh, "load-outputs", RUNS / f"{run}.sr.txt", "--corpus", "en_ewt_demo",
                   "--team", "perturb", "--run", run, "--campaign", "demo")[0] == 0  # fmt: skip
    con = duckdb.connect(str(demo_wh), read_only=True)
    sent_id = con.execute("select sent_id from raw.sentences where corpus = 'en_ewt_demo' and sent_idx = 1").fetchone()
    con.close()
    return demo_wh, sent_id[0]


def test_a_sentence_level_file_is_refused_as_system_level(two_runs, tmp_path, capsys):
    demo_wh, sent_id = two_runs
    path = tmp_path / "sentence_level.csv"
    path.write_text(
        "annotator,campaign,corpus,team,run,sent_id,criterion,score\n"
        f"ann1,demo,en_ewt_demo,perturb,swaps,{sent_id},fluency,1\n"
        f"ann1,demo,en_ewt_demo,perturb,drops,{sent_id},fluency,5\n",
        encoding="utf-8",
    )
    before = table_snapshot(demo_wh)
    code, out, err = cli(capsys, "--warehouse", demo_wh, "load-human", path, "--level", "system")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"srlens: error: {path}:1: the header has the column(s) 'annotator', 'sent_id', unknown here")
    assert table_snapshot(demo_wh) == before
    # the same file is what load-human (sentence level) reads
    assert cli(capsys, "--warehouse", demo_wh, "load-human", path)[:2] == (0, f"loaded 2 human judgments from {path}\n")


@pytest.mark.parametrize(
    "header, row, column",
    [
        ("campaign,corpus,team,run,criterion,score,score", "demo,en_ewt_demo,perturb,swaps,da,5,7", "'score'"),
        ("campaign,corpus,team,run,criterion,score,Run", "demo,en_ewt_demo,perturb,swaps,da,5,drops", "'run'"),
    ],
)
def test_a_system_level_column_named_twice_is_refused(two_runs, tmp_path, capsys, header, row, column):
    demo_wh, _ = two_runs
    path = tmp_path / "dup.csv"
    path.write_text(f"{header}\n{row}\n", encoding="utf-8")
    before = table_snapshot(demo_wh)
    code, _, err = cli(capsys, "--warehouse", demo_wh, "load-human", path, "--level", "system")
    assert code == 2 and err == f"srlens: error: {path}:1: the header names {column} more than once\n"
    assert table_snapshot(demo_wh) == before


# D10: Python's number syntax beyond ASCII decimals (1_000, fullwidth digits) was accepted.


@pytest.mark.parametrize("score", ["1_000", "１２", "٣", "0x10", "inf", "nan", "1e999", "", "5,0"])
def test_a_score_is_a_plain_decimal_number(two_runs, tmp_path, capsys, score):
    demo_wh, sent_id = two_runs
    system = tmp_path / "system.csv"
    system.write_text(f'campaign,corpus,team,run,criterion,score\ndemo,en_ewt_demo,perturb,swaps,da,"{score}"\n')
    sentence = tmp_path / "sentence.csv"
    sentence.write_text(
        f'annotator,campaign,corpus,team,run,sent_id,criterion,score\na,demo,en_ewt_demo,perturb,swaps,{sent_id},f,"{score}"\n'
    )
    before = table_snapshot(demo_wh)
    for argv in ([system, "--level", "system"], [sentence]):
        code, _, err = cli(capsys, "--warehouse", demo_wh, "load-human", *argv)
        assert code == 2 and err.count("\n") == 1
        assert err.startswith(f"srlens: error: {argv[0]}:2: 1 problem(s): line 2: ")
        assert ("empty score" if score == "" else f"score {score!r} is not a number") in err
    assert table_snapshot(demo_wh) == before


def test_plain_decimal_scores_load(two_runs, tmp_path, capsys):
    demo_wh, _ = two_runs
    system = tmp_path / "system.csv"
    rows = [("swaps", "da", "-1.5"), ("drops", "da", "+.5"), ("swaps", "mqm", "2e1"), ("drops", "mqm", "3.")]
    system.write_text("campaign,corpus,team,run,criterion,score\n" + "".join(
        f"demo,en_ewt_demo,perturb,{run},{criterion},{score}\n" for run, criterion, score in rows
    ))  # fmt: skip
    assert cli(capsys, "--warehouse", demo_wh, "load-human", system, "--level", "system")[0] == 0
    con = duckdb.connect(str(demo_wh), read_only=True)
    assert sorted(con.execute("select score from raw.system_human_scores").fetchall()) == [
        (-1.5,),
        (0.5,),
        (3.0,),
        (20.0,),
    ]
    con.close()
