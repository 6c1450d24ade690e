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
-- (the reference of the changed runs' corpora: an incremental build need not rank every corpus's words)
with reference as (
    select
        corpus,
        sent_idx,
        pos,
        head_pos,
        lemma_lower,
        min(pos) over (partition by corpus, sent_idx, lemma_lower) as first_pos,
        row_number() over (partition by corpus, sent_idx, lemma_lower order by pos) as occurrence
    from {{ ref('int_analysis_words') }}
    where {{ changed_corpus() }}
),

scored as (
    select submission_id, corpus, sent_idx
    from {{ ref('int_scored_outputs') }}
    where {{ changed_submission() }}
),

output as (
    select
        o.submission_id,
        s.corpus,
        o.sent_idx,
        o.pos,
        o.lemma_lower,
        min(o.pos) over (partition by o.submission_id, o.sent_idx, o.lemma_lower) as first_pos,
        row_number() over (partition by o.submission_id, o.sent_idx, o.lemma_lower order by o.pos) as occurrence
    from {{ ref('int_output_lemmas') }} o
    join scored s using (submission_id, sent_idx)
    where {{ changed_submission('o.submission_id') }}
),

mapped as (
    select
        o.submission_id,
        o.corpus,
        o.sent_idx,
        o.pos,
        o.lemma_lower,
        o.first_pos,
        r.pos as ref_pos  -- NULL: no k-th occurrence of the lemma in the reference
    from output o
    left join reference r
        on
            r.corpus = o.corpus and r.sent_idx = o.sent_idx and r.lemma_lower = o.lemma_lower
            and r.occurrence = o.occurrence
),

-- The token of a lemma is the same for all its occurrences, also beyond the reference's count.
tokens as (
    select
        m.submission_id,
        m.sent_idx,
        list(coalesce(2 * r.first_pos, 2 * m.first_pos + 1) order by m.pos) as tokens,
        bool_or(m.lemma_lower is null) as has_null
    from mapped m
    left join reference r
        on r.corpus = m.corpus and r.sent_idx = m.sent_idx and r.lemma_lower = m.lemma_lower and r.occurrence = 1
    group by m.submission_id, m.sent_idx
),

reference_tokens as (
    select corpus, sent_idx, list(2 * first_pos order by pos) as tokens, bool_or(lemma_lower is null) as has_null
    from reference
    group by corpus, sent_idx
),

-- Treelet membership: every dependent in its head's treelet, every head in its own.
members as (
    select corpus, sent_idx, head_pos as treelet, pos as member
    from reference
    where head_pos > 0
    union all
    select distinct corpus, sent_idx, head_pos, head_pos
    from reference
    where head_pos > 0
),

treelets as (
    select corpus, sent_idx, treelet, list(member order by member) as members
    from members
    group by corpus, sent_idx, treelet
),

placed as (
    select m.submission_id, m.sent_idx, t.treelet, list(t.member order by m.pos) as placed
    from mapped m
    join members t on t.corpus = m.corpus and t.sent_idx = m.sent_idx and t.member = m.ref_pos
    group by m.submission_id, m.sent_idx, t.treelet
)

select
    s.submission_id,
    s.sent_idx,
    0 as unit,
    case
        when r.has_null then error('NULL lemma in the reference of ' || s.corpus || ' sentence ' || s.sent_idx)
        else coalesce(r.tokens, []::integer[])
    end as reference,
    case
        when o.has_null then error('NULL lemma in output ' || s.submission_id || ' sentence ' || s.sent_idx)
        else coalesce(o.tokens, []::integer[])
    end as output
from scored s
left join reference_tokens r on r.corpus = s.corpus and r.sent_idx = s.sent_idx
left join tokens o on o.submission_id = s.submission_id and o.sent_idx = s.sent_idx

union all

select s.submission_id, s.sent_idx, t.treelet, t.members, coalesce(p.placed, []::integer[])
from scored s
join treelets t on t.corpus = s.corpus and t.sent_idx = s.sent_idx
left join placed p on p.submission_id = s.submission_id and p.sent_idx = s.sent_idx and p.treelet = t.treelet
