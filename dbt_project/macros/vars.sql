{#- The build's vars as SQL literals. srlens/build_vars.py declares every var and checks each
    --var before dbt starts; these macros check the type once more, so that a value only ever
    reaches the SQL as a number or as a quoted string, never as SQL text. -#}

{% macro number_var(name) -%}
    {%- set value = var(name) -%}
    {%- if value is boolean or value is not number -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ " must be a number, got '" ~ value ~ "'") }}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{% macro string_literal(value) -%}
    {%- if value is not string -%}
        {{ exceptions.raise_compiler_error("expected a text value, got '" ~ value ~ "'") }}
    {%- endif -%}
    '{{ value | replace("'", "''") }}'
{%- endmacro %}

{% macro mapping_var(name) -%}
    {#- A var that maps names to names ({"en": "en_ewt_train"}), as a list of (key, value) pairs. -#}
    {%- set value = var(name) -%}
    {%- if value is not mapping -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ " must be a JSON object of names, got '" ~ value ~ "'") }}
    {%- endif -%}
    {{ return(value.items() | list) }}
{%- endmacro %}
