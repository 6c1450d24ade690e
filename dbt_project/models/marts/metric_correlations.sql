{{ incremental_by_submission() }}
-- SPEC section 10: per submission, Spearman rho and p (scipy's, udfs/stats.py) for every pair of
-- sentence-level variables, pairs with a missing value dropped; Holm-Bonferroni across the pairs
-- of the submission that have a p-value. A pair is listed when both variables have at least one
-- value in the submission (so no fluency/adequacy pairs without human judgments); rho and p are
-- NULL when n < 3 or a variable is constant over the pair's sentences (then the pair is not
-- one of the Holm family, holm_tests).
{%- set alpha = number_var('correlation_alpha') %}

with vals as (
    select * from {{ ref('int_corr_sentence_values') }}
    where {{ changed_submission() }}
),

present as (
    select distinct submission_id, corpus, team, run, campaign, variable, ordinal from vals
),

pairs as (
    select
        a.submission_id, a.corpus, a.team, a.run, a.campaign,
        a.variable as metric_a, b.variable as metric_b, a.ordinal as ordinal_a, b.ordinal as ordinal_b
    from present a
    join present b on a.submission_id = b.submission_id and a.ordinal < b.ordinal
),

run_sentences as (
    -- every sentence of the run that has any value, in order
    select distinct submission_id, sent_idx from vals
),

variable_lists as (
    -- one list per variable over all of the run's sentences in order, NULL where it has no value
    select
        r.submission_id, p.variable, any_value(p.ordinal) as ordinal,
        list(v.value order by r.sent_idx) as vs
    from run_sentences r
    join (select distinct submission_id, variable, ordinal from vals) p using (submission_id)
    left join vals v on v.submission_id = r.submission_id and v.sent_idx = r.sent_idx and v.variable = p.variable
    group by all
),

samples as (
    -- the pair's two lists; srlens_spearman_pairwise drops the sentences where either is NULL
    select a.submission_id, a.variable as metric_a, b.variable as metric_b, a.vs as xs, b.vs as ys
    from variable_lists a
    join variable_lists b on a.submission_id = b.submission_id and a.ordinal < b.ordinal
),

tests as (
    select p.*, srlens_spearman_pairwise(coalesce(s.xs, []), coalesce(s.ys, [])) as r
    from pairs p
    left join samples s using (submission_id, metric_a, metric_b)
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
