-- Argument-structure (case assignment, verb form choice) rule candidates (SPEC section 9,
-- L'AMBRE section 3.2): for every link, f in {Case, VerbForm}, and side (dep: the dependent,
-- head: the head), the local distribution of f's value sets over the link instances whose word
-- on that side carries f, against the global distribution of f over all words of that UPOS in
-- the treebank. kl = KL(local || global), natural log. Kept when kl >= 0.9 and local_count >= 100;
-- the allowed values are the value sets with local probability >= 0.1 (10 * count >= local_count).
-- local_count counts only instances whose word carries f, as the authors' code does: the rule is
-- learnt from that many observations, however many instances of the link lack f.
with features as (
    select f.*
    from {{ ref('int_word_features') }} f
    where f.feature in ('Case', 'VerbForm')
),

global_counts as (
    select c.language, f.upos, f.feature, f.value_key, count(*) as n
    from {{ ref('int_lambre_rule_corpora') }} c
    join features f on f.corpus = c.corpus
    group by all
),

global_dist as (
    select *, n / sum(n) over (partition by language, upos, feature) as p
    from global_counts
),

local_counts as (
    select
        l.language, l.deprel, l.dep_upos, l.head_upos, f.feature, 'dep' as side,
        l.dep_upos as word_upos, f.value_key, count(*) as n
    from {{ ref('int_lambre_links') }} l
    join features f on f.corpus = l.corpus and f.sent_idx = l.sent_idx and f.word_id = l.dep_id
    group by all
    union all
    select
        l.language, l.deprel, l.dep_upos, l.head_upos, f.feature, 'head' as side,
        l.head_upos as word_upos, f.value_key, count(*) as n
    from {{ ref('int_lambre_links') }} l
    join features f on f.corpus = l.corpus and f.sent_idx = l.sent_idx and f.word_id = l.head_id
    group by all
),

local_dist as (
    select
        *,
        sum(n) over (partition by language, deprel, dep_upos, head_upos, feature, side) as local_count
    from local_counts
),

-- Every local word is also a word of that UPOS, so each local value has a global p > 0.
scored as (
    select
        l.language, l.deprel, l.dep_upos, l.head_upos, l.feature, l.side, l.word_upos,
        any_value(l.local_count) as local_count,
        sum((l.n / l.local_count) * ln((l.n / l.local_count) / g.p)) as kl,
        list(
            { 'value': l.value_key, 'count': l.n, 'local_p': l.n / l.local_count, 'global_p': g.p }
            order by l.n desc, l.value_key
        ) as local_distribution,
        list(l.value_key order by l.n desc, l.value_key) filter (where 10 * l.n >= l.local_count)
            as allowed_values
    from local_dist l
    join global_dist g
        on
            g.language = l.language and g.upos = l.word_upos and g.feature = l.feature
            and g.value_key = l.value_key
    group by all
)

select
    s.*,
    c.corpus,
    s.local_count >= 100 as passes_count,
    s.kl >= 0.9 as passes_kl,
    s.local_count >= 100 and s.kl >= 0.9 as kept
from scored s
join {{ ref('int_lambre_rule_corpora') }} c using (language)
