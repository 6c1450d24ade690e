{{ incremental_by_submission() }}
-- The output words that come with a parse (SPEC section 6): conllu runs, the user's own parse;
-- with processor 'stanza', the other runs, the stanza parse cached by srlens/processing/.
-- int_output_words shows them with the aligned words; the LAMBRE models read only these.
{% set stanza_processors = mapping_var('stanza_processors') %}

with outputs as (
    select o.submission_id, o.sent_idx, o.output_text, s.format, t.language
    from {{ ref('stg_outputs') }} o
    join {{ ref('stg_submissions') }} s using (submission_id)
    join {{ ref('int_corpora') }} t using (corpus)  -- reference-free corpora too
    where not o.is_missing and {{ changed_submission('o.submission_id') }}
),

parsed_by_user as (
    select
        o.submission_id, o.sent_idx, w.word_id as word_idx, w.form, w.lemma, w.upos, w.feats,
        w.head, w.deprel, w.upos = 'PUNCT' as is_punct, 'user conllu' as processor
    from outputs o
    join {{ ref('stg_output_tokens') }} w using (submission_id, sent_idx)
    where o.format = 'conllu' and w.word_id is not null
),

{% if var('processor') == 'stanza' %}
-- The processor id in use for each language (set by srlens build; may be empty).
    current_processors as (
        select null::varchar as language, null::varchar as processor
        where false
        {% for language, processor_id in stanza_processors %}
    union all select {{ string_literal(language) }}, {{ string_literal(processor_id) }}
    {% endfor %}
    ),

    parsed_by_stanza as (
        select
            o.submission_id, o.sent_idx, w.word_idx, w.form, w.lemma, w.upos, w.feats,
            w.head, w.deprel, w.upos = 'PUNCT' as is_punct, w.processor
        from outputs o
        join current_processors p on p.language = o.language
        join {{ ref('stg_parsed_words') }} w
            on w.text_hash = sha256(o.output_text) and w.processor = p.processor
        where o.format <> 'conllu'
    ),
{% endif %}

all_words as (
    select * from parsed_by_user
    {% if var('processor') == 'stanza' %}
        union all
        select * from parsed_by_stanza
    {% endif %}
)

-- A word a parser left without lemma is compared by its form.
select
    submission_id, sent_idx, word_idx, form, lemma, lower(coalesce(lemma, form)) as lemma_lower, upos, feats,
    head, deprel, coalesce(is_punct, false) as is_punct, processor
from all_words
