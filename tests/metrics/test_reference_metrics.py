"""Tests of the pure-Python reference implementation (tests/support/reference_metrics.py).

These check the reference itself, so that the project's SQL-vs-reference
comparison can trust it: the SPEC Figure-1 values, the SPEC 20/80 entropy
example, the MDD == MFS identity on a whole real treebank, and small hand-made
trees whose values are worked out by hand in the comments.

Hand-made CoNLL-U below is written with runs of spaces between columns for
readability; ``_conllu`` turns every run of spaces into one TAB (none of the
fields used contains a space).
"""

from __future__ import annotations

import re
from itertools import combinations

import pytest

import tests.support.reference_metrics as ref
from tests.conftest import EN_EWT_TEST, FIGURE1, require_shared
from tests.support.reference_metrics import (
    AnalysisTree,
    max_disjoint_edges,
    parse_analysis_trees,
    read_analysis_trees,
    relation_entropy,
    sentence_metrics,
)


def _conllu(text: str) -> str:
    lines = []
    for line in text.strip("\n").splitlines():
        line = line.strip()
        if line.startswith("#") or not line:
            lines.append(line)
        else:
            lines.append(re.sub(r" +", "\t", line))
    return "\n".join(lines) + "\n\n"


def _one_tree(text: str) -> AnalysisTree:
    trees = parse_analysis_trees(_conllu(text))
    assert len(trees) == 1
    return trees[0]


# ---------------------------------------------------------------------------
# SPEC Figure 1
# ---------------------------------------------------------------------------


def test_figure1_exact_values():
    require_shared()
    trees = read_analysis_trees(FIGURE1)
    assert len(trees) == 1
    tree = trees[0]
    assert tree.sent_id == "figure1"
    assert tree.sentence_index == 1
    # The final "." (punct) is dropped; 8 words remain.
    assert tree.lemmas == ("I", "enjoy", "my", "time", "at", "franklin", "high", "school")
    assert tree.heads == (2, 0, 4, 2, 8, 8, 8, 4)
    assert tree.deprels == (
        "nsubj",
        "root",
        "nmod:poss",
        "obj",
        "case",
        "compound",
        "compound",
        "nmod",
    )
    assert sentence_metrics(tree) == {
        "tree_depth": 3,
        "tree_length": 8,
        "mean_dependency_distance": 2.0,
        "mean_flux_size": 2.0,
        "mean_flux_weight": 1.0,
        "mean_arity": 0.875,
        "is_projective": True,
    }


# ---------------------------------------------------------------------------
# Relation entropy
# ---------------------------------------------------------------------------


def test_entropy_20_left_80_right():
    # Two-word trees built in memory.  Left: "big dog" (amod precedes head),
    # right: "dog big" (amod follows head).  The root edges are not counted.
    left = AnalysisTree("l", 1, ("big", "dog"), ("ADJ", "NOUN"), ("amod", "root"), (2, 0))
    right = AnalysisTree("r", 2, ("dog", "big"), ("NOUN", "ADJ"), ("root", "amod"), (0, 1))
    trees = [left] * 20 + [right] * 80
    result = relation_entropy(trees)
    assert set(result) == {"amod"}
    n_left, n_right, h = result["amod"]
    assert (n_left, n_right) == (20, 80)
    # -0.2 log2 0.2 - 0.8 log2 0.8 = 0.4643856 + 0.2575425 = 0.7219281
    assert round(h, 2) == 0.72
    assert h == pytest.approx(0.7219280948873623, abs=1e-12)


def test_entropy_groups_by_base_relation_and_edge_cases():
    # nmod:poss and nmod pool into "nmod"; one-sided relation -> 0 (0 log 0 = 0);
    # 1 left + 1 right -> exactly 1 bit.
    a = AnalysisTree("a", 1, ("my", "time"), ("PRON", "NOUN"), ("nmod:poss", "root"), (2, 0))
    b = AnalysisTree("b", 2, ("time", "school"), ("NOUN", "NOUN"), ("root", "nmod"), (0, 1))
    c = AnalysisTree("c", 3, ("I", "go"), ("PRON", "VERB"), ("nsubj", "root"), (2, 0))
    result = relation_entropy([a, b, c])
    assert result == {"nmod": (1, 1, 1.0), "nsubj": (1, 0, 0.0)}


def test_figure1_entropy_counts():
    # Figure 1: nsubj left; obj right; nmod:poss left; nmod right; case left;
    # compound left twice.
    require_shared()
    result = relation_entropy(read_analysis_trees(FIGURE1))
    assert {rel: (left, r) for rel, (left, r, _h) in result.items()} == {
        "case": (1, 0),
        "compound": (2, 0),
        "nmod": (1, 1),
        "nsubj": (1, 0),
        "obj": (0, 1),
    }
    assert result["nmod"][2] == 1.0
    assert result["compound"][2] == 0.0


# ---------------------------------------------------------------------------
# Hand-made trees
# ---------------------------------------------------------------------------

CROSSING = """
# sent_id = crossing
1  w1  w1  X  _  _  0  root  _  _
2  w2  w2  X  _  _  4  obj   _  _
3  w3  w3  X  _  _  1  obl   _  _
4  w4  w4  X  _  _  1  nsubj _  _
"""


def test_non_projective_crossing_edge():
    # Edges (head->dep): 1->3, 4->2, 1->4.  (1,3) and (2,4) cross.
    # Edge 4->2: word 3 lies between and is not a descendant of 4 -> non-projective.
    # depth: 3 and 4 at 1, 2 (via 4) at 2 -> 2.
    # MDD: |3-1| + |2-4| + |4-1| = 2 + 2 + 3 = 7, / 3 edges = 7/3.
    # flux p=1: (1,3),(1,4)        size 2, disjoint max 1 (share 1)
    #      p=2: (1,3),(2,4),(1,4)  size 3, max 2 ((1,3)+(2,4))
    #      p=3: (2,4),(1,4)        size 2, max 1 (share 4)
    # MFS = 7/3, MFW = 4/3.
    # arity: w1 has 2 dependents, w4 has 1 -> 3/4.
    tree = _one_tree(CROSSING)
    assert tree.heads == (0, 4, 1, 1)
    m = sentence_metrics(tree)
    assert m["tree_depth"] == 2
    assert m["tree_length"] == 4
    assert m["mean_dependency_distance"] == pytest.approx(7 / 3)
    assert m["mean_flux_size"] == pytest.approx(7 / 3)
    assert m["mean_flux_weight"] == pytest.approx(4 / 3)
    assert m["mean_arity"] == 0.75
    assert m["is_projective"] is False


SPANS_ROOT = """
# sent_id = spans-root
1  a  a  X  _  _  3  dep   _  _
2  b  b  X  _  _  0  root  _  _
3  c  c  X  _  _  2  dep   _  _
"""


def test_non_projective_edge_over_root():
    # Edge 3->1 spans the root word 2 -> non-projective.
    # depth: c 1, a 2 -> 2.  MDD (2 + 1) / 2 = 1.5.
    # flux p=1: (1,3) -> 1;  p=2: (1,3),(2,3) -> 2 (max disjoint 1, share 3).
    # MFS 1.5, MFW 1.0, arity: b 1, c 1 -> 2/3.
    m = sentence_metrics(_one_tree(SPANS_ROOT))
    assert m == {
        "tree_depth": 2,
        "tree_length": 3,
        "mean_dependency_distance": 1.5,
        "mean_flux_size": 1.5,
        "mean_flux_weight": 1.0,
        "mean_arity": pytest.approx(2 / 3),
        "is_projective": False,
    }


PUNCT_REATTACH = """
# sent_id = reattach
1  say    say    VERB   _  _  0  root       _  _
2  (      (      PUNCT  _  _  1  punct      _  _
3  "      "      PUNCT  _  _  2  punct      _  _
4  hello  hello  INTJ   _  _  3  discourse  _  _
5  )      )      PUNCT  _  _  1  punct      _  _
6  again  again  ADV    _  _  1  advmod     _  _
7  ,      ,      PUNCT  _  _  6  punct      _  _
8  now    now    ADV    _  _  6  advmod     _  _
9  .      .      PUNCT  _  _  1  punct      _  _
"""


def test_punctuation_reattachment_and_renumbering():
    # Dropped: 2, 3, 5, 7, 9.  Kept (old -> new): 1->1, 4->2, 6->3, 8->4.
    # hello's head 3 is punct, 3's head 2 is punct, 2's head is say (1):
    # hello re-attaches two levels up to say (a one-step re-attachment would
    # wrongly give the dropped word 2).  now (old 8) has head again (old 6 -> 3).
    # Analysis heads: say 0, hello 1, again 1, now 3.
    # depth: now -> again -> say = 2.
    # MDD: |2-1| + |3-1| + |4-3| = 4, / 3 = 4/3.
    # flux p=1: (1,2),(1,3) -> 2 (max disjoint 1); p=2: (1,3) -> 1; p=3: (3,4) -> 1.
    # MFS 4/3, MFW 1.  arity: say 2, again 1 -> 3/4.  Projective.
    tree = _one_tree(PUNCT_REATTACH)
    assert tree.lemmas == ("say", "hello", "again", "now")
    assert tree.upos == ("VERB", "INTJ", "ADV", "ADV")
    assert tree.deprels == ("root", "discourse", "advmod", "advmod")
    assert tree.heads == (0, 1, 1, 3)
    m = sentence_metrics(tree)
    assert m["tree_depth"] == 2
    assert m["tree_length"] == 4
    assert m["mean_dependency_distance"] == pytest.approx(4 / 3)
    assert m["mean_flux_size"] == pytest.approx(4 / 3)
    assert m["mean_flux_weight"] == 1.0
    assert m["mean_arity"] == 0.75
    assert m["is_projective"] is True


NESTED_FLUX = """
# sent_id = nested
1  a  a  X  _  _  0  root  _  _
2  b  b  X  _  _  6  dep   _  _
3  c  c  X  _  _  5  dep   _  _
4  d  d  X  _  _  3  dep   _  _
5  e  e  X  _  _  2  dep   _  _
6  f  f  X  _  _  1  dep   _  _
"""


def test_flux_weight_of_two_and_three():
    # Chain a(1) -> f(6) -> b(2) -> e(5) -> c(3) -> d(4): nested, projective.
    # depth: f 1, b 2, e 3, c 4, d 5 -> 5.
    # MDD: 5 + 4 + 3 + 2 + 1 = 15, / 5 = 3.
    # Edges as (a,b): (1,6),(2,6),(2,5),(3,5),(3,4).
    # p=1: (1,6)                          size 1, weight 1
    # p=2: (1,6),(2,6),(2,5)              size 3, weight 2  {(1,6),(2,5)}
    # p=3: (1,6),(2,6),(2,5),(3,5),(3,4)  size 5, weight 3  {(1,6),(2,5),(3,4)}
    # p=4: (1,6),(2,6),(2,5),(3,5)        size 4, weight 2  (right side is {5,6})
    # p=5: (1,6),(2,6)                    size 2, weight 1  (share 6)
    # MFS = 15/5 = 3, MFW = 9/5 = 1.8.  arity: 5 dependents / 6 words.
    tree = _one_tree(NESTED_FLUX)
    assert [len(ref.flux(tree, p)) for p in range(1, 6)] == [1, 3, 5, 4, 2]
    assert [max_disjoint_edges(ref.flux(tree, p)) for p in range(1, 6)] == [1, 2, 3, 2, 1]
    m = sentence_metrics(tree)
    assert m == {
        "tree_depth": 5,
        "tree_length": 6,
        "mean_dependency_distance": 3.0,
        "mean_flux_size": 3.0,
        "mean_flux_weight": pytest.approx(1.8),
        "mean_arity": pytest.approx(5 / 6),
        "is_projective": True,
    }


def test_matching_is_exact_not_greedy():
    # Taking the first edge (2,5) greedily blocks both others (total 1);
    # the maximum is {(1,5),(2,6)} = 2.
    assert max_disjoint_edges([(2, 5), (1, 5), (2, 6)]) == 2
    assert max_disjoint_edges([]) == 0


SINGLE_WORD_AND_ALL_PUNCT = """
# sent_id = one-word
1  Hi  hi  INTJ  _  _  0  root  _  _
2  !   !   PUNCT _  _  1  punct _  _

# sent_id = all-punct
1  ...  ...  PUNCT  _  _  0  punct  _  _
2  !    !    PUNCT  _  _  1  punct  _  _
"""


def test_n1_and_n0():
    one, empty = parse_analysis_trees(_conllu(SINGLE_WORD_AND_ALL_PUNCT))
    # n = 1: depth 0, MDD/MFS/MFW 0 by definition, arity 0/1 = 0, projective.
    assert sentence_metrics(one) == {
        "tree_depth": 0,
        "tree_length": 1,
        "mean_dependency_distance": 0,
        "mean_flux_size": 0,
        "mean_flux_weight": 0,
        "mean_arity": 0,
        "is_projective": True,
    }
    # n = 0: every metric is None.
    assert empty.heads == ()
    assert all(v is None for v in sentence_metrics(empty).values())
    assert len(sentence_metrics(empty)) == 7


PUNCT_ROOT = """
# sent_id = punct-root
1  Hi     hi     INTJ   _  _  2  discourse  _  _
2  ...    ...    PUNCT  _  _  0  punct      _  _
3  there  there  ADV    _  _  2  advmod     _  _
4  now    now    ADV    _  _  3  advmod     _  _
"""


def test_punct_root_word_gives_a_forest():
    # Documented choice: the children of a punct root re-attach to 0 and become
    # roots.  Analysis: Hi (root), there (root), now -> there.
    # depth 1 (now below there).  One non-root edge (3,2): MDD 1.
    # flux p=1: none -> 0; p=2: (2,3) -> 1.  MFS 0.5, MFW 0.5.
    # arity: there has 1 -> 1/3.  No edge spans a root word, projective.
    tree = _one_tree(PUNCT_ROOT)
    assert tree.heads == (0, 0, 2)
    assert sentence_metrics(tree) == {
        "tree_depth": 1,
        "tree_length": 3,
        "mean_dependency_distance": 1.0,
        "mean_flux_size": 0.5,
        "mean_flux_weight": 0.5,
        "mean_arity": pytest.approx(1 / 3),
        "is_projective": True,
    }


MWT_EMPTY_NO_SENT_ID = """
# text = I'm here
1-2  I'm   _     _     _  _  _  _      _  _
1    I     I     PRON  _  _  2  nsubj  _  _
2    'm    be    AUX   _  _  0  root   _  _
2.1  went  go    VERB  _  _  _  _      2:conj  _
3    here  here  ADV   _  _  2  advmod _  _

# sent_id = second
1  Ok  ok  INTJ  _  _  0  root  _  _
"""


def test_reader_skips_ranges_and_empty_nodes_and_defaults_sent_id(tmp_path):
    path = tmp_path / "small.conllu"
    path.write_text(_conllu(MWT_EMPTY_NO_SENT_ID), encoding="utf-8")
    first, second = read_analysis_trees(path)
    assert first.sent_id == "1"  # no sent_id comment -> 1-based index as string
    assert first.sentence_index == 1
    assert first.lemmas == ("I", "be", "here")
    assert first.heads == (2, 0, 2)
    assert second.sent_id == "second"
    assert second.sentence_index == 2


# ---------------------------------------------------------------------------
# Whole treebank: en_ewt test
# ---------------------------------------------------------------------------


def _brute_force_matching(edge_list):
    """Largest set of pairwise vertex-disjoint edges, by plain recursion."""
    if not edge_list:
        return 0
    (a, b), rest = edge_list[0], edge_list[1:]
    without_first = _brute_force_matching(rest)
    disjoint = [(c, d) for (c, d) in rest if not ({c, d} & {a, b})]
    with_first = 1 + _brute_force_matching(disjoint)
    return max(without_first, with_first)


def _projective_by_crossings(tree):
    """Classic equivalent test: no two edges cross and no edge covers a root."""
    spans = [(min(h, d), max(h, d)) for h, d in ref.edges(tree)]
    for (a, b), (c, d) in combinations(spans, 2):
        if a < c < b < d or c < a < d < b:
            return False
    for r in ref.roots(tree):
        if any(a < r < b for a, b in spans):
            return False
    return True


@pytest.fixture(scope="module")
def en_ewt_trees():
    require_shared()
    trees = read_analysis_trees(EN_EWT_TEST)
    return trees, [sentence_metrics(t) for t in trees]


def test_en_ewt_reads_every_sentence_in_order(en_ewt_trees):
    """Speed is measured by the benchmarks (bench/), never asserted by a test."""
    trees, metrics = en_ewt_trees
    assert len(trees) == 2077
    assert [t.sentence_index for t in trees] == list(range(1, 2078))
    assert len({t.sent_id for t in trees}) == 2077
    # No sentence of this file has a punct root word, so every analysis tree
    # has exactly one root (or is empty).
    assert all(len(ref.roots(t)) == (1 if t.n else 0) for t in trees)


def test_en_ewt_mdd_equals_mfs(en_ewt_trees):
    trees, metrics = en_ewt_trees
    for tree, m in zip(trees, metrics):
        if tree.n == 0:
            continue
        # Both are integer totals over the same denominator n - 1, so the
        # identity holds exactly.
        assert m["mean_dependency_distance"] == m["mean_flux_size"], tree.sent_id


def test_en_ewt_internal_consistency(en_ewt_trees):
    trees, metrics = en_ewt_trees
    for tree, m in zip(trees, metrics):
        if tree.n == 0:
            continue
        n = tree.n
        assert m["tree_length"] == n
        assert m["mean_arity"] == pytest.approx((n - 1) / n), tree.sent_id
        assert 0 <= m["tree_depth"] <= n - 1
        assert m["mean_flux_weight"] <= m["mean_flux_size"]
        assert m["is_projective"] == _projective_by_crossings(tree), tree.sent_id
        for p in range(1, n):
            f = ref.flux(tree, p)
            assert max_disjoint_edges(f) == _brute_force_matching(f), (tree.sent_id, p)


def test_en_ewt_entropy_counts_cover_all_non_root_edges(en_ewt_trees):
    trees, _ = en_ewt_trees
    result = relation_entropy(trees)
    assert "punct" not in result
    assert "root" not in result
    total = sum(left + right for left, right, _h in result.values())
    assert total == sum(t.n - 1 for t in trees if t.n)
    for left, right, h in result.values():
        assert 0.0 <= h <= 1.0
        assert h == pytest.approx(ref.binary_entropy(left, right))
