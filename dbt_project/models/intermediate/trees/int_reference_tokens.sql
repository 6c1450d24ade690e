-- The reference token lines of every corpus, in the shape of stg_tokens: a treebank's gold lines,
-- and for a corpus of text references (srlens load-references) the stanza parse of each text under
-- the current processor of its language (var reference_parsers, set by srlens build). A text that
-- stanza splits into several sentences (flattened in the cache, srlens/processing/cache.py) is one
-- reference sentence: the root of each later sentence is attached to the first one as parataxis, as
-- UD treebanks annotate run-on sentences, so every tree has one root, as SPEC 3's n - 1 edges
-- assume (and as the identity, SPEC 13, needs). Multiword-token lines are rebuilt from token_idx, so that the aligned
-- processor sees surface tokens as in a CoNLL-U treebank; their form is their words' forms joined
-- (the cache keeps no surface form: right for English contractions, do + n't). `parsed` tells the
-- parsed lines from gold ones: their punctuation is UPOS PUNCT, as in a parsed output (SPEC 6), so
-- that the reference's own text, parsed, gives the reference's own words (int_reference_words).
{% set reference_parsers = mapping_var('reference_parsers') %}

with parsers as (
    select
        null::varchar as language,
        null::varchar as processor
    where false
    {% for language, processor_id in reference_parsers %}
        union all select {{ string_literal(language) }}, {{ string_literal(processor_id) }}
    {% endfor %}
),

roots as (
    select
        text_hash,
        processor,
        min(word_idx) as first_root
    from {{ ref('stg_parsed_words') }}
    where head = 0 and processor in (select p.processor from parsers as p)
    group by text_hash, processor
),

parsed as (
    select
        s.corpus,
        s.sent_idx,
        w.word_idx,
        w.token_idx,
        w.form,
        w.lemma,
        w.upos,
        w.xpos,
        w.feats,
        case when w.head = 0 and w.word_idx > r.first_root then r.first_root else w.head end as head,
        case when w.head = 0 and w.word_idx > r.first_root then 'parataxis' else w.deprel end as deprel
    from {{ ref('stg_sentences') }} as s
    inner join {{ ref('stg_treebank_files') }} as t on s.corpus = t.corpus
    inner join parsers as p on t.language = p.language
    inner join {{ ref('stg_parsed_words') }} as w
        on sha256(s.reference_text) = w.text_hash and p.processor = w.processor
    inner join roots as r on w.text_hash = r.text_hash and w.processor = r.processor
    where t.reference = 'text'
),

multiword as (
    select
        corpus,
        sent_idx,
        min(word_idx) as first_word,
        max(word_idx) as last_word,
        string_agg(form, '' order by word_idx) as form
    from parsed
    group by corpus, sent_idx, token_idx
    having count(*) > 1
)

select
    corpus,
    sent_idx,
    line_no,
    token_id,
    token_kind,
    word_id,
    form,
    lemma,
    upos,
    xpos,
    feats,
    head,
    deprel,
    deps,
    misc,
    false as parsed
from {{ ref('stg_tokens') }}
union all
-- line_no orders a sentence's lines: a multiword line just before its first word.
select
    corpus,
    sent_idx,
    2 * word_idx as line_no,
    word_idx::varchar as token_id,
    'word' as token_kind,
    word_idx as word_id,
    form,
    lemma,
    upos,
    xpos,
    feats,
    head,
    deprel,
    null::varchar as deps,
    null::varchar as misc,
    true as parsed
from parsed
union all
select
    corpus,
    sent_idx,
    2 * first_word - 1 as line_no,
    first_word || '-' || last_word as token_id,
    'multiword' as token_kind,
    null::integer as word_id,
    form,
    '_' as lemma,
    null::varchar as upos,
    null::varchar as xpos,
    null::varchar as feats,
    null::integer as head,
    null::varchar as deprel,
    null::varchar as deps,
    null::varchar as misc,
    true as parsed
from multiword
