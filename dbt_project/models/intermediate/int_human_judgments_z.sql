-- SPEC section 10: each raw human score z-normalized per annotator, with that annotator's mean and
-- sample standard deviation (n - 1, as R's sd() and the corpus_stats SDs) over all their scores,
-- every criterion pooled as SPEC says (so an annotator's criteria should share one scale). An
-- annotator is scoped by campaign: ids like 'A1' recur across campaigns for different people.
-- SD 0 or a single score: z is NULL.
select
    *,
    (score - annotator_mean) / nullif(annotator_sd, 0) as z
from (
    select
        submission_id, campaign, corpus, team, run, sent_id, sent_idx, annotator, criterion, score,
        source_file, line_no,
        count(*) over annotator as annotator_scores,
        avg(score) over annotator as annotator_mean,
        stddev_samp(score) over annotator as annotator_sd
    from {{ ref('stg_human_judgments') }}
    window annotator as (partition by campaign, annotator)
)
