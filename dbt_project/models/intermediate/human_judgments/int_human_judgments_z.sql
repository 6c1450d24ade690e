-- SPEC section 10: each raw human score z-normalized per annotator, with that annotator's mean and
-- sample standard deviation (n - 1, as R's sd() and the corpus_stats SDs) over all their scores,
-- every criterion pooled as SPEC says (so an annotator's criteria should share one scale). An
-- annotator is scoped by campaign: ids like 'A1' recur across campaigns for different people.
-- SD 0 or a single score: z is NULL.
-- A judgment counts only while the run's output is the text it judged (text_sha256): the loaders
-- delete the others when a run is reloaded, and this keeps any that another path left out.
select
    *,
    (score - annotator_mean) / nullif(annotator_sd, 0) as z
from (
    select
        j.submission_id, j.campaign, j.corpus, j.team, j.run, j.sent_id, j.sent_idx, j.annotator, j.criterion,
        j.score, j.source_file, j.line_no,
        count(*) over annotator as annotator_scores,
        avg(j.score) over annotator as annotator_mean,
        stddev_samp(j.score) over annotator as annotator_sd
    from {{ ref('stg_human_judgments') }} j
    join {{ ref('stg_outputs') }} o using (submission_id, sent_idx)
    where not o.is_missing and sha256(o.output_text) = j.text_sha256
    window annotator as (partition by j.campaign, j.annotator)
)
