-- noqa: disable=LT02
-- (sqlfluff cannot indent the jinja for-loops of this model's generated columns; kept as written)
{{ incremental_by_corpus() }}
-- SPEC section 12: is run a better than run b? One row per corpus, metric and ordered pair of runs
-- (both orders: the row (b, a) has the opposite delta and interval and the same p-values).
-- Metrics: corpus_bleu, dea (micro), <score>_mean for each sentence score and sacrebleu's corpus
-- BLEU and chrF (sacrebleu_bleu, chrf; SPEC 13), all computed from
-- summed per-sentence statistics (macros/significance.sql) on the n sentences both runs realized.
--   bootstrap  d_s = m_a(s) - m_b(s) over the B bootstrap samples (udfs/resample.py);
--              p_value = (1 + #{s : |d_s| - mean|d| > |delta|}) / (B + 1)  (paired_bs, Koehn 2004);
--              ci_low, ci_high = 2.5th and 97.5th percentiles of d_s (linear interpolation).
--   ar         trial r swaps the statistics of the masked sentences: a's sums become
--              a - a_swapped + b_swapped and b's the reverse, giving d_r;
--              p_value_ar = (1 + #{r : |d_r| >= |delta|}) / (R + 1)  (ties count).
-- A sample (or trial) where a metric is undefined on either side (no edges, no defined score) is
-- left out of that metric's counts: bootstrap_samples and ar_samples are the numbers of defined
-- ones. When a and b have equal statistics of the metric on every common sentence, both p-values
-- are 1 (SPEC's exception). A metric undefined on the common sentences (delta NULL) has no row.
-- Computed wide (one column per metric) and turned into rows at the end. The pairs grow with the
-- square of a corpus's runs, so no table here has a row per pair and sample: each list's samples
-- are arrays, and srlens_pair_tests does every pair's O(B + R) arithmetic on them in numpy.
{%- set alpha = number_var('significance_alpha') %}
{%- set metrics = significance_metrics() %}
{%- set stat_columns = significance_stat_columns() %}

with pairs as (
    select * from {{ ref('int_significance_pairs') }}
    where n > 0 and {{ changed_corpus() }}
),

sums_with_corpus as (
    select submission_id, '' as restricted_to, corpus, kind, sample, * exclude (submission_id, corpus, kind, sample)
    from {{ ref('int_submission_resample_sums') }}
    where {{ changed_corpus() }}
    union all by name
    select * from {{ ref('int_pair_resample_sums') }}
    where {{ changed_corpus() }}
),

sums as (
    select * exclude (corpus) from sums_with_corpus
),

-- The metrics of each list on its observed and bootstrap sums (per list, not per pair).
list_values as materialized (
    select submission_id, restricted_to, kind, sample, {{ significance_metric_columns('s.{}') }}
    from sums s
    where kind in ('observed', 'bootstrap')
),

observed as (
    select
        p.corpus, p.submission_a, p.submission_b, p.n,
    {%- for m in metrics %}
        a.{{ m }} as {{ m }}_a, b.{{ m }} as {{ m }}_b, a.{{ m }} - b.{{ m }} as d_{{ m }}{{ ',' if not loop.last }}
        {%- endfor %}
    from pairs p
    join list_values a on a.submission_id = p.submission_a and a.restricted_to = p.restricted_a and a.kind = 'observed'
    join list_values b on b.submission_id = p.submission_b and b.restricted_to = p.restricted_b and b.kind = 'observed'
),

-- What the tests read of each list, as small arrays: its metrics observed and per bootstrap sample,
-- its statistics observed and per AR trial; numbered 0.. within its corpus.
list_indexes as (
    select
        corpus, submission_id, restricted_to,
        (row_number() over (partition by corpus order by submission_id, restricted_to) - 1)::integer as list_index
    from (select distinct corpus, submission_id, restricted_to from sums_with_corpus)
),

lists as (
    select
        i.corpus, i.submission_id, i.restricted_to, i.list_index,
        [{{ metrics | join(', ') }}] as observed,
        (
            select list([{{ metrics | join(', ') }}] order by v.sample) from list_values v
            where v.submission_id = i.submission_id and v.restricted_to = i.restricted_to and v.kind = 'bootstrap'
        ) as bootstrap
    from list_indexes i
    join list_values o using (submission_id, restricted_to)
    where o.kind = 'observed'
),

list_sums as (
    select
        o.submission_id, o.restricted_to,
        [{{ stat_columns | join(', ') }}] as observed_sums,
        (
            select list([{{ stat_columns | join(', ') }}] order by r.sample) from sums r
            where r.submission_id = o.submission_id and r.restricted_to = o.restricted_to and r.kind = 'ar'
        ) as ar_sums
    from sums o
    where o.kind = 'observed'
),

-- One UDF call per corpus (udfs/resample.py srlens_pair_tests): for each ordered pair the bootstrap
--   d_s = m_a(s) - m_b(s), its defined samples, #{s : |d_s| - mean|d| > |delta|} and 2.5th and
--   97.5th percentiles (as quantile_cont), and the AR trials, where a's sums become oa - ra + rb and
--   b's ob - rb + ra, with #{r : |d_r| >= |delta|}: every pair O(B + R) arithmetic on its two lists.
pair_indexes as (
    select p.corpus, p.submission_a, p.submission_b, a.list_index as index_a, b.list_index as index_b
    from pairs p
    join lists a on a.submission_id = p.submission_a and a.restricted_to = p.restricted_a
    join lists b on b.submission_id = p.submission_b and b.restricted_to = p.restricted_b
),

corpus_pairs as (
    select
        corpus,
        list(submission_a order by index_a, index_b) as submission_a,
        list(submission_b order by index_a, index_b) as submission_b,
        list(index_a order by index_a, index_b) as index_a,
        list(index_b order by index_a, index_b) as index_b
    from pair_indexes
    group by corpus
),

corpus_lists as (
    select
        l.corpus,
        list(l.observed order by l.list_index) as observed,
        list(l.bootstrap order by l.list_index) as bootstrap,
        list(s.observed_sums order by l.list_index) as observed_sums,
        list(s.ar_sums order by l.list_index) as ar_sums
    from lists l
    join list_sums s using (submission_id, restricted_to)
    group by l.corpus
),

pair_tests as materialized (
    select
        unnest(p.submission_a) as submission_a,
        unnest(p.submission_b) as submission_b,
        unnest(srlens_pair_tests(p.index_a, p.index_b, l.observed, l.bootstrap, l.observed_sums, l.ar_sums)) as t
    from corpus_pairs p
    join corpus_lists l using (corpus)
),

-- Equal statistics of the metric on every common sentence (SPEC's exception: p = 1).
identical as (
    select
        a.submission_id as submission_a, b.submission_id as submission_b,
        bool_and(
            a.hyp_len = b.hyp_len and a.ref_len = b.ref_len and a.m1 = b.m1 and a.m2 = b.m2
            and a.m3 = b.m3 and a.m4 = b.m4 and a.t1 = b.t1 and a.t2 = b.t2 and a.t3 = b.t3
            and a.t4 = b.t4
        ) as same_corpus_bleu,
        bool_and(a.dea_matched = b.dea_matched and a.dea_edges = b.dea_edges) as same_dea,
    {%- for score in significance_mean_scores() %}
        bool_and(a.{{ score }}_sum = b.{{ score }}_sum and a.{{ score }}_n = b.{{ score }}_n) as same_{{ score }}_mean,
        {%- endfor %}
    {%- for metric, fields in [('sacrebleu_bleu', sacrebleu_bleu_fields()), ('chrf', chrf_fields())] %}
        bool_and({% for c in fields %}a.{{ c }} = b.{{ c }}{{ ' and ' if not loop.last }}{% endfor %}) as same_{{ metric }}
        {{- ',' if not loop.last }}
        {%- endfor %}
    from {{ ref('int_significance_sentences') }} a
    join {{ ref('int_significance_sentences') }} b
        on b.corpus = a.corpus and b.sent_idx = a.sent_idx and b.submission_id <> a.submission_id
    where {{ changed_corpus('a.corpus') }}
    group by all
),

tests as (
    select
        o.corpus, o.submission_a, o.submission_b, o.n,
        unnest([
            {%- for m in metrics %}
                {
                    'metric': '{{ m }}', 'value_a': o.{{ m }}_a, 'value_b': o.{{ m }}_b, 'delta': o.d_{{ m }},
                    'ci_low': pt.t.ci_low[{{ loop.index }}], 'ci_high': pt.t.ci_high[{{ loop.index }}],
                    'p_value': case
                        when i.same_{{ m }} then 1.0
                        else (1 + pt.t.more_extreme[{{ loop.index }}]::bigint) / (pt.t.samples[{{ loop.index }}]::bigint + 1)
                    end,
                    'p_value_ar': case
                        when i.same_{{ m }} then 1.0
                        else (1 + pt.t.extreme[{{ loop.index }}]::bigint) / (pt.t.trials[{{ loop.index }}]::bigint + 1)
                    end,
                    'bootstrap_samples': pt.t.samples[{{ loop.index }}]::bigint,
                    'ar_samples': pt.t.trials[{{ loop.index }}]::bigint
                }
                {{- ',' if not loop.last }}
            {%- endfor %}
        ]) as t
    from observed o
    join pair_tests pt using (submission_a, submission_b)
    join identical i using (submission_a, submission_b)
)

select
    corpus,
    t.metric,
    submission_a,
    submission_b,
    n,
    t.value_a,
    t.value_b,
    t.delta,
    t.ci_low,
    t.ci_high,
    t.p_value,
    t.p_value_ar,
    case
        when t.p_value < {{ alpha }} and t.delta > 0 then 'a'
        when t.p_value < {{ alpha }} and t.delta < 0 then 'b'
    end as winner,
    t.bootstrap_samples,
    t.ar_samples,
    {{ number_var('bootstrap_seed') }}::bigint as bootstrap_seed
from tests
where t.delta is not null
