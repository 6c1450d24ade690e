"""Ensemble selection (SPEC section 12) through real builds: a hand-made case worked out by hand,
and the demo, both against tests/support/reference_ensemble.py (a plain Python reading of SPEC)."""

import math

import duckdb
import pytest
import yaml

from srlens.build import DBT_PROJECT_DIR, build
from srlens.build_vars import VarError, check
from srlens.demo import DEMO_MANIFEST, load_demo
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs, load_treebank
from tests.conftest import REPO, require_shared
from tests.support.reference_ensemble import Run, score_runs, select
from tests.support.reference_metrics import read_analysis_trees
from tests.support.reference_scores import aligned_lemmas, reference_words

SELECTION = (
    "learned_on",
    "runs",
    "runs_learned",
    "runs_chosen",
    "sentences",
    "edges",
    "ensemble_matched",
    "ensemble_dea",
    "ensemble_bleu",
    "best_single_submission",
    "best_single_matched",
    "best_single_dea",
    "best_single_bleu",
    "oracle_matched",
    "oracle_dea",
)
CHOICES = (
    "team",
    "run",
    "learned_from",
    "ensemble_sentences",
    "realized",
    "chosen",
    "chosen_share",
    "edges",
    "matched",
    "dea",
    "corpus_bleu",
    "is_best_single",
)

# ---------------------------------------------------------------- the hand-made case
# Two-word sentences with one edge each (nsubj or amod) and a one-word sentence without edges.
# On `target`, run a keeps every nsubj edge and no amod edge, run b the opposite, and run c is a
# without t2. On `tune`, a and b are reversed (a keeps amod, b nsubj), and c has no run.
TARGET = {
    "t1": "dogs bark nsubj",
    "t2": "cats sleep nsubj",
    "t3": "big dogs amod",
    "t4": "small cats amod",
    "t5": "hello",
}
TUNE = {"u1": "dogs bark nsubj", "u2": "big dogs amod", "u3": "small cats amod"}
A, B, C = "hand/target/x/a", "hand/target/y/b", "hand/target/z/c"


def conllu(sentences):
    blocks = []
    for sent_id, spec in sentences.items():
        words = spec.split()
        if len(words) == 1:
            rows = [f"1\t{words[0]}\t{words[0]}\tINTJ\t_\t_\t0\troot\t_\t_"]
        else:  # dependent first, then its head
            dep, head, relation = words
            rows = [f"1\t{dep}\t{dep}\tX\t_\t_\t2\t{relation}\t_\t_", f"2\t{head}\t{head}\tX\t_\t_\t0\troot\t_\t_"]
        blocks.append(f"# sent_id = {sent_id}\n# text = {' '.join(words[:2])}\n" + "\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


def outputs(sentences, keeps, skip=()):
    """An sr run: the reference order where the sentence's relation is in keeps, else swapped."""
    blocks = []
    for sent_id, spec in sentences.items():
        if sent_id in skip:
            continue
        words = spec.split()[:2]
        if len(words) == 2 and spec.split()[2] not in keeps:
            words.reverse()
        blocks.append(f"# sent_id = {sent_id}\n# text = {' '.join(words)}\n")
    return "\n".join(blocks) + "\n"


# The fixtures' builds: the two marts and what they are made of (the tests read nothing else).
ENSEMBLE_MARTS = "+ensemble_selection +ensemble_choices"


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    root = tmp_path_factory.mktemp("ensemble_hand")
    warehouse = root / "srlens.duckdb"
    for corpus, sentences in (("target", TARGET), ("tune", TUNE)):
        (root / f"{corpus}.conllu").write_text(conllu(sentences), encoding="utf-8")
        load_treebank(warehouse, root / f"{corpus}.conllu", corpus)
    runs = (
        ("target", "x", "a", TARGET, {"nsubj"}, ()),
        ("target", "y", "b", TARGET, {"amod"}, ()),
        ("target", "z", "c", TARGET, {"nsubj"}, ("t2",)),
        ("tune", "x", "a", TUNE, {"amod"}, ()),
        ("tune", "y", "b", TUNE, {"nsubj"}, ()),
    )
    for corpus, team, run, sentences, keeps, skip in runs:
        path = root / f"{corpus}_{run}.sr"
        path.write_text(outputs(sentences, keeps, skip), encoding="utf-8")
        load_outputs(warehouse, path, corpus, team, run, campaign="hand", allow_partial=bool(skip))
    build(
        warehouse,
        echo=False,
        processor="aligned",
        dbt_vars={"ensemble_tuning_corpus": {"target": "tune"}},
        select=ENSEMBLE_MARTS,
    )
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con, root
    con.close()


def chosen_runs(con, corpus, tuning_corpus):
    return dict(
        con.execute(
            """
        select s.sent_id, c.submission_id
        from intermediate.int_ensemble_candidates c
        join staging.stg_sentences s on s.corpus = c.corpus and s.sent_idx = c.sent_idx
        where c.corpus = ? and c.tuning_corpus = ? and c.choice_rank = 1""",
            [corpus, tuning_corpus],
        ).fetchall()
    )


@pytest.mark.slow
def test_hand_case_leave_one_out_worked_by_hand(hand):
    con, _ = hand
    # t1: a's nsubj DEA without t1 is 1/1, b's 0/1, c's has no nsubj edge left: its overall 0/2.
    # t5 has no edge: a and b both have overall DEA 2/4; the tie goes to the smaller id, a.
    assert chosen_runs(con, "target", "target") == {"t1": A, "t2": A, "t3": B, "t4": B, "t5": A}
    row = con.execute(
        "select sentences, edges, ensemble_matched, ensemble_dea, best_single_submission, "
        "best_single_dea, oracle_dea from ensemble_selection "
        "where corpus = 'target' and tuning_corpus = 'target'"
    ).fetchone()
    assert row == (5, 4, 4, 1.0, A, 0.5, 1.0)  # a and b both keep 2 of 4 edges: a by id
    counts = dict(
        con.execute(
            "select submission_id, chosen from ensemble_choices where corpus = 'target' and tuning_corpus = 'target'"
        ).fetchall()
    )
    assert counts == {A: 3, B: 2, C: 0}
    c_row = con.execute(
        "select realized, matched, dea from ensemble_choices where submission_id = ? and tuning_corpus = 'target'", [C]
    ).fetchone()
    assert c_row == (4, 1, 0.25)  # t2 missing counts as unmatched


@pytest.mark.slow
def test_hand_case_tuned_on_a_reversed_corpus_chooses_wrong(hand):
    con, _ = hand
    # Learned on `tune`, a looks good at amod and b at nsubj: every choice with an edge is wrong.
    # c has no run on `tune`: nothing to learn from, so it comes last everywhere.
    assert chosen_runs(con, "target", "tune") == {"t1": B, "t2": B, "t3": A, "t4": A, "t5": A}
    row = con.execute(
        "select learned_on, runs, runs_learned, ensemble_matched, ensemble_dea, oracle_dea "
        "from ensemble_selection where corpus = 'target' and tuning_corpus = 'tune'"
    ).fetchone()
    assert row == ("tuning_corpus", 3, 2, 0, 0.0, 1.0)
    learned = dict(
        con.execute(
            "select submission_id, learned_from from ensemble_choices "
            "where corpus = 'target' and tuning_corpus = 'tune'"
        ).fetchall()
    )
    assert learned == {A: "hand/tune/x/a", B: "hand/tune/y/b", C: None}
    # `tune` itself learns on itself only: the var names one pair
    assert con.execute(
        "select list(tuning_corpus order by tuning_corpus) from ensemble_selection where corpus = 'tune'"
    ).fetchone()[0] == ["tune"]


# ---------------------------------------------------------------- against the Python reference


def reference_runs(con, corpus, path):
    """The corpus's runs as tests/support/reference_ensemble.py takes them, lemmas from the output texts."""
    trees = {t.sentence_index: t for t in read_analysis_trees(path)}
    words = reference_words(read_conllu(path))
    runs = []
    for sid, team, run, campaign in con.execute(
        "select submission_id, team, run, campaign from raw.submissions where corpus = ? order by 1", [corpus]
    ).fetchall():
        texts = con.execute(
            "select sent_idx, text from raw.outputs where submission_id = ? and not is_missing", [sid]
        ).fetchall()
        out = {idx: aligned_lemmas(text, *words[trees[idx].sent_id]) for idx, text in texts}
        runs.append(Run(sid, team, run, campaign, out))
    score_runs(trees, runs)
    return trees, runs


def assert_equal_to_reference(con, corpus, tuning_corpus, want, want_runs, want_choices):
    cursor = con.execute(
        f"select {', '.join(SELECTION)} from ensemble_selection where corpus = ? and tuning_corpus = ?",
        [corpus, tuning_corpus],
    )
    got = dict(zip(SELECTION, cursor.fetchone()))
    assert_same(got, want, (corpus, tuning_corpus))
    rows = con.execute(
        f"select submission_id, {', '.join(CHOICES)} from ensemble_choices where corpus = ? and tuning_corpus = ?",
        [corpus, tuning_corpus],
    ).fetchall()
    assert {r[0] for r in rows} == set(want_runs)
    for r in rows:
        assert_same(dict(zip(CHOICES, r[1:])), want_runs[r[0]], (corpus, tuning_corpus, r[0]))
    got_choices = con.execute(
        "select sent_idx, submission_id, expected_dea, choice_rank "
        "from intermediate.int_ensemble_candidates where corpus = ? and tuning_corpus = ?",
        [corpus, tuning_corpus],
    ).fetchall()
    assert {idx for idx, *_ in got_choices} == set(want_choices)
    for idx, sid, expected, rank in got_choices:
        chosen, expected_of = want_choices[idx]
        assert expected == expected_of[sid], (corpus, tuning_corpus, idx, sid)  # bit-equal floats
        assert (rank == 1) == (sid == chosen), (corpus, tuning_corpus, idx, sid)


def assert_same(got, want, where):
    for key, value in want.items():
        if isinstance(value, float) and key.endswith("bleu"):
            assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-15), (where, key, got[key], value)
        else:
            assert got[key] == value, (where, key, got[key], value)


@pytest.mark.slow
def test_hand_case_equals_the_reference(hand):
    con, root = hand
    trees, target = reference_runs(con, "target", root / "target.conllu")
    _, tune = reference_runs(con, "tune", root / "tune.conllu")
    assert_equal_to_reference(con, "target", "target", *select(trees, target))
    assert_equal_to_reference(con, "target", "tune", *select(trees, target, tuning_runs=tune))


DEMO_TREEBANKS = DEMO_MANIFEST.parent / "treebanks"
GOLD_RUNS = ["demo/en_ewt_demo/baseline/gold", "demo/fr_gsd_demo/baseline/gold"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo without its gold runs as candidates (a copy of the reference wins every sentence),
    French also learned on English."""
    require_shared()
    warehouse = tmp_path_factory.mktemp("ensemble_demo") / "srlens.duckdb"
    load_demo(warehouse)
    build(
        warehouse,
        echo=False,
        processor="aligned",
        dbt_vars={"ensemble_exclude_runs": GOLD_RUNS, "ensemble_tuning_corpus": {"fr_gsd_demo": "en_ewt_demo"}},
        select=ENSEMBLE_MARTS,
    )
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con
    con.close()


@pytest.mark.slow
def test_demo_equals_the_reference(demo):
    en_trees, en = reference_runs(demo, "en_ewt_demo", DEMO_TREEBANKS / "en_ewt_demo.conllu")
    fr_trees, fr = reference_runs(demo, "fr_gsd_demo", DEMO_TREEBANKS / "fr_gsd_demo.conllu")
    assert_equal_to_reference(demo, "en_ewt_demo", "en_ewt_demo", *select(en_trees, en, excluded=GOLD_RUNS))
    assert_equal_to_reference(demo, "fr_gsd_demo", "fr_gsd_demo", *select(fr_trees, fr, excluded=GOLD_RUNS))
    assert_equal_to_reference(
        demo, "fr_gsd_demo", "en_ewt_demo", *select(fr_trees, fr, tuning_runs=en, excluded=GOLD_RUNS)
    )
    assert demo.execute("select count(*) from ensemble_selection").fetchone()[0] == 3


@pytest.mark.slow
def test_demo_ensemble_beats_every_single_run_below_the_oracle(demo):
    """What the worked analysis (docs/analysis.md) says: on English, choosing by per-relation DEA beats the
    best single run (the Hall & Nemec baseline) on DEA and BLEU."""
    row = demo.execute(
        "select best_single_submission, ensemble_dea, best_single_dea, oracle_dea, ensemble_bleu, "
        "best_single_bleu from ensemble_selection where corpus = 'en_ewt_demo' "
        "and tuning_corpus = 'en_ewt_demo'"
    ).fetchone()
    assert row[0] == "demo/en_ewt_demo/baseline/hall_nemec"
    assert row[2] < row[1] < row[3] and row[5] < row[4]
    # and the figures it quotes (this fixture is its build)
    readme = " ".join((REPO / "docs" / "analysis.md").read_text(encoding="utf-8").split())
    ensemble_dea, best_dea, oracle_dea, ensemble_bleu, best_bleu = row[1:]
    assert (
        f"the ensemble keeps {100 * ensemble_dea:.1f}% of the edges, against {100 * best_dea:.1f}% for the best "
        f"single run (the Hall & Nemec baseline), and BLEU {ensemble_bleu:.3f} against {best_bleu:.3f}"
    ) in readme
    assert f"(the oracle) would reach {100 * oracle_dea:.1f}%" in readme
    chosen = dict(
        demo.execute(
            "select run, chosen from ensemble_choices where corpus = 'en_ewt_demo' "
            "and tuning_corpus = 'en_ewt_demo' and chosen > 0"
        ).fetchall()
    )
    assert chosen == {"hall_nemec": 172, "advmod_moved": 28}
    assert "It takes 172 sentences from the baseline and 28 from `advmod_moved`" in readme
    french = {
        tuning: rest
        for tuning, *rest in demo.execute(
            "select tuning_corpus, ensemble_dea, best_single_dea, best_single_submission from ensemble_selection "
            "where corpus = 'fr_gsd_demo'"
        ).fetchall()
    }
    (own, best, best_run), (tuned, _, _) = french["fr_gsd_demo"], french["en_ewt_demo"]
    assert best_run == "demo/fr_gsd_demo/perturb/advmod_moved" and tuned < best < own
    assert f"On French the gain is larger: {own:.3f} against {best:.3f} for `advmod_moved`" in readme
    assert f"it drops to {tuned:.3f}, below the best single run" in readme


@pytest.mark.slow
def test_every_column_is_documented_with_its_type(demo):
    documented = {}
    marts_yml = DBT_PROJECT_DIR / "models" / "marts" / "_ensembles__models.yml"
    for model in yaml.safe_load(marts_yml.read_text())["models"]:
        documented[model["name"]] = {c["name"]: c for c in model["columns"] if "data_type" in c}
        assert all(c.get("description") for c in model["columns"]), model["name"]
    for table, columns in documented.items():
        actual = dict(
            demo.execute(
                "select column_name, lower(data_type) from information_schema.columns "
                "where table_schema = 'main' and table_name = ?",
                [table],
            ).fetchall()
        )
        assert actual == {name: c["data_type"] for name, c in columns.items()}, table


def test_the_vars_refuse_a_corpus_tuned_on_itself_and_a_list_of_non_names():
    assert check({"ensemble_tuning_corpus": {"a": "b"}, "ensemble_exclude_runs": ["x/y/z/w"]})
    with pytest.raises(VarError, match="ensemble_tuning_corpus"):
        check({"ensemble_tuning_corpus": {"a": "a"}})
    with pytest.raises(VarError, match="ensemble_exclude_runs"):
        check({"ensemble_exclude_runs": "demo/en_ewt_demo/baseline/gold"})
