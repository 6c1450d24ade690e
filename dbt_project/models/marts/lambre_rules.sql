-- L'AMBRE morphosyntactic rules (SPEC section 9), one row per rule_id: the rules extracted from
-- each language's rule treebank (int_lambre_rule_corpora), changed or disabled by rows loaded
-- with `srlens load-rules`, plus the manual rules those files add. rule_id is a readable
-- function of the defining columns (language|kind|deprel|DEP>HEAD|feature[|side], srlens/definitions.py), so a manual
-- override keeps matching its rule across rebuilds. Only enabled rules are checked.
with extracted as (
    select
        language, 'agreement' as kind, deprel, dep_upos, head_upos, feature, 'both' as side,
        null::varchar[] as allowed_values, support, corpus as source_corpus, min_count,
        share, null::double as kl, prior_support, total_support
    from {{ ref('int_lambre_agreement_candidates') }}
    where kept
    union all
    select
        language, 'argstruct' as kind, deprel, dep_upos, head_upos, feature, side,
        allowed_values, local_count as support, corpus as source_corpus, 100 as min_count,
        null::double as share, kl, null::bigint as prior_support, null::bigint as total_support
    from {{ ref('int_lambre_argstruct_candidates') }}
    where kept
),

extracted_ids as (
    select
        {{ lambre_rule_id() }} as rule_id,  -- the format of srlens/definitions.py
        *
    from extracted
),

manual as (
    select * from {{ ref('stg_lambre_manual_rules') }}
    where file_rank = 1
)

select
    e.rule_id, e.language, e.kind, e.deprel, e.dep_upos, e.head_upos, e.feature, e.side,
    coalesce(m.allowed_values, e.allowed_values) as allowed_values,
    e.support::bigint as support,  -- sums are HUGEINT in DuckDB, which many BI tools cannot read
    'extracted' as source,
    coalesce(m.enabled, true) as enabled,
    m.rule_id is not null as overridden,
    e.allowed_values as extracted_allowed_values,
    e.source_corpus, e.min_count, e.share, e.kl, e.prior_support::bigint as prior_support,
    e.total_support::bigint as total_support,
    m.source_file as manual_file, m.line_no as manual_line, m.comment
from extracted_ids e
left join manual m using (rule_id)
union all
-- A manual argstruct row without allowed values can only override an extracted rule: when
-- there is none to override, it is listed but not enabled (there is nothing to check against).
select
    m.rule_id, m.language, m.kind, m.deprel, m.dep_upos, m.head_upos, m.feature, m.side,
    m.allowed_values,
    null::bigint as support,
    'manual' as source,
    m.enabled and (m.kind = 'agreement' or m.allowed_values is not null) as enabled,
    false as overridden,
    null::varchar[] as extracted_allowed_values,
    null as source_corpus, null::integer as min_count, null::double as share, null::double as kl,
    null::bigint as prior_support, null::bigint as total_support,
    m.source_file as manual_file, m.line_no as manual_line, m.comment
from manual m
where m.rule_id not in (select rule_id from extracted_ids)
