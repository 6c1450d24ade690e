{{ incremental_by_submission() }}
-- SPEC section 12: where does a run succeed or fail? One row per run, dimension and bucket (every
-- bucket, empty ones too: 0 counts, NULL scores), over the sentences the run realized.
--   Sentence dimensions (from the reference analysis tree): sentence_length, tree_depth,
--     mean_dependency_distance, mean_flux_weight, projectivity. A sentence with no word left
--     after removing punctuation has length, depth, distance and flux 0 and is projective.
--     Columns: sentences, corpus BLEU (summed statistics), micro DEA (edges, matched) and the
--     mean of every sentence score.
--   relation_frequency: each reference edge is bucketed by how many edges its base relation has in
--     the language's largest loaded treebank (int_language_frequencies); edges, matched, dea.
--   word_frequency: each reference lemma (analysis words, lower-cased) by its count in that
--     treebank; a lemma is recalled when the output has it, clipped by count as BLEU's unigrams;
--     lemmas, recalled, lemma_recall = recalled / lemmas.
-- Bucket bounds are the bucket_* vars (macros/buckets.sql writes the labels).
with buckets (dimension, bucket_no, lower_bound, upper_bound, bucket) as (
    values
    {{ bucket_rows('sentence_length', 'count', var('bucket_sentence_length')) }},
    {{ bucket_rows('tree_depth', 'count', var('bucket_tree_depth')) }},
    {{ bucket_rows('mean_dependency_distance', 'measure', var('bucket_mean_dependency_distance')) }},
    {{ bucket_rows('mean_flux_weight', 'measure', var('bucket_mean_flux_weight')) }},
    {{ bucket_rows('relation_frequency', 'count_below', var('bucket_relation_frequency')) }},
    {{ bucket_rows('word_frequency', 'count', var('bucket_word_frequency')) }},
    ('projectivity', 1, null, null, 'projective'),
    ('projectivity', 2, null, null, 'non-projective')
),

-- run_no: the run as an integer key for the millions of lemma rows below (cheaper to group and join
-- than the string submission_id: docs/performance.md, "Scoring")
runs as (
    select s.submission_id, s.corpus, s.team, s.run, t.language, row_number() over (order by s.submission_id) as run_no
    from {{ ref('stg_submissions') }} s
    join {{ ref('stg_treebank_files') }} t using (corpus)
    where {{ changed_submission('s.submission_id') }}
),

-- Each realized sentence with its value on every sentence dimension (long form).
sentence_values as (
    select s.*, c.tree_length, c.tree_depth, c.mean_dependency_distance, c.mean_flux_weight, c.is_projective
    from {{ ref('int_significance_sentences') }} s
    join {{ ref('sentence_complexity') }} c using (corpus, sent_idx)
    where {{ changed_submission('s.submission_id') }}
),

sentence_dimensions as (
    select
        v.* exclude (tree_length, tree_depth, mean_dependency_distance, mean_flux_weight, is_projective),
        d.dimension, d.x
    from sentence_values v,
        unnest([
            { 'dimension': 'sentence_length', 'x': v.tree_length::double },
            { 'dimension': 'tree_depth', 'x': coalesce(v.tree_depth, 0)::double },
            { 'dimension': 'mean_dependency_distance', 'x': coalesce(v.mean_dependency_distance, 0)::double },
            { 'dimension': 'mean_flux_weight', 'x': coalesce(v.mean_flux_weight, 0)::double },
            { 'dimension': 'projectivity', 'x': case when coalesce(v.is_projective, true) then 1 else 2 end::double }
        ]) u (d)
),

sentence_buckets as (
    select
        s.submission_id, b.dimension, b.bucket_no,
        count(*) as sentences,
        sum(dea_edges)::bigint as edges,
        sum(dea_matched)::bigint as matched,
        {{ significance_metric_columns('sum({})') }}
    from sentence_dimensions s
    join buckets b
        on
            b.dimension = s.dimension
            and (case
                when b.dimension = 'projectivity' then s.x = b.bucket_no
                else s.x >= b.lower_bound and (b.upper_bound is null or s.x < b.upper_bound)
            end)
    group by all
),

relation_buckets as (
    select r.submission_id, b.dimension, b.bucket_no, sum(r.edges) as edges, sum(r.matched) as matched
    from {{ ref('dea_by_relation') }} r
    join runs using (submission_id)
    {{ frequency_bucket_joins('relation_frequency', 'relation', 'runs.language', 'r.relation') }}
    group by all
),

-- word_frequency. Each reference lemma is bucketed once per corpus sentence, not once per run.
reference_lemmas as (
    select l.corpus, l.sent_idx, l.lemma_lower, l.reference_count, b.bucket_no
    from (
        select corpus, sent_idx, lemma_lower, count(*) as reference_count
        from {{ ref('int_analysis_words') }}
        where corpus in (select corpus from runs)
        group by all
    ) l
    join {{ ref('stg_treebank_files') }} t using (corpus)
    {{ frequency_bucket_joins('word_frequency', 'lemma', 't.language', 'l.lemma_lower') }}
),

output_lemmas as (
    select r.run_no, o.sent_idx, o.lemma_lower, count(*) as output_count
    from {{ ref('int_output_lemmas') }} o
    join runs r using (submission_id)
    group by all
),

word_buckets as (
    select
        u.submission_id, 'word_frequency' as dimension, r.bucket_no,
        sum(r.reference_count) as lemmas,
        sum(least(r.reference_count, coalesce(o.output_count, 0))) as recalled
    from {{ ref('int_significance_sentences') }} s
    join runs u using (submission_id)
    join reference_lemmas r on r.corpus = s.corpus and r.sent_idx = s.sent_idx
    left join output_lemmas o
        on o.run_no = u.run_no and o.sent_idx = s.sent_idx and o.lemma_lower = r.lemma_lower
    group by all
)

select
    r.submission_id,
    r.corpus,
    r.team,
    r.run,
    b.dimension,
    b.bucket,
    b.bucket_no,
    b.lower_bound,
    b.upper_bound,
    case
        when b.dimension in ('relation_frequency', 'word_frequency') then null
        else coalesce(s.sentences, 0)
    end as sentences,
    case when b.dimension = 'word_frequency' then null else coalesce(s.edges, rb.edges, 0) end as edges,
    case when b.dimension = 'word_frequency' then null else coalesce(s.matched, rb.matched, 0) end as matched,
    coalesce(s.matched, rb.matched) / nullif(coalesce(s.edges, rb.edges), 0) as dea,
    case when b.dimension = 'word_frequency' then coalesce(w.lemmas, 0) end as lemmas,
    case when b.dimension = 'word_frequency' then coalesce(w.recalled, 0) end as recalled,
    w.recalled / nullif(w.lemmas, 0) as lemma_recall,
    s.corpus_bleu,  -- then the mean of each sentence score, then sacrebleu's corpus BLEU and chrF (SPEC 13)
{%- for metric in significance_metrics()[2:] %}
    s.{{ metric }}{{ ',' if not loop.last }}
{%- endfor %}
from runs r
join buckets b on true
left join sentence_buckets s on s.submission_id = r.submission_id and s.dimension = b.dimension and s.bucket_no = b.bucket_no
left join relation_buckets rb on rb.submission_id = r.submission_id and rb.dimension = b.dimension and rb.bucket_no = b.bucket_no
left join word_buckets w on w.submission_id = r.submission_id and w.dimension = b.dimension and w.bucket_no = b.bucket_no
