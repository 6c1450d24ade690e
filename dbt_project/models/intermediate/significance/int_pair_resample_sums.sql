{{ incremental_by_corpus() }}
-- SPEC section 12: the same sums as int_submission_resample_sums for a side of a pair whose common
-- sentences are not its whole run (one run lacks sentences the other has): the side's sentences
-- restricted to those the other run realized, in treebank order (numpy's positions 0..n-1 of
-- that shorter list).
with lists as not materialized (
    select
        p.corpus,
        p.submission_a as submission_id,
        p.submission_b as restricted_to,
        {{ significance_list_part(['p.corpus', 'p.submission_a', 'p.submission_b']) }} as part,
        {{ significance_statistics_list('a', 'a.sent_idx') }} as statistics
    from {{ ref('int_significance_pairs') }} p
    join {{ ref('int_significance_sentences') }} a on a.submission_id = p.submission_a
    semi join {{ ref('int_significance_sentences') }} b
        on b.submission_id = p.submission_b and b.sent_idx = a.sent_idx
    where p.restricted_a <> '' and {{ changed_corpus('p.corpus') }}
    group by p.corpus, p.submission_a, p.submission_b, part
),

{{ significance_resampled_sums(['corpus', 'submission_id', 'restricted_to']) }}
