-- Agreement rule candidates (SPEC section 9, L'AMBRE section 3.1): for every link and feature
-- f, the link instances where both words carry f (support) and how many of them have equal
-- value sets (agreeing). A candidate passes when share > 0.9 and support > min_count; the
-- passing candidates of a treebank, by support descending, are kept until their cumulative
-- support first exceeds 80% of their total (the crossing candidate is kept). Candidates with
-- equal support are kept or dropped together: each is judged by the support of the candidates
-- strictly larger than it (prior_support), so the result does not depend on an arbitrary order.
-- Comparisons are done in integers (10*agreeing > 9*support, 5*prior <= 4*total): exact.
with pairs as (
    select
        l.language, l.corpus, l.deprel, l.dep_upos, l.head_upos, d.feature,
        d.value_key = h.value_key as agrees
    from {{ ref('int_lambre_links') }} l
    join {{ ref('int_word_features') }} d
        on d.corpus = l.corpus and d.sent_idx = l.sent_idx and d.word_id = l.dep_id
    join {{ ref('int_word_features') }} h
        on
            h.corpus = l.corpus and h.sent_idx = l.sent_idx and h.word_id = l.head_id
            and h.feature = d.feature
),

counted as (
    select
        language, corpus, deprel, dep_upos, head_upos, feature,
        count(*) as support,
        count(*) filter (where agrees) as agreeing
    from pairs
    group by all
),

judged as (
    select
        c.*,
        agreeing / support as share,
        r.min_count,
        10 * agreeing > 9 * support as passes_share,
        support > r.min_count as passes_count
    from counted c
    join {{ ref('int_lambre_rule_corpora') }} r using (language, corpus)
),

passing as (
    select
        language, deprel, dep_upos, head_upos, feature,
        sum(support) over (partition by language) as total_support,
        sum(support)
            over (
                partition by language order by support desc
                range between unbounded preceding and current row
            )
        - support * count(*) over (partition by language, support) as prior_support
    from judged
    where passes_share and passes_count
)

select
    j.*,
    p.total_support,
    p.prior_support,
    coalesce(5 * p.prior_support <= 4 * p.total_support, false) as kept
from judged j
left join passing p using (language, deprel, dep_upos, head_upos, feature)
