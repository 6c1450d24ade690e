-- Per corpus, the token forms that can change how the 'aligned' processor (udfs/aligned.py)
-- cuts an output chunk that is not in its reference sentence: forms with a punctuation or
-- symbol character, and multiword tokens with their words. A form that is a multiword token
-- somewhere also counts its plain-word occurrences, so that the processor expands it only
-- where the corpus mostly does. One row per (form, expansion): n occurrences.
with tokens as (
    select * from {{ ref('int_reference_tokens') }}
    where token_kind <> 'empty'
),

multiword as (
    select m.corpus, m.form, list(w.form order by w.word_id) as words
    from tokens m
    join tokens w
        on
            w.corpus = m.corpus and w.sent_idx = m.sent_idx and w.token_kind = 'word'
            and w.word_id between split_part(m.token_id, '-', 1)::integer and split_part(m.token_id, '-', 2)::integer
    where m.token_kind = 'multiword'
    group by m.corpus, m.sent_idx, m.token_id, m.form
),

multiword_forms as (
    select distinct corpus, lower(form) as form_lower from multiword
),

entries as (
    select corpus, form, words, count(*) as n
    from multiword
    group by all
    union all
    select t.corpus, t.form, null::varchar[] as words, count(*) as n
    from tokens t
    left join multiword_forms m on m.corpus = t.corpus and m.form_lower = lower(t.form)
    where t.token_kind = 'word' and (regexp_matches(t.form, '[\p{P}\p{S}]') or m.form_lower is not null)
    group by all
)

select corpus, list({ 'form': form, 'words': words, 'n': n } order by form, words) as vocabulary
from entries
group by corpus
