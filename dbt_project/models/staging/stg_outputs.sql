select submission_id, sent_idx, sent_id, text as output_text, is_missing, line_no
from {{ source('raw', 'outputs') }}
