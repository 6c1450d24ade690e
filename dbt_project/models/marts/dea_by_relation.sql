{{ incremental_by_submission() }}
-- DEA per run and base relation (SPEC section 3: matched r-edges / r-edges).
select
    e.submission_id,
    e.base_deprel as relation,
    any_value(s.corpus) as corpus,
    any_value(s.team) as team,
    any_value(s.run) as run,
    count(*) as edges,
    count(*) filter (where e.matched) as matched,
    count(*) filter (where e.matched) / count(*) as dea
from {{ ref('int_dea_edges') }} e
join {{ ref('stg_submissions') }} s using (submission_id)
where {{ changed_submission('e.submission_id') }}
group by e.submission_id, e.base_deprel
