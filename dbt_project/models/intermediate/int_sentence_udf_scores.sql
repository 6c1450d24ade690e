{{ incremental_by_submission() }}
-- Scores that need Python UDFs: sentence BLEU with nltk's exact arithmetic (udfs/bleu.py) from the
-- n-gram statistics counted in SQL (int_sentence_bleu_stats), and the edit-distance based
-- string/tree/reordering accuracies (udfs/accuracy.py). `materialized` keeps DuckDB from inlining
-- the UDF call into each field.
with scored as materialized (
    select
        submission_id,
        sent_idx,
        srlens_accuracies(ref_lemmas, ref_heads, out_lemmas) as acc
    from {{ ref('int_scored_outputs') }}
    where {{ changed_submission() }}
)

select
    submission_id,
    sent_idx,
    srlens_bleu_from_stats(b.hyp_len, b.ref_len, b.m1, b.m2, b.m3, b.m4, b.t1, b.t2, b.t3, b.t4) as bleu,
    struct_pack(hyp_len := b.hyp_len, ref_len := b.ref_len, m1 := b.m1, m2 := b.m2, m3 := b.m3, m4 := b.m4,
                t1 := b.t1, t2 := b.t2, t3 := b.t3, t4 := b.t4) as bleu_stats,
    acc
from scored
-- (left: a run of a reference-free corpus has no BLEU statistics, so bleu and bleu_stats are NULL)
left join {{ ref('int_sentence_bleu_stats') }} b using (submission_id, sent_idx)
