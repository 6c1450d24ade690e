-- Morphological features of every reference word, one row per (word, feature); see the macro
-- exploded_features. UD forbids naming a feature twice on one word; _int_lambre__models.yml
-- warns if a treebank does (such a word would count twice).
{{ exploded_features(ref('int_reference_words'), ['corpus', 'sent_idx', 'word_id', 'upos']) }}
