{{ incremental_by_corpus(tuning=true) }}
-- SPEC section 12, ensemble selection (the framework paper, section 6): per corpus, and per
-- (target, tuning) pair of var ensemble_tuning_corpus, the micro DEA and corpus BLEU of the outputs
-- the ensemble chooses (int_ensemble_candidates), next to the best single run and the oracle, all
-- on the same sentences: those at least one candidate run realized.
--   oracle: each sentence takes a candidate with the most matched edges (an upper bound)
--   best single: the run with the highest micro DEA there (ties: smaller submission_id), a
--   sentence it did not realize counting as an empty output (int_ensemble_runs)
with candidates as (
    select * from {{ ref('int_ensemble_candidates') }}
    where {{ changed_corpus('corpus', tuning=true) }}
),

ensemble_runs as (
    select * from {{ ref('int_ensemble_runs') }}
    where {{ changed_corpus('corpus', tuning=true) }}
),

chosen as (
    select
        corpus, tuning_corpus,
        count(*) as sentences,
        sum(dea_edges)::bigint as edges,
        sum(dea_matched)::bigint as ensemble_matched,
        srlens_bleu_from_stats(
            sum(hyp_len)::bigint, sum(ref_len)::bigint, sum(m1)::bigint, sum(m2)::bigint,
            sum(m3)::bigint, sum(m4)::bigint, sum(t1)::bigint, sum(t2)::bigint,
            sum(t3)::bigint, sum(t4)::bigint
        ) as ensemble_bleu
    from candidates
    where choice_rank = 1
    group by all
),

oracle as (
    select corpus, tuning_corpus, sum(best)::bigint as oracle_matched
    from (
        select corpus, tuning_corpus, sent_idx, max(dea_matched) as best
        from candidates
        group by all
    )
    group by all
),

runs as (
    select
        corpus, tuning_corpus,
        count(*) as runs,
        count(learned_from) as runs_learned,
        count(*) filter (where chosen > 0) as runs_chosen,
        max(submission_id) filter (where single_rank = 1) as best_single_submission  -- the one row
    from ensemble_runs
    group by all
)

select
    c.corpus,
    c.tuning_corpus,
    case when c.tuning_corpus = c.corpus then 'leave_one_out' else 'tuning_corpus' end as learned_on,
    r.runs,
    r.runs_learned,
    r.runs_chosen,
    c.sentences,
    c.edges,
    c.ensemble_matched,
    c.ensemble_matched / nullif(c.edges, 0) as ensemble_dea,
    c.ensemble_bleu,
    r.best_single_submission,
    b.matched as best_single_matched,
    b.dea as best_single_dea,
    b.corpus_bleu as best_single_bleu,
    o.oracle_matched,
    o.oracle_matched / nullif(c.edges, 0) as oracle_dea
from chosen c
join oracle o using (corpus, tuning_corpus)
join runs r using (corpus, tuning_corpus)
join ensemble_runs b
    on b.corpus = c.corpus and b.tuning_corpus = c.tuning_corpus and b.submission_id = r.best_single_submission
