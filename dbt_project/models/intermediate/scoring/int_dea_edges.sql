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

-- Integer ids: of the reference sentences (reference_id), of the outputs (output_id), and of each
-- lemma within its reference sentence, its first position in the reference's lemma list
-- (ref_lemmas is the analysis words in pos order 1..n). So everything below joins and groups on
-- integers, not on the (corpus, submission_id) names or the lemmas. A lemma's id takes 20 bits of
-- the keys below, a reference sentence's id the 23 bits above them: a longer sentence stops the
-- build (error()) rather than letting two keys collide, and a larger reference id overflows the
-- BIGINT, an error too. The ids hold within one query.
scored as (
    select submission_id, corpus, sent_idx, out_lemmas, ref_lemmas
    from {{ ref('int_scored_outputs') }}
    where has_reference and {{ changed_submission() }}
),

{{ reference_sentences(id_bits) }},

-- `ids`: each output lemma's id, NULL where the reference lacks it or the lemma is NULL (which
-- list_position would find; a NULL output lemma matches nothing).
outputs as materialized (
    select
        s.submission_id, r.reference_id, row_number() over () as output_id,
        list_transform(s.out_lemmas, lambda x: case when x is not null then list_position(s.ref_lemmas, x) end) as ids
    from scored s
    join reference_sentences r using (corpus, sent_idx)
),

-- The edges with their lemmas, their rank within their triple and the triple packed into one key
-- (reference_id, head's id, dependent's id), so the joins below compare one integer, not three.
reference_edges as materialized (
    select
        *,
        reference_id * {{ sentence_slot }} + head_id::bigint * {{ id_slot }} as head_key,
        reference_id * {{ sentence_slot }} + head_id::bigint * {{ id_slot }} + dep_id as triple_key,
        row_number() over (partition by reference_id, head_id, dep_id, distance order by dep_pos) as rank_in_triple
    from (
        select
            s.reference_id, e.corpus, e.sent_idx, e.head_pos, e.dep_pos, e.distance, e.deprel, e.base_deprel,
            s.ref_lemmas[e.head_pos] as head_lemma, s.ref_lemmas[e.dep_pos] as dep_lemma,
            s.ids[e.head_pos] as head_id, s.ids[e.dep_pos] as dep_id
        from {{ ref('int_analysis_edges') }} e
        join reference_sentences s using (corpus, sent_idx)
    )
),

triples as (
    select distinct head_key, triple_key, dep_id, distance from reference_edges
),

-- Each output word whose lemma the reference has, with the key of (its reference sentence, its
-- lemma's id) for the head's join: unnested from the outputs' id lists, no join of the words.
output_words as (
    select output_id, pos, lemma_id, reference_id * {{ sentence_slot }} + lemma_id::bigint * {{ id_slot }} as word_key
    from (
        select output_id, reference_id, generate_subscripts(ids, 1) as pos, unnest(ids) as lemma_id
        from outputs
    )
    where lemma_id is not null
),

-- Where each triple's head stands in the output, and so where its dependent must stand.
-- (Two equi-joins in this order: a single three-way join lets the planner pair every output
-- word with every other one of its sentence first, quadratic in sentence length.)
head_hits as (
    select h.output_id, t.triple_key, t.dep_id, t.distance, h.pos + t.distance as dep_pos_in_output
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
        on d.output_id = t.output_id and d.pos = t.dep_pos_in_output and d.lemma_id = t.dep_id
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
