{{ incremental_by_submission() }}
-- SPEC section 8: the FAIL/PASS split of each submission. Only sentences the run has (not
-- missing) with a non-NULL score take part. FAIL = score at or below the submission's
-- q-quantile of that score, by linear interpolation (DuckDB quantile_cont, numpy's default
-- 'linear'); sentences tied at the threshold are all FAIL. Every sentence_scores column is
-- "higher is better", so the low end is the failing end.
{%- set metric = var('mining_metric') %}
{%- set quantile = number_var('mining_quantile') %}
{%- if not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', metric | string) %}
    {{ exceptions.raise_compiler_error("mining_metric must be a column of sentence_scores, got '" ~ metric ~ "'") }}
{%- endif %}
{%- if execute %}
    {%- set columns = adapter.get_columns_in_relation(ref('sentence_scores')) | map(attribute='name')
                      | map('lower') | list %}
    {#- (no columns: sentence_scores is not built yet, e.g. under `dbt compile` on a new warehouse) #}
    {%- if columns and metric | lower not in columns %}
        {{ exceptions.raise_compiler_error("mining_metric '" ~ metric ~ "' is not a column of sentence_scores ("
                                           ~ columns | join(', ') ~ ")") }}
    {%- endif %}
{%- endif %}

with scored as (
    select submission_id, corpus, sent_idx, {{ metric }}::double as score
    from {{ ref('sentence_scores') }}
    where not is_missing and {{ metric }} is not null and {{ changed_submission() }}
),

thresholds as (
    select submission_id, quantile_cont(score, {{ quantile }}) as threshold
    from scored
    group by submission_id
)

select
    s.submission_id,
    s.corpus,
    s.sent_idx,
    s.score,
    t.threshold,
    s.score <= t.threshold as is_fail
from scored s
join thresholds t using (submission_id)
