-- SPEC section 8 across submissions: for each view and subtree, how many submissions mined it,
-- in how many it is suspicious, coverage and mean suspicion score (MSS). Like
-- correlation_summary, each figure is given over all submissions (scope 'all', scope_value
-- 'all') and per corpus, team and campaign (scope_value = that corpus, team or campaign).
--   submissions           submissions of the scope where f has C(f) >= mining_min_support
--                         (a row in suspicious_subtrees: where f can be suspicious)
--   submissions_in_scope  submissions of the scope that take part in mining (SPEC's denominator)
--   suspicious_in         submissions of the scope where f is suspicious
--   coverage_pct          100 * suspicious_in / submissions_in_scope (SPEC's coverage; the paper's
--                         tables use all submissions, whatever their language)
--   suspicious_share_pct  100 * suspicious_in / submissions (coverage among the submissions
--                         where f is frequent enough; useful for lemma subtrees of one language)
--   mean_suspicion        mean S(f) over the submissions where f is suspicious (NULL if none)
-- One row per scope, scope_value, view and subtree mined in at least one submission of the scope.
with

scoped_submissions as (
    select
        case
            when grouping(s.corpus) = 0 then 'corpus'
            when grouping(s.team) = 0 then 'team'
            when grouping(s.campaign) = 0 then 'campaign'
            else 'all'
        end as scope,
        case
            when grouping(s.corpus) = 0 then s.corpus
            when grouping(s.team) = 0 then s.team
            when grouping(s.campaign) = 0 then s.campaign
            else 'all'
        end as scope_value,
        count(*) as submissions_in_scope
    from (select distinct submission_id from {{ ref('int_mining_sentences') }}) m
    join {{ ref('stg_submissions') }} s using (submission_id)
    group by grouping sets ((), (s.corpus), (s.team), (s.campaign))
),

scoped_subtrees as (
    select
        case
            when grouping(corpus) = 0 then 'corpus'
            when grouping(team) = 0 then 'team'
            when grouping(campaign) = 0 then 'campaign'
            else 'all'
        end as scope,
        case
            when grouping(corpus) = 0 then corpus
            when grouping(team) = 0 then team
            when grouping(campaign) = 0 then campaign
            else 'all'
        end as scope_value,
        view,
        subtree,
        count(*) as submissions,
        count(*) filter (where is_suspicious) as suspicious_in,
        avg(suspicion) filter (where is_suspicious) as mean_suspicion,
        max(suspicion) filter (where is_suspicious) as max_suspicion
    from {{ ref('suspicious_subtrees') }}
    group by grouping sets (
        (view, subtree), (corpus, view, subtree), (team, view, subtree),
        (campaign, view, subtree)
    )
)

select
    t.scope,
    t.scope_value,
    t.view,
    t.subtree,
    t.submissions,
    s.submissions_in_scope,
    t.suspicious_in,
    100.0 * t.suspicious_in / s.submissions_in_scope as coverage_pct,
    100.0 * t.suspicious_in / t.submissions as suspicious_share_pct,
    t.mean_suspicion,
    t.max_suspicion
from scoped_subtrees t
join scoped_submissions s using (scope, scope_value)
