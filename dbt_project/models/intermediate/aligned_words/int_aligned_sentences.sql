-- What the 'aligned' processor (udfs/aligned.py) needs of each reference sentence: its text
-- and token lines (ids and forms, in file order); int_output_words_aligned groups them in blocks.
select
    t.corpus,
    t.sent_idx,
    s.reference_text as text,
    list(t.token_id order by t.line_no) as token_ids,
    list(t.form order by t.line_no) as token_forms
from {{ ref('int_reference_tokens') }} t
join {{ ref('stg_sentences') }} s using (corpus, sent_idx)
group by t.corpus, t.sent_idx, s.reference_text
