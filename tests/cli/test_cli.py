"""The command line: help for every option, one-line errors, and `srlens status`."""

import argparse
import csv
import shutil

import conllu
import pytest

from srlens.cli import main, parser
from srlens.demo import DEMO_MANIFEST
from srlens.loaders.load import load_treebank
from srlens.status import collect, status
from tests.conftest import EN_EWT_TEST, FIGURE1, require_shared
from tests.support.commands import RUNS, campaign_folder, cli


def commands(p, prefix="srlens"):
    """Every (sub)command parser, depth first, with its full name."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from commands(sub, f"{prefix} {name}")


ALL_COMMANDS = list(commands(parser()))


@pytest.mark.parametrize("name,sub", ALL_COMMANDS, ids=[n for n, _ in ALL_COMMANDS])
def test_every_command_has_an_example_and_every_option_is_explained(name, sub):
    assert "Example" in (sub.description or ""), f"{name} has no example"
    for action in sub._actions:
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            assert action.help and len(action.help) > 15, f"{name} {action.dest} is not explained"


def test_top_level_help_lists_every_command_with_examples(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    top = {name.split()[1] for name, _ in ALL_COMMANDS if name.count(" ") == 1}
    assert {"status", "export-parquet", "report", "query", "build"} <= top
    for command in top:
        assert f"\n    {command}" in out  # listed, with its one-line purpose
        assert f"srlens {command}" in out or command in ("load-rules", "examples", "baseline"), command
    assert "srlens status\n" in out and "srlens export-parquet exports/" in out and "srlens report report/" in out


# --- errors: one line, no traceback, naming the problem -------------------------------------


@pytest.fixture(scope="module")
def loaded_not_built(tmp_path_factory):
    require_shared()
    warehouse = tmp_path_factory.mktemp("loaded") / "w.duckdb"
    load_treebank(warehouse, FIGURE1, "figure1")
    return warehouse


def one_line(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("command", [["query", "select 1"], ["status"], ["export-parquet", "out"], ["build"]])
def test_missing_warehouse_is_one_line(tmp_path, capsys, command):
    missing = tmp_path / "none.duckdb"
    assert main(["--warehouse", str(missing), *command]) == 2
    assert one_line(capsys).startswith(f"srlens: error: no warehouse at {missing}: load data first")
    assert not missing.exists()  # DuckDB would have created an empty file


def test_a_load_into_the_default_warehouse_makes_its_folder(tmp_path, capsys, monkeypatch):
    """README's first step in an empty folder: the default warehouse/ is made (another folder must exist)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SRLENS_WAREHOUSE", raising=False)
    (tmp_path / "t.conllu").write_text("# sent_id = s1\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n")
    assert main(["load-treebank", "t.conllu", "--corpus", "t"]) == 0
    assert (tmp_path / "warehouse" / "srlens.duckdb").is_file()
    assert main(["--warehouse", "other/w.duckdb", "load-treebank", "t.conllu", "--corpus", "t"]) == 2
    assert "does not exist: create it" in one_line(capsys) and not (tmp_path / "other").exists()
    assert main(["query", "select count(*) from raw.sentences"]) == 0  # reads the default warehouse


def test_query_before_any_build_says_to_build(loaded_not_built, capsys):
    assert main(["--warehouse", str(loaded_not_built), "query", "select * from corpus_stats"]) == 1
    err = one_line(capsys)
    assert "corpus_stats does not exist" in err and "not built yet: run srlens build" in err


def test_unknown_corpus_is_named(loaded_not_built, tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("a b c\n")
    assert (
        main(
            [
                "--warehouse",
                str(loaded_not_built),
                "load-outputs",
                str(run),
                "--corpus",
                "nosuch",
                "--team",
                "t",
                "--run",
                "r",
            ]
        )
        == 2
    )
    assert "no treebank is loaded for corpus 'nosuch'" in one_line(capsys)


def test_malformed_var_is_one_usage_line(loaded_not_built, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--warehouse", str(loaded_not_built), "build", "--var", "mining_quantile"])
    assert stop.value.code == 2
    assert one_line(capsys) == (
        "srlens build: error: argument --var: expected KEY=VALUE, got 'mining_quantile' (see srlens build --help)\n"
    )


def test_misspelt_var_is_refused_before_building(loaded_not_built, capsys):
    assert main(["--warehouse", str(loaded_not_built), "build", "--var", "mining_quantil=0.1"]) == 2
    err = one_line(capsys)
    assert "unknown --var 'mining_quantil': did you mean mining_quantile?" in err
    assert "last build: not built yet" in status(loaded_not_built)  # nothing was built


def test_var_the_build_sets_itself_is_refused(loaded_not_built, capsys):
    assert main(["--warehouse", str(loaded_not_built), "build", "--var", "processor=stanza"]) == 2
    assert "--var processor is set by srlens build itself (from --processor)" in one_line(capsys)


# --- status ----------------------------------------------------------------------------------


def conllu_counts(path):
    """Sentences and syntactic words of a CoNLL-U file, counted by the conllu package (not our reader)."""
    sentences = words = 0
    with open(path, encoding="utf-8") as handle:
        for sentence in conllu.parse_incr(handle):
            sentences += 1
            words += sum(isinstance(token["id"], int) for token in sentence)
    return sentences, words


def test_status_of_a_loaded_warehouse_before_the_first_build(loaded_not_built, capsys):
    assert main(["--warehouse", str(loaded_not_built), "status"]) == 0
    out = capsys.readouterr().out
    sentences, words = conllu_counts(FIGURE1)
    assert f"figure1 und {sentences} {words}" in " ".join(out.split())
    assert "runs: none loaded" in out
    assert out.rstrip().endswith("last build: not built yet; run srlens build")


def test_status_counts_what_the_built_warehouse_holds(built_warehouse):
    info = collect(built_warehouse)
    corpora = info["corpora"].set_index("corpus")
    assert tuple(corpora.loc["en_ewt_test", ["sentences", "words"]]) == conllu_counts(EN_EWT_TEST)
    with open(DEMO_MANIFEST, newline="") as handle:
        manifest = list(csv.DictReader(handle))
    runs = info["submissions"].set_index(["campaign", "corpus"])
    for corpus in ("en_ewt_demo", "fr_gsd_demo"):
        treebank = next(r["file"] for r in manifest if r["kind"] == "treebank" and r["corpus"] == corpus)
        sentences, words = conllu_counts(DEMO_MANIFEST.parent / treebank)
        assert tuple(corpora.loc[corpus, ["language", "sentences", "words"]]) == (corpus[:2], sentences, words)
        # the manifest's runs plus the two in-sample baselines (hall_nemec, random_order)
        expected_runs = sum(r["kind"] == "outputs" and r["corpus"] == corpus for r in manifest) + 2
        assert tuple(runs.loc[("demo", corpus), ["runs", "sentences", "missing"]]) == (
            expected_runs,
            expected_runs * sentences,
            0,
        )
    assert (info["human_judgments"], info["manual_rules"], info["loads_since_build"]) == (0, 0, 0)

    text = status(built_warehouse)
    assert f"runs: {int(runs['runs'].sum())}, by campaign and corpus" in text
    assert "processor aligned" in text and "stanza models: none" in text
    assert "up to date: nothing loaded since the last build" in text
    assert f"storage format {info['storage_version']}" in text


def test_status_counts_loads_since_the_last_build(built_warehouse, tmp_path):
    copy = tmp_path / "w.duckdb"
    shutil.copyfile(built_warehouse, copy)
    load_treebank(copy, FIGURE1, "figure1_again")
    assert "stale: 1 load since the last build; run srlens build" in status(copy)
    load_treebank(copy, FIGURE1, "figure1")  # reloading a corpus is a load too
    assert "stale: 2 loads since the last build; run srlens build" in status(copy)


def test_ctrl_c_while_reading_the_arguments_is_one_line(monkeypatch, capsys):
    # Ctrl-C can come before any command starts (building the parser takes a few milliseconds).
    def interrupted_parser():
        raise KeyboardInterrupt

    monkeypatch.setattr("srlens.cli.parser", interrupted_parser)
    assert main(["--help"]) == 130
    assert capsys.readouterr().err == "srlens: interrupted\n"


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
