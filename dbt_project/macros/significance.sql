{# Significance (SPEC section 12): the per-sentence statistics every metric is computed from, and
   the metrics computed from summed statistics. Shared by the int_*resample* models and
   pairwise_significance so that a sample, an observed list and a swapped list all use the same
   formulas. #}

{# The sentence scores whose mean is a metric ('<score>_mean', as in submission_scores). #}
{% macro significance_mean_scores() %}
    {{ return(definitions('mean_scores')) }}  {#- srlens/definitions.py MEAN_SCORES #}
{% endmacro %}

{# The additive statistics of one sentence: BLEU's ten integers, DEA's matched and edges, and for
   each mean score its value (0 when NULL) and whether it is defined (1/0). #}
{% macro significance_stat_columns() %}
    {% set columns = ['hyp_len', 'ref_len', 'm1', 'm2', 'm3', 'm4', 't1', 't2', 't3', 't4',
                      'dea_matched', 'dea_edges'] %}
    {% for score in significance_mean_scores() %}
        {% do columns.extend([score ~ '_sum', score ~ '_n']) %}
    {% endfor %}
    {{ return(columns) }}
{% endmacro %}

{# `sum(weight * column) as column` for every statistic. #}
{% macro significance_weighted_sums(weight) %}
    {%- for column in significance_stat_columns() %}
    sum({{ weight }} * {{ column }}) as {{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
{% endmacro %}

{# The metric names, in the order of the columns significance_metric_columns writes. #}
{% macro significance_metrics() %}
    {% set metrics = ['corpus_bleu', 'dea'] %}
    {% for score in significance_mean_scores() %}{% do metrics.append(score ~ '_mean') %}{% endfor %}
    {{ return(metrics) }}
{% endmacro %}

{# One column per metric (`<prefix><metric>`) from summed statistics; `stat` writes the expression of
   a summed statistic from its name, '{}' standing for the name (e.g. 's.{}', 'a.{} - b.{}'). The
   statistics are DOUBLE holding whole numbers (exact below 2^53); BLEU's are cast back to integers. #}
{% macro significance_metric_columns(stat, prefix='') %}
    {%- set bleu = [] %}
    {%- for c in ['hyp_len', 'ref_len', 'm1', 'm2', 'm3', 'm4', 't1', 't2', 't3', 't4'] %}
        {%- do bleu.append('(' ~ stat | replace('{}', c) ~ ')::bigint') %}
    {%- endfor %}
    srlens_bleu_from_stats({{ bleu | join(', ') }}) as {{ prefix }}corpus_bleu,
    ({{ stat | replace('{}', 'dea_matched') }}) / nullif({{ stat | replace('{}', 'dea_edges') }}, 0) as {{ prefix }}dea,
    {%- for score in significance_mean_scores() %}
    ({{ stat | replace('{}', score ~ '_sum') }}) / nullif({{ stat | replace('{}', score ~ '_n') }}, 0)
        as {{ prefix }}{{ score }}_mean{{ ',' if not loop.last }}
    {%- endfor %}
{% endmacro %}
