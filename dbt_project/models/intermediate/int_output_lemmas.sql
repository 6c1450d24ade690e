{{ incremental_by_submission() }}
-- Output lemma sequences with punctuation removed and positions renumbered 1..m:
-- what DEA, BLEU and the accuracies compare with the reference analysis tree.
select
    submission_id,
    sent_idx,
    row_number() over (partition by submission_id, sent_idx order by word_idx)::integer as pos,
    lemma_lower
from {{ ref('int_output_words') }}
where not is_punct and {{ changed_submission() }}
