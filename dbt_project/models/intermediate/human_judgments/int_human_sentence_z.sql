-- The two criteria sentence_scores carries as columns; every criterion stays in int_human_scores.
-- int_human_scores has one row per criterion here, so max() is that row's value (max, not
-- any_value: sqlglot writes any_value ... filter in an order Spark cannot parse; tests/packaging/test_portability.py).
select
    submission_id,
    sent_idx,
    max(z_mean) filter (where criterion = 'fluency') as fluency_z,
    max(z_mean) filter (where criterion = 'adequacy') as adequacy_z
from {{ ref('int_human_scores') }}
group by submission_id, sent_idx
