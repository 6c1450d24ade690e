"""Error mining (SPEC section 8) through real warehouse builds: subtree enumeration checked by
hand, suspicion scores of hand-made runs computed by hand, and the whole demo against the
independent reference in tests/support/reference_mining.py."""

import io
import math
from collections import defaultdict

import duckdb
import pandas as pd
import pytest

from srlens.build import build
from srlens.loaders.load import load_outputs, load_treebank
from srlens.mining import EXAMPLES_SQL, subtree_examples
from srlens.query import run_query
from tests.conftest import FIGURE1, require_shared
from tests.support.reference_metrics import read_analysis_trees
from tests.support.reference_mining import mine_submission, sentence_subtrees, summarize

ln = math.log

# (form, lemma, upos, head, deprel) per word. s9 is one word: its DEA is NULL.
HAND_TREES = {
    "s1": [
        ("dogs", "dog", "NOUN", 2, "nsubj"),
        ("bark", "bark", "VERB", 0, "root"),
        ("loudly", "loudly", "ADV", 2, "advmod"),
        (".", ".", "PUNCT", 2, "punct"),
    ],
    "s2": [("cats", "cat", "NOUN", 2, "nsubj"), ("sleep", "sleep", "VERB", 0, "root")],
    "s3": [
        ("birds", "bird", "NOUN", 2, "nsubj"),
        ("sing", "sing", "VERB", 0, "root"),
        ("very", "very", "ADV", 4, "advmod"),
        ("loudly", "loudly", "ADV", 2, "advmod"),
    ],
    "s4": [("the", "the", "DET", 2, "det"), ("dog", "dog", "NOUN", 3, "nsubj"), ("runs", "run", "VERB", 0, "root")],
    "s5": [
        ("fish", "fish", "NOUN", 2, "nsubj"),
        ("swim", "swim", "VERB", 0, "root"),
        ("fast", "fast", "ADV", 2, "advmod"),
    ],
    "s6": [
        ("the", "the", "DET", 3, "det"),
        ("old", "old", "ADJ", 3, "amod"),
        ("man", "man", "NOUN", 4, "nsubj"),
        ("walks", "walk", "VERB", 0, "root"),
    ],
    "s7": [("kids", "kid", "NOUN", 2, "nsubj"), ("play", "play", "VERB", 0, "root")],
    "s8": [
        ("cows", "cow", "NOUN", 2, "nsubj"),
        ("eat", "eat", "VERB", 0, "root"),
        ("grass", "grass", "NOUN", 2, "obj"),
    ],
    "s9": [("Hello", "hello", "INTJ", 0, "root")],
    "s10": [
        ("we", "we", "PRON", 2, "nsubj:pass"),
        ("want", "want", "VERB", 0, "root"),
        ("food", "food", "NOUN", 2, "obj"),
    ],
}
GOLD = {s: " ".join(w[0] for w in words) for s, words in HAND_TREES.items()}

# Outputs and their DEA (metric of the hand build). Not listed: gold order, DEA 1 (s9: NULL).
#   A: s1 "loudly bark dogs" 0/2, s3 "loudly very sing birds" 0/3, s5 "fast fish swim" 1/2
#   B: s2, s7, s8, s10 reversed: 0 each (four ties at the bottom)
#   C: lacks s2 and s4 (partial run); s1, s7 reversed: 0; s3 "birds sing loudly very" 1/3
RUNS = {
    ("c1", "t1", "a"): {"s1": "loudly bark dogs .", "s3": "loudly very sing birds", "s5": "fast fish swim"},
    ("c1", "t2", "b"): {"s2": "sleep cats", "s7": "play kids", "s8": "grass eat cows", "s10": "food want we"},
    ("c2", "t2", "c"): {
        "s1": "loudly bark dogs",
        "s7": "play kids",
        "s3": "birds sing loudly very",
        "s2": None,
        "s4": None,
    },
}
# DEA rather than the default BLEU: exact by hand, and NULL for one-word s9, which must drop out.
HAND_VARS = {"mining_metric": "dea", "mining_quantile": 0.25, "mining_min_support": 2}


def conllu(trees):
    blocks = []
    for sent_id, words in trees.items():
        rows = [
            f"{i}\t{form}\t{lemma}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_"
            for i, (form, lemma, upos, head, rel) in enumerate(words, start=1)
        ]
        text = " ".join(w[0] for w in words)
        blocks.append(f"# sent_id = {sent_id}\n# text = {text}\n" + "\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    """Corpus `hand` with runs A, B, C; corpus figure1 with one gold run D (1 sentence)."""
    require_shared()
    root = tmp_path_factory.mktemp("mining")
    wh = root / "wh.duckdb"
    (root / "hand.conllu").write_text(conllu(HAND_TREES))
    load_treebank(wh, root / "hand.conllu", "hand")
    load_treebank(wh, FIGURE1, "figure1")
    for (campaign, team, run), changed in RUNS.items():
        text = "".join(
            f"# sent_id = {s}\n# text = {changed.get(s, GOLD[s])}\n\n"
            for s in HAND_TREES
            if not (s in changed and changed[s] is None)
        )
        (root / f"{run}.sr").write_text(text)
        load_outputs(wh, root / f"{run}.sr", "hand", team, run, campaign=campaign, allow_partial=True)
    (root / "d.sr").write_text("# sent_id = figure1\n# text = I enjoyed my time at Franklin High School .\n\n")
    load_outputs(wh, root / "d.sr", "figure1", "t1", "d", campaign="c1")
    build(wh, echo=False, processor="aligned", dbt_vars=HAND_VARS)
    con = duckdb.connect(str(wh), read_only=True)
    yield wh, con
    con.close()


# ------------------------------------------------------------------------------------------
# Enumeration
# ------------------------------------------------------------------------------------------

# Figure 1 by hand: enjoy(2) root -> I(1) nsubj, time(4) obj; time -> my(3) nmod:poss,
# school(8) nmod; school -> at(5) case, franklin(6) compound, high(7) compound.
FIGURE1_SUBTREES = {
    "dep": {
        "(root (nsubj))",
        "(root (obj))",
        "(obj (nmod))",
        "(nmod (case))",
        "(nmod (compound))",
        "(root (nsubj obj))",
        "(obj (nmod nmod))",
        "(nmod (case compound))",
        "(nmod (compound compound))",
        "(root (obj (nmod)))",
        "(obj (nmod (case)))",
        "(obj (nmod (compound)))",
    },
    "pos": {
        "(VERB (PRON))",
        "(VERB (NOUN))",
        "(NOUN (PRON))",
        "(NOUN (PROPN))",
        "(PROPN (ADP))",
        "(PROPN (PROPN))",
        "(VERB (NOUN PRON))",
        "(NOUN (PRON PROPN))",
        "(PROPN (ADP PROPN))",
        "(PROPN (PROPN PROPN))",
        "(VERB (NOUN (PRON)))",
        "(VERB (NOUN (PROPN)))",
        "(NOUN (PROPN (ADP)))",
        "(NOUN (PROPN (PROPN)))",
    },
    "pos_dep": {
        "(VERB~root (PRON~nsubj))",
        "(VERB~root (NOUN~obj))",
        "(NOUN~obj (PRON~nmod))",
        "(NOUN~obj (PROPN~nmod))",
        "(PROPN~nmod (ADP~case))",
        "(PROPN~nmod (PROPN~compound))",
        "(VERB~root (NOUN~obj PRON~nsubj))",
        "(NOUN~obj (PRON~nmod PROPN~nmod))",
        "(PROPN~nmod (ADP~case PROPN~compound))",
        "(PROPN~nmod (PROPN~compound PROPN~compound))",
        "(VERB~root (NOUN~obj (PRON~nmod)))",
        "(VERB~root (NOUN~obj (PROPN~nmod)))",
        "(NOUN~obj (PROPN~nmod (ADP~case)))",
        "(NOUN~obj (PROPN~nmod (PROPN~compound)))",
    },
    "lemma": {
        "(enjoy (i))",
        "(enjoy (time))",
        "(time (my))",
        "(time (school))",
        "(school (at))",
        "(school (franklin))",
        "(school (high))",
        "(enjoy (i time))",
        "(time (my school))",
        "(school (at franklin))",
        "(school (at high))",
        "(school (franklin high))",
        "(enjoy (time (my)))",
        "(enjoy (time (school)))",
        "(time (school (at)))",
        "(time (school (franklin)))",
        "(time (school (high)))",
    },
}


# int_subtrees' rows with their names (int_subtree_support writes the view and string of each form_id).
SUBTREES = (
    "(select t.*, s.view, s.subtree from intermediate.int_subtrees t "
    "join intermediate.int_subtree_support s using (corpus, form_id))"
)


def unpack_positions(packed):
    """int_subtrees' packed_positions as position lists: 21 bits a word, top word first, 0 = no third."""
    mask = (1 << 21) - 1
    return [[p >> 42, (p >> 21) & mask] + ([p & mask] if p & mask else []) for p in packed]


@pytest.mark.slow
def test_figure1_subtrees_by_hand_in_all_four_views(hand):
    _, con = hand
    for view, expected in FIGURE1_SUBTREES.items():
        got = {
            r[0]
            for r in con.execute(
                f"select subtree from {SUBTREES} where corpus = 'figure1' and view = ?", [view]
            ).fetchall()
        }
        assert got == expected, view
    # Repeated shapes are one row with every occurrence, top word first, in the string's order.
    rows = dict(
        con.execute(
            f"select subtree, packed_positions from {SUBTREES} where corpus = 'figure1' and view = 'dep' "
            "and subtree in ('(nmod (case compound))', '(root (obj (nmod)))', '(root (nsubj obj))')"
        ).fetchall()
    )
    rows = {subtree: unpack_positions(packed) for subtree, packed in rows.items()}
    assert rows == {
        "(nmod (case compound))": [[8, 5, 6], [8, 5, 7]],
        "(root (obj (nmod)))": [[2, 4, 3], [2, 4, 8]],
        "(root (nsubj obj))": [[2, 1, 4]],
    }


@pytest.mark.slow
def test_punctuation_is_no_word_and_subtypes_are_base_relations(hand):
    _, con = hand
    s1 = {
        r[0]
        for r in con.execute(
            f"select subtree from {SUBTREES} where corpus = 'hand' and sent_idx = 1 and view = 'dep'"
        ).fetchall()
    }
    assert s1 == {"(root (nsubj))", "(root (advmod))", "(root (advmod nsubj))"}  # no punct
    s10 = {
        r[0]
        for r in con.execute(
            f"select subtree from {SUBTREES} where corpus = 'hand' and sent_idx = 10 and view = 'pos_dep'"
        ).fetchall()
    }
    assert s10 == {"(VERB~root (PRON~nsubj))", "(VERB~root (NOUN~obj))", "(VERB~root (NOUN~obj PRON~nsubj))"}


# ------------------------------------------------------------------------------------------
# Mining, by hand (metric DEA, q = 0.25, min_support 2; s9 has DEA NULL and never takes part)
# ------------------------------------------------------------------------------------------
#
# dep subtrees with C(f) >= 2 in the treebank, and their sentences:
#   F1 (root (nsubj))            every sentence but s9
#   F2 (root (advmod)), F3 (root (advmod nsubj))       s1 s3 s5
#   F6 (nsubj (det)), F7 (root (nsubj (det)))          s4 s6
#   F11 (root (obj)), F12 (root (nsubj obj))           s8 s10
#
# A: 9 sentences, DEA sorted 0 0 .5 1 1 1 1 1 1; quantile index (9-1)*.25 = 2 -> threshold .5:
#    FAIL {s1 s3 s5} (s5 sits on the threshold), rate 3/9, PASS 6.
#   F1  C=9 C(f|F)=3 C(!f)=0  -> S = 1/2 (3/9 ln 9)                 3/9 > 3/9? no
#   F2  C=3 C(f|F)=3 C(!f)=6 C(!f|P)=6 -> S = 1/2 (ln 3 + ln 6)      1 > 1/3: suspicious
#   F6  C=2 C(f|F)=0 C(!f)=7 C(!f|P)=4 -> S = 1/2 (4/7 ln 7)         in no failure: no
#   F11 same counts as F6.
# B: DEA 0 for s2 s7 s8 s10, 1 otherwise: sorted 0 0 0 0 1 ...; index 2 -> threshold 0; the four
#    tied sentences all FAIL (4/9 > 1/4 of the run), PASS 5.
#   F1  C=9 C(f|F)=4 C(!f)=0  -> S = 1/2 (4/9 ln 9)                 no
#   F2  C=3 C(f|F)=0 C(!f)=6 C(!f|P)=2 (s4 s6) -> S = 1/2 (2/6 ln 6)  no
#   F6  C=2 C(f|F)=0 C(!f)=7 C(!f|P)=3 (s1 s3 s5) -> S = 1/2 (3/7 ln 7)  no
#   F11 C=2 C(f|F)=2 C(!f)=7 C(!f|P)=5 -> S = 1/2 (ln 2 + 5/7 ln 7)  1 > 4/9: suspicious
# C: lacks s2 and s4: 7 sentences, DEA sorted 0 0 1/3 1 1 1 1; index 1.5 -> threshold
#    0 + .5 * (1/3 - 0) = 1/6: FAIL {s1 s7}, rate 2/7, PASS {s3 s5 s6 s8 s10}.
#   F1  C=7 C(f|F)=2 C(!f)=0  -> S = 1/2 (2/7 ln 7)                 no
#   F2  C=3 C(f|F)=1 C(!f)=4 C(!f|P)=3 (s6 s8 s10) -> S = 1/2 (1/3 ln 3 + 3/4 ln 4)  1/3 > 2/7: suspicious
#   F6  only s6 left: C=1 < min_support, no row (the treebank has 2)
#   F11 C=2 C(f|F)=0 C(!f)=5 C(!f|P)=3 (s3 s5 s6) -> S = 1/2 (3/5 ln 5)  no
# D (figure1, one sentence): it is its own quantile, FAIL; every C(f) = 1: no rows.

S_A2, S_B11, S_C2 = 0.5 * (ln(3) + ln(6)), 0.5 * (ln(2) + 5 / 7 * ln(7)), 0.5 * (ln(3) / 3 + 0.75 * ln(4))
A_ROWS = {
    "F1": (9, 3, 0, 0, 0.5 * 3 / 9 * ln(9), False),
    "F2": (3, 3, 6, 6, S_A2, True),
    "F6": (2, 0, 7, 4, 0.5 * 4 / 7 * ln(7), False),
    "F11": (2, 0, 7, 4, 0.5 * 4 / 7 * ln(7), False),
}
B_ROWS = {
    "F1": (9, 4, 0, 0, 0.5 * 4 / 9 * ln(9), False),
    "F2": (3, 0, 6, 2, 0.5 * 2 / 6 * ln(6), False),
    "F6": (2, 0, 7, 3, 0.5 * 3 / 7 * ln(7), False),
    "F11": (2, 2, 7, 5, S_B11, True),
}
C_ROWS = {
    "F1": (7, 2, 0, 0, 0.5 * 2 / 7 * ln(7), False),
    "F2": (3, 1, 4, 3, S_C2, True),
    "F11": (2, 0, 5, 3, 0.5 * 3 / 5 * ln(5), False),
}
FORMS = {
    "F1": ["(root (nsubj))"],
    "F2": ["(root (advmod))", "(root (advmod nsubj))"],
    "F6": ["(nsubj (det))", "(root (nsubj (det)))"],
    "F11": ["(root (obj))", "(root (nsubj obj))"],
}


@pytest.mark.slow
def test_the_split_uses_the_chosen_metric_and_interpolated_quantile(hand):
    _, con = hand
    dea = dict(
        con.execute(
            "select run || ':' || sent_id, dea from sentence_scores where corpus = 'hand' and dea < 1"
        ).fetchall()
    )
    assert dea == {
        "a:s1": 0,
        "a:s3": 0,
        "a:s5": 0.5,
        "b:s2": 0,
        "b:s7": 0,
        "b:s8": 0,
        "b:s10": 0,
        "c:s1": 0,
        "c:s7": 0,
        "c:s3": 1 / 3,
    }
    split = {
        run: (n, fails, threshold)
        for run, n, fails, threshold in con.execute(
            "select s.run, count(*), count(*) filter (where is_fail), any_value(threshold) "
            "from intermediate.int_mining_sentences m join staging.stg_submissions s using (submission_id) "
            "group by s.run"
        ).fetchall()
    }
    # 9, not 10: s9 has a BLEU but no DEA; C also lacks s2 and s4.
    assert split["a"] == (9, 3, 0.5) and split["b"] == (9, 4, 0.0) and split["d"] == (1, 1, 1.0)
    assert split["c"][:2] == (7, 2) and split["c"][2] == pytest.approx(1 / 6, abs=1e-15)


@pytest.mark.slow
def test_suspicion_scores_by_hand(hand):
    _, con = hand
    got = {
        (run, subtree): tuple(row)
        for run, subtree, *row in con.execute(
            "select run, subtree, c_f, c_f_fail, c_not_f, c_not_f_pass, suspicion, is_suspicious "
            "from suspicious_subtrees where view = 'dep'"
        ).fetchall()
    }
    expected = {
        (run, subtree): values
        for run, rows in (("a", A_ROWS), ("b", B_ROWS), ("c", C_ROWS))
        for name, values in rows.items()
        for subtree in FORMS[name]
    }
    assert set(got) == set(expected)  # no row for C(f) < 2: D at all, F6 in C
    for key, (*counts, s, suspicious) in expected.items():
        assert got[key][:4] == tuple(counts), key
        assert got[key][4] == pytest.approx(s, abs=1e-12), key
        assert got[key][5] is suspicious, key
    rates = dict(con.execute("select run, any_value(failure_rate) from suspicious_subtrees group by run").fetchall())
    assert rates == {"a": 3 / 9, "b": 4 / 9, "c": 2 / 7}


@pytest.mark.slow
def test_summary_by_hand_per_scope(hand):
    _, con = hand
    rows = {
        (scope, value, subtree): tuple(row)
        for scope, value, subtree, *row in con.execute(
            "select scope, scope_value, subtree, submissions, submissions_in_scope, suspicious_in, coverage_pct, "
            "mean_suspicion from suspicious_subtrees_summary where view = 'dep'"
        ).fetchall()
    }

    def check(key, submissions, in_scope, suspicious_in, mss):
        got = rows[key]
        assert got[:3] == (submissions, in_scope, suspicious_in), key
        assert got[3] == pytest.approx(100 * suspicious_in / in_scope, abs=1e-12), key
        assert got[4] == (None if mss is None else pytest.approx(mss, abs=1e-12)), key

    # All four submissions take part (D too, though it mines nothing): coverage is out of 4.
    check(("all", "all", "(root (advmod))"), 3, 4, 2, (S_A2 + S_C2) / 2)
    check(("all", "all", "(root (nsubj))"), 3, 4, 0, None)
    check(("all", "all", "(nsubj (det))"), 2, 4, 0, None)
    check(("all", "all", "(root (obj))"), 3, 4, 1, S_B11)
    check(("corpus", "hand", "(root (advmod))"), 3, 3, 2, (S_A2 + S_C2) / 2)
    check(("team", "t1", "(root (advmod))"), 1, 2, 1, S_A2)  # A and D
    check(("team", "t2", "(root (advmod))"), 2, 2, 1, S_C2)  # B and C
    check(("campaign", "c1", "(root (advmod))"), 2, 3, 1, S_A2)  # A, B, D
    check(("campaign", "c2", "(root (advmod))"), 1, 1, 1, S_C2)
    assert not any(key[:2] == ("corpus", "figure1") for key in rows)


@pytest.mark.slow
def test_examples_show_failing_sentences_side_by_side(hand):
    wh, _ = hand
    frame = subtree_examples(wh, "dep", "(root (advmod))")
    got = [
        (
            r.run,
            r.sent_id,
            r.output_text,
            [list(p) for p in r.positions],
            [list(w) for w in r.subtree_words],
            bool(r.is_suspicious),
        )
        for r in frame.itertuples()
    ]
    # B fails only on sentences without an advmod. Lowest score first, then sentence order.
    assert got == [
        ("a", "s1", "loudly bark dogs .", [[2, 3]], [["bark", "loudly"]], True),
        ("a", "s3", "loudly very sing birds", [[2, 4]], [["sing", "loudly"]], True),
        ("a", "s5", "fast fish swim", [[2, 3]], [["swim", "fast"]], True),
        ("c", "s1", "loudly bark dogs", [[2, 3]], [["bark", "loudly"]], True),
    ]
    assert list(frame.reference_text[:2]) == ["dogs bark loudly .", "birds sing very loudly"]
    one = subtree_examples(wh, "dep", "(root (advmod))", submission_id="c1/hand/t1/a", limit=1)
    assert list(one.sent_id) == ["s1"]
    chain = subtree_examples(wh, "dep", "(root (advmod (advmod)))")
    assert [list(w) for w in chain.subtree_words[0]] == [["sing", "loudly", "very"]]
    with pytest.raises(ValueError):
        subtree_examples(wh, "deprel", "(root (advmod))")


# ------------------------------------------------------------------------------------------
# The demo against the independent reference
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference_subtrees(warehouse_con):
    """{corpus: {sent_idx: {(view, subtree): occurrences}}} for every treebank of the warehouse."""
    out = {}
    for corpus, path in warehouse_con.execute("select corpus, source_file from staging.stg_treebank_files").fetchall():
        sent_ids = dict(
            warehouse_con.execute(
                "select sent_idx, sent_id from staging.stg_sentences where corpus = ?", [corpus]
            ).fetchall()
        )
        out[corpus] = {}
        for tree in read_analysis_trees(path):
            assert sent_ids[tree.sentence_index] == tree.sent_id
            out[corpus][tree.sentence_index] = sentence_subtrees(tree)
    return out


def test_enumeration_equals_reference_on_every_treebank(warehouse_con, reference_subtrees):
    expected = {
        (corpus, idx, view, subtree, len(occ), str(occ))
        for corpus, sentences in reference_subtrees.items()
        for idx, found in sentences.items()
        for (view, subtree), occ in found.items()
    }
    rows = warehouse_con.execute(
        f"select corpus, sent_idx, view, subtree, occurrences, packed_positions from {SUBTREES}"
    ).fetchall()
    got = {(c, i, v, s, n, str(unpack_positions(packed))) for c, i, v, s, n, packed in rows}
    assert len(expected) > 100_000  # en_ewt test and the demo, all four views
    assert got == expected
    assert len(rows) == len(got)  # one row per sentence, view and subtree (the model has no key test)


def test_demo_mining_equals_reference(warehouse_con, reference_subtrees):
    scores = defaultdict(dict)
    for sub, corpus, idx, bleu in warehouse_con.execute(
        "select submission_id, corpus, sent_idx, bleu from sentence_scores where not is_missing and bleu is not null"
    ).fetchall():
        scores[(sub, corpus)][idx] = bleu
    info = {
        sub: {"corpus": c, "team": t, "campaign": k}
        for sub, c, t, k in warehouse_con.execute(
            "select submission_id, corpus, team, campaign from staging.stg_submissions"
        ).fetchall()
    }
    mined, expected = {}, {}
    for (sub, corpus), sub_scores in scores.items():
        forms_of = {idx: set(found) for idx, found in reference_subtrees[corpus].items()}
        threshold, failures, rows = mine_submission(sub_scores, forms_of)
        mined[sub] = rows
        expected.update({(sub, *form): row for form, row in rows.items() if row["c_f"] >= 2})
    assert set(mined) == set(info) and len(mined) >= 12  # every demo run takes part

    got = {
        (sub, view, subtree): dict(c_f=a, c_f_fail=b, c_not_f=c, c_not_f_pass=d, suspicion=s, is_suspicious=x)
        for sub, view, subtree, a, b, c, d, s, x in warehouse_con.execute(
            "select submission_id, view, subtree, c_f, c_f_fail, c_not_f, c_not_f_pass, suspicion, "
            "is_suspicious from suspicious_subtrees"
        ).fetchall()
    }
    assert got.keys() == expected.keys()
    assert {k for k, r in got.items() if r["is_suspicious"]} == {k for k, r in expected.items() if r["is_suspicious"]}
    assert sum(r["is_suspicious"] for r in got.values()) > 1000
    for key, row in expected.items():
        assert [got[key][c] for c in ("c_f", "c_f_fail", "c_not_f", "c_not_f_pass")] == [
            row[c] for c in ("c_f", "c_f_fail", "c_not_f", "c_not_f_pass")
        ], key
        assert abs(got[key]["suspicion"] - row["suspicion"]) <= 1e-12, key

    summary = summarize(mined, {sub: info[sub] for sub in mined})
    got_summary = {
        (a, b, c, d): (n, k, ins, cov, mss)
        for a, b, c, d, n, k, ins, cov, mss in warehouse_con.execute(
            "select scope, scope_value, view, subtree, submissions, suspicious_in, submissions_in_scope, coverage_pct, "
            "mean_suspicion from suspicious_subtrees_summary"
        ).fetchall()
    }
    assert got_summary.keys() == summary.keys()
    for key, row in summary.items():
        n, k, ins, cov, mss = got_summary[key]
        assert (n, k, ins) == (row["submissions"], row["suspicious_in"], row["submissions_in_scope"]), key
        assert abs(cov - row["coverage_pct"]) <= 1e-9, key
        assert (mss is None) == (row["mean_suspicion"] is None), key
        assert mss is None or abs(mss - row["mean_suspicion"]) <= 1e-12, key


def test_examples_function_runs_the_recipe_file(built_warehouse):
    # The file as an analyst runs it (its default literals) and the function give the same rows.
    as_text = pd.read_csv(io.StringIO(run_query(built_warehouse, EXAMPLES_SQL.read_text(), "csv")))
    frame = subtree_examples(built_warehouse, "dep", "(advcl (nsubj))")
    assert len(frame) == len(as_text) > 0
    assert list(frame.sent_id) == list(as_text.sent_id)
    assert list(frame.submission_id) == list(as_text.submission_id)
    assert frame.groupby("submission_id").size().max() <= 20
