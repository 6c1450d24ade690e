select text_hash, processor, words, sentences, chunks
from {{ source('cache', 'parsed_texts') }}
