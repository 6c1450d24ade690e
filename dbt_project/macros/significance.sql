{# Significance (SPEC section 12): the per-sentence statistics every metric is computed from, and
   the metrics computed from summed statistics. Shared by the int_*resample* models and
   pairwise_significance so that a sample, an observed list and a swapped list all use the same
   formulas. #}

{# The sentence scores whose mean is a metric ('<score>_mean', as in submission_scores). #}
{% macro significance_mean_scores() %}
    {{ return(definitions('mean_scores')) }}  {#- srlens/definitions.py MEAN_SCORES #}
{% endmacro %}

{# The additive statistics of one sentence: BLEU's ten integers, DEA's matched and edges, for
   each mean score its value (0 when NULL) and whether it is defined (1/0), then sacrebleu's BLEU
   and chrF statistics (macros/mt_scores.sql; SPEC 13). #}
{% macro significance_stat_columns() %}
    {% set columns = ['hyp_len', 'ref_len', 'm1', 'm2', 'm3', 'm4', 't1', 't2', 't3', 't4',
                      'dea_matched', 'dea_edges'] %}
    {% for score in significance_mean_scores() %}
        {% do columns.extend([score ~ '_sum', score ~ '_n']) %}
    {% endfor %}
    {% do columns.extend(sacrebleu_bleu_fields() + chrf_fields()) %}
    {{ return(columns) }}
{% endmacro %}

{# The statistics of a list of sentences as one DOUBLE[] per sentence, in the order of `order_by`
   (an aggregate: `alias` is the sentences' table alias). #}
{% macro significance_statistics_list(alias, order_by) %}
    {%- set columns = [] %}
    {%- for column in significance_stat_columns() %}{% do columns.append(alias ~ '.' ~ column) %}{% endfor %}
    list([{{ columns | join(', ') }}] order by {{ order_by }})
{%- endmacro %}

{# The resampled sums take the lists in parts (significance_resampled_sums): how many, and the part
   of a list from the expressions of its keys. #}
{% macro significance_list_parts() %}
    {{ return(16) }}
{% endmacro %}

{% macro significance_list_part(keys) -%}
    hash({{ keys | join(', ') }}) % {{ significance_list_parts() }}
{%- endmacro %}

{# The resampled sums of lists of sentences (udfs/resample.py): one row per list (its `keys`) and
   kind (observed, bootstrap, ar) and sample, one column per statistic. Continues a WITH whose CTE
   `lists` holds `keys`, `statistics` (significance_statistics_list) and `part`
   (significance_list_part, a key of its group by): `with lists as not materialized (...), {{
   significance_resampled_sums(keys) }}`. #}
{% macro significance_resampled_sums(keys) %}
    {%- set samples = number_var('bootstrap_samples') %}
    {%- set trials = number_var('ar_samples') %}
    {%- set seed = number_var('bootstrap_seed') %}
    {%- for name, value in [('bootstrap_samples', samples), ('ar_samples', trials), ('bootstrap_seed', seed)] %}
        {%- if not modules.re.fullmatch('[0-9]+', value | string) or (name != 'bootstrap_seed' and value | int < 1) %}
            {{ exceptions.raise_compiler_error(name ~ " must be a whole number" ~ (" >= 1" if name != 'bootstrap_seed' else "")
                                               ~ ", got '" ~ value ~ "'") }}
        {%- endif %}
    {%- endfor %}
    {#- A chunk of rows (up to 2,048) goes through DuckDB whole, and a list of 2,000 sentences is
        0.5 MB of statistics in and 0.5 MB of sums out: the lists of a 10x campaign's 1,700 runs came
        in chunks of 850 rows, beyond a 3 GB limit. Aggregated and resampled one part at a time (the
        filter on the group key `part` goes below the aggregate), a chunk holds a sixteenth of them.
        materialized: the UDF runs once per list, not once per field read from its result. #}
    resampled as materialized (
        {%- for part in range(significance_list_parts()) %}
        select {{ keys | join(', ') }}, srlens_resample_sums(statistics, {{ samples }}, {{ trials }}, {{ seed }}) as r
        from lists
        where part = {{ part }}
        {{ 'union all' if not loop.last }}
        {%- endfor %}
    ),

    resampled_rows as (
        select {{ keys | join(', ') }}, unnest(r.kind) as kind, unnest(r.sample) as sample, unnest(r.sums) as sums
        from resampled
    )

    select {{ keys | join(', ') }}, kind, sample,
        {%- for column in significance_stat_columns() %}
        sums[{{ loop.index }}] as {{ column }}{{ ',' if not loop.last }}
        {%- endfor %}
    from resampled_rows
{%- endmacro %}

{# The metric names, in the order of the columns significance_metric_columns writes. #}
{% macro significance_metrics() %}
    {% set metrics = ['corpus_bleu', 'dea'] %}
    {% for score in significance_mean_scores() %}{% do metrics.append(score ~ '_mean') %}{% endfor %}
    {% do metrics.extend(['sacrebleu_bleu', 'chrf']) %}
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
        as {{ prefix }}{{ score }}_mean,
    {%- endfor %}
    srlens_sacrebleu_corpus_bleu({{ mt_stat_list(sacrebleu_bleu_fields(), '(' ~ stat ~ ')::bigint') }})
        as {{ prefix }}sacrebleu_bleu,
    srlens_chrf_from_stats({{ mt_stat_list(chrf_fields(), '(' ~ stat ~ ')::bigint') }}) as {{ prefix }}chrf
{% endmacro %}
