{{ incremental_by_submission() }}
-- One row per run: corpus BLEU (nltk corpus_bleu from summed statistics), micro DEA,
-- and the means of the sentence scores over the sentences the run has. Every input is a
-- per-submission model, so a run's row depends on its own rows only. sacreBLEU and chrF (SPEC 13):
-- sacrebleu's corpus scores from the statistics summed over the run's realized sentences, as
-- corpus_bleu is (a missing sentence is no hypothesis, not an empty one).
with mt as (
    select
        submission_id,
        srlens_sacrebleu_corpus_bleu({{ mt_stat_list(sacrebleu_bleu_fields(), 'sum({})') }}) as sacrebleu_bleu,
        srlens_chrf_from_stats({{ mt_stat_list(chrf_fields(), 'sum({})') }}) as chrf
    from {{ ref('int_sacrebleu_stats') }}
    where {{ changed_submission() }}
    group by submission_id
),

sentences as (
    select s.*, b.st
    from {{ ref('sentence_scores') }} s
    left join (
        select submission_id, sent_idx, struct_pack(hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4) as st
        from {{ ref('int_sentence_bleu_stats') }}
        where {{ changed_submission() }}
    ) b using (submission_id, sent_idx)
    where {{ changed_submission('s.submission_id') }}
)

select
    submission_id,
    any_value(corpus) as corpus,
    any_value(team) as team,
    any_value(run) as run,
    any_value(campaign) as campaign,
    count(*) filter (where not is_missing) as sentences,
    count(*) filter (where is_missing) as missing,
    srlens_bleu_from_stats(
        sum(st.hyp_len), sum(st.ref_len), sum(st.m1), sum(st.m2), sum(st.m3),
        sum(st.m4), sum(st.t1), sum(st.t2), sum(st.t3), sum(st.t4)
    ) as corpus_bleu,
    sum(dea_matched) / nullif(sum(dea_edges), 0) as dea,
    avg(bleu) as bleu_mean,
    avg(dea) as dea_mean,
    avg(simple_string_accuracy) as simple_string_accuracy_mean,
    avg(generation_string_accuracy) as generation_string_accuracy_mean,
    avg(simple_tree_accuracy) as simple_tree_accuracy_mean,
    avg(generation_tree_accuracy) as generation_tree_accuracy_mean,
    avg(understandability_accuracy) as understandability_accuracy_mean,
    avg(quality_accuracy) as quality_accuracy_mean,
    avg(reorder_accuracy) as reorder_accuracy_mean,
    avg(sentences.rule_score) as rule_score_mean,
    avg(fluency_z) as fluency_z_mean,  -- mean over the sentences with judgments; NULL without any
    avg(adequacy_z) as adequacy_z_mean,
    any_value(r.rule_score) as rule_score,  -- L'AMBRE corpus level: mean over rules of pooled ratios
    any_value(ci.corpus_bleu_ci_low) as corpus_bleu_ci_low,  -- SPEC 12 bootstrap intervals
    any_value(ci.corpus_bleu_ci_high) as corpus_bleu_ci_high,
    any_value(ci.corpus_bleu_boot_mean) as corpus_bleu_boot_mean,
    any_value(ci.dea_ci_low) as dea_ci_low,
    any_value(ci.dea_ci_high) as dea_ci_high,
    any_value(ci.dea_boot_mean) as dea_boot_mean,
    any_value(processor) as processor,
    any_value(bleu_nltk_version) as bleu_nltk_version,
    {{ submission_signature('any_value(processor)') }} as signature,  -- srlens/signature.py
    any_value(mt.sacrebleu_bleu) as sacrebleu_bleu,  -- NULL where the reference has no text
    any_value(mt.chrf) as chrf,
    {{ sacrebleu_signature('corpus_bleu') }} as sacrebleu_bleu_signature,
    {{ sacrebleu_signature('sentence_bleu') }} as sacrebleu_sentence_bleu_signature,
    {{ sacrebleu_signature('chrf') }} as chrf_signature
from sentences
left join {{ ref('int_lambre_submission_scores') }} r using (submission_id)
left join {{ ref('int_submission_intervals') }} ci using (submission_id)
left join mt using (submission_id)
group by submission_id
