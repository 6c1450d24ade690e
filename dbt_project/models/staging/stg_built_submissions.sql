select submission_id, loaded_at
from {{ source('meta', 'built_submissions') }}
