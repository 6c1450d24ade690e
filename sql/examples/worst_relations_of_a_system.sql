-- Which dependency relations does one system get wrong most? DEA per base relation of one run
-- (SPEC 3: reference edges of that relation whose head and dependent the output keeps in a
-- matching arrangement), lowest first, next to the pooled DEA of the same relation in the other
-- runs on the same corpus (NULL when no other run exists).
-- Edit: submission_id (campaign/corpus/team/run, as in submission_scores) and min_edges, which
-- leaves out relations too rare to judge.
with params as (
    select
        'demo/en_ewt_demo/baseline/hall_nemec' as submission_id,
        10 as min_edges
),

others as (
    select d.relation, sum(d.matched) / sum(d.edges) as others_dea, count(*) as other_runs
    from dea_by_relation d
    join dea_by_relation me on me.relation = d.relation and me.corpus = d.corpus
    cross join params p
    where me.submission_id = p.submission_id and d.submission_id <> p.submission_id
    group by d.relation
)

select
    d.submission_id,
    d.relation,
    d.edges,
    d.matched,
    d.edges - d.matched as lost_edges,
    round(d.dea, 3) as dea,
    round(o.others_dea, 3) as others_dea,
    o.other_runs
from dea_by_relation d
cross join params p
left join others o using (relation)
where d.submission_id = p.submission_id and d.edges >= p.min_edges
order by d.dea, d.edges desc, d.relation
