select corpus, language, source_file, sha256, sentences, words, loaded_at, coalesce(reference, 'treebank') as reference
from {{ source('raw', 'treebank_files') }}
