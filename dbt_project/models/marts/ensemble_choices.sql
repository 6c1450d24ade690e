{{ incremental_by_corpus(tuning=true) }}
-- SPEC section 12, ensemble selection: how often the ensemble of each setup (ensemble_selection)
-- chose each candidate run, and the run's own micro DEA and corpus BLEU on the ensemble's
-- sentences (a sentence it did not realize counting as an empty output).
select
    r.corpus,
    r.tuning_corpus,
    r.submission_id,
    s.team,
    s.run,
    r.learned_from,
    r.ensemble_sentences,
    r.realized,
    r.chosen,
    r.chosen / r.ensemble_sentences as chosen_share,
    r.edges,
    r.matched,
    r.dea,
    r.corpus_bleu,
    r.single_rank = 1 as is_best_single
from {{ ref('int_ensemble_runs') }} r
join {{ ref('stg_submissions') }} s using (submission_id)
where {{ changed_corpus('r.corpus', tuning=true) }}
