{{ incremental_by_submission() }}
-- Every failed L'AMBRE check, to read: the rule, the word and its head with their values of
-- the feature, and the sentence (output text, sent_id). One row per (submission, sentence,
-- word, rule). The word the rule constrains is the dependent, except for argstruct rules with
-- side 'head'.
select
    c.submission_id,
    s.corpus,
    s.team,
    s.run,
    o.sent_id,
    c.sent_idx,
    c.rule_id,
    c.kind,
    c.feature,
    c.side,
    c.deprel,
    c.word_idx,
    c.form,
    c.dep_upos,
    c.dep_value,
    c.head_idx,
    c.head_form,
    c.head_upos,
    c.head_value,
    c.allowed_values,
    o.output_text
from {{ ref('int_lambre_checks') }} c
join {{ ref('stg_outputs') }} o using (submission_id, sent_idx)
join {{ ref('stg_submissions') }} s using (submission_id)
where not c.passed and {{ changed_submission('c.submission_id') }}
