"""sacreBLEU and chrF (SPEC 13): the warehouse's figures equal sacrebleu's own API on the same texts
(sentence_bleu, sentence_chrf, corpus_bleu, corpus_chrf) to 1e-9, for every run and sentence of the
shared build; the formulas of udfs/mt_scores.py equal sacrebleu's on edge cases."""

import random
from collections import defaultdict

import duckdb
import numpy as np
import pytest
import sacrebleu

from srlens.udfs import mt_scores

TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def con(built_warehouse):
    con = duckdb.connect(str(built_warehouse), read_only=True)
    yield con
    con.close()


def pairs_of_runs(con):
    """{submission_id: [(sent_idx, output text or None when missing, reference text or None)]}."""
    rows = con.execute("""
        select o.submission_id, o.sent_idx, case when not o.is_missing then o.output_text end, r.reference_text
        from staging.stg_outputs o
        join staging.stg_submissions s using (submission_id)
        left join staging.stg_sentences r on r.corpus = s.corpus and r.sent_idx = o.sent_idx
        order by o.submission_id, o.sent_idx""").fetchall()
    runs = defaultdict(list)
    for submission_id, sent_idx, hyp, ref in rows:
        runs[submission_id].append((sent_idx, hyp, ref))
    return runs


def test_sentence_scores_equal_sacrebleu_sentence_bleu_and_chrf_on_every_sentence(con):
    runs = pairs_of_runs(con)
    stored = {
        (s, i): (b, c)
        for s, i, b, c in con.execute(
            "select submission_id, sent_idx, sacrebleu_bleu, chrf from sentence_scores"
        ).fetchall()
    }
    checked = 0
    for submission_id, sentences in runs.items():
        for sent_idx, hyp, ref in sentences:
            bleu, chrf = stored[(submission_id, sent_idx)]
            if hyp is None or ref is None:  # missing sentence, or a reference without text
                assert bleu is None and chrf is None, (submission_id, sent_idx)
                continue
            assert bleu == pytest.approx(sacrebleu.sentence_bleu(hyp, [ref]).score, abs=TOLERANCE, rel=0)
            assert chrf == pytest.approx(sacrebleu.sentence_chrf(hyp, [ref]).score, abs=TOLERANCE, rel=0)
            checked += 1
    assert checked >= 3000  # the demo's 16 runs of 200 sentences, with text


def test_submission_scores_equal_sacrebleu_corpus_bleu_and_chrf_for_every_run(con):
    stored = {
        s: (b, c)
        for s, b, c in con.execute("select submission_id, sacrebleu_bleu, chrf from submission_scores").fetchall()
    }
    scored = 0
    for submission_id, sentences in pairs_of_runs(con).items():
        # a run's corpus scores cover its realized sentences (a missing one is no hypothesis, as in corpus_bleu)
        realized = [(h, r) for _, h, r in sentences if h is not None and r is not None]
        bleu, chrf = stored[submission_id]
        if not realized:
            assert bleu is None and chrf is None, submission_id
            continue
        hyps, refs = [h for h, _ in realized], [r for _, r in realized]
        assert bleu == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=TOLERANCE, rel=0)
        assert chrf == pytest.approx(sacrebleu.corpus_chrf(hyps, [refs]).score, abs=TOLERANCE, rel=0)
        scored += 1
    assert scored >= 16


def test_signatures_are_sacrebleus_own(con):
    signatures = con.execute("""
        select distinct sacrebleu_bleu_signature, sacrebleu_sentence_bleu_signature, chrf_signature
        from submission_scores""").fetchall()
    version = sacrebleu.__version__
    assert signatures == [
        (
            f"nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{version}",
            f"nrefs:1|case:mixed|eff:yes|tok:13a|smooth:exp|version:{version}",
            f"nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:{version}",
        )
    ]
    hyp, ref = ["the cat sat"], [["the cat sat down"]]
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    bleu.corpus_score(hyp, ref), chrf.corpus_score(hyp, ref)
    assert (str(bleu.get_signature()), str(chrf.get_signature())) == (signatures[0][0], signatures[0][2])


def test_the_significance_tests_and_buckets_use_the_same_corpus_scores(con):
    """pairwise_significance's observed values and a bucket holding every sentence are the run's scores."""
    differences = con.execute("""
        select max(abs(p.value_a - s.sacrebleu_bleu)) filter (where p.metric = 'sacrebleu_bleu'),
               max(abs(p.value_a - s.chrf)) filter (where p.metric = 'chrf'),
               count(*) filter (where p.metric in ('sacrebleu_bleu', 'chrf'))
        from pairwise_significance p join submission_scores s on s.submission_id = p.submission_a
        where p.n = s.sentences""").fetchone()
    assert differences[0] < TOLERANCE and differences[1] < TOLERANCE and differences[2] > 0
    # projectivity splits a run's sentences in two: their summed statistics are the run's
    runs = con.execute("""
        select b.submission_id, list(b.bucket order by b.bucket_no), any_value(s.sacrebleu_bleu)
        from bucket_scores b join submission_scores s using (submission_id)
        where b.dimension = 'projectivity' and s.sacrebleu_bleu is not null
        group by all""").fetchall()
    assert runs
    submission_id = runs[0][0]
    buckets = con.execute(
        """select bucket, sacrebleu_bleu, chrf from bucket_scores
           where submission_id = ? and dimension = 'projectivity'""",
        [submission_id],
    ).fetchall()
    texts = con.execute(
        """select c.is_projective, o.output_text, r.reference_text
           from staging.stg_outputs o join staging.stg_submissions s using (submission_id)
           join staging.stg_sentences r on r.corpus = s.corpus and r.sent_idx = o.sent_idx
           join sentence_complexity c on c.corpus = s.corpus and c.sent_idx = o.sent_idx
           where o.submission_id = ? and not o.is_missing""",
        [submission_id],
    ).fetchall()
    for bucket, bleu, chrf in buckets:
        chosen = [(h, r) for projective, h, r in texts if coalesce_projective(projective) == (bucket == "projective")]
        if not chosen:
            assert bleu is None
            continue
        hyps, refs = [h for h, _ in chosen], [[r for _, r in chosen]]
        assert bleu == pytest.approx(sacrebleu.corpus_bleu(hyps, refs).score, abs=TOLERANCE, rel=0)
        assert chrf == pytest.approx(sacrebleu.corpus_chrf(hyps, refs).score, abs=TOLERANCE, rel=0)


def coalesce_projective(value):
    return True if value is None else value


def test_rankings_and_correlations_take_the_two_metrics(con):
    ranked = {r[0] for r in con.execute("select distinct metric from system_rankings").fetchall()}
    assert {"sacrebleu_bleu", "chrf"} <= ranked
    correlated = {r[0] for r in con.execute("select distinct metric_a from metric_correlations").fetchall()}
    assert {"sacrebleu_bleu", "chrf"} <= correlated


# ----------------------------------------------------------------- the formulas on their own


def random_texts(rng, n):
    words = "the a cat dog sat on mat . , is was big I you it's don't (hi) A The Ça été".split()
    return [" ".join(rng.choice(words) for _ in range(rng.choice([0, 1, 2, 3, 5, 9, 14]))) for _ in range(n)]


def test_the_formulas_equal_sacrebleu_on_short_empty_and_disjoint_texts():
    rng = random.Random(13)
    hyps, refs = random_texts(rng, 600), random_texts(rng, 600)
    refs[:3] = ["", "x", "x y z w"]
    hyps[:3] = ["", "", "q"]
    stats = np.array(mt_scores.sacrebleu_stats(hyps, refs), dtype=float)
    bleu_columns = len(mt_scores.BLEU_FIELDS)
    sentence_bleu = mt_scores.bleu_from_stat_arrays(stats[:, :bleu_columns], effective_order=True)
    sentence_chrf = mt_scores.chrf_from_stat_arrays(stats[:, bleu_columns:])
    for k, (hyp, ref) in enumerate(zip(hyps, refs)):
        assert sentence_bleu[k] == pytest.approx(sacrebleu.sentence_bleu(hyp, [ref]).score, abs=TOLERANCE, rel=0)
        assert sentence_chrf[k] == pytest.approx(sacrebleu.sentence_chrf(hyp, [ref]).score, abs=TOLERANCE, rel=0)
    for size in (1, 2, 5, 40, 600):
        chosen = rng.sample(range(len(hyps)), size)
        summed = stats[chosen].sum(axis=0, keepdims=True)
        h, r = [hyps[k] for k in chosen], [[refs[k] for k in chosen]]
        bleu = mt_scores.bleu_from_stat_arrays(summed[:, :bleu_columns], effective_order=False)[0]
        chrf = mt_scores.chrf_from_stat_arrays(summed[:, bleu_columns:])[0]
        assert bleu == pytest.approx(sacrebleu.corpus_bleu(h, r).score, abs=TOLERANCE, rel=0)
        assert chrf == pytest.approx(sacrebleu.corpus_chrf(h, r).score, abs=TOLERANCE, rel=0)


def test_the_udfs_give_null_for_null_and_a_hand_checked_bleu():
    from srlens.udfs import register_all

    con = duckdb.connect()
    try:
        register_all(con)
        ref = "I enjoyed my time at Franklin High School."
        hyp = "I enjoyed my time at High Franklin School ."
        st = con.execute("select srlens_sacrebleu_stats(?, ?)", [hyp, ref]).fetchone()[0]
        # 13a splits the final period: 9 tokens each; matches 9/9, 5/8, 3/7, 2/6, brevity penalty 1
        assert [st[f] for f in mt_scores.BLEU_FIELDS] == [9, 9, 9, 5, 3, 2, 9, 8, 7, 6]
        fields = ", ".join(f"st.{f}" for f in mt_scores.BLEU_FIELDS)
        bleu, null_stats, null_bleu = con.execute(
            f"""select srlens_sacrebleu_sentence_bleu({fields}), srlens_sacrebleu_stats(null, 'a'),
                       srlens_sacrebleu_corpus_bleu(null, 1, 1, 1, 1, 1, 1, 1, 1, 1)
                from (select srlens_sacrebleu_stats(?, ?) as st)""",
            [hyp, ref],
        ).fetchone()
    finally:
        con.close()
    assert bleu == pytest.approx(100 * (5 / 56) ** 0.25, abs=TOLERANCE)
    assert null_stats is None and null_bleu is None


def edge_texts():
    """Texts that take each branch of sacrebleu's statistics and of its 13a tokenizer."""
    return [
        "",
        " ",
        "\t\n",
        ".",
        "a",
        "ab",
        "abcdef",
        "aaaaaaa aaaa",
        "3.14, 1,000 and 5-6 - x",
        "&amp; &quot;quoted&quot; &lt;b&gt; <skipped> line-\nbroken",
        "“Ça”, n'est-ce pas? — été 日本語のテキスト。 Привет, мир!",
        "(hi) [x]{y}~`^_@:;/\\|\"'!?#$%*+=",
        "tokens already split .",
        "a\u00a0b\u2003c",  # non-breaking and em spaces: whitespace to str.split
        " ".join(["word", "the", "the", "word", "."] * 300),  # very long, repeated n-grams
    ]


def test_the_statistics_equal_sacrebleus_own_extraction_on_random_and_edge_texts():
    from sacrebleu.metrics import BLEU, CHRF

    rng = random.Random(29)
    symbols = list("abc ABC .,-&;!?'\"()0123 éß日本\u00a0\t") + ["&amp;", "&quot;", "<skipped>", "-\n"]
    noise = ["".join(rng.choice(symbols) for _ in range(rng.randint(0, 40))) for _ in range(300)]
    edges = edge_texts()
    # many distinct words and characters: the n-gram numbers are re-ranked to stay within int64
    vocabulary = [f"w{k}" for k in range(50_000)]
    wide = [" ".join(rng.choices(vocabulary, k=60)) for _ in range(200)]
    wide += ["".join(map(chr, rng.choices(range(0x4E00, 0x9FFF), k=300))) for _ in range(20)]
    hyps = edges * len(edges) + random_texts(rng, 300) + noise + wide
    refs = [r for r in edges for _ in edges] + random_texts(rng, 300) + noise[::-1] + wide[1:] + wide[:1]
    ours = np.asarray(mt_scores.sacrebleu_stats(hyps, refs), dtype=np.int64)
    bleu = BLEU(force=True)._extract_corpus_statistics(hyps, [refs])
    chrf = CHRF()._extract_corpus_statistics(hyps, [refs])
    expected = np.array([b + c for b, c in zip(bleu, chrf)], dtype=np.int64)
    assert ours.shape == expected.shape == (len(hyps), 28)
    mismatched = [(hyps[k], refs[k]) for k in np.flatnonzero((ours != expected).any(axis=1))]
    assert not mismatched, mismatched[:3]


def test_the_tokenizer_equals_sacrebleus_13a_on_every_character():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    # the first rule's class matches ASCII characters only: the table of str.translate covers it
    first = TokenizerRegexp()._re[0][0]
    spaced = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000 and first.fullmatch(chr(c))]
    assert len(spaced) == 29 and max(spaced) < 128
    sacrebleu_13a, ours = Tokenizer13a(), mt_scores._tokenizer()
    # each code point up to U+3000 and a sample above, next to a digit, a letter and a period: 13a's rules
    points = [c for c in [*range(0x3000), *range(0x3000, 0x110000, 97)] if not 0xD800 <= c < 0xE000]
    # as lines of one batch: no rule's match crosses two lines
    lines = ["".join(f"{chr(c)}1.{chr(c)}a,{chr(c)}-" for c in points[k : k + 64]) for k in range(0, len(points), 64)]
    lines += [".", ",", "1", "-", "a.", ".1", "1-", ", ", " .", "", "&amp;", "x-\ny"]
    assert ours(lines) == [sacrebleu_13a(line).split() for line in lines]
    # a batch's first and last line: 13a's padding spaces still split ",5" and "5."
    edges = [",5", "a", "5."]
    assert ours(edges) == [sacrebleu_13a(line).split() for line in edges] == [[",", "5"], ["a"], ["5", "."]]
