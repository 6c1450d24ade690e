{{ incremental_by_submission() }}
-- SPEC section 12: the realized sentences of every run, in treebank order, with the additive
-- statistics every significance metric is summed from (macros/significance.sql). position is
-- the 0-based place of the sentence in the run's own list (what numpy's indices point at) and n
-- the length of that list. Every statistic is a DOUBLE (the integer ones stay exact: sums of
-- whole numbers below 2^53), because summing doubles is what the resampling does most.
select
    s.submission_id,
    s.corpus,
    s.sent_idx,
    (row_number() over (partition by s.submission_id order by s.sent_idx) - 1)::integer as position,
    count(*) over (partition by s.submission_id)::integer as n,
    {%- for c in ['hyp_len', 'ref_len', 'm1', 'm2', 'm3', 'm4', 't1', 't2', 't3', 't4'] %}
        b.{{ c }}::double as {{ c }},
    {%- endfor %}
    -- sacrebleu's statistics (SPEC 13): NULL in every sentence of a run without reference text, 0 (adds
    -- nothing to a sum) for a sentence without text in a run that has some
    {%- for c in sacrebleu_bleu_fields() + chrf_fields() %}
        case when count(mt.sent_idx) over run > 0 then coalesce(mt.{{ c }}, 0)::double end as {{ c }},
    {%- endfor %}
    s.dea_matched::double as dea_matched,
    s.dea_edges::double as dea_edges,
{%- for score in significance_mean_scores() %}
    coalesce(s.{{ score }}, 0)::double as {{ score }}_sum,
    (s.{{ score }} is not null)::double as {{ score }}_n{{ ',' if not loop.last }}
{%- endfor %}
from {{ ref('sentence_scores') }} s
join {{ ref('int_sentence_accuracies') }} u using (submission_id, sent_idx)  -- the scored outputs
left join {{ ref('int_sentence_bleu_stats') }} b using (submission_id, sent_idx)  -- none without a reference
left join {{ ref('int_sacrebleu_stats') }} mt using (submission_id, sent_idx)  -- none without reference text
where not s.is_missing and {{ changed_submission('s.submission_id') }}
window run as (partition by s.submission_id)
