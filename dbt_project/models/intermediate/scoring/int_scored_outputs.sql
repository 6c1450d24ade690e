{{ incremental_by_submission() }}
-- One row per output sentence that exists (missing sentences are not scored), with the
-- reference and output lemma sequences the scores compare. A run of a reference-free corpus
-- has no reference: ref_lemmas and ref_heads are NULL, so every reference-based
-- score of it is NULL, never 0.
with reference as (
    select
        corpus, sent_idx,
        list(lemma_lower order by pos) as ref_lemmas,
        list(head_pos order by pos) as ref_heads
    from {{ ref('int_analysis_words') }}
    group by all
),

-- The output's lemmas in word order, punctuation removed (int_output_lemmas numbers them 1..m).
output as (
    select submission_id, sent_idx, list(lemma_lower order by word_idx) as out_lemmas
    from {{ ref('int_output_words') }}
    where not is_punct and {{ changed_submission() }}
    group by all
),

processors as (
    select submission_id, string_agg(distinct processor, ', ' order by processor) as processor
    from {{ ref('int_output_words') }}
    where {{ changed_submission() }}
    group by all
)

select
    o.submission_id,
    s.corpus,
    o.sent_idx,
    c.has_reference,
    case when c.has_reference then coalesce(r.ref_lemmas, []::varchar[]) end as ref_lemmas,
    case when c.has_reference then coalesce(r.ref_heads, []::integer[]) end as ref_heads,
    coalesce(w.out_lemmas, []::varchar[]) as out_lemmas,  -- empty output: no words
    coalesce(p.processor, {{ string_literal(var("processor")) }}) as processor
from {{ ref('stg_outputs') }} o
join {{ ref('stg_submissions') }} s using (submission_id)
join {{ ref('int_corpora') }} c on c.corpus = s.corpus
left join reference r on r.corpus = s.corpus and r.sent_idx = o.sent_idx
left join output w on w.submission_id = o.submission_id and w.sent_idx = o.sent_idx
left join processors p on p.submission_id = o.submission_id
where not o.is_missing and {{ changed_submission('o.submission_id') }}
