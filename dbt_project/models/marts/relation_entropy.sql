-- SPEC section 2: head-direction entropy per treebank and base relation (0 log 0 = 0).
with counts as (
    select
        corpus,
        base_deprel as relation,
        count(*) filter (where distance < 0) as left_count,
        count(*) filter (where distance > 0) as right_count
    from {{ ref('int_analysis_edges') }}
    group by all
),

shares as (
    select
        *, left_count / (left_count + right_count) as p_left,
        right_count / (left_count + right_count) as p_right
    from counts
)

select
    corpus,
    relation,
    left_count,
    right_count,
    left_count + right_count as occurrences,
    0.0  -- written as 0.0 - ... so that a fixed order gives 0.0, not -0.0
    - (case when p_left > 0 then p_left * log2(p_left) else 0 end)
    - (case when p_right > 0 then p_right * log2(p_right) else 0 end) as entropy
from shares
