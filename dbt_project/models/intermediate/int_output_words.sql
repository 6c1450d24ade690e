{{ incremental_by_submission() }}
-- Every output sentence as words (SPEC section 6), from one of three sources:
--   conllu runs: the user's own parse;
--   processor 'stanza': the stanza parse cached by srlens/processing.py;
--   processor 'aligned': each whitespace token mapped to the reference word with the
--     same form (case-insensitive, k-th occurrence to k-th), taking its lemma and tags;
--     an unmatched token keeps its lower-cased form as lemma.
{% set processor = var('processor') %}
{% set stanza_processors = mapping_var('stanza_processors') %}

with outputs as (
    select o.submission_id, o.sent_idx, o.output_text, s.corpus, s.format, t.language
    from {{ ref('stg_outputs') }} o
    join {{ ref('stg_submissions') }} s using (submission_id)
    join {{ ref('stg_treebank_files') }} t using (corpus)
    where not o.is_missing and {{ changed_submission('o.submission_id') }}
),

parsed_by_user as (
    select o.submission_id, o.sent_idx, w.word_id as word_idx, w.form, w.lemma, w.upos, w.feats,
           w.head, w.deprel, w.upos = 'PUNCT' as is_punct, 'user conllu' as processor
    from outputs o
    join {{ ref('stg_output_tokens') }} w using (submission_id, sent_idx)
    where o.format = 'conllu' and w.word_id is not null
),

{% if processor == 'stanza' %}
-- The processor id in use for each language (set by srlens build; may be empty).
current_processors as (
    select null::varchar as language, null::varchar as processor where false
    {% for language, processor_id in stanza_processors %}
    union all select {{ string_literal(language) }}, {{ string_literal(processor_id) }}
    {% endfor %}
),

parsed_by_stanza as (
    select o.submission_id, o.sent_idx, w.word_idx, w.form, w.lemma, w.upos, w.feats,
           w.head, w.deprel, w.upos = 'PUNCT' as is_punct, w.processor
    from outputs o
    join current_processors p on p.language = o.language
    join {{ ref('stg_parsed_words') }} w
        on w.text_hash = sha256(o.output_text) and w.processor = p.processor
    where o.format <> 'conllu'
),
{% else %}
output_tokens as (
    select submission_id, sent_idx, corpus,
           unnest(tokens) as form,
           unnest(range(1, len(tokens) + 1)) as word_idx
    from (
        select *, string_split_regex(trim(output_text), '\s+') as tokens
        from outputs
        where format <> 'conllu' and trim(output_text) <> ''
    )
),

numbered_tokens as (
    select *, row_number() over (
        partition by submission_id, sent_idx, lower(form) order by word_idx) as occurrence
    from output_tokens
),

numbered_reference as (
    select corpus, sent_idx, lower(form) as form_lower, lemma, upos, feats, is_punct,
           row_number() over (partition by corpus, sent_idx, lower(form) order by word_id) as occurrence
    from {{ ref('int_reference_words') }}
),

parsed_by_alignment as (
    select t.submission_id, t.sent_idx, t.word_idx::integer as word_idx, t.form,
           coalesce(r.lemma, lower(t.form)) as lemma, r.upos, r.feats,
           null::integer as head, null::varchar as deprel,
           coalesce(r.is_punct, regexp_full_match(t.form, '\p{P}+')) as is_punct,
           'aligned' as processor
    from numbered_tokens t
    left join numbered_reference r
        on r.corpus = t.corpus and r.sent_idx = t.sent_idx
        and r.form_lower = lower(t.form) and r.occurrence = t.occurrence
),
{% endif %}

all_words as (
    select * from parsed_by_user
    union all
    select * from {{ 'parsed_by_stanza' if processor == 'stanza' else 'parsed_by_alignment' }}
)

-- A word a parser left without lemma is compared by its form.
select submission_id, sent_idx, word_idx, form, lemma, lower(coalesce(lemma, form)) as lemma_lower, upos, feats,
       head, deprel, coalesce(is_punct, false) as is_punct, processor
from all_words
