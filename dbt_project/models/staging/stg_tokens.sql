-- Typed CoNLL-U columns: '_' becomes NULL, ids and heads become integers.
select
    corpus,
    sent_idx,
    line_no,
    id as token_id,
    case
        when id like '%-%' then 'multiword'
        when id like '%.%' then 'empty'
        else 'word'
    end as token_kind,
    case when id not like '%-%' and id not like '%.%' then id::integer end as word_id,
    form,
    lemma,
    nullif(upos, '_') as upos,
    nullif(xpos, '_') as xpos,
    nullif(feats, '_') as feats,
    case when id not like '%-%' and id not like '%.%' then head::integer end as head,
    nullif(deprel, '_') as deprel,
    nullif(deps, '_') as deps,
    nullif(misc, '_') as misc
from {{ source('raw', 'tokens') }}
