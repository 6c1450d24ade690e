-- System-level human scores (load-human --level system), with the run they score. The loader
-- refuses scores of runs that are not loaded; the left join keeps any orphan visible (not_null test).
select
    s.submission_id,
    h.campaign,
    h.corpus,
    h.team,
    h.run,
    lower(h.criterion) as criterion,
    h.score,
    h.orientation,
    h.source_file,
    h.line_no,
    h.loaded_at
from {{ source('raw', 'system_human_scores') }} h
left join {{ ref('stg_submissions') }} s using (campaign, corpus, team, run)
