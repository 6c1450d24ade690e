select text_hash, processor, word_idx, token_idx, form, lemma, upos, xpos, feats, head, deprel
from {{ source('cache', 'parsed_words') }}
