"""Tests for udfs/accuracy.py (SPEC sections 5 and 7).

Every expected value below is worked out by hand in the comments; the random
tests compare against separately written (deliberately naive) implementations.
"""

from __future__ import annotations

import gc
import itertools
import random
from collections import Counter
from functools import cache

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from srlens.udfs.accuracy import (
    ACCURACY_FIELDS,
    COUNT_FIELDS,
    EditCounts,
    _units_edit_counts,
    batch_edit_counts,
    edit_counts,
    register,
    register_references,
    sentence_accuracies,
    srlens_accuracy_counts_arrow,
)
from srlens.udfs.collector import collector_paused

approx = pytest.approx


def U(sta, s):
    return (1.3147 * sta - 0.1039 * s - 0.4458) / 0.8689


def Q(sta, s):
    return (1.0192 * sta - 0.0869 * s - 0.3553) / 0.6639


def check(res, **expected):
    for key, value in expected.items():
        if value is None:
            assert res[key] is None, key
        elif key in COUNT_FIELDS:
            assert res[key] == value and isinstance(res[key], int), key
        else:
            assert res[key] == approx(value, abs=1e-12), key


# --------------------------------------------------------------------------
# SPEC worked example (Bangalore et al. 2000, example (2) and Table 1)
# --------------------------------------------------------------------------

SPEC_REF = "There was no cost estimate for the second phase".split()
SPEC_OUT = "There was estimate for phase the second no cost".split()
# Figure 2 of the paper is not in the text; this tree (XTAG style: the noun
# "estimate" heads the predicative construction) reproduces Table 1's tree
# columns exactly.  Treelets:
#   estimate {1..6}: ref 1 2 3 4 5 6, out order 1 2 5 6 3 4 -> LCS 4, cost 4:
#                    I=2 D=2 S=0, moves 2 (no, cost)
#   for {6,9}:       ref 6 9, out 6 9 -> 0
#   phase {7,8,9}:   ref 7 8 9, out 9 7 8 -> I=1 D=1, move 1
# Tree: I=3 D=3 S=0 M=3 -> STA = 1-6/9 = 1/3, GTA = 1-3/9 = 2/3; reorder 1/3.
SPEC_HEADS = [5, 5, 5, 5, 0, 5, 9, 9, 6]


def test_spec_example_string_counts():
    assert edit_counts([w.lower() for w in SPEC_REF], [w.lower() for w in SPEC_OUT]) == EditCounts(
        insertions=2, deletions=2, substitutions=1, moves=1
    )


def test_spec_example_accuracies():
    res = sentence_accuracies(SPEC_REF, SPEC_HEADS, SPEC_OUT)
    check(
        res,
        string_ins=2,
        string_del=2,
        string_sub=1,
        string_moves=1,
        simple_string_accuracy=1 - 5 / 9,
        generation_string_accuracy=1 - 4 / 9,
        tree_ins=3,
        tree_del=3,
        tree_sub=0,
        tree_moves=3,
        simple_tree_accuracy=1 / 3,
        generation_tree_accuracy=2 / 3,
        reorder_correct=1,
        reorder_total=3,
        reorder_accuracy=1 / 3,
        understandability_accuracy=U(1 / 3, 0),
        quality_accuracy=Q(1 / 3, 0),
    )
    assert round(res["simple_string_accuracy"], 2) == 0.44
    assert round(res["generation_string_accuracy"], 2) == 0.56


# --------------------------------------------------------------------------
# Hand-computed small cases
# --------------------------------------------------------------------------

# "the dog bark": the -> dog, dog -> bark, bark root.
# Treelets: dog {1,2}, bark {2,3}.
DOG = ["the", "dog", "bark"]
DOG_HEADS = [2, 3, 0]


def test_identical_output_is_perfect():
    res = sentence_accuracies(SPEC_REF, SPEC_HEADS, [w.upper() for w in SPEC_REF])  # case-insensitive
    for key in ACCURACY_FIELDS:
        assert res[key] == approx(1.0, abs=1e-12), key
    check(
        res,
        string_ins=0,
        string_del=0,
        string_sub=0,
        string_moves=0,
        tree_ins=0,
        tree_del=0,
        tree_sub=0,
        tree_moves=0,
        reorder_correct=3,
        reorder_total=3,
    )


def test_reversed_output():
    # String: the dog bark / bark dog the -> sub, match, sub (cost 2; the only
    # cost-2 alignment keeps 1 match): S=2, I=D=0 -> SSA = GSA = 1/3.
    # Treelet dog: [1,2] vs [2,1] -> cost 2, max matches 1: I=1 D=1 M=1.
    # Treelet bark: [2,3] vs [3,2] -> I=1 D=1 M=1.
    # Tree I=2 D=2 S=0 M=2: STA = 1-4/3 = -1/3, GTA = 1-2/3 = 1/3. Reorder 0/2.
    res = sentence_accuracies(DOG, DOG_HEADS, ["bark", "dog", "the"])
    check(
        res,
        string_ins=0,
        string_del=0,
        string_sub=2,
        string_moves=0,
        simple_string_accuracy=1 / 3,
        generation_string_accuracy=1 / 3,
        tree_ins=2,
        tree_del=2,
        tree_sub=0,
        tree_moves=2,
        simple_tree_accuracy=-1 / 3,
        generation_tree_accuracy=1 / 3,
        reorder_correct=0,
        reorder_total=2,
        reorder_accuracy=0.0,
        understandability_accuracy=U(-1 / 3, 0),
        quality_accuracy=Q(-1 / 3, 0),
    )


def test_missing_word():
    # "the" missing: string D=1 -> 2/3.  Treelet dog [1,2] vs [2]: D=1;
    # treelet bark intact.  STA = GTA = 2/3.  Reorder: dog wrong, bark right.
    res = sentence_accuracies(DOG, DOG_HEADS, ["dog", "bark"])
    check(
        res,
        string_ins=0,
        string_del=1,
        string_sub=0,
        string_moves=0,
        simple_string_accuracy=2 / 3,
        generation_string_accuracy=2 / 3,
        tree_ins=0,
        tree_del=1,
        tree_sub=0,
        tree_moves=0,
        simple_tree_accuracy=2 / 3,
        generation_tree_accuracy=2 / 3,
        reorder_correct=1,
        reorder_total=2,
        reorder_accuracy=0.5,
    )


def test_extra_word():
    # "big" inserted: string I=1 -> 2/3.  "big" maps to no reference word, so
    # it is in no treelet: tree accuracies 1, both treelets in order.
    res = sentence_accuracies(DOG, DOG_HEADS, ["the", "big", "dog", "bark"])
    check(
        res,
        string_ins=1,
        string_del=0,
        string_sub=0,
        string_moves=0,
        simple_string_accuracy=2 / 3,
        generation_string_accuracy=2 / 3,
        tree_ins=0,
        tree_del=0,
        tree_sub=0,
        tree_moves=0,
        simple_tree_accuracy=1.0,
        generation_tree_accuracy=1.0,
        reorder_correct=2,
        reorder_total=2,
        reorder_accuracy=1.0,
        understandability_accuracy=1.0,
        quality_accuracy=1.0,
    )


def test_repeated_lemmas_kth_occurrence():
    # ref  1 the 2 cat 3 see 4 the 5 dog; the->cat, cat->see, the->dog, dog->see.
    # Treelets: cat {1,2}, see {2,3,5}, dog {4,5}.
    # out  "the dog see the cat": string the=, cat/dog sub, see=, the=, dog/cat
    # sub: S=2 (cost 2) -> SSA = GSA = 3/5.
    # Mapping k-th to k-th: the->1, dog->5, see->3, the->4, cat->2: [1,5,3,4,2].
    #   cat [1,2] vs [1,2]: 0, correct.
    #   see [2,3,5] vs [5,3,2]: LCS 1, cost 2 via two subs: S=2.
    #   dog [4,5] vs [5,4]: I=1 D=1 M=1.
    # Tree I=1 D=1 S=2 M=1: STA = 1-4/5 = 0.2, GTA = 1-3/5 = 0.4; reorder 1/3.
    # (Mapping the first output "the" to position 4 instead would make the dog
    # treelet look correct, so this case fails if occurrences are mixed up.)
    ref = ["the", "cat", "see", "the", "dog"]
    heads = [2, 3, 0, 5, 3]
    res = sentence_accuracies(ref, heads, ["The", "dog", "see", "the", "cat"])
    check(
        res,
        string_ins=0,
        string_del=0,
        string_sub=2,
        string_moves=0,
        simple_string_accuracy=0.6,
        generation_string_accuracy=0.6,
        tree_ins=1,
        tree_del=1,
        tree_sub=2,
        tree_moves=1,
        simple_tree_accuracy=0.2,
        generation_tree_accuracy=0.4,
        reorder_correct=1,
        reorder_total=3,
        reorder_accuracy=1 / 3,
        # U = (1.3147*0.2 - 0.1039*2 - 0.4458)/0.8689 = -0.39066/0.8689
        # Q = (1.0192*0.2 - 0.0869*2 - 0.3553)/0.6639 = -0.32526/0.6639
        understandability_accuracy=-0.39066 / 0.8689,
        quality_accuracy=-0.32526 / 0.6639,
    )


def test_empty_output():
    # All reference words missing: string D=3 -> 0.  Treelets dog and bark each
    # fully deleted: tree D=4 -> STA = GTA = 1-4/3 = -1/3.  Reorder 0/2.
    res = sentence_accuracies(DOG, DOG_HEADS, [])
    check(
        res,
        string_ins=0,
        string_del=3,
        string_sub=0,
        string_moves=0,
        simple_string_accuracy=0.0,
        generation_string_accuracy=0.0,
        tree_ins=0,
        tree_del=4,
        tree_sub=0,
        tree_moves=0,
        simple_tree_accuracy=-1 / 3,
        generation_tree_accuracy=-1 / 3,
        reorder_correct=0,
        reorder_total=2,
        reorder_accuracy=0.0,
        understandability_accuracy=U(-1 / 3, 0),
        quality_accuracy=Q(-1 / 3, 0),
    )


def test_one_word_reference():
    # No treelets: tree counts 0 -> STA = GTA = 1 whatever the output; reorder 0/0 -> None.
    same = sentence_accuracies(["rain"], [0], ["Rain"])
    check(
        same,
        simple_string_accuracy=1.0,
        generation_string_accuracy=1.0,
        simple_tree_accuracy=1.0,
        generation_tree_accuracy=1.0,
        reorder_total=0,
        reorder_correct=0,
        reorder_accuracy=None,
    )
    other = sentence_accuracies(["rain"], [0], ["snow"])  # S=1 -> 0
    check(
        other,
        string_sub=1,
        string_ins=0,
        string_del=0,
        simple_string_accuracy=0.0,
        generation_string_accuracy=0.0,
        simple_tree_accuracy=1.0,
        reorder_accuracy=None,
    )
    empty = sentence_accuracies(["rain"], [0], [])  # D=1 -> 0
    check(
        empty,
        string_del=1,
        simple_string_accuracy=0.0,
        simple_tree_accuracy=1.0,
        understandability_accuracy=1.0,
        quality_accuracy=1.0,
    )


def test_small_tree_two_treelets():
    # ref 1 the 2 old 3 dog 4 bark 5 loudly; the,old -> dog; dog,loudly -> bark.
    # Treelets: dog {1,2,3}, bark {3,4,5}.
    # out "bark loudly the old dog".
    # String: LCS "the old dog" (3); ins bark, ins loudly, the old dog, del
    # bark, del loudly: cost 4.  No cost-3 alignment (would need 3 in-order
    # matches with one gap each way, impossible here) -> I=2 D=2 S=0,
    # moves bark and loudly: M=2.  SSA = 1-4/5 = 0.2, GSA = 1-2/5 = 0.6.
    # Positions in output order: [4,5,1,2,3].
    #   dog [1,2,3] vs [1,2,3]: correct.
    #   bark [3,4,5] vs [4,5,3]: del 3, 4, 5, ins 3: I=1 D=1 M=1.
    # Tree I=1 D=1 S=0 M=1: STA = 0.6, GTA = 0.8.  Reorder 1/2.
    # U = (1.3147*0.6 - 0.4458)/0.8689 = 0.34302/0.8689
    # Q = (1.0192*0.6 - 0.3553)/0.6639 = 0.25622/0.6639
    ref = ["the", "old", "dog", "bark", "loudly"]
    heads = [3, 3, 4, 0, 4]
    res = sentence_accuracies(ref, heads, ["bark", "loudly", "the", "old", "dog"])
    check(
        res,
        string_ins=2,
        string_del=2,
        string_sub=0,
        string_moves=2,
        simple_string_accuracy=0.2,
        generation_string_accuracy=0.6,
        tree_ins=1,
        tree_del=1,
        tree_sub=0,
        tree_moves=1,
        simple_tree_accuracy=0.6,
        generation_tree_accuracy=0.8,
        reorder_correct=1,
        reorder_total=2,
        reorder_accuracy=0.5,
        understandability_accuracy=0.34302 / 0.8689,
        quality_accuracy=0.25622 / 0.6639,
    )


def test_substitution_preferred_over_ins_del_and_matches_maximised():
    # a b / b a: cost 2 either as two subs (0 matches) or del+ins (1 match);
    # the tie-break takes the one with more matches.
    assert edit_counts(["a", "b"], ["b", "a"]) == EditCounts(1, 1, 0, 1)
    # a / b: one substitution (cost 1) beats del+ins (cost 2).
    assert edit_counts(["a"], ["b"]) == EditCounts(0, 0, 1, 0)
    # deletion and insertion of different tokens are not a move
    assert edit_counts(["a", "b", "c"], ["b", "c", "d"]) == EditCounts(1, 1, 0, 0)


def test_null_and_empty_reference():
    assert all(v is None for v in sentence_accuracies(DOG, DOG_HEADS, None).values())
    assert all(v is None for v in sentence_accuracies(None, None, ["a"]).values())
    res = sentence_accuracies([], [], ["a", "b"])
    for key in ACCURACY_FIELDS:
        assert res[key] is None, key
    check(
        res,
        string_ins=2,
        string_del=0,
        string_sub=0,
        string_moves=0,
        tree_ins=0,
        tree_del=0,
        reorder_total=0,
        reorder_correct=0,
    )


@pytest.mark.parametrize("heads", [[2, 3], [2, 3, 4], [1, 3, 0], [2, None, 0]])
def test_malformed_tree_rejected(heads):
    with pytest.raises(ValueError):
        sentence_accuracies(DOG, heads, DOG)


# --------------------------------------------------------------------------
# Independent checks on random pairs
# --------------------------------------------------------------------------


def naive_levenshtein(a, b):
    # two-row textbook DP, unit costs
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def best_cost_then_matches(a, b):
    """(min cost, max matches among min-cost alignments) by plain recursion."""
    a, b = tuple(a), tuple(b)

    @cache
    def go(i, j):
        if i == len(a):
            return (len(b) - j, 0)
        if j == len(b):
            return (len(a) - i, 0)
        c, m = go(i + 1, j + 1)
        options = [(c, m + 1) if a[i] == b[j] else (c + 1, m)]
        c, m = go(i + 1, j)
        options.append((c + 1, m))
        c, m = go(i, j + 1)
        options.append((c + 1, m))
        return min(options, key=lambda t: (t[0], -t[1]))

    return go(0, 0)


def brute_reorder(ref, heads, out):
    ref = [w.lower() for w in ref]
    out = [w.lower() for w in out]
    correct = total = 0
    for h in range(1, len(ref) + 1):
        deps = [d for d in range(1, len(ref) + 1) if heads[d - 1] == h]
        if not deps:
            continue
        total += 1
        out_index = []
        for p in sorted(deps + [h]):
            k = ref[: p - 1].count(ref[p - 1])  # earlier occurrences of this lemma
            hits = [i for i, w in enumerate(out) if w == ref[p - 1]]
            out_index.append(hits[k] if k < len(hits) else None)
        if None not in out_index and all(x < y for x, y in zip(out_index, out_index[1:])):
            correct += 1
    return correct, total


def tree_problems_naive(ref, heads, out):
    """Sum over treelets of Levenshtein distance between position strings."""
    ref = [w.lower() for w in ref]
    out = [w.lower() for w in out]
    # map output word -> reference position by scanning
    used = set()
    out_pos = []
    for w in out:
        pos = next((p for p in range(1, len(ref) + 1) if ref[p - 1] == w and p not in used), None)
        if pos is not None:
            used.add(pos)
        out_pos.append(pos)
    total = 0
    for h in range(1, len(ref) + 1):
        members = sorted([h] + [d for d in range(1, len(ref) + 1) if heads[d - 1] == h])
        if len(members) == 1:
            continue
        total += naive_levenshtein(members, [p for p in out_pos if p in members])
    return total


VOCAB = ["a", "b", "c", "d", "e", "A", "B"]


def random_tree(rng, n):
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [0] * n
    for idx, node in enumerate(order[1:], 1):
        heads[node - 1] = rng.choice(order[:idx])
    return heads


def random_pair(rng):
    n = rng.randint(0, 9)
    ref = [rng.choice(VOCAB) for _ in range(n)]
    heads = random_tree(rng, n)
    out = list(ref)
    for _ in range(rng.randint(0, 4)):
        op = rng.random()
        if op < 0.3 and len(out) > 1:
            i, j = rng.randrange(len(out)), rng.randrange(len(out))
            out.insert(j, out.pop(i))
        elif op < 0.5 and out:
            out.pop(rng.randrange(len(out)))
        elif op < 0.7:
            out.insert(rng.randint(0, len(out)), rng.choice(VOCAB))
        elif op < 0.85 and out:
            out[rng.randrange(len(out))] = rng.choice(VOCAB)
        else:
            out = [w.swapcase() for w in out]
    return ref, heads, out


def test_random_pairs_against_naive_implementations():
    rng = random.Random(20000)
    for _ in range(2000):
        ref, heads, out = random_pair(rng)
        res = sentence_accuracies(ref, heads, out)
        lref = [w.lower() for w in ref]
        lout = [w.lower() for w in out]

        i, d, s, m = res["string_ins"], res["string_del"], res["string_sub"], res["string_moves"]
        assert i + d + s == naive_levenshtein(lref, lout), (ref, out)
        cost, matches = best_cost_then_matches(lref, lout)
        expected_s = len(ref) + len(out) - 2 * matches - cost
        assert (i, d, s) == (len(out) - matches - expected_s, len(ref) - matches - expected_s, expected_s)
        assert 0 <= m <= min(i, d)

        tree_problems = res["tree_ins"] + res["tree_del"] + res["tree_sub"]
        assert tree_problems == tree_problems_naive(ref, heads, out), (ref, heads, out)
        assert 0 <= res["tree_moves"] <= min(res["tree_ins"], res["tree_del"])

        correct, total = brute_reorder(ref, heads, out)
        assert (res["reorder_correct"], res["reorder_total"]) == (correct, total), (ref, heads, out)
        if total:
            assert res["reorder_accuracy"] == approx(correct / total)
        else:
            assert res["reorder_accuracy"] is None

        if ref:
            n = len(ref)
            assert res["simple_string_accuracy"] == approx(1 - (i + d + s) / n)
            assert res["generation_string_accuracy"] == approx(1 - (i + d + s - m) / n)
            assert res["generation_tree_accuracy"] == approx(1 - (tree_problems - res["tree_moves"]) / n)
            assert res["understandability_accuracy"] == approx(U(res["simple_tree_accuracy"], res["tree_sub"]))
            assert res["quality_accuracy"] == approx(Q(res["simple_tree_accuracy"], res["tree_sub"]))
        else:
            assert res["simple_string_accuracy"] is None


# --------------------------------------------------------------------------
# SQL
# --------------------------------------------------------------------------


@pytest.fixture
def con():
    c = duckdb.connect(":memory:")
    register(c)
    register_references(c)
    yield c
    c.close()


def test_sql_struct_type(con):
    (typ,) = con.execute("SELECT typeof(srlens_accuracies(['a'], [0], ['a']))").fetchone()
    expected = ", ".join([f"{k} DOUBLE" for k in ACCURACY_FIELDS] + [f"{k} INTEGER" for k in COUNT_FIELDS])
    assert typ == f"STRUCT({expected})"


def test_sql_matches_python(con):
    rng = random.Random(7)
    rows = [
        (0, SPEC_REF, SPEC_HEADS, SPEC_OUT),
        (1, DOG, DOG_HEADS, []),
        (2, ["rain"], [0], ["snow"]),
        (3, [], [], ["a"]),
    ]
    # > 2048 rows so the UDF sees several vectors
    rows += [(k, *random_pair(rng)) for k in range(4, 2600)]
    pairs = pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int32()),
            "ref": pa.array([r[1] for r in rows], pa.list_(pa.string())),
            "heads": pa.array([r[2] for r in rows], pa.list_(pa.int32())),
            "out": pa.array([r[3] for r in rows], pa.list_(pa.string())),
        }
    )
    con.register("pairs", pairs)
    got = con.execute("SELECT id, srlens_accuracies(ref, heads, out) FROM pairs ORDER BY id").fetchall()
    assert len(got) == len(rows)
    for (rid, struct), (_, ref, heads, out) in zip(got, rows):
        expected = sentence_accuracies(ref, heads, out)
        assert set(struct) == set(expected)
        for key, value in expected.items():
            if value is None:
                assert struct[key] is None, (rid, key)
            else:
                # same Python computation, float64 round trip: exactly equal
                assert struct[key] == value, (rid, key)

    spec = dict(got[0][1])
    assert spec["simple_string_accuracy"] == approx(1 - 5 / 9)
    assert spec["generation_string_accuracy"] == approx(1 - 4 / 9)
    assert (spec["string_sub"], spec["string_ins"], spec["string_del"], spec["string_moves"]) == (1, 2, 2, 1)


def test_sql_null_in_null_out(con):
    got = con.execute(
        """
        SELECT srlens_accuracies(r, h, o) IS NULL
        FROM (VALUES
            (['a','b'], [2, 0], NULL::VARCHAR[]),
            (NULL::VARCHAR[], NULL::INTEGER[], ['a']),
            (['a','b'], NULL::INTEGER[], ['a','b']),
            (['a','b'], [2, 0], ['b','a'])
        ) t(r, h, o)
        """
    ).fetchall()
    assert [x for (x,) in got] == [True, True, True, False]
    (sa,) = con.execute("SELECT srlens_accuracies(['a','b'], [2, 0], ['b','a']).simple_string_accuracy").fetchone()
    assert sa == approx(0.0)  # a b / b a: I=1 D=1 -> 1 - 2/2


def plain_edit_counts(ref, out):
    """The same alignment rule without any shortcut: full DP with the builtin min, full backtrace."""
    n, m = len(ref), len(out)
    k = min(n, m) + 1
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        d[i][0] = i * k
    for j in range(1, m + 1):
        d[0][j] = j * k
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j - 1] + (-1 if ref[i - 1] == out[j - 1] else k), d[i - 1][j] + k, d[i][j - 1] + k)
    deleted, inserted, subs, i, j = [], [], 0, n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + (-1 if ref[i - 1] == out[j - 1] else k):
            subs += ref[i - 1] != out[j - 1]
            i, j = i - 1, j - 1
        elif i > 0 and d[i][j] == d[i - 1][j] + k:
            deleted.append(ref[i - 1])
            i -= 1
        else:
            inserted.append(out[j - 1])
            j -= 1
    moves = sum(min(c, Counter(inserted)[t]) for t, c in Counter(deleted).items())
    return (len(inserted), len(deleted), subs, moves)


def test_the_fast_paths_choose_the_same_alignment_as_the_plain_dp():
    # Equal sequences and a common suffix are shortcuts of udfs/accuracy.py; on a two-letter
    # alphabet ties between alignments are everywhere, so a wrong shortcut changes the moves.
    rng = random.Random(7)
    for _ in range(20000):
        ref = [rng.choice("ab") for _ in range(rng.randint(0, 8))]
        out = [rng.choice("ab") for _ in range(rng.randint(0, 8))]
        if rng.random() < 0.3:
            tail = [rng.choice("ab") for _ in range(rng.randint(1, 4))]
            ref, out = ref + tail, out + tail
        assert tuple(edit_counts(ref, out)) == plain_edit_counts(ref, out), (ref, out)


def units_edit_counts(pairs):
    """_units_edit_counts (what srlens_accuracy_counts aligns its units with) of pairs of sequences."""
    flat = [list(itertools.chain.from_iterable(side)) for side in zip(*pairs)] if pairs else [[], []]
    n, m = (np.array([len(p[side]) for p in pairs], np.int64) for side in (0, 1))
    shared = np.array([sum((Counter(ref) & Counter(out)).values()) for ref, out in pairs], np.int64)
    counts = _units_edit_counts(
        np.array(flat[0], np.int64), np.cumsum(n) - n, n, np.array(flat[1], np.int64), np.cumsum(m) - m, m, shared
    )
    return [tuple(c) for c in counts.tolist()]


def test_the_compiled_distance_and_the_kept_patterns_choose_the_same_alignment_as_the_plain_dp():
    # _units_edit_counts: I, D, S from rapidfuzz's weighted distance, moves from the token counts,
    # from small units' patterns of equal tokens (kept across calls) or from the batched programme.
    # Shuffles and swaps of repeated tokens are where ties between alignments change which tokens
    # move; the same pattern under other labels (positions of other treelets, other lemma ids) is
    # a lookup, and must give what the plain DP gives for those labels.
    rng = random.Random(11)
    pairs = []
    for _ in range(20000):
        ref = [rng.choice((0, 1, 2)[: rng.randint(1, 3)]) for _ in range(rng.randint(0, rng.choice((10, 30))))]
        kind = rng.random()
        if kind < 0.3:
            out = rng.sample(ref, rng.randint(0, len(ref)))
        elif kind < 0.6:
            out = list(ref)
            for i in range(len(out) - 1):
                if rng.random() < 0.2:
                    out[i], out[i + 1] = out[i + 1], out[i]
        else:
            out = [rng.choice((0, 1, 2, 3)) for _ in range(rng.randint(0, 10))]
        labels = rng.sample(range(100), 4)
        pairs += [(ref, out), ([labels[t] for t in ref], [labels[t] for t in out])]
    for _ in range(2):  # the second time, the small units' moves are looked up
        for (ref, out), counts in zip(pairs, units_edit_counts(pairs)):
            assert counts == plain_edit_counts(ref, out), (ref, out)
    assert units_edit_counts([([4, 9], [9, 4]), ([1, 2], [2, 1]), ([4, 4], [4, 4, 4]), ([4, 5], [4, 5, 6])]) == [
        (1, 1, 0, 1),
        (1, 1, 0, 1),
        (1, 0, 0, 0),
        (1, 0, 0, 0),
    ]
    # one sequence of tokens split in two places: the pattern must tell where the output starts
    assert units_edit_counts([([0, 0, 1], [1, 1, 2, 0]), ([0, 0, 1, 1], [1, 2, 0])]) == [(2, 1, 1, 1), (1, 2, 1, 0)]
    assert units_edit_counts([]) == []


@pytest.mark.slow  # exhaustive: minutes of CPU
def test_a_common_prefix_changes_no_count_of_the_plain_dp():
    # _units_edit_counts strips it before aligning: every pair over three tokens up to length 6.
    for n, m in itertools.product(range(7), repeat=2):
        for ref in itertools.product("abc", repeat=n):
            for out in itertools.product("abc", repeat=m):
                start = 0
                while start < min(n, m) and ref[start] == out[start]:
                    start += 1
                if start:
                    assert plain_edit_counts(ref[start:], out[start:]) == plain_edit_counts(ref, out), (ref, out)


def random_sentences(rng, count, longest=14):
    """(lemmas, heads, out): random trees and outputs with repeated lemmas, missing and extra words,
    swaps and shuffles."""
    for _ in range(count):
        n = rng.randint(0, longest)
        lemmas = [rng.choice("abcdefg"[: rng.randint(1, 7)]) for _ in range(n)]
        # a random tree: the words attached in a random order, each to one attached before it
        attached = rng.sample(range(1, n + 1), n)
        heads = [0] * n
        for i, pos in enumerate(attached[1:], start=1):
            heads[pos - 1] = rng.choice(attached[:i])
        order = list(range(n))
        permuted = rng.sample(order, n) if rng.random() < 0.3 else order
        for i in range(n - 1):
            if rng.random() < 0.2:
                permuted[i], permuted[i + 1] = permuted[i + 1], permuted[i]
        out = [lemmas[i] for i in permuted if rng.random() > 0.1] + rng.sample("abcxy", rng.randint(0, 2))
        yield lemmas, heads, out


def test_accuracy_counts_equal_the_python_definition():
    # srlens_accuracy_counts_arrow (the build's counts) against sentence_accuracies, in batches of 500
    rows = list(random_sentences(random.Random(17), 5000))
    for start in range(0, len(rows), 500):
        batch = rows[start : start + 500]
        columns = (pa.array(column, type=pa.list_(t)) for column, t in zip(zip(*batch), TYPES))
        for (lemmas, heads, out), counts in zip(batch, srlens_accuracy_counts_arrow(*columns).to_pylist()):
            want = sentence_accuracies(lemmas, heads, out)
            assert counts == {f: want[f] for f in COUNT_FIELDS}, (lemmas, heads, out)


def test_batched_dynamic_programme_equals_the_plain_dp():
    # batch_edit_counts aligns many units in one set of arrays (padded to the longest, sorted by
    # size): units of every size from empty on, ties everywhere (few distinct tokens), negative
    # tokens.
    rng = random.Random(19)
    pairs = []
    for _ in range(3000):
        alphabet = range(-2, rng.randint(0, 5))
        ref = [rng.choice(alphabet) for _ in range(rng.randint(0, rng.choice((3, 12, 40))))]
        if rng.random() < 0.5:
            out = rng.sample(ref, len(ref))
            for i in range(len(out) - 1):
                if rng.random() < 0.1:
                    out[i] = rng.choice(alphabet)
        else:
            out = [rng.choice(alphabet) for _ in range(rng.randint(0, 30))]
        pairs.append((ref, out))
    got = batch_edit_counts(pairs)
    assert got.shape == (3000, 4)
    for (ref, out), counts in zip(pairs, got.tolist()):
        assert tuple(counts) == plain_edit_counts(ref, out), (ref, out)
    assert batch_edit_counts([]).shape == (0, 4)
    # the SPEC example's string unit: one move (module docstring of udfs/accuracy.py)
    assert batch_edit_counts([([1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 5, 6, 9, 7, 8, 3, 4])]).tolist() == [[2, 2, 1, 1]]


def test_the_batched_udf_equals_the_python_definition():
    # srlens_accuracy_counts_arrow leaves the moves of the units that need the dynamic programme to
    # one batch_edit_counts call per batch and adds them to their rows: longer sentences (many such
    # units, strings and treelets) and NULL rows in between; the collector's state is restored.
    rows = list(random_sentences(random.Random(23), 1500, longest=40))
    rows[7] = (None, None, ["a"])
    refs, heads, outs = (pa.array(column, type=pa.list_(t)) for column, t in zip(zip(*rows), TYPES))
    got = srlens_accuracy_counts_arrow(refs, heads, outs).to_pylist()
    for (lemmas, tree, out), counts in zip(rows, got):
        if lemmas is None:
            assert counts is None
            continue
        want = sentence_accuracies(lemmas, tree, out)
        assert counts == {f: want[f] for f in COUNT_FIELDS}, (lemmas, tree, out)
    assert gc.isenabled()
    gc.disable()
    try:
        srlens_accuracy_counts_arrow(refs, heads, outs)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_stays_paused_until_the_last_overlapping_udf_ends():
    # dbt runs two models at a time: a UDF that ends while another is still paused must not turn the
    # collector back on under it, and the last one to end restores the state the first one found.
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


TYPES = (pa.string(), pa.int32(), pa.string())


def test_sql_accuracy_counts(con):
    # the SPEC example's counts; an empty reference (every word inserted, no treelet); an empty
    # output; NULL in, NULL out; a NULL lemma fails the query.
    ref = [w.lower() for w in SPEC_REF]
    out = [w.lower() for w in SPEC_OUT]
    want = sentence_accuracies(ref, SPEC_HEADS, out)
    rows = con.execute(
        "SELECT srlens_accuracy_counts(r, h, o) FROM (VALUES (?, ?, ?), ([], [], ['a', 'b']), "
        "(['a', 'b'], [0, 1], []), (NULL, NULL, ['a'])) t(r, h, o)",
        [ref, SPEC_HEADS, out],
    ).fetchall()
    assert [r[0] for r in rows] == [
        {f: want[f] for f in COUNT_FIELDS},
        dict.fromkeys(COUNT_FIELDS, 0) | {"string_ins": 2},
        dict.fromkeys(COUNT_FIELDS, 0) | {"string_del": 2, "tree_del": 2, "reorder_total": 1},
        None,
    ]
    with pytest.raises(duckdb.Error, match="NULL lemma in output"):
        con.execute("SELECT srlens_accuracy_counts(['a'], [0], ['a', NULL])").fetchall()
