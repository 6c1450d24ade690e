{{ incremental_by_submission() }}
-- SPEC section 12: every run's statistics summed over its own list (observed), over each bootstrap
-- sample, and over each approximate-randomization trial's swapped sentences: one join of the
-- sentences with the draws of their list length, one group by. Pairs whose common sentences are
-- both whole runs (the usual case) combine these sums; submission_scores' intervals use them too.
select
    s.submission_id,
    any_value(s.corpus) as corpus,
    w.kind,
    w.sample,
    {{ significance_weighted_sums('w.weight') }}
from {{ ref('int_significance_sentences') }} s
join {{ ref('int_resample_weights') }} w on w.n = s.n and w.position = s.position
where {{ changed_submission('s.submission_id') }}
group by s.submission_id, w.kind, w.sample
