{# srlens's incremental materialization, in place of dbt-duckdb's for this project. Its models delete
   the rows of the changed scope in a pre-hook (incremental_by_submission, incremental_by_corpus,
   incremental_by_scope); an incremental run then inserts the model's rows by name, in the same
   transaction. dbt-duckdb's would create a temporary table of the rows, compare its columns with the
   target's (DESCRIBEs), insert from it and drop it: statements dbt renders, logs and runs per model
   for nothing, since a model's columns change only with its code and changed code makes srlens build
   run a full refresh (docs/performance.md, "Adding one run").

   The first run, a full refresh or a missing table create the table as the table materialization does
   (an enforced contract checked and declared, persist_docs). An incremental run keeps a schema check:
   a contracted model's query must still give its contract's columns and types; an uncontracted one
   with on_schema_change other than 'ignore' must give the table's columns. #}
{% materialization incremental, adapter='duckdb', supported_languages=['sql'] %}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set full_refresh_mode = existing_relation is none or should_full_refresh() or existing_relation.is_view -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
    {%- set grant_config = config.get('grants') -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    -- `BEGIN` happens here, then the delete of the changed scope (a pre-hook)
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- if full_refresh_mode -%}
        {%- if existing_relation is not none -%}
            {%- do adapter.drop_relation(existing_relation) -%}
        {%- endif -%}
        {%- set build_sql = create_table_as(False, target_relation, compiled_code) -%}
    {%- else -%}
        {%- if config.get('contract').enforced -%}
            {%- do get_assert_columns_equivalent(compiled_code) -%}
        {%- elif on_schema_change != 'ignore' -%}
            {%- do srlens_assert_same_columns(compiled_code, existing_relation) -%}
        {%- endif -%}
        {%- set build_sql -%}
            insert into {{ target_relation }} by name
            select * from (
                {{ compiled_code }}
            ) as model_subq
        {%- endset -%}
    {%- endif -%}

    {% call statement('main') -%}
        {{ build_sql }}
    {%- endcall %}

    {%- if full_refresh_mode -%}
        {%- do create_indexes(target_relation) -%}
    {%- endif -%}
    {%- do apply_grants(target_relation, grant_config, should_revoke=should_revoke(existing_relation, full_refresh_mode)) -%}
    {%- do persist_docs(target_relation, model) -%}

    {{ run_hooks(post_hooks, inside_transaction=True) }}
    -- `COMMIT` happens here
    {%- do adapter.commit() -%}
    {{ run_hooks(post_hooks, inside_transaction=False) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{# Fails the model when its query's column names differ from the table's (on_schema_change 'fail' or
   any other value than 'ignore': this materialization does not alter tables). #}
{% macro srlens_assert_same_columns(sql, relation) %}
    {%- set query_columns = get_column_schema_from_query(sql) | map(attribute='name') | list -%}
    {%- set table_columns = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
    {%- if query_columns | sort != table_columns | sort -%}
        {%- do exceptions.raise_compiler_error(
            'The columns of ' ~ relation ~ ' changed: ' ~ table_columns | join(', ') ~ ' in the table, '
            ~ query_columns | join(', ') ~ ' in its query. Run srlens build --full-refresh.') -%}
    {%- endif -%}
{% endmacro %}
