{{ incremental_by_submission() }}
-- Every output sentence as words (SPEC section 6), from one of three sources:
--   conllu runs: the user's own parse;
--   processor 'stanza': the stanza parse cached by srlens/processing/;
--   processor 'aligned': udfs/aligned.py splits the text into the reference treebank's
--     tokens and syntactic words (multiword tokens expanded) and maps each word to the
--     reference word with the same form (NFC, casefolded; k-th occurrence to k-th), taking
--     its lemma and tags; an unmatched word keeps its lower-cased form as lemma.
{% set processor = var('processor') %}
{% set stanza_processors = mapping_var('stanza_processors') %}

with outputs as (
    select o.submission_id, o.sent_idx, o.output_text, s.corpus, s.format, t.language
    from {{ ref('stg_outputs') }} o
    join {{ ref('stg_submissions') }} s using (submission_id)
    join {{ ref('int_corpora') }} t using (corpus)  -- reference-free corpora too (issue 17)
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

{% if processor == 'stanza' %}
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
{% else %}
-- srlens_aligned_words takes rows of about 64 outputs (a UDF row is held whole in memory: rows
-- of a whole 256-sentence block of every run needed a 6 GB limit at 10x): a corpus's sentences
-- in blocks of 64 // runs, its runs in groups of 64. Each sentence is prepared once per row, and
-- an output repeated across the row's runs is aligned once.
    aligned_runs as (
        select
            corpus, submission_id,
            (row_number() over (partition by corpus order by submission_id) - 1) // 64 as run_group,
            greatest(1, 64 // count(*) over (partition by corpus)) as block_sentences
        from (
            select distinct corpus, submission_id from outputs
            where format <> 'conllu'
        )
    ),

    aligned_outputs as (
        select
            o.corpus, r.run_group, (o.sent_idx - 1) // r.block_sentences as block,
            list({ 'submission_id': o.submission_id, 'sent_idx': o.sent_idx, 'output_text': o.output_text }) as outputs
        from outputs o
        join aligned_runs r using (corpus, submission_id)
        join {{ ref('int_aligned_sentences') }} using (corpus, sent_idx)
        group by all
    ),

    aligned_sentences as (
        select
            s.corpus, (s.sent_idx - 1) // r.block_sentences as block,
            list({ 'sent_idx': s.sent_idx, 'text': s.text, 'token_ids': s.token_ids, 'token_forms': s.token_forms })
                as sentences
        from {{ ref('int_aligned_sentences') }} s
        join (select distinct corpus, block_sentences from aligned_runs) r using (corpus)
        group by all
    ),

    aligned_words as (
        select o.corpus, unnest(srlens_aligned_words(o.outputs, s.sentences, v.vocabulary), recursive := true)
        from aligned_outputs o
        join aligned_sentences s using (corpus, block)
        left join {{ ref('int_aligned_vocabulary') }} v using (corpus)
    ),

    parsed_by_alignment as (
        select
            w.submission_id, w.sent_idx, w.word_idx, w.form,
            coalesce(r.lemma, lower(w.form)) as lemma, r.upos, r.feats,
            null::integer as head, null::varchar as deprel,
            coalesce(r.is_punct, regexp_full_match(w.form, '\p{P}+')) as is_punct,
            'aligned' as processor
        from aligned_words w
        left join (
            -- Only the reference words of the corpora and sentences aligned here. The two filters
            -- also bring DuckDB's estimate of this side below its estimate of the unnested words,
            -- which it cannot count: it then builds the join's hash table on the reference words,
            -- not on the millions of output words (1x campaign: 6 % less CPU, 0.6 GB less memory).
            select * from {{ ref('int_reference_words') }}
            semi join (select distinct corpus from aligned_runs) using (corpus)
            semi join (select distinct corpus, sent_idx from outputs) using (corpus, sent_idx)
        ) r
            on r.corpus = w.corpus and r.sent_idx = w.sent_idx and r.word_id = w.word_id
    ),
{% endif %}

all_words as (
    select * from parsed_by_user
    union all
    select * from {{ 'parsed_by_stanza' if processor == 'stanza' else 'parsed_by_alignment' }}
)

-- A word a parser left without lemma is compared by its form.
select
    submission_id, sent_idx, word_idx, form, lemma, lower(coalesce(lemma, form)) as lemma_lower, upos, feats,
    head, deprel, coalesce(is_punct, false) as is_punct, processor
from all_words
