-- The scopes of suspicious_subtrees_summary an incremental build recomputes
-- (macros/incremental_by_scope.sql): 'all', and the corpus, team and campaign of each changed
-- submission (int_changed_submissions), those it has now and those it had at the last build.
with changed as (
    select s.corpus, s.team, s.campaign
    from {{ ref('stg_submissions') }} s
    semi join {{ ref('int_changed_submissions') }} c using (submission_id)
    union all
    select b.corpus, b.team, b.campaign
    from {{ ref('stg_built_submissions') }} b
    semi join {{ ref('int_changed_submissions') }} c using (submission_id)
)

select 'all' as scope, 'all' as scope_value from changed
union
select 'corpus', corpus from changed
union
select 'team', team from changed
union
select 'campaign', campaign from changed
