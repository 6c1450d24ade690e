{{ incremental_by_submission() }}
-- SPEC section 12: every run's statistics summed over its own list (observed), over each bootstrap
-- sample, and over each approximate-randomization trial's swapped sentences: numpy's draws for the
-- run's list length as weight matrices, one matrix product per run and kind (udfs/resample.py).
-- Pairs whose common sentences are both whole runs (the usual case) combine these sums;
-- submission_scores' intervals use them too.
with lists as not materialized (
    select
        s.submission_id,
        {{ significance_list_part(['s.submission_id']) }} as part,
        any_value(s.corpus) as corpus,
        {{ significance_statistics_list('s', 's.position') }} as statistics
    from {{ ref('int_significance_sentences') }} s
    where {{ changed_submission('s.submission_id') }}
    group by s.submission_id, part
),

{{ significance_resampled_sums(['submission_id', 'corpus']) }}
