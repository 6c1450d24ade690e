-- SPEC section 8: the connected 2-3 word subtrees of every reference analysis tree, once per
-- treebank (every submission of the corpus reuses them). One row per sentence and subtree (form_id:
-- int_subtree_support writes each form's view and subtree string).
--
-- Shapes: a word with one dependent `(h (a))`, a word with two of its dependents `(h (a b))`,
-- and a word-dependent-grandchild chain `(h (a (g)))`. Each word is written with its own label,
-- so the top word shows the relation that attaches it (`root` for the root word):
--   dep      base deprel                 (advcl (nsubj))
--   pos      UPOS                        (VERB (PRON))
--   pos_dep  UPOS~base deprel            (VERB~conj (ADV~advmod))
--   lemma    lower-cased lemma           (see (dog))
-- Canonical form: two dependents are written in sorted (binary string) order. A missing label
-- is written '_'. Labels are not escaped, so two different label triples can write the same
-- subtree (lemma '1 000' as one dependent, '1' and '000' as two): the string is the subtree.
--
-- occurrences counts the occurrences of the subtree in the sentence; packed_positions lists them
-- in ascending order, each packed in one BIGINT (21 bits a word, 0 = no third word): the analysis
-- positions in the order the words appear in the subtree string (top word first). Packed, because
-- only error_examples (macro unpack_positions) and the recipe sql/examples/suspicious_subtree_examples.sql
-- read them, for a few rows, and unpack those: unpacking and writing the lists of all 8 million rows
-- here cost about a fifth of this model's CPU at campaign scale.
-- form_id identifies the (view, subtree) form, so that later models join and count subtrees by an
-- integer; it is internal to the build. It is the form's label triple packed in one BIGINT (shape
-- << 60 | top << 40 | first dependent << 20 | second or grandchild, 0 = none; label numbers from
-- macros/subtree_labels.sql), the smallest of the triples that write the same string: from it
-- int_subtree_support writes the names, which this model does not (writing the two strings with
-- 8 million rows cost about a quarter of its CPU at campaign scale).
--
-- How it is computed (fast at campaign scale): the enumeration joins and groups integers, with
-- each label numbered in string order within its view (comparing numbers compares labels). The
-- strings are written once per distinct label triple, not once per occurrence, and numbered;
-- occurrences are then grouped by that number. An occurrence's packed positions sort as its
-- position list does.
-- Set-based SQL: measured faster than a Python UDF doing the same enumeration per sentence
-- (docs/performance.md, section "Mining").
with

corpora as (
    select corpus, row_number() over (order by corpus) as corpus_no
    from (select distinct corpus from {{ ref('int_analysis_words') }})
),

views as (
    select view, row_number() over (order by view) as view_no  -- 1..4: three bits of `unit`
    from ({{ values_of(definitions('mining_views')) }}) v (view)  -- srlens/definitions.py MINING_VIEWS
),

labelled as (
    select
        -- one integer for (corpus, sentence, view)
        (c.corpus_no << 35) | (w.sent_idx::bigint << 3) | v.view_no as unit,
        v.view,
        case
            when w.pos < 2097152 then w.pos
            else error('int_subtrees: a sentence of 2,097,152 words or more in ' || w.corpus)
        end as pos,
        w.head_pos,
        {{ subtree_label('v.view', 'w') }} as label
    from {{ ref('int_analysis_words') }} w
    join corpora c using (corpus)
    cross join views v
),

labels as (
    select
        view,
        label,
        case
            when label_id < 1048576 then label_id
            else error(
                'int_subtrees: the treebanks of this warehouse hold more than 1,048,575 distinct subtree '
                || 'labels (lemmas, tags and relations of the four views; 20 bits a label in form_id): '
                || 'build fewer treebanks in one warehouse'
            )
        end as label_id
    from ({{ numbered_labels('labelled') }})
),

words as (
    select w.unit, w.pos, w.head_pos, l.label_id as label
    from labelled w
    join labels l using (view, label)
),

-- Every labelled edge: the head (top) word with one dependent.
pairs as (
    select d.unit, d.head_pos as top, h.label as top_label, d.pos, d.label
    from words d
    join words h on h.unit = d.unit and h.pos = d.head_pos
),

-- Each occurrence as its unit, shape (1 one dependent, 2 two, 3 chain), label triple and packed
-- positions.
occurrences as (
    select unit, 1 as shape, top_label, label as a, 0 as b, (top::bigint << 42) | (pos::bigint << 21) as packed
    from pairs
    union all
    -- two dependents of one word, each unordered pair once, written in sorted order
    select
        x.unit, 2, x.top_label, least(x.label, y.label), greatest(x.label, y.label),
        (x.top::bigint << 42)
        | case
            when y.label < x.label then (y.pos::bigint << 21) | x.pos
            else (x.pos::bigint << 21) | y.pos
        end
    from pairs x
    join pairs y on y.unit = x.unit and y.top = x.top and y.pos > x.pos
    union all
    -- word, dependent, grandchild
    select x.unit, 3, x.top_label, x.label, y.label, (x.top::bigint << 42) | (x.pos::bigint << 21) | y.pos
    from pairs x
    join pairs y on y.unit = x.unit and y.top = x.pos
),

-- Each label triple written once, and the strings numbered.
triples as (
    select distinct unit & 7 as view_no, shape, top_label, a, b from occurrences
),

forms as (
    select
        t.*,
        v.view,
        case t.shape
            when 1 then '(' || h.label || ' (' || x.label || '))'
            when 2 then '(' || h.label || ' (' || x.label || ' ' || y.label || '))'
            else '(' || h.label || ' (' || x.label || ' (' || y.label || ')))'
        end as subtree
    from triples t
    join views v using (view_no)
    join labels h on h.label_id = t.top_label
    join labels x on x.label_id = t.a
    left join labels y on y.label_id = t.b
),

-- Two triples that write the same string are one form.
numbered as (
    select
        *,
        min((shape::bigint << 60) | (top_label::bigint << 40) | (a::bigint << 20) | b)
            over (partition by view, subtree) as form_id
    from forms
),

grouped as (
    select o.unit, n.form_id, count(*)::integer as occurrences, list(o.packed order by o.packed) as packed
    from occurrences o
    join numbered n
        on
            n.view_no = o.unit & 7 and n.shape = o.shape and n.top_label = o.top_label
            and n.a = o.a and n.b = o.b
    group by o.unit, n.form_id
)

select
    c.corpus,
    ((g.unit >> 3) & 4294967295)::integer as sent_idx,
    g.occurrences,
    g.packed as packed_positions,
    g.form_id
from grouped g
join corpora c on c.corpus_no = g.unit >> 35
