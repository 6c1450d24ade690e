-- SPEC section 10: Spearman rho of each pair of variables aggregated over submissions: over all
-- submissions, per corpus, per team and per campaign (scope_value 'all' for the first). submissions counts the
-- submissions with a non-NULL rho, the ones the median and mean are over; a pair whose rho is
-- NULL everywhere in a scope keeps its row with submissions 0.
with c as (
    select * from {{ ref('metric_correlations') }}
),

scoped as (
    select 'all' as scope, 'all' as scope_value, * from c
    union all
    select 'corpus', corpus, * from c
    union all
    select 'team', team, * from c
    union all
    select 'campaign', campaign, * from c
)

select
    scope,
    scope_value,
    metric_a,
    metric_b,
    count(rho) as submissions,
    median(rho) as rho_median,
    avg(rho) as rho_mean,
    min(rho) as rho_min,
    max(rho) as rho_max,
    count(*) filter (where significant) as significant_submissions,
    count(*) as submissions_listed
from scoped
group by scope, scope_value, metric_a, metric_b
