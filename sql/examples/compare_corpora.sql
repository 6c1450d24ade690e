-- Corpora side by side: size, complexity and share of non-projective sentences.
select corpus, sentences, round(tree_length_mean, 2) as mean_length, round(tree_depth_mean, 2) as mean_depth,
       round(mdd_mean, 3) as mdd, round(mfw_mean, 3) as mfw, round(nonprojective_pct, 1) as nonprojective_pct
from corpus_stats
order by corpus
