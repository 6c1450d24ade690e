{{ incremental_by_submission() }}
-- SPEC section 11: one row per submission and reference sentence. Scores are NULL for a
-- sentence the run lacks (is_missing) and where SPEC leaves them undefined (DEA with n = 1).
with dea as (
    select submission_id, sent_idx, count(*) as edges, count(*) filter (where matched) as matched_edges
    from {{ ref('int_dea_edges') }}
    where {{ changed_submission() }}
    group by all
),

-- The lengths of the lemma lists, not the lists: carried through the joins, the lists of 3.4M
-- outputs did not fit a 3 GB memory limit at 10x (DuckDB could not pin a block).
scored as (
    select
        submission_id, sent_idx, len(ref_lemmas) as reference_words, len(out_lemmas) as output_words,
        has_reference, processor
    from {{ ref('int_scored_outputs') }}
    where {{ changed_submission() }}
)

select
    o.submission_id,
    o.sent_id,
    s.corpus,
    s.team,
    s.run,
    s.campaign,
    o.sent_idx,
    o.is_missing,
    x.reference_words,
    x.output_words,
    b.bleu,
    case when x.reference_words > 1 then coalesce(d.matched_edges, 0) / (x.reference_words - 1) end as dea,
    -- (NULL for a run of a reference-free corpus: it has no reference edges to count)
    case when x.has_reference is not false then coalesce(d.edges, 0) end as dea_edges,
    case when x.has_reference is not false then coalesce(d.matched_edges, 0) end as dea_matched,
    u.acc.simple_string_accuracy,
    u.acc.generation_string_accuracy,
    u.acc.simple_tree_accuracy,
    u.acc.generation_tree_accuracy,
    u.acc.understandability_accuracy,
    u.acc.quality_accuracy,
    u.acc.reorder_accuracy,
    l.rule_score,   -- L'AMBRE (SPEC 9); NULL for a missing sentence or a run without a parse
    x.processor,
    -- 'chunked': an output too long to parse whole (srlens/processing/models.py max_words) was parsed in chunks.
    case when o.is_missing then 'missing' when pt.chunks > 1 then 'chunked' else 'ok' end as processing_status,
    {{ string_literal(var("bleu_nltk_version")) }} as bleu_nltk_version,
    h.fluency_z,   -- mean annotator z-score (SPEC 10); NULL where no human judged the sentence
    h.adequacy_z,
    -- sacrebleu's sentence BLEU and chrF on the texts (SPEC 13); NULL where the reference has no text
    mt.sacrebleu_bleu,
    mt.chrf
from {{ ref('stg_outputs') }} o
join {{ ref('stg_submissions') }} s using (submission_id)
left join scored x using (submission_id, sent_idx)
left join {{ ref('stg_parsed_texts') }} pt on pt.text_hash = sha256(o.output_text) and pt.processor = x.processor
left join {{ ref('int_sentence_accuracies') }} u using (submission_id, sent_idx)
left join {{ ref('int_sentence_bleu_stats') }} b using (submission_id, sent_idx)
left join dea d using (submission_id, sent_idx)
left join {{ ref('int_lambre_sentence_scores') }} l using (submission_id, sent_idx)
left join {{ ref('int_human_sentence_z') }} h using (submission_id, sent_idx)
left join {{ ref('int_sacrebleu_stats') }} mt using (submission_id, sent_idx)
where {{ changed_submission('o.submission_id') }}
