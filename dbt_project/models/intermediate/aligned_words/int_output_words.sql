{{ config(materialized='view') }}
-- Every output sentence as words (SPEC section 6): the words with a parse
-- (int_output_words_parsed) and, with processor 'aligned', the aligned words with the lemma and
-- tags of the reference word each maps to (an unmatched word keeps its lower-cased form as
-- lemma, and is punctuation when its form is). A view: writing these copies of the reference
-- words' attributes cost more than this join in the readers (docs/performance.md,
-- "Scoring"). The report's SQL_EXAMPLE_OUTPUT_WORDS (srlens/report/queries.py) repeats
-- this join and its lemma_lower and is_punct for its example sentences: change both together.
select
    submission_id, sent_idx, word_idx, form, lemma, lemma_lower, upos, feats, head, deprel, is_punct, processor
from {{ ref('int_output_words_parsed') }}
union all
select
    w.submission_id, w.sent_idx, w.word_idx, w.form,
    coalesce(r.lemma, lower(w.form)) as lemma,
    lower(coalesce(r.lemma, lower(w.form))) as lemma_lower,
    r.upos, r.feats, null::integer as head, null::varchar as deprel,
    coalesce(r.is_punct, regexp_full_match(w.form, '\p{P}+'), false) as is_punct,
    'aligned' as processor
from {{ ref('int_output_words_aligned') }} w
join {{ ref('stg_submissions') }} s using (submission_id)
left join {{ ref('int_reference_words') }} r
    on r.corpus = s.corpus and r.sent_idx = w.sent_idx and r.word_id = w.word_id
