-- Morphological features of every output word that has a head (a parse: processor 'stanza'
-- or a run loaded as CoNLL-U), one row per (word, feature); value sets as in int_word_features.
with items as (
    select submission_id, sent_idx, word_idx, unnest(string_split(feats, '|')) as item
    from {{ ref('int_output_words') }}
    where feats is not null and head is not null
),

parsed as (
    select submission_id, sent_idx, word_idx,
           split_part(item, '=', 1) as feature,
           list_sort(string_split(substr(item, strpos(item, '=') + 1), ',')) as value_set
    from items
    where strpos(item, '=') > 1 and strpos(item, '=') < length(item)
)

select *, array_to_string(value_set, ',') as value_key
from parsed
