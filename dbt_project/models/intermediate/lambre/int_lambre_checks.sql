{{ incremental_by_submission() }}
-- Every check of an enabled L'AMBRE rule on an output word with a head (SPEC section 9): one
-- row per (submission, sentence, word, rule) where the rule fired. The rules of the language
-- of the submission's corpus apply. Output words without a parse (processor 'aligned': head
-- NULL) are never checked.
--   agreement: fires on every instance of its link; fails only when both words carry the
--     feature and their value sets are disjoint (a word lacking it is a match, as in the
--     authors' scorer; this is what makes Figure 1's Gender rule fire and score 5/7);
--   argstruct: fires when the word on the rule's side carries the feature (skipped when it
--     lacks it); fails when the word carries a value outside the allowed values.
with words as (
    select w.*, t.language
    from {{ ref('int_output_words_parsed') }} w
    join {{ ref('stg_submissions') }} s using (submission_id)
    join {{ ref('int_corpora') }} t using (corpus)  -- reference-free corpora too
    where w.head is not null and {{ changed_submission('w.submission_id') }}
),

links as (
    select
        d.submission_id, d.sent_idx, d.language,
        d.word_idx, d.form, d.upos as dep_upos, d.deprel,
        h.word_idx as head_idx, h.form as head_form, h.upos as head_upos
    from words d
    join words h on h.submission_id = d.submission_id and h.sent_idx = d.sent_idx and h.word_idx = d.head
    where d.head > 0
),

rules as (
    select
        rule_id, language, kind, deprel, dep_upos, head_upos, feature, side, allowed_values,
        list_distinct(flatten(list_transform(allowed_values, lambda v: string_split(v, ','))))
            as allowed_flat
    from {{ ref('lambre_rules') }}
    where enabled
),

fired as (
    select
        l.*, r.rule_id, r.kind, r.feature, r.side, r.allowed_values, r.allowed_flat,
        df.value_set as dep_values, hf.value_set as head_values
    from links l
    join rules r
        on
            r.language = l.language and r.deprel = l.deprel
            and r.dep_upos = l.dep_upos and r.head_upos = l.head_upos
    left join {{ ref('int_lambre_output_features') }} df
        on
            df.submission_id = l.submission_id and df.sent_idx = l.sent_idx
            and df.word_idx = l.word_idx and df.feature = r.feature
    left join {{ ref('int_lambre_output_features') }} hf
        on
            hf.submission_id = l.submission_id and hf.sent_idx = l.sent_idx
            and hf.word_idx = l.head_idx and hf.feature = r.feature
)

select
    submission_id, sent_idx, language, rule_id, kind, feature, side, deprel, dep_upos, head_upos,
    word_idx, form, head_idx, head_form,
    array_to_string(dep_values, ',') as dep_value,
    array_to_string(head_values, ',') as head_value,
    allowed_values,
    case
        -- (a non-empty intersection rather than list_has_any, which sqlglot writes as `&&` for
        -- Spark; tests/packaging/test_portability.py)
        when kind = 'agreement'
            then
                dep_values is null or head_values is null
                or array_length(array_intersect(dep_values, head_values)) > 0
        when side = 'dep' then list_has_all(allowed_flat, dep_values)
        else list_has_all(allowed_flat, head_values)
    end as passed
from fired
where
    kind = 'agreement'
    or (side = 'dep' and dep_values is not null)
    or (side = 'head' and head_values is not null)
