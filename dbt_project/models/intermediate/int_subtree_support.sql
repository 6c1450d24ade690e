-- SPEC section 8, once per treebank: in how many sentences of the treebank each subtree occurs.
-- form_id is int_subtrees' number of the (view, subtree) form, so that suspicious_subtrees joins
-- and counts subtrees by integers, not strings; it is internal to the build.
select
    corpus,
    any_value(view) as view,
    any_value(subtree) as subtree,
    count(*) as sentences,
    form_id
from {{ ref('int_subtrees') }}
group by corpus, form_id
