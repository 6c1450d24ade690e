-- The two criteria sentence_scores carries as columns; every criterion stays in int_human_scores.
select
    submission_id,
    sent_idx,
    any_value(z_mean) filter (where criterion = 'fluency') as fluency_z,
    any_value(z_mean) filter (where criterion = 'adequacy') as adequacy_z
from {{ ref('int_human_scores') }}
group by submission_id, sent_idx
