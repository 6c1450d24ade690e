{#- The reproducibility signature of a run (srlens/signature.py): the build's signature, var
    `signature`, with its proc field replaced by the processor of the run's own sentences. -#}
{% macro submission_signature(processor_column) -%}
    {%- set fields = var('signature').split('|') -%}
    {{ string_literal(fields[0] ~ '|proc:') }} || coalesce({{ processor_column }}, {{ string_literal(var('processor')) }})
        || {{ string_literal('|' ~ (fields[2:] | join('|'))) }}
{%- endmacro %}
