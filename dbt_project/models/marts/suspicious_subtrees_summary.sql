{{ config(materialized='incremental', incremental_strategy='append', on_schema_change='fail',
          meta={'refreshed_by': 'scope'}, pre_hook="{{ refresh_changed_subtrees() }}") }}
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
--   max_suspicion         the largest of those S(f)
-- One row per scope, scope_value, view and subtree mined in at least one submission of the scope.
-- An incremental build computes the scopes of the changed runs only (macros/incremental_by_scope.sql):
-- each scope below is its own aggregate, restricted to those scopes; when runs were only added,
-- to the subtrees the added runs mined (the pre-hook updates the scopes' other rows in place).
{%- set scopes = mining_scopes() %}
{%- set only_added = only_runs_added() %}

with

{% if only_added -%}
    added_subtrees as (
        {{ added_subtrees() }}
    ),
{% endif %}

scoped_submissions as (
    {{ mining_scope_sizes() }}
),

scoped_subtrees as (
    {%- for scope, value in scopes.items() %}
        select
            {{ string_literal(scope) }} as scope,
            {{ value }} as scope_value,
            t.view,
            t.subtree,
            count(*) as submissions,
            count(*) filter (where t.is_suspicious) as suspicious_in,
            avg(t.suspicion) filter (where t.is_suspicious) as mean_suspicion,
            max(t.suspicion) filter (where t.is_suspicious) as max_suspicion
        from {{ ref('suspicious_subtrees') }} as t
        {{ semi_join_added_subtrees(value) if only_added }}
        where {{ changed_scope(scope, value) }}
        group by scope_value, t.view, t.subtree
        {{- '\n    union all' if not loop.last }}
    {%- endfor %}
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
