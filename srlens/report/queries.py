"""The report's queries and its cut-offs: every figure of the report comes from one of these SQL
texts, run read-only with named parameters ($campaign, $corpus, ...), and the overview page shows
the exact text under what it feeds. The queries read marts (SPEC 11 and 12); the sentence view
also reads the analysis trees and output words of the example sentences (intermediate schema)."""

from srlens.definitions import CORRELATION_VARIABLES, MINING_VIEWS

# The marts the report reads; a warehouse without them has not been built.
REQUIRED_MARTS = (
    "corpus_stats",
    "submission_scores",
    "sentence_scores",
    "dea_by_relation",
    "correlation_summary",
    "projectivity_tests",
    "suspicious_subtrees",
    "suspicious_subtrees_summary",
    "lambre_rule_scores",
    "pairwise_significance",
    "system_rankings",
    "bucket_scores",
    "error_examples",
)

TOP_SUBTREES = 20  # per view
TOP_RULES = 30  # worst rules by mean score
MIN_EDGES = 20  # a relation needs this many reference edges to be shown in DEA per relation
MAX_BARS = 40  # submissions a chart shows (tables show all)
VIEWS = MINING_VIEWS  # srlens/definitions.py
# rule_score_mean: the one figure compared for the runs of a reference-free corpus
SIGNIFICANCE_METRICS = {"corpus_bleu": "BLEU (corpus)", "dea": "DEA (micro)", "rule_score_mean": "rule score (mean)"}

# Scores of submissions, in display order, with short labels (as in the framework paper).
SCORES = {
    "corpus_bleu": "BLEU (corpus)",
    "dea": "DEA (micro)",
    "simple_string_accuracy_mean": "SSA",
    "generation_string_accuracy_mean": "GSA",
    "simple_tree_accuracy_mean": "STA",
    "generation_tree_accuracy_mean": "GTA",
    "understandability_accuracy_mean": "understandability",
    "quality_accuracy_mean": "quality",
    "reorder_accuracy_mean": "reorder acc.",
    "rule_score": "rule score",
    "fluency_z_mean": "fluency (z)",
    "adequacy_z_mean": "adequacy (z)",
    "sacrebleu_bleu": "sacreBLEU",
    "chrf": "chrF",
}

# Short labels of the sentence-level variables of the correlation study (SPEC 10); METRICS lists them
# in the order of srlens/definitions.py (that of int_corr_sentence_values).
_METRIC_LABELS = {
    "bleu": "BLEU",
    "dea": "DEA",
    "simple_string_accuracy": "SSA",
    "generation_string_accuracy": "GSA",
    "simple_tree_accuracy": "STA",
    "generation_tree_accuracy": "GTA",
    "reorder_accuracy": "reorder",
    "rule_score": "rule",
    "fluency_z": "fluency",
    "adequacy_z": "adequacy",
    "tree_depth": "depth",
    "tree_length": "length",
    "mean_dependency_distance": "MDD",
    "mean_flux_size": "MFS",
    "mean_flux_weight": "MFW",
    "mean_arity": "arity",
    "sacrebleu_bleu": "sacreBLEU",
    "chrf": "chrF",
}
METRICS = {name: _METRIC_LABELS.get(name, name) for name in CORRELATION_VARIABLES}

# ---------------------------------------------------------------------------------------------
# The overview page (index.html). Each is shown verbatim under what it feeds.

SQL_CAMPAIGNS = """\
select campaign, count(distinct corpus) as corpora, count(*) as submissions
from submission_scores
group by campaign
order by campaign"""

SQL_CORPUS_STATS = """\
-- The treebanks of the campaign (SPEC 1): mean and sample SD of each tree metric, and the
-- submissions the campaign has on each.
select c.*, s.submissions
from corpus_stats c
join (select corpus, count(*) as submissions
      from submission_scores
      where campaign = $campaign
      group by corpus) s using (corpus)
order by c.corpus"""

SQL_CAMPAIGN_CORPORA = """\
-- The corpora of the campaign's submissions: its treebanks and its reference-free corpora,
-- each with a section of its own.
select distinct corpus from submission_scores where campaign = $campaign order by corpus"""

SQL_UNUSED_CORPORA = """\
-- Treebanks loaded without any submission (train splits, rule treebanks, ...).
select c.*, 0 as submissions
from corpus_stats c
where c.corpus not in (select corpus from submission_scores)
order by c.corpus"""

SQL_CAMPAIGN_CORRELATIONS = """\
-- Median Spearman rho of each pair of variables over the campaign's submissions (SPEC 10).
select metric_a, metric_b, submissions, rho_median
from correlation_summary
where scope = 'campaign' and scope_value = $campaign and submissions > 0"""

SQL_CORPUS_CORRELATIONS = """\
-- Median Spearman rho of each pair of variables over the corpus's submissions (SPEC 10).
select metric_a, metric_b, submissions, rho_median
from correlation_summary
where scope = 'corpus' and scope_value = $corpus and submissions > 0"""

SQL_CAMPAIGN_DEA = """\
-- Macro-average DEA per base relation over the campaign's submissions, worst first (the
-- framework paper's Table 4). edges: reference edges of the relation in the campaign's treebanks.
with runs as (
    select d.*
    from dea_by_relation d
    join submission_scores s using (submission_id)
    where s.campaign = $campaign
),
edges as (
    select relation, sum(edges)::bigint as edges
    from (select relation, corpus, max(edges) as edges from runs group by relation, corpus)
    group by relation
)
select r.relation, e.edges, count(distinct r.corpus) as corpora, count(*) as submissions,
       avg(r.dea) as dea_mean, min(r.dea) as dea_min, max(r.dea) as dea_max
from runs r
join edges e using (relation)
where e.edges >= $min_edges
group by r.relation, e.edges
order by dea_mean, r.relation"""

SQL_RANKING = """\
-- Each score of each submission on the corpus, ranked (1 = best; ties share a rank). Scores
-- that are NULL for a run (rule score without a parse, human scores without judgments) drop out.
with runs as (
    select submission_id, team || '/' || run as submission,
           corpus_bleu, dea, simple_string_accuracy_mean, generation_string_accuracy_mean,
           simple_tree_accuracy_mean, generation_tree_accuracy_mean,
           understandability_accuracy_mean, quality_accuracy_mean, reorder_accuracy_mean,
           rule_score, fluency_z_mean, adequacy_z_mean, sacrebleu_bleu, chrf
    from submission_scores
    where campaign = $campaign and corpus = $corpus
)
select submission_id, submission, score, value,
       -- scores equal but for their last bits tie, as in system_rankings
       rank() over (partition by score order by round(value, 12) desc) as rank
from (unpivot runs on columns(* exclude (submission_id, submission)) into name score value value)
order by score, rank, submission"""

SQL_SIGNIFICANCE = """\
-- Who beats whom (SPEC 12): for each ordered pair of the campaign's runs on the corpus, the
-- difference a - b, its 95% paired-bootstrap interval, the bootstrap p-value and the winner.
select p.metric, sa.team || '/' || sa.run as submission_a, sb.team || '/' || sb.run as submission_b,
       p.delta, p.ci_low, p.ci_high, p.p_value, p.p_value_ar, p.winner
from pairwise_significance p
join submission_scores sa on sa.submission_id = p.submission_a
join submission_scores sb on sb.submission_id = p.submission_b
where p.corpus = $corpus and sa.campaign = $campaign and sb.campaign = $campaign
  and p.metric in ('corpus_bleu', 'dea', 'rule_score_mean')
order by p.metric, sa.corpus_bleu desc, sa.rule_score desc, submission_a, sb.corpus_bleu desc, sb.rule_score desc,
         submission_b"""

SQL_CLUSTERS = """\
-- The clusters of system_rankings (SPEC 12, as WMT publishes them): runs that no significant
-- difference (Holm-corrected paired bootstrap) separates; ranks are among all the corpus's runs.
select r.metric, r.cluster, r.rank, s.team || '/' || s.run as submission, r.rank_best, r.rank_worst
from system_rankings r
join submission_scores s using (submission_id)
where r.corpus = $corpus and s.campaign = $campaign and r.metric in ('corpus_bleu', 'dea', 'rule_score_mean')
order by r.metric, r.rank"""

SQL_BUCKETS = """\
-- Micro DEA (lemma recall for word_frequency) of each run per bucket of each dimension (SPEC 12).
select b.dimension, b.bucket_no, b.bucket, s.team || '/' || s.run as submission,
       b.sentences, b.edges, b.dea, b.lemmas, b.lemma_recall,
       coalesce(b.dea, b.lemma_recall) as value
from bucket_scores b
join submission_scores s using (submission_id)
where s.campaign = $campaign and s.corpus = $corpus
order by b.dimension, b.bucket_no, s.corpus_bleu desc, submission"""

SQL_CORPUS_DEA = """\
-- DEA per base relation across the corpus's submissions, worst mean first. edges: reference
-- edges of the relation (the most any run was scored on); rarer relations are left out.
select d.relation,
       max(d.edges) as edges,
       count(*) as submissions,
       avg(d.dea) as dea_mean,
       min(d.dea) as dea_min,
       quantile_cont(d.dea, 0.25) as dea_q1,
       median(d.dea) as dea_median,
       quantile_cont(d.dea, 0.75) as dea_q3,
       max(d.dea) as dea_max
from dea_by_relation d
join submission_scores s using (submission_id)
where s.campaign = $campaign and s.corpus = $corpus
group by d.relation
having max(d.edges) >= $min_edges
order by dea_mean, d.relation"""

SQL_PROJECTIVITY = """\
-- Projective vs non-projective sentences per submission and score (SPEC 10, Mann-Whitney U).
-- Untested rows keep their medians and say why they were skipped.
select team || '/' || run as submission, score, n_projective, n_nonprojective,
       median_projective, median_nonprojective, u, p_value, tested, skipped_reason
from projectivity_tests
where campaign = $campaign and corpus = $corpus
  and n_projective + n_nonprojective > 0
order by case score when 'bleu' then 1 when 'fluency' then 2 when 'adequacy' then 3 end, score, submission"""

SQL_CAMPAIGN_SUBTREES = """\
-- Top suspicious subtrees per view over the campaign's submissions (SPEC 8): coverage = % of
-- submissions where the subtree is suspicious, MSS = mean suspicion there.
select view, subtree, suspicious_in, submissions_in_scope, coverage_pct, mean_suspicion
from suspicious_subtrees_summary
where scope = 'campaign' and scope_value = $campaign and suspicious_in > 0
qualify row_number() over (partition by view order by coverage_pct desc, mean_suspicion desc, subtree) <= $top
order by view, coverage_pct desc, mean_suspicion desc, subtree"""

SQL_CORPUS_SUBTREES = """\
-- Top suspicious subtrees per view over the corpus's submissions (SPEC 8).
select view, subtree, suspicious_in, submissions_in_scope, coverage_pct, mean_suspicion
from suspicious_subtrees_summary
where scope = 'corpus' and scope_value = $corpus and suspicious_in > 0
qualify row_number() over (partition by view order by coverage_pct desc, mean_suspicion desc, subtree) <= $top
order by view, coverage_pct desc, mean_suspicion desc, subtree"""

SQL_RULES = """\
-- L'AMBRE rule scores per rule over the corpus's submissions (SPEC 9), worst mean first.
-- pooled = matches / (matches + failures) over all runs; rules_fired counts every rule.
select rule_id,
       count(*) as submissions,
       sum(matches)::bigint as matches,
       sum(failures)::bigint as failures,
       sum(matches) / (sum(matches) + sum(failures)) as pooled_score,
       avg(score) as score_mean,
       min(score) as score_min,
       max(score) as score_max,
       count(*) over () as rules_fired
from lambre_rule_scores
where campaign = $campaign and corpus = $corpus
group by rule_id
order by score_mean, rule_id
limit $top"""

SQL_BUILD = """\
select started_at, processor, models, tests, srlens_version, dbt_vars->>'signature' as signature
from meta.builds
order by started_at desc
limit 1"""

# ---------------------------------------------------------------------------------------------
# Run pages (runs/*.html) and sentence pages (sentences/*/*.html). Each query reads its mart once
# for every run, sorted by submission_id first (the order of SQL_RUNS), and ByRun hands its rows out
# run by run: one query per mart rather than one per run, which scanned the mart each time.

SQL_RUNS = """\
-- with each run's rank range and cluster on corpus BLEU and DEA (system_rankings)
select s.submission_id, s.campaign, s.corpus, s.team || '/' || s.run as submission, s.sentences, s.missing,
       s.corpus_bleu, s.corpus_bleu_ci_low, s.corpus_bleu_ci_high, s.dea, s.dea_ci_low, s.dea_ci_high,
       b.rank_best as corpus_bleu_rank_best, b.rank_worst as corpus_bleu_rank_worst,
       b.cluster as corpus_bleu_cluster, b.submissions as corpus_bleu_ranked,
       d.rank_best as dea_rank_best, d.rank_worst as dea_rank_worst, d.cluster as dea_cluster,
       d.submissions as dea_ranked
from submission_scores s
left join system_rankings b on b.submission_id = s.submission_id and b.metric = 'corpus_bleu'
left join system_rankings d on d.submission_id = s.submission_id and d.metric = 'dea'
order by s.submission_id"""

SQL_RUN_RELATIONS = """\
-- Each run's DEA per base relation, worst first, with how many example sentences it has.
with examples as (
    select submission_id, key as relation, count(*) as examples
    from error_examples
    where kind = 'relation' and submission_id between $first and $last
    group by submission_id, key
)
select d.submission_id, d.relation, d.edges, d.matched, d.dea, coalesce(x.examples, 0) as examples
from dea_by_relation d
left join examples x using (submission_id, relation)
where d.submission_id between $first and $last
order by d.submission_id, d.dea, d.edges desc, d.relation"""

SQL_RUN_SUBTREES = """\
-- Each run's most suspicious subtrees per view (SPEC 8), with how many example sentences each has.
-- cutoff: the $top-th highest suspicion of a run's view; the top rows are among those at or above it,
-- so only they are ranked (ranking all 1.7 million suspicious rows of a campaign cost 1 s).
with cutoff as (
    select submission_id, view, list_min(max(suspicion, $top)) as cutoff
    from suspicious_subtrees
    where is_suspicious and submission_id between $first and $last
    group by submission_id, view
),
top as (
    select s.submission_id, s.view, s.subtree, s.c_f, s.c_f_fail, s.suspicion
    from suspicious_subtrees s
    join cutoff c on s.submission_id = c.submission_id and s.view = c.view and s.suspicion >= c.cutoff
    where s.is_suspicious
    qualify row_number() over (partition by s.submission_id, s.view order by s.suspicion desc, s.subtree) <= $top
),
examples as (
    select submission_id, view, key as subtree, count(*) as examples
    from error_examples
    where kind = 'subtree' and submission_id between $first and $last
    group by submission_id, view, key
)
select t.submission_id, t.view, t.subtree, t.c_f, t.c_f_fail, t.suspicion, coalesce(x.examples, 0) as examples
from top t
left join examples x using (submission_id, view, subtree)
order by t.submission_id, t.view, t.suspicion desc, t.subtree"""

SQL_RUN_BUCKETS = """\
-- edges and lemmas are sums (HUGEINT), which Arrow would hand over as decimals: as BIGINT they are ints
select submission_id, dimension, bucket_no, bucket, sentences, edges::bigint as edges, dea, corpus_bleu, bleu_mean,
       lemmas::bigint as lemmas, lemma_recall
from bucket_scores
where submission_id between $first and $last
order by submission_id, dimension, bucket_no"""

SQL_RUN_EXAMPLES = """\
select e.submission_id, e.kind, e.view, e.key, e.rank, e.sent_id, e.sent_idx, e.reference_text, e.output_text,
       e.edges, e.missed, e.key_edges, e.key_missed, e.mining_score, s.bleu, s.dea
from error_examples e
left join sentence_scores s using (submission_id, sent_idx)
where e.submission_id between $first and $last
order by e.submission_id, e.kind, e.view, e.key, e.rank"""

SQL_EXAMPLE_MISSED_EDGES = """\
-- The reference edges each example sentence of a run misses: a list that error_examples repeats on
-- each of the sentence's rows, read here from one row a sentence (turning it into Python costs most;
-- the first row by rowid, as DISTINCT ON would hash and copy every row's list).
with first as (
    select submission_id, sent_idx, min(rowid) as first_row
    from error_examples
    where submission_id between $first and $last
    group by submission_id, sent_idx
)
select e.submission_id, e.sent_idx, e.missed_edges
from error_examples e
join first f on e.rowid = f.first_row
order by e.submission_id, e.sent_idx"""

SQL_EXAMPLE_REFERENCE_WORDS = """\
-- The analysis tree (punctuation dropped, SPEC 1) of every example sentence of each run, with the
-- occurrence of each lemma: the k-th reference word of a lemma aligns with the k-th output word.
with examples as (
    select distinct submission_id, corpus, sent_idx from error_examples where submission_id between $first and $last
),
words as (
    select w.corpus, w.sent_idx, w.pos, w.form, w.head_pos, w.deprel, w.lemma_lower,
           row_number() over (partition by w.corpus, w.sent_idx, w.lemma_lower order by w.pos) as occurrence
    from intermediate.int_analysis_words w
    semi join examples using (corpus, sent_idx)
)
select x.submission_id, w.sent_idx, w.pos, w.form, w.head_pos, w.deprel, w.lemma_lower, w.occurrence
from examples x
join words w using (corpus, sent_idx)
order by x.submission_id, w.sent_idx, w.pos"""

SQL_EXAMPLE_OUTPUT_WORDS = """\
-- Each run's words (punctuation dropped, as DEA sees them) for its example sentences. The words are
-- int_output_words' (a view), read from its two tables for the example sentences only, with the
-- view's lemma_lower and is_punct: DuckDB would join every word of the runs with its reference word
-- before keeping the examples'. Each example sentence is numbered in the output's order, so that the
-- windows and the sort take an integer, not the submission_id (docs/performance.md,
-- "The report").
with examples as (
    select submission_id, corpus, sent_idx, row_number() over (order by submission_id, sent_idx) as example
    from (
        select distinct submission_id, corpus, sent_idx from error_examples where submission_id between $first and $last
    )
),
words as (
    select x.example, w.submission_id, w.sent_idx, w.word_idx, w.form,
           lower(coalesce(r.lemma, lower(w.form))) as lemma_lower,
           coalesce(r.is_punct, regexp_full_match(w.form, '\\p{P}+'), false) as is_punct
    from examples x
    join intermediate.int_output_words_aligned w using (submission_id, sent_idx)
    left join intermediate.int_reference_words r
        on r.corpus = x.corpus and r.sent_idx = w.sent_idx and r.word_id = w.word_id
    union all
    select x.example, p.submission_id, p.sent_idx, p.word_idx, p.form, p.lemma_lower, p.is_punct
    from examples x
    join intermediate.int_output_words_parsed p using (submission_id, sent_idx)
)
select submission_id, sent_idx,
       row_number() over (partition by example order by word_idx) as pos,
       form, lemma_lower,
       row_number() over (partition by example, lemma_lower order by word_idx) as occurrence
from words
where not is_punct
order by example, pos"""

# The rows of a run's page and of its sentence pages: name -> (SQL, parameters). Each query also
# takes $first and $last, the submission_ids of the runs it reads (a block of SQL_RUNS's rows).
RUN_QUERIES = {
    "relations": (SQL_RUN_RELATIONS, {}),
    "subtrees": (SQL_RUN_SUBTREES, {"top": TOP_SUBTREES}),
    "buckets": (SQL_RUN_BUCKETS, {}),
    "examples": (SQL_RUN_EXAMPLES, {}),
    "missed_edges": (SQL_EXAMPLE_MISSED_EDGES, {}),
    "reference": (SQL_EXAMPLE_REFERENCE_WORDS, {}),
    "output": (SQL_EXAMPLE_OUTPUT_WORDS, {}),
}


def fetch(con, sql, **params):
    """The rows of a query as dicts (column name -> value), without a DataFrame in between: the run
    and sentence pages read many small results, where pandas would cost more than the query."""
    cursor = con.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


class ByRun:
    """The rows of a query for every run, sorted by submission_id (its first column), handed out
    one run at a time: take(submission_id) for each run in that order. The query runs on a cursor
    of its own, so that the run pages' queries stream side by side and Python holds one run's rows.
    The rows come as Arrow record batches: their dicts are made in one call a batch, cheaper than
    DuckDB's tuples zipped with the names in Python."""

    def __init__(self, con, sql, **params):
        self.cursor = con.cursor()
        # a relation's reader: on an executed (DB-API) result DuckDB copies every row once more
        self.batches = self.cursor.sql(sql, params=params).to_arrow_reader(10_000)
        self.names = self.batches.schema.names[1:]
        self.ids, self.rows, self.next = [], [], 0  # the fetched batch; rows[next:] are not handed out yet

    def take(self, submission_id):
        """The run's rows as dicts (without submission_id). Rows of runs before it are skipped."""
        out = []
        while True:
            ids, start = self.ids, self.next
            while start < len(ids) and ids[start] < submission_id:
                start += 1
            end = start  # DuckDB and Python both sort strings by code point
            while end < len(ids) and ids[end] == submission_id:
                end += 1
            out += self.rows[start:end]
            self.next = end
            if end < len(ids):
                return out
            try:
                batch = self.batches.read_next_batch()
            except StopIteration:
                self.ids, self.rows, self.next = [], [], 0
                return out
            self.ids, self.rows, self.next = batch.column(0).to_pylist(), batch.select(self.names).to_pylist(), 0

    def close(self):
        self.batches.close()
        self.cursor.close()
