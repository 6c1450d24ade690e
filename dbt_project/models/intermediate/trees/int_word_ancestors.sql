-- Every (word, ancestor) pair of the analysis trees; a word's depth is its number of ancestors.
with recursive ancestors as (
    select corpus, sent_idx, pos, head_pos as ancestor_pos
    from {{ ref('int_analysis_words') }}
    where head_pos > 0
    union all
    select a.corpus, a.sent_idx, a.pos, w.head_pos
    from ancestors a
    join {{ ref('int_analysis_words') }} w
        on w.corpus = a.corpus and w.sent_idx = a.sent_idx and w.pos = a.ancestor_pos
    where w.head_pos > 0
)

select corpus, sent_idx, pos, ancestor_pos from ancestors
