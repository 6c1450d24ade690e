{# Incremental refresh by submission. Models whose rows belong to one submission
   are dbt incremental tables: a build recomputes only the submissions in
   int_changed_submissions (new, reloaded or removed since the last successful build) and
   deletes their old rows first. Anything else that changes the results (model code, vars,
   treebanks, human judgments, manual rules) makes `srlens build` run a full refresh, so the
   rows of an unchanged submission are always the rows a full build would give. #}

{# In a model: {{ incremental_by_submission() }} before the SQL. #}
{% macro incremental_by_submission() %}
    {{ config(materialized='incremental', incremental_strategy='append',
              meta={'refreshed_by': 'submission_id'}, pre_hook="{{ delete_changed_submissions() }}") }}
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


{# Data tests that cost what they guard. In an incremental build, a test of an incremental
   model checks the rows of the changed submissions (incremental_by_submission), corpora
   (incremental_by_corpus) or scopes (incremental_by_scope) only: the other rows are the rows the last
   build tested, kept as they were. Only tests whose verdict is the union of the submissions'
   (corpora's, scopes') verdicts are restricted: row by row (not_null, accepted_values,
   expression_is_true) or a key that holds the submission_id (the corpus, the scope). A full build
   (srlens passes --full-refresh) tests every row. This overrides dbt's own macro, which applies a
   test's `where` config (kept, with the same meaning). #}
{% macro get_where_subquery(relation) -%}
    {%- set conditions = [config.get('where')] if config.get('where') else [] -%}
    {%- if execute and not flags.FULL_REFRESH -%}
        {%- set changed_rows = changed_rows_tested(relation) -%}
        {%- if changed_rows -%}{%- do conditions.append(changed_rows) -%}{%- endif -%}
    {%- endif -%}
    {%- if conditions -%}
        {%- do return('(select * from ' ~ relation ~ ' where ' ~ conditions | join(' and ') ~ ') dbt_subquery') -%}
    {%- endif -%}
    {%- do return(relation) -%}
{%- endmacro %}

{# The condition on the tested model's rows that keeps the changed ones, or '' when this test reads
   every row. #}
{% macro changed_rows_tested(relation) -%}
    {%- set tested = graph.nodes.values() | selectattr('resource_type', 'equalto', 'model')
        | selectattr('alias', 'equalto', relation.identifier) | selectattr('schema', 'equalto', relation.schema)
        | list -%}
    {%- set meta = tested[0].config.meta if tested and tested[0].config.materialized == 'incremental' else {} -%}
    {%- set column = meta.get('refreshed_by') -%}
    {%- set test = model.test_metadata or {} -%}
    {%- set row_by_row = test.name in ('not_null', 'accepted_values', 'expression_is_true') -%}
    {%- set key = test.kwargs.get('columns', []) -%}
    {%- set keyed = test.name == 'unique_key' and column in key and (column != 'scope' or 'scope_value' in key) -%}
    {%- if not column or not (row_by_row or keyed) -%}
        {%- do return('') -%}
    {%- elif column == 'corpus' -%}
        {%- do return('corpus in (' ~ changed_corpora(model_relation('int_changed_corpora'), meta.get('tuning')) ~ ')') -%}
    {%- elif column == 'scope' -%}
        {%- do return(changed_scopes_condition(model_relation('int_changed_scopes'))) -%}
    {%- endif -%}
    {%- do return('submission_id in (select submission_id from ' ~ model_relation('int_changed_submissions') ~ ')') -%}
{%- endmacro %}

{# A model's relation, from dbt's graph: a test's SQL names it without a ref(). #}
{% macro model_relation(name) -%}
    {%- set node = graph.nodes['model.srlens.' ~ name] -%}
    {%- do return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) -%}
{%- endmacro %}
