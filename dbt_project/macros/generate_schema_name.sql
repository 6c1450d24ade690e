{# Marts land in main (what analysts and BI tools see first); other layers in
   their own schema, named as-is rather than dbt's "main_staging". #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name | trim if custom_schema_name is not none else target.schema }}
{%- endmacro %}
