{# Incremental refresh by scope (issue 18), beside incremental_by_corpus, for summaries whose rows
   aggregate the runs of one (scope, scope_value): 'all' (every run), a corpus, a team or a
   campaign. A build recomputes only the scopes of int_changed_scopes (those of a run loaded,
   reloaded or removed since the last successful build) and deletes their old rows first; every
   other scope has the same runs, so its rows are those a full build would give. #}

{# In a model: {{ incremental_by_scope() }} before the SQL. #}
{% macro incremental_by_scope() %}
    {{ config(materialized='incremental', incremental_strategy='append', on_schema_change='fail',
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
