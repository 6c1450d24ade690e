"""SPEC sections 1 and 2 computed by dbt, checked against SPEC's examples and an
independent pure-Python implementation (tests/support/reference_metrics.py) on all of en_ewt test."""

import math
import random
import statistics

import pytest

from srlens.udfs.flux import mean_flux_weight
from tests.conftest import EN_EWT_TEST
from tests.support.reference_metrics import max_disjoint_edges, read_analysis_trees, relation_entropy, sentence_metrics

METRICS = (
    "tree_depth",
    "tree_length",
    "mean_dependency_distance",
    "mean_flux_size",
    "mean_flux_weight",
    "mean_arity",
    "is_projective",
)


def rows(con, sql, params=()):
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def test_figure1_gives_the_spec_values(warehouse_con):
    (row,) = rows(warehouse_con, "select * from sentence_complexity where corpus = 'figure1'")
    assert row["sent_id"] == "figure1"
    assert (row["tree_depth"], row["tree_length"]) == (3, 8)
    assert row["mean_dependency_distance"] == 2.0
    assert row["mean_flux_size"] == 2.0
    assert row["mean_flux_weight"] == 1.0
    assert row["mean_arity"] == 0.875
    assert row["is_projective"] is True


@pytest.fixture(scope="module")
def reference_trees():
    return read_analysis_trees(EN_EWT_TEST)


def test_every_en_ewt_sentence_matches_the_python_reference(warehouse_con, reference_trees):
    sql_rows = {
        r["sent_id"]: r for r in rows(warehouse_con, "select * from sentence_complexity where corpus = 'en_ewt_test'")
    }
    assert len(sql_rows) == len(reference_trees) == 2077
    mismatches = []
    for tree in reference_trees:
        expected, got = sentence_metrics(tree), sql_rows[tree.sent_id]
        for metric in METRICS:
            e, g = expected[metric], got[metric]
            same = e == g if isinstance(e, (bool, int)) else math.isclose(e, g, rel_tol=0, abs_tol=1e-12)
            if not same:
                mismatches.append((tree.sent_id, metric, e, g))
    assert mismatches == []
    # The identity SPEC promises, on the SQL side alone.
    assert all(
        math.isclose(r["mean_dependency_distance"], r["mean_flux_size"], abs_tol=1e-12) for r in sql_rows.values()
    )
    # Guard against a vacuous comparison: the corpus has variety.
    assert sum(not r["is_projective"] for r in sql_rows.values()) > 0
    assert max(r["mean_flux_weight"] for r in sql_rows.values()) > 1.5


def random_forest(rng, n):
    """Heads of n words: one to three roots, every other word under a word placed before it in a
    random order (so non-projective trees and deep chains both occur)."""
    order = rng.sample(range(1, n + 1), n)
    roots = min(n, rng.choice((1, 1, 2, 3)))
    heads = {}
    for i, word in enumerate(order):
        heads[word] = 0 if i < roots else order[rng.randrange(i)]
    return [heads[word] for word in range(1, n + 1)]


def test_flux_weight_udf_equals_a_matching_per_position():
    """The UDF's all-positions bit sets against networkx's maximum matching at each position, on
    800 random forests of 1 to 20 words."""
    rng = random.Random(31)
    for _ in range(800):
        n = rng.randint(1, 20)
        heads = random_forest(rng, n)
        edges = [(min(d, h), max(d, h)) for d, h in enumerate(heads, start=1) if h != 0]
        fluxes = [[(a, b) for a, b in edges if a <= p < b] for p in range(1, n)]
        expected = sum(max_disjoint_edges(f) for f in fluxes) / (n - 1) if n > 1 else 0.0
        assert mean_flux_weight(heads) == expected, heads


def test_corpus_stats_match_python_means_and_sample_sds(warehouse_con, reference_trees):
    (stats,) = rows(warehouse_con, "select * from corpus_stats where corpus = 'en_ewt_test'")
    metrics = [sentence_metrics(t) for t in reference_trees]
    assert stats["sentences"] == 2077
    for metric, prefix in [
        ("tree_depth", "tree_depth"),
        ("tree_length", "tree_length"),
        ("mean_dependency_distance", "mdd"),
        ("mean_flux_size", "mfs"),
        ("mean_flux_weight", "mfw"),
        ("mean_arity", "mean_arity"),
    ]:
        values = [m[metric] for m in metrics]
        assert math.isclose(stats[f"{prefix}_mean"], statistics.fmean(values), rel_tol=1e-12)
        assert math.isclose(stats[f"{prefix}_sd"], statistics.stdev(values), rel_tol=1e-9)
    nonprojective = sum(not m["is_projective"] for m in metrics)
    assert math.isclose(stats["nonprojective_pct"], 100 * nonprojective / 2077, rel_tol=1e-12)


def test_relation_entropy_matches_the_python_reference(warehouse_con, reference_trees):
    expected = relation_entropy(reference_trees)
    got = {r["relation"]: r for r in rows(warehouse_con, "select * from relation_entropy where corpus = 'en_ewt_test'")}
    assert set(got) == set(expected)
    for relation, (left, right, entropy) in expected.items():
        assert (got[relation]["left_count"], got[relation]["right_count"]) == (left, right)
        assert math.isclose(got[relation]["entropy"], entropy, abs_tol=1e-12)


def test_entropy_example_20_left_80_right(warehouse_con):
    (row,) = rows(warehouse_con, "select * from relation_entropy where corpus = 'entropy_example'")
    assert (row["relation"], row["left_count"], row["right_count"]) == ("amod", 20, 80)
    assert round(row["entropy"], 2) == 0.72
    assert math.isclose(row["entropy"], -(0.2 * math.log2(0.2) + 0.8 * math.log2(0.8)), abs_tol=1e-15)


def test_fixed_direction_relation_has_zero_entropy(warehouse_con):
    # Figure 1: every compound precedes its head, so its entropy is exactly 0.
    (row,) = rows(warehouse_con, "select * from relation_entropy where corpus = 'figure1' and relation = 'compound'")
    assert (row["left_count"], row["right_count"], row["entropy"]) == (2, 0, 0.0)
    assert math.copysign(1, row["entropy"]) == 1  # not -0.0


def test_base_relation_pools_subtypes(warehouse_con):
    relations = {
        r["relation"] for r in rows(warehouse_con, "select relation from relation_entropy where corpus = 'figure1'")
    }
    assert relations == {"nsubj", "obj", "nmod", "case", "compound"}  # nmod:poss counted as nmod
