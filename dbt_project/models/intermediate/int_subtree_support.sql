-- SPEC section 8, once per treebank: in how many sentences of the treebank each subtree occurs.
-- form_id numbers the subtrees of a corpus (1..k, in view/subtree order) so that the per-submission
-- counts in suspicious_subtrees group by integers, not strings; it is internal to the build.
select
    corpus,
    view,
    subtree,
    count(*) as sentences,
    row_number() over (partition by corpus order by view, subtree)::integer as form_id
from {{ ref('int_subtrees') }}
group by corpus, view, subtree
