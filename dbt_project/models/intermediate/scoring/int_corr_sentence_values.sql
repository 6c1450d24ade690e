{{ incremental_by_submission() }}
-- SPEC section 10: the sentence-level variables of the correlation study, one row per submission,
-- sentence and variable with a value (long form; NULLs are not rows, so pairs drop them pairwise).
-- The list of variables, in the order metric_a/metric_b follow (metric_a comes first in it), is
-- srlens/definitions.py CORRELATION_SCORES + COMPLEXITY_METRICS (var definitions).
-- Score columns are taken from sentence_scores when it has them.
{%- set score_columns = definitions('correlation_scores') %}
{%- set complexity_columns = definitions('complexity_metrics') %}
{%- set all_variables = score_columns + complexity_columns %}
{%- if execute %}
    {%- set present = adapter.get_columns_in_relation(ref('sentence_scores')) | map(attribute='name')
                      | map('lower') | list %}
    {%- set score_columns = score_columns | select('in', present) | list %}
{%- endif %}

with sentences as (
    select
        s.submission_id,
        s.corpus,
        s.team,
        s.run,
        s.campaign,
        s.sent_idx,
        {%- for column in score_columns %}
            s.{{ column }}::double as {{ column }},
        {%- endfor %}
    {%- for column in complexity_columns %}
        c.{{ column }}::double as {{ column }}{{ ',' if not loop.last }}
    {%- endfor %}
    from {{ ref('sentence_scores') }} s
    -- (left: a run of a reference-free corpus has no reference tree, only its scores)
    left join {{ ref('sentence_complexity') }} c using (corpus, sent_idx)
    where
        {{ changed_submission('s.submission_id') }}
        and not s.is_missing  -- a sentence the run lacks is not part of its sample
),

variable_order (variable, ordinal) as (
    values {% for variable in all_variables %}('{{ variable }}', {{ loop.index }}){{ ', ' if not loop.last }}{% endfor %}
)

select u.submission_id, u.corpus, u.team, u.run, u.campaign, u.sent_idx, u.variable, o.ordinal, u.value
from (
    unpivot sentences
    on {{ (score_columns + complexity_columns) | join(', ') }}
    into name variable value value
) u
join variable_order o using (variable)
