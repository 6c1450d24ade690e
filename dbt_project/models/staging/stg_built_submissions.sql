select submission_id, loaded_at, corpus
from {{ source('meta', 'built_submissions') }}
