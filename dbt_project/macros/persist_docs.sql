{# Column and table comments (persist_docs, dbt_project.yml) are written when a model's table is
   created. An incremental run only deletes and inserts rows of a table that the last build created
   from the same docs (an incremental build runs only when no model file or yml changed:
   srlens/build.py base_state), and the comments stay with the table: writing them again cost each
   incremental mart four statements (docs/performance.md, "Adding one run"). A table the
   build creates in an incremental build (a mart dropped by hand) is commented: is_incremental() asks
   dbt's relation cache, filled before the model ran (tests/builds/test_incremental.py). #}
{% macro duckdb__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- if not is_incremental() -%}
        {%- do default__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- endif -%}
{%- endmacro %}
