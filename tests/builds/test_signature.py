"""The reproducibility signature: what fixes the figures changes it, nothing else does."""

import json
from importlib import metadata

import duckdb
import pytest

from srlens import build_vars
from srlens.build import build
from srlens.loaders.load import load_outputs, load_treebank
from srlens.signature import signature
from srlens.status import status
from tests.conftest import FIGURE1, require_shared

pytestmark = pytest.mark.slow  # builds of its own

VERSION = metadata.version("srlens")


def build_vars_of(**changes):
    return {**build_vars.defaults(), "bleu_nltk_version": "3.10.4", **changes}


def test_the_fields():
    assert signature(build_vars_of()) == (
        f"srlens:{VERSION}|proc:aligned|bleu:nltk-3.10.4/m2|dea:lemma-clip|punct:upos|vars:default"
    )
    stanza = build_vars_of(
        processor="stanza", stanza_processors={"fr": "stanza-1.15.0/fr/0a1b2c3d", "en": "stanza-1.15.0/en/2e72d3fd"}
    )
    assert signature(stanza).split("|")[1] == "proc:stanza-1.15.0/en/2e72d3fd+stanza-1.15.0/fr/0a1b2c3d"


def test_what_changes_it():
    base = signature(build_vars_of())
    assert signature(build_vars_of()) == base
    assert signature(build_vars_of(processor="stanza", stanza_processors={"en": "stanza-1.15.0/en/2e72d3fd"})) != base
    # another model of the same stanza version is another processor
    assert signature(
        build_vars_of(processor="stanza", stanza_processors={"en": "stanza-1.15.0/en/2e72d3fd"})
    ) != signature(build_vars_of(processor="stanza", stanza_processors={"en": "stanza-1.15.0/en/ffffffff"}))
    assert signature(build_vars_of(bleu_nltk_version="3.9.1")) != base
    for var in build_vars.user_vars():  # every var a user sets changes some figure
        chosen = {
            "mining_metric": "dea",
            "lambre_rule_corpora": {"en": "x"},
            "entropy_corpus": {"a": "b"},
            "lambre_reference_team": "human",
            "ensemble_tuning_corpus": {"a": "b"},
            "ensemble_exclude_runs": ["demo/en_ewt_demo/baseline/gold"],
        }
        if var.name in chosen:
            other = chosen[var.name]
        elif isinstance(var.default, list):
            other = var.default + [max(var.default) * 10]
        else:
            other = var.default / 2 if isinstance(var.default, float) else var.default + 1
        assert var.check(other) == other, var.name
        assert signature(build_vars_of(**{var.name: other})) != base, var.name
    assert signature(build_vars_of(mining_quantile=0.5)) != signature(build_vars_of(mining_quantile=0.4))
    assert signature(build_vars_of(), version="9.9.9") != base


def _stored(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        builds = con.execute("select signature, dbt_vars from meta.builds order by started_at desc").fetchall()
        runs = con.execute("select run, signature from submission_scores order by run").fetchall()
    finally:
        con.close()
    return builds[0][0], json.loads(builds[0][1]), dict(runs)


def test_stored_with_each_build_and_in_submission_scores(tmp_path):
    require_shared()
    warehouse = tmp_path / "w.duckdb"
    load_treebank(warehouse, FIGURE1, "figure1")
    run = tmp_path / "run.txt"
    run.write_text("I enjoyed my time at High Franklin School .\n", encoding="utf-8")
    load_outputs(warehouse, run, "figure1", "t", "text")
    conllu_run = tmp_path / "run.conllu"
    conllu_run.write_text(FIGURE1.read_text(encoding="utf-8"), encoding="utf-8")
    load_outputs(warehouse, conllu_run, "figure1", "t", "parsed", fmt="conllu")

    build(warehouse, echo=False, processor="aligned")
    first, recorded, runs = _stored(warehouse)
    assert first == signature(recorded) == signature(build_vars_of())
    assert runs == {"text": first, "parsed": first.replace("|proc:aligned|", "|proc:user conllu|")}
    assert f"  signature: {first}" in status(warehouse).splitlines()

    build(warehouse, echo=False, processor="aligned", dbt_vars={"mining_quantile": 0.5})
    second, _, runs = _stored(warehouse)
    assert second != first and second.rsplit("|", 1)[0] == first.rsplit("|", 1)[0]
    assert runs["text"] == second
