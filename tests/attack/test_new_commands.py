"""The attacks on the commands of session 23 (load-campaign, load-human --level system, campaign,
suggest-training, docs), each replayed on real files and a real warehouse: what was skipped, guessed
or overwritten silently is now refused in one line that names the file, and changes nothing."""

import os
import shutil

import duckdb
import pytest

from srlens.cli import main
from srlens.loaders.load import load_treebank
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
