"""The functions a production connection gets are the ones the models call: the per-sentence
reference functions (srlens_accuracies, srlens_sentence_bleu, srlens_bleu_stats) only where a test
or a benchmark registers them."""

import re
import subprocess
import sys

import duckdb
import pytest
from dbt.adapters.duckdb.plugins import BasePlugin

from srlens import udfs
from tests.conftest import REPO

REFERENCES = {"srlens_accuracies", "srlens_sentence_bleu", "srlens_bleu_stats"}


def added_functions(register):
    """The function names `register(con)` adds to a fresh DuckDB connection."""
    con = duckdb.connect()
    try:
        names = "select function_name from duckdb_functions()"
        before = {r[0] for r in con.execute(names).fetchall()}
        register(con)
        return {r[0] for r in con.execute(names).fetchall()} - before
    finally:
        con.close()


def called_by_models():
    """The srlens_ functions the SQL of dbt_project/ calls (models and macros), less the Jinja
    macros of that name that the project defines itself."""
    called, macros = set(), set()
    for path in (REPO / "dbt_project").rglob("*.sql"):
        if "target" not in path.relative_to(REPO / "dbt_project").parts:
            text = path.read_text()
            called |= set(re.findall(r"\b(srlens_\w+)\s*\(", text))
            macros |= set(re.findall(r"{%-?\s*macro\s+(srlens_\w+)", text))
    return called - macros


def test_dbt_connections_get_exactly_the_functions_the_models_call():
    plugin = BasePlugin.create("srlens.udfs.plugin", config={})  # as profiles.yml names it
    production = added_functions(plugin.configure_connection)
    assert len(production) >= 10  # the registry is read, not empty
    assert production == called_by_models()
    assert not production & REFERENCES


def test_the_reference_functions_are_registered_on_request():
    assert added_functions(udfs.register_references) == REFERENCES
    con = duckdb.connect()
    try:
        udfs.register_references(con)
        bleu, stats = con.execute(
            "select srlens_sentence_bleu(['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'd']), "
            "srlens_bleu_stats(['a', 'b'], ['a', 'c'])"
        ).fetchone()
        accuracies = con.execute("select srlens_accuracies(['a', 'b'], [2, 0], ['b', 'a'])").fetchone()[0]
    finally:
        con.close()
    assert bleu == pytest.approx(1.0)
    assert (stats["hyp_len"], stats["ref_len"], stats["m1"], stats["t1"], stats["m2"]) == (2, 2, 1, 2, 0)
    assert accuracies["simple_string_accuracy"] == pytest.approx(0.0)


def exit_messages(code):
    """What a fresh interpreter (importing this checkout's srlens) prints to stderr when it exits
    after running `code`."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_process_that_exits_with_udfs_registered_leaks_no_duckdb_object(tmp_path):
    """DuckDB's bindings (nanobind) list the objects still alive when the interpreter ends. A
    connection left open at exit with a UDF whose module refers back to it is such an object (a
    cycle through DuckDB that Python's collector cannot see). srlens's UDFs refer to no connection:
    a process that loads, queries and keeps a connection with every UDF open to the end prints
    nothing at exit."""
    (tmp_path / "t.conllu").write_text("# sent_id = s1\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n")
    warehouse = tmp_path / "w.duckdb"
    ours = exit_messages(
        "import duckdb\n"
        "from srlens import udfs\n"
        "from srlens.cli import main\n"
        f"assert main(['--warehouse', {str(warehouse)!r}, 'load-treebank', {str(tmp_path / 't.conllu')!r}, "
        "'--corpus', 't']) == 0\n"
        f"assert main(['--warehouse', {str(warehouse)!r}, 'query', 'select count(*) from raw.sentences']) == 0\n"
        "con = duckdb.connect()\n"
        "udfs.register_all(con)\n"
        "udfs.register_references(con)\n"
        "assert con.execute('select srlens_sentence_bleu([\\'a\\'], [\\'a\\'])').fetchone()[0] is not None\n"
    )
    assert "nanobind" not in ours, ours
    # The same check sees a leak where there is one: a UDF whose globals hold its open connection.
    leaking = exit_messages(
        "import duckdb\n"
        "con = duckdb.connect()\n"
        "con.create_function('f', lambda x: x, ['VARCHAR'], 'VARCHAR', type='arrow')\n"
    )
    assert "nanobind: leaked" in leaking
