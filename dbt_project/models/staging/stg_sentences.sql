select corpus, sent_idx, sent_id, text as reference_text, comments, first_line
from {{ source('raw', 'sentences') }}
