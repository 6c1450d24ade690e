{# Incremental refresh by scope, beside incremental_by_corpus, for summaries whose rows
   aggregate the runs of one (scope, scope_value): 'all' (every run), a corpus, a team or a
   campaign. A build recomputes only the scopes of int_changed_scopes (those of a run loaded,
   reloaded or removed since the last successful build) and deletes their old rows first; every
   other scope has the same runs, so its rows are those a full build would give. #}

{# In a model: {{ incremental_by_scope() }} before the SQL. #}
{% macro incremental_by_scope() %}
    {{ config(materialized='incremental', incremental_strategy='append',
              meta={'refreshed_by': 'scope'}, pre_hook="{{ delete_changed_scopes() }}") }}
{% endmacro %}

{% macro delete_changed_scopes() %}
    {% if is_incremental() %}
    delete from {{ this }} where {{ changed_scopes_condition(ref('int_changed_scopes')) }}
    {% endif %}
{% endmacro %}

{# A condition keeping the rows of scope `scope` (a literal: 'all', 'corpus', 'team', 'campaign')
   whose scope_value, the expression `value`, this build computes: all of them on a full build, the
   changed ones otherwise. The ref is taken unconditionally so that dbt orders int_changed_scopes
   first. #}
{% macro changed_scope(scope, value) -%}
    {%- set changed = ref('int_changed_scopes') -%}
    {%- if is_incremental() -%}
        {{ changed_scopes_condition(changed, string_literal(scope), value) }}
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{# The rows of the changed scopes, given the relation of int_changed_scopes (and the expressions of a
   row's scope and scope_value). #}
{% macro changed_scopes_condition(changed, scope='scope', value='scope_value') -%}
    ({{ scope }}, {{ value }}) in (select scope, scope_value from {{ changed }})
{%- endmacro %}

{# Finer still, for suspicious_subtrees_summary: when every changed run was added since the
   last build (none reloaded or removed), each changed scope's runs only grew. A subtree that none of
   the added runs mined then keeps its aggregates (submissions, suspicious_in, mean and max
   suspicion, suspicious_share_pct): only submissions_in_scope and coverage_pct move, and they are
   updated in place from the same expressions. The subtrees the added runs mined are deleted and
   aggregated again over every run of the scope. A build with a reloaded or removed run deletes and
   recomputes the whole changed scopes, as above. Whether the runs were only added is asked when the
   node runs (so the model's SQL can take the cheaper form); false when dbt only parses. #}
{% macro only_runs_added() %}
    {#- the refs taken unconditionally, so that dbt sees the dependencies when it parses -#}
    {%- set changed, built = ref('int_changed_submissions'), ref('stg_built_submissions') -%}
    {%- if not (execute and is_incremental()) -%}
        {%- do return(false) -%}
    {%- endif -%}
    {%- set changed_before = run_query(
        'select count(*) from ' ~ changed ~ ' semi join ' ~ built ~ ' using (submission_id)') -%}
    {%- do return(changed_before.columns[0].values()[0] == 0) -%}
{% endmacro %}

{# The (view, subtree) pairs of the added runs, with their corpus, team and campaign. #}
{% macro added_subtrees() -%}
    select distinct view, subtree, corpus, team, campaign
    from {{ ref('suspicious_subtrees') }}
    where submission_id in (select submission_id from {{ ref('int_changed_submissions') }})
{%- endmacro %}

{# Keeps the rows of suspicious_subtrees (aliased `t`) whose subtree an added run of the same scope value
   (the expression `value` on `t`) mined; the model's CTE added_subtrees holds them. #}
{% macro semi_join_added_subtrees(value) -%}
    semi join (
        select distinct {{ value }} as added_value, view as added_view, subtree as added_subtree
        from added_subtrees
    ) as a
        on t.view = a.added_view and t.subtree = a.added_subtree and {{ value }} = a.added_value
{%- endmacro %}

{# A condition on rows of suspicious_subtrees_summary (or of suspicious_subtrees, aliased `t`, with the
   scope's value expression): the subtree was mined by an added run of the row's scope. #}
{% macro mined_by_added_run(scope_values) -%}
    (
    {%- for scope, value in scope_values.items() %}
        (scope = {{ string_literal(scope) }} and (scope_value, view, subtree) in (
            select distinct {{ value }}, view, subtree from added_subtrees))
        {{- ' or' if not loop.last }}
    {%- endfor %}
    )
{%- endmacro %}

{# The scopes of suspicious_subtrees_summary: each scope's value as an expression on a run's row. #}
{% macro mining_scopes() -%}
    {{ return({'all': "'all'", 'corpus': 'corpus', 'team': 'team', 'campaign': 'campaign'}) }}
{%- endmacro %}

{# The runs of each computed scope that take part in mining (SPEC's denominator of coverage). #}
{% macro mining_scope_sizes() -%}
    {%- set scopes = mining_scopes() -%}
    with mining_submissions as (
        select s.submission_id, s.corpus, s.team, s.campaign
        from (select distinct submission_id from {{ ref('int_mining_sentences') }}) m
        join {{ ref('stg_submissions') }} s using (submission_id)
    )
    {%- for scope, value in scopes.items() %}
    select {{ string_literal(scope) }} as scope, {{ value }} as scope_value, count(*) as submissions_in_scope
    from mining_submissions
    where {{ changed_scope(scope, value) }}
    group by scope_value
    {{- '\n    union all' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{% macro refresh_changed_subtrees() %}
    {% if is_incremental() and only_runs_added() %}
    -- only runs were added: the added runs' subtrees go (the model aggregates them again)...
    with added_subtrees as ({{ added_subtrees() }})
    delete from {{ this }}
    where {{ changed_scopes_condition(ref('int_changed_scopes')) }}
        and {{ mined_by_added_run(mining_scopes()) }};
    -- ...and the other subtrees of the changed scopes keep their aggregates over more runs
    update {{ this }} as t
    set submissions_in_scope = n.submissions_in_scope,
        coverage_pct = 100.0 * t.suspicious_in / n.submissions_in_scope
    from ({{ mining_scope_sizes() }}) as n
    where t.scope = n.scope and t.scope_value = n.scope_value and t.submissions_in_scope != n.submissions_in_scope
    {% else %}
    {{ delete_changed_scopes() }}
    {% endif %}
{% endmacro %}
