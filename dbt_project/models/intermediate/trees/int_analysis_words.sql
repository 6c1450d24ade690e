-- The analysis tree of SPEC: punctuation dropped, a dropped word's children
-- re-attached to the nearest kept ancestor, kept words renumbered 1..n.
-- (A punctuation root leaves its children as roots: head_pos 0.)
with recursive

words as (
    select * from {{ ref('int_reference_words') }}
),

climb as (
    select corpus, sent_idx, word_id, head as attach_to
    from words
    where not is_punct
    union all
    select c.corpus, c.sent_idx, c.word_id, p.head
    from climb c
    join words p
        on p.corpus = c.corpus and p.sent_idx = c.sent_idx and p.word_id = c.attach_to
    where p.is_punct
),

attached as (
    select c.corpus, c.sent_idx, c.word_id, c.attach_to
    from climb c
    left join words p
        on p.corpus = c.corpus and p.sent_idx = c.sent_idx and p.word_id = c.attach_to
    where c.attach_to = 0 or not p.is_punct
),

kept as (
    select
        w.*,
        a.attach_to,
        row_number() over (partition by w.corpus, w.sent_idx order by w.word_id) as pos
    from words w
    join attached a using (corpus, sent_idx, word_id)
)

select
    k.corpus,
    k.sent_idx,
    k.pos::integer as pos,
    k.word_id,
    coalesce(h.pos, 0)::integer as head_pos,
    k.form,
    k.lemma,
    k.lemma_lower,
    k.upos,
    k.xpos,
    k.feats,
    k.deprel,
    k.base_deprel
from kept k
left join kept h
    on h.corpus = k.corpus and h.sent_idx = k.sent_idx and h.word_id = k.attach_to
