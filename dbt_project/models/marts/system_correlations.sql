-- noqa: disable=LT02
-- (sqlfluff cannot indent the jinja for-loops of this model's generated columns; kept as written)
-- System-level correlation of each metric with each human criterion (the L'AMBRE
-- paper's Table 3): one row per (campaign, corpus, metric, criterion). A system is a run with a
-- value of the metric and a human score on the criterion (int_system_human_scores); runs where
-- the metric is NULL (e.g. BLEU of a reference-free run) are left out of that metric's rows.
-- Outliers (Mathur et al. 2020): the runs whose human score lies more than 2.5 median absolute
-- deviations, scaled by 1.4826, from the median of the human scores of the campaign's runs of the
-- corpus on that criterion (all runs with a human score, whatever the metric); none when that
-- deviation is 0. Coefficients and p-values are scipy's (udfs/stats.py), NULL under 3 systems.
{#- rule_score, and the system-level metrics of pairwise_significance (srlens/definitions.py MEAN_SCORES) -#}
{%- set metrics = ['rule_score'] + significance_metrics() %}

with metric_values as (
    {%- for metric in metrics %}
        select submission_id, '{{ metric }}' as metric, {{ metric }}::double as metric_value
        from {{ ref('submission_scores') }}
        where {{ metric }} is not null
                {{ 'union all' if not loop.last }}
    {%- endfor %}
),

centre as (
    select campaign, corpus, criterion, median(human_score) as human_median
    from {{ ref('int_system_human_scores') }}
    group by all
),

spread as (
    select
        h.campaign, h.corpus, h.criterion, any_value(c.human_median) as human_median,
        median(abs(h.human_score - c.human_median)) as human_mad
    from {{ ref('int_system_human_scores') }} h
    join centre c using (campaign, corpus, criterion)
    group by all
),

human as (
    select
        h.*, s.human_median, s.human_mad,
        -- MAD 0 (most runs share one score): no outlier, not every run off the median
        s.human_mad > 0 and abs(h.human_score - s.human_median) > 2.5 * 1.4826 * s.human_mad as is_outlier
    from {{ ref('int_system_human_scores') }} h
    join spread s using (campaign, corpus, criterion)
),

systems as (
    select
        h.campaign, h.corpus, m.metric, h.criterion,
        any_value(h.orientation) as human_orientation,
        array_to_string(list_sort(list(distinct h.human_source)), ', ') as human_source,
        any_value(h.human_median) as human_median,
        any_value(h.human_mad) as human_mad,
        list({ 'x': m.metric_value, 'y': h.human_score, 'outlier': h.is_outlier }) as pairs,
        list_sort(list(h.submission_id) filter (where h.is_outlier)) as outliers
    from human h
    join metric_values m using (submission_id)
    group by all
),

tested as materialized (
    select *, srlens_system_correlation(pairs) as c from systems
)

select
    campaign,
    corpus,
    metric,
    criterion,
    human_orientation,  -- higher: a positive r means agreement; lower (e.g. MQM): a negative r does
    human_source,
    c.systems,
    c.pearson_r,
    c.pearson_p,
    c.spearman_rho,
    c.spearman_p,
    c.kendall_tau,
    c.kendall_p,
    coalesce(outliers, []::varchar[]) as outliers,
    c.systems_no_outliers,
    c.pearson_r_no_outliers,
    c.pearson_p_no_outliers,
    human_median,
    human_mad
from tested
