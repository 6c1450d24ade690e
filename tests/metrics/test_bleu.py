"""udfs.bleu against nltk's BLEU-4 with Chen & Cherry smoothing method 2.

Result (nltk 3.10.4, Python 3.11, duckdb 2.0.0): every score is *exactly*
equal to nltk's (float ==, same bits), in Python and through DuckDB SQL, for
sentence and corpus BLEU. The tests assert exact equality, which implies the
1e-12 tolerance from the specification.
"""

from __future__ import annotations

import random

import duckdb
import pyarrow as pa
import pytest
from nltk.translate.bleu_score import (
    SmoothingFunction,
    corpus_bleu,
    modified_precision,
)
from nltk.translate.bleu_score import sentence_bleu as nltk_sentence_bleu

from srlens.udfs import bleu

METHOD2 = SmoothingFunction().method2
N_RANDOM = 10_000

ENGLISH = [
    "the cat sit on the mat and look at the dog",
    "there be a cat on the mat",
    "it be a guide to action which ensure that the military always obey the command of the party",
    "he read the book because he be interested in world history",
    "i do not think that the meeting will be over before noon",
    "the quick brown fox jump over the lazy dog again and again",
    "we have to go to the store to buy some milk and some bread",
    "she say that she will call you back tomorrow morning",
]


def nltk_bleu(hyp, ref) -> float:
    return nltk_sentence_bleu([ref], hyp, smoothing_function=METHOD2)


def nltk_corpus(pairs) -> float:
    return corpus_bleu([[r] for _, r in pairs], [h for h, _ in pairs], smoothing_function=METHOD2)


def _perturb(rng: random.Random, tokens: list[str]) -> list[str]:
    out = list(tokens)
    for _ in range(rng.randint(0, 3)):  # local swaps
        if len(out) > 1:
            i = rng.randrange(len(out) - 1)
            out[i], out[i + 1] = out[i + 1], out[i]
    out = [t for t in out if rng.random() > 0.1]  # drops
    if out and rng.random() < 0.3:  # duplicate a word
        i = rng.randrange(len(out))
        out.insert(i, out[i])
    return out


def _random_len(rng: random.Random) -> int:
    u = rng.random()
    if u < 0.06:
        return 0
    if u < 0.30:
        return rng.randint(1, 3)
    if u < 0.90:
        return rng.randint(4, 15)
    return rng.randint(16, 80)


def _make_pairs() -> list[tuple[list[str], list[str]]]:
    rng = random.Random(1234)
    vocab = ["the", "a", "cat", "dog", "sit", "on", "mat"]
    pairs: list[tuple[list[str], list[str]]] = [
        ([], []),
        ([], ["the"]),
        (["the"], []),
        (["the"], ["the"]),
        (["the"], ["cat"]),
        (["the", "cat"], ["the", "cat"]),
        (["the", "cat", "sit"], ["the", "cat", "sit"]),
        (["the", "cat", "sit", "on"], ["the", "cat", "sit", "on"]),
        (["the", "the", "the", "the"], ["the", "cat", "sit", "on", "the", "mat"]),
        (["cat"] * 50, ["cat"]),
        (["cat"], ["cat"] * 50),
    ]
    for s in ENGLISH:
        words = s.split()
        pairs.append((words, words))
        for _ in range(20):
            pairs.append((_perturb(rng, words), words))
            pairs.append((words, _perturb(rng, words)))
    while len(pairs) < N_RANDOM:
        kind = rng.random()
        ref = [rng.choice(vocab) for _ in range(_random_len(rng))]
        if kind < 0.5:
            hyp = [rng.choice(vocab) for _ in range(_random_len(rng))]
        elif kind < 0.9:
            hyp = _perturb(rng, ref)
        else:  # short fragment of the reference
            k = rng.randint(0, min(4, len(ref)))
            i = rng.randint(0, len(ref) - k)
            hyp = ref[i : i + k]
        pairs.append((hyp, ref))
    return pairs


@pytest.fixture(scope="module")
def pairs():
    return _make_pairs()


@pytest.fixture(scope="module")
def expected(pairs):
    return [nltk_bleu(h, r) for h, r in pairs]


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    bleu.register(c)
    bleu.register_references(c)
    yield c
    c.close()


def _pairs_table(pairs, corpus_ids=None) -> pa.Table:
    cols = {
        "id": pa.array(range(len(pairs)), type=pa.int64()),
        "h": pa.array([h for h, _ in pairs], type=pa.list_(pa.string())),
        "r": pa.array([r for _, r in pairs], type=pa.list_(pa.string())),
    }
    if corpus_ids is not None:
        cols["corpus_id"] = pa.array(corpus_ids, type=pa.int64())
    return pa.table(cols)


def _assert_all_equal(got, want):
    assert len(got) == len(want)
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if not abs(g - w) <= 1e-12]
    assert not bad, f"{len(bad)} scores differ by more than 1e-12, e.g. {bad[:5]}"
    inexact = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not inexact, f"{len(inexact)} scores not bit-identical, e.g. {inexact[:5]}"
    assert all(type(g) is float for g in got)


def test_generated_pairs_cover_edge_cases(pairs, expected):
    assert len(pairs) >= N_RANDOM
    lens = [len(h) for h, _ in pairs]
    for n in (0, 1, 2, 3):
        assert lens.count(n) >= 100, n
    assert sum(1 for _, r in pairs if not r) >= 100
    assert max(lens) >= 60
    # matches frequent: many non-zero scores, and some perfect ones
    assert sum(1 for e in expected if e > 0) > len(pairs) // 2
    assert sum(1 for e in expected if e == 1.0) >= 10


def test_stats_match_nltk_modified_precision(pairs):
    for h, r in pairs[:3000]:
        st = bleu.bleu_stats(h, r)
        assert st[:2] == (len(h), len(r))
        for n in range(1, 5):
            p = modified_precision([r], h, n)
            assert (st[1 + n], st[5 + n]) == (p.numerator, p.denominator), (h, r, n)


def test_sentence_bleu_python_equals_nltk(pairs, expected):
    _assert_all_equal([bleu.sentence_bleu(h, r) for h, r in pairs], expected)
    # tuples and other sequences work too
    h, r = pairs[200]
    assert bleu.sentence_bleu(tuple(h), tuple(r)) == expected[200]


def test_known_values():
    # nltk edge cases: no unigram match -> 0 (nltk returns int 0)
    assert bleu.sentence_bleu([], []) == 0.0
    assert bleu.sentence_bleu([], ["a"]) == 0.0
    assert bleu.sentence_bleu(["a"], []) == 0.0
    # short perfect matches are < 1 because method 2 smooths orders 2..4
    assert bleu.sentence_bleu(["a"], ["a"]) == 0.5**0.75 == nltk_bleu(["a"], ["a"])
    assert bleu.sentence_bleu(list("abcd"), list("abcd")) == 1.0
    assert bleu.bleu_stats([], []) == (0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
    assert bleu.bleu_stats(["a", "a", "b"], ["a", "b", "a", "b"]) == (
        3, 4, 3, 1, 0, 0, 3, 2, 1, 1,
    )  # fmt: skip
    assert bleu.NLTK_COMPAT_VERSION == "3.10.4"


def test_sentence_bleu_sql_equals_nltk(con, pairs, expected):
    tbl = _pairs_table(pairs)  # noqa: F841 (DuckDB reads it by name)
    rows = con.execute("select id, srlens_sentence_bleu(h, r) from tbl order by id").fetchall()
    assert [i for i, _ in rows] == list(range(len(pairs)))
    _assert_all_equal([v for _, v in rows], expected)

    # via stats struct -> from_stats per row gives the same
    rows = con.execute(
        """
        select id, srlens_bleu_from_stats(s.hyp_len, s.ref_len, s.m1, s.m2, s.m3,
                                          s.m4, s.t1, s.t2, s.t3, s.t4)
        from (select id, srlens_bleu_stats(h, r) s from tbl)
        order by id
        """
    ).fetchall()
    _assert_all_equal([v for _, v in rows], expected)


def test_stats_sql_equals_python(con, pairs):
    tbl = _pairs_table(pairs[:3000])  # noqa: F841 (DuckDB reads it by name)
    got = con.execute("select s.* from (select id, srlens_bleu_stats(h, r) s from tbl) order by id").fetchall()
    assert got == [bleu.bleu_stats(h, r) for h, r in pairs[:3000]]
    desc = con.execute("select typeof(srlens_bleu_stats([], []))").fetchone()[0]
    assert desc == (
        "STRUCT(hyp_len BIGINT, ref_len BIGINT, m1 BIGINT, m2 BIGINT, m3 BIGINT, "
        "m4 BIGINT, t1 BIGINT, t2 BIGINT, t3 BIGINT, t4 BIGINT)"
    )


def _corpora(pairs):
    rng = random.Random(99)
    corpora = [
        pairs[:1],
        pairs[:11],  # hand-written edge cases, incl. empty hyps/refs
        pairs[11:200],  # English-derived
        [([], ["the", "cat"]), (["the", "cat", "sit"], ["the", "cat", "sit", "on"])],
        [(["x", "y"], ["a", "b", "c"]), (["z"], ["a"]), ([], ["a"])],  # no match
        [([], [])],
        [(["a", "b", "c", "d", "e"], ["a", "b"])],  # hyp longer -> bp = 1
        pairs,  # all 10k
    ]
    for size in (2, 3, 5, 10, 100, 1000):
        start = rng.randrange(len(pairs) - size)
        corpora.append(pairs[start : start + size])
    return corpora


@pytest.fixture(scope="module")
def corpora(pairs):
    corpora = _corpora(pairs)
    return corpora, [nltk_corpus(c) for c in corpora]


def test_corpus_bleu_python_equals_nltk(corpora):
    got = []
    for corpus in corpora[0]:
        sums = [sum(col) for col in zip(*(bleu.bleu_stats(h, r) for h, r in corpus))]
        got.append(bleu.bleu_from_stats(sums[0], sums[1], sums[2:6], sums[6:10]))
    _assert_all_equal(got, corpora[1])


def test_corpus_bleu_sql_equals_nltk(con, corpora):
    corpora, want = corpora
    flat = [p for c in corpora for p in c]
    ids = [k for k, c in enumerate(corpora) for _ in c]
    tbl = _pairs_table(flat, ids)  # noqa: F841 (DuckDB reads it by name)
    rows = con.execute(
        """
        select corpus_id,
               srlens_bleu_from_stats(sum(s.hyp_len), sum(s.ref_len),
                                      sum(s.m1), sum(s.m2), sum(s.m3), sum(s.m4),
                                      sum(s.t1), sum(s.t2), sum(s.t3), sum(s.t4))
        from (select corpus_id, srlens_bleu_stats(h, r) s from tbl)
        group by corpus_id
        order by corpus_id
        """
    ).fetchall()
    assert [k for k, _ in rows] == list(range(len(corpora)))
    _assert_all_equal([v for _, v in rows], want)
    assert want[4] == 0  # the no-unigram-match corpus
    assert 0 < want[3] < 1  # corpus with an empty hypothesis still scores


def test_null_in_null_out(con):
    got = con.execute(
        """
        select srlens_sentence_bleu(h, r), srlens_bleu_stats(h, r)
        from (values (NULL::VARCHAR[], ['a']), (['a'], NULL), (NULL, NULL),
                     ([], []), (['a'], ['a'])) t(h, r)
        """
    ).fetchall()
    assert [g[0] for g in got] == [None, None, None, 0.0, 0.5**0.75]
    assert [g[1] is None for g in got] == [True, True, True, False, False]
    assert got[3][1]["t1"] == 1

    got = con.execute(
        "select srlens_bleu_from_stats(NULL, 1, 1, 0, 0, 0, 1, 1, 1, 1),"
        "       srlens_bleu_from_stats(1, 1, 1, 0, 0, 0, 1, 1, 1, NULL),"
        "       srlens_bleu_from_stats(1, 1, 1, 0, 0, 0, 1, 1, 1, 1)"
    ).fetchone()
    assert got == (None, None, 0.5**0.75)

    # sum() over no rows is NULL -> NULL
    got = con.execute(
        """
        select srlens_bleu_from_stats(sum(s.hyp_len), sum(s.ref_len),
                                      sum(s.m1), sum(s.m2), sum(s.m3), sum(s.m4),
                                      sum(s.t1), sum(s.t2), sum(s.t3), sum(s.t4))
        from (select srlens_bleu_stats(['a'], ['a']) s where false)
        """
    ).fetchone()
    assert got == (None,)


# --------------------------------------------------------------------------- the set-based SQL statistics

SQL_STATS_SENTENCES = 400


@pytest.fixture(scope="module")
def stats_warehouse(pairs, tmp_path_factory):
    """A real build over the first generated pairs with a non-empty reference (a CoNLL-U sentence
    has words): small vocabulary, repeated words, empty and 1-3 word outputs, so the clipping of
    int_sentence_bleu_stats is exercised far beyond natural text. Two runs: the hypotheses, and the
    references themselves."""
    from srlens.build import build
    from srlens.loaders.load import load_outputs, load_treebank

    root = tmp_path_factory.mktemp("bleu_sql")
    chosen = [(h, r) for h, r in pairs if r][:SQL_STATS_SENTENCES]
    blocks, run = [], []
    for k, (h, r) in enumerate(chosen):
        rows = [
            f"{i}\t{w}\t{w}\tX\t_\t_\t{i - 1}\t{'root' if i == 1 else 'dep'}\t_\t_" for i, w in enumerate(r, start=1)
        ]
        blocks.append(f"# sent_id = s{k}\n" + "\n".join(rows) + "\n")
        run.append(f"# sent_id = s{k}\n# text = {' '.join(h)}\n")
    (root / "bleu.conllu").write_text("\n".join(blocks) + "\n")
    (root / "hyp.sr").write_text("\n".join(run) + "\n")
    (root / "ref.sr").write_text(
        "\n".join(f"# sent_id = s{k}\n# text = {' '.join(r)}\n" for k, (_, r) in enumerate(chosen)) + "\n"
    )
    wh = root / "wh.duckdb"
    load_treebank(wh, root / "bleu.conllu", "bleu")
    load_outputs(wh, root / "hyp.sr", "bleu", "gen", "hyp")
    load_outputs(wh, root / "ref.sr", "bleu", "gen", "ref")
    build(wh, echo=False, processor="aligned")
    c = duckdb.connect(str(wh), read_only=True)
    yield c
    c.close()


def _sql_stats_against_python(con):
    rows = con.execute(
        "select o.out_lemmas, o.ref_lemmas, s.hyp_len, s.ref_len, s.m1, s.m2, s.m3, s.m4, s.t1, s.t2, s.t3, s.t4, "
        "       s.bleu from intermediate.int_scored_outputs o "
        "full join intermediate.int_sentence_bleu_stats s using (submission_id, sent_idx)"
    ).fetchall()
    for out, ref, *stats, score in rows:
        assert tuple(stats) == bleu.bleu_stats(out, ref), (out, ref)
        assert score == nltk_bleu(out, ref), (out, ref)
    return rows


@pytest.mark.slow
def test_sql_statistics_equal_bleu_stats_on_generated_pairs(stats_warehouse):
    rows = _sql_stats_against_python(stats_warehouse)
    assert len(rows) == 2 * SQL_STATS_SENTENCES
    # the data reaches the cases that matter: clipped repeats, empty and short outputs, all orders
    assert sum(1 for out, _, *_ in rows if not out) >= 3
    assert sum(1 for out, _, *_ in rows if 1 <= len(out) <= 3) >= 30
    clipped = [(out, ref) for out, ref, *_ in rows if any(out.count(w) > ref.count(w) > 0 for w in set(out))]
    assert len(clipped) >= 50
    assert sum(1 for r in rows if r[7] > 0) >= 100  # m4 > 0
    # and the warehouse's corpus BLEU of each run is nltk's corpus_bleu over the same lists
    for run in ("hyp", "ref"):
        got = stats_warehouse.execute("select corpus_bleu from submission_scores where run = ?", [run]).fetchone()[0]
        lists = stats_warehouse.execute(
            "select o.out_lemmas, o.ref_lemmas from intermediate.int_scored_outputs o "
            "join staging.stg_submissions s using (submission_id) where s.run = ?",
            [run],
        ).fetchall()
        assert got == nltk_corpus(lists)


def test_sql_statistics_equal_bleu_stats_on_the_demo(warehouse_con):
    rows = _sql_stats_against_python(warehouse_con)
    assert len(rows) >= 3000
