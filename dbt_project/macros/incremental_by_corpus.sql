{# Incremental refresh by corpus, beside incremental_by_submission. Models whose rows
   belong to one corpus and depend only on the runs of that corpus (the comparisons of its runs, its
   ensemble) are dbt incremental tables: a build recomputes only the corpora of
   int_changed_corpora (a run loaded, reloaded or removed since the last successful build) and
   deletes their old rows first. Everything else that changes the results makes `srlens build` run a
   full refresh, as for incremental_by_submission.

   tuning=true is for the ensemble models: the ensemble of a corpus may also learn from its tuning
   corpus (var ensemble_tuning_corpus), so a corpus is recomputed when a run of its tuning corpus
   changed too. #}

{# In a model: {{ incremental_by_corpus() }} before the SQL. #}
{% macro incremental_by_corpus(tuning=false) %}
    {{ config(materialized='incremental', incremental_strategy='append',
              meta={'refreshed_by': 'corpus', 'tuning': tuning},
              pre_hook="{{ delete_changed_corpora(" ~ tuning ~ ") }}") }}
{% endmacro %}

{% macro delete_changed_corpora(tuning) %}
    {% if is_incremental() %}
    delete from {{ this }} where corpus in ({{ changed_corpora(ref('int_changed_corpora'), tuning) }})
    {% endif %}
{% endmacro %}

{# A condition keeping the rows of the corpora this build computes: all of them on a full build,
   the changed ones otherwise. The ref is taken unconditionally so that dbt orders
   int_changed_corpora first. #}
{% macro changed_corpus(column='corpus', tuning=false) -%}
    {%- set changed = ref('int_changed_corpora') -%}
    {%- if is_incremental() -%}
        {{ column }} in ({{ changed_corpora(changed, tuning) }})
    {%- else -%}
        true
    {%- endif -%}
{%- endmacro %}

{# The corpora to recompute (a query): those in `changed` (the relation of int_changed_corpora) and,
   with tuning, the target corpora whose tuning corpus is one of them. #}
{% macro changed_corpora(changed, tuning) -%}
    select corpus from {{ changed }}
    {%- set pairs = mapping_var('ensemble_tuning_corpus') if tuning else [] %}
    {%- if pairs %}
    union
    select target from (values
        {%- for target, tuning_corpus in pairs %}
        ({{ string_literal(target) }}, {{ string_literal(tuning_corpus) }}){{ ',' if not loop.last }}
        {%- endfor %}
    ) as tuning_pairs (target, tuning_corpus)
    where tuning_corpus in (select corpus from {{ changed }})
    {%- endif %}
{%- endmacro %}
