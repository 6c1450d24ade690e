-- One row per treebank: means and sample standard deviations of the section-1 metrics, and
-- where its trees come from (SPEC 13: parsed trees say so, with the parser).
{% set reference_parsers = mapping_var('reference_parsers') %}
with parsers as (
    select null::varchar as language, null::varchar as processor
    where false
    {% for language, processor_id in reference_parsers %}
        union all select {{ string_literal(language) }}, {{ string_literal(processor_id) }}
    {% endfor %}
)

select
    c.corpus,
    case when t.reference = 'text' then 'parsed' else 'treebank' end as reference,
    case when t.reference = 'text' then p.processor end as reference_parser,
    count(*) as sentences,
    sum(tree_length)::bigint as words,  -- a sum is HUGEINT, which many BI tools cannot read
    avg(tree_depth) as tree_depth_mean,
    stddev_samp(tree_depth) as tree_depth_sd,
    avg(tree_length) as tree_length_mean,
    stddev_samp(tree_length) as tree_length_sd,
    avg(mean_dependency_distance) as mdd_mean,
    stddev_samp(mean_dependency_distance) as mdd_sd,
    avg(mean_flux_size) as mfs_mean,
    stddev_samp(mean_flux_size) as mfs_sd,
    avg(mean_flux_weight) as mfw_mean,
    stddev_samp(mean_flux_weight) as mfw_sd,
    avg(mean_arity) as mean_arity_mean,
    stddev_samp(mean_arity) as mean_arity_sd,
    -- of the sentences that have an analysis tree: one of only punctuation (is_projective NULL)
    -- is neither projective nor not, so it counts in neither part of the share
    100.0 * avg(case when is_projective then 0.0 when not is_projective then 1.0 end) as nonprojective_pct
from {{ ref('sentence_complexity') }} as c
inner join {{ ref('stg_treebank_files') }} as t on c.corpus = t.corpus
left join parsers as p on t.language = p.language
group by c.corpus, t.reference, p.processor
