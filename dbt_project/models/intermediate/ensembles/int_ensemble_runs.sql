{{ incremental_by_corpus(tuning=true) }}
-- SPEC section 12, ensemble selection, step 2: every candidate run of a setup (corpus,
-- tuning_corpus) on the ensemble's sentences (those with at least one candidate): how often the
-- ensemble chose it, and its own micro DEA and corpus BLEU there. A sentence the run did not
-- realize counts as an empty output: its edges unmatched, and in BLEU an empty hypothesis
-- (hyp_len 0, its reference length, no match, nltk's totals of 1), so that every run is scored
-- on the same sentences as the ensemble. single_rank 1 is the best single run: the highest micro
-- DEA, then the smaller submission_id.
with candidates as (
    select * from {{ ref('int_ensemble_candidates') }}
    where {{ changed_corpus('corpus', tuning=true) }}
),

sentences as (
    -- the chosen candidate carries the sentence's reference edges and length
    select corpus, tuning_corpus, sent_idx, dea_edges, ref_len
    from candidates
    where choice_rank = 1
),

runs as (
    select distinct corpus, tuning_corpus, submission_id, learned_from
    from candidates
),

scored as (
    select
        r.corpus, r.tuning_corpus, r.submission_id, r.learned_from, s.sent_idx,
        c.submission_id is not null as realized,
        c.choice_rank = 1 as chosen,
        s.dea_edges,
        coalesce(c.dea_matched, 0) as dea_matched,
        coalesce(c.hyp_len, 0) as hyp_len,
        s.ref_len,
        coalesce(c.m1, 0) as m1, coalesce(c.m2, 0) as m2, coalesce(c.m3, 0) as m3, coalesce(c.m4, 0) as m4,
        coalesce(c.t1, 1) as t1, coalesce(c.t2, 1) as t2, coalesce(c.t3, 1) as t3, coalesce(c.t4, 1) as t4
    from runs r
    join sentences s using (corpus, tuning_corpus)
    left join candidates c
        on
            c.corpus = r.corpus and c.tuning_corpus = r.tuning_corpus
            and c.submission_id = r.submission_id and c.sent_idx = s.sent_idx
)

select
    corpus,
    tuning_corpus,
    submission_id,
    any_value(learned_from) as learned_from,
    count(*) as ensemble_sentences,
    count(*) filter (where realized) as realized,
    count(*) filter (where chosen) as chosen,
    sum(dea_edges)::bigint as edges,
    sum(dea_matched)::bigint as matched,
    sum(dea_matched) / nullif(sum(dea_edges), 0) as dea,
    srlens_bleu_from_stats(
        sum(hyp_len)::bigint, sum(ref_len)::bigint, sum(m1)::bigint, sum(m2)::bigint,
        sum(m3)::bigint, sum(m4)::bigint, sum(t1)::bigint, sum(t2)::bigint,
        sum(t3)::bigint, sum(t4)::bigint
    ) as corpus_bleu,
    row_number() over (
        partition by corpus, tuning_corpus
        order by
            sum(dea_matched) / nullif(sum(dea_edges), 0) desc nulls last,
            submission_id
    ) as single_rank
from scored
group by corpus, tuning_corpus, submission_id
