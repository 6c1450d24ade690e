-- Per analysis tree: size, depth, distances, arity and projectivity, set-based.
with

words as (
    select corpus, sent_idx, count(*) as n
    from {{ ref('int_analysis_words') }}
    group by all
),

depth as (
    select corpus, sent_idx, max(depth) as tree_depth
    from (
        select w.corpus, w.sent_idx, w.pos, count(a.ancestor_pos) as depth
        from {{ ref('int_analysis_words') }} w
        left join {{ ref('int_word_ancestors') }} a using (corpus, sent_idx, pos)
        group by all
    )
    group by all
),

edges as (
    select corpus, sent_idx, count(*) as edges, sum(abs(distance)) as total_distance
    from {{ ref('int_analysis_edges') }}
    group by all
),

-- An edge is projective when every word strictly inside its span descends from its head.
edge_projectivity as (
    select
        e.corpus,
        e.sent_idx,
        e.head_pos,
        e.dep_pos,
        count(a.pos) = e.span_end - e.span_start - 1 as is_projective
    from {{ ref('int_analysis_edges') }} e
    left join {{ ref('int_word_ancestors') }} a
        on
            a.corpus = e.corpus
            and a.sent_idx = e.sent_idx
            and a.ancestor_pos = e.head_pos
            and a.pos > e.span_start
            and a.pos < e.span_end
    group by e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.span_start, e.span_end
),

projectivity as (
    select corpus, sent_idx, bool_and(is_projective) as is_projective
    from edge_projectivity
    group by all
),

-- Flux at inter-word position p: the edges with span_start <= p < span_end.
positions as (
    select a.corpus, a.sent_idx, a.pos as position
    from {{ ref('int_analysis_words') }} a
    join words w using (corpus, sent_idx)
    where a.pos < w.n
),

flux as (
    select corpus, sent_idx, avg(flux_size) as mean_flux_size
    from (
        select p.corpus, p.sent_idx, p.position, count(e.dep_pos) as flux_size
        from positions p
        left join {{ ref('int_analysis_edges') }} e
            on
                e.corpus = p.corpus
                and e.sent_idx = p.sent_idx
                and e.span_start <= p.position
                and p.position < e.span_end
        group by all
    )
    group by all
)

select
    w.corpus,
    w.sent_idx,
    w.n as tree_length,
    d.tree_depth,
    coalesce(e.total_distance / e.edges, 0.0) as mean_dependency_distance,
    coalesce(f.mean_flux_size, 0.0) as mean_flux_size,
    coalesce(e.edges, 0) / w.n as mean_arity,
    coalesce(p.is_projective, true) as is_projective
from words w
join depth d using (corpus, sent_idx)
left join edges e using (corpus, sent_idx)
left join projectivity p using (corpus, sent_idx)
left join flux f using (corpus, sent_idx)
