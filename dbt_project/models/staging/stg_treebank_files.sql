select corpus, language, source_file, sha256, sentences, words, loaded_at
from {{ source('raw', 'treebank_files') }}
