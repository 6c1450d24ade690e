-- L'AMBRE rules across campaigns (the paper's Figure 6): one row per (campaign,
-- language, rule_id) with the median and mean of the rule's score over the campaign's system runs
-- of that language in which the rule fired (lambre_rule_scores), and the same for the runs of the
-- reference team (var lambre_reference_team: human translations loaded as a run), kept apart.
-- campaign_date is NULL until `srlens campaign NAME --date` sets it.
with scores as (
    select r.*, r.team = {{ string_literal(var('lambre_reference_team')) }} as is_reference
    from {{ ref('lambre_rule_scores') }} r
)

select
    s.campaign,
    s.language,
    s.rule_id,
    any_value(d.campaign_date) as campaign_date,
    any_value(s.kind) as kind,
    any_value(s.feature) as feature,
    count(*) filter (where not s.is_reference) as submissions,
    median(s.score) filter (where not s.is_reference) as median_score,
    avg(s.score) filter (where not s.is_reference) as mean_score,
    sum(s.failures) filter (where not s.is_reference) as failures,
    sum(s.matches + s.failures) filter (where not s.is_reference) as checks,
    count(*) filter (where s.is_reference) as reference_submissions,
    avg(s.score) filter (where s.is_reference) as reference_score
from scores s
left join {{ ref('stg_campaign_dates') }} d using (campaign)
group by s.campaign, s.language, s.rule_id
