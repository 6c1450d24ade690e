-- Token lines of runs loaded as CoNLL-U (already processed by the user's parser).
select
    submission_id,
    sent_idx,
    line_no,
    id as token_id,
    case when id not like '%-%' and id not like '%.%' then id::integer end as word_id,
    form,
    lemma,  -- verbatim, as in stg_tokens: '_' is a lemma (UD goeswith words have it)
    nullif(upos, '_') as upos,
    nullif(feats, '_') as feats,
    case when id not like '%-%' and id not like '%.%' then head::integer end as head,
    nullif(deprel, '_') as deprel
from {{ source('raw', 'output_tokens') }}
