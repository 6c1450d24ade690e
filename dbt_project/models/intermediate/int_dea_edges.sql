{{ incremental_by_submission() }}
-- SPEC section 3: every non-root reference edge of every scored output, with whether it is matched.
-- A triple (head lemma, dependent lemma, signed distance) occurs in the output once per position i
-- with lemma[i] = head and lemma[i + distance] = dependent. Clipping: the r-th reference edge of a
-- triple (in reference order) is matched when the output has at least r occurrences of it.
-- Everything is matched on integers: ids of the reference sentences and outputs, and each lemma
-- as its first position in the reference sentence (an output lemma the reference lacks is in no
-- triple and is dropped). The triples and their ranks are computed once per reference sentence.
with

{{ numbered_outputs() }},

reference_words as (
    select s.reference_id, w.pos, w.lemma_lower, min(w.pos) over (partition by s.reference_id, w.lemma_lower) as token
    from {{ ref('int_analysis_words') }} w
    join reference_sentences s using (corpus, sent_idx)
),

-- The edges with their lemmas and their rank within their triple.
reference_edges as (
    select
        s.reference_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
        h.lemma_lower as head_lemma, d.lemma_lower as dep_lemma, h.token as head_token, d.token as dep_token,
        row_number() over (
            partition by s.reference_id, h.token, d.token, e.distance
            order by e.dep_pos
        ) as rank_in_triple
    from {{ ref('int_analysis_edges') }} e
    join reference_sentences s using (corpus, sent_idx)
    join reference_words h on h.reference_id = s.reference_id and h.pos = e.head_pos
    join reference_words d on d.reference_id = s.reference_id and d.pos = e.dep_pos
),

triples as (
    select distinct reference_id, head_token, dep_token, distance from reference_edges
),

output_words as (
    select o.output_id, o.reference_id, w.pos, r.token
    from {{ ref('int_output_lemmas') }} w
    join outputs o using (submission_id, sent_idx)
    join (select distinct reference_id, lemma_lower, token from reference_words) r
        on r.reference_id = o.reference_id and r.lemma_lower = w.lemma_lower
    where {{ changed_submission('w.submission_id') }}
),

-- Where each triple's head stands in the output, and so where its dependent must stand.
-- (Two equi-joins in this order: a single three-way join lets the planner pair every output
-- word with every other one of its sentence first, quadratic in sentence length.)
head_hits as (
    select h.output_id, t.head_token, t.dep_token, t.distance, h.pos + t.distance as dep_pos_in_output
    from output_words h
    join triples t on t.reference_id = h.reference_id and t.head_token = h.token
),

occurrences as (
    select t.output_id, t.head_token, t.dep_token, t.distance, count(*) as in_output
    from head_hits t
    join output_words d
        on d.output_id = t.output_id and d.pos = t.dep_pos_in_output and d.token = t.dep_token
    group by all
)

select
    o.submission_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
    e.head_lemma, e.dep_lemma,
    e.rank_in_triple <= coalesce(c.in_output, 0) as matched
from outputs o
join reference_edges e using (reference_id)
left join occurrences c
    on
        c.output_id = o.output_id and c.head_token = e.head_token and c.dep_token = e.dep_token
        and c.distance = e.distance
