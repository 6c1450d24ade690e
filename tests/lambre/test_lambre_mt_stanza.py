"""An English reference-free run in plain text goes through the same path as the CoNLL-U
runs of tests/lambre/test_lambre_mt.py, parsed by the offline stanza models of ../shared/stanza/en.

Kept small (stanza is slow on a shared machine): 30 sentences of en_ewt test, as written and with
the verbs is/are, was/were, has/have swapped, so that subjects and verbs disagree in Number. The
rules come from en_ewt dev.
"""

import re

import duckdb
import pytest

from srlens.build import build
from srlens.loaders.load import load_outputs, load_treebank
from tests.conftest import EN_EWT_TEST, SHARED
from tests.support.stanza import require_models

pytestmark = pytest.mark.slow  # stanza

EN_EWT_DEV = SHARED / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu"
SENTENCES = 30
SWAPS = {"is": "are", "are": "is", "was": "were", "were": "was", "has": "have", "have": "has"}


def texts(n):
    return [
        line[len("# text = ") :]
        for line in EN_EWT_TEST.read_text(encoding="utf-8").splitlines()
        if line.startswith("# text = ")
    ][:n]


def swap_verbs(text):
    return re.sub(r"\b(is|are|was|were|has|have)\b", lambda m: SWAPS[m.group(1)], text)


def test_an_english_text_run_without_reference_is_parsed_by_stanza_and_scored(tmp_path):
    models = require_models()
    warehouse = tmp_path / "srlens.duckdb"
    lines = texts(SENTENCES)
    swapped = [swap_verbs(t) for t in lines]
    assert sum(a != b for a, b in zip(lines, swapped)) >= 10
    (tmp_path / "clean.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "swapped.txt").write_text("\n".join(swapped) + "\n", encoding="utf-8")
    load_treebank(warehouse, EN_EWT_DEV, "en_ewt_dev")
    for team in ("clean", "swapped"):
        load_outputs(
            warehouse, tmp_path / f"{team}.txt", "en_mt", team, "1", "wmt", "text", no_reference=True, language="en"
        )
    build(warehouse, echo=False, processor="stanza", stanza_dir=str(models))
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = {
            r[0]: r[1:]
            for r in con.execute("""
            select team, sentences, rule_score, processor, corpus_bleu, dea, simple_tree_accuracy_mean
            from submission_scores order by team""").fetchall()
        }
        assert set(rows) == {"clean", "swapped"}
        for _team, (sentences, rule_score, processor, *reference_based) in rows.items():
            assert sentences == SENTENCES and processor.startswith("stanza-") and "/en/" in processor
            assert rule_score is not None and reference_based == [None, None, None]
        assert rows["clean"][1] > rows["swapped"][1]
        assert con.execute("select count(*), count(rule_score), count(bleu) from sentence_scores").fetchone() == (
            2 * SENTENCES,
            2 * SENTENCES,
            0,
        )
        failed = {
            r[0]
            for r in con.execute("""select rule_id from lambre_failures
                                               where team = 'swapped' and feature = 'Number'""").fetchall()
        }
        assert any("|nsubj|" in rule for rule in failed), failed
        assert con.execute("select parsers from campaign_trends").fetchone()[0] == rows["clean"][2]
    finally:
        con.close()
