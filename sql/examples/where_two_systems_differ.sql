-- Where do two systems differ most? The sentences of one corpus with the largest gap in
-- sentence BLEU between two runs, with both outputs and the reference. bleu_diff = a - b:
-- positive where run a does better. Sentences either run lacks are left out.
-- Edit: the two submission_ids (same corpus) and how many sentences to show. To compare on
-- another score, replace bleu by any sentence_scores column (dea, reorder_accuracy, ...).
with params as (
    select
        'demo/en_ewt_demo/baseline/hall_nemec' as submission_a,
        'demo/en_ewt_demo/perturb/swaps' as submission_b,
        20 as top_n
),

pairs as (
    select
        a.corpus,
        a.sent_idx,
        a.sent_id,
        a.bleu as bleu_a,
        b.bleu as bleu_b,
        a.bleu - b.bleu as bleu_diff,
        a.dea as dea_a,
        b.dea as dea_b
    from params p
    join sentence_scores a on a.submission_id = p.submission_a
    join sentence_scores b on b.submission_id = p.submission_b and b.corpus = a.corpus and b.sent_idx = a.sent_idx
    where a.bleu is not null and b.bleu is not null
)

select
    x.sent_id,
    round(x.bleu_a, 3) as bleu_a,
    round(x.bleu_b, 3) as bleu_b,
    round(x.bleu_diff, 3) as bleu_diff,
    round(x.dea_a, 3) as dea_a,
    round(x.dea_b, 3) as dea_b,
    r.reference_text,
    oa.output_text as output_a,
    ob.output_text as output_b
from pairs x
cross join params p
join staging.stg_sentences r on r.corpus = x.corpus and r.sent_idx = x.sent_idx
join staging.stg_outputs oa on oa.submission_id = p.submission_a and oa.sent_idx = x.sent_idx
join staging.stg_outputs ob on ob.submission_id = p.submission_b and ob.sent_idx = x.sent_idx
order by abs(x.bleu_diff) desc, x.sent_idx
limit (select top_n from params)
