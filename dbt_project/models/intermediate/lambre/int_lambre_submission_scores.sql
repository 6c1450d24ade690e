{{ incremental_by_submission() }}
-- L'AMBRE per run (SPEC section 9): rule_score = mean over the rules that fired in the run of
-- their pooled matches/(matches+failures) (lambre_rule_scores.score); 1.0 when none fired in a
-- parsed run, NULL for a run without a parse (as for the sentence score).
with parsed_runs as (
    select submission_id
    from {{ ref('int_output_words_parsed') }}
    where {{ changed_submission() }}
    group by submission_id
    having bool_or(head is not null)
),

per_run as (
    select submission_id, count(*) as rules_fired, avg(score) as rule_score
    from {{ ref('lambre_rule_scores') }}
    where {{ changed_submission() }}
    group by submission_id
)

select
    s.submission_id,
    coalesce(p.rules_fired, 0) as rules_fired,
    case when r.submission_id is not null then coalesce(p.rule_score, 1.0) end as rule_score
from {{ ref('stg_submissions') }} s
left join parsed_runs r using (submission_id)
left join per_run p using (submission_id)
where {{ changed_submission('s.submission_id') }}
