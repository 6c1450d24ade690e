"""srlens.metrics, the Python API over one sentence, gives what the warehouse stores.

Every sentence of sentence_scores of the demo runs (built with the aligned processor in the shared
fixture) is scored again with srlens.metrics from its reference tree (read from the demo treebank
with the conllu package) and the output lemmas the build compared (int_scored_outputs.out_lemmas).
"""

import doctest
import math
from collections import defaultdict

import conllu
import pytest

from srlens import metrics
from srlens.paths import DEMO_DATA_DIR
from tests.conftest import FIGURE1

DEMO_CORPORA = {"en_ewt_demo": "en_ewt_demo.conllu", "fr_gsd_demo": "fr_gsd_demo.conllu"}
SCORES = ("bleu", "dea", "dea_edges", "dea_matched", *metrics.ACCURACY_NAMES)


def test_doctests():
    """SPEC's worked examples in the module's docstrings: Figure 1 (DEA 5/7, the tree metrics), the
    SPEC 5 accuracies, L'AMBRE's Figure 1 (5/7)."""
    result = doctest.testmod(metrics)
    assert result.attempted >= 10 and result.failed == 0


def test_figure1_fixture():
    tree = conllu.parse(FIGURE1.read_text(encoding="utf-8"))[0]
    assert metrics.dea(tree, ["I", "enjoy", "my", "time", "at", "high", "franklin", "school"]) == 5 / 7
    details = metrics.dea_details(tree, "I enjoy my time at high franklin school")
    assert (details.matched, details.edges) == (5, 7)
    assert details.by_relation == {"case": (1, 1), "compound": (2, 0), "nmod": (2, 2), "nsubj": (1, 1), "obj": (1, 1)}
    assert metrics.tree_metrics(tree)["mean_flux_weight"] == 1.0
    assert metrics.reorder_accuracy(tree, "I enjoy my time at high franklin school") == 2 / 3  # school's treelet


def test_one_word_and_punctuation_only():
    one = "1  Yes  yes  INTJ  _  _  0  root  _  _\n2  !  !  PUNCT  _  _  1  punct  _  _\n"
    assert metrics.dea(one, ["yes"]) is None
    assert metrics.sentence_bleu(["yes"], ["yes"]) == 0.5**0.75  # nltk method 2 on one token
    assert metrics.tree_metrics("1  !  !  PUNCT  _  _  0  punct  _  _\n")["tree_length"] is None
    with pytest.raises(ValueError, match="one CoNLL-U sentence"):
        metrics.dea(one + "\n" + one, ["yes"])


def test_argstruct_skips_a_word_without_the_feature():
    sentence = (
        "1  er  er  PRON  _  Case=Dat  2  nsubj  _  _\n2  geht  gehen  VERB  _  _  0  root  _  _\n"
        "3  sie  sie  PRON  _  _  2  obj  _  _\n"
    )
    rules = [
        metrics.rule("de|argstruct|nsubj|PRON>VERB|Case|dep", ["Nom"]),
        metrics.rule("de|argstruct|obj|PRON>VERB|Case|dep", ["Acc"]),
    ]
    assert metrics.lambre_checks(sentence, rules) == [
        metrics.RuleCheck("de|argstruct|nsubj|PRON>VERB|Case|dep", 1, 2, False)
    ]
    assert metrics.lambre_score(sentence, rules) == 0.0
    assert metrics.lambre_score(sentence, [{**rules[0], "enabled": False}]) == 1.0


@pytest.fixture(scope="module")
def demo_references():
    """(corpus, sent_id) -> conllu.TokenList of the demo treebanks."""
    trees = {}
    for corpus, name in DEMO_CORPORA.items():
        text = (DEMO_DATA_DIR / "treebanks" / name).read_text(encoding="utf-8")
        for sentence in conllu.parse(text):
            trees[corpus, sentence.metadata["sent_id"]] = sentence
    return trees


def _close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def test_equal_to_sentence_scores_on_the_demo(warehouse_con, demo_references):
    rows = warehouse_con.execute(f"""
        select s.submission_id, s.corpus, s.sent_id, x.out_lemmas, {', '.join('s.' + c for c in SCORES)}
        from sentence_scores s
        join intermediate.int_scored_outputs x using (submission_id, sent_idx)
        where s.corpus in ('en_ewt_demo', 'fr_gsd_demo') and not s.is_missing
        order by all""").fetchall()
    assert len(rows) > 3000
    per_relation = defaultdict(lambda: [0, 0])
    wrong = []
    for submission_id, corpus, sent_id, out, *stored in rows:
        tree = demo_references[corpus, sent_id]
        details = metrics.dea_details(tree, out)
        ref_lemmas = [lemma for lemma in metrics.analysis_tree(tree).lemmas]
        computed = [
            metrics.sentence_bleu(ref_lemmas, out),
            details.dea,
            details.edges,
            details.matched,
            *(metrics.accuracies(tree, out)[name] for name in metrics.ACCURACY_NAMES),
        ]
        for name, a, b in zip(SCORES, computed, stored):
            if not _close(a, b):
                wrong.append((submission_id, sent_id, name, a, b))
        for relation, (edges, matched) in details.by_relation.items():
            per_relation[submission_id, relation][0] += edges
            per_relation[submission_id, relation][1] += matched
    assert wrong == []
    stored_relations = {
        (s, r): [e, m]
        for s, r, e, m in warehouse_con.execute(
            "select submission_id, relation, edges, matched from dea_by_relation "
            "where corpus in ('en_ewt_demo', 'fr_gsd_demo')"
        ).fetchall()
    }
    assert stored_relations == dict(per_relation)


def test_equal_to_sentence_complexity_on_the_demo(warehouse_con, demo_references):
    rows = warehouse_con.execute("""
        select corpus, sent_id, tree_depth, tree_length, mean_dependency_distance, mean_flux_size,
               mean_flux_weight, mean_arity, is_projective
        from sentence_complexity where corpus in ('en_ewt_demo', 'fr_gsd_demo')""").fetchall()
    assert len(rows) == len(demo_references)
    wrong = []
    for corpus, sent_id, *stored in rows:
        computed = list(metrics.tree_metrics(demo_references[corpus, sent_id]).values())
        if not all(_close(a, b) for a, b in zip(computed, stored)):
            wrong.append((corpus, sent_id, computed, stored))
    assert wrong == []
    assert sum(not r[-1] for r in rows) > 0  # the demo has non-projective trees: the check has work to do
