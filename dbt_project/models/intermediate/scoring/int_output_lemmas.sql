{{ config(materialized='view') }}
-- Output lemma sequences with punctuation removed and positions renumbered 1..m:
-- what DEA, BLEU and the accuracies compare with the reference analysis tree.
-- A view of int_scored_outputs' lists: writing these 5 million rows again as a table cost more
-- than unnesting the lists for each reader (docs/performance.md, "Scoring").
select
    submission_id,
    sent_idx,
    generate_subscripts(out_lemmas, 1)::integer as pos,
    unnest(out_lemmas) as lemma_lower
from {{ ref('int_scored_outputs') }}
