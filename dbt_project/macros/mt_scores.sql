{# sacrebleu's BLEU and chrF (SPEC 13): their per-sentence statistics (srlens/definitions.py,
   udfs/mt_scores.py) and the scores computed from them. #}

{% macro sacrebleu_bleu_fields() %}
    {{ return(definitions('sacrebleu_bleu_stats')) }}
{% endmacro %}

{% macro chrf_fields() %}
    {{ return(definitions('chrf_stats')) }}
{% endmacro %}

{# The fields as a comma-separated list of expressions: `stat` writes one from its name, '{}'
   standing for the name (e.g. 'st.{}', 'sum({})'). #}
{% macro mt_stat_list(fields, stat='{}') -%}
    {%- set out = [] -%}
    {%- for field in fields %}{% do out.append(stat | replace('{}', field)) %}{% endfor -%}
    {{ out | join(', ') }}
{%- endmacro %}

{# sacrebleu's signature string of a score ('corpus_bleu', 'sentence_bleu', 'chrf'), as srlens build
   passes them (var sacrebleu_signatures, srlens/signature.py). #}
{% macro sacrebleu_signature(score) -%}
    {{ string_literal(var('sacrebleu_signatures').get(score, 'unknown')) }}
{%- endmacro %}
