{{ incremental_by_submission() }}
-- SPEC section 12: 95% bootstrap intervals of each run's corpus BLEU and micro DEA over its own
-- realized sentences: the 2.5th and 97.5th percentiles (linear interpolation, numpy's default) of
-- the B resampled scores, and their mean. Samples without edges have no DEA and are left out.
-- The mean adds the samples in their order: a plain avg adds in the table's order, and where a run's
-- rows straddle two row groups, two threads' partial sums, so its last bits depended on the threads.
with samples as (
    select submission_id, sample, {{ significance_metric_columns('s.{}') }}
    from {{ ref('int_submission_resample_sums') }} s
    where kind = 'bootstrap' and {{ changed_submission('s.submission_id') }}
)

select
    submission_id,
    quantile_cont(corpus_bleu, 0.025) as corpus_bleu_ci_low,
    quantile_cont(corpus_bleu, 0.975) as corpus_bleu_ci_high,
    avg(corpus_bleu order by sample) as corpus_bleu_boot_mean,
    quantile_cont(dea, 0.025) as dea_ci_low,
    quantile_cont(dea, 0.975) as dea_ci_high,
    avg(dea order by sample) as dea_boot_mean
from samples
group by submission_id
