-- noqa: disable=LT02
-- (sqlfluff cannot indent the jinja for-loops of this model's generated columns; kept as written)
{{ incremental_by_corpus() }}
-- SPEC section 12: is run a better than run b? One row per corpus, metric and ordered pair of runs
-- (both orders: the row (b, a) has the opposite delta and interval and the same p-values).
-- Metrics: corpus_bleu, dea (micro) and <score>_mean for each sentence score, all computed from
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
-- Computed wide (one column per metric) and turned into rows at the end.
{%- set alpha = number_var('significance_alpha') %}
{%- set metrics = significance_metrics() %}

with pairs as (
    select * from {{ ref('int_significance_pairs') }}
    where n > 0 and {{ changed_corpus() }}
),

sums as (
    select submission_id, '' as restricted_to, kind, sample, * exclude (submission_id, corpus, kind, sample)
    from {{ ref('int_submission_resample_sums') }}
    where {{ changed_corpus() }}
    union all by name
    select * exclude (corpus) from {{ ref('int_pair_resample_sums') }}
    where {{ changed_corpus() }}
),

-- The metrics of each list on its observed and bootstrap sums (per list, not per pair; materialized:
-- read for both sides of the pairs, the BLEU UDF would otherwise run twice per row).
list_values as materialized (
    select submission_id, restricted_to, kind, sample, {{ significance_metric_columns('s.{}') }}
    from sums s
    where kind in ('observed', 'bootstrap')
),

differences as (
    select
        p.corpus, p.submission_a, p.submission_b, p.n, a.kind, a.sample,
    {%- for m in metrics %}
        a.{{ m }} as {{ m }}_a, b.{{ m }} as {{ m }}_b, a.{{ m }} - b.{{ m }} as d_{{ m }}{{ ',' if not loop.last }}
        {%- endfor %}
    from pairs p
    join list_values a on a.submission_id = p.submission_a and a.restricted_to = p.restricted_a
    join list_values
        b on b.submission_id = p.submission_b and b.restricted_to = p.restricted_b
    and b.kind = a.kind and b.sample = a.sample
),

observed as (
    select * exclude (kind, sample) from differences
    where kind = 'observed'
),

bootstrap as (
    select
        d.*,
    {%- for m in metrics %}
        avg(abs(d.d_{{ m }})) over (partition by d.submission_a, d.submission_b) as mean_abs_{{ m }},
        o.d_{{ m }} as delta_{{ m }}{{ ',' if not loop.last }}
        {%- endfor %}
    from differences d
    join observed o using (submission_a, submission_b)
    where d.kind = 'bootstrap'
),

bootstrap_tests as (
    select
        submission_a, submission_b,
    {%- for m in metrics %}
        count(d_{{ m }}) as samples_{{ m }},
        count(*) filter (where abs(d_{{ m }}) - mean_abs_{{ m }} > abs(delta_{{ m }})) as more_extreme_{{ m }},
        quantile_cont(d_{{ m }}, 0.025) as ci_low_{{ m }},
        quantile_cont(d_{{ m }}, 0.975) as ci_high_{{ m }}{{ ',' if not loop.last }}
        {%- endfor %}
    from bootstrap
    group by submission_a, submission_b
),

-- Approximate randomization: each trial's swapped lists, from the observed and swapped sums of both
-- sides (oa - ra + rb for a, ob - rb + ra for b). Computed for one order of each pair: the other
-- order has the same two lists, so |d_r| and |delta| and the counts are the same (ar_tests_both).
-- Each pair meets a's trials first (materialized), then b's trial of the same sample: left to
-- itself, the planner joined the trials of every two runs on the sample alone (runs^2 x R rows).
pair_trials as materialized (
    select p.submission_a, p.submission_b, p.restricted_a, p.restricted_b, ra.* exclude (submission_id, restricted_to, kind)
    from pairs p
    join sums ra on ra.submission_id = p.submission_a and ra.restricted_to = p.restricted_a and ra.kind = 'ar'
    where p.submission_a < p.submission_b
),

swapped as (
    select
        ra.submission_a, ra.submission_b, ra.sample,
        {{ significance_metric_columns('oa.{} - ra.{} + rb.{}', 'a_') }},
        {{ significance_metric_columns('ob.{} - rb.{} + ra.{}', 'b_') }}
    from pair_trials ra
    join sums rb
        on
            rb.submission_id = ra.submission_b and rb.restricted_to = ra.restricted_b and rb.kind = 'ar'
            and rb.sample = ra.sample
    join sums oa on oa.submission_id = ra.submission_a and oa.restricted_to = ra.restricted_a and oa.kind = 'observed'
    join sums ob on ob.submission_id = ra.submission_b and ob.restricted_to = ra.restricted_b and ob.kind = 'observed'
),

ar_tests as (
    select
        s.submission_a, s.submission_b,
    {%- for m in metrics %}
        count(s.a_{{ m }} - s.b_{{ m }}) as trials_{{ m }},
        count(*) filter (where abs(s.a_{{ m }} - s.b_{{ m }}) >= abs(o.d_{{ m }})) as extreme_{{ m }}
        {{- ',' if not loop.last }}
        {%- endfor %}
    from swapped s
    join observed o using (submission_a, submission_b)
    group by s.submission_a, s.submission_b
),

ar_tests_both as (
    select * from ar_tests
    union all by name
    select * exclude (submission_a, submission_b), submission_b as submission_a, submission_a as submission_b
    from ar_tests
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
        bool_and(a.{{ score }}_sum = b.{{ score }}_sum and a.{{ score }}_n = b.{{ score }}_n) as same_{{ score }}_mean
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
                    'ci_low': bt.ci_low_{{ m }}, 'ci_high': bt.ci_high_{{ m }},
                    'p_value': case
                        when i.same_{{ m }} then 1.0
                        else (1 + bt.more_extreme_{{ m }}) / (bt.samples_{{ m }} + 1)
                    end,
                    'p_value_ar': case
                        when i.same_{{ m }} then 1.0
                        else (1 + ar.extreme_{{ m }}) / (ar.trials_{{ m }} + 1)
                    end,
                    'bootstrap_samples': bt.samples_{{ m }}, 'ar_samples': ar.trials_{{ m }}
                }
                {{- ',' if not loop.last }}
            {%- endfor %}
        ]) as t
    from observed o
    join bootstrap_tests bt using (submission_a, submission_b)
    join ar_tests_both ar using (submission_a, submission_b)
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
