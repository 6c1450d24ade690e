-- SPEC section 12: the same sums as int_submission_resample_sums for a side of a pair whose common
-- sentences are not its whole run (one run lacks sentences the other has): the side's sentences
-- restricted to those the other run realized, renumbered 0..n-1 in treebank order.
with restricted as (
    select
        p.submission_a as submission_id,
        p.submission_b as restricted_to,
        p.n,
        (row_number() over (partition by p.submission_a, p.submission_b order by a.sent_idx) - 1)::integer
            as position,
        a.* exclude (submission_id, corpus, sent_idx, position, n)
    from {{ ref('int_significance_pairs') }} p
    join {{ ref('int_significance_sentences') }} a on a.submission_id = p.submission_a
    semi join {{ ref('int_significance_sentences') }} b
        on b.submission_id = p.submission_b and b.sent_idx = a.sent_idx
    where p.restricted_a <> ''
)

select
    s.submission_id,
    s.restricted_to,
    w.kind,
    w.sample,
    {{ significance_weighted_sums('w.weight') }}
from restricted s
join {{ ref('int_resample_weights') }} w on w.n = s.n and w.position = s.position
group by s.submission_id, s.restricted_to, w.kind, w.sample
