-- Mean flux weight needs an exact maximum matching per position: a Python UDF (udfs/flux.py).
select
    corpus,
    sent_idx,
    srlens_mean_flux_weight(list(head_pos order by pos)) as mean_flux_weight
from {{ ref('int_analysis_words') }}
group by all
