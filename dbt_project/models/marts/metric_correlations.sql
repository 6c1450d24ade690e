{{ incremental_by_submission() }}
-- SPEC section 10: per submission, Spearman rho and p (scipy's, udfs/stats.py) for every pair of
-- sentence-level variables, pairs with a missing value dropped; Holm-Bonferroni across the pairs
-- of the submission that have a p-value. A pair is listed when both variables have at least one
-- value in the submission (so no fluency/adequacy pairs without human judgments); rho and p are
-- NULL when n < 3 or a variable is constant over the pair's sentences (then the pair is not
-- one of the Holm family, holm_tests).
{%- set alpha = number_var('correlation_alpha') %}

{%- set variables = definitions('correlation_scores') + definitions('complexity_metrics') %}

with vals as (
    select submission_id, sent_idx, ordinal, value
    from {{ ref('int_corr_sentence_values') }}
    where {{ changed_submission() }}
),

-- every sentence of the run that has any value, in order, one column per variable (its ordinal in
-- int_corr_sentence_values, the order of `variables`; it has one value or none): NULL where it has no value
sentence_rows as (
    select
        submission_id,
        sent_idx,
    {%- for variable in variables %}
        max(value) filter (where ordinal = {{ loop.index }}) as v{{ loop.index }}{{ ',' if not loop.last }}
    {%- endfor %}
    from vals
    group by submission_id, sent_idx
),

run_lists as (
    select
        submission_id,
    {%- for variable in variables %}
        list(v{{ loop.index }} order by sent_idx) as v{{ loop.index }},
        count(v{{ loop.index }}) as n{{ loop.index }}{{ ',' if not loop.last }}
    {%- endfor %}
    from sentence_rows
    group by submission_id
),

-- one list per variable with a value in the run, over all of the run's sentences in order
variable_lists as (
    {%- for variable in variables %}
        select submission_id, {{ string_literal(variable) }} as variable, {{ loop.index }} as ordinal, v{{ loop.index }} as vs
        from run_lists
        where n{{ loop.index }} > 0
        {{ 'union all' if not loop.last }}
    {%- endfor %}
),

-- srlens_spearman_pairs: for every pair a < b of a run's lists (in ordinal order), rho and p on
-- the sentences where neither is NULL; one call per run, so each list is ranked once
run_samples as (
    select
        submission_id,
        list(variable order by ordinal) as variables,
        list(ordinal order by ordinal) as ordinals,
        list(vs order by ordinal) as samples
    from variable_lists
    group by submission_id
),

pair_results as (
    select submission_id, variables, ordinals, unnest(srlens_spearman_pairs(samples)) as t
    from run_samples
),

tests as (
    select
        p.submission_id, s.corpus, s.team, s.run, s.campaign,
        p.variables[p.t.a] as metric_a, p.variables[p.t.b] as metric_b,
        p.ordinals[p.t.a] as ordinal_a, p.ordinals[p.t.b] as ordinal_b,
        { 'n': p.t.n, 'rho': p.t.rho, 'p_value': p.t.p_value } as r
    from pair_results p
    join {{ ref('stg_submissions') }} s on s.submission_id = p.submission_id
),

holm as (
    -- Holm: sort the m p-values ascending; adjusted p_(i) = max over j <= i of (m - j + 1) * p_(j),
    -- capped at 1 (the running max keeps the adjusted values monotone; ties get equal values).
    select
        *,
        count(r.p_value) over (partition by submission_id) as holm_tests,
        row_number() over by_p as holm_rank
    from tests
    window by_p as (partition by submission_id order by r.p_value nulls last, ordinal_a, ordinal_b)
)

select
    submission_id,
    corpus,
    team,
    run,
    campaign,
    metric_a,
    metric_b,
    r.n,
    r.rho,
    r.p_value,
    case
        when r.p_value is not null
            then
                least(1.0, max((holm_tests - holm_rank + 1) * r.p_value) over (
                    partition by submission_id order by holm_rank rows between unbounded preceding and current row
                ))
    end as p_holm,
    p_holm < {{ alpha }} as significant,
    holm_tests
from holm
