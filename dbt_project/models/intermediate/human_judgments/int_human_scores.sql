-- SPEC section 10: per output sentence and criterion, the mean of the annotators' z-scores
-- (annotators whose z is NULL, SD 0, are left out of the mean but counted in judgments).
select
    submission_id,
    any_value(campaign) as campaign,
    any_value(corpus) as corpus,
    any_value(team) as team,
    any_value(run) as run,
    any_value(sent_id) as sent_id,
    sent_idx,
    criterion,
    avg(z) as z_mean,
    avg(score) as raw_mean,
    count(*) as judgments,
    count(z) as z_judgments,
    count(distinct annotator) as annotators
from {{ ref('int_human_judgments_z') }}
group by submission_id, sent_idx, criterion
