{{ incremental_by_submission() }}
-- L'AMBRE per output sentence (SPEC section 9): rule_score = unweighted mean over the rules that
-- fired in the sentence of matches/(matches+failures); 1.0 when none fired. NULL when it cannot
-- be checked: the sentence is missing, or the run has no parse (processor 'aligned' gives words
-- no heads, so no rule could fire, and 1.0 would claim a check that never happened).
with per_rule as (
    select
        submission_id, sent_idx, rule_id,
        count(*) filter (where passed) as matches,
        count(*) filter (where not passed) as failures
    from {{ ref('int_lambre_checks') }}
    where {{ changed_submission() }}
    group by all
),

per_sentence as (
    select
        submission_id, sent_idx,
        count(*) as rules_fired,
        sum(matches) as matches,
        sum(failures) as failures,
        avg(matches / (matches + failures)) as score
    from per_rule
    group by all
),

parsed_runs as (
    select submission_id
    from {{ ref('int_output_words_parsed') }}
    where {{ changed_submission() }}
    group by submission_id
    having bool_or(head is not null)
)

select
    o.submission_id,
    o.sent_idx,
    coalesce(p.rules_fired, 0) as rules_fired,
    coalesce(p.matches, 0) as rule_matches,
    coalesce(p.failures, 0) as rule_failures,
    case
        when o.is_missing or r.submission_id is null then null
        else coalesce(p.score, 1.0)
    end as rule_score
from {{ ref('stg_outputs') }} o
left join parsed_runs r using (submission_id)
left join per_sentence p using (submission_id, sent_idx)
where {{ changed_submission('o.submission_id') }}
