{{ incremental_by_submission() }}
-- Scores that need Python UDFs (udfs/bleu.py, udfs/accuracy.py): BLEU with nltk's exact
-- arithmetic, and the edit-distance based string/tree/reordering accuracies.
select
    submission_id,
    sent_idx,
    srlens_sentence_bleu(out_lemmas, ref_lemmas) as bleu,
    srlens_bleu_stats(out_lemmas, ref_lemmas) as bleu_stats,
    srlens_accuracies(ref_lemmas, ref_heads, out_lemmas) as acc
from {{ ref('int_scored_outputs') }}
where {{ changed_submission() }}
