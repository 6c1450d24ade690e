{{ incremental_by_submission() }}
-- The string/tree/reordering accuracies (SPEC 5 and 7) from the counts of srlens_accuracy_counts
-- (udfs/accuracy.py: the word mapping, the treelets and their alignments, per sentence from the
-- lemma lists of int_scored_outputs). The formulas are udfs/accuracy.py sentence_accuracies', with
-- the same float operations in the same order (constants as DOUBLE literals). A run of a
-- reference-free corpus is counted against an empty reference: no accuracy, its words all inserted.
-- Sentence BLEU is int_sentence_bleu_stats': this model reads nothing the other scoring models make,
-- so its Python UDF (one core: the GIL) can run beside their SQL. dbt starts the models that become
-- ready together in the order of their names: int_dea_edges and this one first, then
-- int_sentence_bleu_stats (before this model was split off, the UDF ran after both, on one core alone).
-- `materialized` keeps DuckDB from calling the UDF once per field read from its result.
with counted as materialized (
    select
        submission_id,
        sent_idx,
        len(coalesce(ref_lemmas, [])) as n,
        srlens_accuracy_counts(coalesce(ref_lemmas, []), coalesce(ref_heads, []), out_lemmas) as accuracy_counts
    from {{ ref('int_scored_outputs') }}
    where {{ changed_submission() }}
),

counts as (
    select submission_id, sent_idx, n, accuracy_counts.*
    from counted
),

accuracies as (
    select
        *,
        case when n > 0 then 1 - (tree_ins + tree_del + tree_sub) / n end as sta
    from counts
)

select
    submission_id,
    sent_idx,
    struct_pack(
        simple_string_accuracy := case when n > 0 then 1 - (string_ins + string_del + string_sub) / n end,
        generation_string_accuracy
        := case when n > 0 then 1 - (string_ins + string_del + string_sub - string_moves) / n end,
        simple_tree_accuracy := sta,
        generation_tree_accuracy := case when n > 0 then 1 - (tree_ins + tree_del + tree_sub - tree_moves) / n end,
        -- Bangalore et al. 2000, eq. (4) and (5); S is the tree substitution count.
        understandability_accuracy := (1.3147e0 * sta - 0.1039e0 * tree_sub - 0.4458e0) / 0.8689e0,
        quality_accuracy := (1.0192e0 * sta - 0.0869e0 * tree_sub - 0.3553e0) / 0.6639e0,
        reorder_accuracy := case when reorder_total > 0 then reorder_correct / reorder_total end,
        string_ins := string_ins,
        string_del := string_del,
        string_sub := string_sub,
        string_moves := string_moves,
        tree_ins := tree_ins,
        tree_del := tree_del,
        tree_sub := tree_sub,
        tree_moves := tree_moves,
        reorder_correct := reorder_correct,
        reorder_total := reorder_total
    ) as acc
from accuracies
