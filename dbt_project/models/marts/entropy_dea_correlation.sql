{{ incremental_by_submission() }}
-- SPEC section 10: per submission, Spearman rho (scipy, udfs/stats.py) across base relations
-- between the head-direction entropy H(d) (relation_entropy) and DEA_d (dea_by_relation).
-- H(d) is taken from the submission's own corpus unless the var entropy_corpus maps its corpus to
-- another loaded corpus, e.g. --var 'entropy_corpus={"en_ewt_test": "en_ewt_train"}' (SPEC 2 allows a
-- train split). Relations without an entropy in that corpus are left out; relations counts the rest.
-- rho and p are NULL below 3 relations or when either side is constant.
{%- set mapping = mapping_var('entropy_corpus') %}

with mapping (corpus, entropy_corpus) as (
    {%- if mapping %}
        values {% for corpus, other in mapping -%}
        ({{ string_literal(corpus) }}, {{ string_literal(other) }}){{ ', ' if not loop.last }}
    {%- endfor %}
    {%- else %}
        select null::varchar, null::varchar
        where false
    {%- endif %}
),

submissions as (
    select
        s.submission_id, s.corpus, s.team, s.run, s.campaign,
        coalesce(m.entropy_corpus, s.corpus) as entropy_corpus
    from {{ ref('stg_submissions') }} s
    left join mapping m using (corpus)
    where {{ changed_submission('s.submission_id') }}
),

relations as (
    select s.submission_id, d.relation, d.dea, e.entropy
    from submissions s
    join {{ ref('dea_by_relation') }} d using (submission_id)
    join {{ ref('relation_entropy') }} e on e.corpus = s.entropy_corpus and e.relation = d.relation
),

tests as (
    select
        submission_id,
        srlens_spearman(list(entropy order by relation), list(dea order by relation)) as r
    from relations
    group by submission_id
)

select
    s.submission_id,
    s.corpus,
    s.team,
    s.run,
    s.campaign,
    s.entropy_corpus,
    coalesce(t.r.n, 0) as relations,
    t.r.rho,
    t.r.p_value
from submissions s
left join tests t using (submission_id)
