{{ incremental_by_submission() }}
-- SPEC section 10: per submission and score (bleu, fluency = fluency_z, adequacy = adequacy_z), a
-- two-sided Mann-Whitney U test (scipy, udfs/stats.py) between the projective sentences (first
-- sample: u is their U) and the non-projective ones, over the run's sentences that have the score.
-- One row per submission and score: a test runs only where non-projective sentences exceed the
-- share var projectivity_min_nonprojective_share (default 0.05) of those sentences; otherwise
-- u and p_value are NULL, tested is false and skipped_reason says why (counts and medians are
-- still given).
{%- set threshold = number_var('projectivity_min_nonprojective_share') %}
{%- set scores = {'bleu': 'bleu', 'fluency': 'fluency_z', 'adequacy': 'adequacy_z'} %}

with sentences as (
    select s.submission_id, s.sent_idx, c.is_projective, s.bleu, s.fluency_z, s.adequacy_z
    from {{ ref('sentence_scores') }} s
    join {{ ref('sentence_complexity') }} c using (corpus, sent_idx)
    where not s.is_missing and c.is_projective is not null and {{ changed_submission('s.submission_id') }}
),

values_long as (
    {%- for score, column in scores.items() %}
        select submission_id, sent_idx, is_projective, '{{ score }}' as score, {{ column }} as value
        from sentences
        where {{ column }} is not null
        {{- '\n    union all' if not loop.last }}
    {%- endfor %}
),

groups as (
    select
        submission_id,
        score,
        count(*) filter (where is_projective) as n_projective,
        count(*) filter (where not is_projective) as n_nonprojective,
        median(value) filter (where is_projective) as median_projective,
        median(value) filter (where not is_projective) as median_nonprojective,
        list(value order by sent_idx) filter (where is_projective) as xs,
        list(value order by sent_idx) filter (where not is_projective) as ys
    from values_long
    group by all
),

grid as (
    select
        s.submission_id, s.corpus, s.team, s.run, s.campaign, k.score, k.ordinal,
        coalesce(g.n_projective, 0) as n_projective,
        coalesce(g.n_nonprojective, 0) as n_nonprojective,
        g.median_projective, g.median_nonprojective, g.xs, g.ys
    from {{ ref('stg_submissions') }} s
    cross join (values {% for score in scores %}('{{ score }}', {{ loop.index }}){{ ', ' if not loop.last }}{% endfor %}) k (score, ordinal)
    left join groups g on g.submission_id = s.submission_id and g.score = k.score
    where {{ changed_submission('s.submission_id') }}
),

decided as (
    select
        *,
        n_nonprojective / nullif(n_projective + n_nonprojective, 0) as nonprojective_share,
        case
            when n_projective + n_nonprojective = 0 then 'no ' || score || ' scores'
            when n_nonprojective / (n_projective + n_nonprojective) <= {{ threshold }}
                then
                    'non-projective sentences are ' || n_nonprojective || ' of ' || (n_projective + n_nonprojective)
                    || ' (' || round(100 * n_nonprojective / (n_projective + n_nonprojective), 1)
                    || '%), not above the threshold of {{ 100 * threshold }}%'
            when n_projective = 0 then 'no projective sentences'
        end as skipped_reason
    from grid
)

select
    submission_id,
    corpus,
    team,
    run,
    campaign,
    score,
    n_projective,
    n_nonprojective,
    nonprojective_share,
    median_projective,
    median_nonprojective,
    t.u,
    t.p_value,
    skipped_reason is null as tested,
    skipped_reason
from (
    select *, case when skipped_reason is null then srlens_mannwhitney(xs, ys) end as t
    from decided
)
