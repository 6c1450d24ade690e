-- Relations whose dependents sit on both sides of their head most evenly (highest entropy),
-- ignoring rare relations.
select corpus, relation, left_count, right_count, round(entropy, 3) as entropy
from relation_entropy
where occurrences >= 20
order by entropy desc, corpus, relation
limit 20
