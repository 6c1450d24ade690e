"""SPEC section 12 through a real build of the demo: pairwise_significance and the intervals of
submission_scores against tests/support/reference_significance.py (numpy's own draws, plain loops),
bucket_scores against nltk and the Python reference scorer, error_examples against its definition."""

import math
from collections import Counter, defaultdict

import duckdb
import numpy as np
import pytest
import yaml
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

from srlens.build import build
from srlens.demo import DEMO_MANIFEST, load_demo
from srlens.loaders.conllu_reader import read_conllu
from srlens.loaders.load import load_outputs
from srlens.paths import DBT_PROJECT_DIR
from srlens.udfs import register_all
from srlens.udfs.resample import ar_weights, bootstrap_weights, quantile_cont
from tests.conftest import REPO, require_shared
from tests.support.reference_metrics import read_analysis_trees, sentence_metrics
from tests.support.reference_mining import VIEWS, mine_submission, sentence_subtrees
from tests.support.reference_scores import aligned_lemmas, dea, reference_words
from tests.support.reference_significance import MEAN_SCORES, METRICS, interval, paired_test

RUNS = DEMO_MANIFEST.parent / "outputs" / "en_ewt_demo"
GOLD, SWAPS = "demo/en_ewt_demo/baseline/gold", "demo/en_ewt_demo/perturb/swaps"
COPY, PARTIAL = "demo/en_ewt_demo/check/gold_copy", "demo/en_ewt_demo/check/swaps_partial"
ROW = ("delta", "ci_low", "ci_high", "p_value", "p_value_ar", "winner", "bootstrap_samples", "ar_samples")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    """The demo, a copy of its gold run under another name, and `swaps` without every third sentence."""
    require_shared()
    root = tmp_path_factory.mktemp("significance")
    warehouse = root / "srlens.duckdb"
    load_demo(warehouse)
    load_outputs(warehouse, RUNS / "gold.sr.txt", "en_ewt_demo", "check", "gold_copy", campaign="demo")
    blocks = (RUNS / "swaps.sr.txt").read_text(encoding="utf-8").strip().split("\n\n")
    partial = root / "swaps_partial.sr"
    partial.write_text("\n\n".join(b for k, b in enumerate(blocks) if k % 3) + "\n\n", encoding="utf-8")
    load_outputs(warehouse, partial, "en_ewt_demo", "check", "swaps_partial", campaign="demo", allow_partial=True)
    build(warehouse, echo=False, processor="aligned")
    connection = duckdb.connect(str(warehouse), read_only=True)
    yield connection
    connection.close()


def statistics(con, submission_id):
    """sent_idx -> the run's per-sentence statistics, NULL scores as None (the reference's input)."""
    cursor = con.execute(
        "select * from intermediate.int_significance_sentences where submission_id = ?", [submission_id]
    )
    columns = [d[0] for d in cursor.description]
    out = {}
    for row in cursor.fetchall():
        s = dict(zip(columns, row))
        for score in MEAN_SCORES:
            s[score] = s[f"{score}_sum"] if s[f"{score}_n"] else None
        out[s["sent_idx"]] = s
    return out


def mart_row(con, a, b, metric):
    row = con.execute(
        f"select {', '.join(ROW)} from pairwise_significance "
        "where submission_a = ? and submission_b = ? and metric = ?",
        [a, b, metric],
    ).fetchone()
    return None if row is None else dict(zip(ROW, row))


def assert_same(got, want, where):
    for key, value in want.items():
        if isinstance(value, float):
            assert math.isclose(got[key], value, rel_tol=1e-12, abs_tol=1e-12), (where, key, got[key], value)
        else:
            assert got[key] == value, (where, key, got[key], value)


def test_draws_are_numpys_own():
    idx = np.random.default_rng(12345).choice(7, size=(5, 7), replace=True)
    counts = bootstrap_weights(7, 5, 12345)
    assert {(s, p): counts[s, p] for s in range(5) for p in range(7) if counts[s, p]} == Counter(
        (s, p) for s in range(5) for p in idx[s]
    )
    mask = np.random.default_rng(12345).integers(2, size=(4, 7), dtype=bool)
    assert [(r, i) for r in range(4) for i in range(7) if ar_weights(7, 4, 12345)[r, i]] == [
        (r, i) for r in range(4) for i in range(7) if mask[r, i]
    ]


def test_resampled_sums_are_the_sums_of_the_drawn_lists():
    """srlens_resample_sums in SQL against plain loops over numpy's draws; with n = 3, some AR trials
    swap no sentence and still have their row (sums 0), as SPEC's loop counts them."""
    statistics = [[1.0, 2.0, 0.25], [3.0, 0.0, 0.5], [5.0, 7.0, 0.125]]
    con = duckdb.connect()
    register_all(con)
    got = con.execute("select srlens_resample_sums(?::double[][], 6, 40, 3)", [statistics]).fetchone()[0]
    idx = np.random.default_rng(3).choice(3, size=(6, 3), replace=True)
    mask = np.random.default_rng(3).integers(2, size=(40, 3), dtype=bool)
    column_sums = lambda rows: [sum(statistics[i][c] for i in rows) for c in range(3)]  # noqa: E731
    want = (
        [("observed", 0, column_sums(range(3)))]
        + [("bootstrap", s, column_sums(idx[s])) for s in range(6)]
        + [("ar", r, column_sums([i for i in range(3) if mask[r, i]])) for r in range(40)]
    )
    assert list(zip(got["kind"], got["sample"], got["sums"])) == want
    assert ("ar", [0.0, 0.0, 0.0]) in [(k, s) for k, _, s in want]  # the case the old SQL join dropped
    assert con.execute("select srlens_resample_sums(null, 6, 40, 3)").fetchone()[0] is None
    # a statistic NULL in every sentence (BLEU's of a reference-free run) sums to NULL, as SQL's sum
    partial = [[a, None, c] for a, _, c in statistics]
    got = con.execute("select srlens_resample_sums(?::double[][], 6, 40, 3)", [partial]).fetchone()[0]
    assert got["sums"] == [[a, None, c] for a, _, c in (sums for _, _, sums in want)]
    with pytest.raises(duckdb.Error, match="NULL in some sentences and not in others"):
        con.execute("select srlens_resample_sums([[1.0], [null]]::double[][], 6, 40, 3)").fetchone()


def test_resampled_sums_of_many_lists_in_one_call():
    """Over 2,048 lists of different lengths (several arrow batches, sliced lists): each row's sums
    are its own list's, as the one-list call gives them."""
    con = duckdb.connect()
    register_all(con)
    rows = con.execute(
        "select list([i::double, (i * r)::double] order by i), srlens_resample_sums("
        "list([i::double, (i * r)::double] order by i), 4, 3, 11) "
        "from range(1, 2500) a(r), range(0, 9) b(i) where i < r % 9 + 1 group by r"
    ).fetchall()
    assert len(rows) == 2499
    for statistics, got in rows:
        idx = np.random.default_rng(11).choice(len(statistics), size=(4, len(statistics)), replace=True)
        assert got["sums"][1:5] == [[sum(statistics[i][c] for i in idx[s]) for c in range(2)] for s in range(4)]


def test_quantile_cont_is_duckdbs_to_the_bit():
    """pairwise_significance's intervals come from udfs/resample.py quantile_cont: equal to DuckDB's
    own quantile_cont (undefined samples, NaN here and NULL there, left out) in every bit."""
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(300, 1000)) * rng.choice([1e-3, 1.0, 100.0], size=(300, 1))
    rows[rng.random(rows.shape) < rng.choice([0.0, 0.01, 0.5], size=(300, 1))] = np.nan
    rows[0] = np.nan  # no defined sample: NULL
    rows[1, 1:] = np.nan  # one: that value
    db = duckdb.connect()
    for q in (0.025, 0.975):
        expected = [
            db.execute(f"select quantile_cont(x, {q}) from unnest(?::double[]) t(x)", [row]).fetchone()[0]
            for row in ([None if math.isnan(v) else v for v in r] for r in rows.tolist())
        ]
        got = quantile_cont(rows, q)
        assert np.isnan(got[0]) and expected[0] is None
        assert got[1:].tolist() == expected[1:]


@pytest.mark.slow
@pytest.mark.parametrize("b", [SWAPS, "demo/en_ewt_demo/perturb/random", "demo/en_ewt_demo/baseline/hall_nemec"])
def test_pairs_of_whole_runs_equal_the_reference(con, b):
    a_stats, b_stats = statistics(con, GOLD), statistics(con, b)
    order = sorted(a_stats)
    for metric in METRICS:
        got = mart_row(con, GOLD, b, metric)
        a, bb = [a_stats[i] for i in order], [b_stats[i] for i in order]
        if metric == "rule_score_mean":  # no rule scores without a parse: undefined, no row
            assert got is None
            continue
        assert_same(got, paired_test(a, bb, metric), (b, metric))


@pytest.mark.slow
def test_a_pair_with_missing_sentences_uses_the_common_sentences(con):
    """swaps_partial lacks a third of the sentences: the pair's own draws over the common list."""
    a_stats, b_stats = statistics(con, GOLD), statistics(con, PARTIAL)
    common = sorted(set(a_stats) & set(b_stats))
    assert len(common) < len(a_stats)
    n = con.execute(
        "select distinct n from pairwise_significance where submission_a = ? and submission_b = ?", [PARTIAL, GOLD]
    ).fetchall()
    assert n == [(len(common),)]
    for metric in ("corpus_bleu", "dea", "bleu_mean", "reorder_accuracy_mean"):
        want = paired_test([b_stats[i] for i in common], [a_stats[i] for i in common], metric)
        assert_same(mart_row(con, PARTIAL, GOLD, metric), want, metric)


@pytest.mark.slow
def test_identical_runs_give_p_one_and_no_winner(con):
    rows = con.execute(
        "select metric, delta, p_value, p_value_ar, winner from pairwise_significance "
        "where submission_a = ? and submission_b = ?",
        [GOLD, COPY],
    ).fetchall()
    assert len(rows) == len(METRICS) - 1  # all but rule_score_mean
    assert all(r[1:] == (0.0, 1.0, 1.0, None) for r in rows), rows


@pytest.mark.slow
def test_a_run_beats_its_degraded_copy_and_both_orders_agree(con):
    for metric in ("corpus_bleu", "dea", "bleu_mean"):
        ab, ba = mart_row(con, GOLD, SWAPS, metric), mart_row(con, SWAPS, GOLD, metric)
        assert ab["p_value"] < 0.01 and ab["p_value_ar"] < 0.01 and ab["delta"] > 0
        assert ab["ci_low"] > 0 and ab["winner"] == "a" and ba["winner"] == "b"
        assert ba["delta"] == -ab["delta"] and ba["p_value"] == ab["p_value"]
        assert math.isclose(ba["ci_low"], -ab["ci_high"], rel_tol=1e-12)


@pytest.mark.slow
def test_every_pair_of_a_corpus_has_a_row(con):
    runs = con.execute("select corpus, count(*) from staging.stg_submissions group by all").fetchall()
    pairs = dict(
        con.execute(
            "select corpus, count(distinct (submission_a, submission_b)) from pairwise_significance group by all"
        ).fetchall()
    )
    assert pairs == {corpus: k * (k - 1) for corpus, k in runs}


@pytest.mark.slow
def test_submission_intervals_equal_the_reference(con):
    for submission_id in (GOLD, SWAPS, PARTIAL):
        sentences = [s for _, s in sorted(statistics(con, submission_id).items())]
        got = con.execute(
            "select corpus_bleu, corpus_bleu_ci_low, corpus_bleu_ci_high, corpus_bleu_boot_mean, "
            "dea, dea_ci_low, dea_ci_high, dea_boot_mean from submission_scores "
            "where submission_id = ?",
            [submission_id],
        ).fetchone()
        for k, metric in ((0, "corpus_bleu"), (4, "dea")):
            low, high, mean = interval(sentences, metric)
            assert got[k + 1 : k + 4] == pytest.approx((low, high, mean), rel=1e-12, abs=1e-12)
            assert low <= got[k] <= high
            assert low < high or submission_id == GOLD  # gold keeps every edge: DEA 1 in every sample


@pytest.mark.slow
def test_the_readme_worked_analysis_is_what_the_demo_gives(con):
    """docs/analysis.md's "Is A better than B, where, and why" quotes these figures of the demo; the two runs
    added by the fixture change none of them (pairs, buckets and examples are per run or pair)."""
    readme = " ".join((REPO / "docs" / "analysis.md").read_text(encoding="utf-8").split())
    a, b = "demo/en_ewt_demo/baseline/hall_nemec", "demo/en_ewt_demo/perturb/advmod_moved"
    bleu, dea_row = mart_row(con, a, b, "corpus_bleu"), mart_row(con, a, b, "dea")
    assert bleu["winner"] == dea_row["winner"] == "a"
    assert (
        f"+{bleu['delta']:.3f} corpus BLEU, interval [{bleu['ci_low']:.3f}, {bleu['ci_high']:.3f}], "
        f"p = {bleu['p_value']:.3f} (AR {bleu['p_value_ar']:.3f}); +{dea_row['delta']:.3f} DEA, "
        f"[{dea_row['ci_low']:.3f}, {dea_row['ci_high']:.3f}], p = {dea_row['p_value']:.3f}."
    ) in readme
    buckets = {
        (run, bucket): (sentences, dea)
        for run, bucket, sentences, dea in con.execute(
            "select run, bucket, sentences, dea from bucket_scores where corpus = 'en_ewt_demo' "
            "and run in ('hall_nemec', 'advmod_moved') and dimension = 'sentence_length'"
        ).fetchall()
    }
    short_a, short_b = buckets["hall_nemec", "0-5"], buckets["advmod_moved", "0-5"]
    assert short_b[1] > short_a[1]
    assert (
        f"on the {short_a[0]} sentences of 0-5 words B keeps more edges (DEA {short_b[1]:.3f} against {short_a[1]:.3f})"
        in readme
    )
    for bucket in ("6-10", "21-40"):
        assert (
            f"{buckets['hall_nemec', bucket][1]:.3f} against {buckets['advmod_moved', bucket][1]:.3f} at {bucket}"
            in readme
        )
    assert all(buckets["hall_nemec", k][1] > buckets["advmod_moved", k][1] for k in ("6-10", "11-20", "21-40"))
    worst = con.execute(
        "select relation, edges, matched from dea_by_relation where submission_id = ? order by dea, edges desc limit 1",
        [b],
    ).fetchone()
    kept_a = con.execute(
        "select matched / edges from dea_by_relation where submission_id = ? and relation = 'advmod'", [a]
    ).fetchone()[0]
    assert worst == ("advmod", 175, 0)
    assert f"B keeps none of its 175 adverbial edges, A keeps {round(100 * kept_a)}% of them" in readme
    key_missed, key_edges, reference, output = con.execute(
        "select key_missed, key_edges, reference_text, output_text from error_examples "
        "where submission_id = ? and kind = 'relation' and key = 'advmod' and rank = 1",
        [b],
    ).fetchone()
    assert key_missed == key_edges == 7 and "The worst sentence misses all 7 of its advmod edges" in readme
    assert reference.startswith("I doubt the very few who actually read my blog have not come across this yet")
    assert output.startswith("I doubt the few very who read actually my blog have yet come not across this")


@pytest.mark.slow
def test_the_mart_catalogue_describes_every_column_metric_and_dimension(con):
    """The marts' yml files are the one catalogue (`srlens docs` renders them): every column the build
    makes in these marts is described there, every bucket dimension is named in its column's
    description, and every metric the build compares is one of corpus_bleu, dea or <score>_mean,
    the three forms the metric column's description names."""
    described = {}
    for path in sorted((DBT_PROJECT_DIR / "models" / "marts").glob("_*.yml")):
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            described[model["name"]] = {c["name"]: c.get("description", "") for c in model.get("columns", [])}
    marts = ["pairwise_significance", "bucket_scores", "error_examples", "ensemble_selection", "ensemble_choices"]
    for mart in marts + ["submission_scores"]:
        columns = [
            c
            for (c,) in con.execute(
                "select column_name from information_schema.columns where table_schema = 'main' and table_name = ?",
                [mart],
            ).fetchall()
        ]
        assert columns, mart
        assert [c for c in columns if not described[mart].get(c, "").strip()] == [], mart
    metrics = {m for (m,) in con.execute("select distinct metric from pairwise_significance").fetchall()}
    assert {"corpus_bleu", "dea"} <= metrics <= set(METRICS), metrics  # no rule_score_mean under aligned
    assert all(form in described["pairwise_significance"]["metric"] for form in ("corpus_bleu", "dea", "<score>_mean"))
    dimensions = {d for (d,) in con.execute("select distinct dimension from bucket_scores").fetchall()}
    assert len(dimensions) == 7 and all(d in described["bucket_scores"]["dimension"] for d in dimensions), dimensions


# ---------------------------------------------------------------- buckets


@pytest.fixture(scope="module")
def demo_sentences():
    """sent_id -> (analysis tree, output lemmas of swaps) for en_ewt_demo, computed in Python."""
    path = DEMO_MANIFEST.parent / "treebanks" / "en_ewt_demo.conllu"
    trees = {t.sent_id: t for t in read_analysis_trees(path)}
    words = reference_words(read_conllu(path))
    texts = {}
    for block in (RUNS / "swaps.sr.txt").read_text(encoding="utf-8").strip().split("\n\n"):
        meta = dict(line[2:].split(" = ", 1) for line in block.splitlines() if " = " in line)
        texts[meta["sent_id"]] = meta.get("text", "")
    return {sid: (tree, aligned_lemmas(texts[sid], *words[sid])) for sid, tree in trees.items()}


def bucket_of(value, bounds):
    return max(k for k, lower in enumerate(bounds, start=1) if value >= lower)


@pytest.mark.slow
def test_sentence_length_buckets_equal_nltk_and_the_reference(con, demo_sentences):
    bounds = [0, 6, 11, 21, 41]
    hyps, refs, edges = defaultdict(list), defaultdict(list), defaultdict(lambda: [0, 0])
    for tree, out in demo_sentences.values():
        k = bucket_of(tree.n, bounds)
        ref = [lemma.lower() for lemma in tree.lemmas]
        hyps[k].append(out)
        refs[k].append([ref])
        matched, n_edges, _ = dea(ref, tree.heads, tree.deprels, out)
        edges[k][0] += n_edges
        edges[k][1] += matched
    rows = con.execute(
        "select bucket_no, bucket, sentences, corpus_bleu, edges, matched, dea from bucket_scores "
        "where submission_id = ? and dimension = 'sentence_length' order by bucket_no",
        [SWAPS],
    ).fetchall()
    assert [r[1] for r in rows] == ["0-5", "6-10", "11-20", "21-40", "41+"]
    for k, _, sentences, bleu, n_edges, matched, dea_value in rows:
        assert sentences == len(hyps[k])
        if sentences:
            assert bleu == corpus_bleu(refs[k], hyps[k], smoothing_function=SmoothingFunction().method2)
        assert (n_edges, matched) == tuple(edges[k])
        assert dea_value == (matched / n_edges if n_edges else None)


@pytest.mark.slow
@pytest.mark.parametrize(
    "dimension, bounds, labels",
    [
        ("tree_depth", [0, 3, 5, 7], ["0-2", "3-4", "5-6", "7+"]),
        ("mean_dependency_distance", [0, 2, 3, 4], ["<2", "2-3", "3-4", "4+"]),
        ("mean_flux_weight", [0, 1, 1.5, 2], ["<1", "1-1.5", "1.5-2", "2+"]),
        ("projectivity", None, ["projective", "non-projective"]),
    ],
)
def test_tree_shape_buckets_equal_the_reference(con, demo_sentences, dimension, bounds, labels):
    """Each sentence bucketed by its SPEC-1 metric from tests/support/reference_metrics.py (an all-punctuation
    sentence counts as 0 and projective), then corpus BLEU (nltk), micro DEA and mean sentence BLEU."""
    hyps, refs, edges, bleus = defaultdict(list), defaultdict(list), defaultdict(lambda: [0, 0]), defaultdict(list)
    for tree, out in demo_sentences.values():
        metrics = sentence_metrics(tree)
        if dimension == "projectivity":
            k = 1 if metrics["is_projective"] in (True, None) else 2
        else:
            k = bucket_of(metrics[dimension] or 0, bounds)
        ref = [lemma.lower() for lemma in tree.lemmas]
        hyps[k].append(out)
        refs[k].append([ref])
        bleus[k].append(sentence_bleu([ref], out, smoothing_function=SmoothingFunction().method2))
        matched, n_edges, _ = dea(ref, tree.heads, tree.deprels, out)
        edges[k][0] += n_edges
        edges[k][1] += matched
    rows = con.execute(
        "select bucket_no, bucket, sentences, corpus_bleu, edges, matched, dea, bleu_mean from bucket_scores "
        "where submission_id = ? and dimension = ? order by bucket_no",
        [SWAPS, dimension],
    ).fetchall()
    assert [r[1] for r in rows] == labels
    assert sum(r[2] for r in rows) == len(demo_sentences) and sum(1 for r in rows if r[2]) >= 2
    for k, _, sentences, bleu, n_edges, matched, dea_value, bleu_mean in rows:
        assert sentences == len(hyps[k])
        if sentences:
            assert bleu == pytest.approx(
                corpus_bleu(refs[k], hyps[k], smoothing_function=SmoothingFunction().method2), rel=1e-12, abs=1e-15
            )
            assert bleu_mean == pytest.approx(sum(bleus[k]) / len(bleus[k]), rel=1e-12, abs=1e-15)
        else:
            assert bleu is None and dea_value is None
        assert (n_edges, matched) == tuple(edges[k])
        assert dea_value == (matched / n_edges if n_edges else None)


@pytest.mark.slow
def test_relation_and_word_frequency_buckets(con, demo_sentences):
    """en_ewt_demo is the only English treebank loaded, so it is the frequency treebank."""
    relation_count, lemma_count = Counter(), Counter()
    for tree, _ in demo_sentences.values():
        relation_count.update(d.split(":")[0] for d, h in zip(tree.deprels, tree.heads) if h)
        lemma_count.update(lemma.lower() for lemma in tree.lemmas)
    relations, words = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    for tree, out in demo_sentences.values():
        ref = [lemma.lower() for lemma in tree.lemmas]
        for relation, (n_edges, matched) in dea(ref, tree.heads, tree.deprels, out)[2].items():
            k = bucket_of(relation_count[relation], [0, 100, 1000, 10000])
            relations[k][0] += n_edges
            relations[k][1] += matched
        have = Counter(out)
        for lemma, count in Counter(ref).items():
            k = bucket_of(lemma_count[lemma], [0, 1, 2, 10, 100, 1000])
            words[k][0] += count
            words[k][1] += min(count, have[lemma])
    got = {
        (d, k): (label, a, b)
        for d, k, label, a, b in con.execute(
            "select dimension, bucket_no, bucket, coalesce(edges, lemmas), coalesce(matched, recalled) "
            "from bucket_scores where submission_id = ? and dimension in ('relation_frequency', 'word_frequency')",
            [SWAPS],
        ).fetchall()
    }
    assert [got[("relation_frequency", k)][0] for k in range(1, 5)] == ["<100", "100-999", "1,000-9,999", "10,000+"]
    assert [got[("word_frequency", k)][0] for k in range(1, 7)] == ["0", "1", "2-9", "10-99", "100-999", "1,000+"]
    for k in range(1, 5):
        assert got[("relation_frequency", k)][1:] == tuple(relations[k])
    for k in range(1, 7):
        assert got[("word_frequency", k)][1:] == tuple(words[k])


# ---------------------------------------------------------------- examples


def sentence_bleu_of(tree, out):
    ref = [lemma.lower() for lemma in tree.lemmas]
    return sentence_bleu([ref], out, smoothing_function=SmoothingFunction().method2)


@pytest.mark.slow
def test_relation_examples_are_the_sentences_with_the_most_missed_edges(con, demo_sentences):
    """A plain Python pick (docs/definitions.md "Worst examples"): per relation, the sentences
    missing an edge of it, most missed first, then the larger share missed, the lower sentence
    BLEU (nltk), treebank order; the first 5."""
    candidates = defaultdict(list)  # relation -> sort keys of the sentences that miss one of its edges
    for sid, (tree, out) in demo_sentences.items():
        ref = [lemma.lower() for lemma in tree.lemmas]
        for relation, (n_edges, matched) in dea(ref, tree.heads, tree.deprels, out)[2].items():
            if matched < n_edges:
                missed = n_edges - matched
                bleu = sentence_bleu_of(tree, out)
                candidates[relation].append((-missed, -missed / n_edges, bleu, tree.sentence_index, sid, n_edges))
    want = {
        relation: [(rank, sid, -m, e) for rank, (m, _, _, _, sid, e) in enumerate(sorted(keys)[:5], start=1)]
        for relation, keys in candidates.items()
    }
    rows = con.execute(
        "select key, rank, sent_id, key_missed, key_edges from error_examples "
        "where submission_id = ? and kind = 'relation' order by key, rank",
        [SWAPS],
    ).fetchall()
    got = defaultdict(list)
    for key, rank, sid, key_missed, key_edges in rows:
        got[key].append((rank, sid, key_missed, key_edges))
    assert len(want) > 10 and sum(map(len, want.values())) > 50
    assert got == want


@pytest.mark.slow
def test_example_rows_carry_the_missed_edges_of_their_sentence(con):
    rows = con.execute(
        "select e.missed, len(e.missed_edges), s.dea_edges - s.dea_matched, e.edges, s.dea_edges, e.kind, "
        "e.mining_score, m.is_fail "
        "from error_examples e join sentence_scores s using (submission_id, sent_idx) "
        "left join intermediate.int_mining_sentences m using (submission_id, sent_idx) "
        "where e.submission_id like 'demo/%'"
    ).fetchall()
    assert rows and {r[5] for r in rows} == {"relation", "subtree"}
    for missed, listed, from_scores, edges, dea_edges, kind, _, is_fail in rows:
        assert missed == listed == from_scores and edges == dea_edges
        assert kind == "relation" or is_fail
    edge = con.execute(
        "select missed_edges[1] from error_examples where kind = 'relation' and missed > 0 "
        "order by submission_id, key, rank limit 1"
    ).fetchone()[0]
    assert set(edge) == {"head_pos", "head", "dep_pos", "dependent", "relation", "distance"}
    assert edge["distance"] == edge["dep_pos"] - edge["head_pos"]


@pytest.mark.slow
def test_subtree_examples_equal_a_python_pick_of_failing_sentences(con, demo_sentences):
    """Error mining redone in Python (tests/support/reference_mining.py, nltk sentence BLEU): per view the
    25 most suspicious subtrees (highest S(f), then the subtree), each with the FAIL sentences that
    contain it, lowest BLEU first, then more missed edges, then treebank order; the first 5."""
    trees = {tree.sentence_index: (sid, tree, out) for sid, (tree, out) in demo_sentences.items()}
    bleu = {idx: sentence_bleu_of(tree, out) for idx, (_, tree, out) in trees.items()}
    missed = {}
    for idx, (_, tree, out) in trees.items():
        matched, n_edges, _ = dea([lemma.lower() for lemma in tree.lemmas], tree.heads, tree.deprels, out)
        missed[idx] = n_edges - matched
    forms = {idx: sentence_subtrees(tree) for idx, (_, tree, _) in trees.items()}
    threshold, _, rows = mine_submission(bleu, {idx: set(found) for idx, found in forms.items()})
    fail = {idx for idx, score in bleu.items() if score <= threshold}
    want = {}
    for view in VIEWS:
        suspicious = sorted(
            (-row["suspicion"], subtree) for (v, subtree), row in rows.items() if v == view and row["is_suspicious"]
        )
        for _, subtree in suspicious[:25]:
            picked = sorted((bleu[i], -missed[i], i) for i in fail if (view, subtree) in forms[i])[:5]
            want[(view, subtree)] = [trees[i][0] for _, _, i in picked]
    got = defaultdict(list)
    for view, key, sid in con.execute(
        "select view, key, sent_id from error_examples where submission_id = ? and kind = 'subtree' "
        "order by view, key, rank",
        [SWAPS],
    ).fetchall():
        got[(view, key)].append(sid)
    assert len(want) == 4 * 25 and all(want.values())
    assert dict(got) == want


# ---------------------------------------------------------------- the vars take effect

VARS = {
    "bootstrap_samples": 200,
    "ar_samples": 100,
    "bootstrap_seed": 7,
    "significance_alpha": 0.001,
    "bucket_sentence_length": [0, 10, 20],
    "bucket_mean_flux_weight": [0, 1.25],
    "examples_per_key": 2,
    "examples_max_subtrees": 3,
}


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    """The demo built with other draws, alpha, bucket bounds and example counts."""
    require_shared()
    warehouse = tmp_path_factory.mktemp("significance_vars") / "srlens.duckdb"
    load_demo(warehouse)
    # the marts the vars act on (and what they are made of); the tests read nothing else
    marts = "+pairwise_significance +submission_scores +bucket_scores +error_examples"
    build(warehouse, echo=False, processor="aligned", dbt_vars=VARS, select=marts)
    connection = duckdb.connect(str(warehouse), read_only=True)
    yield connection
    connection.close()


@pytest.mark.slow
def test_the_significance_vars_set_the_draws_and_the_alpha(varied):
    a_stats, b_stats = statistics(varied, GOLD), statistics(varied, SWAPS)
    order = sorted(a_stats)
    for metric in ("corpus_bleu", "dea"):
        want = paired_test([a_stats[i] for i in order], [b_stats[i] for i in order], metric, 200, 100, 7, 0.001)
        assert_same(mart_row(varied, GOLD, SWAPS, metric), want, metric)
        assert want["p_value"] == 1 / 201 and want["winner"] is None  # the smallest p is not below 0.001
    assert varied.execute("select count(*) from pairwise_significance where winner is not null").fetchone() == (0,)
    assert varied.execute("select distinct bootstrap_seed from pairwise_significance").fetchall() == [(7,)]
    low, high, mean = interval([s for _, s in sorted(b_stats.items())], "dea", 200, 7)
    got = varied.execute(
        "select dea_ci_low, dea_ci_high, dea_boot_mean from submission_scores where submission_id = ?", [SWAPS]
    )
    assert got.fetchone() == pytest.approx((low, high, mean), rel=1e-12, abs=1e-12)


@pytest.mark.slow
def test_the_bucket_vars_set_the_bounds_and_labels(varied, demo_sentences):
    for dimension, bounds, labels, measure in (
        ("sentence_length", [0, 10, 20], ["0-9", "10-19", "20+"], "tree_length"),
        ("mean_flux_weight", [0, 1.25], ["<1.25", "1.25+"], "mean_flux_weight"),
    ):
        want = Counter(bucket_of(sentence_metrics(tree)[measure] or 0, bounds) for tree, _ in demo_sentences.values())
        rows = varied.execute(
            "select bucket_no, bucket, sentences from bucket_scores where submission_id = ? and dimension = ? "
            "order by bucket_no",
            [SWAPS, dimension],
        ).fetchall()
        assert [(k, label, want[k]) for k, label in enumerate(labels, start=1)] == rows


@pytest.mark.slow
def test_the_example_vars_set_how_many(varied):
    ranks = varied.execute("select kind, max(rank) from error_examples group by all order by kind").fetchall()
    assert ranks == [("relation", 2), ("subtree", 2)]
    per_view = varied.execute(
        "select max(n) from (select submission_id, view, count(distinct key) n from error_examples "
        "where kind = 'subtree' group by all)"
    ).fetchone()
    assert per_view == (3,)
