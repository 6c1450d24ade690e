{{ incremental_by_submission() }}
-- Scores that need Python UDFs (udfs/bleu.py, udfs/accuracy.py): BLEU with nltk's exact
-- arithmetic, and the edit-distance based string/tree/reordering accuracies. Sentence BLEU is
-- computed from the n-gram statistics (what nltk's sentence_bleu does too), so the n-grams are
-- counted once; `materialized` keeps DuckDB from inlining the UDF call into each field.
with scored as materialized (
    select
        submission_id,
        sent_idx,
        srlens_bleu_stats(out_lemmas, ref_lemmas) as bleu_stats,
        srlens_accuracies(ref_lemmas, ref_heads, out_lemmas) as acc
    from {{ ref('int_scored_outputs') }}
    where {{ changed_submission() }}
)

select
    submission_id,
    sent_idx,
    srlens_bleu_from_stats(bleu_stats.hyp_len, bleu_stats.ref_len, bleu_stats.m1, bleu_stats.m2, bleu_stats.m3,
                           bleu_stats.m4, bleu_stats.t1, bleu_stats.t2, bleu_stats.t3, bleu_stats.t4) as bleu,
    bleu_stats,
    acc
from scored
