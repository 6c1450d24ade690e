-- Link instances of the rule treebanks: every syntactic word with a head (root edges are not
-- links), on the full treebank trees (punctuation included, original ids), as the L'AMBRE
-- extraction counts them. A link is (full deprel, dependent UPOS, head UPOS).
select
    c.language,
    d.corpus,
    d.sent_idx,
    d.word_id as dep_id,
    d.head as head_id,
    d.deprel,
    d.upos as dep_upos,
    h.upos as head_upos
from {{ ref('int_lambre_rule_corpora') }} c
join {{ ref('int_reference_words') }} d on d.corpus = c.corpus
join {{ ref('int_reference_words') }} h
    on h.corpus = d.corpus and h.sent_idx = d.sent_idx and h.word_id = d.head
where d.head > 0 and d.deprel is not null and d.upos is not null and h.upos is not null
