{{ incremental_by_submission() }}
-- SPEC section 3: every non-root reference edge of every scored output, with whether it is matched.
-- A triple (head lemma, dependent lemma, signed distance) occurs in the output once per position i
-- with lemma[i] = head and lemma[i + distance] = dependent. Clipping: the r-th reference edge of a
-- triple (in reference order) is matched when the output has at least r occurrences of it.
with

-- Reference side, once per corpus: the edges with their lemmas and their rank within their triple
-- (the changed runs' corpora: an incremental build need not rank every corpus's edges).
reference_edges as (
    select
        e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
        h.lemma_lower as head_lemma, d.lemma_lower as dep_lemma,
        row_number() over (
            partition by e.corpus, e.sent_idx, h.lemma_lower, d.lemma_lower, e.distance
            order by e.dep_pos
        ) as rank_in_triple
    from {{ ref('int_analysis_edges') }} e
    join {{ ref('int_analysis_words') }} h
        on h.corpus = e.corpus and h.sent_idx = e.sent_idx and h.pos = e.head_pos
    join {{ ref('int_analysis_words') }} d
        on d.corpus = e.corpus and d.sent_idx = e.sent_idx and d.pos = e.dep_pos
    where {{ changed_corpus('e.corpus') }}
),

scored_edges as (
    select o.submission_id, r.*
    from {{ ref('int_scored_outputs') }} o
    join reference_edges r on r.corpus = o.corpus and r.sent_idx = o.sent_idx
    where {{ changed_submission('o.submission_id') }}
),

triples as (
    select distinct submission_id, sent_idx, head_lemma, dep_lemma, distance from scored_edges
),

-- Where each triple's head lemma stands in the output, and so where its dependent must stand.
-- (Two equi-joins in this order: a single three-way join lets the planner pair every output
-- word with every other one of its sentence first, quadratic in sentence length.)
head_hits as (
    select t.*, h.pos + t.distance as dep_pos_in_output
    from triples t
    join {{ ref('int_output_lemmas') }} h
        on h.submission_id = t.submission_id and h.sent_idx = t.sent_idx and h.lemma_lower = t.head_lemma
    where {{ changed_submission('h.submission_id') }}
),

occurrences as (
    select t.submission_id, t.sent_idx, t.head_lemma, t.dep_lemma, t.distance, count(*) as in_output
    from head_hits t
    join {{ ref('int_output_lemmas') }} d
        on
            d.submission_id = t.submission_id and d.sent_idx = t.sent_idx
            and d.pos = t.dep_pos_in_output and d.lemma_lower = t.dep_lemma
    where {{ changed_submission('d.submission_id') }}
    group by all
)

select
    e.submission_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
    e.head_lemma, e.dep_lemma,
    e.rank_in_triple <= coalesce(o.in_output, 0) as matched
from scored_edges e
left join occurrences o using (submission_id, sent_idx, head_lemma, dep_lemma, distance)
