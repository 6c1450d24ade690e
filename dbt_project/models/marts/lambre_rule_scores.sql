{{ incremental_by_submission() }}
-- L'AMBRE per run and rule (SPEC section 9): how often each enabled rule that fired in the run
-- held (matches) and failed, pooled over the run's sentences; score = matches/(matches+failures).
-- A rule that never fired in a run has no row.
with pooled as (
    select
        submission_id,
        rule_id,
        any_value(language) as language,
        any_value(kind) as kind,
        any_value(feature) as feature,
        any_value(side) as side,
        count(*) filter (where passed) as matches,
        count(*) filter (where not passed) as failures,
        count(distinct sent_idx) as sentences_fired
    from {{ ref('int_lambre_checks') }}
    where {{ changed_submission() }}
    group by submission_id, rule_id
)

select
    p.submission_id,
    p.rule_id,
    s.corpus,
    s.team,
    s.run,
    s.campaign,
    p.language,
    p.kind,
    p.feature,
    p.side,
    p.matches,
    p.failures,
    p.matches / (p.matches + p.failures) as score,
    p.sentences_fired
from pooled p
join {{ ref('stg_submissions') }} s using (submission_id)
