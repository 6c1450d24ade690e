{#- The lists shared with the Python code, defined once in srlens/definitions.py and passed by
    srlens build as the var `definitions`. -#}

{% macro definitions(name) -%}
    {%- set value = var('definitions') -%}
    {%- if value is not mapping or name not in value -%}
        {{ exceptions.raise_compiler_error("var definitions lacks '" ~ name ~ "' (srlens/definitions.py)") }}
    {%- endif -%}
    {{ return(value[name]) }}
{%- endmacro %}

{#- The names as a VALUES list of one-column rows: ('dep'), ('pos'), ... -#}
{% macro values_of(names) -%}
    values {% for name in names %}({{ string_literal(name) }}){{ ', ' if not loop.last }}{% endfor %}
{%- endmacro %}

{#- The rule_id of a L'AMBRE rule from its defining columns (SPEC 9), written from the format of
    srlens/definitions.py (RULE_ID, and RULE_ID_ARGSTRUCT added for argstruct rules). -#}
{% macro lambre_rule_id() -%}
    ({{ _rule_id_sql(definitions('rule_id')) }}
     || case when kind = 'argstruct' then {{ _rule_id_sql(definitions('rule_id_argstruct')) }} else '' end)
{%- endmacro %}

{% macro _rule_id_sql(format) -%}
    {%- set columns = ['language', 'kind', 'deprel', 'dep_upos', 'head_upos', 'feature', 'side'] -%}
    {%- set parts = modules.re.split('\\{(\\w+)\\}', format) -%}
    {%- set sql = [] -%}
    {%- for part in parts -%}
        {%- if loop.index0 is odd -%}
            {%- if part not in columns -%}
                {{ exceptions.raise_compiler_error("rule_id format: unknown column '" ~ part ~ "'") }}
            {%- endif -%}
            {%- do sql.append(part) -%}
        {%- elif part -%}
            {%- do sql.append(string_literal(part) | trim) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ sql | join(' || ') }}
{%- endmacro %}
