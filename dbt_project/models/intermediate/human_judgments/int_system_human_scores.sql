-- One human score per run and criterion, from one source per (campaign, corpus,
-- criterion), so that a correlation never mixes units: the system-level scores loaded with
-- `load-human --level system` when any run there has one (runs without one then have no human
-- score on that criterion); otherwise, when only sentence-level judgments exist, the mean over
-- each run's sentences of their annotator-mean z-score (int_human_scores).
-- orientation: 'higher' (higher is better) or 'lower' (an error penalty such as MQM), as the
-- system-level files record it per criterion; 'higher' for a criterion only judged per sentence.
with given as (
    select
        submission_id, campaign, corpus, team, run, criterion, score as human_score, orientation,
        'system' as human_source
    from {{ ref('stg_system_human_scores') }}
    where submission_id is not null
),

orientations as (
    select criterion, max(orientation) as orientation from given
    group by criterion
),

from_sentences as (
    select
        submission_id, any_value(campaign) as campaign, any_value(corpus) as corpus,
        any_value(team) as team, any_value(run) as run, criterion, avg(z_mean) as human_score
    from {{ ref('int_human_scores') }}
    where z_mean is not null
    group by submission_id, criterion
)

select * from given
union all
select
    f.submission_id, f.campaign, f.corpus, f.team, f.run, f.criterion, f.human_score,
    coalesce(o.orientation, 'higher') as orientation, 'sentence z mean' as human_source
from from_sentences f
left join orientations o using (criterion)
where not exists (
    select 1 from given g
    where g.campaign = f.campaign and g.corpus = f.corpus and g.criterion = f.criterion
)
