-- Non-root edges of the analysis trees (the root edge is no edge for distance, flux or DEA).
select
    corpus,
    sent_idx,
    head_pos,
    pos as dep_pos,
    pos - head_pos as distance,
    least(pos, head_pos) as span_start,
    greatest(pos, head_pos) as span_end,
    deprel,
    base_deprel
from {{ ref('int_analysis_words') }}
where head_pos > 0
