"""The command line in-process on the demo's files: what the tests of the commands share."""

import shutil

import duckdb

from srlens.cli import main
from tests.conftest import REPO

DEMO = REPO / "demo" / "data"
RUNS = DEMO / "outputs" / "en_ewt_demo"


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


def campaign_folder(root):
    """A campaign folder with one good run, ims/1."""
    (root / "ims" / "1").mkdir(parents=True)
    shutil.copy(RUNS / "swaps.sr.txt", root / "ims" / "1" / "en_ewt_demo.sr")
    return root
