{{ incremental_by_submission() }}
-- SPEC section 3: every non-root reference edge of every scored output, with whether it is matched.
-- A triple (head lemma, dependent lemma, signed distance) occurs in the output once per position i
-- with lemma[i] = head and lemma[i + distance] = dependent. Clipping: the r-th reference edge of a
-- triple (in reference order) is matched when the output has at least r occurrences of it.
-- Everything is matched on integers: ids of the reference sentences and outputs, and each lemma
-- as its first position in the reference sentence (an output lemma the reference lacks is in no
-- triple and is dropped). The triples and their ranks are computed once per reference sentence.
{%- set id_bits = 20 %}
{%- set id_slot = 2 ** id_bits %}  {#- one lemma id #}
{%- set sentence_slot = 2 ** (2 * id_bits) %}  {#- a head's and a dependent's id below the sentence's #}
with

{{ numbered_outputs() }},

-- A lemma's id (token_id) takes 20 bits of the keys below, a reference sentence's id the 23 bits
-- above them (a larger id overflows the BIGINT, an error, not a collision).
{{ reference_words(id_bits) }},

-- The edges with their lemmas, their rank within their triple and the triple packed into one key
-- (reference_id, head's id, dependent's id), so the joins below compare one integer, not three.
reference_edges as materialized (
    select
        s.reference_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
        h.lemma_lower as head_lemma, d.lemma_lower as dep_lemma,
        s.reference_id * {{ sentence_slot }} + h.token_id::bigint * {{ id_slot }} as head_key,
        s.reference_id * {{ sentence_slot }} + h.token_id::bigint * {{ id_slot }} + d.token_id as triple_key,
        d.token_id as dep_token_id,
        row_number() over (
            partition by s.reference_id, h.token_id, d.token_id, e.distance
            order by e.dep_pos
        ) as rank_in_triple
    from {{ ref('int_analysis_edges') }} e
    join reference_sentences s using (corpus, sent_idx)
    join reference_words h on h.reference_id = s.reference_id and h.pos = e.head_pos
    join reference_words d on d.reference_id = s.reference_id and d.pos = e.dep_pos
),

triples as (
    select distinct head_key, triple_key, dep_token_id, distance from reference_edges
),

-- The output words with their output's ids. Materialized so that they meet the outputs (342,000 on
-- the 1x campaign) before the reference lemmas: otherwise DuckDB 2.0 joined every output with its
-- reference's lemmas first (4.6 million rows) and probed that with the words' three keys.
output_lemmas as materialized (
    select o.output_id, o.reference_id, w.pos, w.lemma_lower
    from {{ ref('int_output_lemmas') }} w
    join outputs o using (submission_id, sent_idx)
    where {{ changed_submission('w.submission_id') }}
),

-- Each output word with the key of (its reference sentence, its lemma's id) for the head's join.
output_words as (
    select
        w.output_id, w.pos, r.token_id,
        w.reference_id * {{ sentence_slot }} + r.token_id::bigint * {{ id_slot }} as word_key
    from output_lemmas w
    join (select distinct reference_id, lemma_lower, token_id from reference_words) r
        on r.reference_id = w.reference_id and r.lemma_lower = w.lemma_lower
),

-- Where each triple's head stands in the output, and so where its dependent must stand.
-- (Two equi-joins in this order: a single three-way join lets the planner pair every output
-- word with every other one of its sentence first, quadratic in sentence length.)
head_hits as (
    select h.output_id, t.triple_key, t.dep_token_id, t.distance, h.pos + t.distance as dep_pos_in_output
    from output_words h
    join triples t on t.head_key = h.word_key
),

-- A semi join: an output has one word per position, so it counts the same as an inner join, but
-- DuckDB 2.0 pushed the count of an inner join below it into both inputs (three group-bys of 2.5 to
-- 5 million rows where one of the 2.5 million matches suffices).
occurrences as (
    select t.output_id, t.triple_key, t.distance, count(*) as in_output
    from head_hits t
    semi join output_words d
        on d.output_id = t.output_id and d.pos = t.dep_pos_in_output and d.token_id = t.dep_token_id
    group by all
)

select
    o.submission_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
    e.head_lemma, e.dep_lemma,
    e.rank_in_triple <= coalesce(c.in_output, 0) as matched
from outputs o
join reference_edges e using (reference_id)
left join occurrences c
    on c.output_id = o.output_id and c.triple_key = e.triple_key and c.distance = e.distance
