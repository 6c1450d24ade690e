-- Syntactic words of the reference trees (no multiword ranges, no empty nodes).
select
    corpus,
    sent_idx,
    word_id,
    form,
    lemma,
    lower(lemma) as lemma_lower,
    upos,
    xpos,
    feats,
    head,
    deprel,
    split_part(deprel, ':', 1) as base_deprel,
    -- a parsed reference (load-references) marks punctuation as its parsed outputs do: UPOS PUNCT
    case when parsed then coalesce(upos = 'PUNCT', false) else split_part(deprel, ':', 1) = 'punct' end as is_punct
from {{ ref('int_reference_tokens') }}
where token_kind = 'word'
