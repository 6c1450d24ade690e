{# Column and table comments (persist_docs, dbt_project.yml) are written when a model's table is
   created. An incremental run only deletes and inserts rows of a table that the last build created
   from the same docs (an incremental build runs only when no model file or yml changed:
   srlens/build.py base_state), and the comments stay with the table: writing them again cost each
   incremental mart four statements (docs/performance.md, "Adding one run"). A table the
   build creates in an incremental build (a mart dropped by hand) is commented: is_incremental() asks
   dbt's relation cache, filled before the model ran (tests/builds/test_incremental.py). #}
{% macro duckdb__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- if is_incremental() -%}
    {%- elif model.contract.enforced -%}
        {%- do run_query(contracted_docs_sql(relation, model, for_relation, for_columns)) -%}
    {%- else -%}
        {%- do default__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- endif -%}
{%- endmacro %}

{# The comments of a contracted model in one statement. The contract (checked when the table was
   created) says which columns the table has: dbt's own macros ask DuckDB twice (DESCRIBE) and send the
   table's and the columns' comments as two statements. #}
{% macro contracted_docs_sql(relation, model, for_relation, for_columns) -%}
    {%- if for_relation and config.persist_relation_docs() and model.description -%}
        {{ duckdb__alter_relation_comment(relation, model.description) }}
    {%- endif %}
    {% if for_columns and config.persist_column_docs() -%}
        {%- for name, column in model.columns.items() -%}
    comment on column {{ relation }}.{{ adapter.quote(name) if column.quote else name }} is {{ duckdb_escape_comment(column.description) }};
        {% endfor -%}
    {%- endif -%}
{%- endmacro %}
