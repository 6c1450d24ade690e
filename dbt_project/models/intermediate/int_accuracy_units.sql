{{ incremental_by_submission() }}
-- The sequences the string, tree and reordering accuracies align (SPEC 5 and 7; the reading is
-- udfs/accuracy.py's docstring, whose sentence_accuracies is the plain-Python definition): one
-- row per scored output sentence and unit.
--   unit 0   the whole sentence: reference lemmas against output lemmas, as integer tokens
--            (equal lemmas, equal tokens: 2 x the lemma's first reference position, or, for a
--            lemma the reference lacks, 2 x its first output position + 1);
--   unit h   the treelet of reference word h (h and its dependents, h having some): its positions
--            in order against the positions of the output words mapped into it, in output order.
-- An output word maps to the reference position of the same lemma's same occurrence (k-th to
-- k-th); an unmapped word belongs to no treelet. int_sentence_udf_scores aligns the units.
-- The words meet on integer ids of the reference sentences and outputs, not on (corpus,
-- submission_id) names, and each output word finds its lemma's reference positions in one join.
with {{ numbered_outputs() }},

reference as (
    select s.reference_id, w.pos, w.head_pos, w.lemma_lower
    from {{ ref('int_analysis_words') }} w
    join reference_sentences s using (corpus, sent_idx)
),

-- A treelet's members: its head and the head's dependents, in reference order.
treelets as (
    select reference_id, head_pos as treelet, list_sort(list_append(list(pos), head_pos)) as members
    from reference
    where head_pos > 0
    group by reference_id, head_pos
),

-- Per reference sentence and lemma: its first position, and its occurrences in order with the
-- treelets each belongs to (its head's, and its own if it has dependents).
reference_lemmas as (
    select
        r.reference_id,
        r.lemma_lower,
        min(r.pos) as first_pos,
        list(
            { 'pos': r.pos, 'head': r.head_pos, 'is_head': t.treelet is not null } order by r.pos
        ) as occurrences
    from reference r
    left join treelets t on t.reference_id = r.reference_id and t.treelet = r.pos
    group by r.reference_id, r.lemma_lower
),

output as (
    select
        o.output_id,
        o.reference_id,
        w.pos,
        w.lemma_lower,
        first_value(w.pos) over by_lemma as first_pos,
        row_number() over by_lemma as occurrence
    from {{ ref('int_output_lemmas') }} w
    join outputs o using (submission_id, sent_idx)
    where {{ changed_submission('w.submission_id') }}
    window by_lemma as (partition by o.output_id, w.lemma_lower order by w.pos)
),

mapped as (
    select
        o.output_id,
        o.pos,
        o.lemma_lower,
        -- the token of a lemma is the same for all its occurrences, also beyond the reference's count
        coalesce(2 * r.first_pos, 2 * o.first_pos + 1) as token,
        r.occurrences[o.occurrence] as ref_word  -- NULL: no k-th occurrence of the lemma in the reference
    from output o
    left join reference_lemmas r on r.reference_id = o.reference_id and r.lemma_lower = o.lemma_lower
),

tokens as (
    select output_id, list(token order by pos) as tokens, bool_or(lemma_lower is null) as has_null
    from mapped
    group by output_id
),

reference_tokens as (
    select
        r.reference_id,
        list(2 * l.first_pos order by r.pos) as tokens,
        bool_or(r.lemma_lower is null) as has_null
    from reference r
    left join reference_lemmas l on l.reference_id = r.reference_id and l.lemma_lower = r.lemma_lower
    group by r.reference_id
),

-- Treelet membership of the mapped words: every dependent in its head's treelet, every head in its own.
placed as (
    select output_id, treelet, list(member order by pos) as placed
    from (
        select output_id, pos, ref_word.head as treelet, ref_word.pos as member
        from mapped
        where ref_word.head > 0
        union all
        select output_id, pos, ref_word.pos, ref_word.pos
        from mapped
        where ref_word.is_head
    )
    group by output_id, treelet
)

select
    o.submission_id,
    o.sent_idx,
    0 as unit,
    case
        when r.has_null then error('NULL lemma in the reference of ' || o.corpus || ' sentence ' || o.sent_idx)
        else coalesce(r.tokens, []::integer[])
    end as reference,
    case
        when t.has_null then error('NULL lemma in output ' || o.submission_id || ' sentence ' || o.sent_idx)
        else coalesce(t.tokens, []::integer[])
    end as output
from outputs o
left join reference_tokens r using (reference_id)
left join tokens t using (output_id)

union all

select o.submission_id, o.sent_idx, t.treelet, t.members, coalesce(p.placed, []::integer[])
from outputs o
join treelets t using (reference_id)
left join placed p on p.output_id = o.output_id and p.treelet = t.treelet
