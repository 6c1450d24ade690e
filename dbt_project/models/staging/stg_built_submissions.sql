select submission_id, loaded_at, corpus, team, campaign
from {{ source('meta', 'built_submissions') }}
