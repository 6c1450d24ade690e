-- noqa: disable=LT02
-- (sqlfluff cannot indent the jinja for-loop of the scores; kept as written)
-- SPEC section 12, "System rankings, as WMT publishes them": one row per corpus, metric and run
-- with a corpus score of that metric. The metrics are pairwise_significance's.
--   Holm: the p_value (paired bootstrap) of the corpus's unordered pairs, sorted ascending, gives
--         p_holm(i) = max over j <= i of min(1, (m - j + 1) p(j)), m = N(N-1)/2 (a pair without a
--         row, the metric undefined on its common sentences, counts with p = 1: it sorts last and
--         moves no other pair's figure).
--   a is significantly better than b: p_holm < ranking_alpha and a's metric is the better one.
--   rank_best = 1 + #(runs significantly better), rank_worst = N - #(runs significantly worse).
--   rank: the position by score, best first (a tie: the smaller submission_id first). A cluster
--         boundary lies after position i when every run at 1..i is significantly better than
--         every run at i+1..N: exactly when C(i), the number of "better" relations from a run at
--         1..i to one at i+1..N, is i(N - i). C(i) is a running sum over the positions of
--         (relations from the run at i to runs below it) - (relations from runs above it to it).
{%- set alpha = number_var('ranking_alpha') %}
{#- Metrics where lower is better, ranked ascending: none of pairwise_significance's today (corpus
    BLEU, micro DEA and the means of "higher is better" sentence scores). -#}
{%- set lower_is_better = [] %}

with scores as (
    {%- for metric in significance_metrics() %}
        select
            corpus, '{{ metric }}' as metric, submission_id, campaign, {{ metric }}::double as score,
            {{ -1 if metric in lower_is_better else 1 }} as orientation
        from {{ ref('submission_scores') }}
        where {{ metric }} is not null
                {{ 'union all' if not loop.last }}
    {%- endfor %}
),

positions as (
    select
        *,
        count(*) over (partition by corpus, metric)::integer as submissions,
        -- scores equal but for their last bits (DuckDB's parallel sums do not fix the order of
        -- additions, so an incremental and a full build may differ there) are a tie
        row_number() over (
            partition by corpus, metric order by round(orientation * score, 12) desc, submission_id
        )::integer as position
    from scores
),

-- Each unordered pair once (pairwise_significance has both orders, with the same p_value), with
-- its rank j among the corpus's pairs by p_value.
pairs as (
    select
        p.corpus,
        p.metric,
        p.submission_a,
        p.submission_b,
        p.p_value,
        a.submissions,
        p.delta * a.orientation as gain,  -- > 0: a is the better one
        row_number() over (
            partition by p.corpus, p.metric order by p.p_value, p.submission_a, p.submission_b
        ) as j
    from {{ ref('pairwise_significance') }} p
    join positions a on a.corpus = p.corpus and a.metric = p.metric and a.submission_id = p.submission_a
    join positions b on b.corpus = p.corpus and b.metric = p.metric and b.submission_id = p.submission_b
    where p.submission_a < p.submission_b
),

holm as (
    select
        *,
        max(least(1.0, (submissions * (submissions - 1) / 2 - j + 1) * p_value)) over (
            partition by corpus, metric order by j rows between unbounded preceding and current row
        ) as p_holm
    from pairs
),

better as (
    select
        corpus,
        metric,
        case when gain > 0 then submission_a else submission_b end as winner,
        case when gain > 0 then submission_b else submission_a end as loser
    from holm
    where p_holm < {{ alpha }} and gain <> 0
),

relations as (
    select b.corpus, b.metric, b.winner, b.loser, w.position as winner_position, l.position as loser_position
    from better b
    join positions w on w.corpus = b.corpus and w.metric = b.metric and w.submission_id = b.winner
    join positions l on l.corpus = b.corpus and l.metric = b.metric and l.submission_id = b.loser
),

counts as (
    select
        p.corpus,
        p.metric,
        p.submission_id,
        count(*) filter (where r.loser = p.submission_id) as beaten_by,
        count(*) filter (where r.winner = p.submission_id) as beats,
        count(*) filter (where r.winner = p.submission_id and r.loser_position > p.position)
        - count(*) filter (where r.loser = p.submission_id and r.winner_position < p.position) as crossing_change
    from positions p
    left join relations r
        on
            r.corpus = p.corpus and r.metric = p.metric
            and (r.winner = p.submission_id or r.loser = p.submission_id)
    group by all
),

boundaries as (
    select
        p.*,
        c.beaten_by,
        c.beats,
        p.position < p.submissions
        and sum(c.crossing_change) over (
            partition by p.corpus, p.metric order by p.position rows between unbounded preceding and current row
        ) = p.position * (p.submissions - p.position) as boundary_after
    from positions p
    join counts c using (corpus, metric, submission_id)
)

select
    corpus,
    metric,
    submission_id,
    campaign,
    score,
    position as rank,
    (1 + coalesce(sum(boundary_after::integer) over (
        partition by corpus, metric order by position rows between unbounded preceding and 1 preceding
    ), 0))::integer as cluster,
    (1 + beaten_by)::integer as rank_best,
    (submissions - beats)::integer as rank_worst,
    submissions
from boundaries
