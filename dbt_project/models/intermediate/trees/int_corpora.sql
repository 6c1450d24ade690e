-- Every corpus a run can belong to, with its language: the loaded treebanks (has_reference) and
-- the reference-free corpora, whose runs get no reference-based score.
select corpus, language, true as has_reference
from {{ ref('stg_treebank_files') }}
union all
select corpus, language, false as has_reference
from {{ ref('stg_reference_free_corpora') }}
