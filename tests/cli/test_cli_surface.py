"""The command line's surface, byte for byte: every help page, and the exit code and message of a few
mistakes per command (missing warehouse, bad file, bad option), compared with tests/cli/golden/.

A change to a command's help or messages shows here as a diff. When the change is meant, rewrite
the golden files with SRLENS_UPDATE_GOLDEN=1 pytest tests/cli/test_cli_surface.py and review them."""

import argparse
import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from srlens.cli import main, parser

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SRLENS_UPDATE_GOLDEN") == "1"

# A small treebank: a warehouse that is loaded but not built.
TREE = (
    "# sent_id = s1\n# text = Hi there\n"
    "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n2\tthere\tthere\tADV\t_\t_\t1\tadvmod\t_\t_\n\n"
)

# Per command, the mistakes to replay: (arguments after `srlens`, with {missing} for a warehouse that
# does not exist, {loaded} for a loaded warehouse that was never built, {tmp} for an empty folder).
W = ["--warehouse", "{missing}"]
L = ["--warehouse", "{loaded}"]
ERRORS = {
    "srlens": [[], ["nope"], ["--nope", "status"], ["--warehouse"]],
    "load-treebank": [
        [*L, "load-treebank", "{tmp}/none.conllu", "--corpus", "c"],
        [*L, "load-treebank", "{tmp}/none.conllu"],
        [*L, "load-treebank", "{tmp}/a.conllu", "{tmp}/b.conllu", "--corpus", "c"],
        [*L, "load-treebank", "--nope", "x.conllu"],
        [*L, "load-treebank"],
    ],
    "load-references": [
        [*L, "load-references", "{tmp}/none.txt", "--corpus", "c", "--language", "en"],
        [*L, "load-references", "x.txt", "--corpus", "c"],
        [*L, "load-references", "x.txt", "--corpus", "c", "--language", "en", "--format", "conllu"],
    ],
    "load-outputs": [
        [*L, "load-outputs", "{tmp}/none.txt", "--corpus", "c", "--team", "t", "--run", "r"],
        [*L, "load-outputs", "{tmp}/none.txt", "--team", "t", "--run", "r"],
        [*L, "load-outputs", "{tmp}/a.txt", "{tmp}/b.txt", "--corpus", "c", "--team", "t", "--run", "r"],
        [*L, "load-outputs", "{tmp}/a.txt", "{tmp}/b.txt", "--no-reference", "--team", "t", "--run", "r"],
        [*L, "load-outputs", "x.txt", "--corpus", "c", "--run", "r"],
        [*L, "load-outputs", "x.txt", "--corpus", "c", "--team", "t", "--run", "r", "--format", "pdf"],
    ],
    "load-campaign": [
        [*L, "load-campaign", "{tmp}/none", "--campaign", "c"],
        [*L, "load-campaign", "{tmp}"],
        [*L, "load-campaign", "{tmp}", "--campaign", "c", "--nope"],
    ],
    "load-human": [
        [*L, "load-human", "{tmp}/none.csv"],
        [*L, "load-human", "{tmp}/none.csv", "--level", "system"],
        [*L, "load-human", "x.csv", "--level", "word"],
    ],
    "campaign": [
        [*W, "campaign", "sr19", "--date", "2019"],
        [*L, "campaign", "bad name!", "--date", "2019"],
        [*L, "campaign", "sr19", "--date", "yesterday"],
        [*L, "campaign", "sr19"],
    ],
    "load-demo": [[*L, "load-demo", "extra"]],
    "build": [
        [*W, "build"],
        [*W, "build", "--processor", "magic"],
        [*W, "build", "--var", "novalue"],
        [*L, "build", "--processor", "aligned", "--var", "no_such_var=1"],
    ],
    "parse": [
        [*W, "parse", "--shard", "1/2", "o.parquet"],
        [*W, "parse", "--shard", "3/2", "o.parquet"],
        [*W, "parse", "o.parquet"],
    ],
    "load-parses": [
        [*W, "load-parses", "a.parquet"],
        [*L, "load-parses", "{tmp}/none.parquet"],
        [*W, "load-parses"],
    ],
    "load-rules": [
        [*L, "load-rules", "{tmp}/none.csv"],
        [*L, "load-rules"],
    ],
    "examples": [
        [*W, "examples", "--view", "dep", "--subtree", "(advcl)"],
        [*L, "examples", "--view", "dep", "--subtree", "(advcl)"],
        [*W, "examples", "--view", "nope", "--subtree", "(advcl)"],
    ],
    "baseline": [
        [*W, "baseline"],
        [*W, "baseline", "train", "--treebank", "t"],
        [*L, "baseline", "train", "--treebank", "none"],
        [*W, "baseline", "generate", "--corpus", "c", "--run", "r", "--input", "gloss"],
    ],
    "query": [
        [*W, "query", "select 1"],
        [*L, "query", "select * from corpus_stats"],
        [*L, "query", "drop table raw.corpora"],
        [*L, "query", "select 1", "--limit", "0"],
        [*L, "query", "select 1", "--format", "xml"],
    ],
    "report": [[*W, "report", "{tmp}/r"], [*W, "report"]],
    "status": [[*W, "status"], [*W, "status", "extra"]],
    "suggest-training": [
        [*W, "suggest-training", "--submission", "s", "--treebank", "t", "--sentences", "5", "--out", "o.conllu"],
        [*W, "suggest-training", "--submission", "s", "--treebank", "t", "--sentences", "five", "--out", "o"],
        [*W, "suggest-training", "--submission", "s"],
    ],
    "export-parquet": [[*W, "export-parquet", "{tmp}/out"], [*W, "export-parquet"]],
    "docs": [[*W, "docs", "{tmp}/site"], [*W, "docs"]],
}


def commands(p, prefix="srlens"):
    """Every (sub)command parser, depth first, with its full name."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from commands(sub, f"{prefix} {name}")


HELP_PAGES = [["--help"]] + [[*name.split()[1:], "--help"] for name, _ in commands(parser())]


def run_cli(argv):
    """(exit code, stdout, stderr) of srlens with these arguments, as a user would see them."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse: --help and usage mistakes
            code = stop.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def fixed_terminal(monkeypatch):
    """argparse wraps help to the terminal's width, and the default warehouse comes from the environment."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("SRLENS_WAREHOUSE", raising=False)
    monkeypatch.delenv("SRLENS_PROCESSOR", raising=False)


def compare(name, text):
    path = GOLDEN / f"{name}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"no golden file {path.name}: run with SRLENS_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{path.name} differs from the command line's output"


def test_there_is_one_error_list_per_command():
    assert set(ERRORS) == {"srlens"} | {name.split()[1] for name, _ in commands(parser())}


@pytest.mark.parametrize("argv", HELP_PAGES, ids=[" ".join(a[:-1]) or "srlens" for a in HELP_PAGES])
def test_help_page(argv):
    code, out, err = run_cli(argv)
    assert (code, err) == (0, "")
    compare("help-" + ("-".join(argv[:-1]) or "srlens"), out)


def test_python_dash_m_runs_the_same_command_line():
    """Scripts and benchmarks run `python -m srlens.cli`: it prints the same help and exit code."""
    env = {k: v for k, v in os.environ.items() if k not in ("SRLENS_WAREHOUSE", "SRLENS_PROCESSOR")}
    done = subprocess.run(
        [sys.executable, "-m", "srlens.cli", "--help"], capture_output=True, text=True, env={**env, "COLUMNS": "100"}
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (GOLDEN / "help-srlens.txt").read_text()
    done = subprocess.run([sys.executable, "-m", "srlens.cli", "nope"], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and done.stderr.startswith("srlens: error: argument COMMAND: invalid choice: 'nope'")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    from srlens.loaders.load import load_treebank

    root = tmp_path_factory.mktemp("surface")
    (root / "t.conllu").write_text(TREE)
    load_treebank(root / "w.duckdb", root / "t.conllu", "t")
    return root / "w.duckdb"


@pytest.mark.parametrize("command", sorted(ERRORS))
def test_errors(command, loaded, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative paths (o.parquet, x.txt) land in a folder of the test
    folder = tmp_path / "empty"
    folder.mkdir()
    for name in ("a.conllu", "b.conllu", "a.txt", "b.txt"):  # files that exist, for the checks before reading
        (folder / name).write_text(TREE)
    places = {"missing": str(tmp_path / "none.duckdb"), "loaded": str(loaded), "tmp": str(folder)}
    transcript = []
    for case in ERRORS[command]:
        argv = [a.format(**places) for a in case]
        code, out, err = run_cli(argv)
        shown = " ".join(["srlens", *case])
        transcript.append(f"$ {shown}\nexit {code}\n--- stdout\n{out}--- stderr\n{err}")
    text = "\n".join(transcript)
    for placeholder, value in places.items():  # machine paths out of the golden files
        text = text.replace(value, "{" + placeholder + "}")
    compare(f"errors-{command}", text.replace(str(tmp_path), "{cwd}"))
