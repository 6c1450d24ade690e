-- Human judgments with their submission and sentence. The loader refuses judgments of runs or
-- sentences that are not loaded; left joins keep any orphan visible (and the not_null tests fail on it).
select
    s.submission_id,
    h.campaign,
    h.corpus,
    h.team,
    h.run,
    h.sent_id,
    t.sent_idx,
    h.annotator,
    lower(h.criterion) as criterion,
    h.score,
    h.source_file,
    h.line_no,
    h.loaded_at,
    h.text_sha256
from {{ source('raw', 'human_judgments') }} h
left join {{ ref('stg_submissions') }} s using (campaign, corpus, team, run)
-- (the sentence through the run's outputs, which reference-free corpora have too)
left join {{ ref('stg_outputs') }} t on t.submission_id = s.submission_id and t.sent_id = h.sent_id
