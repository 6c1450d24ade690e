{# Incremental refresh by submission (issue 8). Models whose rows belong to one submission
   are dbt incremental tables: a build recomputes only the submissions in
   int_changed_submissions (new, reloaded or removed since the last successful build) and
   deletes their old rows first. Anything else that changes the results (model code, vars,
   treebanks, human judgments, manual rules) makes `srlens build` run a full refresh, so the
   rows of an unchanged submission are always the rows a full build would give. #}

{# In a model: {{ incremental_by_submission() }} before the SQL. #}
{% macro incremental_by_submission() %}
    {{ config(materialized='incremental', incremental_strategy='append', on_schema_change='fail',
              pre_hook="{{ delete_changed_submissions() }}") }}
{% endmacro %}

{% macro delete_changed_submissions() %}
    {% if is_incremental() %}
    delete from {{ this }} where submission_id in (select submission_id from {{ ref('int_changed_submissions') }})
    {% endif %}
{% endmacro %}

{# A condition keeping the rows of the submissions this build computes: all of them on a full
   build, the changed ones otherwise. The ref is taken unconditionally so that dbt orders
   int_changed_submissions first. #}
{% macro changed_submission(column='submission_id') -%}
    {%- set changed = ref('int_changed_submissions') -%}
    {%- if is_incremental() -%}
        {{ column }} in (select submission_id from {{ changed }})
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}
