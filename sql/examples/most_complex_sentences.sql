-- The ten deepest reference trees of each corpus, with their other complexity figures.
select corpus, sent_id, tree_depth, tree_length, mean_dependency_distance, mean_flux_weight, is_projective
from sentence_complexity
qualify row_number() over (partition by corpus order by tree_depth desc, tree_length desc, sent_id) <= 10
order by corpus, tree_depth desc, tree_length desc, sent_id
