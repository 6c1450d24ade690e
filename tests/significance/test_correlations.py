"""SPEC section 10 through the real loaders and dbt build: human judgments and their z-scores,
Spearman correlations with Holm-Bonferroni, their aggregates, Mann-Whitney projectivity tests and
the entropy/DEA correlation. Every statistic is checked against scipy called here, directly, on
vectors pulled from the warehouse with plain SQL."""

import csv
import math
import random
import statistics
import warnings
import zlib
from collections import defaultdict

import duckdb
import pytest
from scipy import stats

from srlens.build import build
from srlens.cli import main
from srlens.demo import load_demo
from srlens.loaders.errors import LoadError
from srlens.loaders.human import load_human
from srlens.loaders.load import load_outputs, load_treebank
from tests.conftest import table_snapshot

# The variables of metric_correlations, in the order that decides metric_a / metric_b.
SCORE_VARIABLES = [
    "bleu",
    "dea",
    "simple_string_accuracy",
    "generation_string_accuracy",
    "simple_tree_accuracy",
    "generation_tree_accuracy",
    "reorder_accuracy",
    "rule_score",
    "fluency_z",
    "adequacy_z",
    "sacrebleu_bleu",
    "chrf",
]
COMPLEXITY_VARIABLES = [
    "tree_depth",
    "tree_length",
    "mean_dependency_distance",
    "mean_flux_size",
    "mean_flux_weight",
    "mean_arity",
]
VARIABLES = SCORE_VARIABLES + COMPLEXITY_VARIABLES


# --------------------------------------------------------------------------- data set builders

RELATIONS = ["nmod", "obj", "amod", "advmod", "det", "case"]
CHAIN_SENTENCES = 30
NONPROJECTIVE = "c29"


def chain_length(k):
    """Words of chain sentence c{k}: 3..12, each length three times (ties)."""
    return 4 if k == 29 else 3 + k % 10


def chain_conllu():
    """30 right-branching chains (depth n - 1, projective) and one non-projective 4-word tree."""
    blocks = []
    for k in range(CHAIN_SENTENCES):
        n = chain_length(k)
        heads = [4, 0, 2, 2] if f"c{k}" == NONPROJECTIVE else [i - 1 for i in range(1, n + 1)]
        rows = []
        for i, head in enumerate(heads, start=1):
            deprel = "root" if head == 0 else RELATIONS[(k + i) % len(RELATIONS)]
            rows.append(f"{i}\tw{i}\tw{i}\tX\t_\t_\t{head}\t{deprel}\t_\t_")
        blocks.append(f"# sent_id = c{k}\n" + "\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


def chain_run(shuffle):
    blocks = []
    for k in range(CHAIN_SENTENCES):
        words = [f"w{i}" for i in range(1, chain_length(k) + 1)]
        if shuffle:
            random.Random(k).shuffle(words)
        blocks.append(f"# sent_id = c{k}\n# text = {' '.join(words)}\n")
    return "\n".join(blocks) + "\n"


HEADER = ["campaign", "corpus", "team", "run", "annotator", "sent_id", "criterion", "score"]

# The synthetic chain corpus, campaign 'default', annotator 'syn':
#  * run gold, 15 sentences (c29 non-projective among them): fluency = 10 * words, a strictly
#    monotone function of tree_length (rho = 1, with ties); adequacy independent random numbers;
#  * run shuffled: fluency on 2 projective sentences (n = 2), adequacy on the non-projective one only.
GOLD_JUDGED = [f"c{k}" for k in range(14)] + [NONPROJECTIVE]


def chain_judgments():
    draw = random.Random(2021)
    rows = []
    for sent_id in GOLD_JUDGED:
        k = int(sent_id[1:])
        rows.append(["default", "chain", "syn", "gold", "syn", sent_id, "fluency", 10 * chain_length(k)])
        rows.append(["default", "chain", "syn", "gold", "syn", sent_id, "adequacy", draw.randint(0, 100)])
    rows += [
        ["default", "chain", "syn", "shuffled", "syn", "c0", "fluency", 35],
        ["default", "chain", "syn", "shuffled", "syn", "c1", "fluency", 45],
        ["default", "chain", "syn", "shuffled", "syn", NONPROJECTIVE, "adequacy", 50],
    ]
    return rows


def hand_judgments(en_ids):
    """The z-scores of these are worked out by hand in test_z_scores_by_hand."""
    s1, s2, s3 = en_ids[:3]
    run = ["demo", "en_ewt_demo", "baseline", "gold"]
    return [
        run + ["hand_x", s1, "fluency", 1],
        run + ["hand_x", s2, "fluency", 2],
        run + ["hand_x", s3, "fluency", 3],
        run + ["hand_x", s1, "Adequacy", 6],
        run + ["hand_y", s1, "fluency", 5],
        run + ["hand_y", s2, "fluency", 5],
        run + ["hand_z", s2, "fluency", 4],
        run + ["hand_z", s3, "fluency", 8],
        # The same annotator id in another campaign is another person: not pooled with the above.
        ["default", "chain", "syn", "shuffled", "hand_x", "c0", "fluency", 1000],
    ]


DEMO_JUDGED_RUNS = [
    ("en_ewt_demo", "perturb", "swaps"),
    ("en_ewt_demo", "perturb", "random"),
    ("fr_gsd_demo", "perturb", "swaps"),
    ("fr_gsd_demo", "baseline", "head_final"),
]


def jitter(*key):
    return zlib.crc32("|".join(map(str, key)).encode()) % 7 - 3


def demo_judgments(con):
    """2 annotators x 4 demo runs x 30 sentences (every non-projective sentence of the corpus, then
    projective ones), scores derived from the sentence's BLEU (fluency) and DEA (adequacy), each
    annotator with their own scale, plus a deterministic jitter."""
    rows = []
    for corpus, team, run in DEMO_JUDGED_RUNS:
        sentences = con.execute(
            "select s.sent_id, s.bleu, s.dea from sentence_scores s join sentence_complexity c "
            "using (corpus, sent_idx) where s.corpus = ? and s.team = ? and s.run = ? "
            "order by c.is_projective, s.sent_idx limit 30",
            [corpus, team, run],
        ).fetchall()
        for sent_id, bleu, dea in sentences:
            for annotator, low, span in (("A", 20, 70), ("B", 10, 40)):
                rows.append(
                    [
                        "demo",
                        corpus,
                        team,
                        run,
                        annotator,
                        sent_id,
                        "fluency",
                        round(low + span * bleu) + jitter(annotator, run, sent_id, "f"),
                    ]
                )
                rows.append(
                    [
                        "demo",
                        corpus,
                        team,
                        run,
                        annotator,
                        sent_id,
                        "adequacy",
                        round(low + span * dea) + jitter(annotator, run, sent_id, "a"),
                    ]
                )
    return rows


def write_csv(path, rows, header=HEADER):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def human(built_warehouse, tmp_path_factory):
    """The demo, the synthetic chain corpus with two runs, and three judgment files; one build,
    entropy of the chain runs taken from en_ewt_demo (var entropy_corpus)."""
    root = tmp_path_factory.mktemp("human")
    wh = root / "wh.duckdb"
    load_demo(wh)
    (root / "chain.conllu").write_text(chain_conllu())
    load_treebank(wh, root / "chain.conllu", "chain")
    for run, shuffle in (("gold", False), ("shuffled", True)):
        (root / f"{run}.sr").write_text(chain_run(shuffle))
        load_outputs(wh, root / f"{run}.sr", "chain", "syn", run)
    shared = duckdb.connect(str(built_warehouse), read_only=True)
    try:
        demo_rows = demo_judgments(shared)
        en_ids = [
            r[0]
            for r in shared.execute(
                "select sent_id from sentence_complexity where corpus = 'en_ewt_demo' order by sent_idx"
            ).fetchall()
        ]
    finally:
        shared.close()
    files = {
        "demo": write_csv(root / "demo_human.csv", demo_rows),
        "chain": write_csv(root / "chain_human.csv", chain_judgments()),
        "hand": write_csv(root / "hand_human.csv", hand_judgments(en_ids)),
    }
    for path in files.values():
        load_human(wh, path)
    build(wh, echo=False, processor="aligned", dbt_vars={"entropy_corpus": {"chain": "en_ewt_demo"}})
    con = duckdb.connect(str(wh), read_only=True)
    yield {"con": con, "en_ids": en_ids, "demo_rows": demo_rows}
    con.close()


# --------------------------------------------------------------------------- reference computations


def holm(pvalues):
    """Holm-Bonferroni adjusted p-values, in input order."""
    m = len(pvalues)
    adjusted, running = [None] * m, 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: pvalues[i]), start=1):
        running = max(running, (m - rank + 1) * pvalues[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def test_holm_reference_on_a_hand_computed_case():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped
    assert holm([0.02, 0.02, 0.9]) == [0.06, 0.06, 0.9]  # ties get the same value, whatever their order


def spearman_pairs_in_sql(rows):
    """[[(a, b, n, rho, p_value) per pair a < b]] of srlens_spearman_pairs over rows of samples, in one
    DuckDB table."""
    from srlens.udfs import stats as udf_stats

    con = duckdb.connect()
    udf_stats.register(con)
    con.execute("create table t (k integer, samples double[][])")
    con.executemany("insert into t values (?, ?)", list(enumerate(rows)))
    got = con.execute("select srlens_spearman_pairs(samples) from t order by k").fetchall()
    con.close()
    return [[(t["a"], t["b"], t["n"], t["rho"], t["p_value"]) for t in pairs] for (pairs,) in got]


def complete_pairs_spearman(xs, ys):
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    return expected_spearman([x for x, _ in pairs], [y for _, y in pairs])


def test_spearman_pairs_udf_equals_scipy_bit_for_bit():
    """srlens_spearman_pairs (metric_correlations) on lists with NULLs, ties, constant and tiny
    samples, in batches of several arrow chunks: exactly scipy.stats.spearmanr on the complete pairs."""
    draw = random.Random(18)
    rows = []
    for _ in range(3000):
        size = draw.choice([0, 1, 2, 3, 4, 7, 30, 200])
        spread = draw.choice([1, 3, 1000])
        xs = [None if draw.random() < 0.2 else float(draw.randint(0, spread)) for _ in range(size)]
        ys = [
            None if draw.random() < 0.1 else draw.choice([draw.random(), float(draw.randint(0, 2))])
            for _ in range(size)
        ]
        rows.append([xs, ys])
    got = spearman_pairs_in_sql(rows)
    defined = 0
    for k, ((pair,), (xs, ys)) in enumerate(zip(got, rows)):
        assert pair == (1, 2, *complete_pairs_spearman(xs, ys)), (k, xs, ys)
        defined += pair[3] is not None
    assert 1000 < defined < len(rows) - 1000  # both defined and undefined cases were met


def test_spearman_pairs_udf_reuses_ranks_only_of_equal_samples():
    """As metric_correlations calls it: every pair of a run's variables, so one variable's list comes
    again and again, with and without NULLs on the other side; ranks kept for one sample must never
    serve another (same values in another order, one value changed, a NULL more)."""
    draw = random.Random(26)
    base = [float(draw.randint(0, 5)) for _ in range(40)]
    variables = [
        base,
        base[::-1],
        [*base[:-1], base[-1] + 1],
        [None if k % 7 == 0 else x for k, x in enumerate(base)],
        [draw.random() for _ in range(40)],
        [None if k % 3 == 0 else draw.random() for k in range(40)],
        base,
    ]
    [got] = spearman_pairs_in_sql([variables])
    want = [
        (a + 1, b + 1, *complete_pairs_spearman(variables[a], variables[b]))
        for a in range(len(variables))
        for b in range(a + 1, len(variables))
    ]
    assert got == want


def test_spearman_pairs_udf_rows_and_lengths():
    """Rows with no sample or one (no pair), and samples of different lengths in a row (an error)."""
    assert spearman_pairs_in_sql([[], [[1.0, 2.0, 3.0]]]) == [[], []]
    with pytest.raises(duckdb.Error, match="different lengths"):
        spearman_pairs_in_sql([[[1.0, 2.0, 3.0], [1.0, 2.0]]])


def sentence_vectors(con):
    """{submission_id: {variable: {sent_idx: value}}}, from sentence_scores and sentence_complexity."""
    present = {
        r[0]
        for r in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'main' and table_name = 'sentence_scores'"
        ).fetchall()
    }
    scores = [v for v in SCORE_VARIABLES if v in present]  # rule_score once L'AMBRE adds it
    columns = scores + COMPLEXITY_VARIABLES
    rows = con.execute(
        f"select s.submission_id, s.sent_idx, {', '.join(columns)} from sentence_scores s "
        "join sentence_complexity c using (corpus, sent_idx) where not s.is_missing"
    ).fetchall()
    out = defaultdict(lambda: defaultdict(dict))
    for submission_id, sent_idx, *values in rows:
        for column, value in zip(columns, values):
            if value is not None:
                out[submission_id][column][sent_idx] = float(value)
    return out


def expected_spearman(xs, ys):
    """What metric_correlations should hold: scipy's values, NULL where n < 3 or a side is constant."""
    n = len(xs)
    if n < 3 or len(set(xs)) == 1 or len(set(ys)) == 1:
        if n >= 2:  # scipy agrees that rho (or p) is undefined there
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert math.isnan(stats.spearmanr(xs, ys).pvalue)
        return n, None, None
    result = stats.spearmanr(xs, ys)
    return n, float(result.statistic), float(result.pvalue)


def check_metric_correlations(con):
    """Every row of metric_correlations against scipy and the Holm reference; returns the rows."""
    vectors = sentence_vectors(con)
    got = {
        (r[0], r[1], r[2]): r[3:]
        for r in con.execute(
            "select submission_id, metric_a, metric_b, n, rho, p_value, p_holm, significant, holm_tests "
            "from metric_correlations"
        ).fetchall()
    }
    expected = {}
    for submission_id, by_variable in vectors.items():
        variables = [v for v in VARIABLES if by_variable.get(v)]
        for i, a in enumerate(variables):
            for b in variables[i + 1 :]:
                common = sorted(by_variable[a].keys() & by_variable[b].keys())
                xs = [by_variable[a][k] for k in common]
                ys = [by_variable[b][k] for k in common]
                expected[(submission_id, a, b)] = expected_spearman(xs, ys)
    assert got.keys() == expected.keys()
    for key, (n, rho, p) in expected.items():
        assert got[key][:3] == (n, rho, p), key
    # Holm within each submission, over the pairs that have a p-value.
    by_submission = defaultdict(list)
    for key, (_, _, p) in expected.items():
        if p is not None:
            by_submission[key[0]].append((key, p))
    for pairs in by_submission.values():
        for (key, _), adjusted in zip(pairs, holm([p for _, p in pairs])):
            assert got[key][3:] == (adjusted, adjusted < 0.05, len(pairs)), key
    untested = [key for key, (_, _, p) in expected.items() if p is None]
    assert all(got[key][3:5] == (None, None) for key in untested)
    return got


# --------------------------------------------------------------------------- the demo warehouse


def test_demo_correlations_equal_scipy_and_holm(warehouse_con):
    got = check_metric_correlations(warehouse_con)
    demo = {k: v for k, v in got.items() if k[0].startswith("demo/")}
    # Every demo run is there; no human judgments, so no fluency/adequacy pairs.
    runs = warehouse_con.execute("select count(*) from submission_scores where campaign = 'demo'").fetchone()[0]
    assert len({k[0] for k in demo}) == runs >= 12
    assert not any("fluency_z" in k or "adequacy_z" in k for k in demo)
    # Guard against a vacuous check: real values, NULLs (constant DEA of en gold) and non-significant pairs.
    assert sum(v[1] is not None for v in demo.values()) > 800
    assert demo[("demo/en_ewt_demo/baseline/gold", "bleu", "dea")][:3] == (200, None, None)
    assert any(v[4] is False for v in demo.values()) and any(v[4] is True for v in demo.values())


def test_correlation_summary_aggregates_the_submissions(warehouse_con):
    rows = warehouse_con.execute(
        "select submission_id, corpus, team, campaign, metric_a, metric_b, rho, significant from metric_correlations"
    ).fetchall()
    groups = defaultdict(list)
    for _, corpus, team, campaign, a, b, rho, significant in rows:
        for scope, value in (("all", "all"), ("corpus", corpus), ("team", team), ("campaign", campaign)):
            groups[(scope, value, a, b)].append((rho, significant))
    got = {
        r[:4]: r[4:]
        for r in warehouse_con.execute(
            "select scope, scope_value, metric_a, metric_b, submissions, rho_median, rho_mean, "
            "significant_submissions, submissions_listed from correlation_summary"
        ).fetchall()
    }
    assert got.keys() == groups.keys()
    for key, values in groups.items():
        rhos = [rho for rho, _ in values if rho is not None]
        submissions, median, mean, significant, listed = got[key]
        assert (submissions, significant, listed) == (len(rhos), sum(s is True for _, s in values), len(values))
        if rhos:
            assert math.isclose(median, statistics.median(rhos), rel_tol=0, abs_tol=1e-12), key
            assert math.isclose(mean, statistics.fmean(rhos), rel_tol=0, abs_tol=1e-12), key
        else:
            assert (median, mean) == (None, None)
    # The demo finding quoted in docs/analysis.md: the median rho of BLEU and DEA over the demo runs is
    # 0.89; every run but the two gold runs contributes (their DEA is 1 on every sentence: rho
    # undefined; French gold too since the aligned processor matches '6 20 30').
    runs = warehouse_con.execute("select count(*) from submission_scores where campaign = 'demo'").fetchone()[0]
    (row,) = warehouse_con.execute(
        "select submissions, round(rho_median, 2) from correlation_summary "
        "where scope = 'all' and metric_a = 'bleu' and metric_b = 'dea'"
    ).fetchall()
    assert row == (runs - 2, 0.89)


def test_projectivity_is_skipped_below_the_threshold_with_the_reason(warehouse_con):
    # Demo corpora: 4 (en) and 8 (fr) non-projective sentences of 200, both at or below 5%.
    rows = warehouse_con.execute(
        "select corpus, score, n_projective, n_nonprojective, median_projective, u, tested, skipped_reason "
        "from projectivity_tests where campaign = 'demo'"
    ).fetchall()
    runs = warehouse_con.execute("select count(*) from submission_scores where campaign = 'demo'").fetchone()[0]
    assert len(rows) == runs * 3
    for corpus, score, n_proj, n_nonproj, median_proj, u, tested, reason in rows:
        assert not tested and u is None
        if score == "bleu":
            share = {"en_ewt_demo": 4, "fr_gsd_demo": 8}[corpus]
            assert (n_proj, n_nonproj) == (200 - share, share)
            assert median_proj is not None  # descriptive figures are still there
            assert reason == (
                f"non-projective sentences are {share} of 200 ({share / 2:.1f}%), not above the threshold of 5.0%"
            )
        else:
            assert (n_proj, n_nonproj, reason) == (0, 0, f"no {score} scores")


def test_entropy_dea_correlation_equals_scipy(warehouse_con):
    entropy = defaultdict(dict)
    for corpus, relation, h in warehouse_con.execute(
        "select corpus, relation, entropy from relation_entropy"
    ).fetchall():
        entropy[corpus][relation] = h
    dea = defaultdict(dict)
    for sub, corpus, relation, d in warehouse_con.execute(
        "select submission_id, corpus, relation, dea from dea_by_relation"
    ).fetchall():
        dea[(sub, corpus)][relation] = d
    got = {
        r[0]: r[1:]
        for r in warehouse_con.execute(
            "select submission_id, entropy_corpus, relations, rho, p_value from entropy_dea_correlation"
        ).fetchall()
    }
    assert {sub for sub, _ in dea} <= got.keys()
    for (sub, corpus), by_relation in dea.items():
        relations = sorted(by_relation.keys() & entropy[corpus].keys())
        n, rho, p = expected_spearman([entropy[corpus][r] for r in relations], [by_relation[r] for r in relations])
        assert got[sub] == (corpus, n, rho, p), sub
    assert got["demo/fr_gsd_demo/perturb/random"][1] == 29
    assert got["demo/en_ewt_demo/baseline/gold"][2] is None  # gold DEA is 1 for every relation


# --------------------------------------------------------------------------- human judgments


def z_scores(rows):
    """{(campaign, annotator, ...judgment): z}, per (campaign, annotator), sample SD, all criteria."""
    by_annotator = defaultdict(list)
    for row in rows:
        by_annotator[(row[0], row[4])].append(row)
    z = {}
    for judgments in by_annotator.values():
        scores = [float(r[7]) for r in judgments]
        sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
        mean = statistics.fmean(scores)
        for r in judgments:
            z[tuple(r[:7])] = (float(r[7]) - mean) / sd if sd else None
    return z


@pytest.mark.slow
def test_z_scores_by_hand(human):
    con, (s1, s2, s3) = human["con"], human["en_ids"][:3]
    sd_x = math.sqrt(14 / 3)  # hand_x: 1, 2, 3, 6 (fluency and adequacy pooled): mean 3, sample variance 14/3
    got = {
        (a, s, c): (z, m, sd)
        for a, s, c, z, m, sd in con.execute(
            "select annotator, sent_id, criterion, z, annotator_mean, annotator_sd from "
            "intermediate.int_human_judgments_z "
            "where campaign = 'demo' and annotator like 'hand%'"
        ).fetchall()
    }
    assert got[("hand_x", s1, "fluency")] == pytest.approx((-2 / sd_x, 3.0, sd_x), abs=1e-12)
    assert got[("hand_x", s1, "adequacy")] == pytest.approx((3 / sd_x, 3.0, sd_x), abs=1e-12)  # 'Adequacy' in the file
    assert got[("hand_x", s3, "fluency")][0] == 0.0
    assert got[("hand_y", s1, "fluency")] == (None, 5.0, 0.0)  # SD 0: no z
    assert got[("hand_z", s3, "fluency")][0] == pytest.approx(2 / math.sqrt(8), abs=1e-12)  # 4, 8: mean 6, sd sqrt(8)
    scores = {
        s: (f, a)
        for s, f, a in con.execute(
            "select sent_id, fluency_z, adequacy_z from sentence_scores where submission_id = "
            "'demo/en_ewt_demo/baseline/gold' "
            "and sent_id in (?, ?, ?)",
            [s1, s2, s3],
        ).fetchall()
    }
    assert scores[s1] == pytest.approx((-2 / sd_x, 3 / sd_x), abs=1e-12)  # hand_y's NULL left out of the mean
    assert scores[s2][0] == pytest.approx((-1 / sd_x - 2 / math.sqrt(8)) / 2, abs=1e-12)
    assert scores[s3] == (pytest.approx(2 / math.sqrt(8) / 2, abs=1e-12), None)
    counts = con.execute(
        "select judgments, z_judgments, annotators from intermediate.int_human_scores "
        "where submission_id = 'demo/en_ewt_demo/baseline/gold' and sent_id = ? and criterion = 'fluency'",
        [s1],
    ).fetchone()
    assert counts == (2, 1, 2)
    # hand_x's single score in campaign 'default' has no SD there: its z is NULL, not pooled with 'demo'.
    assert con.execute(
        "select z from intermediate.int_human_judgments_z where campaign = 'default' and annotator = 'hand_x'"
    ).fetchall() == [(None,)]


@pytest.mark.slow
def test_fluency_and_adequacy_z_equal_a_python_computation(human):
    con = human["con"]
    rows = human["demo_rows"]
    z = z_scores(rows)
    expected = defaultdict(list)
    for row in rows:
        expected[(f"demo/{row[1]}/{row[2]}/{row[3]}", row[5], row[6])].append(z[tuple(row[:7])])
    got = {}
    for sub, sent_id, fluency, adequacy in con.execute(
        "select submission_id, sent_id, fluency_z, adequacy_z from sentence_scores "
        "where team in ('perturb', 'baseline') and (fluency_z is not null or adequacy_z is not null)"
    ).fetchall():
        got[(sub, sent_id, "fluency")] = fluency
        got[(sub, sent_id, "adequacy")] = adequacy
    hand_run = "demo/en_ewt_demo/baseline/gold"  # checked by hand above
    got = {k: v for k, v in got.items() if k[0] != hand_run and v is not None}
    assert got.keys() == expected.keys() and len(got) == 4 * 30 * 2
    for key, values in expected.items():
        assert math.isclose(got[key], statistics.fmean(values), rel_tol=0, abs_tol=1e-12), key


@pytest.mark.slow
def test_correlations_with_human_scores_equal_scipy(human):
    got = check_metric_correlations(human["con"])
    swaps = "demo/en_ewt_demo/perturb/swaps"
    n, rho, *_ = got[(swaps, "bleu", "fluency_z")]
    assert n == 30 and rho > 0.9  # fluency was derived from BLEU
    assert got[(swaps, "fluency_z", "adequacy_z")][0] == 30
    # Generated chain data: fluency is a strictly monotone function of tree_length (with ties) ...
    gold = "default/chain/syn/gold"
    assert got[(gold, "fluency_z", "tree_length")][:2] == (15, pytest.approx(1.0, abs=1e-12))
    assert got[(gold, "fluency_z", "tree_length")][2] < 1e-10
    # ... and adequacy is independent of it (scipy's value is checked above; here: no evidence).
    n, rho, p, p_holm, significant, _ = got[(gold, "adequacy_z", "tree_length")]
    assert n == 15 and abs(rho) < 0.4 and p > 0.2 and significant is False
    # DEA of reference-order outputs is 1 everywhere: constant, rho NULL, outside the Holm family.
    assert got[(gold, "bleu", "dea")][:3] == (30, None, None)
    # The shuffled run has two fluency judgments and one adequacy judgment: n < 3 -> NULL.
    shuffled = "default/chain/syn/shuffled"
    assert got[(shuffled, "bleu", "fluency_z")][:5] == (2, None, None, None, None)
    assert got[(shuffled, "fluency_z", "adequacy_z")][:2] == (0, None)  # judged on different sentences
    assert got[(shuffled, "bleu", "dea")][1] is not None


@pytest.mark.slow
def test_projectivity_tests_equal_scipy_mannwhitneyu(human):
    con = human["con"]
    values = defaultdict(lambda: ([], []))
    for sub, projective, bleu, fluency, adequacy in con.execute(
        "select s.submission_id, c.is_projective, s.bleu, s.fluency_z, s.adequacy_z from sentence_scores s "
        "join sentence_complexity c using (corpus, sent_idx) where not s.is_missing order by s.sent_idx"
    ).fetchall():
        for score, value in (("bleu", bleu), ("fluency", fluency), ("adequacy", adequacy)):
            if value is not None:
                values[(sub, score)][0 if projective else 1].append(value)
    rows = con.execute(
        "select submission_id, score, n_projective, n_nonprojective, median_projective, "
        "median_nonprojective, u, p_value, tested, skipped_reason from projectivity_tests"
    ).fetchall()
    tested = 0
    for sub, score, n1, n2, median1, median2, u, p, is_tested, reason in rows:
        projective, nonprojective = values.get((sub, score), ([], []))
        assert (n1, n2) == (len(projective), len(nonprojective)), (sub, score)
        for got, sample in ((median1, projective), (median2, nonprojective)):
            assert got == (pytest.approx(statistics.median(sample), abs=1e-12) if sample else None)
        if is_tested:
            tested += 1
            result = stats.mannwhitneyu(projective, nonprojective, alternative="two-sided")
            assert (u, p) == (float(result.statistic), float(result.pvalue)), (sub, score)
            assert reason is None
        else:
            assert (u, p) == (None, None) and reason
    by_key = {(r[0], r[1]): r for r in rows}
    # Judged demo runs: every non-projective sentence is among the 30 judged (8 or 4 of 30).
    fr = by_key[("demo/fr_gsd_demo/perturb/swaps", "fluency")]
    assert fr[2:4] == (22, 8) and fr[8] is True
    assert by_key[("demo/fr_gsd_demo/perturb/swaps", "bleu")][8] is False  # 8 of 200 = 4%
    # Groups of size 1 and 0 on the chain corpus.
    assert by_key[("default/chain/syn/gold", "fluency")][2:4] == (14, 1)
    assert by_key[("default/chain/syn/gold", "fluency")][8] is True
    assert by_key[("default/chain/syn/shuffled", "fluency")][2:4] == (2, 0)
    assert by_key[("default/chain/syn/shuffled", "fluency")][9].startswith("non-projective sentences are 0 of 2")
    assert by_key[("default/chain/syn/shuffled", "adequacy")][2:4] == (0, 1)
    assert by_key[("default/chain/syn/shuffled", "adequacy")][9] == "no projective sentences"
    assert tested == 10


@pytest.mark.slow
def test_entropy_can_come_from_another_corpus(human):
    con = human["con"]
    entropy = dict(
        con.execute("select relation, entropy from relation_entropy where corpus = 'en_ewt_demo'").fetchall()
    )
    dea = dict(
        con.execute(
            "select relation, dea from dea_by_relation where submission_id = 'default/chain/syn/shuffled'"
        ).fetchall()
    )
    relations = sorted(dea.keys() & entropy.keys())
    assert relations == sorted(RELATIONS)
    expected = expected_spearman([entropy[r] for r in relations], [dea[r] for r in relations])
    got = con.execute(
        "select entropy_corpus, relations, rho, p_value from entropy_dea_correlation "
        "where submission_id = 'default/chain/syn/shuffled'"
    ).fetchone()
    assert got == ("en_ewt_demo", *expected) and expected[1] is not None
    # Demo runs are not mapped: their own corpus.
    assert con.execute(
        "select entropy_corpus from entropy_dea_correlation where submission_id = 'demo/fr_gsd_demo/perturb/swaps'"
    ).fetchone() == ("fr_gsd_demo",)


# --------------------------------------------------------------------------- loading

SMALL = "".join(
    f"# sent_id = s{k}\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t1\tobj\t_\t_\n\n" for k in range(1, 4)
)


@pytest.fixture
def small(tmp_path):
    wh = tmp_path / "wh.duckdb"
    (tmp_path / "small.conllu").write_text(SMALL)
    load_treebank(wh, tmp_path / "small.conllu", "small")
    (tmp_path / "run.sr").write_text("# sent_id = s1\n# text = a b\n\n# sent_id = s3\n# text = b a\n\n")
    load_outputs(wh, tmp_path / "run.sr", "small", "t", "r", allow_partial=True)
    return wh


def judgments(wh):
    con = duckdb.connect(str(wh), read_only=True)
    try:
        return sorted(
            con.execute("select annotator, sent_id, criterion, score, line_no from raw.human_judgments").fetchall()
        )
    finally:
        con.close()


def test_unknown_run_corpus_or_sentence_is_an_error_listing_them(small, tmp_path):
    load_human(small, write_csv(tmp_path / "ok.csv", [["default", "small", "t", "r", "a1", "s1", "fluency", 3]]))
    before = table_snapshot(small)
    bad = write_csv(
        tmp_path / "bad.csv",
        [
            ["default", "small", "t", "r", "a1", "s3", "fluency", 4],  # fine
            ["default", "nope", "t", "r", "a1", "s1", "fluency", 4],  # line 3
            ["default", "small", "t", "r", "a1", "s9", "fluency", 4],  # line 4
            ["default", "small", "t", "r2", "a1", "s1", "fluency", 4],  # line 5
            ["sr19", "small", "t", "r", "a1", "s1", "fluency", 4],  # line 6: run is in 'default'
            ["default", "small", "t", "r", "a1", "s2", "fluency", 4],
        ],
    )  # line 7: the run lacks s2
    with pytest.raises(LoadError) as err:
        load_human(small, bad)
    message = err.value.message
    assert err.value.line == 3 and message.startswith("5 problem(s): ")
    for text in (
        "line 3: unknown corpus 'nope'",
        "line 4: unknown sentence 's9' of corpus 'small'",
        "line 5: unknown run 'default/small/t/r2'",
        "line 6: unknown run 'sr19/small/t/r'",
        "line 7: run 'default/small/t/r' has no output for sentence 's2'",
    ):
        assert text in message
    assert table_snapshot(small) == before


@pytest.mark.parametrize(
    "score, line_text",
    [("good", "score 'good' is not a number"), ("", "empty score"), ("nan", "score 'nan' is not a number")],
)
def test_bad_score_is_an_error_with_its_line(small, tmp_path, score, line_text):
    before = table_snapshot(small)
    bad = write_csv(
        tmp_path / "bad.csv",
        [
            ["default", "small", "t", "r", "a1", "s1", "fluency", 3],
            ["default", "small", "t", "r", "a1", "s3", "fluency", score],
        ],
    )
    with pytest.raises(LoadError) as err:
        load_human(small, bad)
    assert err.value.line == 3 and f"line 3: {line_text}" in err.value.message
    assert str(err.value).startswith(f"{bad}:3: ")
    assert table_snapshot(small) == before


def test_missing_column_and_duplicate_judgment_are_errors(small, tmp_path):
    no_score = write_csv(tmp_path / "a.csv", [["small", "t", "r", "a1", "s1", "fluency"]], header=HEADER[1:-1])
    with pytest.raises(LoadError, match="lacks the column"):
        load_human(small, no_score)
    twice = write_csv(
        tmp_path / "b.csv",
        [
            ["default", "small", "t", "r", "a1", "s1", "fluency", 3],
            ["default", "small", "t", "r", "a1", "s1", "Fluency", 4],
        ],
    )
    with pytest.raises(LoadError) as err:
        load_human(small, twice)
    assert err.value.line == 3 and "the same judgment as line 2" in err.value.message
    assert judgments(small) == []


def test_loading_twice_keeps_one_copy_and_a_corrected_file_replaces_its_sets(small, tmp_path):
    # No campaign column: 'default'.
    first = write_csv(
        tmp_path / "first.csv",
        [
            ["small", "t", "r", "a1", "s1", "fluency", 3],
            ["small", "t", "r", "a1", "s3", "fluency", 4],
            ["small", "t", "r", "a2", "s1", "fluency", 5],
        ],
        header=HEADER[1:],
    )
    assert load_human(small, first) == 3
    assert load_human(small, first) == 3
    assert judgments(small) == [
        ("a1", "s1", "fluency", 3.0, 2),
        ("a1", "s3", "fluency", 4.0, 3),
        ("a2", "s1", "fluency", 5.0, 4),
    ]
    # Another file for a1's fluency on the run replaces that set (s3 is gone); a2 stays.
    corrected = write_csv(
        tmp_path / "corrected.csv", [["small", "t", "r", "a1", "s1", "FLUENCY", 2]], header=HEADER[1:]
    )
    load_human(small, corrected)
    assert judgments(small) == [("a1", "s1", "FLUENCY", 2.0, 2), ("a2", "s1", "fluency", 5.0, 4)]


def test_cli_load_human(small, tmp_path, capsys):
    good = write_csv(tmp_path / "good.csv", [["default", "small", "t", "r", "a1", "s1", "fluency", 3]])
    assert main(["--warehouse", str(small), "load-human", str(good)]) == 0
    assert "loaded 1 human judgments" in capsys.readouterr().out
    bad = write_csv(tmp_path / "bad.csv", [["default", "small", "t", "x", "a1", "s1", "fluency", 3]])
    assert main(["--warehouse", str(small), "load-human", str(bad)]) == 2
    assert "line 2: unknown run 'default/small/t/x'" in capsys.readouterr().err
