"""Shared fixtures: real treebanks from ../shared, real DuckDB files, real dbt builds."""

import os
import shutil
import signal
from pathlib import Path

import duckdb
import pytest

from srlens.build import build
from srlens.demo import load_demo
from srlens.loaders.load import load_treebank

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SRLENS_SHARED_DIR", REPO.parent / "shared"))
EN_EWT_TEST = SHARED / "ud" / "en_ewt" / "en_ewt-ud-test.conllu"
FIGURE1 = SHARED / "fixtures" / "figure1.conllu"


def require_shared():
    """Tests on the shared treebanks skip on a user's clone without them, but never in CI."""
    if not SHARED.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the shared resources at {SHARED} (set SRLENS_SHARED_DIR)")
        pytest.skip(f"shared resources not found at {SHARED} (set SRLENS_SHARED_DIR)")


def entropy_example_conllu():
    """SPEC section 2: 20 head-final and 80 head-initial amod edges (entropy 0.72)."""
    blocks = []
    for i in range(100):
        if i < 20:  # adjective before its noun: head-final
            rows = ["1\tbig\tbig\tADJ\t_\t_\t2\tamod\t_\t_", "2\tdog\tdog\tNOUN\t_\t_\t0\troot\t_\t_"]
        else:
            rows = ["1\tdog\tdog\tNOUN\t_\t_\t0\troot\t_\t_", "2\tbig\tbig\tADJ\t_\t_\t1\tamod\t_\t_"]
        blocks.append(f"# sent_id = e{i}\n" + "\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


def table_snapshot(warehouse):
    """Every raw table's full content, to show that a failed load changed nothing."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_schema = 'raw' order by 1"
            ).fetchall()
        ]
        return {t: sorted(con.execute(f"select * from raw.{t}").fetchall(), key=repr) for t in tables}
    finally:
        con.close()


@pytest.fixture(scope="session", autouse=True)
def parse_cache(tmp_path_factory):
    """dbt's parse shared between the suite's warehouses (srlens/parse_cache.py), in a folder of the
    suite's own: never the user's cache."""
    os.environ["SRLENS_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory):
    """One warehouse with Figure 1, en_ewt test, the entropy example and the demo, built once."""
    require_shared()
    root = tmp_path_factory.mktemp("built")
    warehouse = root / "srlens.duckdb"
    entropy = root / "entropy.conllu"
    entropy.write_text(entropy_example_conllu())
    load_treebank(warehouse, FIGURE1, "figure1")
    load_treebank(warehouse, EN_EWT_TEST, "en_ewt_test")
    load_treebank(warehouse, entropy, "entropy_example")
    load_demo(warehouse)
    build(warehouse, echo=False, processor="aligned")
    return warehouse


@pytest.fixture(scope="session")
def demo_treebank(tmp_path_factory):
    """A warehouse with the demo's English treebank (en_ewt_demo) and nothing else."""
    warehouse = tmp_path_factory.mktemp("loaded") / "w.duckdb"
    load_treebank(warehouse, REPO / "demo" / "data" / "treebanks" / "en_ewt_demo.conllu", "en_ewt_demo")
    return warehouse


@pytest.fixture
def demo_wh(demo_treebank, tmp_path):
    """A fresh copy of `demo_treebank`, for a test that may change it."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(demo_treebank, copy)
    return copy


@pytest.fixture
def reference_free_wh(demo_wh, capsys):
    """demo_wh with the reference-free corpus mt (one run, loaded with --no-reference)."""
    from tests.support.commands import RUNS, cli

    argv = ["load-outputs", RUNS / "swaps.sr.txt", "--corpus", "mt", "--team", "t", "--run", "r", "--no-reference"]
    assert cli(capsys, "--warehouse", demo_wh, *argv, "--language", "en")[0] == 0
    return demo_wh


@pytest.fixture(scope="session")
def warehouse_con(built_warehouse):
    con = duckdb.connect(str(built_warehouse), read_only=True)
    yield con
    con.close()


def default_sigint():
    """Ctrl-C as in a terminal: a suite started in the background (`cmd &`) hands its children SIGINT
    ignored, and Python then installs no KeyboardInterrupt handler, so the Ctrl-C tests would fail."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
