-- SPEC section 1, one row per reference sentence. A sentence with no word
-- left after removing punctuation has tree_length 0 and NULL metrics.
select
    s.corpus,
    s.sent_id,
    s.sent_idx,
    coalesce(t.tree_length, 0) as tree_length,
    t.tree_depth,
    t.mean_dependency_distance,
    t.mean_flux_size,
    f.mean_flux_weight,
    t.mean_arity,
    t.is_projective
from {{ ref('stg_sentences') }} s
left join {{ ref('int_sentence_trees') }} t using (corpus, sent_idx)
left join {{ ref('int_sentence_flux_weight') }} f using (corpus, sent_idx)
