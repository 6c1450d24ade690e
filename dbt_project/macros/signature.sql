{#- The reproducibility signature of a run (srlens/signature.py): the build's signature, var
    `signature`, with its proc field replaced by the processor of the run's own sentences. -#}
{% macro submission_signature(processor_column) -%}
    {#- without the build's ref field (its text references' parsers): corpus_stats says which corpus's
        trees they parsed -#}
    {%- set fields = [] -%}
    {%- for field in var('signature').split('|') if not field.startswith('ref:') -%}
        {%- do fields.append(field) -%}
    {%- endfor -%}
    {{ string_literal(fields[0] ~ '|proc:') }} || coalesce({{ processor_column }}, {{ string_literal(var('processor')) }})
        || {{ string_literal('|' ~ (fields[2:] | join('|'))) }}
{%- endmacro %}
