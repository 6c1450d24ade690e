select
    submission_id, corpus, team, run, campaign, source_file, format, matched_by,
    sha256, sentences, missing, loaded_at
from {{ source('raw', 'submissions') }}
