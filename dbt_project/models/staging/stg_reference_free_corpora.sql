-- Corpora without a reference treebank (load-outputs --no-reference).
select corpus, language, created_at
from {{ source('raw', 'reference_free_corpora') }}
