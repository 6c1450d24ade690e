-- L'AMBRE systems across campaigns (the paper's Figure 5): one row per (campaign,
-- corpus) with the corpus-level rule score of its system runs (submission_scores.rule_score:
-- count, median, mean, min, max) and of its reference run, the run of the team named by var
-- lambre_reference_team (human translations loaded like a system), where there is one (the
-- first by submission_id when there are several; reference_runs counts them). parsers
-- names what parsed the outputs whose rules were checked (the scores depend on its quality).
with runs as (
    select s.*, s.team = {{ string_literal(var('lambre_reference_team')) }} as is_reference
    from {{ ref('submission_scores') }} s
)

select
    r.campaign,
    r.corpus,
    any_value(d.campaign_date) as campaign_date,
    any_value(c.language) as language,
    any_value(c.has_reference) as has_reference_treebank,
    count(r.rule_score) filter (where not r.is_reference) as systems,
    median(r.rule_score) filter (where not r.is_reference) as rule_score_median,
    avg(r.rule_score) filter (where not r.is_reference) as rule_score_mean,
    min(r.rule_score) filter (where not r.is_reference) as rule_score_min,
    max(r.rule_score) filter (where not r.is_reference) as rule_score_max,
    min(r.submission_id) filter (where r.is_reference) as reference_submission_id,
    -- the score of the run named just above, not a mean over several reference runs
    arg_min(r.rule_score, r.submission_id) filter (where r.is_reference) as reference_rule_score,
    count(*) filter (where r.is_reference) as reference_runs,
    array_to_string(list_sort(list(distinct r.processor)), ', ') as parsers
from runs r
left join {{ ref('int_corpora') }} c on c.corpus = r.corpus
left join {{ ref('stg_campaign_dates') }} d on d.campaign = r.campaign
group by r.campaign, r.corpus
