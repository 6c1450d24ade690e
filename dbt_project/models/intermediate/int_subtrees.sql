-- SPEC section 8: the connected 2-3 word subtrees of every reference analysis tree, once per
-- treebank (every submission of the corpus reuses them). One row per sentence, view and subtree.
--
-- Shapes: a word with one dependent `(h (a))`, a word with two of its dependents `(h (a b))`,
-- and a word-dependent-grandchild chain `(h (a (g)))`. Each word is written with its own label,
-- so the top word shows the relation that attaches it (`root` for the root word):
--   dep      base deprel                 (advcl (nsubj))
--   pos      UPOS                        (VERB (PRON))
--   pos_dep  UPOS~base deprel            (VERB~conj (ADV~advmod))
--   lemma    lower-cased lemma           (see (dog))
-- Canonical form: two dependents are written in sorted (binary string) order. A missing label
-- is written '_'. Labels are not escaped.
--
-- occurrences counts the occurrences of the subtree in the sentence; positions lists them, each
-- as analysis positions in the order the words appear in the subtree string (top word first).
-- Set-based SQL: measured faster than a Python UDF doing the same enumeration per sentence
-- (bench/mining_speed.py, section "Error mining").
with

labelled as (
    select
        corpus, sent_idx, pos, head_pos, v.view,
        case v.view
            when 'dep' then coalesce(base_deprel, '_')
            when 'pos' then coalesce(upos, '_')
            when 'pos_dep' then coalesce(upos, '_') || '~' || coalesce(base_deprel, '_')
            when 'lemma' then coalesce(lemma_lower, '_')
        end as label
    from {{ ref('int_analysis_words') }}
    cross join ({{ values_of(definitions('mining_views')) }}) v (view)  -- srlens/definitions.py MINING_VIEWS
),

-- Every labelled edge: the head (top) word with one dependent.
pairs as (
    select d.corpus, d.sent_idx, d.view, d.head_pos as top, h.label as top_label, d.pos, d.label
    from labelled d
    join labelled h
        on h.corpus = d.corpus and h.sent_idx = d.sent_idx and h.view = d.view and h.pos = d.head_pos
),

occurrences as (
    select corpus, sent_idx, view, '(' || top_label || ' (' || label || '))' as subtree, [top, pos] as positions
    from pairs
    union all
    -- two dependents of one word, each unordered pair once, written in sorted order
    select
        x.corpus, x.sent_idx, x.view,
        '(' || x.top_label || ' (' || least(x.label, y.label) || ' ' || greatest(x.label, y.label) || '))',
        case when y.label < x.label then [x.top, y.pos, x.pos] else [x.top, x.pos, y.pos] end
    from pairs x
    join pairs y
        on
            y.corpus = x.corpus and y.sent_idx = x.sent_idx and y.view = x.view
            and y.top = x.top and y.pos > x.pos
    union all
    -- word, dependent, grandchild
    select
        x.corpus, x.sent_idx, x.view,
        '(' || x.top_label || ' (' || x.label || ' (' || y.label || ')))',
        [x.top, x.pos, y.pos]
    from pairs x
    join pairs y
        on y.corpus = x.corpus and y.sent_idx = x.sent_idx and y.view = x.view and y.top = x.pos
)

select
    corpus,
    sent_idx,
    view,
    subtree,
    count(*)::integer as occurrences,
    list(positions order by positions) as positions
from occurrences
group by corpus, sent_idx, view, subtree
