{{ incremental_by_corpus() }}
-- SPEC section 12: every ordered pair (a, b) of different runs on one corpus, compared on the n
-- sentences both realized. A side is "full" when that common list is its whole run: its resampled
-- sums are then the run's own (int_submission_resample_sums, shared by all its pairs); otherwise
-- they are computed for the pair (int_pair_resample_sums). restricted_to names the list a side's
-- sums use: '' for the full run, else the other run of the pair.
with sentences as (
    select * from {{ ref('int_significance_sentences') }}
    where {{ changed_corpus() }}
),

runs as (
    select submission_id, any_value(corpus) as corpus, any_value(n) as n
    from sentences
    group by submission_id
),

common as (
    select a.submission_id as submission_a, b.submission_id as submission_b, count(*)::integer as n
    from sentences a
    join sentences b
        on b.corpus = a.corpus and b.sent_idx = a.sent_idx and b.submission_id <> a.submission_id
    group by all
)

select
    ra.corpus,
    ra.submission_id as submission_a,
    rb.submission_id as submission_b,
    coalesce(c.n, 0) as n,
    case when coalesce(c.n, 0) = ra.n then '' else rb.submission_id end as restricted_a,
    case when coalesce(c.n, 0) = rb.n then '' else ra.submission_id end as restricted_b
from runs ra
join runs rb on rb.corpus = ra.corpus and rb.submission_id <> ra.submission_id
left join common c on c.submission_a = ra.submission_id and c.submission_b = rb.submission_id
