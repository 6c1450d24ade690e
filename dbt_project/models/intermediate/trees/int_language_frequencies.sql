-- SPEC section 12: the frequencies bucket_scores buckets relations and lemmas by, taken from the
-- largest loaded treebank of each language (most analysis-tree words; on a tie the smaller corpus
-- name): edges per base relation and occurrences per lower-cased lemma, both in analysis trees.
with sizes as (
    select t.language, w.corpus, count(*) as words
    from {{ ref('int_analysis_words') }} w
    join {{ ref('stg_treebank_files') }} t using (corpus)
    group by all
),

largest as (
    select language, corpus
    from sizes
    qualify row_number() over (partition by language order by words desc, corpus) = 1
)

select l.language, l.corpus as frequency_corpus, 'relation' as kind, e.base_deprel as item, count(*) as frequency
from largest l
join {{ ref('int_analysis_edges') }} e using (corpus)
group by all
union all
select l.language, l.corpus, 'lemma', w.lemma_lower, count(*)
from largest l
join {{ ref('int_analysis_words') }} w using (corpus)
group by all
