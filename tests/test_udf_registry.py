"""The functions a production connection gets are the ones the models call: the per-sentence
reference functions (srlens_accuracies, srlens_sentence_bleu, srlens_bleu_stats) only where a test
or a benchmark registers them."""

import re

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
    """The srlens_ functions the SQL of dbt_project/ calls (models and macros)."""
    called = set()
    for path in (REPO / "dbt_project").rglob("*.sql"):
        if "target" not in path.relative_to(REPO / "dbt_project").parts:
            called |= set(re.findall(r"\b(srlens_\w+)\s*\(", path.read_text()))
    return called


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
