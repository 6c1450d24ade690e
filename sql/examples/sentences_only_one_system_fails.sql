-- Which sentences does one system fail that every other system on the same corpus passes?
-- Here a sentence fails in a run when its sentence BLEU is below fail_below, and passes
-- otherwise (a fixed threshold, so runs are compared on one scale). Runs that fail almost
-- everything (random word order) would hide every sentence: list them in ignore_runs. A run
-- that lacks the sentence counts neither way.
-- Edit: submission_id (campaign/corpus/team/run, as in submission_scores), fail_below, and
-- ignore_runs (other submission_ids to leave out; []::varchar[] for none).
with params as (
    select
        'demo/en_ewt_demo/baseline/hall_nemec' as submission_id,
        0.5 as fail_below,
        ['demo/en_ewt_demo/perturb/random', 'demo/en_ewt_demo/baseline/random_order'] as ignore_runs
),

mine as (
    select s.corpus, s.sent_idx, s.sent_id, s.bleu
    from sentence_scores s cross join params p
    where s.submission_id = p.submission_id and s.bleu < p.fail_below
),

others as (
    select o.sent_idx, count(*) as other_runs, min(o.bleu) as others_min_bleu
    from sentence_scores o
    join mine m on m.corpus = o.corpus and m.sent_idx = o.sent_idx
    cross join params p
    where o.submission_id <> p.submission_id and not list_contains(p.ignore_runs, o.submission_id)
        and o.bleu is not null
    group by o.sent_idx
)

select
    m.sent_id,
    round(m.bleu, 3) as bleu,
    o.other_runs,
    round(o.others_min_bleu, 3) as others_min_bleu,
    r.reference_text,
    x.output_text
from mine m
join others o using (sent_idx)
cross join params p
join staging.stg_sentences r on r.corpus = m.corpus and r.sent_idx = m.sent_idx
join staging.stg_outputs x on x.submission_id = p.submission_id and x.sent_idx = m.sent_idx
where o.others_min_bleu >= p.fail_below
order by m.bleu, m.sent_idx
