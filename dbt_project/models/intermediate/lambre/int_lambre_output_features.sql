{{ incremental_by_submission() }}
-- Morphological features of every output word that has a head (a parse: processor 'stanza'
-- or a run loaded as CoNLL-U), one row per (word, feature), as in int_word_features.
{{ exploded_features(ref('int_output_words_parsed'), ['submission_id', 'sent_idx', 'word_idx'], 'head is not null and ' ~ changed_submission()) }}
