-- Morphological features of every reference word, one row per (word, feature) (SPEC section 9).
-- A multi-valued feature (PronType=Int,Rel) keeps its values as a sorted set: value_set is
-- the list, value_key the same set as text ('Int,Rel'), so equal sets have equal keys.
-- Layered features (Number[psor]) are features of their own. UD forbids naming a feature twice
-- on one word; _lambre.yml warns if a treebank does (such a word would count twice).
with items as (
    select corpus, sent_idx, word_id, upos, unnest(string_split(feats, '|')) as item
    from {{ ref('int_reference_words') }}
    where feats is not null
),

parsed as (
    select corpus, sent_idx, word_id, upos,
           split_part(item, '=', 1) as feature,
           list_sort(string_split(substr(item, strpos(item, '=') + 1), ',')) as value_set
    from items
    where strpos(item, '=') > 1 and strpos(item, '=') < length(item)
)

select *, array_to_string(value_set, ',') as value_key
from parsed
