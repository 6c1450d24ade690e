"""The attacks on the commands of session 23 (load-campaign, load-human --level system, campaign,
suggest-training, docs), each replayed on real files and a real warehouse: what was skipped, guessed
or overwritten silently is now refused in one line that names the file, and changes nothing."""

import hashlib
import os
import shutil
import signal
import time

import duckdb
import pytest

from srlens.cli import main
from srlens.loaders.load import load_treebank
from tests.attack.test_crashes import Running, process_state
from tests.conftest import REPO, table_snapshot

DEMO = REPO / "demo" / "data"
RUNS = DEMO / "outputs" / "en_ewt_demo"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """A warehouse with the demo's English treebank (en_ewt_demo) and nothing else."""
    warehouse = tmp_path_factory.mktemp("loaded") / "w.duckdb"
    load_treebank(warehouse, DEMO / "treebanks" / "en_ewt_demo.conllu", "en_ewt_demo")
    return warehouse


@pytest.fixture
def wh(loaded, tmp_path):
    """A fresh copy of `loaded`, for a test that may change it."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(loaded, copy)
    return copy


def cli(capsys, *argv):
    """(exit code, stdout, stderr) of srlens with these arguments."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def runs_of(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return sorted(r[0] for r in con.execute("select submission_id from raw.submissions").fetchall())
    finally:
        con.close()


# D1: the folder walk skipped linked folders, broken links, FIFOs and folders at file depth, and exited 0.


def campaign_folder(root):
    """A campaign folder with one good run, ims/1."""
    (root / "ims" / "1").mkdir(parents=True)
    shutil.copy(RUNS / "swaps.sr.txt", root / "ims" / "1" / "en_ewt_demo.sr")
    return root


def add_linked_team(root):
    outside = root.parent / "ext" / "1"
    outside.mkdir(parents=True)
    shutil.copy(RUNS / "drops.sr.txt", outside / "en_ewt_demo.sr")
    (root / "symteam").symlink_to(outside.parent)
    return "symteam", "a symbolic link to a folder: linked folders are not followed"


def add_linked_run(root):
    outside = root.parent / "runfolder"
    outside.mkdir()
    shutil.copy(RUNS / "drops.sr.txt", outside / "en_ewt_demo.sr")
    (root / "ims" / "2").symlink_to(outside)
    return "ims/2", "a symbolic link to a folder: linked folders are not followed"


def add_broken_link(root):
    (root / "ims" / "2").mkdir()
    (root / "ims" / "2" / "en_ewt_demo.sr").symlink_to(root.parent / "nonexistent")
    return "ims/2/en_ewt_demo.sr", "a broken symbolic link"


def add_fifo(root):
    (root / "ims" / "2").mkdir()
    os.mkfifo(root / "ims" / "2" / "en_ewt_demo.sr")
    return "ims/2/en_ewt_demo.sr", "not a regular file (a FIFO, socket or device)"


def add_folder_at_file_depth(root):
    (root / "ims" / "3" / "en_ewt_demo").mkdir(parents=True)
    return "ims/3/en_ewt_demo", "a folder where a run file should be"


def add_empty_run_folder(root):
    (root / "ims" / "4").mkdir()
    return "ims/4", "an empty run folder"


@pytest.mark.parametrize(
    "add",
    [add_linked_team, add_linked_run, add_broken_link, add_fifo, add_folder_at_file_depth, add_empty_run_folder],
)
def test_the_campaign_folder_walk_names_what_it_cannot_load_and_loads_nothing(wh, tmp_path, capsys, add):
    root = campaign_folder(tmp_path / "camp")
    where, what = add(root)
    before = table_snapshot(wh)
    code, out, err = cli(capsys, "--warehouse", wh, "load-campaign", root, "--campaign", "sr19")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"srlens: error: {root}: 1 problem(s), nothing loaded: {where}: {what}")
    assert table_snapshot(wh) == before


def test_a_link_to_a_run_file_is_read_as_that_file(wh, tmp_path, capsys):
    root = campaign_folder(tmp_path / "camp")
    (root / "ims" / "2").mkdir()
    (root / "ims" / "2" / "en_ewt_demo.sr").symlink_to(RUNS / "drops.sr.txt")
    code, _, err = cli(capsys, "--warehouse", wh, "load-campaign", root, "--campaign", "sr19")
    assert (code, err) == (0, "")
    assert runs_of(wh) == ["sr19/en_ewt_demo/ims/1", "sr19/en_ewt_demo/ims/2"]


# D2, D3, D4: a system-level file or a manifest with a column it cannot have, or a column named twice,
# was read anyway (unknown columns ignored, the first of two taken).


@pytest.fixture
def two_runs(wh, capsys):
    """wh with the runs demo/en_ewt_demo/perturb/swaps and .../drops; returns (warehouse, sent_id of sentence 1)."""
    for run in ("swaps", "drops"):
        assert cli(capsys, "--warehouse", wh, "load-outputs", RUNS / f"{run}.sr.txt", "--corpus", "en_ewt_demo",
                   "--team", "perturb", "--run", run, "--campaign", "demo")[0] == 0  # fmt: skip
    con = duckdb.connect(str(wh), read_only=True)
    sent_id = con.execute("select sent_id from raw.sentences where corpus = 'en_ewt_demo' and sent_idx = 1").fetchone()
    con.close()
    return wh, sent_id[0]


def test_a_sentence_level_file_is_refused_as_system_level(two_runs, tmp_path, capsys):
    wh, sent_id = two_runs
    path = tmp_path / "sentence_level.csv"
    path.write_text(
        "annotator,campaign,corpus,team,run,sent_id,criterion,score\n"
        f"ann1,demo,en_ewt_demo,perturb,swaps,{sent_id},fluency,1\n"
        f"ann1,demo,en_ewt_demo,perturb,drops,{sent_id},fluency,5\n",
        encoding="utf-8",
    )
    before = table_snapshot(wh)
    code, out, err = cli(capsys, "--warehouse", wh, "load-human", path, "--level", "system")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"srlens: error: {path}:1: the header has the column(s) 'annotator', 'sent_id', unknown here")
    assert table_snapshot(wh) == before
    # the same file is what load-human (sentence level) reads
    assert cli(capsys, "--warehouse", wh, "load-human", path)[:2] == (0, f"loaded 2 human judgments from {path}\n")


@pytest.mark.parametrize(
    "header, row, column",
    [
        ("campaign,corpus,team,run,criterion,score,score", "demo,en_ewt_demo,perturb,swaps,da,5,7", "'score'"),
        ("campaign,corpus,team,run,criterion,score,Run", "demo,en_ewt_demo,perturb,swaps,da,5,drops", "'run'"),
    ],
)
def test_a_system_level_column_named_twice_is_refused(two_runs, tmp_path, capsys, header, row, column):
    wh, _ = two_runs
    path = tmp_path / "dup.csv"
    path.write_text(f"{header}\n{row}\n", encoding="utf-8")
    before = table_snapshot(wh)
    code, _, err = cli(capsys, "--warehouse", wh, "load-human", path, "--level", "system")
    assert code == 2 and err == f"srlens: error: {path}:1: the header names {column} more than once\n"
    assert table_snapshot(wh) == before


@pytest.mark.parametrize(
    "header, row, message",
    [
        ("file,file,corpus,team,run", "A.sr,B.sr,en_ewt_demo,ims,1", "1: the header names 'file' more than once"),
        ("file,corpus,team,run,camp", "A.sr,en_ewt_demo,ims,1,x", "1: the header has the column(s) 'camp', unknown"),
        ("file,corpus,team,run,", "A.sr,en_ewt_demo,ims,1,", "1: the header has the column(s) '', unknown"),
        (
            "file,corpus,team,run,campaign",
            "A.sr,en_ewt_demo,ims,1,sr18",
            "2: 1 problem(s), nothing loaded: line 2: campaign 'sr18' is not --campaign 'sr19'",
        ),
    ],
)
def test_a_manifest_column_that_is_unknown_twice_or_disagrees_is_refused(wh, tmp_path, capsys, header, row, message):
    shutil.copy(RUNS / "swaps.sr.txt", tmp_path / "A.sr")
    shutil.copy(RUNS / "drops.sr.txt", tmp_path / "B.sr")
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"{header}\n{row}\n", encoding="utf-8")
    before = table_snapshot(wh)
    code, out, err = cli(capsys, "--warehouse", wh, "load-campaign", manifest, "--campaign", "sr19")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"srlens: error: {manifest}:{message}")
    assert table_snapshot(wh) == before


def test_a_manifest_campaign_column_that_agrees_loads(wh, tmp_path, capsys):
    shutil.copy(RUNS / "swaps.sr.txt", tmp_path / "A.sr")
    shutil.copy(RUNS / "drops.sr.txt", tmp_path / "B.sr")
    manifest = tmp_path / "m.csv"
    manifest.write_text("file,corpus,team,run,campaign\nA.sr,en_ewt_demo,ims,1,sr19\nB.sr,en_ewt_demo,ims,2,\n")
    code, _, err = cli(capsys, "--warehouse", wh, "load-campaign", manifest, "--campaign", "sr19")
    assert (code, err) == (0, "")
    assert runs_of(wh) == ["sr19/en_ewt_demo/ims/1", "sr19/en_ewt_demo/ims/2"]


# D5: suggest-training --out the warehouse --force wrote CoNLL-U over the warehouse it read, and its
# temporary file had a fixed name, written through whatever link was planted there.


@pytest.mark.parametrize("name", ["same", "symlink", "hard link", "wal"])
def test_suggest_training_never_writes_over_the_warehouse(wh, tmp_path, capsys, name):
    out = {
        "same": lambda: wh,
        "symlink": lambda: (tmp_path / "link.conllu").symlink_to(wh) or tmp_path / "link.conllu",
        "hard link": lambda: os.link(wh, tmp_path / "hard.conllu") or tmp_path / "hard.conllu",
        "wal": lambda: tmp_path / "w.duckdb.wal",
    }[name]()
    before = wh.read_bytes()
    code, out_text, err = cli(
        capsys, "--warehouse", wh, "suggest-training", "--submission", "demo/en_ewt_demo/perturb/swaps",
        "--treebank", "en_ewt_demo", "--sentences", "5", "--out", out, "--force",
    )  # fmt: skip
    assert code == 2 and out_text == "" and err.count("\n") == 1
    assert f"--out {out}: is the warehouse {wh} (or another name of it); name another file" in err
    assert wh.read_bytes() == before


def test_suggest_training_writes_no_planted_temporary_file(tmp_path):
    from srlens.suggest import write_blocks

    victim = tmp_path / "victim.duckdb"
    victim.write_bytes(b"the warehouse")
    (tmp_path / ".z.conllu.partial").symlink_to(victim)
    write_blocks(tmp_path / "z.conllu", [(["# sent_id = 1"], ["1\ta\ta\tX\t_\t_\t0\troot\t_\t_"])])
    assert victim.read_bytes() == b"the warehouse"
    assert (tmp_path / "z.conllu").read_text() == "# sent_id = 1\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".z.conllu.partial", "victim.duckdb", "z.conllu"]


# D6: srlens docs OUT_DIR wrote OUT_DIR/index.html into any folder (a report's, '/') and through a link
# planted there (over the warehouse).


def docs_folder_with_linked_index(tmp_path, wh):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").symlink_to(wh)
    return tmp_path / "site", "holds files srlens did not write (no .srlens-docs marker)"


def marked_docs_folder_with_linked_index(tmp_path, wh):
    folder, _ = docs_folder_with_linked_index(tmp_path, wh)
    (folder / ".srlens-docs").write_text("")
    return folder, "index.html is a symbolic link, which srlens never writes through"


def report_folder(tmp_path, wh):
    (tmp_path / "rep").mkdir()
    for name in (".srlens-report", "index.html"):
        (tmp_path / "rep" / name).write_text("the report")
    return tmp_path / "rep", "holds files srlens did not write (no .srlens-docs marker)"


@pytest.mark.parametrize(
    "folder",
    [
        docs_folder_with_linked_index,
        marked_docs_folder_with_linked_index,
        report_folder,
        lambda tmp_path, wh: ("/", "is the root folder"),
        lambda tmp_path, wh: (tmp_path, f"holds the warehouse {wh}"),
        lambda tmp_path, wh: (wh, "is a file; name a folder"),
    ],
)
def test_docs_write_only_into_their_own_folder(wh, tmp_path, capsys, folder):
    out, message = folder(tmp_path, wh)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code, _, err = cli(capsys, "--warehouse", wh, "docs", out)
    assert code == 2 and err.startswith(f"srlens: error: docs folder {out}: {message}")
    assert err.count("\n") == 1
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("name", [".srlens-report", "index.html", "runs"])
def test_a_report_is_never_written_through_a_link(wh, tmp_path, capsys, name):
    out = tmp_path / "rep"
    out.mkdir()
    (out / ".srlens-report").write_text("")
    (out / name).unlink(missing_ok=True)
    (out / name).symlink_to(wh)
    before = wh.read_bytes()
    code, _, err = cli(capsys, "--warehouse", wh, "report", out)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"srlens: error: report folder {out}: {name} is a symbolic link")
    assert wh.read_bytes() == before


# D7: a mistyped --warehouse made a new warehouse file (campaign --date), or left a new empty one
# behind a failed load (load-human, load-campaign, load-outputs).


@pytest.mark.parametrize(
    "command",
    [
        ["campaign", "sr19", "--date", "2019"],
        ["load-outputs", RUNS / "swaps.sr.txt", "--corpus", "en_ewt_demo", "--team", "t", "--run", "r"],
        ["load-outputs", RUNS / "swaps.sr.txt", RUNS / "drops.sr.txt", "--team", "t", "--run", "r"],
        ["load-campaign", "camp", "--campaign", "sr19"],
        ["load-human", "human.csv"],
        ["load-human", "system.csv", "--level", "system"],
        ["load-rules", "rules.csv"],
        ["baseline", "train", "--treebank", "en_ewt_demo"],
    ],
)
def test_a_mistyped_warehouse_is_never_created(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    campaign_folder(tmp_path / "camp")
    (tmp_path / "human.csv").write_text("annotator,team,run,corpus,sent_id,criterion,score\na,t,r,en_ewt_demo,1,f,1\n")
    (tmp_path / "system.csv").write_text("campaign,corpus,team,run,criterion,score\nc,en_ewt_demo,t,r,da,1\n")
    (tmp_path / "rules.csv").write_text("rule_id,enabled\nen|agreement|det|DET>NOUN|Number,false\n")
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli(capsys, "--warehouse", "typo.duckdb", *command)
    assert code == 2 and out == ""
    assert err.startswith("srlens: error: no warehouse at typo.duckdb: load data first") and err.count("\n") == 1
    assert sorted(tmp_path.rglob("*")) == before


def test_a_failed_first_load_leaves_no_warehouse(tmp_path, capsys):
    warehouse = tmp_path / "new.duckdb"
    argv = ["--warehouse", warehouse, "load-outputs", RUNS / "swaps.sr.txt", "--corpus", "mt", "--team", "t"]
    code, _, err = cli(capsys, *argv, "--run", "r", "--no-reference")  # no --language: refused inside the load
    assert code == 2 and "--no-reference needs --language" in err
    assert not warehouse.exists() and not (tmp_path / "new.duckdb.wal").exists()
    # the loads that may come first still create it
    assert cli(capsys, *argv, "--run", "r", "--no-reference", "--language", "en")[0] == 0
    assert runs_of(warehouse) == ["default/mt/t/r"]


# D9: messages about reference-free corpora said what was not true ("load-treebank first", "no such corpus").


@pytest.fixture
def with_mt(wh, capsys):
    """wh with the reference-free corpus mt (one run, loaded with --no-reference)."""
    argv = ["load-outputs", RUNS / "swaps.sr.txt", "--corpus", "mt", "--team", "t", "--run", "r", "--no-reference"]
    assert cli(capsys, "--warehouse", wh, *argv, "--language", "en")[0] == 0
    return wh


def test_load_campaign_says_a_reference_free_corpus_has_no_treebank(with_mt, tmp_path, capsys):
    root = campaign_folder(tmp_path / "camp")
    shutil.copy(RUNS / "drops.sr.txt", root / "ims" / "1" / "mt.sr")
    before = table_snapshot(with_mt)
    code, _, err = cli(capsys, "--warehouse", with_mt, "load-campaign", root, "--campaign", "sr19")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        f"srlens: error: {root}: 1 problem(s), nothing loaded: ims/1/mt.sr: corpus 'mt' has no treebank "
        "(reference-free): load its runs one by one with load-outputs --no-reference"
    )
    assert table_snapshot(with_mt) == before


def test_suggest_training_says_a_reference_free_corpus_has_no_treebank(with_mt, tmp_path, capsys):
    code, _, err = cli(
        capsys, "--warehouse", with_mt, "suggest-training", "--submission", "default/mt/t/r", "--treebank", "mt",
        "--sentences", "5", "--out", tmp_path / "x.conllu",
    )  # fmt: skip
    assert code == 2 and err == (
        "srlens: error: --treebank mt: a corpus without a treebank (its runs were loaded with --no-reference): "
        "no treebank sentence to pick; name a loaded treebank\n"
    )
    assert not (tmp_path / "x.conllu").exists()


# D10: Python's number and date syntax beyond ASCII decimals (1_000, fullwidth digits) was accepted.


@pytest.mark.parametrize("score", ["1_000", "１２", "٣", "0x10", "inf", "nan", "1e999", "", "5,0"])
def test_a_score_is_a_plain_decimal_number(two_runs, tmp_path, capsys, score):
    wh, sent_id = two_runs
    system = tmp_path / "system.csv"
    system.write_text(f'campaign,corpus,team,run,criterion,score\ndemo,en_ewt_demo,perturb,swaps,da,"{score}"\n')
    sentence = tmp_path / "sentence.csv"
    sentence.write_text(
        f'annotator,campaign,corpus,team,run,sent_id,criterion,score\na,demo,en_ewt_demo,perturb,swaps,{sent_id},f,"{score}"\n'
    )
    before = table_snapshot(wh)
    for argv in ([system, "--level", "system"], [sentence]):
        code, _, err = cli(capsys, "--warehouse", wh, "load-human", *argv)
        assert code == 2 and err.count("\n") == 1
        assert err.startswith(f"srlens: error: {argv[0]}:2: 1 problem(s): line 2: ")
        assert ("empty score" if score == "" else f"score {score!r} is not a number") in err
    assert table_snapshot(wh) == before


def test_plain_decimal_scores_load(two_runs, tmp_path, capsys):
    wh, _ = two_runs
    system = tmp_path / "system.csv"
    rows = [("swaps", "da", "-1.5"), ("drops", "da", "+.5"), ("swaps", "mqm", "2e1"), ("drops", "mqm", "3.")]
    system.write_text("campaign,corpus,team,run,criterion,score\n" + "".join(
        f"demo,en_ewt_demo,perturb,{run},{criterion},{score}\n" for run, criterion, score in rows
    ))  # fmt: skip
    assert cli(capsys, "--warehouse", wh, "load-human", system, "--level", "system")[0] == 0
    con = duckdb.connect(str(wh), read_only=True)
    assert sorted(con.execute("select score from raw.system_human_scores").fetchall()) == [
        (-1.5,),
        (0.5,),
        (3.0,),
        (20.0,),
    ]
    con.close()


@pytest.mark.parametrize("date", ["２０１９", "2019-０６", "٢٠١٩"])
def test_a_campaign_date_is_in_ascii_digits(wh, capsys, date):
    before = table_snapshot(wh)
    code, _, err = cli(capsys, "--warehouse", wh, "campaign", "sr19", "--date", date)
    assert code == 2 and err == f"srlens: error: campaign date {date!r}: expected YYYY, YYYY-MM or YYYY-MM-DD\n"
    assert table_snapshot(wh) == before


# D11: a manifest reached through a link read its files beside the link, and source_file was relative
# to the working folder.


def test_a_linked_manifest_reads_the_files_beside_the_real_one(wh, tmp_path, capsys, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(RUNS / "swaps.sr.txt", real / "A.sr")
    (real / "m.csv").write_text("file,corpus,team,run\nA.sr,en_ewt_demo,ims,1\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(RUNS / "drops.sr.txt", elsewhere / "A.sr")  # another file of the same name beside the link
    (elsewhere / "m.csv").symlink_to(real / "m.csv")
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(capsys, "--warehouse", wh, "load-campaign", "elsewhere/m.csv", "--campaign", "sr19")
    assert (code, err) == (0, "")
    con = duckdb.connect(str(wh), read_only=True)
    source, sha256 = con.execute("select source_file, sha256 from raw.submissions").fetchone()
    con.close()
    assert source == str(real / "A.sr")
    assert sha256 == hashlib.sha256((RUNS / "swaps.sr.txt").read_bytes()).hexdigest()


# D8: Ctrl-C during load-campaign left no table of what was loaded, and inside a DuckDB query it
# ended as "srlens: error: RuntimeError: Query interrupted" (exit 1).


def test_ctrl_c_during_load_campaign_lists_the_runs_loaded(wh, tmp_path):
    root = campaign_folder(tmp_path / "camp")
    for run, text in (("2", "drops"), ("3", "random"), ("4", "head_final")):
        (root / "ims" / run).mkdir()
        shutil.copy(RUNS / f"{text}.sr.txt", root / "ims" / run / "en_ewt_demo.sr")
    argv = ["--warehouse", wh, "load-campaign", root, "--campaign", "sr19"]
    load = Running(*argv, cwd=tmp_path, SRLENS_TEST_STOP_AT="run")
    load.wait_stopped()  # before the first run
    load.proc.send_signal(signal.SIGCONT)
    while load.proc.poll() is None and process_state(load.proc.pid) == "T":
        time.sleep(0.01)  # it leaves the stop at once
    # Ctrl-C before the second run, and again before the next run if that one was lost (DuckDB may
    # swallow a SIGINT that comes while it runs a short query); never twice while it is handled.
    while load.proc.poll() is None:
        if process_state(load.proc.pid) == "T":
            load.proc.send_signal(signal.SIGINT)
            load.proc.send_signal(signal.SIGCONT)
            while load.proc.poll() is None and process_state(load.proc.pid) == "T":
                time.sleep(0.01)
        time.sleep(0.01)
    assert load.finish() == 130
    assert load.stderr().endswith("srlens: interrupted\n")
    table = [line.split() for line in load.proc.stdout.read().splitlines()]
    assert table[0] == ["team", "run", "corpus", "sentences", "status"]
    assert table[1] == ["ims", "1", "en_ewt_demo", "200", "loaded"]
    # the table lists exactly the runs that are loaded: none lost, none claimed
    assert runs_of(wh) == [f"sr19/en_ewt_demo/ims/{row[1]}" for row in table[1:] if row[-1] == "loaded"]


def test_a_query_stopped_by_ctrl_c_is_an_interruption():
    from srlens.loaders.store import interrupted

    assert interrupted(KeyboardInterrupt()) and interrupted(RuntimeError("Query interrupted"))
    assert interrupted(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    assert not interrupted(RuntimeError("another error")) and not interrupted(duckdb.IOException("x"))


# D12: suggest-training wrote sentences of another language than the run's (an English run, the French
# demo treebank) without a word.


def test_sentences_of_another_language_come_with_a_note(built_warehouse, tmp_path, capsys):
    argv = ["--warehouse", built_warehouse, "suggest-training", "--submission", "demo/en_ewt_demo/perturb/advmod_moved"]
    code, out, _ = cli(capsys, *argv, "--treebank", "fr_gsd_demo", "--sentences", 3, "--out", tmp_path / "fr.conllu")
    assert code == 0 and out.splitlines()[-1] == (
        "note: fr_gsd_demo is in language fr, the run's corpus in en: these sentences are of another language "
        "than the run's"
    )
    code, out, _ = cli(capsys, *argv, "--treebank", "en_ewt_test", "--sentences", 3, "--out", tmp_path / "en.conllu")
    assert code == 0 and "another language" not in out
