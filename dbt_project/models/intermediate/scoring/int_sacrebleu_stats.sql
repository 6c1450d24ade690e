{{ incremental_by_submission() }}
-- SPEC 13: sacreBLEU's and chrF's sufficient statistics of every output sentence whose reference
-- has text (a treebank's `# text` or a text reference: stg_sentences.reference_text), computed by
-- sacrebleu itself on the detokenized texts, the output as loaded (udfs/mt_scores.py), with the
-- sentence scores from them. A missing sentence has no row (as in int_scored_outputs), nor has a
-- sentence whose reference has no text, nor a run of a reference-free corpus.
-- Sorted by reference sentence so that a batch of the UDF holds each reference's runs together
-- (it extracts a reference's n-grams once per batch).
with pairs as (
    select o.submission_id, o.sent_idx, o.output_text, r.reference_text
    from {{ ref('stg_outputs') }} o
    join {{ ref('stg_submissions') }} s using (submission_id)
    join {{ ref('stg_sentences') }} r on r.corpus = s.corpus and r.sent_idx = o.sent_idx
    where not o.is_missing and r.reference_text is not null and {{ changed_submission('o.submission_id') }}
    order by s.corpus, o.sent_idx
),

stats as materialized (
    select submission_id, sent_idx, srlens_sacrebleu_stats(output_text, reference_text) as st
    from pairs
)

select
    submission_id,
    sent_idx,
    {{ mt_stat_list(sacrebleu_bleu_fields() + chrf_fields(), 'st.{}') }},
    srlens_sacrebleu_sentence_bleu({{ mt_stat_list(sacrebleu_bleu_fields(), 'st.{}') }}) as sacrebleu_bleu,
    srlens_chrf_from_stats({{ mt_stat_list(chrf_fields(), 'st.{}') }}) as chrf
from stats
