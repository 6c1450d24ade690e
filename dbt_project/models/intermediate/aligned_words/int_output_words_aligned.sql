{{ incremental_by_submission() }}
-- The words of the outputs of processor 'aligned' (SPEC section 6; not conllu runs):
-- udfs/aligned.py splits the text into the reference treebank's tokens and syntactic words
-- (multiword tokens expanded) and maps each word to the reference word with the same form (NFC,
-- casefolded; k-th occurrence to k-th): word_id is that reference word's, NULL when none matches.
-- Only that pointer is written: int_output_words (a view) joins the reference word's lemma and tags.
{% if var('processor') == 'stanza' %}
    select
        null::varchar as submission_id,
        null::integer as sent_idx,
        null::integer as word_idx,
        null::varchar as form,
        null::integer as word_id
    where false
{% else %}

    with outputs as (
        select o.submission_id, o.sent_idx, o.output_text, s.corpus
        from {{ ref('stg_outputs') }} o
        join {{ ref('stg_submissions') }} s using (submission_id)
        join {{ ref('int_corpora') }} t using (corpus)
        where not o.is_missing and s.format <> 'conllu' and {{ changed_submission('o.submission_id') }}
    ),

    -- srlens_aligned_words takes rows of about 64 outputs (a UDF row is held whole in memory: rows
    -- of a whole 256-sentence block of every run needed a 6 GB limit at 10x): a corpus's sentences
    -- in blocks of 64 // runs, its runs in groups of 64. Each sentence is prepared once per row, and
    -- an output repeated across the row's runs is aligned once.
    aligned_runs as (
        select
            corpus, submission_id,
            (row_number() over (partition by corpus order by submission_id) - 1) // 64 as run_group,
            greatest(1, 64 // count(*) over (partition by corpus)) as block_sentences
        from (select distinct corpus, submission_id from outputs)
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
        select unnest(srlens_aligned_words(o.outputs, s.sentences, v.vocabulary), recursive := true)
        from aligned_outputs o
        join aligned_sentences s using (corpus, block)
        left join {{ ref('int_aligned_vocabulary') }} v using (corpus)
    )

    select submission_id, sent_idx, word_idx, form, word_id from aligned_words
{% endif %}
