-- The submissions an incremental build recomputes (macros/incremental_by_submission.sql):
-- loaded or reloaded since the last successful build, or removed since (their rows go).
select s.submission_id
from {{ ref('stg_submissions') }} s
left join {{ ref('stg_built_submissions') }} b using (submission_id)
where b.loaded_at is distinct from s.loaded_at
union all
select b.submission_id
from {{ ref('stg_built_submissions') }} b
anti join {{ ref('stg_submissions') }} s using (submission_id)
