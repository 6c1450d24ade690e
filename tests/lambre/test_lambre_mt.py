"""L'AMBRE as its paper uses it: reference-free runs, system-level human scores and
correlations, rules across campaigns, through the real loaders and one real dbt build.

The runs are the first 200 sentences of the fr_gsd, de_gsd, ru_gsd and en_ewt test splits, loaded as
CoNLL-U (no parser needed) into corpora without a treebank, with agreement errors injected at known
rates (tests/support/lambre_mt_data.py); the rules come from the dev splits. French has more systems, an
outlier in its made-up human scores and a second campaign with two reference runs; German has
sentence-level judgments only; Russian has system-level scores for two of its systems and
sentence-level judgments for all three on the same criterion (da), and a criterion whose MAD is 0.
Beside them, in the same campaign, a corpus with a treebank (fr_tb: the same 200 French sentences)
has three text runs with word-order errors and system-level scores, so that every mart has rows of
reference-based runs to set the reference-free ones against, and every metric a correlation.
"""

import csv
import math
import re
import shutil
from xml.etree import ElementTree

import duckdb
import numpy as np
import pytest
from scipy import stats

from srlens.build import build
from srlens.loaders.campaign_dates import parse_campaign_date, set_campaign_date
from srlens.loaders.errors import LoadError
from srlens.loaders.human import load_human, load_system_human
from srlens.loaders.load import load_outputs, load_treebank
from srlens.report.lambre_trends import SYSTEMS_SQL, rule_medians_chart, section, systems_chart
from srlens.status import status
from tests.conftest import SHARED, require_shared, table_snapshot
from tests.support.chart_reading import SVG, nearest, svg_texts, y_scale
from tests.support.lambre_mt_data import first_sentences, inject_agreement_errors, reverse_words

SENTENCES = 200
SEED = 17
LANGUAGES = ("fr", "de", "ru", "en")
RATES = {"sys0": 0.0, "sys10": 0.1, "sys30": 0.3}
# French: two more systems, and one whose human score is far off (the outlier).
FR_MORE = {"sys05": 0.05, "sys20": 0.2, "sysout": 0.15}
FR_2020 = {"sysa": 0.02, "sysb": 0.04}
OUTLIER = "mt19/fr_mt/sysout/1"
RU_ADEQUACY = {"sys0": 1.0, "sys10": 1.0, "sys30": 2.0}  # median 1, MAD 0
# Median 12.5, MAD 1.5: sysout lies 3 MADs off, beyond 2.5 MADs but within 2.5 x 1.4826 = 3.7 (kept).
FR_NEAR = {"sys0": 14, "sys05": 13, "sys10": 12, "sys20": 11, "sys30": 10, "sysout": 17}


def split_path(language, split="test"):
    treebank = "en_ewt" if language == "en" else f"{language}_gsd"
    return SHARED / "ud" / treebank / f"{treebank}-ud-{split}.conllu"


def da(rate):
    """Made-up direct-assessment score of a system: falls with its error rate."""
    return 80 - 100 * rate


def write_csv(path, header, rows):
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def mt(tmp_path_factory):
    """(warehouse, root, flipped words per run) after one build."""
    require_shared()
    root = tmp_path_factory.mktemp("lambre_mt")
    warehouse = root / "srlens.duckdb"
    flipped = {}

    def load_run(language, campaign, team, rate, run="1"):
        text, n = inject_agreement_errors(first_sentences(split_path(language), SENTENCES), rate, SEED, language)
        path = root / f"{language}_{campaign}_{team}.conllu"
        path.write_text(text, encoding="utf-8")
        load_outputs(
            warehouse, path, f"{language}_mt", team, run, campaign, "conllu", no_reference=True, language=language
        )
        flipped[f"{campaign}/{language}_mt/{team}/{run}"] = n

    for language in LANGUAGES:
        load_treebank(warehouse, split_path(language, "dev"), f"{language}_dev")
        for team, rate in RATES.items():
            load_run(language, "mt19", team, rate)
    # the reference-based corpus beside them: its treebank, and runs as text with word-order errors
    treebank = root / "fr_tb.conllu"
    treebank.write_text(first_sentences(split_path("fr"), SENTENCES), encoding="utf-8")
    load_treebank(warehouse, treebank, "fr_tb")
    texts = [
        line[len("# text = ") :]
        for line in treebank.read_text(encoding="utf-8").splitlines()
        if line.startswith("# text = ")
    ]
    for team, rate in RATES.items():
        path = root / f"fr_tb_{team}.txt"
        path.write_text("".join(f"{t}\n" for t in reverse_words(texts, rate, SEED)), encoding="utf-8")
        load_outputs(warehouse, path, "fr_tb", team, "1", "mt19", "text")
    for team, rate in FR_MORE.items():
        load_run("fr", "mt19", team, rate)
    load_run("fr", "mt19", "reference", 0.0, run="human")
    for team, rate in FR_2020.items():
        load_run("fr", "mt20", team, rate)
    load_run("fr", "mt20", "reference", 0.0, run="human")
    load_run("fr", "mt20", "reference", 0.3, run="human2")  # a second reference run, with another score
    set_campaign_date(warehouse, "mt19", "2019")
    set_campaign_date(warehouse, "mt20", "2020-06")

    # System level, as WMT publishes: DA (higher is better) with an outlier, MQM (lower is better).
    fr_rates = {**RATES, **FR_MORE}
    rows = [
        ("mt19", "fr_mt", team, "1", "DA", da(rate) if team != "sysout" else -400, "higher")
        for team, rate in fr_rates.items()
    ]
    rows += [("mt19", "fr_mt", team, "1", "mqm", 200 * rate, "lower") for team, rate in fr_rates.items()]
    rows += [("mt19", "fr_mt", team, "1", "near", score, "higher") for team, score in FR_NEAR.items()]
    rows += [("mt19", "ru_mt", team, "1", "da", da(RATES[team]), "higher") for team in ("sys0", "sys10")]
    rows += [("mt19", "fr_tb", team, "1", "DA", da(rate), "higher") for team, rate in RATES.items()]
    # MAD 0: two of three systems share the median, the third is off it but is no outlier
    rows += [("mt19", "ru_mt", team, "1", "adequacy", score, "higher") for team, score in RU_ADEQUACY.items()]
    load_system_human(
        warehouse,
        write_csv(
            root / "system.csv", ("campaign", "corpus", "team", "run", "criterion", "score", "orientation"), rows
        ),
    )
    # German: sentence-level fluency only, one annotator, on the first 20 sentences.
    sent_ids = [
        line.split("= ", 1)[1]
        for line in split_path("de").read_text(encoding="utf-8").splitlines()
        if line.startswith("# sent_id = ")
    ][:20]
    judgments = [
        ("A1", "mt19", team, "1", "de_mt", sent_id, "fluency", 5 - 10 * RATES[team] + k % 3)
        for team in RATES
        for k, sent_id in enumerate(sent_ids)
    ]
    # Russian: sentence-level da for all three systems, where two have a system-level da (other units)
    ru_ids = [
        line.split("= ", 1)[1]
        for line in split_path("ru").read_text(encoding="utf-8").splitlines()
        if line.startswith("# sent_id = ")
    ][:20]
    ru_judgments = [
        ("A2", "mt19", team, "1", "ru_mt", sent_id, "da", 50 - 100 * RATES[team] + k % 5)
        for team in RATES
        for k, sent_id in enumerate(ru_ids)
    ]
    load_human(
        warehouse,
        write_csv(
            root / "fluency.csv",
            ("annotator", "campaign", "team", "run", "corpus", "sent_id", "criterion", "score"),
            judgments + ru_judgments,
        ),
    )
    build(warehouse, echo=False, processor="aligned")
    return warehouse, root, flipped, judgments


@pytest.fixture(scope="module")
def con(mt):
    con = duckdb.connect(str(mt[0]), read_only=True)
    yield con
    con.close()


def rule_scores(con, corpus, campaign="mt19"):
    return dict(
        con.execute(
            "select team, rule_score from submission_scores where corpus = ? and campaign = ?", [corpus, campaign]
        ).fetchall()
    )


# ------------------------------------------------------------------- part 1: reference-free runs


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
def test_rule_score_falls_strictly_with_the_error_rate(mt, con, language):
    flipped = mt[2]
    assert [flipped[f"mt19/{language}_mt/{t}/1"] for t in RATES] == sorted(
        {flipped[f"mt19/{language}_mt/{t}/1"] for t in RATES}
    ) and flipped[f"mt19/{language}_mt/sys10/1"] > 0
    scores = rule_scores(con, f"{language}_mt")
    assert scores["sys0"] > scores["sys10"] > scores["sys30"], scores
    # the failures are the injected ones: more flips, more failed checks, sentence by sentence too
    failures = dict(
        con.execute(
            """select team, sum(failures) from lambre_rule_scores
                                   where corpus = ? and campaign = 'mt19' group by team""",
            [f"{language}_mt"],
        ).fetchall()
    )
    assert failures["sys0"] < failures["sys10"] < failures["sys30"]
    means = dict(
        con.execute(
            "select team, rule_score_mean from submission_scores where corpus = ? and campaign = 'mt19'",
            [f"{language}_mt"],
        ).fetchall()
    )
    assert means["sys0"] > means["sys10"] > means["sys30"]


FREE = "corpus in (select corpus from raw.reference_free_corpora)"
# The only numeric columns with a value in a row of a reference-free corpus, mart by mart: rule scores,
# human scores, counts of what the run has (sentences, words), and counts of 0 where a figure counts
# reference trees (projectivity_tests, entropy_dea_correlation; their statistics are NULL). A new
# column here is a new figure to look at: a reference-based one must be NULL, never 0.
NONNULL_WITHOUT_REFERENCE = {
    "campaign_trends": {
        "systems",
        "rule_score_median",
        "rule_score_mean",
        "rule_score_min",
        "rule_score_max",
        "reference_rule_score",
        "reference_runs",
    },
    "entropy_dea_correlation": {"relations"},
    "lambre_failures": {"sent_idx", "word_idx", "head_idx"},
    "lambre_rule_scores": {"matches", "failures", "score", "sentences_fired"},
    "metric_correlations": {"n", "rho", "p_value", "p_holm", "holm_tests"},  # rule_score x fluency_z only
    "system_rankings": {"score", "rank", "cluster", "rank_best", "rank_worst", "submissions"},  # rule_score_mean only
    "pairwise_significance": {  # rule_score_mean only
        "n",
        "value_a",
        "value_b",
        "delta",
        "ci_low",
        "ci_high",
        "p_value",
        "p_value_ar",
        "bootstrap_samples",
        "ar_samples",
        "bootstrap_seed",
    },
    "projectivity_tests": {"n_projective", "n_nonprojective"},
    "sentence_scores": {"sent_idx", "output_words", "rule_score", "fluency_z"},
    "submission_scores": {"sentences", "missing", "rule_score", "rule_score_mean", "fluency_z_mean"},
    "system_correlations": {  # rule_score and rule_score_mean only
        "systems",
        "pearson_r",
        "pearson_p",
        "spearman_rho",
        "spearman_p",
        "kendall_tau",
        "kendall_p",
        "systems_no_outliers",
        "pearson_r_no_outliers",
        "pearson_p_no_outliers",
        "human_median",
        "human_mad",
    },
}
# Marts of the reference trees (mining, DEA, buckets, examples, ensembles, treebank statistics): rows for
# the reference-based corpus fr_tb, none for a reference-free one.
REFERENCE_ONLY = (
    "bucket_scores",
    "dea_by_relation",
    "error_examples",
    "suspicious_subtrees",
    "ensemble_selection",
    "ensemble_choices",
    "corpus_stats",
    "relation_entropy",
    "sentence_complexity",
)


def numeric_columns(con, mart):
    return [
        r[0]
        for r in con.execute(
            """select column_name from duckdb_columns() where schema_name = 'main' and table_name = ?
               and (data_type in ('DOUBLE', 'FLOAT', 'BIGINT', 'INTEGER', 'HUGEINT') or data_type like 'DECIMAL%')
               order by column_index""",
            [mart],
        ).fetchall()
    ]


@pytest.mark.slow
def test_every_reference_based_figure_is_null_and_rule_scores_are_kept(con):
    runs = con.execute(f"select count(*) from submission_scores where {FREE}").fetchone()[0]
    assert runs == 4 * 3 + 3 + 1 + 4
    sentences = con.execute(f"""
        select count(*), count(bleu), count(dea), count(reference_words), count(dea_edges), count(dea_matched),
               count(simple_string_accuracy), count(generation_string_accuracy), count(simple_tree_accuracy),
               count(generation_tree_accuracy), count(reorder_accuracy), count(understandability_accuracy),
               count(quality_accuracy), count(rule_score)
        from sentence_scores where {FREE}""").fetchone()
    assert sentences == (runs * SENTENCES,) + (0,) * 12 + (runs * SENTENCES,)
    # the reference-based runs beside them have every one of these figures
    control = con.execute("select * from sentence_scores where corpus = 'fr_tb'").df()
    assert len(control) == 3 * SENTENCES
    assert control[["bleu", "dea", "reference_words", "simple_tree_accuracy", "quality_accuracy"]].notna().all().all()
    # every mart with a corpus: the numeric columns with a value in a reference-free row are the listed ones
    marts = [
        r[0]
        for r in con.execute("""select distinct table_name from duckdb_columns() where schema_name = 'main'
                                and column_name = 'corpus' order by 1""").fetchall()
    ]
    assert set(NONNULL_WITHOUT_REFERENCE) | set(REFERENCE_ONLY) <= set(marts)
    for mart in marts:
        columns = numeric_columns(con, mart)
        counts = con.execute(
            f"select count(*), {', '.join(f'count({c})' for c in columns)} from {mart} where {FREE}"
        ).fetchone()
        nonnull = {c for c, n in zip(columns, counts[1:]) if n}
        assert nonnull == NONNULL_WITHOUT_REFERENCE.get(mart, set()), mart
        if mart in REFERENCE_ONLY:
            assert counts[0] == 0, mart
            assert con.execute(f"select count(*) from {mart} where corpus = 'fr_tb'").fetchone()[0] > 0, mart
    # without a reference, runs are ranked on the rule score alone
    ranked = con.execute(f"select distinct metric from system_rankings where {FREE}").fetchall()
    assert ranked == [("rule_score_mean",)]
    # counts of reference trees are 0, their statistics NULL
    assert con.execute(f"""select count(*) from projectivity_tests
                           where {FREE} and (n_projective + n_nonprojective > 0 or tested)""").fetchone() == (0,)
    assert con.execute(f"select max(relations) from entropy_dea_correlation where {FREE}").fetchone() == (0,)
    # every run has its per-rule rows and its rule failures
    assert con.execute(f"select count(distinct submission_id) from lambre_rule_scores where {FREE}").fetchone() == (
        runs,
    )
    # aggregates: significance compares rule scores only; the correlations are the rule scores' own
    metrics = {r[0] for r in con.execute(f"select distinct metric from pairwise_significance where {FREE}").fetchall()}
    assert metrics == {"rule_score_mean"}
    tb_metrics = {
        r[0] for r in con.execute("select metric from pairwise_significance where corpus = 'fr_tb'").fetchall()
    }
    assert {"corpus_bleu", "dea", "bleu_mean"} <= tb_metrics
    metrics = {r[0] for r in con.execute(f"select distinct metric from system_correlations where {FREE}").fetchall()}
    assert metrics == {"rule_score", "rule_score_mean"}
    # rule score and fluency of the German runs, the one pair of sentence variables they have
    pairs = con.execute(f"select distinct metric_a, metric_b, n from metric_correlations where {FREE}").fetchall()
    assert pairs == [("rule_score", "fluency_z", 20)]
    # summaries over a campaign count the runs that have the figure: the three of fr_tb, not the 20 others
    summaries = con.execute("""
        select (select max(submissions_in_scope) from suspicious_subtrees_summary
                where scope = 'campaign' and scope_value = 'mt19'),
               (select submissions_listed from correlation_summary
                where scope = 'campaign' and scope_value = 'mt19' and metric_a = 'bleu' and metric_b = 'dea')
    """).fetchone()
    assert summaries == (3, 3)


def test_reference_free_loads_refuse_what_they_cannot_match(tmp_path):
    require_shared()
    warehouse = tmp_path / "srlens.duckdb"
    text = first_sentences(split_path("fr"), 5)
    run = tmp_path / "run.conllu"
    run.write_text(text, encoding="utf-8")
    plain = tmp_path / "run.txt"
    plain.write_text("Une phrase .\nUne autre .\n", encoding="utf-8")
    load_treebank(warehouse, run, "fr_tb")
    load_outputs(warehouse, run, "fr_mt", "a", "1", fmt="conllu", no_reference=True, language="fr")
    load_outputs(warehouse, plain, "fr_plain", "a", "1", no_reference=True, language="fr")  # 1..N by order
    before = table_snapshot(warehouse)
    other_ids = tmp_path / "other.conllu"
    other_ids.write_text(text.replace("# sent_id = fr-ud-test_00002", "# sent_id = x"), encoding="utf-8")
    three = tmp_path / "three.txt"
    three.write_text("a\nb\nc\n", encoding="utf-8")
    cases = [
        ({"path": run, "corpus": "fr_mt"}, "reference-free corpus: load its runs with --no-reference --language fr"),
        ({"path": run, "corpus": "unknown"}, "no treebank is loaded for corpus 'unknown'"),
        ({"path": run, "corpus": "fr_tb", "no_reference": True, "language": "fr"}, "has a reference treebank"),
        ({"path": run, "corpus": "fr_mt", "no_reference": True, "language": "de"}, "has language 'fr', not 'de'"),
        ({"path": run, "corpus": "fr_mt", "no_reference": True}, "--no-reference needs --language"),
        ({"path": run, "corpus": "fr_tb", "language": "fr"}, "--language goes with --no-reference"),
        ({"path": other_ids, "corpus": "fr_mt", "no_reference": True, "language": "fr"}, "do not all carry"),
        ({"path": three, "corpus": "fr_plain", "no_reference": True, "language": "fr"}, "the run has 3 sentences"),
    ]
    for kwargs, message in cases:
        path = kwargs.pop("path")
        with pytest.raises(LoadError, match=re.escape(message)):
            load_outputs(warehouse, path, kwargs.pop("corpus"), "b", "1", fmt="auto", **kwargs)
    with pytest.raises(LoadError, match="is a reference-free corpus"):
        load_treebank(warehouse, run, "fr_mt")
    assert table_snapshot(warehouse) == before
    # a second run of the same sentences in another order is matched by sent_id; reloading is idempotent
    blocks = text.strip("\n").split("\n\n")
    shuffled = tmp_path / "shuffled.conllu"
    shuffled.write_text("\n\n".join(reversed(blocks)) + "\n\n", encoding="utf-8")
    for _ in range(2):
        load_outputs(warehouse, shuffled, "fr_mt", "b", "1", fmt="conllu", no_reference=True, language="fr")
    db = duckdb.connect(str(warehouse), read_only=True)
    try:
        by_id = db.execute("""select a.sent_idx, a.sent_id, b.sent_id, a.text = b.text from raw.outputs a
                              join raw.outputs b using (sent_idx) where a.submission_id = 'default/fr_mt/a/1'
                              and b.submission_id = 'default/fr_mt/b/1' order by 1""").fetchall()
        assert [(i, x == y, same) for i, x, y, same in by_id] == [(i, True, True) for i in range(1, 6)]
        assert db.execute("select count(*) from raw.reference_free_corpora").fetchone() == (2,)
    finally:
        db.close()


# ------------------------------------------------------------- parts 2 and 3: system correlations


# The system-level metrics: rule_score, corpus_bleu, dea, and the mean of each sentence score.
SYSTEM_METRICS = (
    ("rule_score", "corpus_bleu", "dea")
    + tuple(
        f"{score}_mean"
        for score in (
            "bleu",
            "dea",
            "simple_string_accuracy",
            "generation_string_accuracy",
            "simple_tree_accuracy",
            "generation_tree_accuracy",
            "understandability_accuracy",
            "quality_accuracy",
            "reorder_accuracy",
            "rule_score",
        )
    )
    + ("sacrebleu_bleu", "chrf")
)


def python_correlations(con):
    """system_correlations recomputed in Python: vectors from the marts, outliers with numpy, scipy."""
    human = con.execute(
        "select submission_id, campaign, corpus, criterion, human_score from intermediate.int_system_human_scores"
    ).df()
    metrics = con.execute("select * from submission_scores").df().set_index("submission_id")
    expected = {}
    for (campaign, corpus, criterion), group in human.groupby(["campaign", "corpus", "criterion"]):
        h = group.human_score.to_numpy()
        mad = np.median(np.abs(h - np.median(h)))
        outlier = dict(zip(group.submission_id, (mad > 0) & (np.abs(h - np.median(h)) > 2.5 * 1.4826 * mad)))
        for metric in SYSTEM_METRICS:
            pairs = [
                (metrics.at[s, metric], y, outlier[s])
                for s, y in zip(group.submission_id, group.human_score)
                if not math.isnan(metrics.at[s, metric])
            ]
            if not pairs:
                continue
            x, y, out = (np.array(v) for v in zip(*pairs))
            row = {
                "systems": len(x),
                "systems_no_outliers": int((~out).sum()),
                "outliers": sorted(s for s, o in outlier.items() if o and not math.isnan(metrics.at[s, metric])),
            }
            if len(x) >= 3:
                row.update(
                    pearson_r=stats.pearsonr(x, y).statistic,
                    pearson_p=stats.pearsonr(x, y).pvalue,
                    spearman_rho=stats.spearmanr(x, y).statistic,
                    spearman_p=stats.spearmanr(x, y).pvalue,
                    kendall_tau=stats.kendalltau(x, y).statistic,
                    kendall_p=stats.kendalltau(x, y).pvalue,
                )
            if (~out).sum() >= 3:
                kept = stats.pearsonr(x[~out], y[~out])
                row.update(pearson_r_no_outliers=kept.statistic, pearson_p_no_outliers=kept.pvalue)
            expected[(campaign, corpus, metric, criterion)] = row
    return expected


@pytest.mark.slow
def test_system_correlations_equal_scipy_on_the_same_vectors(con):
    expected = python_correlations(con)
    rows = con.execute("select * from system_correlations").df()
    got = {(r.campaign, r.corpus, r.metric, r.criterion): r for r in rows.itertuples()}
    # reference-free (rule scores): fr da, mqm, near, de fluency, ru da, adequacy; fr_tb da: all but the rules
    assert set(got) == set(expected) and len(got) == 6 * 2 + (len(SYSTEM_METRICS) - 2)
    for key, row in expected.items():
        for column in (
            "pearson_r",
            "pearson_p",
            "spearman_rho",
            "spearman_p",
            "kendall_tau",
            "kendall_p",
            "pearson_r_no_outliers",
            "pearson_p_no_outliers",
        ):
            value = getattr(got[key], column)
            if column in row:
                assert value == pytest.approx(row[column], abs=1e-9, rel=0), (key, column)
            else:
                assert value is None or math.isnan(value), (key, column)
        assert got[key].systems == row["systems"] and got[key].systems_no_outliers == row["systems_no_outliers"]
        assert sorted(got[key].outliers) == row["outliers"], key


@pytest.mark.slow
def test_a_corpus_with_reference_text_correlates_every_metric_with_system_human_scores(con):
    """System-level human scores of runs against a treebank with `# text`: DEA, BLEU,
    sacreBLEU and chrF each get a row, over the three systems (the rule scores too where the runs are
    parsed: under `aligned`, text runs have no parse)."""
    rows = dict(
        con.execute(
            "select metric, systems from system_correlations where corpus = 'fr_tb' and criterion = 'da'"
        ).fetchall()
    )
    assert {"corpus_bleu", "dea", "sacrebleu_bleu", "chrf", "bleu_mean"} <= set(rows)
    assert rows["sacrebleu_bleu"] == rows["chrf"] == 3
    # the runs reverse more words as their rate rises, and their human DA falls with it: so do sacreBLEU and chrF
    r = dict(
        con.execute(
            """select metric, spearman_rho from system_correlations where corpus = 'fr_tb' and criterion = 'da'
               and metric in ('sacrebleu_bleu', 'chrf')"""
        ).fetchall()
    )
    assert r == {"sacrebleu_bleu": pytest.approx(1.0), "chrf": pytest.approx(1.0)}


@pytest.mark.slow
def test_human_scores_that_follow_the_error_rate_correlate_and_the_outlier_is_removed(con):
    row = con.execute("""select systems, pearson_r, outliers, systems_no_outliers, pearson_r_no_outliers,
                                human_orientation, human_source
                         from system_correlations where corpus = 'fr_mt' and metric = 'rule_score'
                           and criterion = 'da'""").fetchone()
    systems, r, outliers, kept, r_kept, orientation, source = row
    assert (systems, outliers, kept, orientation, source) == (6, [OUTLIER], 5, "higher", "system")
    assert r_kept > 0.95 and r < 0.5  # the outlier spoils r until it is removed
    mqm = con.execute("""select pearson_r, outliers, human_orientation from system_correlations
                         where corpus = 'fr_mt' and metric = 'rule_score' and criterion = 'mqm'""").fetchone()
    assert mqm[0] < -0.95 and mqm[1:] == ([], "lower")  # an error penalty: agreement is a negative r
    # the MAD is scaled by 1.4826: 3 MADs off the median is no outlier
    near = con.execute("""select outliers, systems_no_outliers, human_median, human_mad from system_correlations
                          where corpus = 'fr_mt' and metric = 'rule_score' and criterion = 'near'""").fetchone()
    assert near == ([], 6, 12.5, 1.5) and abs(FR_NEAR["sysout"] - 12.5) == 3 * 1.5


@pytest.mark.slow
def test_system_score_from_sentence_z_scores_and_few_systems(mt, con):
    judgments = mt[3]
    scores = [j[7] for j in judgments]
    mean, sd = np.mean(scores), np.std(scores, ddof=1)
    for team in RATES:
        z = [(j[7] - mean) / sd for j in judgments if j[2] == team]
        got = con.execute(
            """select human_score, human_source, orientation from intermediate.int_system_human_scores
                             where submission_id = ?""",
            [f"mt19/de_mt/{team}/1"],
        ).fetchone()
        assert got[0] == pytest.approx(np.mean(z), abs=1e-12) and got[1:] == ("sentence z mean", "higher")
    de = con.execute("""select systems, pearson_r from system_correlations
                        where corpus = 'de_mt' and metric = 'rule_score' and criterion = 'fluency'""").fetchone()
    assert de[0] == 3 and de[1] > 0.9
    # two systems: no correlation (NULL, not 0)
    ru = con.execute("""select systems, pearson_r, spearman_rho, kendall_tau, pearson_r_no_outliers
                        from system_correlations where corpus = 'ru_mt' and metric = 'rule_score'
                          and criterion = 'da'""").fetchone()
    assert ru == (2, None, None, None, None)


@pytest.mark.slow
def test_a_mad_of_zero_makes_no_outlier(con):
    """Scores 1, 1, 2: median 1, MAD 0; the system off the median is kept (the robust z is undefined)."""
    rows = con.execute("""select metric, systems, outliers, systems_no_outliers, human_median, human_mad
                          from system_correlations where corpus = 'ru_mt' and criterion = 'adequacy'
                            and metric in ('rule_score', 'rule_score_mean') order by metric""").fetchall()
    assert rows == [(metric, 3, [], 3, 1.0, 0.0) for metric in ("rule_score", "rule_score_mean")]


@pytest.mark.slow
def test_one_source_of_human_scores_per_campaign_corpus_and_criterion(con):
    """ru_mt da: system-level scores for sys0 and sys10, sentence judgments for all three; the
    sentence z-means (other units) are not mixed in, so sys30 has no da score."""
    judged = con.execute("""select count(distinct submission_id) from intermediate.int_human_scores
                            where corpus = 'ru_mt' and criterion = 'da'""").fetchone()
    assert judged == (3,)
    got = con.execute("""select submission_id, human_score, human_source from intermediate.int_system_human_scores
                         where corpus = 'ru_mt' and criterion = 'da' order by submission_id""").fetchall()
    assert got == [(f"mt19/ru_mt/{team}/1", da(RATES[team]), "system") for team in ("sys0", "sys10")]
    mixed = con.execute("""select campaign, corpus, criterion from intermediate.int_system_human_scores
                           group by all having count(distinct human_source) > 1""").fetchall()
    assert mixed == []
    assert con.execute("""select distinct human_source, systems from system_correlations
                          where corpus = 'ru_mt' and criterion = 'da'""").fetchall() == [("system", 2)]


@pytest.mark.slow
def test_reference_free_corpora_have_no_ensemble(con):
    """Without DEA every choice would be the submission_id tie-break: no candidates, no rows."""
    for relation in ("intermediate.int_ensemble_candidates", "ensemble_selection", "ensemble_choices"):
        rows = con.execute(f"""select count(*) from {relation}
                               where corpus in (select corpus from raw.reference_free_corpora)""").fetchone()[0]
        assert rows == 0, relation


@pytest.mark.slow
def test_status_counts_system_scores_and_campaign_dates_as_loads(mt, tmp_path):
    warehouse = tmp_path / "copy.duckdb"
    shutil.copy(mt[0], warehouse)
    assert "up to date: nothing loaded since the last build" in status(warehouse)
    set_campaign_date(warehouse, "mt19", "2019-06")
    assert "stale: 1 load since the last build" in status(warehouse)
    header = ("campaign", "corpus", "team", "run", "criterion", "score")
    load_system_human(warehouse, write_csv(tmp_path / "s.csv", header, [("mt19", "fr_mt", "sys0", "1", "da", 1)]))
    assert "stale: 2 loads since the last build" in status(warehouse)


def test_a_reload_with_other_text_drops_the_run_s_system_level_scores(tmp_path):
    require_shared()
    warehouse = tmp_path / "srlens.duckdb"
    text = first_sentences(split_path("fr"), 5)
    run = tmp_path / "run.conllu"
    run.write_text(text, encoding="utf-8")
    sentences = [line.split("= ", 1)[1] for line in text.splitlines() if line.startswith("# text = ")]
    plain = tmp_path / "run.txt"  # the same text in another format: the file's hash changes, the text does not
    plain.write_text("".join(f"{t}\n" for t in sentences), encoding="utf-8")
    other = tmp_path / "other.txt"  # one sentence's text changed
    other.write_text("".join(f"{t}\n" for t in ["Une autre phrase .", *sentences[1:]]), encoding="utf-8")
    header = ("campaign", "corpus", "team", "run", "criterion", "score")
    scores = write_csv(
        tmp_path / "s.csv", header, [("default", "fr_mt", team, "1", c, 1) for team in "ab" for c in ("da", "mqm")]
    )

    def load(path, team):
        return load_outputs(warehouse, path, "fr_mt", team, "1", no_reference=True, language="fr")

    def kept():
        db = duckdb.connect(str(warehouse), read_only=True)
        try:
            return db.execute(
                "select team, count(*) from raw.system_human_scores group by team order by team"
            ).fetchall()
        finally:
            db.close()

    load(run, "a")
    load(run, "b")
    load_system_human(warehouse, scores)
    assert load(run, "a").judgments_dropped == 0  # the same file again: its scores stay
    assert kept() == [("a", 2), ("b", 2)]
    assert load(other, "a").judgments_dropped == 2  # other text: its two scores judged another output
    assert kept() == [("b", 2)]
    load_system_human(warehouse, scores)
    assert load(plain, "b").judgments_dropped == 0  # the same text, parsed at build instead: they stay
    assert kept() == [("a", 2), ("b", 2)]


@pytest.mark.slow
def test_system_level_file_errors_name_the_line_and_change_nothing(mt, tmp_path):
    warehouse = tmp_path / "copy.duckdb"
    shutil.copy(mt[0], warehouse)
    before = table_snapshot(warehouse)
    header = ("campaign", "corpus", "team", "run", "criterion", "score", "orientation")
    cases = [
        ([("mt19", "fr_mt", "nobody", "1", "da", 1, "higher")], r"line 2: unknown run 'mt19/fr_mt/nobody/1'"),
        ([("mt19", "fr_mt", "sys0", "1", "da", 1, "up")], r"line 2: orientation 'up' is not higher or lower"),
        ([("mt19", "fr_mt", "sys0", "1", "da", "x", "higher")], r"line 2: score 'x' is not a number"),
        (
            [("mt19", "fr_mt", "sys0", "1", "da", 1, ""), ("mt19", "fr_mt", "sys0", "1", "DA", 2, "")],
            r"line 3: the same run and criterion as line 2",
        ),
        ([("mt19", "fr_mt", "sys0", "1", "mqm", 1, "higher")], r"line 2: criterion 'mqm' is recorded as 'lower'"),
        (
            [("mt19", "fr_mt", "sys0", "1", "ter", 1, "lower"), ("mt19", "fr_mt", "sys10", "1", "ter", 1, "higher")],
            r"line 3: criterion 'ter' is 'higher' here and 'lower' at line 2",
        ),
    ]
    for rows, message in cases:
        with pytest.raises(LoadError, match=message):
            load_system_human(warehouse, write_csv(tmp_path / "bad.csv", header, rows))
    with pytest.raises(LoadError, match="lacks the column"):
        load_system_human(warehouse, write_csv(tmp_path / "bad.csv", header[:5], [("mt19", "fr_mt", "a", "1", "da")]))
    assert table_snapshot(warehouse) == before
    # a corrected file replaces the (run, criterion) scores it names, whatever its name
    fixed = write_csv(tmp_path / "fixed.csv", header, [("mt19", "fr_mt", "sys0", "1", "da", 99, "higher")])
    assert load_system_human(warehouse, fixed) == 1
    db = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert db.execute("""select score, source_file from raw.system_human_scores
                             where team = 'sys0' and corpus = 'fr_mt' and criterion = 'da'""").fetchall() == [
            (99.0, str(fixed))
        ]
        assert db.execute("select count(*) from raw.system_human_scores").fetchone()[0] == len(
            before["system_human_scores"]
        )
    finally:
        db.close()


# ------------------------------------------------------------------ part 4: across campaigns


def test_campaign_dates():
    assert [str(parse_campaign_date(t)) for t in ("2019", "2019-06", "2019-06-14")] == [
        "2019-01-01",
        "2019-06-01",
        "2019-06-14",
    ]
    for bad in ("19", "2019-6", "2019--01", "2019-02-30", "2019-13", "next year"):
        with pytest.raises(ValueError, match="campaign date"):
            parse_campaign_date(bad)


@pytest.mark.slow
def test_campaign_trends_mark_the_reference_run(con):
    rows = con.execute("""select campaign, campaign_date::varchar, systems, rule_score_median, rule_score_min,
                                 reference_submission_id, reference_rule_score, reference_runs,
                                 has_reference_treebank, parsers
                          from campaign_trends where corpus = 'fr_mt' order by campaign_date""").fetchall()
    assert [r[:3] for r in rows] == [("mt19", "2019-01-01", 6), ("mt20", "2020-06-01", 2)]
    mt19 = rule_scores(con, "fr_mt")
    systems = [v for team, v in mt19.items() if team != "reference"]
    assert rows[0][3] == pytest.approx(np.median(systems), abs=1e-12) and rows[0][4] == min(systems)
    assert rows[0][5:] == ("mt19/fr_mt/reference/human", mt19["reference"], 1, False, "user conllu")
    assert mt19["reference"] == pytest.approx(mt19["sys0"], abs=1e-12)  # the text of the error-free system
    # two reference runs: the score given is that of the run named, not their mean
    mt20 = dict(
        con.execute("""select submission_id, rule_score from submission_scores
                       where corpus = 'fr_mt' and campaign = 'mt20' and team = 'reference'""").fetchall()
    )
    first, second = mt20["mt20/fr_mt/reference/human"], mt20["mt20/fr_mt/reference/human2"]
    assert first > second  # error-free, and 30% of agreement errors
    assert rows[1][5:8] == ("mt20/fr_mt/reference/human", first, 2)


@pytest.mark.slow
def test_rule_trends_are_the_medians_of_lambre_rule_scores(con):
    frame = con.execute("select campaign, language, rule_id, team, score from lambre_rule_scores").df()
    got = {
        (r[0], r[1], r[2]): r[3:]
        for r in con.execute(
            "select campaign, language, rule_id, submissions, median_score, mean_score, reference_submissions, "
            "reference_score, campaign_date::varchar from rule_trends"
        ).fetchall()
    }
    assert len(got) == len(frame.groupby(["campaign", "language", "rule_id"]))
    for (campaign, language, rule_id), group in frame.groupby(["campaign", "language", "rule_id"]):
        systems, reference = group[group.team != "reference"].score, group[group.team == "reference"].score
        n, median, mean, n_ref, ref, date = got[(campaign, language, rule_id)]
        assert n == len(systems) and n_ref == len(reference)
        assert date == {"mt19": "2019-01-01", "mt20": "2020-06-01"}[campaign]
        if len(systems):
            assert median == pytest.approx(np.median(systems), abs=1e-12)
            assert mean == pytest.approx(np.mean(systems), abs=1e-12)
        if len(reference):
            assert ref == pytest.approx(reference.mean(), abs=1e-12)
        else:
            assert ref is None


@pytest.mark.slow
def test_report_views_and_status_name_the_parser(mt, con):
    svg = systems_chart(con, "fr_mt")
    assert svg.startswith("<svg") and "reference" in svg and "mt19" in svg and "mt20" in svg and "2020" in svg
    assert rule_medians_chart(con, "fr").startswith("<svg") and rule_medians_chart(con, "xx") == ""
    # Figure 5's points: every run of the reference team is marked (mt20 has two), none counts as a system
    points = con.execute(SYSTEMS_SQL, {"corpus": "fr_mt"}).df()
    assert sorted(points[points.is_reference].run) == ["human", "human", "human2"]
    assert set(points[~points.is_reference].team) == {*RATES, *FR_MORE, *FR_2020}
    html = section(con)
    # a chart per reference-free corpus and per language; fr_tb's text runs have no rule score, no chart
    assert html.count("<svg") == 4 + 4 and "fr_mt: user conllu" in html and "parser" in html
    assert "fr_tb" not in html
    text = status(mt[0])
    assert "reference-free corpora: 4" in text and "campaign dates: mt19 2019, mt20 2020-06" in text
    assert "system-level human scores: 26" in text
    assert "rule scores (L'AMBRE) parsed by: user conllu (20 runs)" in text


@pytest.mark.slow
def test_the_report_shows_the_trends_once_and_lists_them(mt, con, tmp_path):
    from srlens.report import write_report
    from tests.support.html_page import Page, as_dicts

    write_report(mt[0], tmp_path / "report")
    text = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert text.count('id="lambre-trends"') == 1 and text.count('href="#lambre-trends"') == 1
    assert text.count('class="lambre-trends"') == 1
    # a reference-free corpus has its section like any corpus: its runs ranked by rule score, the
    # reference run among them, compared pairwise on the rule score, and its rules
    page = Page(text)
    ranked = as_dicts(page.table_after("fr_mt (mt20)", "Submissions ranked by each score"))
    scores = dict(
        con.execute("""select team || '/' || run, rule_score from submission_scores
                       where corpus = 'fr_mt' and campaign = 'mt20'""").fetchall()
    )
    assert [r["submission"] for r in ranked] == sorted(scores, key=lambda s: -scores[s])
    assert set(ranked[0]) == {"submission", "rule score"} and "reference/human" in scores
    matrix = page.table_after("fr_mt (mt20)", "Who beats whom: paired significance")
    assert matrix[0][1:] == [r["submission"] for r in ranked]  # every run, the reference ones as systems
    rules = as_dicts(page.table_after("fr_mt (mt20)", "Rule scores per rule"))
    assert rules and {r["submissions"] for r in rules} <= {"1", "2", "3", "4"}


def test_the_commands(tmp_path, capsys):
    from srlens.cli import main

    require_shared()
    warehouse = str(tmp_path / "srlens.duckdb")
    run = tmp_path / "run.conllu"
    run.write_text(first_sentences(split_path("de"), 3), encoding="utf-8")
    assert (
        main(
            [
                "--warehouse",
                warehouse,
                "load-outputs",
                str(run),
                "--corpus",
                "de_mt",
                "--team",
                "a",
                "--run",
                "1",
                "--campaign",
                "wmt19",
                "--no-reference",
                "--language",
                "de",
            ]
        )
        == 0
    )
    assert main(["--warehouse", warehouse, "campaign", "wmt19", "--date", "2019-06"]) == 0
    scores = write_csv(
        tmp_path / "system.csv",
        ("campaign", "corpus", "team", "run", "criterion", "score"),
        [("wmt19", "de_mt", "a", "1", "DA", 0.25)],
    )
    assert main(["--warehouse", warehouse, "load-human", str(scores), "--level", "system"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "loaded 3 sentences of a/1 for corpus de_mt",
        "campaign wmt19: date 2019-06",
        f"loaded 1 system-level human scores from {scores}",
    ]
    assert main(["--warehouse", warehouse, "campaign", "wmt19", "--date", "June"]) == 2
    assert "campaign date 'June': expected YYYY, YYYY-MM or YYYY-MM-DD" in capsys.readouterr().err
    assert (
        main(["--warehouse", warehouse, "load-outputs", str(run), "--corpus", "fr_mt", "--team", "a", "--run", "1"])
        == 2
    )
    assert "for a corpus without a treebank, add --no-reference --language xx" in capsys.readouterr().err
    db = duckdb.connect(warehouse, read_only=True)
    try:
        assert db.execute("select * exclude (set_at) from raw.campaign_dates").fetchall() == [
            ("wmt19", "2019-06", parse_campaign_date("2019-06"))
        ]
        assert db.execute("select criterion, score, orientation from raw.system_human_scores").fetchall() == [
            ("da", 0.25, "higher")
        ]
    finally:
        db.close()


def test_each_format_by_the_command_is_matched_by_sent_id_or_by_order(tmp_path, capsys):
    """--format conllu, sr and text for one reference-free corpus: the first run (CoNLL-U) defines the
    sentences by its sent_ids; an sr run in another order is matched by them, a text run by order."""
    from srlens.cli import main

    require_shared()
    warehouse = str(tmp_path / "srlens.duckdb")
    text = first_sentences(split_path("de"), 3)
    blocks = text.strip("\n").split("\n\n")
    ids = [line.split("= ", 1)[1] for line in text.splitlines() if line.startswith("# sent_id = ")]
    sentences = [line.split("= ", 1)[1] for line in text.splitlines() if line.startswith("# text = ")]
    files = {
        "conllu": text,
        "sr": "".join(f"# sent_id = {i}\n# text = {t}\n\n" for i, t in reversed(list(zip(ids, sentences)))),
        "text": "".join(f"{t}\n" for t in sentences),
    }
    assert len(blocks) == 3 and len(set(sentences)) == 3

    def load(fmt, body, team, *more):
        path = tmp_path / f"{team}.{fmt}"
        path.write_text(body, encoding="utf-8")
        return main(
            ["--warehouse", warehouse, "load-outputs", str(path), "--corpus", "de_mt", "--team", team, "--run", "1"]
            + ["--campaign", "wmt19", "--format", fmt, *more]
        )

    for fmt, body in files.items():
        assert load(fmt, body, fmt, "--no-reference", "--language", "de") == 0, capsys.readouterr().err
    # a text run with a sentence less cannot be matched by order; without --no-reference the corpus is refused
    assert load("text", "".join(f"{t}\n" for t in sentences[:2]), "short", "--no-reference", "--language", "de") == 2
    assert "the run has 2 sentences and the treebank has 3" in capsys.readouterr().err
    assert load("text", files["text"], "plain") == 2
    assert "is a reference-free corpus: load its runs with --no-reference --language de" in capsys.readouterr().err
    db = duckdb.connect(warehouse, read_only=True)
    try:
        assert db.execute(
            "select team, format, matched_by, campaign from raw.submissions order by team"
        ).fetchall() == [
            ("conllu", "conllu", "sent_id", "wmt19"),
            ("sr", "sr", "sent_id", "wmt19"),
            ("text", "text", "order", "wmt19"),
        ]
        rows = db.execute("""select o.sent_idx, o.sent_id, list(o.text order by s.team) from raw.outputs o
                             join raw.submissions s using (submission_id) group by all order by 1""").fetchall()
        assert rows == [(k, i, [t, t, t]) for k, (i, t) in enumerate(zip(ids, sentences), start=1)]
        assert db.execute("select corpus, language from raw.reference_free_corpora").fetchall() == [("de_mt", "de")]
    finally:
        db.close()


@pytest.mark.slow
def test_figure_5_points_are_the_rule_scores_over_their_campaign(con):
    svg = ElementTree.fromstring(systems_chart(con, "fr_mt"))
    frame = con.execute(SYSTEMS_SQL, {"corpus": "fr_mt"}).df()
    value, texts = y_scale(svg), svg_texts(svg)
    campaigns = [(x, y, s.split("\n")[0], a) for x, y, s, a in texts if s.startswith("mt")]
    got = []
    for shape in ("circle", "polygon"):  # systems, then the reference runs' stars
        for point in svg.iter(SVG + shape):
            if point.find(SVG + "title") is None:
                continue  # the legend's
            if shape == "circle":
                x, y = float(point.get("cx")), float(point.get("cy"))
            else:
                corners = [tuple(map(float, p.split(","))) for p in point.get("points").split()]
                x, y = (sum(c[k] for c in corners[::2]) / 5 for k in (0, 1))  # the star's tips
            got.append((shape == "polygon", nearest(campaigns, x, 0), value(y)))
    expected = sorted(zip(frame.is_reference.astype(bool), frame.campaign, frame.rule_score))
    got = sorted(got)
    assert [g[:2] for g in got] == [e[:2] for e in expected] and len(expected) > 10
    assert [g[2] for g in got] == pytest.approx([e[2] for e in expected], abs=0.002)
