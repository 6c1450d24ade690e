{{ incremental_by_corpus(tuning=true) }}
-- SPEC section 12, ensemble selection, step 1: every candidate output of every sentence, with
-- its expected DEA and whether the ensemble chooses it (choice_rank = 1).
--
-- A setup is (corpus, tuning_corpus): every corpus with realized sentences learns on itself,
-- leaving the sentence out (tuning_corpus = corpus), and each pair of var ensemble_tuning_corpus
-- ({"target": "tuning"}) learns on the tuning corpus. The candidates of sentence x are the runs
-- of the corpus that realized x, less those of var ensemble_exclude_runs; a corpus without a
-- reference treebank has none. Each run learns from its teacher: itself
-- (leave-one-out), or the tuning corpus's run with the same team and run name (the same
-- campaign first, then the smaller submission_id); none: it learns nothing.
--
--   DEA_r(S) = (M_r - m_r(x)) / (E_r - e_r(x))   learned matched / edges of base relation r
--   (the teacher's totals; m_r(x), e_r(x), x's own counts, are subtracted only when leaving out)
--   expected(S, x) = sum_r c_r(x) * DEA_r(S) / sum_r c_r(x),  c_r(x) = r-edges of x's reference
-- A relation with no learned edge takes the run's learned overall DEA, and so does a sentence
-- without edges. The sum runs in relation order (list_sum of an ordered list): a run and its
-- exact copy get bit-equal values, so the tie-breaks, not float noise, decide between them.
-- Choice: highest expected DEA, then higher learned overall DEA, then smaller submission_id; a
-- run with nothing to learn from (NULL) comes after every run with a value.
-- The millions of (run, sentence, relation) rows are joined and grouped on integers (run_no,
-- setup_no), not on the string ids: about a quarter less CPU (docs/performance.md, "Scoring").
{%- set tuning = mapping_var('ensemble_tuning_corpus') %}
{%- set excluded = var('ensemble_exclude_runs') %}
{%- if excluded is string or excluded is mapping or excluded is not iterable %}
    {{ exceptions.raise_compiler_error("var ensemble_exclude_runs must be a JSON list of submission ids") }}
{%- endif %}

with tuning (corpus, tuning_corpus) as (
    {%- if tuning %}
        values {% for target, tuning_corpus in tuning -%}
        ({{ string_literal(target) }}, {{ string_literal(tuning_corpus) }}){{ ', ' if not loop.last }}
    {%- endfor %}
    {%- else %}
        select null::varchar, null::varchar
        where false
    {%- endif %}
),

excluded (submission_id) as (
    {%- if excluded %}
        values {% for id in excluded -%}
        ({{ string_literal(id) }}){{ ', ' if not loop.last }}
    {%- endfor %}
    {%- else %}
        select null::varchar
        where false
    {%- endif %}
),

-- A run's realized sentences with their additive statistics (BLEU's ten, DEA's matched and edges).
realized as (
    select
        submission_id, corpus, sent_idx, dea_matched, dea_edges,
        hyp_len, ref_len, m1, m2, m3, m4, t1, t2, t3, t4
    from {{ ref('int_significance_sentences') }}
),

runs as (
    select
        s.submission_id, s.corpus, s.team, s.run, s.campaign,
        r.edges, r.matched,
        row_number() over (order by s.submission_id) as run_no
    from {{ ref('stg_submissions') }} s
    join (
        select submission_id, sum(dea_edges) as edges, sum(dea_matched) as matched
        from realized
        group by submission_id
    ) r
        using (submission_id)
    -- a run of a reference-free corpus has no DEA to learn or expect: its choices would be mere
    -- submission_id tie-breaks, so such corpora have no ensemble
    join {{ ref('int_corpora') }} c on c.corpus = s.corpus and c.has_reference
),

-- the setups of the corpora this build computes (incremental_by_corpus: all on a full build)
setups as (
    select corpus, tuning_corpus, row_number() over (order by corpus, tuning_corpus) as setup_no
    from (
        select distinct corpus, corpus as tuning_corpus from runs
        where {{ changed_corpus('corpus', tuning=true) }}
        union all
        select corpus, tuning_corpus from tuning
        where
            corpus in (select corpus from runs) and tuning_corpus <> corpus
            and {{ changed_corpus('corpus', tuning=true) }}
    )
),

teachers as (
    select
        st.setup_no, st.corpus, st.tuning_corpus, s.submission_id, s.run_no,
        st.tuning_corpus = st.corpus as leave_out,
        case when st.tuning_corpus = st.corpus then s.submission_id else t.submission_id end as learned_from,
        case when st.tuning_corpus = st.corpus then s.run_no else t.run_no end as learned_no
    from setups st
    join runs s on s.corpus = st.corpus
    left join runs t
        on st.tuning_corpus <> st.corpus and t.corpus = st.tuning_corpus and t.team = s.team and t.run = s.run
    where s.submission_id not in (select submission_id from excluded)
    qualify row_number() over (
        partition by st.corpus, st.tuning_corpus, s.submission_id
        order by t.campaign = s.campaign desc nulls last, t.submission_id
    ) = 1
),

-- A run's edges and matches of one base relation in one sentence, and over all its sentences
-- (the runs of the setups' corpora).
sentence_relations as (
    select
        r.run_no, e.sent_idx, e.base_deprel as relation,
        count(*) as edges, count(*) filter (where e.matched) as matched
    from {{ ref('int_dea_edges') }} e
    join (
        select submission_id, run_no from runs
        where corpus in (select corpus from setups) or corpus in (select tuning_corpus from setups)
    ) r
        using (submission_id)
    group by all
),

relation_totals as (
    select run_no, relation, sum(edges) as edges, sum(matched) as matched
    from sentence_relations
    group by all
),

candidates as (
    select
        t.setup_no, t.corpus, t.tuning_corpus, t.submission_id, t.run_no, t.learned_from, t.learned_no, t.leave_out,
        x.* exclude (submission_id, corpus),
        -- the learned overall DEA: the teacher's, less this sentence when leaving it out
        (l.matched - case when t.leave_out then x.dea_matched else 0 end)
        / nullif(l.edges - case when t.leave_out then x.dea_edges else 0 end, 0) as learned_dea
    from teachers t
    join realized x using (submission_id)
    left join runs l on l.submission_id = t.learned_from
),

-- One term per base relation of x's reference tree (its c_r = the run's r-edges in x).
terms as (
    select
        c.setup_no, c.run_no, c.sent_idx, o.relation, o.edges as weight,
        case
            when coalesce(l.edges, 0) - case when c.leave_out then o.edges else 0 end > 0
                then
                    (l.matched - case when c.leave_out then o.matched else 0 end)
                    / (l.edges - case when c.leave_out then o.edges else 0 end)
            else c.learned_dea
        end as relation_dea
    from candidates c
    join sentence_relations o on o.run_no = c.run_no and o.sent_idx = c.sent_idx
    left join relation_totals l on l.run_no = c.learned_no and l.relation = o.relation
),

expectations as (
    select
        setup_no, run_no, sent_idx,
        case
            when bool_and(relation_dea is not null)
                then list_sum(list(weight * relation_dea order by relation)) / sum(weight)
        end as expected_dea
    from terms
    group by all
)

select
    c.corpus,
    c.tuning_corpus,
    c.sent_idx,
    c.submission_id,
    c.learned_from,
    coalesce(e.expected_dea, c.learned_dea) as expected_dea,  -- no term: a sentence without edges
    c.learned_dea,
    row_number() over (
        partition by c.setup_no, c.sent_idx
        order by
            coalesce(e.expected_dea, c.learned_dea) desc nulls last, c.learned_dea desc nulls last,
            c.submission_id
    ) as choice_rank,
    c.dea_matched, c.dea_edges,
    c.hyp_len, c.ref_len, c.m1, c.m2, c.m3, c.m4, c.t1, c.t2, c.t3, c.t4
from candidates c
left join expectations e using (setup_no, run_no, sent_idx)
