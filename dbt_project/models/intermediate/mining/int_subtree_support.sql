-- SPEC section 8, once per treebank: in how many sentences of the treebank each subtree occurs.
-- form_id is int_subtrees' number of the (view, subtree) form, so that suspicious_subtrees joins
-- and counts subtrees by integers, not strings; it is internal to the build. The view and the
-- subtree string are written here from form_id, the form's packed label triple (int_subtrees.sql),
-- as int_subtrees writes them: top word first, its dependents inside, a grandchild nested.
with

views as (
    select view from ({{ values_of(definitions('mining_views')) }}) v (view)  -- srlens/definitions.py MINING_VIEWS
),

labelled as (
    select v.view, {{ subtree_label('v.view', 'w') }} as label
    from {{ ref('int_analysis_words') }} w
    cross join views v
),

labels as (
    {{ numbered_labels('labelled') }}
),

counted as (
    select corpus, form_id, count(*) as sentences
    from {{ ref('int_subtrees') }}
    group by corpus, form_id
)

select
    c.corpus,
    h.view,
    case c.form_id >> 60
        when 1 then '(' || h.label || ' (' || x.label || '))'
        when 2 then '(' || h.label || ' (' || x.label || ' ' || y.label || '))'
        else '(' || h.label || ' (' || x.label || ' (' || y.label || ')))'
    end as subtree,
    c.sentences,
    c.form_id
from counted c
join labels h on h.label_id = (c.form_id >> 40) & 1048575
join labels x on x.label_id = (c.form_id >> 20) & 1048575
left join labels y on y.label_id = c.form_id & 1048575
